//! Changed-line maps: for each new path of a diff, which lines were added and which lines lie
//! inside a hunk. Findings are anchored to added lines; GitHub accepts inline comments on any
//! line of a hunk's new side, context included.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::diff::model::Diff;

/// Added lines and new-side hunk ranges per new path, built once from a [`Diff`].
///
/// Deleted files have no new side and are absent. Lookups are a map lookup plus a binary
/// search; iteration is in path order, so output built from it is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedLines {
    files: BTreeMap<String, FileLines>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct FileLines {
    /// Sorted, without duplicates.
    added: Vec<u32>,
    /// New-side line ranges of the hunks (half-open), sorted, overlapping ones merged.
    hunks: Vec<Range<u32>>,
}

impl ChangedLines {
    pub fn new(diff: &Diff) -> ChangedLines {
        let mut files: BTreeMap<String, FileLines> = BTreeMap::new();
        for file in diff.files() {
            let Some(path) = file.new_path.as_deref() else {
                continue;
            };
            let entry = files.entry(path.to_owned()).or_default();
            entry
                .added
                .extend(file.added_lines().filter_map(|line| line.new_line));
            entry.hunks.extend(
                file.hunks
                    .iter()
                    .filter(|hunk| hunk.new_count > 0)
                    .map(|hunk| hunk.new_start..hunk.new_start.saturating_add(hunk.new_count)),
            );
        }
        for lines in files.values_mut() {
            // A path can appear twice in odd diffs, and hunks need not come in order.
            lines.added.sort_unstable();
            lines.added.dedup();
            lines.hunks = merge_ranges(std::mem::take(&mut lines.hunks));
        }
        ChangedLines { files }
    }

    /// Hunk ranges alone, as a diff's [`ChangedLines::hunk_ranges`] gave them (half-open,
    /// new side), for a front end that received them instead of the diff (the Action's
    /// `workflow_run` stage). Empty ranges are dropped, the rest sorted and merged. No line
    /// counts as added: [`ChangedLines::is_added`] is false everywhere.
    pub fn from_hunk_ranges<P: Into<String>>(
        ranges: impl IntoIterator<Item = (P, Range<u32>)>,
    ) -> ChangedLines {
        let mut files: BTreeMap<String, FileLines> = BTreeMap::new();
        for (path, range) in ranges {
            if range.start < range.end {
                files.entry(path.into()).or_default().hunks.push(range);
            }
        }
        for lines in files.values_mut() {
            lines.hunks = merge_ranges(std::mem::take(&mut lines.hunks));
        }
        ChangedLines { files }
    }

    /// The new paths that have a new side, in order.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The added line numbers of `path`, sorted (empty for a path not in the diff).
    pub fn added_lines(&self, path: &str) -> &[u32] {
        self.files.get(path).map_or(&[], |lines| &lines.added)
    }

    /// The new-side line ranges of `path`'s hunks (half-open, sorted, overlaps merged).
    pub fn hunk_ranges(&self, path: &str) -> &[Range<u32>] {
        self.files.get(path).map_or(&[], |lines| &lines.hunks)
    }

    /// Whether `line` (1-based, new side) of `path` was added by the diff.
    pub fn is_added(&self, path: &str, line: u32) -> bool {
        self.added_lines(path).binary_search(&line).is_ok()
    }

    /// Whether `line` (1-based, new side) of `path` lies inside a hunk, context included.
    pub fn in_hunk(&self, path: &str, line: u32) -> bool {
        let ranges = self.hunk_ranges(path);
        // The last range starting at or before `line` is the only one that can hold it.
        let after = ranges.partition_point(|range| range.start <= line);
        after
            .checked_sub(1)
            .and_then(|idx| ranges.get(idx))
            .is_some_and(|range| range.contains(&line))
    }
}

