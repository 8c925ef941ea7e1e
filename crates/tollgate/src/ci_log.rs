//! Making untrusted text safe to print in a CI log.
//!
//! The GitHub runner executes a workflow command found in any line a step prints, on stdout and
//! stderr: `::name …::` at the start of a line (after leading whitespace) and the legacy
//! `##[name …]` anywhere in a line. Paths, model answers, API error bodies and artifacts from
//! forks are untrusted, so every human-readable message of both binaries (fail reasons,
//! warnings, errors, their `tracing` output) goes through [`neutralize`] or [`NeutralizingWriter`]:
//! `::` at a line start becomes `%3A:`, `##[` becomes `##%5B` (GitHub's own escapes), and
//! terminal control characters (ESC, BEL, the other C0 and C1 controls, DEL, carriage return)
//! become visible `\u{…}` escapes, so a path cannot rewrite the terminal or hide a line.
//!
//! Workflow commands Tollgate emits on purpose (the `github` report format, the Action's
//! `::error`) are built with [`crate::report::escape_data`], whose values first pass through
//! [`visible_controls`]: the runner prints a command's line to the terminal too.

use std::borrow::Cow;
use std::io::{self, Write};

/// `text` with every workflow-command trigger and control character defused, line by line;
/// borrowed when nothing needed changing. Newlines and tabs are kept.
///
/// ```
/// use tollgate::ci_log::neutralize;
/// assert_eq!(neutralize("  ::set-output name=x::1"), "  %3A:set-output name=x::1");
/// assert_eq!(neutralize("src/##[set-output]x.py"), "src/##%5Bset-output]x.py");
/// assert_eq!(neutralize("a\u{1b}[2Jb\u{7}"), "a\\u{1b}[2Jb\\u{7}");
/// assert_eq!(neutralize("plain: text"), "plain: text");
/// ```
pub fn neutralize(text: &str) -> Cow<'_, str> {
    if !needs_neutralizing(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (idx, line) in text.split('\n').enumerate() {
        if idx > 0 {
            out.push('\n');
        }
        neutralize_line(line, &mut out);
    }
    Cow::Owned(out)
}

/// `text` with every control character but `\n` and tabs made a visible `\u{…}` escape, as
/// [`neutralize`] does, and no workflow-command trigger touched: for a command Tollgate writes
/// on purpose (applied after [`crate::report::escape_data`], which encodes CR and LF) and for
/// text the runner reads with commands stopped.
///
/// ```
/// use tollgate::ci_log::visible_controls;
/// assert_eq!(visible_controls("src/\u{1b}[2Jx\u{7}.rs\r\n::a"), "src/\\u{1b}[2Jx\\u{7}.rs\\u{d}\n::a");
/// ```
pub fn visible_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if is_hidden_control(ch) {
            push_control_escape(ch, &mut out);
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// A writer that neutralises what passes through it, a line at a time (for `tracing`'s
/// output and other streamed messages). A partial last line is written on flush or drop.
#[derive(Debug)]
pub struct NeutralizingWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> NeutralizingWriter<W> {
    pub fn new(inner: W) -> NeutralizingWriter<W> {
        NeutralizingWriter {
            inner,
            pending: Vec::new(),
        }
    }

    fn write_lines(&mut self, include_partial: bool) -> io::Result<()> {
        let cut = if include_partial {
            self.pending.len()
        } else {
            match self.pending.iter().rposition(|&byte| byte == b'\n') {
                Some(newline) => newline + 1,
                None => return Ok(()),
            }
        };
        if cut == 0 {
            return Ok(());
        }
        let chunk: Vec<u8> = self.pending.drain(..cut).collect();
        let text = String::from_utf8_lossy(&chunk);
        self.inner.write_all(neutralize(&text).as_bytes())
    }
}

impl<W: Write> Write for NeutralizingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.write_lines(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_lines(true)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for NeutralizingWriter<W> {
    fn drop(&mut self) {
        // Nowhere to report a failed write of a log line to.
        let _ = self.flush();
    }
}

/// Cheap check: no command trigger, no control character.
fn needs_neutralizing(text: &str) -> bool {
    text.contains("::") || text.contains("##[") || text.chars().any(is_hidden_control)
}

/// A control character that must not reach a terminal raw: all but `\n` and `\t`.
fn is_hidden_control(ch: char) -> bool {
    ch != '\n' && ch != '\t' && is_control(ch)
}

fn push_control_escape(ch: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:x}}}", u32::from(ch)));
}

