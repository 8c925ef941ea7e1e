//! Invariant regexes: JavaScript syntax in, a compiled Rust [`Regex`] out.
//!
//! Upstream invariants files hold JavaScript regexes (`{pattern, flags}`), while Tollgate uses
//! the `regex` crate, whose engine runs in linear time and has no backtracking features. The
//! pattern is translated token by token so that what a JavaScript author wrote means the same
//! here, and anything that cannot mean the same is an error naming the construct, never a silent
//! change of meaning:
//!
//! - flags `i`, `m`, `s` become inline flags; `g`, `y`, `d`, `u` and `v` are accepted and have no
//!   effect (every match is searched for, line by line). Anything else is an error.
//! - `\d`, `\w`, `\b` and their negations keep their ASCII meaning (the `regex` crate's are
//!   Unicode-aware); `\uXXXX` (surrogate pairs included), `\u{…}`, `\cX`, `\0`, `[^]`, `[]`, `\/`
//!   and other identity escapes of punctuation are rewritten; a literal `[`, `&&`, `--` or `~~`
//!   inside a class is escaped; `{` that does not start a quantifier is a literal, as in JS.
//! - lookahead, lookbehind, backreferences and octal escapes are refused with an explanation.
//! - `^` and `$` always match at line boundaries (the `m` flag is implied), because patterns run
//!   against single lines, or against added lines joined by `\n` for patterns that span lines.
//!
//! Compiled programs are capped ([`REGEX_SIZE_LIMIT`]) so a hostile pattern cannot exhaust
//! memory. Patterns that span lines also get a lazy DFA walked byte by byte ([`BoundedSearch`]):
//! repeated leftmost-first searches can rescan the same text (`.*X|a` rescans to the end for
//! every `a`), so those searches count the bytes they read and stop at a budget instead of
//! going quadratic.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use regex_automata::hybrid::{self, dfa::DFA};
use regex_automata::{Anchored, Input, nfa::thompson, util::syntax};

/// Upper bound on a compiled regex program (and on its lazy DFA cache).
pub const REGEX_SIZE_LIMIT: usize = 2 << 20;
/// Upper bound on a pattern's length, in characters.
pub const MAX_PATTERN_CHARS: usize = 8 * 1024;
const NEST_LIMIT: u32 = 64;

/// A validated, compiled invariant regex.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    flags: String,
    regex: Regex,
    /// The same program as a lazy DFA, for patterns that span lines (see [`BoundedSearch`]).
    multi_line: Option<Arc<hybrid::regex::Regex>>,
}

impl Pattern {
    /// Translates a JavaScript regex (`pattern` without slashes, `flags` such as `"i"`) and
    /// compiles it.
    pub fn new(source: &str, flags: &str) -> Result<Pattern, PatternError> {
        let flag_set = Flags::parse(flags)?;
        let translation = translate(source)?;
        let mut prefix = String::from("(?m");
        if flag_set.case_insensitive {
            prefix.push('i');
        }
        if flag_set.dot_all {
            prefix.push('s');
        }
        prefix.push(')');
        let rust = format!("{prefix}{}", translation.rust);
        let regex = RegexBuilder::new(&rust)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map_err(|err| compile_error(err, &translation.rust, source))?;
        let multi_line = if translation.mentions_newline || flag_set.dot_all {
            Some(Arc::new(lazy_dfa(&rust)?))
        } else {
            None
        };
        Ok(Pattern {
            source: source.to_string(),
            flags: flags.to_string(),
            regex,
            multi_line,
        })
    }

    /// The pattern as written in the invariants file.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn flags(&self) -> &str {
        &self.flags
    }

    pub fn regex(&self) -> &Regex {
        &self.regex
    }

    /// Whether the pattern can match across lines (it mentions a newline, or has the `s` flag).
    /// Such patterns run against the file's added lines joined by `\n`; all others run line by
    /// line.
    pub fn spans_lines(&self) -> bool {
        self.multi_line.is_some()
    }

    /// A search that reads at most `budget` bytes, for patterns that
    /// [span lines](Pattern::spans_lines); `None` for the others, which run line by line.
    pub(crate) fn bounded_search(&self, budget: usize) -> Option<BoundedSearch<'_>> {
        let regex = self.multi_line.as_deref()?;
        Some(BoundedSearch {
            regex,
            cache: regex.create_cache(),
            left: budget,
            read: 0,
        })
    }
}

