//! `run_static_analysis` (upstream's MCP tool of that name): its request and response, public
//! contracts with JSON Schemas in `schemas/` (`static-analysis-request.schema.json`,
//! `static-analysis-response.schema.json`), and the operation, on the analyzers' orchestration.

use crate::control::Control;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::analyzers::{
    AnalysisError, AnalysisPlan, analyze, checked_files, import_sarif, open_workspace,
};
use crate::config::{AnalyzersConfig, check_semgrep_args};
use crate::diff::{self, ChangedLines};
use crate::findings::{
    AnalysisScope, AnalyzerKind, AnalyzerReport, AnalyzerStatus, Finding, assign_identities,
    sort_for_display,
};
use crate::workspace::{RepoPath, Workspace, changed_file};

/// Input of `run_static_analysis`: upstream's `{changed_files, options}` plus an optional diff
/// that scopes findings to changed lines. Unknown fields are refused at every level, so a
/// misspelt option never silently falls back to a default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticAnalysisRequest {
    /// Repository-relative paths to analyse. With `diff`, only these of its files count; without
    /// either, the whole project is checked (tsc) and semgrep is skipped.
    #[serde(default)]
    pub changed_files: Vec<String>,
    /// Which analyzers run and within which limits; unset options come from the configuration.
    #[serde(default)]
    pub options: StaticAnalysisOptions,
    /// A unified diff of the working tree's changes: its files are analysed and, in the default
    /// `changed_lines` scope, only findings on its added lines count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Options of `run_static_analysis`; unset ones come from the `[analyzers]` configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticAnalysisOptions {
    /// Which analyzers run [default: the configured ones, else `["tsc"]`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analyzers: Option<Vec<AnalyzerKind>>,
    /// Time limit per analyzer in milliseconds [default: 60000]; all analyzers share a budget of
    /// this times their number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Findings kept per analyzer, worst first [default: 20].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_findings_per_analyzer: Option<usize>,
    /// Extra semgrep arguments, placed before `--`. Options that write files (`--output`,
    /// `--autofix`) are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semgrep_args: Option<Vec<String>>,
    /// Which findings count [default: `changed_lines` with a diff, else `changed_files`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<AnalysisScope>,
    /// SARIF files inside the workspace whose results are merged in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_sarif: Option<Vec<String>>,
}

/// Output of `run_static_analysis`: upstream's `{success, analyzers, warnings, results,
/// findings}` plus the scope and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StaticAnalysisResponse {
    /// Every requested analyzer executed, or had nothing to do (`skipped`); false when one was
    /// unavailable, failed or timed out.
    pub success: bool,
    /// The analyzers that were requested.
    pub analyzers: Vec<AnalyzerKind>,
    pub warnings: Vec<String>,
    /// One entry per analyzer and imported SARIF file.
    pub results: Vec<AnalyzerReport>,
    /// Findings in scope, with fingerprints, worst first.
    pub findings: Vec<Finding>,
    pub scope: AnalysisScope,
    pub duration_ms: f64,
    pub findings_out_of_scope: usize,
    pub findings_over_limit: usize,
}

/// Runs static analysis on `workspace` as upstream's `run_static_analysis` tool does, with
/// `config` supplying what the request leaves unset.
pub fn run_static_analysis(
    workspace: &Path,
    request: &StaticAnalysisRequest,
    config: &AnalyzersConfig,
) -> Result<StaticAnalysisResponse, AnalysisError> {
    let workspace = open_workspace(workspace)?;
    for path in &request.changed_files {
        changed_file(path).map_err(|err| AnalysisError::ChangedFile {
            path: path.escape_debug().to_string(),
            reason: err.reason(),
        })?;
    }
    let options = &request.options;
    let mut config = config.clone();
    if let Some(timeout_ms) = options.timeout_ms {
        if timeout_ms == 0 {
            return Err(AnalysisError::Option {
                option: "timeout_ms",
                message: "must be at least 1".into(),
            });
        }
        config.timeout = std::time::Duration::from_millis(timeout_ms);
        config.total_timeout = None;
    }
    if let Some(max) = options.max_findings_per_analyzer {
        config.max_findings_per_analyzer = max;
    }
    if let Some(args) = &options.semgrep_args {
        config.semgrep.args = args.clone();
    }
    check_semgrep_args(&config.semgrep.args).map_err(|message| AnalysisError::Option {
        option: "semgrep_args",
        message,
    })?;
    let analyzers = match &options.analyzers {
        Some(list) => dedup(list),
        None if !config.enabled.is_empty() => config.enabled.clone(),
        None => vec![AnalyzerKind::Tsc],
    };

    let mut warnings = Vec::new();
    let diff = request
        .diff
        .as_ref()
        .map(|text| diff::parse(text.as_bytes().to_vec()))
        .transpose()?;
    let wanted: Vec<&str> = request
        .changed_files
        .iter()
        .map(|p| p.trim_start_matches("./"))
        .collect();
    let paths: Vec<&str> = match &diff {
        Some(diff) => diff
            .files()
            .iter()
            .filter_map(|f| f.new_path.as_deref())
            .filter(|p| wanted.is_empty() || wanted.contains(p))
            .collect(),
        None => wanted.clone(),
    };
    let files = checked_files(&workspace, paths, &mut warnings);
    let whole_workspace = diff.is_none() && request.changed_files.is_empty();
    let scope = match (options.scope, &diff) {
        _ if whole_workspace => AnalysisScope::All,
        (Some(AnalysisScope::ChangedLines), None) => {
            warnings.push(
                "scope changed_lines needs a diff; findings in the changed files are reported"
                    .to_string(),
            );
            AnalysisScope::ChangedFiles
        }
        (Some(scope), _) => scope,
        (None, Some(_)) => config.scope,
        (None, None) => match config.scope {
            AnalysisScope::ChangedLines => AnalysisScope::ChangedFiles,
            other => other,
        },
    };
    if whole_workspace {
        warnings.push(
            "no changed_files or diff given: the whole project is checked and every finding counts"
                .to_string(),
        );
    }

    let mut imports = Vec::new();
    for given in options.import_sarif.iter().flatten() {
        let path = sarif_in_workspace(&workspace, given)?;
        imports.push(import_sarif(&path, &workspace, config.max_import_bytes)?);
    }

    let changed_lines = diff.as_ref().map(ChangedLines::new);
    let output = analyze(AnalysisPlan {
        workspace: &workspace,
        config: &config,
        analyzers: &analyzers,
        files,
        whole_workspace,
        changed_lines: changed_lines.as_ref(),
        scope,
        imports,
        warnings,
        stop: &Control::default(),
    });
    let mut findings = output.findings;
    assign_identities(&mut findings);
    sort_for_display(&mut findings);
    let summary = output.summary;
    Ok(StaticAnalysisResponse {
        success: summary
            .results
            .iter()
            .all(|r| matches!(r.status, AnalyzerStatus::Executed | AnalyzerStatus::Skipped)),
        analyzers,
        warnings: summary.warnings,
        results: summary.results,
        findings,
        scope: summary.scope,
        duration_ms: summary.duration_ms,
        findings_out_of_scope: summary.findings_out_of_scope,
        findings_over_limit: summary.findings_over_limit,
    })
}

