//! After the checks: dedupe, filters, allowlist, baseline, the gate verdict, then truncation.
//!
//! The gate is decided on every finding that survived the filters, before `max_findings` cuts
//! the list, so truncating the output can never hide a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::baseline::Baseline;
use super::checks::canonical_rule_id;
use crate::config::{PathOverride, ReviewConfig, RuleOverride};
use crate::findings::{Finding, Severity, Source, dedupe_by_fingerprint, sort_for_display};
use crate::learnings::Learnings;

/// At most this many reasons are listed; the rest are counted.
const MAX_FAIL_REASONS: usize = 20;

#[derive(Debug, Default)]
pub(crate) struct GateOutcome {
    pub(crate) findings: Vec<Finding>,
    pub(crate) should_fail: bool,
    pub(crate) fail_reasons: Vec<String>,
    pub(crate) n_deduplicated: usize,
    pub(crate) n_filtered: usize,
    pub(crate) n_allowlisted: usize,
    pub(crate) n_baselined: usize,
    pub(crate) n_truncated: usize,
    /// Findings `max_findings` left out, per rule id.
    pub(crate) truncated_by_rule: BTreeMap<String, usize>,
    /// Findings per severity after every filter and before truncation: what the gate judged.
    pub(crate) by_severity: BTreeMap<Severity, usize>,
    /// Findings that passed every filter (before truncation): what a baseline should record.
    pub(crate) accepted: Vec<Finding>,
    /// Findings the learnings ledger set aside, in display order.
    pub(crate) dismissed: Vec<Finding>,
}

/// `incomplete` is a reason the review did not finish (its time budget ran out): the gate
/// fails with it first, whatever the findings, because a CI gate must not pass a change it did
/// not fully review.
pub(crate) fn apply(
    findings: Vec<Finding>,
    config: &ReviewConfig,
    baseline: Option<&Baseline>,
    learnings: Option<&Learnings>,
    incomplete: Option<String>,
) -> GateOutcome {
    let mut outcome = GateOutcome::default();
    let before = findings.len();
    let findings = dedupe_by_fingerprint(findings);
    outcome.n_deduplicated = before - findings.len();

    let allowlist: Vec<&str> = config
        .allowlist
        .iter()
        .map(|id| canonical_rule_id(id.trim()))
        .collect();
    let fail_on: Vec<&str> = config
        .fail_on_rule_ids
        .iter()
        .map(|id| canonical_rule_id(id.trim()))
        .collect();

    let mut kept = Vec::with_capacity(findings.len());
    for finding in findings {
        // `[rules.<id>]`, then `[[overrides]]`: a disabled rule counts as allowlisted. The
        // built-in checks applied their own already; this reaches invariants and analyzers.
        let Some(finding) = apply_rule_overrides(finding, &config.rule_overrides)
            .and_then(|finding| apply_path_overrides(finding, &config.path_overrides))
        else {
            outcome.n_allowlisted += 1;
            continue;
        };
        let below_threshold = finding.confidence < config.confidence_threshold;
        let other_category =
            !config.categories.is_empty() && !config.categories.contains(&finding.category);
        if below_threshold || other_category {
            outcome.n_filtered += 1;
        } else if allowlist.iter().any(|entry| {
            id_matches(entry, &finding.rule_id)
                || *entry == finding.id
                || *entry == finding.fingerprint
        }) {
            outcome.n_allowlisted += 1;
        } else {
            kept.push(finding);
        }
    }
    // The team's dismissals leave the gate here, after the filters and before the baseline:
    // a dismissed finding is still reported, as dismissed.
    if let Some(learnings) = learnings {
        let applied = learnings.apply(kept);
        kept = applied.kept;
        outcome.dismissed = applied.dismissed;
        sort_for_display(&mut outcome.dismissed);
    }
    outcome.accepted = kept.clone();
    if let Some(baseline) = baseline {
        let before = kept.len();
        kept.retain(|f| !baseline.contains(&f.fingerprint));
        outcome.n_baselined = before - kept.len();
    }

    sort_for_display(&mut kept);
    let mut reasons: Vec<String> = incomplete.into_iter().collect();
    for finding in &mut kept {
        let at = format!("{}:{}", finding.location.file, finding.location.start_line);
        let n_reasons = reasons.len();
        if fail_on.iter().any(|id| id_matches(id, &finding.rule_id)) {
            reasons.push(format!(
                "Rule {} is set to fail the gate: {} at {at}",
                finding.rule_id, finding.title
            ));
        } else if finding.severity >= config.fail_on_severity {
            reasons.push(format!(
                "{} {} at {at}: {} (fail_on_severity is {})",
                finding.severity, finding.rule_id, finding.title, config.fail_on_severity
            ));
        } else if config.fail_on_analyzer_errors && is_analyzer_error(finding) {
            reasons.push(format!(
                "{} {} at {at}: {} (an analyzer error on a changed line; fail_on_analyzer_errors is on)",
                finding.severity, finding.rule_id, finding.title
            ));
        }
        finding.fails_gate = reasons.len() > n_reasons;
    }
    outcome.should_fail = !reasons.is_empty();
    if reasons.len() > MAX_FAIL_REASONS {
        let rest = reasons.len() - MAX_FAIL_REASONS;
        reasons.truncate(MAX_FAIL_REASONS);
        reasons.push(format!("… and {rest} more findings fail the gate"));
    }
    outcome.fail_reasons = reasons;

    for finding in &kept {
        *outcome.by_severity.entry(finding.severity).or_default() += 1;
    }
    if kept.len() > config.max_findings {
        let (shown, left_out) = keep_every_rule(kept, config.max_findings);
        outcome.n_truncated = left_out.len();
        for finding in left_out {
            *outcome
                .truncated_by_rule
                .entry(finding.rule_id)
                .or_default() += 1;
        }
        kept = shown;
    }
    outcome.findings = kept;
    outcome
}

