//! Running an [`InvariantSet`] against a [`Diff`]: findings anchored to the exact changed lines.
//!
//! For each enabled rule with an action and each changed file its globs match (new path; the old
//! one for deleted files under `lines: removed`):
//!
//! - `deny`: one finding per matching line, at that line, with the columns of the first match on
//!   it (1-based, end exclusive, in characters).
//! - `require`: when no added line matches, one finding at the file's first added line. Files
//!   with no added lines (deletions, binary or mode-only changes) are skipped: there is nothing
//!   that could have satisfied the rule. Pre-existing code never satisfies it.
//! - `when_require`: when `when` matches an added line and `require` matches none, one finding
//!   at the first line `when` matched.
//!
//! Patterns run line by line (so `^`/`$` are line anchors), except patterns that can span lines
//! ([`Pattern::spans_lines`]), which run against the file's added (or removed) lines joined by
//! `\n`, as upstream did for every pattern; a match is then reported at the line it starts on.
//! A rule × file pair counts in [`Evaluation::executed`] when it had lines to look at.

use std::borrow::Cow;
use std::cell::OnceCell;

use crate::control::Control;
use crate::diff::{Diff, FileDiff, Line, LineKind};
use crate::findings::{Finding, Location, Source};

use super::model::{Check, Invariant, InvariantSet, Lines};
use super::pattern::{BudgetExhausted, Pattern};

/// At most this many findings per rule and file; the rest are counted in a warning, so a rule
/// matching every line of a generated 100k-line file cannot flood a report.
pub const MAX_FINDINGS_PER_RULE_AND_FILE: usize = 1000;
/// Evidence is the matched line, trimmed and cut to this many characters.
pub const EVIDENCE_CHARS: usize = 200;
/// A pattern that spans lines may read this many bytes per byte of a file's joined lines
/// (plus [`MULTI_LINE_WORK_FLOOR`]) before its search stops with a warning.
pub const MULTI_LINE_WORK_PER_BYTE: usize = 32;
/// Bytes every multi-line search may read, however small the file.
pub const MULTI_LINE_WORK_FLOOR: usize = 1 << 20;

/// The outcome of evaluating invariants against one diff.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// In file order, then rule order, then line order.
    pub findings: Vec<Finding>,
    /// Rule × file pairs evaluated (upstream's `invariants_executed` / `checked_invariants`).
    pub executed: usize,
    pub warnings: Vec<String>,
    /// Changed files left unchecked because the caller's [`Control`] stopped the evaluation.
    pub n_files_unchecked: usize,
}

impl InvariantSet {
    /// Evaluates every enabled rule with an action. Never fails: rules were validated on load.
    pub fn evaluate(&self, diff: &Diff) -> Evaluation {
        self.evaluate_until(diff, &Control::default())
    }

    /// [`Self::evaluate`], stopping between files once `stop` is cancelled (a review's time
    /// budget); the files not reached are counted in [`Evaluation::n_files_unchecked`].
    pub fn evaluate_until(&self, diff: &Diff, stop: &Control) -> Evaluation {
        let mut evaluation = Evaluation::default();
        let checks: Vec<(&Invariant, &Check)> = self
            .checks()
            .filter_map(|rule| rule.check().map(|check| (rule, check)))
            .collect();
        if checks.is_empty() {
            return evaluation;
        }
        for (file_idx, file) in diff.files().iter().enumerate() {
            if stop.is_cancelled() {
                evaluation.n_files_unchecked = diff.files().len() - file_idx;
                break;
            }
            let mut added: Option<FileLines<'_>> = None;
            let mut removed: Option<FileLines<'_>> = None;
            for &(rule, check) in &checks {
                let path = match rule.lines() {
                    Lines::Added => match file.new_path.as_deref() {
                        Some(path) => path,
                        None => continue,
                    },
                    Lines::Removed => file.path(),
                };
                if !rule.paths().matches(path) {
                    continue;
                }
                let lines = match rule.lines() {
                    Lines::Added => {
                        added.get_or_insert_with(|| FileLines::collect(diff, file, Lines::Added))
                    }
                    Lines::Removed => removed
                        .get_or_insert_with(|| FileLines::collect(diff, file, Lines::Removed)),
                };
                if lines.lines.is_empty() {
                    continue;
                }
                evaluation.executed += 1;
                let target = Target { rule, path, lines };
                match check {
                    Check::Deny(pattern) => target.deny(pattern, &mut evaluation),
                    Check::Require(pattern) => target.require(pattern, &mut evaluation),
                    Check::WhenRequire { when, require } => {
                        target.when_require(when, require, &mut evaluation);
                    }
                }
            }
        }
        evaluation
    }
}

