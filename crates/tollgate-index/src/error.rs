//! The index's errors, each with a stable machine code.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "another indexer (pid {pid}) is updating the index at {}; wait for it to finish (searches keep working meanwhile)",
        dir.display()
    )]
    Busy { pid: String, dir: PathBuf },
    #[error("no index at {}: run `tollgate index` first", .0.display())]
    NotIndexed(PathBuf),
    /// A search would build an index of a directory no repository bounds (`/tmp`, a home).
    #[error(
        "no index for {}, and it is not inside a git work tree, so a search does not index it on its own (it could be all of /tmp or a home directory): search from inside a repository, or run `tollgate index --repo {}` to index that directory deliberately",
        .0.display(), .0.display()
    )]
    NotAWorkTree(PathBuf),
    #[error("the index at {} is unreadable: {detail}; run `tollgate index` to rebuild it", dir.display())]
    Corrupt { dir: PathBuf, detail: String },
    #[error("search engine error: {0}")]
    Engine(String),
    #[error("embedder: {0}")]
    Embedder(String),
    #[error("git: {0}")]
    Git(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The caller asked to stop; the index is as it was before the update.
    #[error(
        "indexing was cancelled before anything was committed; the previous index is unchanged"
    )]
    Cancelled,
}

impl IndexError {
    pub(crate) fn io(path: impl AsRef<Path>, source: std::io::Error) -> IndexError {
        IndexError::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// The stable machine code of this error: one of [`ERROR_CODES`].
    pub fn code(&self) -> &'static str {
        match self {
            IndexError::Io { .. } => "IO_ERROR",
            IndexError::Busy { .. } => "INDEX_BUSY",
            IndexError::NotIndexed(_) | IndexError::NotAWorkTree(_) => "INDEX_NOT_FOUND",
            IndexError::Corrupt { .. } => "INDEX_CORRUPT",
            IndexError::Engine(_) => "INDEX_ERROR",
            IndexError::Embedder(_) => "EMBEDDER_ERROR",
            IndexError::Git(_) => "GIT_ERROR",
            IndexError::InvalidInput(_) => "INVALID_INPUT",
            IndexError::Cancelled => "CANCELLED",
        }
    }
}

impl From<tantivy::TantivyError> for IndexError {
    fn from(err: tantivy::TantivyError) -> IndexError {
        IndexError::Engine(err.to_string())
    }
}

impl From<git2::Error> for IndexError {
    fn from(err: git2::Error) -> IndexError {
        IndexError::Git(err.message().to_string())
    }
}

/// Every code [`IndexError::code`] returns; the core checks each is one of its `ErrorCode`s.
pub const ERROR_CODES: &[&str] = &[
    "IO_ERROR",
    "INDEX_BUSY",
    "INDEX_NOT_FOUND",
    "INDEX_CORRUPT",
    "INDEX_ERROR",
    "EMBEDDER_ERROR",
    "GIT_ERROR",
    "INVALID_INPUT",
    "CANCELLED",
];

#[cfg(test)]
mod code_tests {
    use super::*;

    #[test]
    fn every_code_is_listed() {
        let errors = [
            IndexError::io("x", std::io::Error::other("x")),
            IndexError::NotIndexed("x".into()),
            IndexError::Corrupt {
                dir: "x".into(),
                detail: "x".into(),
            },
            IndexError::Engine("x".into()),
            IndexError::Embedder("x".into()),
            IndexError::Git("x".into()),
            IndexError::InvalidInput("x".into()),
            IndexError::Cancelled,
        ];
        for err in &errors {
            assert!(ERROR_CODES.contains(&err.code()), "{}", err.code());
        }
    }
}