/// Leftmost-first searches of one multi-line pattern that share a budget of bytes read.
pub(crate) struct BoundedSearch<'p> {
    regex: &'p hybrid::regex::Regex,
    cache: hybrid::regex::Cache,
    left: usize,
    read: usize,
}

/// A bounded search read as many bytes as its budget allowed (or its lazy DFA gave up); the
/// text after the last match found was not searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BudgetExhausted;

impl BoundedSearch<'_> {
    /// The leftmost-first match starting at or after `start` in `haystack` (the text before
    /// `start` still counts for `^` and `\b`), or `None`.
    pub(crate) fn find_at(
        &mut self,
        haystack: &str,
        start: usize,
    ) -> Result<Option<Range<usize>>, BudgetExhausted> {
        let (forward_cache, reverse_cache) = self.cache.as_parts_mut();
        let input = Input::new(haystack.as_bytes()).span(start..haystack.len());
        let Some(end) = forward_end(
            self.regex.forward(),
            forward_cache,
            &input,
            &mut self.left,
            &mut self.read,
        )?
        else {
            return Ok(None);
        };
        if end == start {
            return Ok(Some(start..end));
        }
        // The reverse pass reads at most `end - start` bytes, never more than the forward one.
        self.left = self.left.checked_sub(end - start).ok_or(BudgetExhausted)?;
        self.read += end - start;
        let reverse = input.span(start..end).anchored(Anchored::Yes);
        let found = self
            .regex
            .reverse()
            .try_search_rev(reverse_cache, &reverse)
            .map_err(|_| BudgetExhausted)?
            .map_or(start, |half| half.offset());
        Ok(Some(found..end))
    }

    /// Bytes read so far (an upper bound for the reverse passes).
    pub(crate) fn bytes_read(&self) -> usize {
        self.read
    }
}

/// Walks the forward lazy DFA from `input.start()` to where it dies or the haystack ends, and
/// returns the end of the leftmost-first match. Each byte read costs one unit of `left`.
fn forward_end(
    dfa: &DFA,
    cache: &mut hybrid::dfa::Cache,
    input: &Input<'_>,
    left: &mut usize,
    read: &mut usize,
) -> Result<Option<usize>, BudgetExhausted> {
    let bytes = input.haystack();
    let mut state = dfa
        .start_state_forward(cache, input)
        .map_err(|_| BudgetExhausted)?;
    let mut last_end = None;
    let start = input.start();
    for (offset, &byte) in bytes[start..input.end()].iter().enumerate() {
        let at = start + offset;
        *left = left.checked_sub(1).ok_or(BudgetExhausted)?;
        *read += 1;
        state = dfa
            .next_state(cache, state, byte)
            .map_err(|_| BudgetExhausted)?;
        if state.is_tagged() {
            // Matches are reported one byte late: a match state after byte `at` means a match
            // ended at `at`.
            if state.is_match() {
                last_end = Some(at);
            } else if state.is_dead() {
                return Ok(last_end);
            } else if state.is_quit() {
                return Err(BudgetExhausted);
            }
        }
    }
    state = dfa
        .next_eoi_state(cache, state)
        .map_err(|_| BudgetExhausted)?;
    if state.is_match() {
        last_end = Some(input.end());
    }
    Ok(last_end)
}

/// The lazy DFA twin of a compiled pattern, under the same limits.
fn lazy_dfa(rust: &str) -> Result<hybrid::regex::Regex, PatternError> {
    hybrid::regex::Builder::new()
        .syntax(syntax::Config::new().nest_limit(NEST_LIMIT))
        .thompson(thompson::Config::new().nfa_size_limit(Some(REGEX_SIZE_LIMIT)))
        .dfa(
            hybrid::dfa::Config::new()
                .cache_capacity(REGEX_SIZE_LIMIT)
                // Non-ASCII input near a Unicode `\b` makes the search give up (a warning),
                // rather than refusing the pattern; the translation's `\b` is ASCII anyway.
                .unicode_word_boundary(true),
        )
        .build(rust)
        .map_err(|_| PatternError::TooLarge)
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/{}", self.source, self.flags)
    }
}