/// One changed line a rule can look at.
struct ChangedLine<'a> {
    /// The line the finding points at: the new line number of an added line; for a removed
    /// line, the new-file line where the removal happened (the old line in a deleted file).
    anchor_line: u32,
    /// The old line number of a removed line.
    old_line: Option<u32>,
    text: Cow<'a, str>,
}

/// The added or removed lines of one file, and (built on first need) their `\n`-joined text.
struct FileLines<'a> {
    lines: Vec<ChangedLine<'a>>,
    joined: OnceCell<Joined>,
}

struct Joined {
    text: String,
    /// Byte offset in `text` where each line starts.
    starts: Vec<usize>,
}

impl<'a> FileLines<'a> {
    fn collect(diff: &'a Diff, file: &'a FileDiff, which: Lines) -> FileLines<'a> {
        let mut lines = Vec::new();
        match which {
            Lines::Added => {
                for line in file.added_lines() {
                    if let Some(number) = line.new_line {
                        lines.push(ChangedLine {
                            anchor_line: number,
                            old_line: None,
                            text: diff.line_text(line),
                        });
                    }
                }
            }
            Lines::Removed => {
                let deleted = file.new_path.is_none();
                for hunk in &file.hunks {
                    for (idx, line) in hunk.lines.iter().enumerate() {
                        if line.kind != LineKind::Removed {
                            continue;
                        }
                        let Some(old_line) = line.old_line else {
                            continue;
                        };
                        let anchor_line = if deleted {
                            old_line
                        } else {
                            removal_anchor(&hunk.lines, idx).unwrap_or(hunk.new_start.max(1))
                        };
                        lines.push(ChangedLine {
                            anchor_line,
                            old_line: Some(old_line),
                            text: diff.line_text(line),
                        });
                    }
                }
            }
        }
        FileLines {
            lines,
            joined: OnceCell::new(),
        }
    }

    fn joined(&self) -> &Joined {
        self.joined.get_or_init(|| {
            let capacity = self.lines.iter().map(|line| line.text.len() + 1).sum();
            let mut text = String::with_capacity(capacity);
            let mut starts = Vec::with_capacity(self.lines.len());
            for (idx, line) in self.lines.iter().enumerate() {
                if idx > 0 {
                    text.push('\n');
                }
                starts.push(text.len());
                text.push_str(&line.text);
            }
            Joined { text, starts }
        })
    }
}

/// The new-file line nearest a removed line: the next line of the hunk that exists in the new
/// file, else the previous one.
fn removal_anchor(hunk_lines: &[Line], idx: usize) -> Option<u32> {
    hunk_lines[idx + 1..]
        .iter()
        .find_map(|line| line.new_line)
        .or_else(|| {
            hunk_lines[..idx]
                .iter()
                .rev()
                .find_map(|line| line.new_line)
        })
}

/// Where a pattern matched: line indexes into [`FileLines::lines`] and 1-based character columns
/// (end exclusive, on the end line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit {
    line_idx: usize,
    end_line_idx: usize,
    start_column: u32,
    end_column: u32,
}

struct Hits {
    hits: Vec<Hit>,
    /// Matching lines in all, including those beyond the `max` kept.
    total: usize,
    /// The line where a multi-line search ran out of budget; it and the lines after it were
    /// not searched.
    stopped_at: Option<usize>,
    /// Bytes a multi-line search read.
    #[cfg_attr(not(test), allow(dead_code))]
    bytes_read: usize,
}