fn merge_ranges(mut ranges: Vec<Range<u32>>) -> Vec<Range<u32>> {
    ranges.sort_unstable_by_key(|range| (range.start, range.end));
    let mut merged: Vec<Range<u32>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start < last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::parse;

    fn changed(text: &str) -> ChangedLines {
        ChangedLines::new(&parse(text.as_bytes().to_vec()).expect("fixture parses"))
    }

    const TWO_HUNKS: &str = r"diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@
 one
+two
 three
 four
@@ -20,4 +21,3 @@ fn tail()
 twenty
-gone
+changed
-also gone
 end
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+a
+b
";

    #[test]
    fn added_lines_are_sorted_per_new_path() {
        let lines = changed(TWO_HUNKS);
        assert_eq!(lines.added_lines("src/lib.rs"), &[2, 22]);
        assert_eq!(lines.added_lines("new.txt"), &[1, 2]);
        assert_eq!(lines.added_lines("missing.rs"), &[] as &[u32]);
    }

    #[test]
    fn deleted_files_have_no_new_side() {
        let lines = changed(TWO_HUNKS);
        assert_eq!(lines.files().collect::<Vec<_>>(), ["new.txt", "src/lib.rs"]);
        assert!(!lines.in_hunk("old.txt", 1));
    }

    #[test]
    fn is_added_only_for_added_lines() {
        let lines = changed(TWO_HUNKS);
        assert!(lines.is_added("src/lib.rs", 2));
        assert!(lines.is_added("src/lib.rs", 22));
        assert!(!lines.is_added("src/lib.rs", 1), "context line");
        assert!(!lines.is_added("src/lib.rs", 3));
        assert!(!lines.is_added("other.rs", 2));
    }

    #[test]
    fn in_hunk_covers_context_and_stops_at_hunk_edges() {
        let lines = changed(TWO_HUNKS);
        assert_eq!(lines.hunk_ranges("src/lib.rs"), &[1..5, 21..24]);
        for line in [1, 2, 3, 4, 21, 22, 23] {
            assert!(lines.in_hunk("src/lib.rs", line), "line {line}");
        }
        for line in [0, 5, 20, 24, 1000] {
            assert!(!lines.in_hunk("src/lib.rs", line), "line {line}");
        }
    }

    #[test]
    fn pure_deletion_hunks_have_no_new_range() {
        let lines = changed("--- a/x\n+++ b/x\n@@ -3,2 +2,0 @@\n-a\n-b\n@@ -10 +9 @@\n-c\n+d\n");
        // A one-element `[9..10]` reads like a typo of `[9, 10]` to clippy.
        assert_eq!(lines.hunk_ranges("x"), [Range { start: 9, end: 10 }]);
        assert!(!lines.in_hunk("x", 2));
    }

    #[test]
    fn overlapping_ranges_are_merged() {
        assert_eq!(
            merge_ranges(vec![5..9, 1..3, 2..6, 20..21]),
            vec![1..9, 20..21]
        );
        assert_eq!(merge_ranges(vec![1..3, 3..4]), vec![1..3, 3..4]);
    }

    #[test]
    fn hunk_ranges_round_trip_without_the_diff() {
        let lines = changed(TWO_HUNKS);
        let ranges: Vec<(String, Range<u32>)> = lines
            .files()
            .flat_map(|path| {
                lines
                    .hunk_ranges(path)
                    .iter()
                    .map(move |range| (path.to_string(), range.clone()))
            })
            .collect();
        let rebuilt = ChangedLines::from_hunk_ranges(ranges.into_iter().rev());
        assert_eq!(rebuilt.hunk_ranges("src/lib.rs"), &[1..5, 21..24]);
        assert!(rebuilt.in_hunk("new.txt", 2));
        assert!(!rebuilt.is_added("src/lib.rs", 2));
        let odd = ChangedLines::from_hunk_ranges([("a", 5..5), ("b", 3..6), ("b", 1..4)]);
        assert_eq!(odd.files().collect::<Vec<_>>(), ["b"]);
        assert_eq!(odd.hunk_ranges("b"), [Range { start: 1, end: 6 }]);
    }

    #[test]
    fn empty_diff_has_no_files() {
        let lines = ChangedLines::new(&Diff::empty());
        assert_eq!(lines.files().count(), 0);
        assert!(!lines.in_hunk("x", 1));
    }
}
