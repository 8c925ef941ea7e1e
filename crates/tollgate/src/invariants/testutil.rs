//! Test helpers: small unified diffs into [`Diff`] values.
//!
//! FIXME: this is a minimal reader of the git diffs the tests write (headers, count-driven
//! hunks, `/dev/null`, renames, binary and mode-only sections), written while
//! `crate::diff::parse` was still a placeholder. Once that parser is in, `diff_bytes` should call
//! it instead, so these tests exercise the real path.

use crate::diff::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};

pub(crate) fn diff(text: &str) -> Diff {
    diff_bytes(text.as_bytes().to_vec())
}

pub(crate) fn diff_bytes(bytes: Vec<u8>) -> Diff {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut remaining_old = 0u32;
    let mut remaining_new = 0u32;
    let mut old_no = 0u32;
    let mut new_no = 0u32;
    let mut start = 0;
    let mut diff_line = 0;
    while start < bytes.len() {
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |idx| start + idx);
        let line = &bytes[start..end];
        diff_line += 1;
        let text = String::from_utf8_lossy(line).into_owned();
        let in_hunk = remaining_old > 0 || remaining_new > 0;
        if in_hunk && !line.is_empty() && matches!(line[0], b' ' | b'+' | b'-') {
            let kind = match line[0] {
                b'+' => LineKind::Added,
                b'-' => LineKind::Removed,
                _ => LineKind::Context,
            };
            let (old_line, new_line) = match kind {
                LineKind::Added => {
                    new_no += 1;
                    remaining_new -= 1;
                    (None, Some(new_no))
                }
                LineKind::Removed => {
                    old_no += 1;
                    remaining_old -= 1;
                    (Some(old_no), None)
                }
                LineKind::Context => {
                    old_no += 1;
                    new_no += 1;
                    remaining_old = remaining_old.saturating_sub(1);
                    remaining_new = remaining_new.saturating_sub(1);
                    (Some(old_no), Some(new_no))
                }
            };
            let hunk = files
                .last_mut()
                .and_then(|file| file.hunks.last_mut())
                .expect("hunk line outside a hunk");
            hunk.lines.push(Line {
                kind,
                old_line,
                new_line,
                no_newline_at_eof: false,
                content: start + 1..end,
            });
        } else if let Some(rest) = text.strip_prefix("diff --git a/") {
            let (old, new) = rest.split_once(" b/").expect("diff --git a/X b/Y");
            remaining_old = 0;
            remaining_new = 0;
            files.push(FileDiff {
                old_path: Some(old.to_string()),
                new_path: Some(new.to_string()),
                status: FileStatus::Modified,
                similarity: None,
                old_mode: None,
                new_mode: None,
                binary: false,
                hunks: Vec::new(),
                diff_line,
            });
        } else if text.starts_with("@@ ") {
            let header: Vec<&str> = text.split_whitespace().collect();
            let range = |part: &str| -> (u32, u32) {
                let part = &part[1..];
                match part.split_once(',') {
                    Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                    None => (part.parse().unwrap(), 1),
                }
            };
            let (old_start, old_count) = range(header[1]);
            let (new_start, new_count) = range(header[2]);
            remaining_old = old_count;
            remaining_new = new_count;
            old_no = old_start.saturating_sub(1);
            new_no = new_start.saturating_sub(1);
            if old_count == 0 {
                old_no = old_start;
            }
            if new_count == 0 {
                new_no = new_start;
            }
            let file = files.last_mut().expect("hunk outside a file");
            file.hunks.push(Hunk {
                old_start,
                old_count,
                new_start,
                new_count,
                section: String::new(),
                lines: Vec::new(),
            });
        } else if let Some(file) = files.last_mut() {
            if text == "--- /dev/null" || text.starts_with("new file mode") {
                file.old_path = None;
                file.status = FileStatus::Added;
            } else if text == "+++ /dev/null" || text.starts_with("deleted file mode") {
                file.new_path = None;
                file.status = FileStatus::Deleted;
            } else if text.starts_with("rename to") {
                file.status = FileStatus::Renamed;
            } else if text.starts_with("Binary files") {
                file.binary = true;
            } else if let Some(mode) = text.strip_prefix("old mode ") {
                file.old_mode = u32::from_str_radix(mode, 8).ok();
            } else if let Some(mode) = text.strip_prefix("new mode ") {
                file.new_mode = u32::from_str_radix(mode, 8).ok();
            } else if text.starts_with("\\ ") {
                if let Some(last) = file.hunks.last_mut().and_then(|h| h.lines.last_mut()) {
                    last.no_newline_at_eof = true;
                }
            }
        }
        start = end + 1;
    }
    Diff { bytes, files }
}
