//! The review operations as requests: plain, serialisable inputs with upstream's field names and
//! defaults, validated once, for front ends that receive JSON (the MCP server today; the Action
//! and scripted callers later).
//!
//! - [`review_diff_request`] runs `review_diff`: a [`ReviewDiffRequest`] (diff text, optional
//!   `changed_files`, commit ids, [`ReviewDiffOptions`]) on top of the workspace's configuration
//!   layers, and returns the [`ReviewResult`] plus SARIF and Markdown renderings when asked.
//! - [`check_invariants`] runs `check_invariants`: one invariants file against a diff.
//!
//! Static analysis follows upstream's switch: `enable_static_analysis: true` runs
//! `static_analyzers` (else the configured ones, else tsc), `false` turns configured ones off,
//! and absent leaves `tollgate.toml` in charge. Model passes follow `enable_llm` the same way;
//! without a configured provider they are reported in `metadata.warnings` and the review runs
//! its deterministic checks, as it does when options had no effect (tuning for passes or
//! analyzers that did not run): a caller is never left believing a pass ran.

use crate::ErrorCode;
use crate::control::Control;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{
    ConfigError, DEFAULT_INVARIANTS_PATH, RawAnalyzers, RawConfig, RawLlm, RawReview,
};
use crate::diff;
use crate::findings::{AnalyzerKind, Category, Finding, ReviewResult, Severity, assign_identities};
use crate::invariants::{self, InvariantsError};
use crate::report::{self, Format, ReportConfig};
use crate::review::{DiffInput, GateFiles, ReviewError, ReviewRequest, validate_changed_file};

mod changes;

pub use changes::{
    AutoOutput, AutoTool, ChangesMetadata, ChangesReview, ChangesSummary, CodeLocation,
    Correctness, FileContexts, GitInfo, LineRange, MAX_FILE_CONTEXT_BYTES, MAX_PATTERNS,
    MAX_REF_CHARS, ReviewAutoRequest, ReviewAutoResponse, ReviewCategory, ReviewChangesOptions,
    ReviewChangesRequest, ReviewFinding, ReviewGitDiffRequest, ReviewGitDiffResponse, StringList,
    Suggestion, review_auto, review_changes, review_git_diff,
};

/// The most `changed_files` entries a request may carry.
pub const MAX_CHANGED_FILES: usize = 10_000;
/// The largest `max_findings` a request may ask for.
pub const MAX_FINDINGS_LIMIT: usize = 10_000;
/// The longest path (in characters) accepted for `invariants_path` and `changed_files` entries.
pub const MAX_PATH_CHARS: usize = 4096;
/// The longest `custom_instructions` accepted, in characters.
pub const MAX_INSTRUCTIONS_CHARS: usize = 20_000;

/// Input of `review_diff`: a unified diff and how to judge it. Field names and defaults are
/// upstream's, so prompts and scripts written for it keep working.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewDiffRequest {
    /// The unified diff to review: `git diff` output or a plain patch (required, not blank).
    pub diff: String,
    /// Review only these paths of the diff (relative to the repository root; no `..`, no
    /// absolute paths). Empty or absent: every file in the diff.
    #[serde(default)]
    #[schemars(length(max = MAX_CHANGED_FILES))]
    pub changed_files: Vec<String>,
    /// The base commit the diff starts from (4–64 hex digits); recorded in the result's
    /// metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 4, max = 64), regex(pattern = r"^[0-9a-fA-F]+$"))]
    pub base_sha: Option<String>,
    /// The head commit the diff ends at (4–64 hex digits); recorded in the result's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 4, max = 64), regex(pattern = r"^[0-9a-fA-F]+$"))]
    pub head_sha: Option<String>,
    /// How to filter findings and decide the gate. Every option is optional; an option left
    /// out takes the workspace's `tollgate.toml` / environment value, else upstream's default.
    #[serde(default)]
    pub options: ReviewDiffOptions,
}

