//! Placeholder.
#[derive(Debug)]
pub enum DiffSpec {
    Staged,
}
#[derive(Debug)]
pub struct GitDiff;
#[derive(Debug, thiserror::Error)]
#[error("git")]
pub struct GitError;
pub fn diff_from_repo() {}
