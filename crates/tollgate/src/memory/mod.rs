//! The knowledge store: entries agents and people keep beside the code index (a thread, a
//! source, text, tags, free-form JSON metadata, images), found again by filters, full-text
//! search (SQLite FTS5, BM25), semantic search (the index crate's embedders) and both fused by
//! reciprocal rank fusion.
//!
//! Every value here is typed and validated: the `api::memory` layer parses the wire once into
//! these types (base64 decoded, operators and modes named, dates read), this module checks what
//! only the domain knows (sizes, MIME types against the bytes, tags, metadata paths), masks
//! secrets in everything it is about to store (and counts them) and embeds the text before the
//! store's one transaction. Filters always apply before a search's cut. The SQL lives in
//! `store::memory`.

mod answer;
mod entry;
mod filter;
mod fts;
mod note;
mod ops;
mod patch;
pub(crate) mod vector;

use crate::ErrorCode;
use crate::store::StoreError;

pub use answer::{
    ANSWER_SYSTEM, ContextItem, PackMode, Packed, answer_prompt, answer_schema, pack,
};
pub use entry::{
    ContentType, Entry, Image, ImageMime, MAX_IMAGE_BYTES, MAX_IMAGES, MAX_TAG_CHARS, MAX_TAGS,
    MAX_TEXT_BYTES, NewEntry, Source, format_ms, normalize_filter_tags, stored_thread_id,
};
pub use filter::{DateBound, Filter, MetadataCondition, MetadataPath, Operator, Page, parse_date};
pub use fts::{FtsMode, FtsQuery};
pub use note::{
    KIND_KEY, LANGUAGE_KEY, NOTES_THREAD, NoteKind, PATH_KEY, PRIORITY_KEY, Priority, TOPIC_KEY,
    highlights,
};
#[cfg(test)]
pub(crate) use ops::tests as ops_tests;
pub use ops::{
    DeleteCriteria, EntryUpdate, HybridOutcome, HybridScores, MAX_DELETE_IDS, Memory,
    MetadataChange, Scored, SearchArm, Statistics, Stored, ThreadSummary, rrf,
};
pub use patch::merge_patch;

/// Why a memory operation refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    #[error("{field}: {message}")]
    InvalidInput { field: String, message: String },
    #[error("{field}: {message}")]
    TooLarge { field: String, message: String },
    #[error("{field}: no memory entry has id {}", list_ids(.ids))]
    NotFound { field: String, ids: Vec<i64> },
    #[error("The embedder failed: {0}")]
    Embedder(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl MemoryError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> MemoryError {
        MemoryError::InvalidInput {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            MemoryError::InvalidInput { .. } => ErrorCode::InvalidInput,
            MemoryError::TooLarge { .. } => ErrorCode::InputTooLarge,
            MemoryError::NotFound { .. } => ErrorCode::MemoryNotFound,
            MemoryError::Embedder(_) => ErrorCode::EmbedderError,
            MemoryError::Store(err) => err.code(),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&str> {
        match self {
            MemoryError::InvalidInput { field, .. }
            | MemoryError::TooLarge { field, .. }
            | MemoryError::NotFound { field, .. } => Some(field),
            MemoryError::Embedder(_) | MemoryError::Store(_) => None,
        }
    }

    /// The same error with its field under `prefix` (`entries[2].` + `text`).
    pub fn within(self, prefix: &str) -> MemoryError {
        match self {
            MemoryError::InvalidInput { field, message } => MemoryError::InvalidInput {
                field: format!("{prefix}{field}"),
                message,
            },
            MemoryError::TooLarge { field, message } => MemoryError::TooLarge {
                field: format!("{prefix}{field}"),
                message,
            },
            MemoryError::NotFound { field, ids } => MemoryError::NotFound {
                field: format!("{prefix}{field}"),
                ids,
            },
            other => other,
        }
    }
}

fn list_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