/// Why a pattern was refused. `offset` values count characters from the pattern's start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    #[error("Unknown regex flag `{0}` (JavaScript flags: i, m, s, u, v, g, y, d)")]
    UnknownFlag(char),
    #[error("Regex flag `{0}` is given twice")]
    DuplicateFlag(char),
    #[error("Pattern is empty")]
    Empty,
    #[error("Pattern is {0} characters long; the limit is {MAX_PATTERN_CHARS}")]
    TooLong(usize),
    #[error(
        "{feature} `{syntax}` (at offset {offset}) is not supported by Tollgate's linear-time regex engine; rewrite the pattern or split the rule (for example into a `when_require` rule)"
    )]
    Unsupported {
        feature: &'static str,
        syntax: String,
        offset: usize,
    },
    #[error("`{syntax}` (at offset {offset}): {reason}")]
    BadSyntax {
        syntax: String,
        offset: usize,
        reason: &'static str,
    },
    #[error("{reason}{}", translated_note(.source_pattern, .translated))]
    Invalid {
        reason: String,
        source_pattern: String,
        translated: String,
    },
    #[error("Regex is too large once compiled (limit {REGEX_SIZE_LIMIT} bytes); simplify it")]
    TooLarge,
}

fn translated_note(source: &str, translated: &str) -> String {
    if source == translated {
        String::new()
    } else {
        format!(" (translated to `{translated}`)")
    }
}

fn compile_error(err: regex::Error, translated: &str, source: &str) -> PatternError {
    match err {
        regex::Error::CompiledTooBig(_) => PatternError::TooLarge,
        other => {
            let text = other.to_string();
            // The `regex` crate renders a multi-line report with a caret; keep its last line.
            let reason = text
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .unwrap_or(&text)
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            PatternError::Invalid {
                reason,
                source_pattern: source.to_string(),
                translated: translated.to_string(),
            }
        }
    }
}

#[derive(Debug, Default)]
struct Flags {
    case_insensitive: bool,
    dot_all: bool,
}

impl Flags {
    fn parse(flags: &str) -> Result<Flags, PatternError> {
        let mut parsed = Flags::default();
        let mut seen = String::new();
        for flag in flags.chars() {
            if seen.contains(flag) {
                return Err(PatternError::DuplicateFlag(flag));
            }
            seen.push(flag);
            match flag {
                'i' => parsed.case_insensitive = true,
                's' => parsed.dot_all = true,
                // `m`: always on. `g`, `y`, `d`: about iteration state and match indices in JS,
                // meaningless here. `u`, `v`: Unicode mode; the translation already reads
                // `\u{…}` and `\p{…}` as Unicode.
                'm' | 'g' | 'y' | 'd' | 'u' | 'v' => {}
                other => return Err(PatternError::UnknownFlag(other)),
            }
        }
        Ok(parsed)
    }
}

struct Translation {
    rust: String,
    mentions_newline: bool,
}

fn translate(source: &str) -> Result<Translation, PatternError> {
    let chars: Vec<char> = source.chars().collect();
    if chars.is_empty() {
        return Err(PatternError::Empty);
    }
    if chars.len() > MAX_PATTERN_CHARS {
        return Err(PatternError::TooLong(chars.len()));
    }
    let mut translator = Translator {
        chars,
        idx: 0,
        out: String::with_capacity(source.len() + 16),
        mentions_newline: false,
    };
    translator.run()?;
    Ok(Translation {
        rust: translator.out,
        mentions_newline: translator.mentions_newline,
    })
}

const ASCII_DIGIT: &str = "[0-9]";
const ASCII_NOT_DIGIT: &str = "[^0-9]";
const ASCII_WORD: &str = "[0-9A-Za-z_]";
const ASCII_NOT_WORD: &str = "[^0-9A-Za-z_]";
/// A class that matches nothing (JavaScript's `[]`).
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";

/// One element of a character class.
enum ClassItem {
    Char(char),
    /// A translated class escape such as `[0-9]` or `\p{L}` (nested classes are legal in Rust).
    Set(String),
}

struct Translator {
    chars: Vec<char>,
    idx: usize,
    out: String,
    mentions_newline: bool,
}

