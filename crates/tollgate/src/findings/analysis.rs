//! The vocabulary of static analysis results: which analyzer, how its run ended, what it found
//! and what was left out. These types live in `findings` because [`ReviewResult`] carries them
//! and `report` reads them; the `analyzers` module produces them.
//!
//! [`ReviewResult`]: super::ReviewResult

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::UnknownValue;

/// An external analyzer Tollgate can run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AnalyzerKind {
    /// The TypeScript compiler's type check (`tsc --noEmit`).
    Tsc,
    /// semgrep with local rule files.
    Semgrep,
}

impl AnalyzerKind {
    pub const ALL: [AnalyzerKind; 2] = [AnalyzerKind::Tsc, AnalyzerKind::Semgrep];

    pub fn as_str(self) -> &'static str {
        match self {
            AnalyzerKind::Tsc => "tsc",
            AnalyzerKind::Semgrep => "semgrep",
        }
    }
}

impl fmt::Display for AnalyzerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AnalyzerKind {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AnalyzerKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownValue {
                what: "analyzer",
                given: s.to_string(),
                expected: "tsc, semgrep",
            })
    }
}

/// Which analyzer findings count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisScope {
    /// Only findings on lines the diff added or changed (the default): problems that were
    /// there before the change do not vote in the gate.
    ChangedLines,
    /// Findings anywhere in the files the diff touched.
    ChangedFiles,
    /// Every finding the tools report.
    All,
}

impl AnalysisScope {
    pub const ALL: [AnalysisScope; 3] = [
        AnalysisScope::ChangedLines,
        AnalysisScope::ChangedFiles,
        AnalysisScope::All,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AnalysisScope::ChangedLines => "changed_lines",
            AnalysisScope::ChangedFiles => "changed_files",
            AnalysisScope::All => "all",
        }
    }
}

impl fmt::Display for AnalysisScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AnalysisScope {
    type Err = UnknownValue;

    /// Case-insensitive; `-` and `_` are interchangeable (`changed-lines` works on a command line).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().replace('-', "_");
        AnalysisScope::ALL
            .into_iter()
            .find(|scope| scope.as_str().eq_ignore_ascii_case(&wanted))
            .ok_or_else(|| UnknownValue {
                what: "analysis scope",
                given: s.to_string(),
                expected: "changed_lines, changed_files, all",
            })
    }
}

/// How an analyzer's run ended. Only `executed` means the tool ran to completion and its output
/// was read; every other status carries a reason in [`AnalyzerReport::skipped_reason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalyzerStatus {
    /// The tool ran and its output was parsed.
    Executed,
    /// Nothing to do: no file it analyses was changed, no rules are configured, or the total
    /// budget ran out before it could start.
    Skipped,
    /// The tool could not be found (or a configured path does not exist).
    Unavailable,
    /// The tool crashed, exited with an error of its own, or printed output that could not be read.
    Failed,
    /// The tool ran past its timeout and its whole process tree was killed.
    TimedOut,
    /// The caller cancelled the review while the tool ran; its whole process tree was killed.
    Cancelled,
}

impl AnalyzerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AnalyzerStatus::Executed => "executed",
            AnalyzerStatus::Skipped => "skipped",
            AnalyzerStatus::Unavailable => "unavailable",
            AnalyzerStatus::Failed => "failed",
            AnalyzerStatus::TimedOut => "timed_out",
            AnalyzerStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for AnalyzerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an analyzer's executable was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolOrigin {
    /// The path given in the configuration.
    Config,
    /// The project's `node_modules/.bin`.
    NodeModules,
    /// A directory of the search path (`PATH`).
    Path,
}

/// One analyzer's run (a tool, or one imported SARIF file). Upstream's `StaticAnalyzerResult`
/// shape (`analyzer`, `duration_ms`, `warnings`, `skipped_reason`) with counts instead of the
/// findings themselves, which live in the result's `findings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AnalyzerReport {
    /// `tsc`, `semgrep`, or `sarif` for an imported SARIF file.
    pub analyzer: String,
    pub status: AnalyzerStatus,
    /// Why the analyzer did not execute; present exactly when `status` is not `executed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_reason: Option<String>,
    /// The tool's version, when it could be learned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The executable that was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovered_via: Option<ToolOrigin>,
    /// The imported SARIF file (for `sarif`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The tools (SARIF driver names) of an imported SARIF file; their versions are in `version`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    pub duration_ms: f64,
    /// Wall time the tool's own processes ran, summed; the rest of `duration_ms` is Tollgate's
    /// work (discovery, parsing, settling).
    pub process_ms: f64,
    /// Processes started: one per TypeScript project, one per semgrep batch.
    pub invocations: usize,
    /// The last exit code seen, when a process exited normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Findings the tool reported (after its own suppressions).
    pub findings_reported: usize,
    /// Left out because they lie outside the analysis scope (lines or files the diff did not
    /// change).
    pub findings_out_of_scope: usize,
    /// Left out by `static_analysis_max_findings_per_analyzer`.
    pub findings_over_limit: usize,
    /// Passed on to the review.
    pub findings_kept: usize,
    /// The tool's stderr and other non-fatal problems.
    pub warnings: Vec<String>,
}

impl AnalyzerReport {
    /// A report with every count at zero.
    pub fn new(analyzer: impl Into<String>, status: AnalyzerStatus) -> AnalyzerReport {
        AnalyzerReport {
            analyzer: analyzer.into(),
            status,
            skipped_reason: None,
            version: None,
            executable: None,
            discovered_via: None,
            input: None,
            tools: Vec::new(),
            duration_ms: 0.0,
            process_ms: 0.0,
            invocations: 0,
            exit_code: None,
            findings_reported: 0,
            findings_out_of_scope: 0,
            findings_over_limit: 0,
            findings_kept: 0,
            warnings: Vec::new(),
        }
    }
}

/// Static analysis within a review (upstream's `static_analysis` metadata plus scope and counts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StaticAnalysisSummary {
    pub analyzers_requested: Vec<AnalyzerKind>,
    /// Analyzers whose status is `executed`.
    pub analyzers_executed: Vec<AnalyzerKind>,
    pub scope: AnalysisScope,
    /// Wall time of the whole stage; analyzers run concurrently, so this is about the slowest.
    pub duration_ms: f64,
    /// The total time budget all analyzers shared.
    pub budget_ms: u64,
    /// Sums over `results`.
    pub findings_out_of_scope: usize,
    pub findings_over_limit: usize,
    pub warnings: Vec<String>,
    /// One entry per analyzer and per imported SARIF file.
    pub results: Vec<AnalyzerReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_and_round_trip_through_serde() {
        for kind in AnalyzerKind::ALL {
            assert_eq!(
                kind.as_str().to_uppercase().parse::<AnalyzerKind>(),
                Ok(kind)
            );
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.as_str())
            );
        }
        for scope in AnalysisScope::ALL {
            assert_eq!(scope.as_str().parse::<AnalysisScope>(), Ok(scope));
            assert_eq!(
                serde_json::to_string(&scope).unwrap(),
                format!("\"{}\"", scope.as_str())
            );
        }
        assert_eq!(
            "Changed-Lines".parse::<AnalysisScope>(),
            Ok(AnalysisScope::ChangedLines)
        );
        let err = "eslint".parse::<AnalyzerKind>().unwrap_err();
        assert!(err.to_string().contains("`eslint`"), "{err}");
        assert_eq!(
            serde_json::to_string(&AnalyzerStatus::TimedOut).unwrap(),
            "\"timed_out\""
        );
    }
}
