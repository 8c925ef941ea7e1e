//! The shared vocabulary of review: [`Finding`], [`Severity`], [`Category`], [`Location`],
//! fingerprints, and the [`ReviewResult`] that reports render.
//!
//! Every producer (preflight checks, invariants, analyzers, model passes) emits findings with an
//! `anchor_text` (the content of the line it points at). [`assign_identities`] then gives each one a
//! stable `fingerprint` (rule id + path + normalised anchor text + occurrence index) and a unique
//! `id`, and masks every secret in the finding's texts ([`redact_secrets`]), so whatever produced
//! a finding, no report, MCP answer or stored session shows a secret. Dedupe, baselines,
//! allowlists and SARIF `partialFingerprints` all key on the fingerprint, never on the rule id
//! alone.

mod analysis;
mod fingerprint;
mod redact;
mod result;

pub use analysis::{
    AnalysisScope, AnalyzerKind, AnalyzerReport, AnalyzerStatus, StaticAnalysisSummary, ToolOrigin,
};
pub use fingerprint::{assign_identities, dedupe_by_fingerprint, normalize_anchor};
pub use redact::redact_secrets;
// `LearningNote` and `LearningStatus` are defined below, beside `Finding`.
pub use result::{
    Classification, LlmReviewSummary, ReviewMetadata, ReviewResult, ReviewStats, RiskFactor,
    RuleInfo, Signals, Timings,
};

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How bad a finding is. Ordered so that `Critical > High > … > Info`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 5] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "CRITICAL",
            Severity::High => "HIGH",
            Severity::Medium => "MEDIUM",
            Severity::Low => "LOW",
            Severity::Info => "INFO",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text did not name a known value; carries what was given and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown {what} `{given}` (expected one of: {expected})")]
pub struct UnknownValue {
    pub what: &'static str,
    pub given: String,
    pub expected: &'static str,
}

impl FromStr for Severity {
    type Err = UnknownValue;

    /// Case-insensitive, so `high`, `High` and `HIGH` all work in config files and flags.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Severity::ALL
            .into_iter()
            .find(|sev| sev.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownValue {
                what: "severity",
                given: s.to_string(),
                expected: "CRITICAL, HIGH, MEDIUM, LOW, INFO",
            })
    }
}

/// What area a finding concerns (the upstream review categories).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Correctness,
    Security,
    Performance,
    Maintainability,
    Style,
    Documentation,
    Reliability,
    Architecture,
    Infra,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::Correctness,
        Category::Security,
        Category::Performance,
        Category::Maintainability,
        Category::Style,
        Category::Documentation,
        Category::Reliability,
        Category::Architecture,
        Category::Infra,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Correctness => "correctness",
            Category::Security => "security",
            Category::Performance => "performance",
            Category::Maintainability => "maintainability",
            Category::Style => "style",
            Category::Documentation => "documentation",
            Category::Reliability => "reliability",
            Category::Architecture => "architecture",
            Category::Infra => "infra",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .find(|cat| cat.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownValue {
                what: "category",
                given: s.to_string(),
                expected: "correctness, security, performance, maintainability, style, documentation, reliability, architecture, infra",
            })
    }
}

/// Which part of Tollgate (or which external tool) produced a finding. Reports group by it:
/// SARIF writes one run per source.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Deterministic preflight checks (TG rules, including secrets).
    Preflight,
    /// Rules from an invariants file.
    Invariants,
    Tsc,
    Semgrep,
    /// Results imported from another tool's SARIF.
    Sarif,
    Llm,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Preflight => "preflight",
            Source::Invariants => "invariants",
            Source::Tsc => "tsc",
            Source::Semgrep => "semgrep",
            Source::Sarif => "sarif",
            Source::Llm => "llm",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finding points: a path relative to the repository root (always `/`-separated) and a
/// 1-based, inclusive line range. Columns are 1-based, optional, and count Unicode characters
/// (code points), not bytes: formats that want bytes or UTF-16 units convert from the line text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    pub file: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_column: Option<u32>,
    /// Exclusive end column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
}

impl Location {
    /// A whole-line location.
    pub fn line(file: impl Into<String>, line: u32) -> Location {
        Location {
            file: file.into(),
            start_line: line,
            end_line: line,
            start_column: None,
            end_column: None,
        }
    }
}

/// How safe it is to apply a suggested fix without a human looking (after ruff's `Applicability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Applicability {
    /// Shown to people only.
    DisplayOnly,
    /// May change behaviour; offer, never apply automatically.
    Unsafe,
    /// Preserves behaviour; may be offered as a one-click suggestion.
    Safe,
}

/// A proposed change for a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuggestedFix {
    pub description: String,
    /// Replacement text for the finding's line range, when the producer knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    pub applicability: Applicability,
}