/// Cuts display-sorted `findings` to `max` while keeping every rule visible: the first finding
/// of each rule stays even past `max`, then the best of the rest fill what room is left.
/// `max` 0 asks for no findings at all, and gets none. Returns (kept in display order, left
/// out).
fn keep_every_rule(findings: Vec<Finding>, max: usize) -> (Vec<Finding>, Vec<Finding>) {
    if max == 0 {
        return (Vec::new(), findings);
    }
    let mut seen_rules = BTreeSet::new();
    let first_of_rule: Vec<bool> = findings
        .iter()
        .map(|finding| seen_rules.insert(finding.rule_id.clone()))
        .collect();
    let mut room = max.saturating_sub(seen_rules.len());
    let mut shown = Vec::new();
    let mut left_out = Vec::new();
    for (finding, first) in findings.into_iter().zip(first_of_rule) {
        if first {
            shown.push(finding);
        } else if room > 0 {
            room -= 1;
            shown.push(finding);
        } else {
            left_out.push(finding);
        }
    }
    (shown, left_out)
}

/// The fail reason of a review whose time budget ran out; `skipped` names the work left undone.
pub(crate) fn time_budget_reason(budget: Duration, skipped: &[String]) -> String {
    let what = if skipped.is_empty() {
        "some work was stopped".to_string()
    } else {
        format!("skipped {}", skipped.join("; "))
    };
    format!(
        "The review's time budget of {} ms ran out and {what}: the change was not fully reviewed (raise review.time_budget_ms / TOLLGATE_TIME_BUDGET_MS / --time-budget-ms)",
        budget.as_millis()
    )
}

/// `finding` as `[rules.<id>]` leaves it: `None` when its rule is disabled.
fn apply_rule_overrides(
    mut finding: Finding,
    overrides: &BTreeMap<String, RuleOverride>,
) -> Option<Finding> {
    for (id, rule) in overrides {
        if id_matches(canonical_rule_id(id.trim()), &finding.rule_id) {
            if !rule.enabled {
                return None;
            }
            if let Some(severity) = rule.severity {
                finding.severity = severity;
            }
        }
    }
    Some(finding)
}

/// `finding` as the `[[overrides]]` matching its path leave it: `None` when the last entry that
/// names its rule in `disable` or `enable` disables it; otherwise with the severity the last
/// matching entry sets for its rule, if any.
fn apply_path_overrides(mut finding: Finding, overrides: &[PathOverride]) -> Option<Finding> {
    let rule_matches = |id: &String| id_matches(canonical_rule_id(id.trim()), &finding.rule_id);
    let mut disabled = false;
    let mut severity = None;
    for entry in overrides
        .iter()
        .filter(|entry| entry.paths.is_match(&finding.location.file))
    {
        if entry.disable.iter().any(rule_matches) {
            disabled = true;
        }
        if entry.enable.iter().any(rule_matches) {
            disabled = false;
        }
        if let Some((_, set)) = entry.severity.iter().find(|(id, _)| rule_matches(id)) {
            severity = Some(*set);
        }
    }
    if disabled {
        return None;
    }
    if let Some(severity) = severity {
        finding.severity = severity;
    }
    Some(finding)
}

/// An error a static analyzer reports on a line the change added: what a reviewer blocks.
fn is_analyzer_error(finding: &Finding) -> bool {
    matches!(
        finding.source,
        Source::Tsc | Source::Semgrep | Source::Sarif
    ) && finding.severity >= Severity::High
        && finding.on_changed_line
}