/// `review_diff` options (upstream's names). Unknown names are refused, so a typo never
/// silently falls back to a default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewDiffOptions {
    /// Drop findings below this confidence. Default 0.55.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_threshold: Option<f64>,
    /// Findings listed in the result, after the gate is decided (truncation never hides a
    /// failure). Default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = MAX_FINDINGS_LIMIT))]
    pub max_findings: Option<usize>,
    /// Keep only findings of these categories. Default: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<Category>>,
    /// Invariants file, relative to the workspace root; it must exist. Default: the workspace's
    /// `.review-invariants.yml` when it exists (skipped when it does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    pub invariants_path: Option<String>,
    /// Run local static analyzers on the changed files; their findings on changed lines join
    /// the review. `false` turns off analyzers that tollgate.toml enables. Default: as
    /// configured (off unless tollgate.toml enables some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_static_analysis: Option<bool>,
    /// Analyzers to run (`tsc`, `semgrep`). Default: the configured ones, else `["tsc"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_analyzers: Option<Vec<AnalyzerKind>>,
    /// Time limit per analyzer in milliseconds; all share this times their number. Default
    /// 60000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub static_analysis_timeout_ms: Option<u64>,
    /// Findings kept per analyzer, worst first. Default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_FINDINGS_LIMIT))]
    pub static_analysis_max_findings_per_analyzer: Option<usize>,
    /// Extra semgrep arguments, placed before `--` (options that write files are refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub semgrep_args: Option<Vec<String>>,
    /// Run model review passes (needs a provider in `[llm]` / `TOLLGATE_LLM_*`; without one,
    /// a warning in `metadata.warnings` and the deterministic review only). Default: as
    /// configured (`[llm] enable_llm`), else false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_llm: Option<bool>,
    /// Run model passes even on low-risk changes with tests touched. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_force: Option<bool>,
    /// Run the detailed second model pass when the risk reaches `risk_threshold` or the first
    /// pass found something high or critical. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub two_pass: Option<bool>,
    /// Risk score (1–5) from which the detailed pass runs. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 5))]
    pub risk_threshold: Option<u8>,
    /// Tokens per model request (1000–50000): the diff is split to fit, highest-risk files
    /// first; files that do not fit are listed in `llm.files_omitted`. Default 8000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1000, max = 50_000))]
    pub token_budget: Option<u32>,
    /// Files whose surrounding code (±16 lines around changes) is sent (1–20). Default 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 20))]
    pub max_context_files: Option<u32>,
    /// Extra instructions for the model reviewer (secrets scrubbed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_INSTRUCTIONS_CHARS))]
    pub custom_instructions: Option<String>,
    /// Time limit per model call in milliseconds. Default: `[llm] timeout_ms` (120000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub llm_timeout_ms: Option<u64>,
    /// The gate fails on any finding at or above this severity. Default CRITICAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on_severity: Option<Severity>,
    /// The gate fails on any finding of these rules (invariant ids, `TG…` rule ids; `prefix*`
    /// allowed), whatever their severity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on_invariant_ids: Option<Vec<String>>,
    /// Drop findings by rule id, finding id or fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowlist_finding_ids: Option<Vec<String>>,
    /// Add the SARIF 2.1.0 report as the string `sarif`. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_sarif: Option<bool>,
    /// Add the Markdown report (a PR comment) as the string `markdown`. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_markdown: Option<bool>,
}

/// Output of `review_diff`: the review result, plus the reports the options asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewDiffResponse {
    #[serde(flatten)]
    pub result: ReviewResult,
    /// SARIF 2.1.0 (JSON text), when `options.include_sarif` was true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sarif: Option<String>,
    /// The Markdown report, when `options.include_markdown` was true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

/// Input of `check_invariants`: one invariants file against a diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInvariantsRequest {
    /// The unified diff to check (required, not blank).
    pub diff: String,
    /// Check only these paths of the diff (relative to the repository root). Empty or absent:
    /// every file.
    #[serde(default)]
    #[schemars(length(max = MAX_CHANGED_FILES))]
    pub changed_files: Vec<String>,
    /// The invariants file, relative to the workspace root (it must stay inside it).
    #[serde(default = "default_invariants_path")]
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    pub invariants_path: String,
}

