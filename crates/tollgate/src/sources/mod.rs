//! Sources: documents a team keeps elsewhere (a directory of files, a git repository at a ref,
//! what a Lua script fetches) synced into the knowledge store, one entry per document in the
//! thread `dir:<name>`, `git:<name>` or `script:<name>`, so the searches find them beside
//! notes and code.
//!
//! A sync reads every document of the source ([`connectors`], [`script`]), then compares it
//! with what the thread holds by the document's id: a new id is stored, a changed content hash
//! updates the entry, an id no longer read deletes it, and the rest is untouched (so syncing
//! twice changes nothing). Entries go through [`Memory`], which masks secrets as it does for
//! every entry. A source is bounded by `max_documents` and `max_bytes`: past either, the sync
//! stops with an error naming the source and the setting, before anything is written.

mod connectors;
#[cfg(feature = "usertools")]
mod script;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::ErrorCode;
use crate::config::{SourceConfig, SourceKind};
use crate::memory::{
    EntryUpdate, Filter, MAX_TEXT_BYTES, Memory, MemoryError, MetadataChange, NewEntry, Page,
    Source,
};

/// Metadata keys of a source's entries.
pub const DOC_ID_KEY: &str = "doc_id";
pub const TITLE_KEY: &str = "title";
pub const URL_KEY: &str = "url";
pub const UPDATED_AT_KEY: &str = "updated_at";
pub const CONTENT_HASH_KEY: &str = "content_hash";
/// The thread prefixes of synced sources.
pub const SOURCE_KINDS: [&str; 3] = ["dir", "git", "script"];
/// Entries written or updated in one store call.
const BATCH: usize = 256;

/// One document a source read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Unique within the source (a file's workspace-relative path, a ticket key).
    pub id: String,
    pub title: String,
    /// `None` only from a script, for a document whose `updated_at` is the stored one: it is
    /// unchanged, and the script need not fetch it again.
    pub body: Option<String>,
    pub url: Option<String>,
    pub updated_at: Option<String>,
}

/// A file a connector did not take, and why (too large for an entry, not text, a link out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    pub id: String,
    pub reason: String,
}

/// What one source's sync did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SourceSync {
    pub name: String,
    pub kind: String,
    /// The knowledge-store thread (`dir:<name>`), also its `source` in `/tools/search`.
    pub thread: String,
    /// Documents the source holds now.
    pub documents: usize,
    pub added: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub deleted: usize,
    /// Bytes of the bodies read.
    pub bytes: u64,
    pub secrets_masked: usize,
    pub skipped: Vec<Skipped>,
}

/// Why a sync stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    #[error("source `{name}`: {message}")]
    Invalid { name: String, message: String },
    #[error("source `{name}`: {message}")]
    TooLarge { name: String, message: String },
    #[error("source `{name}`: {message}")]
    Path {
        name: String,
        message: String,
        code: ErrorCode,
    },
    #[error("source `{name}`: {message}")]
    Git { name: String, message: String },
    #[error("source `{name}`: {message}")]
    Script {
        name: String,
        message: String,
        code: ErrorCode,
    },
    #[error("source `{name}`: {error}")]
    Memory {
        name: String,
        #[source]
        error: MemoryError,
    },
}

impl SourceError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SourceError::Invalid { .. } => ErrorCode::InvalidInput,
            SourceError::TooLarge { .. } => ErrorCode::InputTooLarge,
            SourceError::Path { code, .. } | SourceError::Script { code, .. } => *code,
            SourceError::Git { .. } => ErrorCode::GitError,
            SourceError::Memory { error, .. } => error.code(),
        }
    }

    pub(crate) fn invalid(source: &SourceConfig, message: impl Into<String>) -> SourceError {
        SourceError::Invalid {
            name: source.name.clone(),
            message: message.into(),
        }
    }
}

/// Runs a script source's `source.fetch(since)` and returns what it returned, or the error's
/// code and message. The runner (the user tools' sandbox) lives in the `api` layer, which hands
/// it in: this module does not reach up to it.
pub type ScriptRunner<'a> = &'a (
        dyn Fn(
    &SourceConfig,
    &crate::workspace::RepoPath,
    Option<String>,
) -> Result<serde_json::Value, (crate::ErrorCode, String)>
            + Sync
    );

/// What a sync may reach besides the source's files: the front end's environment (for a
/// script's configuration layers and host API) and the script runner.
#[derive(Clone, Copy)]
pub struct SyncContext<'a> {
    /// The workspace root (canonical).
    pub root: &'a Path,
    pub env: &'a [(String, String)],
    /// `None` in a build without the user tools: script sources are then refused.
    pub run_script: Option<ScriptRunner<'a>>,
}

