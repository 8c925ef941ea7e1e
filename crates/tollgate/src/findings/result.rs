//! The review result: what `tollgate review` prints as JSON and every report renders.
//!
//! Field names are a contract with CI scripts (a superset of upstream's EnterpriseReviewResult):
//! rename nothing; add fields only. `schemas/review-result.schema.json` is generated from these
//! types and a test fails when it is stale.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Category, Finding, Severity, StaticAnalysisSummary};

/// What kind of change a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    Feature,
    Bugfix,
    Refactor,
    Infra,
    Docs,
    Test,
}

impl Classification {
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::Feature => "feature",
            Classification::Bugfix => "bugfix",
            Classification::Refactor => "refactor",
            Classification::Infra => "infra",
            Classification::Docs => "docs",
            Classification::Test => "test",
        }
    }
}

/// One signal's share of the risk score, so the score explains itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RiskFactor {
    /// Signal name, e.g. `public_api_changed`.
    pub signal: String,
    /// Points added to the base score of 1.
    pub points: f64,
    pub detail: String,
}

/// The preflight signals computed from the diff.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Signals {
    pub tests_touched: bool,
    /// Changed test files.
    pub test_files: Vec<String>,
    pub config_files: Vec<String>,
    pub dependency_files: Vec<String>,
    pub public_api_files: Vec<String>,
    pub binary_files: Vec<String>,
    pub hotspot_files: Vec<String>,
    pub docs_files: Vec<String>,
    /// Number of added lines that hold a secret.
    pub secrets_found: usize,
}

/// Time spent per stage, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    pub parse: f64,
    pub preflight: f64,
    pub invariants: f64,
    pub static_analysis: f64,
    pub llm: f64,
    pub gate: f64,
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewStats {
    pub files_changed: usize,
    pub lines_added: usize,
    pub lines_removed: usize,
    pub duration_ms: f64,
    pub deterministic_checks_executed: usize,
    /// Rule × file pairs evaluated.
    pub invariants_executed: usize,
    pub static_analyzers_executed: usize,
    pub llm_passes_executed: usize,
    /// Findings produced before filtering.
    pub findings_total: usize,
    /// Dropped by the confidence threshold or the category filter.
    pub findings_filtered: usize,
    /// Dropped because the allowlist names their rule or fingerprint.
    pub findings_allowlisted: usize,
    /// Dropped because the baseline already knows them.
    pub findings_baselined: usize,
    /// Merged into another finding with the same fingerprint.
    pub findings_deduplicated: usize,
    /// Set aside by the learnings ledger (listed in `dismissed`); absent when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings_dismissed: usize,
    /// Left out of `findings` by `max_findings` (after the gate was decided).
    pub findings_truncated: usize,
    /// `findings_truncated` per rule id: every rule keeps at least one finding in `findings`,
    /// and this says how many more it had.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub findings_truncated_by_rule: BTreeMap<String, usize>,
    pub timings_ms: Timings,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Facts about the run itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewMetadata {
    /// RFC 3339 UTC timestamp.
    pub reviewed_at: String,
    pub tool_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// The invariants file that was applied, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariants_path: Option<String>,
    /// Non-fatal problems met during the run.
    pub warnings: Vec<String>,
    /// The effective gate settings, so a reader knows what the verdict was judged against.
    pub gate: BTreeMap<String, serde_json::Value>,
}

/// The outcome of a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewResult {
    pub run_id: String,
    /// 1 (trivial) to 5 (risky).
    pub risk_score: u8,
    /// What contributed to `risk_score`.
    pub risk_factors: Vec<RiskFactor>,
    pub classification: Classification,
    /// Changed paths that match hotspot patterns.
    pub hotspots: Vec<String>,
    pub summary: String,
    pub signals: Signals,
    /// Findings after filters and the gate, truncated to `max_findings`, worst first.
    pub findings: Vec<Finding>,
    /// Findings the learnings ledger dismissed (evidence unchanged): outside the gate and the
    /// failing set, listed here so nothing is silently lost (SARIF marks them suppressed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dismissed: Vec<Finding>,
    pub should_fail: bool,
    /// Why the gate failed; empty when it passed.
    pub fail_reasons: Vec<String>,
    pub stats: ReviewStats,
    pub metadata: ReviewMetadata,
    /// Descriptions of the rules that `findings` refer to (SARIF `rules`, Markdown help).
    pub rules: Vec<RuleInfo>,
    /// What the static analyzers (tsc, semgrep, imported SARIF) did; absent when none was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_analysis: Option<StaticAnalysisSummary>,
    /// What the model passes did; absent when they were not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmReviewSummary>,
}

/// What the model review passes did, and what they cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LlmReviewSummary {
    /// `openai`, `anthropic` or `command`; empty when no provider is configured.
    pub provider: String,
    /// The model that answered (as the server named it).
    pub model: String,
    /// The environment variable the API key was read from (its name, never the key); absent
    /// when no key was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Passes that ran: `structural`, `detailed`.
    pub passes_executed: Vec<String>,
    /// Why no pass ran, or why the detailed pass did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_reason: Option<String>,
    /// Findings the passes contributed (after location checks, before filters).
    pub findings_added: usize,
    /// Findings dropped because their location is not in the diff.
    pub findings_off_diff: usize,
    /// Files whose diff was sent, and files left out because the token budget ran out.
    pub files_sent: usize,
    pub files_omitted: Vec<String>,
    /// Definitions in other files, found through the workspace's code index, shown with the
    /// changes that use them (0 without an index).
    #[serde(default)]
    pub index_definitions: usize,
    /// Model requests made (retries and repairs included) and answers served from the cache.
    pub requests: u32,
    pub cached_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Estimated cost in USD, when prices are configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub duration_ms: f64,
}

/// What a rule checks, for people reading a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleInfo {
    /// The `rule_id` findings carry.
    pub id: String,
    /// Kebab-case name saying what was found, e.g. `secret-in-diff`.
    pub name: String,
    /// One line.
    pub short_description: String,
    /// A paragraph.
    pub full_description: String,
    /// How to fix or silence it (Markdown).
    pub help: String,
    pub default_severity: Severity,
    pub category: Category,
    /// Link to the rule's documentation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
}
