//! Static analyzers in the review: tsc and semgrep run on the changed files, and results of any
//! SARIF 2.1.0 producer imported, all turned into [`Finding`](crate::findings::Finding)s scoped
//! to the diff.
//!
//! [`run_static_analysis`] is the core operation behind upstream's MCP tool of that name;
//! [`prepare_for_review`] is how the review pipeline runs the same analyzers concurrently with
//! its deterministic checks. Underneath, one file per concern:
//!
//! - `discover`: explicit path, then `node_modules/.bin`, then `PATH`; the tool's version.
//! - `process`: argument vectors (never a shell), a deadline, a process group killed whole on
//!   timeout, output read up to a byte limit.
//! - `tsc`, `semgrep`, `sarif_import`: one file per producer, each turning output into findings.
//! - `orchestrate`: a thread per analyzer under a shared budget, then scoping to changed lines
//!   or files, anchoring for fingerprints, and the per-analyzer cap, with everything left out
//!   counted.
//! - `workspace`: which paths may reach a command line, and making reported paths relative.
//!
//! A tool that is absent, crashes or times out is a status (`unavailable`, `failed`,
//! `timed_out`) with a reason in the result, never `executed` and never an error of the run.

mod discover;
mod orchestrate;
mod prepare;
mod sarif_import;
mod semgrep;
mod tsc;
mod workspace;

pub(crate) use orchestrate::{AnalysisPlan, analyze};
pub use prepare::{AnalysisError, AnalysisOutcome, PreparedAnalysis, prepare_for_review};
pub(crate) use prepare::{checked_files, open_workspace};
pub use sarif_import::SarifImportError;
pub(crate) use sarif_import::import as import_sarif;