/// Output of `check_invariants` (upstream's shape). A file that is missing or invalid is a
/// result with `success: false`, `error` and `error_code`; a bad request is an error instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckInvariantsResult {
    /// Whether the invariants file loaded and was evaluated (findings do not make it false).
    pub success: bool,
    /// The invariants file, as given.
    pub invariants_path: String,
    /// Rule × file pairs evaluated.
    pub checked_invariants: usize,
    /// Non-fatal problems: rules without an action, files skipped, and so on.
    pub warnings: Vec<String>,
    /// Violations, in file, rule and line order, each anchored at its exact line.
    pub findings: Vec<Finding>,
    /// Why the file could not be used, when `success` is false (every problem, with line
    /// and column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The stable code of `error`: `FILE_NOT_FOUND`, `INVALID_INPUT` or `IO_ERROR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// Why a request could not be carried out (a failing gate is a result, not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A field of the request is out of bounds or malformed.
    #[error("Invalid `{field}`: {message}")]
    Invalid { field: String, message: String },
    /// The workspace's `tollgate.toml` or the environment holds a bad value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Review(#[from] ReviewError),
    /// The invariants path was refused (it leaves the workspace, or is not a file).
    #[error(transparent)]
    Invariants(#[from] InvariantsError),
    /// The operation needs a model and none is usable (`LLM_NOT_CONFIGURED`).
    #[error("This review needs a model: {0}")]
    ModelRequired(#[source] crate::llm::LlmError),
}

impl RequestError {
    /// Stable machine code (`INVALID_INPUT`, `FILE_NOT_FOUND`, `PATH_OUTSIDE_WORKSPACE`, …).
    pub fn code(&self) -> ErrorCode {
        match self {
            RequestError::Invalid { .. } | RequestError::Config(_) => ErrorCode::InvalidInput,
            RequestError::Review(err) => err.code(),
            RequestError::Invariants(err) => err.code(),
            RequestError::ModelRequired(err) => err.code(),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&str> {
        match self {
            RequestError::Invalid { field, .. } => Some(field),
            RequestError::Review(ReviewError::ChangedFile { .. }) => Some("changed_files"),
            RequestError::Review(ReviewError::Diff(_) | ReviewError::NotADiff(_)) => Some("diff"),
            RequestError::Invariants(InvariantsError::Refused { .. }) => Some("invariants_path"),
            _ => None,
        }
    }

    pub(super) fn invalid(field: &str, message: impl Into<String>) -> RequestError {
        RequestError::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Runs `review_diff`. `settings` holds the configuration layers under the request (the
/// workspace's `tollgate.toml`, then the environment); the request's options go on top.
pub fn review_diff_request(
    workspace: &Path,
    settings: RawConfig,
    request: &ReviewDiffRequest,
) -> Result<ReviewDiffResponse, RequestError> {
    review_diff_request_until(workspace, settings, request, &Control::default())
}

/// [`review_diff_request`] that stops its slow parts when `stop` is cancelled: running
/// analyzers are killed (status `cancelled`) and model passes not yet started are skipped.
pub fn review_diff_request_until(
    workspace: &Path,
    settings: RawConfig,
    request: &ReviewDiffRequest,
    stop: &Control,
) -> Result<ReviewDiffResponse, RequestError> {
    require_diff(&request.diff)?;
    let changed_files = changed_files(&request.changed_files)?;
    let base_sha = commit_id("base_sha", request.base_sha.as_deref())?;
    let head_sha = commit_id("head_sha", request.head_sha.as_deref())?;
    let options = &request.options;
    let layer = options.config_layer(&settings.analyzers)?;
    let config = settings.overlay(layer).resolve()?;

    let mut outcome = crate::review::run_until(
        ReviewRequest {
            workspace,
            diff: DiffInput::Text(request.diff.as_bytes().to_vec()),
            config: &config,
            changed_files,
        },
        &GateFiles::Workspace,
        stop,
    )?;
    let result = &mut outcome.result;
    if result.metadata.base_sha.is_none() {
        result.metadata.base_sha = base_sha;
    }
    if result.metadata.head_sha.is_none() {
        result.metadata.head_sha = head_sha;
    }
    let llm_ran = result
        .llm
        .as_ref()
        .is_some_and(|llm| !llm.passes_executed.is_empty());
    let mut warnings = options.unavailable_warnings(!config.analyzers.enabled.is_empty(), llm_ran);
    // The pipeline names the setting; here it came in as an option.
    warnings.extend(result.metadata.warnings.drain(..).map(|warning| {
        if warning.starts_with("enable_llm:") {
            format!("options.{warning}")
        } else {
            warning
        }
    }));
    result.metadata.warnings = warnings;

    let report_config = ReportConfig::new(Some(workspace.to_path_buf()), None);
    let render = |format: Format| -> Result<String, RequestError> {
        let mut bytes = Vec::new();
        report::render(format, &outcome.result, &report_config, &mut bytes).map_err(|err| {
            RequestError::invalid(
                &format!("options.include_{format}"),
                format!("the report could not be rendered: {err}"),
            )
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let sarif = match options.include_sarif {
        Some(true) => Some(render(Format::Sarif)?),
        _ => None,
    };
    let markdown = match options.include_markdown {
        Some(true) => Some(render(Format::Markdown)?),
        _ => None,
    };
    Ok(ReviewDiffResponse {
        result: outcome.result,
        sarif,
        markdown,
    })
}

/// Runs `check_invariants`: loads the invariants file from the workspace (paths that leave it
/// are refused) and evaluates it against the diff.
pub fn check_invariants(
    workspace: &Path,
    request: &CheckInvariantsRequest,
) -> Result<CheckInvariantsResult, RequestError> {
    require_diff(&request.diff)?;
    let changed_files = changed_files(&request.changed_files)?;
    let path = request.invariants_path.as_str();
    if path.chars().count() > MAX_PATH_CHARS {
        return Err(RequestError::invalid(
            "invariants_path",
            format!("longer than {MAX_PATH_CHARS} characters"),
        ));
    }
    let diff = parse_diff(&request.diff)?;

    let set = match invariants::load_from_workspace(workspace, path) {
        Ok(set) => set,
        // A path that leaves the workspace is the caller's mistake, not a finding about the file.
        Err(err @ InvariantsError::Refused { .. }) => return Err(err.into()),
        Err(err) => {
            return Ok(CheckInvariantsResult {
                success: false,
                invariants_path: path.to_string(),
                checked_invariants: 0,
                warnings: Vec::new(),
                findings: Vec::new(),
                error_code: Some(err.code().to_string()),
                error: Some(err.to_string()),
            });
        }
    };
    let mut warnings = set.warnings().to_vec();
    let evaluation = set.evaluate(&diff);
    warnings.extend(evaluation.warnings);
    let mut findings: Vec<Finding> = match &changed_files {
        Some(selected) => evaluation
            .findings
            .into_iter()
            .filter(|finding| {
                selected
                    .iter()
                    .any(|path| path.trim_start_matches("./") == finding.location.file)
            })
            .collect(),
        None => evaluation.findings,
    };
    assign_identities(&mut findings);
    Ok(CheckInvariantsResult {
        success: true,
        invariants_path: path.to_string(),
        checked_invariants: evaluation.executed,
        warnings,
        findings,
        error: None,
        error_code: None,
    })
}

impl ReviewDiffOptions {
    /// The options as a configuration layer, each value checked against its bounds first so
    /// that a message names the option as the caller wrote it.
    /// `below` is the analyzer configuration under the options, which `enable_static_analysis`
    /// without `static_analyzers` falls back to.
    fn config_layer(&self, below: &RawAnalyzers) -> Result<RawConfig, RequestError> {
        if let Some(threshold) = self.confidence_threshold
            && !(0.0..=1.0).contains(&threshold)
        {
            return Err(RequestError::invalid(
                "options.confidence_threshold",
                format!("{threshold} is outside 0.0–1.0"),
            ));
        }
        check_max(
            "options.max_findings",
            self.max_findings,
            MAX_FINDINGS_LIMIT,
        )?;
        check_range(
            "options.static_analysis_timeout_ms",
            self.static_analysis_timeout_ms,
            1,
            3_600_000,
        )?;
        check_range(
            "options.static_analysis_max_findings_per_analyzer",
            self.static_analysis_max_findings_per_analyzer,
            1,
            MAX_FINDINGS_LIMIT,
        )?;
        check_max(
            "options.semgrep_args",
            self.semgrep_args.as_ref().map(Vec::len),
            64,
        )?;
        check_range("options.risk_threshold", self.risk_threshold, 1, 5)?;
        check_range("options.token_budget", self.token_budget, 1000, 50_000)?;
        check_range("options.max_context_files", self.max_context_files, 1, 20)?;
        check_range("options.llm_timeout_ms", self.llm_timeout_ms, 1, 3_600_000)?;
        check_max(
            "options.custom_instructions",
            self.custom_instructions
                .as_ref()
                .map(|text| text.chars().count()),
            MAX_INSTRUCTIONS_CHARS,
        )?;
        let invariants = match &self.invariants_path {
            Some(path) if path.trim().is_empty() => {
                return Err(RequestError::invalid(
                    "options.invariants_path",
                    "the path is empty; leave the option out to use the default",
                ));
            }
            Some(path) if path.chars().count() > MAX_PATH_CHARS => {
                return Err(RequestError::invalid(
                    "options.invariants_path",
                    format!("longer than {MAX_PATH_CHARS} characters"),
                ));
            }
            Some(path) => Some(vec![path.clone()]),
            None => None,
        };
        let strings = |ids: &Option<Vec<String>>| {
            ids.as_ref().map(|ids| {
                ids.iter()
                    .map(|id| id.trim().to_string())
                    .filter(|id| !id.is_empty())
                    .collect::<Vec<_>>()
            })
        };
        let names = |kinds: &[AnalyzerKind]| -> Vec<String> {
            kinds.iter().map(|kind| kind.as_str().to_string()).collect()
        };
        let configured = below
            .static_analyzers
            .as_ref()
            .filter(|list| !list.is_empty());
        let static_analyzers = match (self.enable_static_analysis, &self.static_analyzers) {
            (Some(false), _) => Some(Vec::new()),
            (Some(true), Some(kinds)) => Some(names(kinds)),
            (Some(true), None) => Some(
                configured
                    .cloned()
                    .unwrap_or_else(|| names(&[AnalyzerKind::Tsc])),
            ),
            // Upstream's switch is `enable_static_analysis`; without it the list only picks
            // among analyzers the configuration already runs.
            (None, Some(kinds)) if configured.is_some() => Some(names(kinds)),
            (None, _) => None,
        };
        Ok(RawConfig {
            analyzers: RawAnalyzers {
                static_analyzers,
                static_analysis_timeout_ms: self.static_analysis_timeout_ms,
                static_analysis_max_findings_per_analyzer: self
                    .static_analysis_max_findings_per_analyzer,
                semgrep_args: self.semgrep_args.clone(),
                ..RawAnalyzers::default()
            },
            review: RawReview {
                confidence_threshold: self.confidence_threshold,
                max_findings: self.max_findings,
                categories: self.categories.as_ref().map(|categories| {
                    categories
                        .iter()
                        .map(|category| category.as_str().to_string())
                        .collect()
                }),
                fail_on_severity: self
                    .fail_on_severity
                    .map(|severity| severity.as_str().to_string()),
                fail_on_rule_ids: strings(&self.fail_on_invariant_ids),
                allowlist: strings(&self.allowlist_finding_ids),
                invariants,
                ..RawReview::default()
            },
            llm: RawLlm {
                enable_llm: self.enable_llm,
                llm_force: self.llm_force,
                two_pass: self.two_pass,
                risk_threshold: self.risk_threshold,
                token_budget: self.token_budget,
                max_context_files: self.max_context_files,
                custom_instructions: self.custom_instructions.clone(),
                timeout_ms: self.llm_timeout_ms,
                ..RawLlm::default()
            },
            ..RawConfig::default()
        })
    }

    /// One warning per group of options that had no effect: model tuning when no model pass
    /// was asked for, and analyzer options when no analyzer ran. (Asking for model passes with
    /// no provider configured is reported by the review itself.)
    fn unavailable_warnings(&self, analyzers_ran: bool, llm_ran: bool) -> Vec<String> {
        let mut warnings = Vec::new();
        let llm_tuning = given(&[
            ("llm_force", self.llm_force.is_some()),
            ("two_pass", self.two_pass.is_some()),
            ("risk_threshold", self.risk_threshold.is_some()),
            ("token_budget", self.token_budget.is_some()),
            ("max_context_files", self.max_context_files.is_some()),
            ("custom_instructions", self.custom_instructions.is_some()),
            ("llm_timeout_ms", self.llm_timeout_ms.is_some()),
        ]);
        if !llm_ran && !llm_tuning.is_empty() {
            warnings.push(format!(
                "{}: these tune model review passes, which did not run (set options.enable_llm to true); ignored",
                llm_tuning.join(", ")
            ));
        }
        let analysis_tuning = given(&[
            ("static_analyzers", self.static_analyzers.is_some()),
            (
                "static_analysis_timeout_ms",
                self.static_analysis_timeout_ms.is_some(),
            ),
            (
                "static_analysis_max_findings_per_analyzer",
                self.static_analysis_max_findings_per_analyzer.is_some(),
            ),
            ("semgrep_args", self.semgrep_args.is_some()),
        ]);
        if !analyzers_ran && !analysis_tuning.is_empty() {
            warnings.push(format!(
                "{}: no static analyzer ran (set options.enable_static_analysis to true); ignored",
                analysis_tuning.join(", ")
            ));
        }
        warnings
    }
}

/// The `options.`-qualified names of the options that were given.
fn given(options: &[(&str, bool)]) -> Vec<String> {
    options
        .iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| format!("options.{name}"))
        .collect()
}

fn check_range<T>(field: &str, value: Option<T>, min: T, max: T) -> Result<(), RequestError>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    match value {
        Some(value) if value < min || value > max => Err(RequestError::invalid(
            field,
            format!("{value} is outside {min}–{max}"),
        )),
        _ => Ok(()),
    }
}

fn check_max(field: &str, value: Option<usize>, max: usize) -> Result<(), RequestError> {
    match value {
        Some(value) if value > max => Err(RequestError::invalid(
            field,
            format!("{value} is more than the limit of {max}"),
        )),
        _ => Ok(()),
    }
}

fn default_invariants_path() -> String {
    DEFAULT_INVARIANTS_PATH.to_string()
}

pub(super) fn require_diff(diff: &str) -> Result<(), RequestError> {
    if diff.trim().is_empty() {
        return Err(RequestError::invalid(
            "diff",
            "the diff is empty; pass unified diff text such as the output of `git diff`",
        ));
    }
    Ok(())
}

/// Parses the diff text, refusing text in which no file section was found.
pub(super) fn parse_diff(text: &str) -> Result<diff::Diff, RequestError> {
    let diff = diff::parse(text.as_bytes().to_vec()).map_err(ReviewError::from)?;
    if diff.is_empty() {
        return Err(ReviewError::NotADiff(text.len()).into());
    }
    Ok(diff)
}

/// Validated `changed_files`; `None` when the list is empty (every file).
fn changed_files(paths: &[String]) -> Result<Option<Vec<String>>, RequestError> {
    if paths.len() > MAX_CHANGED_FILES {
        return Err(RequestError::invalid(
            "changed_files",
            format!("{} entries; the limit is {MAX_CHANGED_FILES}", paths.len()),
        ));
    }
    for path in paths {
        if path.chars().count() > MAX_PATH_CHARS {
            return Err(RequestError::invalid(
                "changed_files",
                format!("an entry is longer than {MAX_PATH_CHARS} characters"),
            ));
        }
        validate_changed_file(path)?;
    }
    Ok((!paths.is_empty()).then(|| paths.to_vec()))
}

/// A commit id as given, when it is 4–64 hex digits.
fn commit_id(field: &str, value: Option<&str>) -> Result<Option<String>, RequestError> {
    let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    if !(4..=64).contains(&value.len()) || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RequestError::invalid(
            field,
            format!(
                "`{}` is not a commit id (4–64 hex digits)",
                value.escape_debug()
            ),
        ));
    }
    Ok(Some(value.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/app.js b/src/app.js
new file mode 100644
--- /dev/null
+++ b/src/app.js
@@ -0,0 +1,2 @@
+const a = 1;
+const b = eval(input);
";

    const INVARIANTS: &str = r#"security:
  - id: no-eval
    rule: Never call eval() in application code
    paths: ["src/**/*.js"]
    severity: HIGH
    category: security
    action: deny
    deny: { regex: { pattern: "\\beval\\(" } }
"#;

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(DEFAULT_INVARIANTS_PATH), INVARIANTS).unwrap();
        dir
    }

    fn request(options: serde_json::Value) -> ReviewDiffRequest {
        serde_json::from_value(serde_json::json!({ "diff": DIFF, "options": options })).unwrap()
    }

    #[test]
    fn options_override_the_settings_below_them() {
        let dir = workspace();
        let settings =
            RawConfig::from_toml("[review]\nfail_on_severity = \"HIGH\"\n", "tollgate.toml")
                .unwrap();
        let from_settings = review_diff_request(
            dir.path(),
            settings.clone(),
            &request(serde_json::json!({})),
        )
        .unwrap();
        assert!(from_settings.result.should_fail);
        let overridden = review_diff_request(
            dir.path(),
            settings,
            &request(serde_json::json!({"fail_on_severity": "CRITICAL"})),
        )
        .unwrap();
        assert!(!overridden.result.should_fail);
        assert_eq!(
            overridden.result.metadata.gate["fail_on_severity"],
            serde_json::json!("CRITICAL")
        );
    }

    #[test]
    fn upstream_ids_feed_the_gate_and_the_allowlist() {
        let dir = workspace();
        let forced = review_diff_request(
            dir.path(),
            RawConfig::default(),
            &request(serde_json::json!({"fail_on_invariant_ids": ["no-eval"]})),
        )
        .unwrap();
        assert!(forced.result.should_fail);
        let allowed = review_diff_request(
            dir.path(),
            RawConfig::default(),
            &request(serde_json::json!({"allowlist_finding_ids": ["no-eval"]})),
        )
        .unwrap();
        assert!(
            allowed
                .result
                .findings
                .iter()
                .all(|finding| finding.rule_id != "no-eval")
        );
        assert_eq!(allowed.result.stats.findings_allowlisted, 1);
    }

    #[test]
    fn unavailable_options_become_warnings_in_front_of_the_runs_own() {
        let options: ReviewDiffOptions = serde_json::from_value(serde_json::json!({
            "enable_llm": true,
            "token_budget": 2000,
            "enable_static_analysis": false,
            "static_analyzers": ["semgrep"],
        }))
        .unwrap();
        let warnings = options.unavailable_warnings(false, false);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("options.token_budget:"));
        assert!(warnings[1].starts_with("options.static_analyzers:"));
        assert_eq!(options.unavailable_warnings(true, true).len(), 0);
        assert!(
            ReviewDiffOptions::default()
                .unavailable_warnings(false, false)
                .is_empty()
        );
    }

    #[test]
    fn bounds_name_the_option() {
        for (options, field) in [
            (
                serde_json::json!({"confidence_threshold": 2.0}),
                "options.confidence_threshold",
            ),
            (
                serde_json::json!({"max_findings": 10_001}),
                "options.max_findings",
            ),
            (
                serde_json::json!({"risk_threshold": 0}),
                "options.risk_threshold",
            ),
            (
                serde_json::json!({"token_budget": 999}),
                "options.token_budget",
            ),
            (
                serde_json::json!({"invariants_path": " "}),
                "options.invariants_path",
            ),
        ] {
            let err = review_diff_request(Path::new("."), RawConfig::default(), &request(options))
                .unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT");
            assert_eq!(err.field(), Some(field), "{err}");
        }
    }

    #[test]
    fn commit_ids_are_hex_and_lowercased() {
        assert_eq!(
            commit_id("base_sha", Some(" ABCDEF12 "))
                .unwrap()
                .as_deref(),
            Some("abcdef12")
        );
        assert_eq!(commit_id("base_sha", Some("")).unwrap(), None);
        for bad in ["abc", "main", "0123456789abcdefg", &"a".repeat(65)] {
            let err = commit_id("head_sha", Some(bad)).unwrap_err();
            assert_eq!(err.field(), Some("head_sha"));
        }
    }

    #[test]
    fn check_invariants_separates_bad_requests_from_bad_files() {
        let dir = workspace();
        let check = |path: &str| {
            check_invariants(
                dir.path(),
                &CheckInvariantsRequest {
                    diff: DIFF.to_string(),
                    changed_files: Vec::new(),
                    invariants_path: path.to_string(),
                },
            )
        };
        let ok = check(DEFAULT_INVARIANTS_PATH).unwrap();
        assert!(ok.success);
        assert_eq!(ok.findings.len(), 1);
        assert_eq!(ok.findings[0].location.start_line, 2);
        assert!(!ok.findings[0].id.is_empty());

        let missing = check("missing.yml").unwrap();
        assert!(!missing.success);
        assert_eq!(missing.error_code.as_deref(), Some("FILE_NOT_FOUND"));

        let escape = check("../outside.yml").unwrap_err();
        assert_eq!(escape.code(), "PATH_OUTSIDE_WORKSPACE");
        assert_eq!(escape.field(), Some("invariants_path"));
    }
}