/// One problem found at one place. The only currency between producers and consumers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Unique per occurrence and stable across runs (derived from the fingerprint).
    pub id: String,
    /// Stable rule identifier: `TG001`, an invariant id, `tsc/TS2322`, `semgrep/<check_id>`, `llm/<category>`.
    pub rule_id: String,
    pub severity: Severity,
    pub category: Category,
    /// 0.0–1.0.
    pub confidence: f64,
    pub title: String,
    pub message: String,
    pub location: Location,
    #[serde(default)]
    pub evidence: Vec<String>,
    #[serde(default)]
    pub impact: String,
    #[serde(default)]
    pub recommendation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<SuggestedFix>,
    pub source: Source,
    /// The external tool behind a finding whose `source` does not name it: the driver name of an
    /// imported SARIF run (`clippy`, `ESLint`, `CodeQL`). SARIF output gives each tool its own run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Identity of this occurrence across runs: survives unrelated edits above it.
    pub fingerprint: String,
    /// Whether the location lies on a line added or changed by the diff (computed by Tollgate).
    pub on_changed_line: bool,
    /// The content of the anchored line, the input to the fingerprint. Never serialised: it may
    /// hold code the report has no business repeating.
    #[serde(skip)]
    #[schemars(skip)]
    pub anchor_text: String,
    /// What the team's learnings ledger (`.review-learnings.jsonl`) says about this finding:
    /// set aside as dismissed, or back after a dismissal or fix because its code changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning: Option<LearningNote>,
    /// Whether this finding fails the gate, as the gate decided it (absent for a notice, a
    /// dismissed finding and one below the gate's severity).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fails_gate: bool,
}

/// A ledger decision as it shows on a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LearningNote {
    pub status: LearningStatus,
    /// The recorded reason (secrets masked); untrusted text, rendered escaped.
    pub reason: String,
    /// Who decided.
    pub by: String,
    /// When (RFC 3339), as recorded.
    pub at: String,
    /// The fingerprint the decision was recorded for: for a returning finding whose line was
    /// edited, its earlier one (whose pull-request comment holds the dismissal).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fingerprint: String,
}

/// Whether a finding the ledger knows is set aside or back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LearningStatus {
    /// Dismissed and its code is unchanged: out of the gate, the failing set and inline comments.
    Dismissed,
    /// Dismissed or fixed before, and its code has changed since: judged again.
    Returning,
}

impl Finding {
    /// A finding with its required parts; `id` and `fingerprint` are filled by
    /// [`assign_identities`], the optional texts with the `with_*` methods.
    pub fn new(
        rule_id: impl Into<String>,
        severity: Severity,
        category: Category,
        source: Source,
        title: impl Into<String>,
        location: Location,
    ) -> Finding {
        Finding {
            id: String::new(),
            rule_id: rule_id.into(),
            severity,
            category,
            confidence: 1.0,
            title: title.into(),
            message: String::new(),
            location,
            evidence: Vec::new(),
            impact: String::new(),
            recommendation: String::new(),
            suggested_fix: None,
            source,
            tool: None,
            fingerprint: String::new(),
            on_changed_line: false,
            anchor_text: String::new(),
            learning: None,
            fails_gate: false,
        }
    }

    pub fn with_confidence(mut self, confidence: f64) -> Finding {
        self.confidence = confidence.clamp(0.0, 1.0);
        self
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Finding {
        self.message = message.into();
        self
    }

    pub fn with_evidence(mut self, evidence: impl Into<String>) -> Finding {
        self.evidence.push(evidence.into());
        self
    }

    pub fn with_impact(mut self, impact: impl Into<String>) -> Finding {
        self.impact = impact.into();
        self
    }

    pub fn with_recommendation(mut self, recommendation: impl Into<String>) -> Finding {
        self.recommendation = recommendation.into();
        self
    }

    pub fn with_fix(mut self, fix: SuggestedFix) -> Finding {
        self.suggested_fix = Some(fix);
        self
    }

    /// Sets the anchored line's content (used for the fingerprint).
    pub fn with_anchor(mut self, anchor_text: impl Into<String>) -> Finding {
        self.anchor_text = anchor_text.into();
        self
    }

    pub fn on_changed_line(mut self, on_changed_line: bool) -> Finding {
        self.on_changed_line = on_changed_line;
        self
    }
}

/// Sorts findings for display: severity (worst first), then path, line and rule id, so every
/// output is deterministic.
pub fn sort_for_display(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.location.file.cmp(&b.location.file))
            .then_with(|| a.location.start_line.cmp(&b.location.start_line))
            .then_with(|| a.rule_id.cmp(&b.rule_id))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_orders_critical_highest_and_parses_any_case() {
        assert!(Severity::Critical > Severity::High);
        assert!(Severity::Low > Severity::Info);
        assert_eq!("high".parse::<Severity>().unwrap(), Severity::High);
        let err = "urgent".parse::<Severity>().unwrap_err();
        assert!(err.to_string().contains("`urgent`"), "{err}");
    }

    #[test]
    fn category_round_trips_through_serde() {
        for cat in Category::ALL {
            let json = serde_json::to_string(&cat).unwrap();
            assert_eq!(json, format!("\"{}\"", cat.as_str()));
            assert_eq!(cat.as_str().parse::<Category>().unwrap(), cat);
        }
    }
}
