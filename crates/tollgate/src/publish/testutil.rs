//! Test helpers for the publish plan: findings at given lines and diffs from patch text.

use crate::diff::{ChangedLines, parse};
use crate::findings::{Category, Finding, Location, ReviewResult, ReviewStats, Severity, Source};

/// A HIGH finding of `rule` at `path:line` with fingerprint `fp-<rule>-<line>`.
pub(crate) fn finding(rule: &str, path: &str, line: u32) -> Finding {
    let mut finding = Finding::new(
        rule,
        Severity::High,
        Category::Correctness,
        Source::Preflight,
        format!("{rule} title"),
        Location::line(path, line),
    )
    .with_message(format!("{rule} message"));
    finding.fingerprint = format!("fp-{rule}-{line}");
    finding.id = format!("{rule}@{line}");
    finding
}

/// A failing result holding `findings` (the report tests' sample with its findings replaced).
pub(crate) fn result_with(findings: Vec<Finding>) -> ReviewResult {
    let mut result = crate::report::testutil::sample_result();
    result.findings = findings;
    result.summary = "A change.".into();
    result.should_fail = true;
    result.fail_reasons = vec!["HIGH R1: R1 title".into()];
    result.stats = ReviewStats::default();
    result.metadata.warnings.clear();
    result.rules.clear();
    result
}

/// The changed lines of a unified diff.
pub(crate) fn changed(diff: &str) -> ChangedLines {
    ChangedLines::new(&parse(diff.as_bytes().to_vec()).expect("test diff parses"))
}
