//! What can go wrong with an invariants file, and the positioned [`Problem`]s a loader collects
//! (all of them, like a compiler, rather than stopping at the first).

use crate::ErrorCode;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// One error or warning at a place in an invariants file. `line` and `column` are 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    /// The rule the problem belongs to, when it belongs to one and its id is known.
    pub rule_id: Option<String>,
    pub message: String,
}

impl Problem {
    /// Renders as `path:line:col: rule ID: message` (without the rule part when there is no
    /// rule), the form editors and CI logs link to.
    pub fn display<'a>(&'a self, path: &'a Path) -> impl fmt::Display + 'a {
        ProblemDisplay {
            problem: self,
            path,
        }
    }
}

struct ProblemDisplay<'a> {
    problem: &'a Problem,
    path: &'a Path,
}

impl fmt::Display for ProblemDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Problem {
            line,
            column,
            rule_id,
            message,
        } = self.problem;
        write!(f, "{}:{line}:{column}: ", self.path.display())?;
        if let Some(rule_id) = rule_id {
            write!(f, "rule {rule_id}: ")?;
        }
        f.write_str(message)
    }
}

/// Why an invariants file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InvariantsError {
    /// The file was read but is not a valid invariants file. `problems` holds every error found
    /// (sorted by position); `warnings` what would have been reported had it loaded.
    #[error("{}", render_problems(.path, .problems))]
    Invalid {
        path: PathBuf,
        problems: Vec<Problem>,
        warnings: Vec<Problem>,
    },
    #[error("Invariants file not found: {}", .path.display())]
    NotFound { path: PathBuf },
    #[error("Cannot read invariants file {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "Invariants file {} is {size} bytes; the limit is {limit} bytes",
        .path.display()
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// A user- or model-supplied path that does not stay inside the workspace.
    #[error("Refusing invariants path `{given}`: {reason}")]
    Refused { given: String, reason: PathRefusal },
}

impl InvariantsError {
    /// A stable machine-readable code (shared vocabulary with the other core errors).
    pub fn code(&self) -> ErrorCode {
        match self {
            InvariantsError::Invalid { .. } | InvariantsError::TooLarge { .. } => {
                ErrorCode::InvalidInput
            }
            InvariantsError::NotFound { .. } => ErrorCode::FileNotFound,
            InvariantsError::Read { .. } => ErrorCode::IoError,
            InvariantsError::Refused { reason, .. } => match reason {
                PathRefusal::Empty | PathRefusal::NotAFile => ErrorCode::InvalidInput,
                PathRefusal::ParentEscape
                | PathRefusal::OutsideWorkspace { .. }
                | PathRefusal::SymlinkEscape { .. } => ErrorCode::PathOutsideWorkspace,
            },
        }
    }

    /// The positioned errors of an invalid file (empty for the other kinds).
    pub fn problems(&self) -> &[Problem] {
        match self {
            InvariantsError::Invalid { problems, .. } => problems,
            _ => &[],
        }
    }
}

/// Why a path was refused by [`resolve_invariants_path`](super::resolve_invariants_path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathRefusal {
    #[error("the path is empty")]
    Empty,
    #[error("`..` climbs out of the workspace")]
    ParentEscape,
    #[error("it is outside the workspace {}", .workspace.display())]
    OutsideWorkspace { workspace: PathBuf },
    #[error("it resolves (through a symlink) to {}, outside the workspace", .target.display())]
    SymlinkEscape { target: PathBuf },
    #[error("it is not a regular file")]
    NotAFile,
}

fn render_problems(path: &Path, problems: &[Problem]) -> String {
    let mut out = String::new();
    for (idx, problem) in problems.iter().enumerate() {
        if idx > 0 {
            out.push('\n');
        }
        out.push_str(&problem.display(path).to_string());
    }
    if problems.is_empty() {
        out = format!("{}: invalid invariants file", path.display());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_render_one_per_line_with_position_and_rule() {
        let err = InvariantsError::Invalid {
            path: PathBuf::from(".review-invariants.yml"),
            problems: vec![
                Problem {
                    line: 3,
                    column: 15,
                    rule_id: Some("no-eval".into()),
                    message: "Unknown severity `urgent`".into(),
                },
                Problem {
                    line: 9,
                    column: 1,
                    rule_id: None,
                    message: "expected a list".into(),
                },
            ],
            warnings: Vec::new(),
        };
        assert_eq!(
            err.to_string(),
            ".review-invariants.yml:3:15: rule no-eval: Unknown severity `urgent`\n.review-invariants.yml:9:1: expected a list"
        );
        assert_eq!(err.code(), "INVALID_INPUT");
        assert_eq!(err.problems().len(), 2);
    }

    #[test]
    fn refusals_have_their_own_code() {
        let err = InvariantsError::Refused {
            given: "../x.yml".into(),
            reason: PathRefusal::ParentEscape,
        };
        assert_eq!(err.code(), "PATH_OUTSIDE_WORKSPACE");
        assert_eq!(
            err.to_string(),
            "Refusing invariants path `../x.yml`: `..` climbs out of the workspace"
        );
    }
}
