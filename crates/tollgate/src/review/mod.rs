//! The review pipeline: diff → preflight signals → classification and risk → built-in checks
//! (secrets included) → invariants → identities, dedupe, filters, baseline → the gate.
//!
//! [`run`] is the one call front ends make; [`review_diff`] is the same pipeline on an already
//! parsed diff with already loaded inputs (no I/O at all).

mod baseline;
mod checks;
mod classify;
mod gate;
mod gate_files;
mod language;
pub(crate) mod llm;
mod public_api;
pub(crate) mod signals;

pub use baseline::{Baseline, BaselineEntry, BaselineError, BaselineFile, write_baseline};
pub use gate_files::{GateFileError, GateFiles};

/// Whether `id` names a built-in `TG` rule (or its upstream alias).
pub(crate) fn is_builtin_rule(id: &str) -> bool {
    checks::builtin_rule(id).is_some()
}

use crate::ErrorCode;
use crate::control::Control;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::analyzers::{self, AnalysisOutcome};
use crate::config::ReviewConfig;
use crate::diff::{self, Diff, DiffSpec, FileDiff};
use crate::findings::{
    AnalyzerKind, AnalyzerStatus, Finding, LlmReviewSummary, ReviewMetadata, ReviewResult,
    ReviewStats, RuleInfo, Severity, StaticAnalysisSummary, Timings, assign_identities,
};
use crate::invariants::{self, InvariantSet};
use crate::learnings::{Learnings, Record};

/// Where the diff comes from.
#[derive(Debug, Clone)]
pub enum DiffInput {
    /// Raw unified-diff bytes (a file or stdin).
    Text(Vec<u8>),
    /// Ask git for it.
    Git(DiffSpec),
}

/// Everything a review run needs. The workspace is the repository root: invariants and
/// baseline paths resolve inside it.
#[derive(Debug)]
pub struct ReviewRequest<'a> {
    pub workspace: &'a Path,
    pub diff: DiffInput,
    pub config: &'a ReviewConfig,
    /// Review only these paths of the diff (upstream's `changed_files`).
    pub changed_files: Option<Vec<String>>,
}

/// The result plus what a caller may want to persist.
#[derive(Debug)]
pub struct ReviewOutcome {
    pub result: ReviewResult,
    /// Findings that passed the filters, baseline not applied: what `--write-baseline` records.
    pub accepted: Vec<Finding>,
}

