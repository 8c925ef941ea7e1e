//! Checking what a model says against the diff: a location must be a line of a hunk of a file
//! that was sent, or the finding is dropped; `on_changed_line` and the anchored line's text come
//! from the diff, never from the model.

use std::collections::BTreeMap;

use crate::diff::{ChangedLines, Diff};

/// A location a model gave, resolved against the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verified {
    pub(crate) path: String,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) on_changed_line: bool,
    /// The new-side text of `start_line` (the fingerprint's anchor).
    pub(crate) anchor: String,
}

/// The new-side lines shown in the diff, per path.
#[derive(Debug)]
pub(crate) struct DiffLines {
    changed: ChangedLines,
    text: BTreeMap<String, BTreeMap<u32, String>>,
}

impl DiffLines {
    pub(crate) fn new(diff: &Diff) -> DiffLines {
        let mut text: BTreeMap<String, BTreeMap<u32, String>> = BTreeMap::new();
        for file in diff.files() {
            let Some(path) = file.new_path.as_deref() else {
                continue;
            };
            let lines = text.entry(path.to_string()).or_default();
            for hunk in &file.hunks {
                for line in &hunk.lines {
                    if let Some(n) = line.new_line {
                        lines.insert(n, diff.line_text(line).trim_end_matches('\r').to_string());
                    }
                }
            }
        }
        DiffLines {
            changed: ChangedLines::new(diff),
            text,
        }
    }

    /// Resolves a model's `file` and lines among the `sent` paths; `None` when the location is
    /// not in the diff.
    pub(crate) fn verify(
        &self,
        sent: &[String],
        file: &str,
        start: i64,
        end: Option<i64>,
    ) -> Option<Verified> {
        let path = normalize(file);
        let path = sent.iter().find(|p| **p == path)?.clone();
        let shown = self.text.get(&path)?;
        let start = u32::try_from(start).ok()?;
        let end = end
            .and_then(|e| u32::try_from(e).ok())
            .filter(|e| *e >= start)
            .unwrap_or(start);
        // Cap absurd ranges: a finding is about a place, not a whole file.
        let end = end.min(start.saturating_add(200));
        // The first line of the range that the diff shows is the anchor.
        let anchor_line =
            (start..=end).find(|n| shown.contains_key(n) && self.changed.in_hunk(&path, *n))?;
        let on_changed_line = (start..=end).any(|n| self.changed.is_added(&path, n));
        Some(Verified {
            anchor: shown.get(&anchor_line).cloned().unwrap_or_default(),
            path,
            start_line: anchor_line,
            end_line: end.max(anchor_line),
            on_changed_line,
        })
    }
}

/// Strips the decorations models add to paths: quotes, `./`, `a/` or `b/` from diff headers.
fn normalize(file: &str) -> String {
    let file = file.trim().trim_matches(['`', '"', '\'']);
    let file = file.strip_prefix("./").unwrap_or(file);
    file.strip_prefix("b/").unwrap_or(file).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -10,3 +10,4 @@\n ctx one\n-old\n+new one\n+new two\n ctx two\n";

    #[test]
    fn only_lines_shown_in_the_diff_are_accepted() {
        let diff = crate::diff::parse(DIFF.as_bytes().to_vec()).unwrap();
        let lines = DiffLines::new(&diff);
        let sent = vec!["src/a.rs".to_string()];
        let v = lines.verify(&sent, "src/a.rs", 11, None).unwrap();
        assert!(v.on_changed_line);
        assert_eq!(v.anchor, "new one");
        let v = lines.verify(&sent, "b/src/a.rs", 10, Some(10)).unwrap();
        assert!(!v.on_changed_line, "a context line is not a changed line");
        // Outside the hunk, another file, a file not sent.
        assert_eq!(lines.verify(&sent, "src/a.rs", 200, None), None);
        assert_eq!(lines.verify(&sent, "src/other.rs", 11, None), None);
        assert_eq!(lines.verify(&[], "src/a.rs", 11, None), None);
        assert_eq!(lines.verify(&sent, "src/a.rs", -3, None), None);
        // A range starting before the hunk is anchored at its first shown line.
        let v = lines.verify(&sent, "src/a.rs", 5, Some(12)).unwrap();
        assert_eq!(v.start_line, 10);
        assert!(v.on_changed_line);
    }
}
