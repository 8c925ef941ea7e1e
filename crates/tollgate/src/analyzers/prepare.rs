//! Static analysis as the review pipeline runs it: [`prepare_for_review`] checks a review's paths
//! and reads its SARIF imports, [`PreparedAnalysis::run`] runs the enabled analyzers and settles
//! their findings against the diff. Upstream's `run_static_analysis` operation is
//! `api::analysis`, on the same orchestration.

use crate::ErrorCode;
use crate::control::Control;
use std::path::Path;

use super::orchestrate::{self, AnalysisPlan};
use super::sarif_import::{self, ImportedSarif, SarifImportError};
use super::workspace::check_changed_file;
use crate::config::{AnalyzersConfig, check_semgrep_args};
use crate::diff::{self, ChangedLines, Diff};
use crate::findings::{Finding, StaticAnalysisSummary};
use crate::workspace::Workspace;

/// Static analysis could not run (as opposed to an analyzer that failed, which is a status).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    #[error("Cannot use the workspace {path}: {source}")]
    Workspace {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Invalid changed_files entry `{path}`: {reason}")]
    ChangedFile { path: String, reason: String },
    #[error("Invalid import_sarif entry `{path}`: {reason}")]
    SarifPath { path: String, reason: String },
    #[error("Invalid diff: {0}")]
    Diff(#[from] diff::DiffError),
    #[error(transparent)]
    Sarif(#[from] SarifImportError),
    #[error("Invalid option {option}: {message}")]
    Option {
        option: &'static str,
        message: String,
    },
}

impl AnalysisError {
    /// Stable machine code (shared with the MCP server's error codes).
    pub fn code(&self) -> ErrorCode {
        match self {
            AnalysisError::Sarif(SarifImportError::Input(err)) => err.code(),
            AnalysisError::Workspace { .. } => ErrorCode::FileNotFound,
            _ => ErrorCode::InvalidInput,
        }
    }
}

/// The analyzers' findings and summary, ready to join a review.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisOutcome {
    /// In scope, anchored, without identities (the review assigns them with its own findings).
    pub findings: Vec<Finding>,
    pub summary: StaticAnalysisSummary,
}

/// Static analysis of a review, with its inputs checked and its SARIF files read; [`run`] it
/// (typically on another thread while the deterministic checks run).
///
/// [`run`]: PreparedAnalysis::run
#[derive(Debug)]
pub struct PreparedAnalysis {
    workspace: Workspace,
    config: AnalyzersConfig,
    files: Vec<String>,
    imports: Vec<ImportedSarif>,
    warnings: Vec<String>,
}

/// Prepares the static analysis of a review of `paths` (the new paths of the reviewed files).
/// `None` when no analyzer is enabled and no SARIF file is imported. Paths that cannot be handed
/// to a tool (outside the workspace, absent, odd names) are left out with a warning; a SARIF file
/// that cannot be read is an error, because the user named it.
pub fn prepare_for_review<'p>(
    workspace: &Path,
    paths: impl IntoIterator<Item = &'p str>,
    config: &AnalyzersConfig,
) -> Result<Option<PreparedAnalysis>, AnalysisError> {
    if config.enabled.is_empty() && config.import_sarif.is_empty() {
        return Ok(None);
    }
    let workspace = open_workspace(workspace)?;
    check_semgrep_args(&config.semgrep.args).map_err(|message| AnalysisError::Option {
        option: "semgrep_args",
        message,
    })?;
    let mut warnings = Vec::new();
    let files = checked_files(&workspace, paths, &mut warnings);
    let imports = config
        .import_sarif
        .iter()
        .map(|path| {
            let path = if path.is_absolute() {
                path.clone()
            } else {
                workspace.root().join(path)
            };
            sarif_import::import(&path, &workspace, config.max_import_bytes)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(PreparedAnalysis {
        workspace,
        config: config.clone(),
        files,
        imports,
        warnings,
    }))
}

impl PreparedAnalysis {
    /// Runs the enabled analyzers and settles every finding against `diff`. Never panics: a bug
    /// in here becomes a warning and an empty outcome, so a review still gets its verdict.
    pub fn run(self, diff: &Diff) -> AnalysisOutcome {
        self.run_until(diff, &Control::default())
    }

    /// [`Self::run`], killing a running tool when `stop` is cancelled (its status says so).
    pub fn run_until(self, diff: &Diff, stop: &Control) -> AnalysisOutcome {
        let analyzers = self.config.enabled.clone();
        let scope = self.config.scope;
        let budget = self.config.total_budget(analyzers.len());
        let analyze = std::panic::AssertUnwindSafe(move || {
            let changed_lines = ChangedLines::new(diff);
            orchestrate::analyze(AnalysisPlan {
                workspace: &self.workspace,
                config: &self.config,
                analyzers: &self.config.enabled,
                files: self.files,
                whole_workspace: false,
                changed_lines: Some(&changed_lines),
                scope: self.config.scope,
                imports: self.imports,
                warnings: self.warnings,
                stop,
            })
        });
        match std::panic::catch_unwind(analyze) {
            Ok(output) => AnalysisOutcome {
                findings: output.findings,
                summary: output.summary,
            },
            Err(_) => {
                let warning =
                    "internal error: static analysis panicked; no analyzer result was used"
                        .to_string();
                AnalysisOutcome {
                    findings: Vec::new(),
                    summary: StaticAnalysisSummary {
                        analyzers_requested: analyzers,
                        analyzers_executed: Vec::new(),
                        scope,
                        duration_ms: 0.0,
                        budget_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
                        findings_out_of_scope: 0,
                        findings_over_limit: 0,
                        warnings: vec![warning],
                        results: Vec::new(),
                    },
                }
            }
        }
    }
}

pub(crate) fn open_workspace(path: &Path) -> Result<Workspace, AnalysisError> {
    Workspace::new(path).map_err(|source| AnalysisError::Workspace {
        path: path.display().to_string(),
        source,
    })
}

/// The paths that may go on a command line; the rest are reported in one warning.
pub(crate) fn checked_files<'p>(
    workspace: &Workspace,
    paths: impl IntoIterator<Item = &'p str>,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let mut files = Vec::new();
    let mut refused = Vec::new();
    for path in paths {
        match check_changed_file(workspace, path) {
            Ok(checked) => {
                if !files.iter().any(|f| f == checked.as_str()) {
                    files.push(checked.as_str().to_string());
                }
            }
            Err(reason) => refused.push(format!("{} ({reason})", path.escape_debug())),
        }
    }
    if !refused.is_empty() {
        let shown: Vec<&str> = refused.iter().take(5).map(String::as_str).collect();
        let more = refused.len().saturating_sub(shown.len());
        warnings.push(format!(
            "{} changed path(s) not given to analyzers: {}{}",
            refused.len(),
            shown.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        ));
    }
    files
}