/// Why a review could not run (as opposed to a gate failure, which is a result).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    #[error("Invalid diff: {0}")]
    Diff(#[from] diff::DiffError),
    #[error(transparent)]
    Git(#[from] diff::GitError),
    #[error(transparent)]
    Invariants(#[from] invariants::InvariantsError),
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    #[error(transparent)]
    Learnings(#[from] crate::learnings::LearningsError),
    #[error("Invalid changed_files entry `{path}`: {reason}")]
    ChangedFile { path: String, reason: String },
    #[error("The input does not look like a diff: no file sections were found in {0} bytes")]
    NotADiff(usize),
    #[error(transparent)]
    Analysis(#[from] analyzers::AnalysisError),
    #[error(
        "The model is required ([llm] required) but could not answer: {reason}\n  hint: fix the model setup, or set [llm] required = false (TOLLGATE_LLM_REQUIRED=false) to review without it"
    )]
    ModelRequired { reason: String },
    /// A nested `tollgate.toml` above a changed file is invalid or unreadable.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

impl ReviewError {
    /// Stable machine code (shared with the MCP server's error codes).
    pub fn code(&self) -> ErrorCode {
        match self {
            ReviewError::Diff(_) | ReviewError::ChangedFile { .. } | ReviewError::NotADiff(_) => {
                ErrorCode::InvalidInput
            }
            ReviewError::Git(_) => ErrorCode::ExecutionFailed,
            // FILE_NOT_FOUND and PATH_OUTSIDE_WORKSPACE say more than INVALID_INPUT would.
            ReviewError::Invariants(err) => err.code(),
            ReviewError::Baseline(_) => ErrorCode::InvalidInput,
            ReviewError::Learnings(err) => err.code(),
            ReviewError::Analysis(err) => err.code(),
            ReviewError::ModelRequired { .. } => ErrorCode::LlmUnavailable,
            ReviewError::Config(_) => ErrorCode::InvalidInput,
        }
    }
}

/// Loaded inputs of the pure pipeline.
#[derive(Debug, Default)]
pub struct ReviewInputs<'a> {
    pub invariants: Vec<(String, &'a InvariantSet)>,
    pub baseline: Option<&'a Baseline>,
    /// The team's learnings ledger with the code it judges (see [`crate::learnings`]).
    pub learnings: Option<&'a Learnings>,
    pub changed_files: Option<&'a [String]>,
    pub base_sha: Option<String>,
    pub head_sha: Option<String>,
    pub warnings: Vec<String>,
    /// Findings and summary of static analysis that already ran (see [`analyzers`]); [`run`]
    /// runs the analyzers itself, concurrently with the deterministic checks.
    pub static_analysis: Option<AnalysisOutcome>,
}

/// Runs a whole review: reads the diff, loads invariants and baseline, reviews.
pub fn run(request: ReviewRequest<'_>) -> Result<ReviewOutcome, ReviewError> {
    run_with_gate_files(request, &GateFiles::Workspace)
}

/// [`run`], with the invariants and the baseline read from `gate_files` (a pull request's base
/// commit, say) instead of the workspace's working tree.
pub fn run_with_gate_files(
    request: ReviewRequest<'_>,
    gate_files: &GateFiles,
) -> Result<ReviewOutcome, ReviewError> {
    run_until(request, gate_files, &Control::default())
}

/// [`run_with_gate_files`], stopping its slow parts once `stop` is cancelled: running analyzers
/// are killed (their status says `cancelled`) and model passes not yet started are skipped
/// (a warning says so). The deterministic checks always complete.
pub fn run_until(
    request: ReviewRequest<'_>,
    gate_files: &GateFiles,
    stop: &Control,
) -> Result<ReviewOutcome, ReviewError> {
    run_inner(request, gate_files, stop, Vec::new())
}

/// [`run_with_gate_files`] with `learned` applied on top of the ledger from `gate_files`: the
/// decisions a pull request's reviewers made on it (the Action reads them from the PR), which
/// no one has committed yet. Later records win, so these override the ledger's.
pub fn run_with_learnings(
    request: ReviewRequest<'_>,
    gate_files: &GateFiles,
    learned: Vec<Record>,
) -> Result<ReviewOutcome, ReviewError> {
    run_inner(request, gate_files, &Control::default(), learned)
}

fn run_inner(
    request: ReviewRequest<'_>,
    gate_files: &GateFiles,
    stop: &Control,
    learned: Vec<Record>,
) -> Result<ReviewOutcome, ReviewError> {
    let started = Instant::now();
    // The time budget counts from here; everything that checks `stop` below honours it.
    let budget_stop;
    let stop = match request.config.time_budget {
        Some(budget) => {
            budget_stop = stop.with_deadline(started + budget);
            &budget_stop
        }
        None => stop,
    };
    let (diff, base_sha, head_sha) = match request.diff {
        DiffInput::Text(bytes) => {
            let n_bytes = bytes.len();
            let looks_empty = bytes.iter().all(u8::is_ascii_whitespace);
            let diff = diff::parse(bytes)?;
            if diff.is_empty() && !looks_empty {
                return Err(ReviewError::NotADiff(n_bytes));
            }
            (diff, None, None)
        }
        DiffInput::Git(spec) => {
            let git = diff::diff_from_repo(request.workspace, &spec)?;
            (git.diff, git.base_sha, git.head_sha)
        }
    };
    let parse_ms = ms(started);

    if let Some(paths) = &request.changed_files {
        for path in paths {
            validate_changed_file(path)?;
        }
    }

    // The nearest `tollgate.toml` wins: nested files above the changed paths, read from the
    // same source as the other gate files (a pull request cannot loosen its own gate).
    let changed_paths = diff
        .files()
        .iter()
        .flat_map(|file| [file.old_path.as_deref(), file.new_path.as_deref()])
        .flatten();
    let nested = gate_files::load_nested_configs(gate_files, request.workspace, changed_paths)?;
    let with_nested;
    let config = if nested.is_empty() {
        request.config
    } else {
        with_nested = request.config.with_nested(&nested);
        &with_nested
    };
    let mut warnings = Vec::new();
    let mut sets = Vec::new();
    for given in &config.invariants.paths {
        match gate_files::load_invariants(gate_files, request.workspace, given) {
            Ok(set) => {
                warnings.extend(set.warnings().iter().cloned());
                sets.push((given.clone(), set));
            }
            // The default file is optional; a named one must exist.
            Err(invariants::InvariantsError::NotFound { .. }) if !config.invariants.explicit => {}
            Err(err) => return Err(err.into()),
        }
    }
    let baseline = match &config.baseline {
        Some(path) => Some(gate_files::load_baseline(
            gate_files,
            request.workspace,
            path,
            config.max_input_bytes,
        )?),
        None => None,
    };
    let learnings = gate_files::load_learnings(gate_files, request.workspace, learned)?;
    // SARIF imports are read and paths checked now, so a bad file fails the run before any
    // tool starts; the tools themselves run below, beside the deterministic checks.
    let analysis_paths: Vec<&str> = select_files(
        &diff,
        request.changed_files.as_deref(),
        config,
        &mut Vec::new(),
    )
    .into_iter()
    .filter(|file| !file.binary)
    .filter_map(|file| file.new_path.as_deref())
    .collect();
    let prepared =
        analyzers::prepare_for_review(request.workspace, analysis_paths, &config.analyzers)?;

    let inputs = ReviewInputs {
        invariants: sets.iter().map(|(p, s)| (p.clone(), s)).collect(),
        baseline: baseline.as_ref(),
        learnings: learnings.as_ref(),
        changed_files: request.changed_files.as_deref(),
        base_sha,
        head_sha,
        warnings,
        static_analysis: None,
    };
    // Built only when asked for: no provider configured becomes a warning in the result.
    let llm_client = config
        .llm
        .passes
        .enabled
        .then(|| crate::llm::LlmClient::from_config(&config.llm, request.workspace));
    let mut model_failure = None;
    let mut outcome = std::thread::scope(|scope| {
        let diff = &diff;
        let analysis = prepared.map(|prepared| scope.spawn(move || prepared.run_until(diff, stop)));
        // `PreparedAnalysis::run` catches panics of its own, so a failed join cannot happen.
        review_with(
            diff,
            &inputs,
            config,
            stop,
            || analysis.and_then(|handle| handle.join().ok()),
            |stage| {
                llm_client.as_ref().map(|client| {
                    let passes = llm::run(
                        client.as_ref(),
                        stage,
                        llm::ContextSource::Workspace(request.workspace),
                        &config.llm.passes,
                        stop,
                    );
                    model_failure = passes.failure.clone();
                    passes
                })
            },
        )
    });
    if config.llm.required
        && let Some(reason) = model_failure
    {
        return Err(ReviewError::ModelRequired { reason });
    }
    outcome.result.stats.timings_ms.parse = parse_ms;
    outcome.result.stats.duration_ms = ms(started);
    Ok(outcome)
}

/// The pipeline on a parsed diff with loaded inputs: no I/O, deterministic but for `run_id`,
/// timestamps and timings.
pub fn review_diff(diff: &Diff, inputs: &ReviewInputs<'_>, config: &ReviewConfig) -> ReviewOutcome {
    review_with(
        diff,
        inputs,
        config,
        &Control::default(),
        || inputs.static_analysis.clone(),
        |_| None,
    )
}

/// The pipeline; `static_analysis` is called once the deterministic checks are done, so that
/// analyzers started by [`run`] work while they do; `llm_passes` then gets the change as the
/// deterministic review sees it (risk, tests touched, per-file facts). Invariant evaluation
/// stops between files once `stop` is cancelled; when that was the time budget, the gate
/// fails, naming what was skipped.
fn review_with(
    diff: &Diff,
    inputs: &ReviewInputs<'_>,
    config: &ReviewConfig,
    stop: &Control,
    static_analysis: impl FnOnce() -> Option<AnalysisOutcome>,
    llm_passes: impl FnOnce(&llm::Stage<'_, '_>) -> Option<llm::PassOutcome>,
) -> ReviewOutcome {
    let started = Instant::now();
    let mut warnings = inputs.warnings.clone();
    let files = select_files(diff, inputs.changed_files, config, &mut warnings);

    let (facts, mut signals) = signals::compute(diff, &files, &config.preflight);
    let classification = classify::classify(diff, &facts);
    let (mut findings, n_checks, n_secret_lines) = checks::run(
        diff,
        &facts,
        &signals,
        &config.rule_overrides,
        (
            config.preflight.large_change_lines,
            config.preflight.large_change_files,
        ),
    );
    signals.secrets_found = n_secret_lines;
    let (risk_score, risk_factors) = classify::risk(
        &facts,
        &signals,
        config.preflight.large_change_lines,
        config.preflight.large_change_files,
    );
    let preflight_ms = ms(started);

    let started_invariants = Instant::now();
    let invariants = evaluate_invariants(diff, inputs, &files, stop, &mut findings, &mut warnings);
    let invariants_ms = ms(started_invariants);

    let static_summary = static_analysis().map(|analysis| {
        findings.extend(analysis.findings);
        warnings.extend(analysis.summary.warnings.iter().cloned());
        analysis.summary
    });

    let conventions = inputs
        .learnings
        .and_then(|learnings| crate::learnings::conventions(learnings.ledger()));
    let llm_summary = llm_passes(&llm::Stage {
        conventions: conventions.as_deref(),
        diff,
        facts: &facts,
        risk_score,
        tests_touched: signals.tests_touched,
    })
    .map(|passes| {
        findings.extend(passes.findings);
        warnings.extend(passes.warnings);
        passes.summary
    });

    let incomplete = incomplete_reason(
        config,
        stop,
        invariants.n_files_unchecked,
        static_summary.as_ref(),
        llm_summary.as_ref(),
    );
    let started_gate = Instant::now();
    let n_total = findings.len();
    assign_identities(&mut findings);
    let rules = rule_infos(&findings);
    let outcome = gate::apply(
        findings,
        config,
        inputs.baseline,
        inputs.learnings,
        incomplete,
    );
    let gate_ms = ms(started_gate);

    let (lines_added, lines_removed) = facts
        .iter()
        .fold((0, 0), |(a, r), f| (a + f.lines_added, r + f.lines_removed));
    let hotspots = signals.hotspot_files.clone();
    let stats = ReviewStats {
        files_changed: signals::n_files(&facts),
        lines_added,
        lines_removed,
        duration_ms: ms(started),
        deterministic_checks_executed: n_checks,
        invariants_executed: invariants.executed,
        static_analyzers_executed: static_summary
            .as_ref()
            .map_or(0, |s| s.analyzers_executed.len()),
        llm_passes_executed: llm_summary.as_ref().map_or(0, |s| s.passes_executed.len()),
        findings_total: n_total,
        findings_filtered: outcome.n_filtered,
        findings_allowlisted: outcome.n_allowlisted,
        findings_baselined: outcome.n_baselined,
        findings_deduplicated: outcome.n_deduplicated,
        findings_dismissed: outcome.dismissed.len(),
        findings_truncated: outcome.n_truncated,
        findings_truncated_by_rule: outcome.truncated_by_rule.clone(),
        timings_ms: Timings {
            parse: 0.0,
            preflight: preflight_ms,
            invariants: invariants_ms,
            static_analysis: static_summary.as_ref().map_or(0.0, |s| s.duration_ms),
            llm: llm_summary.as_ref().map_or(0.0, |s| s.duration_ms),
            gate: gate_ms,
        },
    };
    let invariants_path = (!inputs.invariants.is_empty()).then(|| {
        inputs
            .invariants
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    });
    let summary = summarize(
        &signals::n_files(&facts),
        (lines_added, lines_removed),
        classification.as_str(),
        risk_score,
        &outcome,
        invariants.executed,
        static_summary
            .as_ref()
            .map_or(&[][..], |s| s.analyzers_executed.as_slice()),
        llm_summary
            .as_ref()
            .map_or(&[][..], |s| s.passes_executed.as_slice()),
        config,
    );
    let result = ReviewResult {
        run_id: new_run_id(diff),
        risk_score,
        risk_factors,
        classification,
        hotspots,
        summary,
        signals,
        findings: outcome.findings,
        dismissed: outcome.dismissed,
        should_fail: outcome.should_fail,
        fail_reasons: outcome.fail_reasons,
        stats,
        metadata: ReviewMetadata {
            reviewed_at: crate::clock::now_rfc3339(),
            tool_version: crate::VERSION.to_string(),
            base_sha: inputs.base_sha.clone(),
            head_sha: inputs.head_sha.clone(),
            invariants_path,
            warnings,
            gate: gate_settings(config, inputs.baseline),
        },
        rules,
        static_analysis: static_summary,
        llm: llm_summary,
    };
    ReviewOutcome {
        result,
        accepted: outcome.accepted,
    }
}

/// What the invariant files did to a review.
struct InvariantsRun {
    executed: usize,
    /// Changed files left unchecked because the review was stopped.
    n_files_unchecked: usize,
}

/// Evaluates every invariant file on the diff until `stop`, adding their findings on the
/// selected files and their warnings.
fn evaluate_invariants(
    diff: &Diff,
    inputs: &ReviewInputs<'_>,
    files: &[&FileDiff],
    stop: &Control,
    findings: &mut Vec<Finding>,
    warnings: &mut Vec<String>,
) -> InvariantsRun {
    let mut run = InvariantsRun {
        executed: 0,
        n_files_unchecked: 0,
    };
    let all_files = files.len() == diff.files().len();
    for (path, set) in &inputs.invariants {
        let evaluation = set.evaluate_until(diff, stop);
        run.executed += evaluation.executed;
        warnings.extend(evaluation.warnings);
        if evaluation.n_files_unchecked > 0 {
            run.n_files_unchecked += evaluation.n_files_unchecked;
            warnings.push(format!(
                "invariants {path}: stopped early; {} changed file(s) were not checked",
                evaluation.n_files_unchecked
            ));
        }
        findings.extend(
            evaluation
                .findings
                .into_iter()
                .filter(|f| all_files || files.iter().any(|kept| kept.path() == f.location.file)),
        );
    }
    run
}

/// Why the gate must fail for an incomplete review: the time budget ran out, and what it cut.
fn incomplete_reason(
    config: &ReviewConfig,
    stop: &Control,
    n_files_unchecked: usize,
    static_summary: Option<&StaticAnalysisSummary>,
    llm_summary: Option<&LlmReviewSummary>,
) -> Option<String> {
    let budget = config.time_budget.filter(|_| stop.deadline_hit())?;
    let mut skipped = Vec::new();
    if n_files_unchecked > 0 {
        skipped.push(format!("invariants on {n_files_unchecked} file(s)"));
    }
    let cancelled: Vec<&str> = static_summary
        .iter()
        .flat_map(|summary| &summary.results)
        .filter(|report| report.status == AnalyzerStatus::Cancelled)
        .map(|report| report.analyzer.as_str())
        .collect();
    if !cancelled.is_empty() {
        skipped.push(format!("analyzers {}", cancelled.join(", ")));
    }
    if llm_summary.is_some_and(|summary| summary.skipped_reason.as_deref() == Some(llm::CANCELLED))
    {
        skipped.push("model passes".to_string());
    }
    Some(gate::time_budget_reason(budget, &skipped))
}

/// The gate's settings as the report's metadata shows them.
fn gate_settings(
    config: &ReviewConfig,
    baseline: Option<&Baseline>,
) -> BTreeMap<String, serde_json::Value> {
    use serde_json::json;
    [
        ("fail_on_severity", json!(config.fail_on_severity)),
        ("fail_on_rule_ids", json!(config.fail_on_rule_ids)),
        ("confidence_threshold", json!(config.confidence_threshold)),
        (
            "fail_on_analyzer_errors",
            json!(config.fail_on_analyzer_errors),
        ),
        ("max_findings", json!(config.max_findings)),
        ("categories", json!(config.categories)),
        ("allowlist_entries", json!(config.allowlist.len())),
        ("baseline_entries", json!(baseline.map_or(0, Baseline::len))),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect()
}

/// The built-in rules' descriptions (for `tollgate rules` and docs).
pub fn builtin_rules() -> Vec<RuleInfo> {
    checks::BUILTIN_RULES
        .iter()
        .map(checks::rule_info)
        .collect()
}

fn select_files<'d>(
    diff: &'d Diff,
    changed_files: Option<&[String]>,
    config: &ReviewConfig,
    warnings: &mut Vec<String>,
) -> Vec<&'d FileDiff> {
    let mut n_ignored = 0;
    let files: Vec<&FileDiff> = diff
        .files()
        .iter()
        .filter(|f| match changed_files {
            Some(list) => list.iter().any(|p| {
                let p = p.trim_start_matches("./");
                f.new_path.as_deref() == Some(p) || f.old_path.as_deref() == Some(p)
            }),
            None => true,
        })
        .filter(|f| {
            let ignored = config.preflight.ignore_paths.is_match(f.path());
            n_ignored += usize::from(ignored);
            !ignored
        })
        .collect();
    if n_ignored > 0 {
        warnings.push(format!(
            "{n_ignored} file(s) skipped by the ignore globs ([preflight] ignore)"
        ));
    }
    if let Some(list) = changed_files {
        let missing =
            list.iter()
                .filter(|p| {
                    let p = p.trim_start_matches("./");
                    !diff.files().iter().any(|f| {
                        f.new_path.as_deref() == Some(p) || f.old_path.as_deref() == Some(p)
                    })
                })
                .count();
        if missing > 0 {
            warnings.push(format!(
                "{missing} changed_files entr(y/ies) are not in the diff and were ignored"
            ));
        }
    }
    files
}

fn rule_infos(findings: &[Finding]) -> Vec<RuleInfo> {
    let mut infos: BTreeMap<&str, RuleInfo> = BTreeMap::new();
    for finding in findings {
        if infos.contains_key(finding.rule_id.as_str()) {
            continue;
        }
        let info = match checks::builtin_rule(&finding.rule_id) {
            Some(rule) => checks::rule_info(rule),
            // Invariants and external tools: describe the rule from its first finding.
            None => RuleInfo {
                id: finding.rule_id.clone(),
                name: finding.rule_id.clone(),
                short_description: finding.title.clone(),
                full_description: if finding.message.is_empty() {
                    finding.title.clone()
                } else {
                    finding.message.clone()
                },
                help: if finding.recommendation.is_empty() {
                    format!("See rule `{}`.", finding.rule_id)
                } else {
                    finding.recommendation.clone()
                },
                default_severity: finding.severity,
                category: finding.category,
                help_uri: None,
            },
        };
        infos.insert(&finding.rule_id, info);
    }
    infos.into_values().collect()
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site; each argument is one clause of the sentence"
)]
fn summarize(
    n_files: &usize,
    (added, removed): (usize, usize),
    classification: &str,
    risk: u8,
    outcome: &gate::GateOutcome,
    n_invariants: usize,
    analyzers_executed: &[AnalyzerKind],
    llm_passes: &[String],
    config: &ReviewConfig,
) -> String {
    let total = outcome.findings.len() + outcome.n_truncated;
    // Counted before truncation, like `total`: the two always agree.
    let by_severity: Vec<String> = Severity::ALL
        .into_iter()
        .filter_map(|severity| {
            let n = outcome.by_severity.get(&severity).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {severity}"))
        })
        .collect();
    let findings = if total == 0 {
        "no findings".to_string()
    } else {
        format!("{total} finding(s) ({})", by_severity.join(", "))
    };
    let invariants = if n_invariants > 0 {
        format!(", {n_invariants} invariant checks")
    } else {
        String::new()
    };
    let analyzers = if analyzers_executed.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = analyzers_executed.iter().map(|k| k.as_str()).collect();
        format!(", static analysis ({})", names.join(", "))
    };
    let verdict = if outcome.should_fail {
        format!("Gate FAILED ({} reason(s))", outcome.fail_reasons.len())
    } else {
        "Gate passed".to_string()
    };
    let mut threshold = format!("fails on {} or worse", config.fail_on_severity);
    if config.fail_on_analyzer_errors {
        threshold.push_str(" and on analyzer errors on changed lines");
    }
    if !config.fail_on_rule_ids.is_empty() {
        threshold.push_str(&format!(
            " and on rules {}",
            config.fail_on_rule_ids.join(", ")
        ));
    }
    let set_aside: Vec<String> = [
        (
            outcome.dismissed.len(),
            "dismissed (.review-learnings.jsonl)",
        ),
        (outcome.n_baselined, "baselined"),
        (outcome.n_allowlisted, "allowlisted"),
        (outcome.n_filtered, "filtered"),
        (outcome.n_truncated, "not listed (max_findings)"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let verdict = if set_aside.is_empty() {
        format!("{verdict} (the gate {threshold})")
    } else {
        format!("{verdict} (the gate {threshold}; {})", set_aside.join(", "))
    };
    let model = if llm_passes.is_empty() {
        String::new()
    } else {
        format!(", model review ({} pass)", llm_passes.join(" and "))
    };
    format!(
        "{classification} change, {n_files} file(s) (+{added}/-{removed}), risk {risk}/5: {findings} from deterministic checks{invariants}{analyzers}{model}. {verdict}."
    )
}

/// A `changed_files` entry: the rules of [`crate::workspace::changed_file`].
pub(crate) fn validate_changed_file(path: &str) -> Result<(), ReviewError> {
    crate::workspace::changed_file(path)
        .map(drop)
        .map_err(|err| ReviewError::ChangedFile {
            path: path.escape_debug().to_string(),
            reason: err.reason(),
        })
}

fn resolve_in_workspace(workspace: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    }
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0
}

/// `tg-<unix ms>-<8 hex of the diff hash>`: sortable, and two runs on the same diff at the same
/// millisecond are the same run.
fn new_run_id(diff: &Diff) -> String {
    use sha2::{Digest, Sha256};
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    // The head of the diff and its length identify it well enough; hashing 100 MB would not.
    let bytes = diff.as_bytes();
    let mut hasher = Sha256::new();
    hasher.update(&bytes[..bytes.len().min(64 * 1024)]);
    hasher.update(bytes.len().to_le_bytes());
    let digest = hasher.finalize();
    format!(
        "tg-{millis}-{:02x}{:02x}{:02x}{:02x}",
        digest[0], digest[1], digest[2], digest[3]
    )
}

#[cfg(test)]
mod tests;