/// Finds the matching lines (first match on each), keeping at most `max`. With `count_all`
/// false the search stops once `max` are found.
fn find_hits(pattern: &Pattern, lines: &FileLines<'_>, max: usize, count_all: bool) -> Hits {
    let regex = pattern.regex();
    let mut hits = Vec::new();
    let mut total = 0;
    if !pattern.spans_lines() {
        for (idx, line) in lines.lines.iter().enumerate() {
            if let Some(found) = regex.find(&line.text) {
                total += 1;
                if hits.len() < max {
                    hits.push(Hit {
                        line_idx: idx,
                        end_line_idx: idx,
                        start_column: column_of(&line.text, found.start()),
                        end_column: column_of(&line.text, found.end()),
                    });
                } else if !count_all {
                    break;
                }
            }
        }
        return Hits {
            hits,
            total,
            stopped_at: None,
            bytes_read: 0,
        };
    }
    let mut hits_stopped = None;
    let joined = lines.joined();
    let line_of = |offset: usize| joined.starts.partition_point(|&start| start <= offset) - 1;
    let mut search = pattern
        .bounded_search(multi_line_budget(joined.text.len()))
        .expect("patterns that span lines have a bounded search");
    let mut from = 0;
    while from <= joined.text.len() {
        let found = match search.find_at(&joined.text, from) {
            Ok(Some(found)) => found,
            Ok(None) => break,
            Err(BudgetExhausted) => {
                hits_stopped = Some(line_of(from.min(joined.text.len())));
                break;
            }
        };
        let line_idx = line_of(found.start);
        let end_line_idx = if found.end > found.start {
            line_of(found.end - 1)
        } else {
            line_idx
        };
        // First match per line: go on from the next line (or the match's end, if later), so
        // each line costs one search, not one per match on it.
        from = joined
            .starts
            .get(line_idx + 1)
            .copied()
            .unwrap_or(joined.text.len() + 1)
            .max(found.end);
        total += 1;
        if hits.len() >= max {
            if count_all {
                continue;
            }
            break;
        }
        let start_text = &lines.lines[line_idx].text;
        let end_text = &lines.lines[end_line_idx].text;
        let end_in_line = (found.end - joined.starts[end_line_idx]).min(end_text.len());
        hits.push(Hit {
            line_idx,
            end_line_idx,
            start_column: column_of(start_text, found.start - joined.starts[line_idx]),
            end_column: column_of(end_text, floor_char_boundary(end_text, end_in_line)),
        });
    }
    Hits {
        hits,
        total,
        stopped_at: hits_stopped,
        bytes_read: search.bytes_read(),
    }
}

/// Bytes a multi-line pattern may read while searching one file's joined lines: a multiple of
/// the text, so ordinary patterns never reach it while a pattern that rescans the text for
/// every match (`.*X|a` with the `s` flag) stops after a bounded amount of work.
fn multi_line_budget(text_bytes: usize) -> usize {
    MULTI_LINE_WORK_FLOOR.saturating_add(text_bytes.saturating_mul(MULTI_LINE_WORK_PER_BYTE))
}

/// The 1-based character column of a byte offset in a line.
fn column_of(text: &str, byte_offset: usize) -> u32 {
    let chars = text
        .get(..byte_offset)
        .map_or(0, |prefix| prefix.chars().count());
    u32::try_from(chars + 1).unwrap_or(u32::MAX)
}

fn floor_char_boundary(text: &str, mut idx: usize) -> usize {
    while idx > 0 && !text.is_char_boundary(idx) {
        idx -= 1;
    }
    idx
}

fn matches_any(pattern: &Pattern, lines: &FileLines<'_>) -> bool {
    if pattern.spans_lines() {
        pattern.regex().is_match(&lines.joined().text)
    } else {
        lines
            .lines
            .iter()
            .any(|line| pattern.regex().is_match(&line.text))
    }
}

/// A rule applied to one file.
struct Target<'a, 'd> {
    rule: &'a Invariant,
    path: &'a str,
    lines: &'a FileLines<'d>,
}

impl Target<'_, '_> {
    fn deny(&self, pattern: &Pattern, evaluation: &mut Evaluation) {
        let found = find_hits(pattern, self.lines, MAX_FINDINGS_PER_RULE_AND_FILE, true);
        let removed = self.rule.lines() == Lines::Removed;
        for hit in found.hits {
            let line = &self.lines.lines[hit.line_idx];
            let (impact, recommendation) = if removed {
                (
                    "This change removes code that a project invariant protects.",
                    "Restore the removed code, or change the invariant deliberately.".to_string(),
                )
            } else {
                (
                    "Code added in this change violates a project invariant.",
                    "Rewrite the matching code so it complies with the invariant, or change the invariant deliberately.".to_string(),
                )
            };
            let evidence = match line.old_line {
                Some(old_line) => format!("removed line {old_line}: {}", evidence_of(&line.text)),
                None => evidence_of(&line.text),
            };
            let location = if removed {
                // The columns belong to the removed line, not to the line the finding points at.
                Location::line(self.path, line.anchor_line)
            } else {
                Location {
                    file: self.path.to_string(),
                    start_line: line.anchor_line,
                    end_line: self.lines.lines[hit.end_line_idx].anchor_line,
                    start_column: Some(hit.start_column),
                    end_column: Some(hit.end_column),
                }
            };
            evaluation.findings.push(
                self.finding(location, impact, recommendation)
                    .with_evidence(evidence)
                    .with_anchor(line.text.as_ref()),
            );
        }
        self.warn_if_stopped(pattern, found.stopped_at, evaluation);
        let n_unreported = found.total.saturating_sub(MAX_FINDINGS_PER_RULE_AND_FILE);
        if n_unreported > 0 {
            evaluation.warnings.push(format!(
                "Invariant {}: {n_unreported} more matching lines in {} not reported (at most {MAX_FINDINGS_PER_RULE_AND_FILE} findings per rule and file)",
                self.rule.id(),
                self.path
            ));
        }
    }

