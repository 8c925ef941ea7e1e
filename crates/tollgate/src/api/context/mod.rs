//! The context operations agents and reviews draw on, as a thin API over the hybrid index
//! (`tollgate-index`): searches (`semantic_search`, `codebase_retrieval`, `search_tests_for`),
//! context bundles within a token budget (`get_context_for_prompt`), path-safe file reads
//! (`get_file`), commit retrieval (`git_commit_retrieval`), regex search (`regex_search`),
//! the symbol graph (`symbol_graph`, `search_callers_for`) and indexing (`index_workspace`,
//! `index_status`). Requests and results are plain serde + schemars types with upstream's
//! field names and defaults ([`request`]).
//!
//! Searches build the index on first use when the workspace has none; they never re-index an
//! existing index behind the caller's back (`index_workspace` does that).

pub mod dialects;
mod files;
mod history;
mod ops;
pub mod request;

use crate::ErrorCode;
use crate::workspace::{IndexError, PathError};
pub use files::get_file;
pub use history::{PathCommit, path_commits};
pub use ops::{
    build_index_if_missing, codebase_retrieval, get_context_for_prompt, git_commit_retrieval,
    index_progress, index_status, index_workspace, rebuild_index, regex_search, search_callers_for,
    search_channels, search_tests_for, semantic_search, symbol_graph,
};

/// A context operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    #[error("{field}: {message}")]
    InvalidInput {
        field: &'static str,
        message: String,
    },
    #[error("{path}: no such file in the workspace")]
    FileNotFound { path: String },
    #[error(
        "{path}: outside the workspace (paths are relative to its root; symlinks may not leave it)"
    )]
    OutsideWorkspace { path: String },
    #[error("{path}: {message}")]
    Unreadable { path: String, message: String },
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl ContextError {
    /// The workspace or its index directory could not be opened (a missing root, a `.tollgate`
    /// link): the path and why, as `IO_ERROR`.
    pub fn unreadable(err: PathError) -> ContextError {
        ContextError::Unreadable {
            path: err.path().to_string(),
            message: err.reason(),
        }
    }

    /// The stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ContextError::InvalidInput { .. } => ErrorCode::InvalidInput,
            ContextError::FileNotFound { .. } => ErrorCode::FileNotFound,
            ContextError::OutsideWorkspace { .. } => ErrorCode::PathOutsideWorkspace,
            ContextError::Unreadable { .. } => ErrorCode::IoError,
            // The index crate sits below the core and spells its codes itself; every one of
            // them is an `ErrorCode` (tested below).
            ContextError::Index(err) => err.code().parse().unwrap_or(ErrorCode::IndexError),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ContextError::InvalidInput { field, .. } => Some(field),
            ContextError::FileNotFound { .. } | ContextError::OutsideWorkspace { .. } => {
                Some("path")
            }
            ContextError::Index(IndexError::InvalidInput(_)) => None,
            _ => None,
        }
    }
}
