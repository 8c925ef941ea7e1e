//! Unified diffs: the model, a strict parser for git diffs and plain patches, a renderer back
//! to git's format, changed-line maps, and diffs read straight from a repository through git2.
//!
//! [`parse`] turns bytes into a [`Diff`], which owns them; files, hunks and lines refer to the
//! bytes by range. [`ChangedLines`] answers "is this line added / inside a hunk?" for
//! anchoring findings and inline comments. [`diff_from_repo`] asks git for a diff and runs it
//! through the same parser, so there is one code path for diffs from anywhere. [`render`]
//! writes a model back out (the parser's round-trip tests and fuzz target rely on it).
//! [`read_file_at_commit`] reads a file as a commit has it (a pull request's gate configuration
//! comes from its base), and [`is_shallow`] tells a shallow CI checkout from a missing commit.

mod changed;
mod commit_files;
mod git;
mod model;
mod parse;
mod render;
#[cfg(test)]
mod testutil;

pub use changed::ChangedLines;
pub use commit_files::{
    HistoryCommit, configured_user, first_parent_history, is_shallow, read_file_at_commit,
    read_files_at_commit,
};
pub use git::{DiffSpec, GitDiff, GitError, HeadInfo, diff_from_repo, head_info};
pub use model::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
pub use parse::{DiffError, DiffErrorKind, parse};
pub use render::render;