    fn require(&self, pattern: &Pattern, evaluation: &mut Evaluation) {
        if matches_any(pattern, self.lines) {
            return;
        }
        let first = &self.lines.lines[0];
        let n_lines = self.lines.lines.len();
        evaluation.findings.push(
            self.finding(
                Location::line(self.path, first.anchor_line),
                "This change to a file covered by the invariant lacks a required construct.",
                format!(
                    "Add code matching {pattern} to this change, or change the invariant deliberately."
                ),
            )
            .with_evidence(format!(
                "None of the {n_lines} added line{} in this file matches {pattern}",
                if n_lines == 1 { "" } else { "s" }
            ))
            .with_anchor(first.text.as_ref()),
        );
    }

    fn when_require(&self, when: &Pattern, require: &Pattern, evaluation: &mut Evaluation) {
        let found = find_hits(when, self.lines, 1, false);
        self.warn_if_stopped(when, found.stopped_at, evaluation);
        let Some(hit) = found.hits.first().copied() else {
            return;
        };
        if matches_any(require, self.lines) {
            return;
        }
        let line = &self.lines.lines[hit.line_idx];
        let location = Location {
            file: self.path.to_string(),
            start_line: line.anchor_line,
            end_line: self.lines.lines[hit.end_line_idx].anchor_line,
            start_column: Some(hit.start_column),
            end_column: Some(hit.end_column),
        };
        evaluation.findings.push(
            self.finding(
                location,
                "The change triggers a conditional invariant without its required safeguard.",
                format!(
                    "Add code matching {require} alongside the triggering code, or remove the trigger."
                ),
            )
            .with_evidence(evidence_of(&line.text))
            .with_evidence(format!(
                "{when} matched here, but no added line in this file matches {require}"
            ))
            .with_anchor(line.text.as_ref()),
        );
    }

    /// Says so when a multi-line search stopped at its work budget: the lines from there on
    /// were not checked, and the run must not look as if they were.
    fn warn_if_stopped(
        &self,
        pattern: &Pattern,
        stopped_at: Option<usize>,
        evaluation: &mut Evaluation,
    ) {
        let Some(line_idx) = stopped_at else {
            return;
        };
        evaluation.warnings.push(format!(
            "Invariant {}: pattern {pattern} stopped at line {} of {} after reading {MULTI_LINE_WORK_PER_BYTE} bytes per byte of the file's changed lines (it rescans the text for each match); the {} changed lines from there on were not checked. Anchor the pattern or avoid a leading `.*` to make it cheaper",
            self.rule.id(),
            self.lines.lines[line_idx].anchor_line,
            self.path,
            self.lines.lines.len() - line_idx,
        ));
    }

    /// The parts every invariant finding shares; the rule's own message, impact and
    /// recommendation win over the defaults.
    fn finding(
        &self,
        location: Location,
        default_impact: &str,
        default_recommendation: String,
    ) -> Finding {
        let rule = self.rule;
        Finding::new(
            rule.id(),
            rule.severity(),
            rule.category(),
            Source::Invariants,
            rule.title(),
            location,
        )
        .with_confidence(rule.confidence())
        .with_message(rule.message().unwrap_or(rule.text()))
        .with_impact(rule.impact().unwrap_or(default_impact))
        .with_recommendation(
            rule.recommendation()
                .map_or(default_recommendation, str::to_string),
        )
        .on_changed_line(true)
    }
}