impl std::fmt::Debug for SyncContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncContext")
            .field("root", &self.root)
            .field("scripts", &self.run_script.is_some())
            .finish()
    }
}

/// A stored entry of a source, by document id.
struct StoredDoc {
    entry_id: i64,
    hash: String,
    updated_at: Option<String>,
}

/// Syncs one source into its thread.
pub fn sync_source(
    context: SyncContext<'_>,
    source: &SourceConfig,
    memory: &Memory<'_>,
) -> Result<SourceSync, SourceError> {
    let thread = source.thread();
    let in_store = |error: MemoryError| SourceError::Memory {
        name: source.name.clone(),
        error,
    };
    let stored = stored_docs(memory, &thread).map_err(in_store)?;
    let mut skipped = Vec::new();
    let documents = match &source.kind {
        SourceKind::Dir { path } => connectors::read_dir(context.root, source, path, &mut skipped)?,
        SourceKind::Git {
            repo,
            git_ref,
            path,
        } => connectors::read_git(
            context.root,
            source,
            repo.as_ref(),
            git_ref,
            path.as_ref(),
            &mut skipped,
        )?,
        SourceKind::Script { script } => {
            let since = stored
                .values()
                .filter_map(|doc| doc.updated_at.clone())
                .max();
            fetch_script(context, source, script, since)?
        }
    };
    // Stored ids are masked like everything stored: a document is known again by its id as
    // stored, or an id holding a secret would be deleted and added on every sync.
    let keys: Vec<String> = documents
        .iter()
        .map(|document| crate::secrets::scrub(&document.id, 0, 0).text)
        .collect();
    let mut seen = BTreeSet::new();
    let mut bytes = 0u64;
    for (document, key) in documents.iter().zip(&keys) {
        if !seen.insert(key.as_str()) {
            return Err(SourceError::invalid(
                source,
                format!("two documents have the id `{key}`"),
            ));
        }
        bytes += document.body.as_ref().map_or(0, |body| body.len() as u64);
    }
    check_bounds(source, documents.len(), bytes)?;

    let mut new_entries = Vec::new();
    let mut updates = Vec::new();
    let mut unchanged = 0;
    for (document, key) in documents.iter().zip(&keys) {
        let known = stored.get(key);
        let Some(body) = &document.body else {
            match known {
                Some(doc) if doc.updated_at.is_some() && doc.updated_at == document.updated_at => {
                    unchanged += 1;
                    continue;
                }
                _ => {
                    return Err(SourceError::invalid(
                        source,
                        format!(
                            "document `{key}` has no body, and its updated_at is not the stored one"
                        ),
                    ));
                }
            }
        };
        let hash = content_hash(document, body);
        if known.is_some_and(|doc| doc.hash == hash) {
            unchanged += 1;
            continue;
        }
        let text = entry_text(&document.title, body);
        if text.len() > MAX_TEXT_BYTES {
            return Err(SourceError::TooLarge {
                name: source.name.clone(),
                message: format!(
                    "document `{key}` is {} bytes, over the {MAX_TEXT_BYTES} an entry holds",
                    text.len()
                ),
            });
        }
        let metadata = metadata_of(source, document, &hash);
        match known {
            Some(doc) => updates.push(
                EntryUpdate::new(
                    doc.entry_id,
                    Some(&text),
                    Some(MetadataChange::Replace(metadata)),
                    None,
                    None,
                )
                .map_err(in_store)?,
            ),
            None => new_entries.push(
                NewEntry::new(&thread, Source::User, &text, metadata, &[], Vec::new())
                    .map_err(in_store)?,
            ),
        }
    }
    let gone: Vec<i64> = stored
        .iter()
        .filter(|(id, _)| !seen.contains(id.as_str()))
        .map(|(_, doc)| doc.entry_id)
        .collect();

    let mut secrets_masked = 0;
    for batch in new_entries.chunks(BATCH) {
        for stored in memory.store_entries(batch, true).map_err(in_store)? {
            secrets_masked += stored.map_err(in_store)?.n_secrets_scrubbed;
        }
    }
    for batch in updates.chunks(BATCH) {
        for masked in memory.update(batch, true).map_err(in_store)? {
            secrets_masked += masked.map_err(in_store)?;
        }
    }
    for batch in gone.chunks(crate::memory::MAX_DELETE_IDS) {
        memory
            .delete(&crate::memory::DeleteCriteria {
                ids: batch.to_vec(),
                thread_ids: vec![thread.clone()],
                ..Default::default()
            })
            .map_err(in_store)?;
    }
    Ok(SourceSync {
        name: source.name.clone(),
        kind: source.kind.as_str().to_string(),
        thread,
        documents: documents.len(),
        added: new_entries.len(),
        updated: updates.len(),
        unchanged,
        deleted: gone.len(),
        bytes,
        secrets_masked,
        // What is reported is masked as what is stored.
        skipped: skipped
            .into_iter()
            .map(|skip| Skipped {
                id: crate::secrets::scrub(&skip.id, 0, 0).text,
                reason: skip.reason,
            })
            .collect(),
    })
}

