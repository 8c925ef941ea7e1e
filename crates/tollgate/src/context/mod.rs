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

mod files;
mod ops;
pub mod request;

use crate::ErrorCode;
use std::path::{Path, PathBuf};

pub use files::get_file;
pub use ops::{
    build_index_if_missing, codebase_retrieval, get_context_for_prompt, git_commit_retrieval,
    index_progress, index_status, index_workspace, regex_search, search_callers_for,
    search_tests_for, semantic_search, symbol_graph,
};
use tollgate_index::IndexConfig;

use crate::control::Control;
pub use tollgate_index::{Embedder, HashedEmbedder, HttpEmbedder, IndexError, Progress};

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

/// The workspace the operations work on: its root (through which every path argument is
/// confined), its index and the embedder the index uses.
#[derive(Debug)]
pub struct Workspace {
    paths: crate::workspace::Workspace,
    index: IndexConfig,
    embedder: Box<dyn Embedder>,
    /// Watches and stops the index build a search starts when there is no index yet.
    control: Control,
}

impl Workspace {
    /// `root` is canonicalised (every path argument resolves inside it); the index lives in
    /// `<root>/.tollgate/index` (refused when `.tollgate` is a symbolic link: a repository could
    /// point it anywhere) and uses the built-in hashed embedder.
    pub fn open(root: &Path) -> Result<Workspace, ContextError> {
        let paths =
            crate::workspace::Workspace::new(root).map_err(|err| ContextError::Unreadable {
                path: root.display().to_string(),
                message: err.to_string(),
            })?;
        let mut index = IndexConfig::new(paths.root());
        index.dir = paths
            .state_dir("index")
            .map_err(|err| ContextError::Unreadable {
                path: err.path().to_string(),
                message: err.reason(),
            })?;
        Ok(Workspace {
            paths,
            index,
            embedder: Box::new(HashedEmbedder),
            control: Control::default(),
        })
    }

    /// Reports the index build a search may start (see the module docs) to `control`, and
    /// stops it when `control` is cancelled.
    pub fn with_control(mut self, control: Control) -> Workspace {
        self.control = control;
        self
    }

    /// Reads at most `depth` commits (newest first) when the history channel is built.
    pub fn with_history_depth(mut self, depth: usize) -> Workspace {
        self.index.max_commits = depth;
        self
    }

    /// Keeps the index somewhere else.
    pub fn with_index_dir(mut self, dir: PathBuf) -> Workspace {
        self.index.dir = dir;
        self
    }

    /// Uses another embedder (an index built with a different one is rebuilt by the next
    /// `index_workspace`).
    pub fn with_embedder(mut self, embedder: Box<dyn Embedder>) -> Workspace {
        self.embedder = embedder;
        self
    }

    pub fn root(&self) -> &Path {
        self.paths.root()
    }

    /// The root as the confinement type every path argument goes through.
    pub fn paths(&self) -> &crate::workspace::Workspace {
        &self.paths
    }

    pub fn index_config(&self) -> &IndexConfig {
        &self.index
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    /// Creates the default index directory (with the state root's `.gitignore`) before an index
    /// is written; an index kept elsewhere is the caller's to place.
    pub(crate) fn prepare_index_dir(&self) -> Result<(), ContextError> {
        let unreadable = |err: crate::workspace::PathError| ContextError::Unreadable {
            path: err.path().to_string(),
            message: err.reason(),
        };
        if self.paths.state_dir("index").map_err(unreadable)? == self.index.dir {
            self.paths.create_state_dir("index").map_err(unreadable)?;
        }
        Ok(())
    }
}