/// A SARIF path from a request: relative, inside the workspace (symlinks resolved).
fn sarif_in_workspace(workspace: &Workspace, given: &str) -> Result<PathBuf, AnalysisError> {
    let refuse = |reason| AnalysisError::SarifPath {
        path: given.escape_debug().to_string(),
        reason,
    };
    let path = RepoPath::new(given).map_err(|err| refuse(err.reason()))?;
    workspace.resolve(&path).map_err(|err| match err {
        crate::workspace::PathError::Outside { .. } => {
            refuse("it resolves outside the workspace".to_string())
        }
        err => refuse(err.reason()),
    })
}

fn dedup(list: &[AnalyzerKind]) -> Vec<AnalyzerKind> {
    let mut out = Vec::new();
    for kind in list {
        if !out.contains(kind) {
            out.push(*kind);
        }
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_requests_deserialize() {
        let request: StaticAnalysisRequest = serde_json::from_str(
            r#"{"changed_files": ["src/a.ts"], "options": {"analyzers": ["tsc", "semgrep"],
                "timeout_ms": 1000, "max_findings_per_analyzer": 5, "semgrep_args": ["--exclude", "x"]}}"#,
        )
        .unwrap();
        assert_eq!(
            request.options.analyzers,
            Some(vec![AnalyzerKind::Tsc, AnalyzerKind::Semgrep])
        );
        let empty: StaticAnalysisRequest = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, StaticAnalysisRequest::default());
    }

    #[test]
    fn untrusted_inputs_are_refused_with_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let config = AnalyzersConfig::default();
        for (request, expected) in [
            (
                StaticAnalysisRequest {
                    changed_files: vec!["../etc/passwd".into()],
                    ..StaticAnalysisRequest::default()
                },
                "`..`",
            ),
            (
                StaticAnalysisRequest {
                    changed_files: vec!["--config=auto".into()],
                    ..StaticAnalysisRequest::default()
                },
                "start with `-`",
            ),
            (
                StaticAnalysisRequest {
                    options: StaticAnalysisOptions {
                        semgrep_args: Some(vec!["--output".into(), "/tmp/x".into()]),
                        ..StaticAnalysisOptions::default()
                    },
                    ..StaticAnalysisRequest::default()
                },
                "--output",
            ),
            (
                StaticAnalysisRequest {
                    options: StaticAnalysisOptions {
                        import_sarif: Some(vec!["/etc/x.sarif".into()]),
                        ..StaticAnalysisOptions::default()
                    },
                    ..StaticAnalysisRequest::default()
                },
                "absolute",
            ),
        ] {
            let err = run_static_analysis(dir.path(), &request, &config).unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT");
            assert!(err.to_string().contains(expected), "{err}");
        }
        let err = run_static_analysis(
            &dir.path().join("missing"),
            &StaticAnalysisRequest::default(),
            &config,
        )
        .unwrap_err();
        assert_eq!(err.code(), "FILE_NOT_FOUND");
    }

    #[test]
    fn a_missing_tool_is_unavailable_not_executed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tsconfig.json"), "{}").unwrap();
        std::fs::write(dir.path().join("a.ts"), "export const a = 1;\n").unwrap();
        // An empty search path: nothing can be found.
        let config = AnalyzersConfig::default();
        let request = StaticAnalysisRequest {
            changed_files: vec!["a.ts".into()],
            ..StaticAnalysisRequest::default()
        };
        let response = run_static_analysis(dir.path(), &request, &config).unwrap();
        assert!(!response.success);
        assert_eq!(response.analyzers, [AnalyzerKind::Tsc]);
        let tsc = &response.results[0];
        assert_eq!(tsc.status, AnalyzerStatus::Unavailable);
        assert!(tsc.skipped_reason.as_deref().unwrap().contains("not found"));
        assert_eq!(tsc.invocations, 0);
        assert!(
            response
                .warnings
                .iter()
                .any(|w| w.starts_with("tsc unavailable"))
        );
    }
}