/// Whether `thread` is a synced source's (`dir:…`, `git:…`, `script:…`).
pub fn is_source_thread(thread: &str) -> bool {
    thread
        .split_once(':')
        .is_some_and(|(kind, name)| SOURCE_KINDS.contains(&kind) && !name.is_empty())
}

/// Refuses a source past its bounds, before anything is written.
pub(crate) fn check_bounds(
    source: &SourceConfig,
    documents: usize,
    bytes: u64,
) -> Result<(), SourceError> {
    if documents > source.max_documents {
        return Err(SourceError::TooLarge {
            name: source.name.clone(),
            message: format!(
                "{documents} documents or more, over its limit of {} (sources.{}.max_documents)",
                source.max_documents, source.name
            ),
        });
    }
    if bytes > source.max_bytes {
        return Err(SourceError::TooLarge {
            name: source.name.clone(),
            message: format!(
                "{bytes} bytes of documents or more, over its limit of {} (sources.{}.max_bytes)",
                source.max_bytes, source.name
            ),
        });
    }
    Ok(())
}

fn fetch_script(
    context: SyncContext<'_>,
    source: &SourceConfig,
    script: &crate::workspace::RepoPath,
    since: Option<String>,
) -> Result<Vec<Document>, SourceError> {
    let Some(run) = context.run_script else {
        return Err(SourceError::invalid(
            source,
            "script sources need Tollgate built with the `usertools` feature",
        ));
    };
    script::fetch(run, source, script, since)
}

/// The thread's entries by document id. An entry without a document id (written there by
/// hand) is left alone.
fn stored_docs(
    memory: &Memory<'_>,
    thread: &str,
) -> Result<BTreeMap<String, StoredDoc>, MemoryError> {
    let filter = Filter {
        thread_id: Some(thread.to_string()),
        ..Filter::default()
    };
    let page = Page {
        limit: usize::try_from(u32::MAX).unwrap_or(usize::MAX),
        offset: 0,
    };
    let mut docs = BTreeMap::new();
    for entry in memory.list(&filter, page, false)? {
        let text = |key: &str| entry.metadata.get(key).and_then(Value::as_str);
        let Some(id) = text(DOC_ID_KEY) else { continue };
        docs.insert(
            id.to_string(),
            StoredDoc {
                entry_id: entry.id,
                hash: text(CONTENT_HASH_KEY).unwrap_or_default().to_string(),
                updated_at: text(UPDATED_AT_KEY).map(str::to_string),
            },
        );
    }
    Ok(docs)
}

/// What decides that a document changed: its title, url and body (not `updated_at`, which a
/// touched file changes alone).
fn content_hash(document: &Document, body: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [
        document.title.as_str(),
        document.url.as_deref().unwrap_or_default(),
        body,
    ] {
        hasher.update(part.len().to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The entry's text: the title on the first line (what a search shows as its title), then the
/// body.
fn entry_text(title: &str, body: &str) -> String {
    if body.trim().is_empty() {
        title.to_string()
    } else {
        format!("{title}\n\n{body}")
    }
}

fn metadata_of(source: &SourceConfig, document: &Document, hash: &str) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("source".to_string(), Value::from(source.name.as_str()));
    metadata.insert(DOC_ID_KEY.to_string(), Value::from(document.id.as_str()));
    metadata.insert(TITLE_KEY.to_string(), Value::from(document.title.as_str()));
    if let Some(url) = &document.url {
        metadata.insert(URL_KEY.to_string(), Value::from(url.as_str()));
    }
    if let Some(updated_at) = &document.updated_at {
        metadata.insert(UPDATED_AT_KEY.to_string(), Value::from(updated_at.as_str()));
    }
    metadata.insert(CONTENT_HASH_KEY.to_string(), Value::from(hash));
    metadata
}

/// A file's title: its first non-empty line without Markdown's `#`s, else its name.
pub(crate) fn title_of_file(path: &str, body: &str) -> String {
    let line = body
        .lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let title: String = line.chars().take(120).collect();
    if title.is_empty() {
        path.rsplit('/').next().unwrap_or(path).to_string()
    } else {
        title
    }
}

#[cfg(test)]
mod tests;
