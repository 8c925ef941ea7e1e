//! After the checks: dedupe, filters, allowlist, baseline, the gate verdict, then truncation.
//!
//! The gate is decided on every finding that survived the filters, before `max_findings` cuts
//! the list, so truncating the output can never hide a failure.

use std::time::Duration;

use super::baseline::Baseline;
use super::checks::canonical_rule_id;
use crate::config::ReviewConfig;
use crate::findings::{Finding, dedupe_by_fingerprint, sort_for_display};

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
    /// Findings that passed every filter (before truncation): what a baseline should record.
    pub(crate) accepted: Vec<Finding>,
}

/// `incomplete` is a reason the review did not finish (its time budget ran out): the gate
/// fails with it first, whatever the findings, because a CI gate must not pass a change it did
/// not fully review.
pub(crate) fn apply(
    findings: Vec<Finding>,
    config: &ReviewConfig,
    baseline: Option<&Baseline>,
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
    outcome.accepted = kept.clone();
    if let Some(baseline) = baseline {
        let before = kept.len();
        kept.retain(|f| !baseline.contains(&f.fingerprint));
        outcome.n_baselined = before - kept.len();
    }

    sort_for_display(&mut kept);
    let mut reasons: Vec<String> = incomplete.into_iter().collect();
    for finding in &kept {
        let at = format!("{}:{}", finding.location.file, finding.location.start_line);
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
        }
    }
    outcome.should_fail = !reasons.is_empty();
    if reasons.len() > MAX_FAIL_REASONS {
        let rest = reasons.len() - MAX_FAIL_REASONS;
        reasons.truncate(MAX_FAIL_REASONS);
        reasons.push(format!("… and {rest} more findings fail the gate"));
    }
    outcome.fail_reasons = reasons;

    if kept.len() > config.max_findings {
        outcome.n_truncated = kept.len() - config.max_findings;
        kept.truncate(config.max_findings);
    }
    outcome.findings = kept;
    outcome
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

/// Exact match, or a prefix match when the pattern ends in `*` (`semgrep/*`).
fn id_matches(pattern: &str, rule_id: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => rule_id.starts_with(prefix),
        None => pattern == rule_id,
    }
}