impl Translator {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.idx + ahead).copied()
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(ahead, expected)| self.peek(ahead) == Some(expected))
    }

    fn snippet(&self, start: usize, len: usize) -> String {
        self.chars[start..(start + len).min(self.chars.len())]
            .iter()
            .collect()
    }

    fn run(&mut self) -> Result<(), PatternError> {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.escape()?,
                '[' => self.class()?,
                '(' => self.group()?,
                '{' => match quantifier_len(&self.chars[self.idx..]) {
                    Some(len) => {
                        let text = self.snippet(self.idx, len);
                        self.out.push_str(&text);
                        self.idx += len;
                    }
                    None => {
                        self.out.push_str(r"\{");
                        self.idx += 1;
                    }
                },
                '}' | ']' => {
                    self.out.push('\\');
                    self.out.push(c);
                    self.idx += 1;
                }
                _ => {
                    if c == '\n' {
                        self.mentions_newline = true;
                    }
                    push_literal_or_syntax(&mut self.out, c);
                    self.idx += 1;
                }
            }
        }
        Ok(())
    }

    fn group(&mut self) -> Result<(), PatternError> {
        let start = self.idx;
        if self.peek(1) != Some('?') {
            self.out.push('(');
            self.idx += 1;
            return Ok(());
        }
        let unsupported = |feature: &'static str, len: usize, this: &Self| {
            Err(PatternError::Unsupported {
                feature,
                syntax: this.snippet(start, len),
                offset: start,
            })
        };
        if self.starts_with("(?:") {
            self.out.push_str("(?:");
            self.idx += 3;
            return Ok(());
        }
        if self.starts_with("(?=") || self.starts_with("(?!") {
            return unsupported("Lookahead", 3, self);
        }
        if self.starts_with("(?<=") || self.starts_with("(?<!") {
            return unsupported("Lookbehind", 4, self);
        }
        if self.starts_with("(?<") || self.starts_with("(?P<") {
            let name_start = self.idx + if self.starts_with("(?<") { 3 } else { 4 };
            let mut end = name_start;
            while end < self.chars.len() && self.chars[end] != '>' {
                end += 1;
            }
            let name: String = self.chars[name_start..end.min(self.chars.len())]
                .iter()
                .collect();
            let valid = end < self.chars.len()
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(PatternError::BadSyntax {
                    syntax: self.snippet(start, end + 1 - start),
                    offset: start,
                    reason: "a group name must be ASCII letters, digits and `_`, closed by `>`",
                });
            }
            self.out.push_str("(?<");
            self.out.push_str(&name);
            self.out.push('>');
            self.idx = end + 1;
            return Ok(());
        }
        // Modifier groups: `(?i:…)`, `(?-i:…)`, `(?im-s:…)` (ES2025), and the PCRE-style
        // `(?i)` that many authors write. Only i, m and s are let through: other Rust flags
        // (`x`, `U`, `R`, `u`) would change how the rest of the translation is read.
        let mut end = self.idx + 2;
        while end < self.chars.len() && matches!(self.chars[end], 'i' | 'm' | 's' | '-') {
            end += 1;
        }
        if end > self.idx + 2 && matches!(self.chars.get(end), Some(':' | ')')) {
            let text = self.snippet(self.idx, end + 1 - self.idx);
            self.out.push_str(&text);
            self.idx = end + 1;
            return Ok(());
        }
        Err(PatternError::BadSyntax {
            syntax: self.snippet(start, 3),
            offset: start,
            reason: "unsupported group syntax (JavaScript groups: `(…)`, `(?:…)`, `(?<name>…)`, `(?i:…)`)",
        })
    }

    /// An escape outside a class.
    fn escape(&mut self) -> Result<(), PatternError> {
        let start = self.idx;
        let Some(c) = self.peek(1) else {
            return Err(PatternError::BadSyntax {
                syntax: "\\".into(),
                offset: start,
                reason: "the pattern ends with a lone backslash",
            });
        };
        match c {
            'd' => self.emit(2, ASCII_DIGIT),
            'D' => self.emit(2, ASCII_NOT_DIGIT),
            'w' => self.emit(2, ASCII_WORD),
            'W' => self.emit(2, ASCII_NOT_WORD),
            's' => self.emit(2, r"\s"),
            'S' => self.emit(2, r"\S"),
            'b' => self.emit(2, r"(?-u:\b)"),
            'B' => self.emit(2, r"(?-u:\B)"),
            'p' | 'P' => {
                let len = self.property_len(start)?;
                let text = self.snippet(start, len);
                self.emit(len, &text);
            }
            '1'..='9' => {
                let mut len = 2;
                while self.peek(len).is_some_and(|d| d.is_ascii_digit()) {
                    len += 1;
                }
                return Err(PatternError::Unsupported {
                    feature: "Backreference",
                    syntax: self.snippet(start, len),
                    offset: start,
                });
            }
            'k' if self.peek(2) == Some('<') => {
                let mut len = 3;
                while self.peek(len).is_some_and(|d| d != '>') {
                    len += 1;
                }
                return Err(PatternError::Unsupported {
                    feature: "Named backreference",
                    syntax: self.snippet(start, len + 1),
                    offset: start,
                });
            }
            _ => {
                let (ch, len) = self.char_escape(start)?;
                if ch == '\n' {
                    self.mentions_newline = true;
                }
                push_literal(&mut self.out, ch);
                self.idx += len;
            }
        }
        Ok(())
    }

    fn emit(&mut self, len: usize, text: &str) {
        self.out.push_str(text);
        self.idx += len;
    }

    /// Length of a `\p{…}` / `\P{…}` escape starting at `start`.
    fn property_len(&self, start: usize) -> Result<usize, PatternError> {
        if self.chars.get(start + 2) == Some(&'{') {
            let mut len = 3;
            while let Some(&c) = self.chars.get(start + len) {
                if c == '}' {
                    return Ok(len + 1);
                }
                if !(c.is_ascii_alphanumeric() || matches!(c, '_' | '=' | ' ' | '-')) {
                    break;
                }
                len += 1;
            }
        }
        Err(PatternError::BadSyntax {
            syntax: self.snippet(start, 3),
            offset: start,
            reason: "`\\p` and `\\P` need a property in braces, e.g. `\\p{L}`",
        })
    }

    /// An escape that stands for one character (valid both inside and outside classes);
    /// returns the character and the escape's length.
    fn char_escape(&self, start: usize) -> Result<(char, usize), PatternError> {
        let bad = |len: usize, reason: &'static str| PatternError::BadSyntax {
            syntax: self.snippet(start, len),
            offset: start,
            reason,
        };
        let c = self.chars.get(start + 1).copied().unwrap_or('\\');
        let simple = match c {
            't' => Some('\t'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            'v' => Some('\u{b}'),
            'f' => Some('\u{c}'),
            _ => None,
        };
        if let Some(ch) = simple {
            return Ok((ch, 2));
        }
        match c {
            '0' => {
                if self.chars.get(start + 2).is_some_and(char::is_ascii_digit) {
                    Err(PatternError::Unsupported {
                        feature: "Octal escape",
                        syntax: self.snippet(start, 3),
                        offset: start,
                    })
                } else {
                    Ok(('\0', 2))
                }
            }
            'c' => match self.chars.get(start + 2) {
                Some(&letter) if letter.is_ascii_alphabetic() => {
                    Ok((char::from((letter as u8) % 32), 3))
                }
                _ => Err(bad(3, "`\\c` must be followed by a letter")),
            },
            'x' => {
                let hex = self.hex_digits(start + 2, 2);
                match hex.and_then(char::from_u32) {
                    Some(ch) => Ok((ch, 4)),
                    None => Err(bad(4, "`\\x` must be followed by two hex digits")),
                }
            }
            'u' => self.unicode_escape(start),
            c if c.is_ascii_punctuation() => Ok((c, 2)),
            c if c.is_ascii_alphanumeric() => Err(bad(
                2,
                "not a JavaScript regex escape (JavaScript without the `u` flag would read it as the bare letter); write the letter without `\\` if that is what you mean",
            )),
            // Identity escape of any other character: the character itself.
            c => Ok((c, 2)),
        }
    }

    fn hex_digits(&self, from: usize, count: usize) -> Option<u32> {
        let digits: String = self.chars.get(from..from + count)?.iter().collect();
        if digits.chars().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(&digits, 16).ok()
        } else {
            None
        }
    }

    /// `\uXXXX`, a surrogate pair `\uD83D\uDE00`, or `\u{X…}`.
    fn unicode_escape(&self, start: usize) -> Result<(char, usize), PatternError> {
        let bad = |len: usize, reason: &'static str| PatternError::BadSyntax {
            syntax: self.snippet(start, len),
            offset: start,
            reason,
        };
        if self.chars.get(start + 2) == Some(&'{') {
            let mut len = 3;
            while self
                .chars
                .get(start + len)
                .is_some_and(char::is_ascii_hexdigit)
            {
                len += 1;
            }
            let digits: String = self.chars[start + 3..start + len].iter().collect();
            if self.chars.get(start + len) != Some(&'}') || digits.is_empty() || digits.len() > 6 {
                return Err(bad(
                    len + 1,
                    "`\\u{…}` needs 1–6 hex digits and a closing `}`",
                ));
            }
            return u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .map(|ch| (ch, len + 1))
                .ok_or_else(|| bad(len + 1, "not a Unicode scalar value"));
        }
        let Some(unit) = self.hex_digits(start + 2, 4) else {
            return Err(bad(6, "`\\u` must be followed by four hex digits or `{…}`"));
        };
        if (0xD800..0xDC00).contains(&unit) {
            let low = (self.chars.get(start + 6) == Some(&'\\')
                && self.chars.get(start + 7) == Some(&'u'))
            .then(|| self.hex_digits(start + 8, 4))
            .flatten()
            .filter(|low| (0xDC00..0xE000).contains(low));
            return match low {
                Some(low) => {
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    char::from_u32(code)
                        .map(|ch| (ch, 12))
                        .ok_or_else(|| bad(12, "not a Unicode scalar value"))
                }
                None => Err(bad(6, "a lone surrogate cannot be matched in UTF-8 text")),
            };
        }
        char::from_u32(unit)
            .map(|ch| (ch, 6))
            .ok_or_else(|| bad(6, "a lone surrogate cannot be matched in UTF-8 text"))
    }

    /// A character class `[…]`, read with JavaScript's rules and written with Rust's.
    fn class(&mut self) -> Result<(), PatternError> {
        let start = self.idx;
        if self.starts_with("[]") {
            self.emit(2, NOTHING);
            return Ok(());
        }
        if self.starts_with("[^]") {
            self.mentions_newline = true;
            self.emit(3, "(?s:.)");
            return Ok(());
        }
        self.idx += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.idx += 1;
        }
        let mut rendered = String::from(if negated { "[^" } else { "[" });
        loop {
            let Some(c) = self.peek(0) else {
                return Err(PatternError::BadSyntax {
                    syntax: self.snippet(start, 1),
                    offset: start,
                    reason: "unterminated character class",
                });
            };
            if c == ']' {
                self.idx += 1;
                break;
            }
            let first = self.class_item()?;
            let is_range = self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']');
            if !is_range {
                self.push_class_item(&mut rendered, first);
                continue;
            }
            self.idx += 1;
            let second = self.class_item()?;
            match (first, second) {
                (ClassItem::Char(low), ClassItem::Char(high)) => {
                    if low > high {
                        return Err(PatternError::BadSyntax {
                            syntax: self.snippet(start, self.idx - start),
                            offset: start,
                            reason: "range out of order in character class",
                        });
                    }
                    push_class_char(&mut rendered, low);
                    rendered.push('-');
                    push_class_char(&mut rendered, high);
                    if low <= '\n' && '\n' <= high {
                        self.mentions_newline = true;
                    }
                }
                // JavaScript (without `u`) reads `[\w-x]` as `\w`, `-` and `x`.
                (first, second) => {
                    self.push_class_item(&mut rendered, first);
                    rendered.push_str(r"\-");
                    self.push_class_item(&mut rendered, second);
                }
            }
        }
        rendered.push(']');
        self.out.push_str(&rendered);
        Ok(())
    }

    fn push_class_item(&mut self, rendered: &mut String, item: ClassItem) {
        match item {
            ClassItem::Char(c) => {
                if c == '\n' {
                    self.mentions_newline = true;
                }
                push_class_char(rendered, c);
            }
            ClassItem::Set(set) => rendered.push_str(&set),
        }
    }

    fn class_item(&mut self) -> Result<ClassItem, PatternError> {
        let start = self.idx;
        let Some(c) = self.peek(0) else {
            return Err(PatternError::BadSyntax {
                syntax: "[".into(),
                offset: start,
                reason: "unterminated character class",
            });
        };
        if c != '\\' {
            self.idx += 1;
            return Ok(ClassItem::Char(c));
        }
        let Some(next) = self.peek(1) else {
            return Err(PatternError::BadSyntax {
                syntax: "\\".into(),
                offset: start,
                reason: "the pattern ends with a lone backslash",
            });
        };
        let set = match next {
            'd' => Some(ASCII_DIGIT.to_string()),
            'D' => Some(ASCII_NOT_DIGIT.to_string()),
            'w' => Some(ASCII_WORD.to_string()),
            'W' => Some(ASCII_NOT_WORD.to_string()),
            's' => Some(r"\s".to_string()),
            'S' => Some(r"\S".to_string()),
            _ => None,
        };
        if let Some(set) = set {
            self.idx += 2;
            return Ok(ClassItem::Set(set));
        }
        match next {
            'p' | 'P' => {
                let len = self.property_len(start)?;
                let text = self.snippet(start, len);
                self.idx += len;
                Ok(ClassItem::Set(text))
            }
            // In a class, `\b` is the backspace character.
            'b' => {
                self.idx += 2;
                Ok(ClassItem::Char('\u{8}'))
            }
            '1'..='9' => Err(PatternError::Unsupported {
                feature: "Octal escape",
                syntax: self.snippet(start, 2),
                offset: start,
            }),
            _ => {
                let (ch, len) = self.char_escape(start)?;
                self.idx += len;
                Ok(ClassItem::Char(ch))
            }
        }
    }
}