/// Exact match, or a prefix match when the pattern ends in `*` (`semgrep/*`).
fn id_matches(pattern: &str, rule_id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => rule_id.starts_with(prefix),
        None => pattern == rule_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;
    use crate::findings::{Category, Location};

    fn finding(rule: &str, severity: Severity, source: Source, line: u32) -> Finding {
        let mut finding = Finding::new(
            rule,
            severity,
            Category::Correctness,
            source,
            format!("{rule} at {line}"),
            Location::line("src/a.ts", line),
        )
        .on_changed_line(true);
        finding.fingerprint = format!("{rule}:{line}");
        finding
    }

    #[test]
    fn overrides_disable_and_reseverity_rules_per_path() {
        let config = RawConfig::from_toml(
            r#"
[[overrides]]
paths = ["packages/legacy/**"]
disable = ["TG001", "semgrep/*"]

[[overrides]]
paths = ["packages/**"]
severity = { "tsc/*" = "LOW", PRE002 = "INFO" }
"#,
            "tollgate.toml",
        )
        .unwrap()
        .resolve()
        .unwrap();
        let at = |rule: &str, severity: Severity, source: Source, path: &str| {
            let mut f = finding(rule, severity, source, 1);
            f.location.file = path.to_string();
            f.fingerprint = format!("{rule}:{path}");
            f
        };
        let findings = vec![
            at(
                "TG001",
                Severity::Low,
                Source::Preflight,
                "packages/legacy/a.ts",
            ),
            at(
                "semgrep/eval",
                Severity::High,
                Source::Semgrep,
                "packages/legacy/a.ts",
            ),
            at(
                "tsc/TS2322",
                Severity::High,
                Source::Tsc,
                "packages/legacy/a.ts",
            ),
            at(
                "TG002",
                Severity::Medium,
                Source::Preflight,
                "packages/api/b.ts",
            ),
            at("TG001", Severity::Low, Source::Preflight, "src/c.ts"),
        ];
        let outcome = apply(findings, &config, None, None, None);
        assert_eq!(outcome.n_allowlisted, 2);
        let kept: Vec<(&str, &str, Severity)> = outcome
            .findings
            .iter()
            .map(|f| (f.rule_id.as_str(), f.location.file.as_str(), f.severity))
            .collect();
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert!(kept.contains(&("tsc/TS2322", "packages/legacy/a.ts", Severity::Low)));
        assert!(kept.contains(&("TG002", "packages/api/b.ts", Severity::Info)));
        assert!(kept.contains(&("TG001", "src/c.ts", Severity::Low)));
        // The type error was lowered below HIGH on that path: it no longer fails the gate.
        assert!(!outcome.should_fail, "{:?}", outcome.fail_reasons);

        let err = RawConfig::from_toml("[[overrides]]\npaths = []\n", "t")
            .unwrap()
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(err.contains("overrides[0].paths"), "{err}");
    }

    #[test]
    fn truncation_keeps_every_rule_visible_and_counts_the_rest() {
        let mut config = RawConfig::default().resolve().unwrap();
        config.max_findings = 3;
        let mut findings: Vec<Finding> = (1..=10)
            .map(|line| finding("SEC002", Severity::High, Source::Sarif, line))
            .collect();
        findings
            .extend((1..=5).map(|line| finding("REL001", Severity::Medium, Source::Sarif, line)));
        findings.push(finding("TG002", Severity::Low, Source::Preflight, 1));
        let outcome = apply(findings, &config, None, None, None);
        let rules: BTreeSet<&str> = outcome
            .findings
            .iter()
            .map(|f| f.rule_id.as_str())
            .collect();
        assert_eq!(rules, BTreeSet::from(["SEC002", "REL001", "TG002"]));
        assert_eq!(outcome.findings.len(), 3);
        assert_eq!(outcome.n_truncated, 13);
        assert_eq!(outcome.truncated_by_rule["SEC002"], 9);
        assert_eq!(outcome.truncated_by_rule["REL001"], 4);
        assert!(!outcome.truncated_by_rule.contains_key("TG002"));
        assert_eq!(
            outcome.by_severity[&Severity::High],
            10,
            "counted before the cut"
        );
    }

    #[test]
    fn an_analyzer_error_on_a_changed_line_fails_the_default_gate() {
        let config = RawConfig::default().resolve().unwrap();
        assert_eq!(config.fail_on_severity, Severity::Critical);
        let type_error = finding("tsc/TS2322", Severity::High, Source::Tsc, 3);
        let outcome = apply(vec![type_error.clone()], &config, None, None, None);
        assert!(outcome.should_fail);
        assert!(
            outcome.fail_reasons[0].contains("analyzer error"),
            "{:?}",
            outcome.fail_reasons
        );

        // Not on a changed line, a warning, a preflight notice at HIGH, or turned off: passes.
        let mut old_error = type_error.clone();
        old_error.on_changed_line = false;
        let warning = finding("semgrep/x", Severity::Medium, Source::Semgrep, 4);
        let notice = finding("TG002", Severity::High, Source::Preflight, 5);
        let outcome = apply(vec![old_error, warning, notice], &config, None, None, None);
        assert!(!outcome.should_fail, "{:?}", outcome.fail_reasons);
        let mut off = config.clone();
        off.fail_on_analyzer_errors = false;
        assert!(!apply(vec![type_error], &off, None, None, None).should_fail);
    }
}