fn neutralize_line(line: &str, out: &mut String) {
    let body_start = line.len() - line.trim_start().len();
    let (indent, body) = line.split_at(body_start);
    push_escaped(indent, out);
    let body = match body.strip_prefix("::") {
        Some(rest) => {
            out.push_str("%3A:");
            rest
        }
        None => body,
    };
    let mut rest = body;
    while let Some(at) = rest.find("##[") {
        push_escaped(&rest[..at], out);
        out.push_str("##%5B");
        rest = &rest[at + "##[".len()..];
    }
    push_escaped(rest, out);
}

fn push_escaped(text: &str, out: &mut String) {
    for ch in text.chars() {
        if ch != '\t' && is_control(ch) {
            push_control_escape(ch, out);
        } else {
            out.push(ch);
        }
    }
}

/// C0 and C1 control characters and DEL (`\n` is handled by the line split).
fn is_control(ch: char) -> bool {
    ch.is_control()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_are_defused() {
        let cases = [
            (
                "::set-output name=should-fail::false",
                "%3A:set-output name=should-fail::false",
            ),
            ("\t ::add-mask::x", "\t %3A:add-mask::x"),
            (
                "fail: src/##[set-output name=should-fail;]false.py at 3",
                "fail: src/##%5Bset-output name=should-fail;]false.py at 3",
            ),
            ("a ##[cmd] b ##[cmd]", "a ##%5Bcmd] b ##%5Bcmd]"),
            ("ok\n::stop-commands::t\nok", "ok\n%3A:stop-commands::t\nok"),
            ("Rule x at a.rs:3", "Rule x at a.rs:3"),
            ("x::y", "x::y"),
        ];
        for (input, expected) in cases {
            assert_eq!(neutralize(input), expected, "{input:?}");
        }
        assert!(matches!(neutralize("nothing"), Cow::Borrowed(_)));
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(
            neutralize("p\u{1b}]0;title\u{7}\r::x\u{9b}2J\u{7f}"),
            "p\\u{1b}]0;title\\u{7}\\u{d}::x\\u{9b}2J\\u{7f}"
        );
        // A carriage return cannot hide a command behind harmless text either.
        assert_eq!(neutralize("safe\r::x::y"), "safe\\u{d}::x::y");
    }

    /// Whatever the input, no output line starts a command or holds a legacy one or a control.
    #[test]
    fn output_never_carries_a_command() {
        let pieces = [
            ":", "::", "#", "##", "[", "##[", "\n", " ", "\t", "\u{1b}", "\r", "a", "é",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2000 {
            let mut text = String::new();
            for _ in 0..12 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let out = neutralize(&text);
            for line in out.split('\n') {
                assert!(!line.trim_start().starts_with("::"), "{text:?} -> {out:?}");
                assert!(!line.contains("##["), "{text:?} -> {out:?}");
                assert!(
                    !line.chars().any(|c| c != '\t' && c.is_control()),
                    "{out:?}"
                );
            }
        }
    }

    #[test]
    fn writer_neutralizes_across_split_writes() {
        let mut sink = Vec::new();
        {
            let mut writer = NeutralizingWriter::new(&mut sink);
            writer.write_all(b"WARN a ##").unwrap_or_default();
            writer.write_all(b"[set-output]\n:").unwrap_or_default();
            writer.write_all(b":error::x").unwrap_or_default();
        }
        assert_eq!(
            String::from_utf8_lossy(&sink),
            "WARN a ##%5Bset-output]\n%3A:error::x"
        );
    }
}
