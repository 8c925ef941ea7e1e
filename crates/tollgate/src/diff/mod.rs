//! Unified diffs: the model, a strict parser for git diffs and plain patches, changed-line
//! maps, and diffs read straight from a repository through git2.

mod changed;
mod git;
mod model;
mod parse;

pub use changed::ChangedLines;
pub use git::{DiffSpec, GitDiff, GitError, diff_from_repo};
pub use model::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
pub use parse::{DiffError, parse};