/// Length of a JavaScript quantifier `{n}`, `{n,}` or `{n,m}` at the start of `chars`.
fn quantifier_len(chars: &[char]) -> Option<usize> {
    let mut idx = 1;
    let digits = |from: usize| {
        chars[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let n_min = digits(idx);
    if n_min == 0 {
        return None;
    }
    idx += n_min;
    if chars.get(idx) == Some(&',') {
        idx += 1;
        idx += digits(idx);
    }
    (chars.get(idx) == Some(&'}')).then_some(idx + 1)
}

/// A character that is regex syntax in JavaScript is written as is; so is every other one,
/// except control characters, which are written as hex escapes for readable error messages.
fn push_literal_or_syntax(out: &mut String, c: char) {
    if c.is_control() {
        push_hex(out, c);
    } else {
        out.push(c);
    }
}

/// A character that must match itself outside a class.
fn push_literal(out: &mut String, c: char) {
    if c.is_control() {
        push_hex(out, c);
    } else {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
                | '&'
                | '-'
                | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A character that must match itself inside a class (Rust classes also give meaning to `[`,
/// `&&`, `--` and `~~`).
fn push_class_char(out: &mut String, c: char) {
    if c.is_control() {
        push_hex(out, c);
    } else {
        if matches!(c, '\\' | '[' | ']' | '^' | '-' | '&' | '~') {
            out.push('\\');
        }
        out.push(c);
    }
}

fn push_hex(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(source: &str) -> String {
        translate(source)
            .map(|t| t.rust)
            .unwrap_or_else(|err| panic!("{source}: {err}"))
    }

    fn matches(source: &str, flags: &str, text: &str) -> bool {
        Pattern::new(source, flags)
            .unwrap_or_else(|err| panic!("{source}: {err}"))
            .regex()
            .is_match(text)
    }

    #[test]
    fn plain_patterns_pass_through() {
        assert_eq!(rust(r"eval\s*\("), r"eval\s*\(");
        assert_eq!(rust(r"a+?b{2,3}c|(x)"), r"a+?b{2,3}c|(x)");
        assert_eq!(rust(r"(?:a)(?<name>b)"), r"(?:a)(?<name>b)");
    }

    #[test]
    fn js_escapes_are_rewritten() {
        assert_eq!(rust(r"\/api\/v1"), "/api/v1");
        assert_eq!(rust(r"\d\w\b"), r"[0-9][0-9A-Za-z_](?-u:\b)");
        assert_eq!(rust(r"\u0041\u{1F600}"), "A\u{1F600}");
        assert_eq!(rust(r"\uD83D\uDE00"), "\u{1F600}");
        assert_eq!(rust(r"\cJ\0"), r"\x{A}\x{0}");
        assert_eq!(rust(r"\-\<"), r"\-<");
        assert_eq!(rust(r"a{b}"), r"a\{b\}");
        assert_eq!(rust(r"x{,3}"), r"x\{,3\}");
        assert_eq!(rust(r"a]"), r"a\]");
    }

    #[test]
    fn classes_follow_javascript_rules() {
        assert_eq!(rust(r"[\w-]"), r"[[0-9A-Za-z_]\-]");
        assert_eq!(rust(r"[\w-x]"), r"[[0-9A-Za-z_]\-x]");
        assert_eq!(rust(r"[a-z[&&~]"), r"[a-z\[\&\&\~]");
        assert_eq!(rust(r"[\b\]]"), r"[\x{8}\]]");
        assert_eq!(rust(r"[^\s\/]"), r"[^\s/]");
        assert_eq!(rust(r"[\u0000-\u001f]"), r"[\x{0}-\x{1F}]");
        assert!(matches(r"[^]", "", "\n"));
        assert!(!matches(r"a[]", "", "a"));
        assert!(matches(r"[\w-]+", "", "-_-"));
        assert!(matches(r"x[a-z[]y", "", "x[y"));
    }

    #[test]
    fn ascii_semantics_of_d_and_w_are_kept() {
        assert!(!matches(r"^\d$", "", "٣"));
        assert!(!matches(r"^\w$", "", "é"));
        assert!(matches(r"\bfoo\b", "", "a foo b"));
        assert!(matches(r"^\s$", "", "\u{a0}"));
    }

    #[test]
    fn flags_translate_and_unknown_flags_are_errors() {
        assert!(matches("EVAL", "i", "eval("));
        assert!(!matches("EVAL", "", "eval("));
        assert!(matches("a.b", "s", "a\nb"));
        assert!(!matches("a.b", "", "a\nb"));
        assert!(matches("^b$", "", "a\nb\nc"));
        assert!(matches("x", "gimsuyd", "x"));
        assert_eq!(
            Pattern::new("x", "q").unwrap_err(),
            PatternError::UnknownFlag('q')
        );
        assert_eq!(
            Pattern::new("x", "ii").unwrap_err(),
            PatternError::DuplicateFlag('i')
        );
    }

    #[test]
    fn spans_lines_is_detected() {
        assert!(!Pattern::new(r"foo\s+bar", "").unwrap().spans_lines());
        assert!(Pattern::new(r"foo\nbar", "").unwrap().spans_lines());
        assert!(Pattern::new(r"foo[^]*bar", "").unwrap().spans_lines());
        assert!(Pattern::new(r"foo.*bar", "s").unwrap().spans_lines());
        assert!(Pattern::new(r"foo[\n]bar", "").unwrap().spans_lines());
        assert!(Pattern::new(r"foo\u000abar", "").unwrap().spans_lines());
    }

    #[test]
    fn lookaround_and_backreferences_are_refused_with_explanations() {
        let err = Pattern::new(r"foo(?=bar)", "").unwrap_err();
        assert_eq!(
            err,
            PatternError::Unsupported {
                feature: "Lookahead",
                syntax: "(?=".into(),
                offset: 3
            }
        );
        assert!(
            err.to_string()
                .starts_with("Lookahead `(?=` (at offset 3) is not supported by Tollgate's linear-time regex engine; rewrite the pattern or split the rule"),
            "{err}"
        );
        for (pattern, feature) in [
            (r"(?!x)", "Lookahead"),
            (r"(?<=x)y", "Lookbehind"),
            (r"(?<!x)y", "Lookbehind"),
            (r"(a)\1", "Backreference"),
            (r"(?<q>a)\k<q>", "Named backreference"),
            (r"\012", "Octal escape"),
        ] {
            match Pattern::new(pattern, "") {
                Err(PatternError::Unsupported { feature: got, .. }) => {
                    assert_eq!(got, feature, "{pattern}")
                }
                other => panic!("{pattern}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_syntax_is_reported_not_panicked() {
        for pattern in [
            "a(b",
            r"\",
            "[abc",
            r"\xZZ",
            r"\u12",
            r"\uD800",
            r"\q",
            r"(?x)a",
            r"(?<1a>x)",
            "*a",
            "[z-a]",
            r"\p",
            r"\c1",
            "a{3,2}",
        ] {
            assert!(Pattern::new(pattern, "").is_err(), "{pattern} should fail");
        }
        let err = Pattern::new("a(b", "").unwrap_err();
        assert!(err.to_string().contains("unclosed group"), "{err}");
        assert_eq!(Pattern::new("", "").unwrap_err(), PatternError::Empty);
    }

    #[test]
    fn huge_programs_and_patterns_are_refused() {
        assert_eq!(
            Pattern::new(r"(?:[^x]{1000}){50}", "").unwrap_err(),
            PatternError::TooLarge
        );
        assert!(matches!(
            Pattern::new(&"a".repeat(MAX_PATTERN_CHARS + 1), ""),
            Err(PatternError::TooLong(_))
        ));
        assert!(Pattern::new(&"(".repeat(100), "").is_err());
    }

    #[test]
    fn modifier_groups_are_allowed() {
        assert!(matches("(?i:abc)d", "", "ABCd"));
        assert!(matches("(?i)abc", "", "ABC"));
    }

    proptest::proptest! {
        #[test]
        fn any_text_translates_or_errors_without_panicking(
            source in "\\PC{0,40}",
            flags in "[a-z]{0,3}",
        ) {
            if let Ok(pattern) = Pattern::new(&source, &flags) {
                let _ = pattern.regex().find("some text é 123 \\ [x] {y}");
            }
        }

        #[test]
        fn regex_syntax_soup_translates_or_errors_without_panicking(
            source in r"[\\\[\]\(\)\{\}\?\*\+\|\^\$\.:=!<>a-fkpuxcPdDwWsSbB0-9,\-]{0,30}",
        ) {
            if let Ok(pattern) = Pattern::new(&source, "") {
                let _ = pattern.regex().is_match("abc-123 <x>");
            }
        }
    }

    #[test]
    fn display_shows_the_javascript_form() {
        assert_eq!(
            Pattern::new(r"eval\(", "i").unwrap().to_string(),
            r"/eval\(/i"
        );
    }
}