/// A line as evidence: trimmed and cut to [`EVIDENCE_CHARS`] characters.
fn evidence_of(text: &str) -> String {
    // Masked before cutting, so a cut can never leave a secret too short to detect (every
    // finding's texts are masked again when it gets its identity).
    let redacted = crate::secrets::redact_line(text);
    let trimmed = redacted.trim();
    match trimmed.char_indices().nth(EVIDENCE_CHARS) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::findings::{Category, Severity};
    use crate::invariants::testutil::diff;

    fn rules(yaml: &str) -> InvariantSet {
        InvariantSet::from_yaml(Path::new("inv.yml"), yaml).unwrap_or_else(|err| panic!("{err}"))
    }

    /// One rule in a file; `extra` holds the action-specific lines.
    fn rule(paths: &str, extra: &str) -> InvariantSet {
        rules(&format!(
            "rules:\n  - id: r1\n    rule: The rule text\n    paths: {paths}\n    severity: HIGH\n    category: security\n{extra}"
        ))
    }

    fn lines_of(findings: &[Finding]) -> Vec<(String, u32, Option<u32>, Option<u32>)> {
        findings
            .iter()
            .map(|f| {
                (
                    f.location.file.clone(),
                    f.location.start_line,
                    f.location.start_column,
                    f.location.end_column,
                )
            })
            .collect()
    }

    const EVAL_DIFF: &str = "\
diff --git a/src/app.js b/src/app.js
--- a/src/app.js
+++ b/src/app.js
@@ -10,2 +10,6 @@ function main() {
 const a = 1;
+const b = eval(input);
 const c = 2;
+const d = 3;
+  ünï = eval(x) + eval(y);
+window.eval = null;
";

    #[test]
    fn deny_reports_each_matching_line_at_its_line_and_columns() {
        let set = rule(
            "['src/**/*.js']",
            "    action: deny\n    deny:\n      regex:\n        pattern: \"\\\\beval\\\\(\"\n",
        );
        let evaluation = set.evaluate(&diff(EVAL_DIFF));
        assert_eq!(evaluation.executed, 1);
        assert_eq!(
            lines_of(&evaluation.findings),
            [
                ("src/app.js".into(), 11, Some(11), Some(16)),
                ("src/app.js".into(), 14, Some(9), Some(14)),
            ]
        );
        let first = &evaluation.findings[0];
        assert_eq!(first.rule_id, "r1");
        assert_eq!(first.severity, Severity::High);
        assert_eq!(first.category, Category::Security);
        assert_eq!(first.source, Source::Invariants);
        assert_eq!(first.title, "The rule text");
        assert_eq!(first.message, "The rule text");
        assert_eq!(first.confidence, 0.95);
        assert_eq!(first.evidence, ["const b = eval(input);"]);
        assert_eq!(first.anchor_text, "const b = eval(input);");
        assert!(first.on_changed_line);
        assert!(!first.impact.is_empty() && !first.recommendation.is_empty());
        // Two occurrences on one line are one finding, at the first.
        assert_eq!(
            evaluation.findings[1].evidence,
            ["ünï = eval(x) + eval(y);"]
        );
    }

    #[test]
    fn deny_findings_get_distinct_fingerprints() {
        let set = rule("['**']", "    action: deny\n    deny: {regex: 'TODO'}\n");
        let text = "\
diff --git a/a.rs b/a.rs
--- a/a.rs
+++ b/a.rs
@@ -1,0 +1,3 @@
+// TODO
+fn f() {}
+// TODO
";
        let mut findings = set.evaluate(&diff(text)).findings;
        crate::findings::assign_identities(&mut findings);
        assert_eq!(findings.len(), 2);
        assert_ne!(findings[0].fingerprint, findings[1].fingerprint);
    }

    #[test]
    fn deny_only_looks_at_added_lines() {
        let set = rule("['**']", "    action: deny\n    deny: {regex: 'secret'}\n");
        let text = "\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 secret context
-secret removed
+fine
 also secret
";
        let evaluation = set.evaluate(&diff(text));
        assert!(evaluation.findings.is_empty());
        assert_eq!(evaluation.executed, 1);
    }

    #[test]
    fn deny_on_removed_lines_points_at_where_the_removal_happened() {
        let set = rule(
            "['src/**']",
            "    action: deny\n    lines: removed\n    deny: {regex: 'csrfProtection'}\n    message: CSRF protection was removed\n",
        );
        let text = "\
diff --git a/src/server.js b/src/server.js
--- a/src/server.js
+++ b/src/server.js
@@ -4,3 +4,3 @@
 app.use(json());
-app.use(csrfProtection);
+app.use(cors());
 app.listen(80);
diff --git a/src/old.js b/src/old.js
deleted file mode 100644
--- a/src/old.js
+++ /dev/null
@@ -1,2 +0,0 @@
-const x = 1;
-router.use(csrfProtection);
";
        let evaluation = set.evaluate(&diff(text));
        assert_eq!(evaluation.executed, 2);
        assert_eq!(
            lines_of(&evaluation.findings),
            [
                ("src/server.js".into(), 5, None, None),
                ("src/old.js".into(), 2, None, None),
            ]
        );
        assert_eq!(
            evaluation.findings[0].evidence,
            ["removed line 5: app.use(csrfProtection);"]
        );
        assert_eq!(
            evaluation.findings[0].message,
            "CSRF protection was removed"
        );
        assert_eq!(
            evaluation.findings[0].anchor_text,
            "app.use(csrfProtection);"
        );
    }

    #[test]
    fn multi_line_patterns_run_on_joined_lines_and_map_back() {
        let set = rule(
            "['**']",
            "    action: deny\n    deny: {regex: {pattern: 'unsafe \\{\\n\\s*ptr', flags: ''}}\n",
        );
        let text = "\
diff --git a/a.rs b/a.rs
--- a/a.rs
+++ b/a.rs
@@ -1,1 +1,5 @@
 fn f() {
+    let x = 1;
+    unsafe {
+        ptr.read()
+    }
";
        let evaluation = set.evaluate(&diff(text));
        assert_eq!(evaluation.findings.len(), 1);
        let location = &evaluation.findings[0].location;
        assert_eq!((location.start_line, location.end_line), (3, 4));
        assert_eq!(
            (location.start_column, location.end_column),
            (Some(5), Some(12))
        );
        assert_eq!(evaluation.findings[0].evidence, ["unsafe {"]);
    }

    #[test]
    fn require_is_anchored_at_the_first_added_line() {
        let set = rule(
            "['migrations/**']",
            "    action: require\n    require: {regex: 'down'}\n",
        );
        let text = "\
diff --git a/migrations/002.sql b/migrations/002.sql
--- a/migrations/002.sql
+++ b/migrations/002.sql
@@ -1,2 +1,4 @@
 -- existing down section
 -- more
+-- up
+CREATE TABLE t (id int);
";
        let evaluation = set.evaluate(&diff(text));
        assert_eq!(evaluation.executed, 1);
        assert_eq!(
            lines_of(&evaluation.findings),
            [("migrations/002.sql".into(), 3, None, None)]
        );
        let finding = &evaluation.findings[0];
        assert_eq!(finding.anchor_text, "-- up");
        assert_eq!(
            finding.evidence,
            ["None of the 2 added lines in this file matches /down/"]
        );
        assert!(finding.recommendation.contains("/down/"));
    }

    #[test]
    fn require_is_satisfied_by_any_added_line() {
        let set = rule(
            "['**']",
            "    action: require\n    require: {regex: 'down'}\n",
        );
        let text = "\
diff --git a/m.sql b/m.sql
--- a/m.sql
+++ b/m.sql
@@ -1,0 +1,2 @@
+-- up
+-- down
";
        assert!(set.evaluate(&diff(text)).findings.is_empty());
    }

    #[test]
    fn require_skips_files_without_added_lines() {
        let set = rule("['**']", "    action: require\n    require: {regex: 'x'}\n");
        let text = "\
diff --git a/gone.sql b/gone.sql
deleted file mode 100644
--- a/gone.sql
+++ /dev/null
@@ -1,1 +0,0 @@
-old
diff --git a/trimmed.sql b/trimmed.sql
--- a/trimmed.sql
+++ b/trimmed.sql
@@ -1,2 +1,1 @@
 keep
-drop
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
";
        let evaluation = set.evaluate(&diff(text));
        assert!(evaluation.findings.is_empty());
        assert_eq!(evaluation.executed, 0);
    }

    #[test]
    fn when_require_fires_at_the_when_line_only_without_the_safeguard() {
        let set = rule(
            "['src/routes/**']",
            "    action: when_require\n    when: {regex: 'req\\.user'}\n    require: {regex: 'requireAuth\\('}\n",
        );
        let unsafe_diff = "\
diff --git a/src/routes/a.ts b/src/routes/a.ts
--- a/src/routes/a.ts
+++ b/src/routes/a.ts
@@ -1,1 +1,4 @@
 import x from 'y';
+export function handler(req) {
+  return req.user.id;
+}
";
        let evaluation = set.evaluate(&diff(unsafe_diff));
        assert_eq!(
            lines_of(&evaluation.findings),
            [("src/routes/a.ts".into(), 3, Some(10), Some(18))]
        );
        assert_eq!(
            evaluation.findings[0].evidence,
            [
                "return req.user.id;",
                "/req\\.user/ matched here, but no added line in this file matches /requireAuth\\(/"
            ]
        );
        let safe = unsafe_diff.replace("+}\n", "+}\n+requireAuth(handler);\n");
        let safe = safe.replace("+1,4", "+1,5");
        assert!(set.evaluate(&diff(&safe)).findings.is_empty());
        let untriggered = unsafe_diff.replace("req.user.id", "42");
        assert!(set.evaluate(&diff(&untriggered)).findings.is_empty());
    }

    #[test]
    fn exclude_paths_and_globs_select_files() {
        let set = rule(
            "['**/*.ts']",
            "    exclude_paths: ['**/*.test.ts', 'vendor/']\n    action: deny\n    deny: {regex: 'console\\.log'}\n",
        );
        let mut text = String::new();
        for path in [
            "src/a.ts",
            "src/a.test.ts",
            "vendor/lib.ts",
            "b.ts",
            ".config/c.ts",
            "src/d.js",
        ] {
            text.push_str(&format!(
                "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,1 @@\n+console.log(1)\n"
            ));
        }
        let evaluation = set.evaluate(&diff(&text));
        let files: Vec<&str> = evaluation
            .findings
            .iter()
            .map(|f| f.location.file.as_str())
            .collect();
        assert_eq!(files, ["src/a.ts", "b.ts", ".config/c.ts"]);
        assert_eq!(evaluation.executed, 3);
    }

    #[test]
    fn renamed_files_use_the_new_path() {
        let set = rule("['src/**']", "    action: deny\n    deny: {regex: 'x'}\n");
        let text = "\
diff --git a/old/a.rs b/src/a.rs
similarity index 90%
rename from old/a.rs
rename to src/a.rs
--- a/old/a.rs
+++ b/src/a.rs
@@ -1,1 +1,1 @@
-y
+x
";
        let evaluation = set.evaluate(&diff(text));
        assert_eq!(
            lines_of(&evaluation.findings),
            [("src/a.rs".into(), 1, Some(1), Some(2))]
        );
    }

    #[test]
    fn disabled_and_guidance_rules_are_not_evaluated() {
        let set = rules(
            "rules:\n  - id: a\n    rule: guidance\n    paths: ['**']\n    severity: LOW\n    category: style\n  - id: b\n    rule: off\n    paths: ['**']\n    severity: LOW\n    category: style\n    action: deny\n    deny: {regex: x}\n    enabled: false\n",
        );
        let text = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1,1 @@\n+x\n";
        let evaluation = set.evaluate(&diff(text));
        assert!(evaluation.findings.is_empty());
        assert_eq!(evaluation.executed, 0);
    }

    #[test]
    fn rule_texts_override_defaults() {
        let set = rule(
            "['**']",
            "    action: deny\n    deny: {regex: x}\n    message: M\n    recommendation: R\n    impact: I\n    confidence: 0.5\n",
        );
        let text = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1,1 @@\n+x\n";
        let finding = &set.evaluate(&diff(text)).findings[0];
        assert_eq!(
            (
                finding.message.as_str(),
                finding.recommendation.as_str(),
                finding.impact.as_str(),
                finding.confidence
            ),
            ("M", "R", "I", 0.5)
        );
    }

    #[test]
    fn evidence_is_trimmed_and_capped() {
        let long = format!("   {}   ", "é".repeat(300));
        let evidence = evidence_of(&long);
        assert_eq!(evidence.chars().count(), EVIDENCE_CHARS + 1);
        assert!(evidence.ends_with('…'));
        assert_eq!(evidence_of("  short  "), "short");
    }

    #[test]
    fn findings_per_rule_and_file_are_capped_with_a_warning() {
        let set = rule("['**']", "    action: deny\n    deny: {regex: x}\n");
        let n = MAX_FINDINGS_PER_RULE_AND_FILE + 5;
        let mut text = format!("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1,{n} @@\n");
        for _ in 0..n {
            text.push_str("+x\n");
        }
        let evaluation = set.evaluate(&diff(&text));
        assert_eq!(evaluation.findings.len(), MAX_FINDINGS_PER_RULE_AND_FILE);
        assert_eq!(evaluation.warnings.len(), 1);
        assert!(
            evaluation.warnings[0].contains("5 more matching lines in a"),
            "{:?}",
            evaluation.warnings
        );
    }

    #[test]
    fn crlf_and_invalid_utf8_lines_do_not_break_columns() {
        let set = rule("['**']", "    action: deny\n    deny: {regex: 'bad$'}\n");
        let mut bytes =
            b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1,2 @@\n+\xff bad\r\n+ok\n".to_vec();
        bytes.extend_from_slice(b"");
        let evaluation = set.evaluate(&crate::invariants::testutil::diff_bytes(bytes));
        assert_eq!(
            lines_of(&evaluation.findings),
            [("a".into(), 1, Some(3), Some(6))]
        );
    }

    #[test]
    fn evaluation_is_fast_on_large_diffs() {
        // Not a timing assertion (benchmarks measure speed): a smoke test that 20,000 added
        // lines × 3 rules evaluate without per-line surprises.
        let set = rules(
            "r:\n  - id: a\n    rule: a\n    paths: ['**/*.ts']\n    severity: LOW\n    category: style\n    action: deny\n    deny: {regex: 'console\\.log\\('}\n  - id: b\n    rule: b\n    paths: ['**']\n    severity: LOW\n    category: style\n    action: require\n    require: {regex: 'never-present'}\n  - id: c\n    rule: c\n    paths: ['src/**']\n    severity: LOW\n    category: style\n    action: when_require\n    when: {regex: 'fetch\\('}\n    require: {regex: 'timeout'}\n",
        );
        let mut text = String::new();
        for file in 0..20 {
            text.push_str(&format!(
                "diff --git a/src/f{file}.ts b/src/f{file}.ts\n--- a/src/f{file}.ts\n+++ b/src/f{file}.ts\n@@ -0,0 +1,1000 @@\n"
            ));
            for line in 0..1000 {
                text.push_str(&format!(
                    "+const value{line} = compute({line}, 'some text here');\n"
                ));
            }
        }
        let evaluation = set.evaluate(&diff(&text));
        assert_eq!(evaluation.executed, 60);
        assert_eq!(evaluation.findings.len(), 20);
    }

    /// `n_lines` added lines of `line` in `a.rs`.
    fn added_lines_diff(line: &str, n_lines: usize) -> Diff {
        let mut text =
            format!("diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -0,0 +1,{n_lines} @@\n");
        for _ in 0..n_lines {
            text.push('+');
            text.push_str(line);
            text.push('\n');
        }
        diff(&text)
    }

    const RESCANNING_RULE: &str =
        "    action: deny\n    deny: {regex: {pattern: '.*X|a', flags: 's'}}\n";

    #[test]
    fn a_multi_line_pattern_on_one_long_line_reads_it_about_once() {
        // `.*X|a` with `s` used to rescan to the end of the text for every `a`: 200,000
        // searches of up to 200,000 bytes each. One search per line now.
        let line = "a".repeat(200_000);
        let diff = added_lines_diff(&line, 1);
        let set = rule("['**']", RESCANNING_RULE);
        let file = &diff.files()[0];
        let lines = FileLines::collect(&diff, file, Lines::Added);
        let rule = set.checks().next().unwrap();
        let Some(Check::Deny(pattern)) = rule.check() else {
            panic!("deny rule expected");
        };
        let found = find_hits(pattern, &lines, MAX_FINDINGS_PER_RULE_AND_FILE, true);
        assert_eq!((found.total, found.stopped_at), (1, None));
        assert!(
            found.bytes_read <= 2 * line.len() + 2,
            "read {} bytes of a {}-byte text",
            found.bytes_read,
            line.len()
        );
        let evaluation = set.evaluate(&diff);
        assert_eq!(
            lines_of(&evaluation.findings),
            [("a.rs".into(), 1, Some(1), Some(2))]
        );
        assert!(evaluation.warnings.is_empty(), "{:?}", evaluation.warnings);
    }

    #[test]
    fn a_multi_line_pattern_that_rescans_many_lines_stops_at_its_budget_with_a_warning() {
        // 4,000 lines of `a`: each match rescans to the end (quadratic: ~16M bytes); the
        // budget (1 MiB + 32 per byte) stops it and says which lines went unchecked.
        let n_lines = 4_000;
        let diff = added_lines_diff("a", n_lines);
        let set = rule("['**']", RESCANNING_RULE);
        let file = &diff.files()[0];
        let lines = FileLines::collect(&diff, file, Lines::Added);
        let rule = set.checks().next().unwrap();
        let Some(Check::Deny(pattern)) = rule.check() else {
            panic!("deny rule expected");
        };
        let found = find_hits(pattern, &lines, MAX_FINDINGS_PER_RULE_AND_FILE, true);
        let text_bytes = 2 * n_lines - 1;
        assert!(found.bytes_read <= multi_line_budget(text_bytes));
        let stopped_at = found.stopped_at.expect("the budget stops the search");
        assert!(stopped_at > 0 && stopped_at < n_lines, "{stopped_at}");
        assert_eq!(found.total, stopped_at);

        let evaluation = set.evaluate(&diff);
        assert_eq!(evaluation.findings.len(), stopped_at);
        assert_eq!(evaluation.warnings.len(), 1, "{:?}", evaluation.warnings);
        let warning = &evaluation.warnings[0];
        assert!(
            warning.contains("Invariant r1: pattern /.*X|a/s stopped at line"),
            "{warning}"
        );
        assert!(
            warning.contains(&format!(
                "{} changed lines from there on were not checked",
                n_lines - stopped_at
            )),
            "{warning}"
        );
    }

    #[test]
    fn multi_line_search_takes_the_first_match_of_each_line() {
        let set = rule(
            "['**']",
            "    action: deny\n    deny: {regex: {pattern: 'b\\n?', flags: ''}}\n",
        );
        let evaluation = set.evaluate(&added_lines_diff("abcb", 3));
        assert_eq!(
            lines_of(&evaluation.findings),
            [
                ("a.rs".into(), 1, Some(2), Some(3)),
                ("a.rs".into(), 2, Some(2), Some(3)),
                ("a.rs".into(), 3, Some(2), Some(3)),
            ]
        );
    }
}
