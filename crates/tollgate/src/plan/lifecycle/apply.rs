//! Writing a step's file changes into the workspace, safely and reversibly.
//!
//! [`apply_changes`] takes the operations a model proposed for one step (create, modify, delete,
//! rename) and either applies all of them or none:
//!
//! 1. Every path is checked before anything is touched: relative, no `..`, nothing under `.git`
//!    or `.tollgate`, and after resolving symlinks still inside the workspace; a path that is
//!    itself a symlink is refused (a write would land wherever the link points). The
//!    preconditions are checked too (a create finds nothing there, a modify finds a file).
//! 2. The previous content of every file touched is copied to `.tollgate/backups/<batch>/`, and
//!    the batch is recorded in the store (`plan_applied_changes`), with the temporary files its
//!    writes may leave, in one transaction before the first write, under an entry of the apply
//!    journal ([`crate::plan::lifecycle::journal`]): a crash mid-batch is rolled back by the next plan
//!    command ([`roll_back_rows`] from the backups, [`remove_temp_files`]).
//! 3. Each file is written to a temporary file beside it and renamed over the target (atomic on
//!    one file system); a failure midway restores what was already written.
//!
//! [`undo_batch`] reverses a batch from its backups, refusing files edited since. [`preview`]
//! gives the same operations as unified diffs (similar) without writing.

use crate::ErrorCode;
use std::io::Write;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::now_rfc3339;
use crate::plan::lifecycle::journal::{self, OpenJournal};
use crate::store::apply_journal::state as journal_state;
use crate::store::plans::AppliedChangeRow;
use crate::store::{Store, StoreError};
use crate::workspace::{RepoPath, STATE_DIR, Workspace};

/// The largest file content an operation may carry.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;
/// The most operations one step may apply.
pub const MAX_OPERATIONS: usize = 200;
/// Where backups go, relative to the workspace.
pub const BACKUP_DIR: &str = ".tollgate/backups";

/// One change to one file, as a model proposes it for a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "operation", rename_all = "snake_case", deny_unknown_fields)]
pub enum FileOperation {
    /// A new file; nothing may exist at `path`.
    Create { path: String, content: String },
    /// Replaces the whole content of an existing file.
    Modify { path: String, content: String },
    /// Removes an existing file.
    Delete { path: String },
    /// Moves an existing file to `new_path` (nothing may exist there), optionally with new
    /// content.
    Rename {
        path: String,
        new_path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
}

impl FileOperation {
    /// The path the operation starts from.
    pub fn path(&self) -> &str {
        match self {
            FileOperation::Create { path, .. }
            | FileOperation::Modify { path, .. }
            | FileOperation::Delete { path }
            | FileOperation::Rename { path, .. } => path,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            FileOperation::Create { .. } => "create",
            FileOperation::Modify { .. } => "modify",
            FileOperation::Delete { .. } => "delete",
            FileOperation::Rename { .. } => "rename",
        }
    }

    fn new_content(&self) -> Option<&str> {
        match self {
            FileOperation::Create { content, .. } | FileOperation::Modify { content, .. } => {
                Some(content)
            }
            FileOperation::Rename { content, .. } => content.as_deref(),
            FileOperation::Delete { .. } => None,
        }
    }
}

/// One file operation as previewed: its unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileDiff {
    pub operation: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
    /// `--- a/… +++ b/…` unified diff (3 lines of context); empty for a pure rename.
    pub diff: String,
    pub lines_added: usize,
    pub lines_removed: usize,
}

/// What [`apply_changes`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AppliedBatch {
    /// Identifies the batch for [`undo_batch`].
    pub batch_id: String,
    /// Workspace-relative paths written, created, deleted or renamed (both names of a rename).
    pub files_applied: Vec<String>,
    /// Backups of the previous contents, workspace-relative.
    pub backups_created: Vec<String>,
}

/// Why changes were not applied (nothing was written when this is returned, except where the
/// variant says so).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    #[error("Refused path `{path}`: {reason}")]
    UnsafePath { path: String, reason: String },
    #[error("Cannot {operation} `{path}`: {reason}")]
    Precondition {
        operation: &'static str,
        path: String,
        reason: String,
    },
    #[error("Too many file operations in one step: {count} (at most {MAX_OPERATIONS})")]
    TooMany { count: usize },
    #[error("The workspace root {path} cannot be resolved: {source}")]
    Workspace {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Writing `{path}` failed: {source}; every file of the step was restored")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "Writing `{path}` failed: {source}; restoring the step's earlier files also failed ({restore}); backups are in {backup_dir}"
    )]
    RestoreFailed {
        path: String,
        #[source]
        source: std::io::Error,
        restore: String,
        backup_dir: String,
    },
    #[error("Change batch `{0}` not found")]
    BatchNotFound(String),
    #[error("Cannot undo batch `{batch_id}`: {reason}")]
    Undo { batch_id: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ApplyError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApplyError::UnsafePath { .. }
            | ApplyError::TooMany { .. }
            | ApplyError::Precondition { .. } => ErrorCode::InvalidInput,
            ApplyError::BatchNotFound(_) => ErrorCode::FileNotFound,
            ApplyError::Workspace { .. }
            | ApplyError::Io { .. }
            | ApplyError::RestoreFailed { .. }
            | ApplyError::Undo { .. } => ErrorCode::ExecutionFailed,
            ApplyError::Store(err) => err.code(),
        }
    }
}

/// A workspace path checked to be safe to write.
#[derive(Debug, Clone)]
struct Target {
    /// As given, normalised to `/` separators.
    rel: String,
    /// Absolute, under the canonical root.
    abs: PathBuf,
}

/// The canonical workspace root.
pub(crate) fn canonical_root(workspace: &Path) -> Result<PathBuf, ApplyError> {
    workspace
        .canonicalize()
        .map_err(|source| ApplyError::Workspace {
            path: workspace.to_path_buf(),
            source,
        })
}

/// Checks `path` (from a model or a user) and resolves it under `root` for writing: the
/// workspace's rules ([`Workspace::writable`]: no `..`, not absolute, not a link, not under
/// `.git` in any letter case), and nothing under `.tollgate`.
fn resolve(root: &Path, path: &str) -> Result<Target, ApplyError> {
    let refuse = |reason: String| ApplyError::UnsafePath {
        path: path.to_string(),
        reason,
    };
    if path.contains('\\') {
        return Err(refuse("use `/` as the separator".to_string()));
    }
    let workspace = Workspace::new(root).map_err(|source| ApplyError::Workspace {
        path: root.to_path_buf(),
        source,
    })?;
    let rel = RepoPath::new(path).map_err(|err| refuse(err.reason()))?;
    let abs = workspace
        .writable(&rel)
        .map_err(|err| refuse(err.reason()))?;
    // Checked on the resolved path too, so a link cannot lead into it.
    let resolved = abs
        .strip_prefix(workspace.root())
        .ok()
        .and_then(|inside| RepoPath::new(inside.to_str()?).ok());
    if rel.starts_with_dir(STATE_DIR) || resolved.is_none_or(|r| r.starts_with_dir(STATE_DIR)) {
        return Err(refuse(
            "`.git` and `.tollgate` are not writable by a plan".to_string(),
        ));
    }
    Ok(Target {
        rel: rel.as_str().to_string(),
        abs,
    })
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One operation, checked and with what it needs to run and to be undone.
struct Prepared {
    op: FileOperation,
    from: Target,
    to: Option<Target>,
    before: Option<Vec<u8>>,
}

/// Checks every operation (paths, sizes, preconditions, no path touched twice) and reads the
/// contents to back up. Touches nothing.
fn prepare(root: &Path, operations: &[FileOperation]) -> Result<Vec<Prepared>, ApplyError> {
    if operations.len() > MAX_OPERATIONS {
        return Err(ApplyError::TooMany {
            count: operations.len(),
        });
    }
    let mut touched: Vec<PathBuf> = Vec::new();
    let mut prepared = Vec::new();
    for op in operations {
        let from = resolve(root, op.path())?;
        let to = match op {
            FileOperation::Rename { new_path, .. } => Some(resolve(root, new_path)?),
            _ => None,
        };
        let precondition = |reason: &str| ApplyError::Precondition {
            operation: op.kind(),
            path: from.rel.clone(),
            reason: reason.to_string(),
        };
        if op
            .new_content()
            .is_some_and(|content| content.len() > MAX_FILE_BYTES)
        {
            return Err(precondition("the new content is larger than 8 MiB"));
        }
        for target in std::iter::once(&from).chain(to.as_ref()) {
            if touched.contains(&target.abs) {
                return Err(ApplyError::Precondition {
                    operation: op.kind(),
                    path: target.rel.clone(),
                    reason: "the step touches this path twice".to_string(),
                });
            }
            touched.push(target.abs.clone());
        }
        let exists = from.abs.symlink_metadata().is_ok();
        let before = match op {
            FileOperation::Create { .. } => {
                if exists {
                    return Err(precondition("it already exists (use modify)"));
                }
                None
            }
            FileOperation::Modify { .. }
            | FileOperation::Delete { .. }
            | FileOperation::Rename { .. } => {
                if !exists {
                    return Err(precondition("it does not exist"));
                }
                let bytes =
                    std::fs::read(&from.abs).map_err(|err| precondition(&err.to_string()))?;
                Some(bytes)
            }
        };
        if let Some(to) = &to
            && to.abs.symlink_metadata().is_ok()
        {
            return Err(ApplyError::Precondition {
                operation: "rename",
                path: to.rel.clone(),
                reason: "the new path already exists".to_string(),
            });
        }
        prepared.push(Prepared {
            op: op.clone(),
            from,
            to,
            before,
        });
    }
    Ok(prepared)
}

/// A file's current content for a prompt, read only through the same checks a write passes
/// (inside the workspace after resolving links, not a link itself, not under `.git` or
/// `.tollgate`). `Ok(None)` when nothing is there; [`ReadFile::TooLarge`] past `max_bytes`.
pub(crate) fn read_workspace_file(
    workspace: &Path,
    path: &str,
    max_bytes: u64,
) -> Result<Option<ReadFile>, ApplyError> {
    let root = canonical_root(workspace)?;
    let target = resolve(&root, path)?;
    let Ok(meta) = std::fs::metadata(&target.abs) else {
        return Ok(None);
    };
    if meta.len() > max_bytes {
        return Ok(Some(ReadFile::TooLarge { bytes: meta.len() }));
    }
    let bytes = std::fs::read(&target.abs).map_err(|err| ApplyError::Precondition {
        operation: "read",
        path: target.rel.clone(),
        reason: err.to_string(),
    })?;
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => ReadFile::Text(text),
        Err(_) => ReadFile::Binary,
    }))
}

/// What [`read_workspace_file`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadFile {
    Text(String),
    Binary,
    TooLarge { bytes: u64 },
}

/// The operations as unified diffs, checked exactly as [`apply_changes`] would check them.
pub fn preview(
    workspace: &Path,
    operations: &[FileOperation],
) -> Result<Vec<FileDiff>, ApplyError> {
    let root = canonical_root(workspace)?;
    let prepared = prepare(&root, operations)?;
    Ok(prepared.iter().map(diff_of).collect())
}

fn diff_of(prepared: &Prepared) -> FileDiff {
    let before = prepared
        .before
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let after: String = match &prepared.op {
        FileOperation::Delete { .. } => String::new(),
        FileOperation::Rename { content: None, .. } => before.to_string(),
        op => op.new_content().unwrap_or_default().to_string(),
    };
    let old_name = match prepared.op {
        FileOperation::Create { .. } => "/dev/null".to_string(),
        _ => format!("a/{}", prepared.from.rel),
    };
    let new_name = match (&prepared.op, &prepared.to) {
        (FileOperation::Delete { .. }, _) => "/dev/null".to_string(),
        (_, Some(to)) => format!("b/{}", to.rel),
        _ => format!("b/{}", prepared.from.rel),
    };
    let text_diff = similar::TextDiff::from_lines(before.as_ref(), after.as_str());
    let (mut added, mut removed) = (0, 0);
    for change in text_diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let diff = if added == 0 && removed == 0 {
        String::new()
    } else {
        text_diff
            .unified_diff()
            .context_radius(3)
            .header(&old_name, &new_name)
            .to_string()
    };
    FileDiff {
        operation: prepared.op.kind().to_string(),
        path: prepared.from.rel.clone(),
        new_path: prepared.to.as_ref().map(|to| to.rel.clone()),
        diff,
        lines_added: added,
        lines_removed: removed,
    }
}

/// The temporary file [`write_atomic`] writes `path` through: beside it, named after this
/// process, so a journal can name it before the write and remove it after a crash.
fn temp_path(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    Some(path.with_file_name(format!(".{name}.tollgate-{}.tmp", std::process::id())))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over the target. Keeps the permissions of `like` when given.
fn write_atomic(path: &Path, bytes: &[u8], like: Option<&Path>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = temp_path(path).ok_or_else(|| std::io::Error::other("no file name"))?;
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        if let Some(like) = like
            && let Ok(meta) = std::fs::metadata(like)
        {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Applies `operations` for step `step_number` of plan `plan_id`, all or nothing (see the module
/// docs), under its own journal entry, closed when this returns. The plan must exist in `store`.
/// Recording nothing about the step, it suits callers that keep no step state; `execute_plan`
/// opens the entry with the step's start and closes it with its completion instead.
pub fn apply_changes(
    store: &Store,
    workspace: &Path,
    plan_id: &str,
    step_number: u32,
    operations: &[FileOperation],
) -> Result<AppliedBatch, ApplyError> {
    let journal = journal::begin(store, workspace, plan_id, step_number, |_| {
        Ok::<_, ApplyError>(())
    })?;
    let applied = apply_journaled(store, workspace, &journal, operations);
    let closing = match &applied {
        Ok(_) => Some(journal_state::COMPLETED),
        // Half applied: the entry stays open, so the next plan command finishes the rollback.
        Err(ApplyError::RestoreFailed { .. }) => None,
        Err(_) => Some(journal_state::FAILED),
    };
    if let Some(closing) = closing {
        store.transact(|tx| journal.close(tx, closing, None))?;
        journal.release();
    }
    applied
}

/// [`apply_changes`] under `journal`, an entry the caller opened and closes in the transaction
/// that records the step's outcome. Before the first write, one transaction records every
/// operation with its backup and the temporary files the writes may leave.
pub(crate) fn apply_journaled(
    store: &Store,
    workspace: &Path,
    journal: &OpenJournal,
    operations: &[FileOperation],
) -> Result<AppliedBatch, ApplyError> {
    let root = canonical_root(workspace)?;
    let prepared = prepare(&root, operations)?;
    let plan_id = journal.plan_id();
    let step_number = journal.step_number();
    let batch_id = journal.batch_id().to_string();
    // A committed `.tollgate` link must not move the backups out of the workspace.
    Workspace::new(&root)
        .map_err(|source| ApplyError::Workspace {
            path: root.clone(),
            source,
        })?
        .create_state_dir("backups")
        .map_err(|err| ApplyError::UnsafePath {
            path: BACKUP_DIR.to_string(),
            reason: err.reason(),
        })?;
    let backup_rel = format!("{BACKUP_DIR}/{batch_id}");

    // Backups first, then the record, then the writes: whatever happens after this point, the
    // previous contents are on disk and on record.
    let mut rows = Vec::new();
    let mut backups_created = Vec::new();
    let applied_at = now_rfc3339();
    for (seq, item) in prepared.iter().enumerate() {
        let backup_path = match &item.before {
            Some(bytes) => {
                let rel = format!("{backup_rel}/{seq}");
                write_atomic(&root.join(&rel), bytes, Some(&item.from.abs)).map_err(|source| {
                    ApplyError::Io {
                        path: rel.clone(),
                        source,
                    }
                })?;
                backups_created.push(rel.clone());
                Some(rel)
            }
            None => None,
        };
        rows.push(AppliedChangeRow {
            batch_id: batch_id.clone(),
            seq: u32::try_from(seq).unwrap_or(u32::MAX),
            step_number,
            operation: item.op.kind().to_string(),
            path: item.from.rel.clone(),
            new_path: item.to.as_ref().map(|to| to.rel.clone()),
            backup_path,
            before_sha256: item.before.as_deref().map(sha256_hex),
            after_sha256: after_bytes(item).map(|bytes| sha256_hex(&bytes)),
            applied_at: applied_at.clone(),
            undone_at: None,
        });
    }
    // A write and a revert both go through the temporary file beside the path they write.
    let temp_files: Vec<String> = prepared
        .iter()
        .flat_map(|item| std::iter::once(&item.from).chain(item.to.as_ref()))
        .filter_map(|target| temp_path(&target.abs))
        .filter_map(|tmp| {
            tmp.strip_prefix(&root)
                .ok()
                .map(|rel| rel.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    store.transact(|tx| {
        for row in &rows {
            tx.insert_applied_change(plan_id, row)?;
        }
        tx.journal_set_temp_files(&batch_id, &temp_files)
    })?;

    for (done, item) in prepared.iter().enumerate() {
        #[cfg(test)]
        if CRASH_AT.with(std::cell::Cell::get) == Some(done) {
            // As if killed here: a temporary file half written, nothing reverted or recorded.
            if let Some(tmp) = temp_path(&item.to.as_ref().unwrap_or(&item.from).abs) {
                let _ = std::fs::write(tmp, b"half");
            }
            return Err(ApplyError::Io {
                path: item.from.rel.clone(),
                source: std::io::Error::other("simulated crash"),
            });
        }
        if let Err(source) = apply_nth(done, item) {
            let path = item.from.rel.clone();
            let restore_errors: Vec<String> = prepared[..done]
                .iter()
                .rev()
                .filter_map(|earlier| {
                    revert_one(earlier)
                        .err()
                        .map(|e| format!("{}: {e}", earlier.from.rel))
                })
                .collect();
            // Mark the batch undone: nothing of it remains in the workspace.
            if restore_errors.is_empty() {
                store.transact(|tx| tx.mark_batch_undone(&batch_id))?;
                return Err(ApplyError::Io { path, source });
            }
            return Err(ApplyError::RestoreFailed {
                path,
                source,
                restore: restore_errors.join("; "),
                backup_dir: backup_rel,
            });
        }
    }
    let mut files_applied = Vec::new();
    for item in &prepared {
        files_applied.push(item.from.rel.clone());
        if let Some(to) = &item.to {
            files_applied.push(to.rel.clone());
        }
    }
    Ok(AppliedBatch {
        batch_id,
        files_applied,
        backups_created,
    })
}

#[cfg(test)]
thread_local! {
    /// The index of the operation before which [`apply_journaled`] stops as if killed.
    pub(crate) static CRASH_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The content the target has after the operation (`None` when it is gone).
fn after_bytes(item: &Prepared) -> Option<Vec<u8>> {
    match &item.op {
        FileOperation::Delete { .. } => None,
        FileOperation::Rename { content: None, .. } => item.before.clone(),
        op => op.new_content().map(|c| c.as_bytes().to_vec()),
    }
}

/// [`apply_one`] for the `index`th operation; tests make a chosen one fail.
fn apply_nth(_index: usize, item: &Prepared) -> std::io::Result<()> {
    #[cfg(test)]
    if tests::FAIL_AT.with(std::cell::Cell::get) == Some(_index) {
        return Err(std::io::Error::other("injected failure"));
    }
    apply_one(item)
}

fn apply_one(item: &Prepared) -> std::io::Result<()> {
    match &item.op {
        FileOperation::Create { content, .. } => {
            write_atomic(&item.from.abs, content.as_bytes(), None)
        }
        FileOperation::Modify { content, .. } => {
            write_atomic(&item.from.abs, content.as_bytes(), Some(&item.from.abs))
        }
        FileOperation::Delete { .. } => std::fs::remove_file(&item.from.abs),
        FileOperation::Rename { content, .. } => {
            let to = item
                .to
                .as_ref()
                .ok_or_else(|| std::io::Error::other("rename without a target"))?;
            match content {
                Some(content) => {
                    write_atomic(&to.abs, content.as_bytes(), Some(&item.from.abs))?;
                    std::fs::remove_file(&item.from.abs)
                }
                None => {
                    if let Some(dir) = to.abs.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    std::fs::rename(&item.from.abs, &to.abs)
                }
            }
        }
    }
}

/// Puts back what [`apply_one`] changed, from the in-memory copy of the previous content.
fn revert_one(item: &Prepared) -> std::io::Result<()> {
    match (&item.op, &item.before) {
        (FileOperation::Create { .. }, _) => remove_if_present(&item.from.abs),
        (FileOperation::Rename { .. }, Some(before)) => {
            if let Some(to) = &item.to {
                remove_if_present(&to.abs)?;
            }
            write_atomic(&item.from.abs, before, None)
        }
        (_, Some(before)) => write_atomic(&item.from.abs, before, None),
        (_, None) => Ok(()),
    }
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

/// How [`roll_back_rows`] treats a file whose content is neither what the batch wrote nor what
/// was there before (edited since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RollBackMode {
    /// Recovery: put back every file that can be, leave edited files alone.
    BestEffort,
    /// Undo: write nothing when any file was edited since.
    AllOrNothing,
    /// Undo with force: put back edited files too.
    Force,
}

/// What [`roll_back_rows`] did.
#[derive(Debug, Default)]
pub(crate) struct RolledBack {
    /// Workspace-relative paths put back as they were before the batch (rewritten or removed).
    pub(crate) restored: Vec<String>,
    /// Files edited since the batch wrote them, each with why (left as they are, except under
    /// `Force`, where they are in `restored` too).
    pub(crate) conflicts: Vec<String>,
    /// Files that cannot be restored (backup missing or not matching its record, path refused),
    /// each with why; left as they are.
    pub(crate) unusable: Vec<String>,
    /// Files whose restore failed, each with why.
    pub(crate) failed: Vec<String>,
    /// Nothing was written: `AllOrNothing` found conflicts, or an undo found unusable files.
    pub(crate) refused: bool,
}

/// One file a batch changed: what it held before, and the hashes before and after.
struct Touched {
    target: Target,
    before: Option<Vec<u8>>,
    backup: Option<PathBuf>,
    before_sha: Option<String>,
    after_sha: Option<String>,
}

/// The files `row` changed (a rename changes two), with the verified backup.
fn touched_files(root: &Path, row: &AppliedChangeRow) -> Result<Vec<Touched>, String> {
    let backup = match &row.backup_path {
        Some(rel) => {
            // The store is ours, but a path from it still stays under the backup directory.
            if !rel.starts_with(&format!("{BACKUP_DIR}/")) || rel.split('/').any(|p| p == "..") {
                return Err(format!("its backup path `{rel}` is not under {BACKUP_DIR}"));
            }
            let abs = root.join(rel);
            let bytes = std::fs::read(&abs).map_err(|err| format!("backup {rel}: {err}"))?;
            if Some(sha256_hex(&bytes)) != row.before_sha256 {
                return Err(format!("the backup {rel} does not match its record"));
            }
            Some((bytes, abs))
        }
        None if row.before_sha256.is_some() => return Err("its backup is not recorded".into()),
        None => None,
    };
    let (before, backup) = backup.unzip();
    let original = resolve(root, &row.path).map_err(|err| err.to_string())?;
    Ok(match &row.new_path {
        Some(new_path) => vec![
            Touched {
                target: resolve(root, new_path).map_err(|err| err.to_string())?,
                before: None,
                backup: None,
                before_sha: None,
                after_sha: row.after_sha256.clone(),
            },
            Touched {
                target: original,
                before,
                backup,
                before_sha: row.before_sha256.clone(),
                after_sha: None,
            },
        ],
        None => vec![Touched {
            target: original,
            before,
            backup,
            before_sha: row.before_sha256.clone(),
            after_sha: row.after_sha256.clone(),
        }],
    })
}

/// Puts the files of `rows` (one batch, in order) back as they were before it, last operation
/// first. A file already as it was is left alone; one that holds neither the batch's content nor
/// the previous one was edited since, and `mode` decides. Everything is checked before the
/// first write; an undo (not `BestEffort`) writes nothing when a file cannot be restored.
pub(crate) fn roll_back_rows(
    root: &Path,
    rows: &[AppliedChangeRow],
    mode: RollBackMode,
) -> RolledBack {
    let mut result = RolledBack::default();
    let mut work = Vec::new();
    for row in rows.iter().rev() {
        let files = match touched_files(root, row) {
            Ok(files) => files,
            Err(reason) => {
                result
                    .unusable
                    .push(format!("`{}` cannot be restored: {reason}", row.path));
                continue;
            }
        };
        for touched in files {
            let now = std::fs::read(&touched.target.abs).ok();
            let now_sha = now.as_deref().map(sha256_hex);
            if now_sha == touched.before_sha {
                continue;
            }
            if now_sha != touched.after_sha {
                result.conflicts.push(format!(
                    "`{}` changed after the batch wrote it",
                    touched.target.rel
                ));
                if mode != RollBackMode::Force {
                    continue;
                }
            }
            work.push(touched);
        }
    }
    if (mode == RollBackMode::AllOrNothing && !result.conflicts.is_empty())
        || (mode != RollBackMode::BestEffort && !result.unusable.is_empty())
    {
        result.refused = true;
        return result;
    }
    for touched in work {
        let written = match &touched.before {
            Some(bytes) => write_atomic(&touched.target.abs, bytes, touched.backup.as_deref()),
            None => remove_if_present(&touched.target.abs),
        };
        match written {
            Ok(()) => result.restored.push(touched.target.rel),
            Err(err) => result.failed.push(format!(
                "`{}` could not be restored: {err}",
                touched.target.rel
            )),
        }
    }
    result
}

/// Removes the temporary files a journal named (workspace-relative), each checked like any
/// path a plan writes; returns those removed.
pub(crate) fn remove_temp_files(root: &Path, temp_files: &[String]) -> Vec<String> {
    let mut removed = Vec::new();
    for rel in temp_files {
        let is_temp = rel.ends_with(".tmp")
            && Path::new(rel)
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if !is_temp {
            continue;
        }
        if let Ok(target) = resolve(root, rel)
            && target.abs.symlink_metadata().is_ok()
            && std::fs::remove_file(&target.abs).is_ok()
        {
            removed.push(target.rel);
        }
    }
    removed
}

/// Reverses batch `batch_id` from its backups, last operation first. Refuses (and changes
/// nothing) when a file it wrote was edited since, or is already undone.
pub fn undo_batch(
    store: &Store,
    workspace: &Path,
    plan_id: &str,
    batch_id: &str,
) -> Result<Vec<String>, ApplyError> {
    let root = canonical_root(workspace)?;
    let rows: Vec<AppliedChangeRow> = store
        .snapshot(|tx| tx.applied_changes(plan_id))?
        .into_iter()
        .filter(|row| row.batch_id == batch_id)
        .collect();
    if rows.is_empty() {
        return Err(ApplyError::BatchNotFound(batch_id.to_string()));
    }
    let undo_err = |reason: String| ApplyError::Undo {
        batch_id: batch_id.to_string(),
        reason,
    };
    if rows.iter().any(|row| row.undone_at.is_some()) {
        return Err(undo_err("it was already undone".to_string()));
    }
    // Check everything first: the current content must be what the batch wrote.
    let mut steps = Vec::new();
    for row in rows.iter().rev() {
        let current_rel = row.new_path.as_deref().unwrap_or(&row.path);
        let current = resolve(&root, current_rel)?;
        let now = std::fs::read(&current.abs).ok();
        if now.as_deref().map(sha256_hex) != row.after_sha256 {
            return Err(undo_err(format!(
                "`{current_rel}` changed after the batch wrote it"
            )));
        }
        let backup = match &row.backup_path {
            Some(rel) => Some(
                std::fs::read(root.join(rel))
                    .map_err(|err| undo_err(format!("backup {rel}: {err}")))?,
            ),
            None => None,
        };
        if backup.as_deref().map(sha256_hex) != row.before_sha256 {
            return Err(undo_err(format!(
                "the backup of `{}` does not match its record",
                row.path
            )));
        }
        let original = resolve(&root, &row.path)?;
        steps.push((current, original, backup));
    }
    let mut restored = Vec::new();
    for (current, original, backup) in steps {
        if current.abs != original.abs {
            remove_if_present(&current.abs).map_err(|source| ApplyError::Io {
                path: current.rel.clone(),
                source,
            })?;
        }
        match backup {
            Some(bytes) => write_atomic(&original.abs, &bytes, None),
            None => remove_if_present(&original.abs),
        }
        .map_err(|source| ApplyError::Io {
            path: original.rel.clone(),
            source,
        })?;
        restored.push(original.rel);
    }
    store.transact(|tx| tx.mark_batch_undone(batch_id))?;
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plans::{NewPlan, PlanFacts, VersionMeta};

    thread_local! {
        /// The index of the operation whose write fails, to test the restore path.
        pub(super) static FAIL_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    }

    struct Fixture {
        dir: tempfile::TempDir,
        store: crate::store::testing::TestStore,
    }

    impl Fixture {
        fn on(backend: crate::store::testing::Backend) -> Option<Fixture> {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("ws/src")).unwrap();
            std::fs::write(dir.path().join("ws/src/a.txt"), "one\ntwo\n").unwrap();
            std::fs::write(dir.path().join("outside.txt"), "secret\n").unwrap();
            let store = crate::store::testing::store(backend)?;
            store
                .transact(|tx| {
                    tx.insert_plan(&NewPlan {
                        id: "p",
                        name: None,
                        status: "ready",
                        tags: &[],
                        facts: PlanFacts {
                            goal: "",
                            step_count: 1,
                        },
                        plan_json: "{}",
                        meta: VersionMeta {
                            change_type: "created",
                            summary: "",
                            author: "",
                        },
                    })
                })
                .unwrap();
            Some(Fixture { dir, store })
        }

        fn ws(&self) -> PathBuf {
            self.dir.path().join("ws")
        }

        fn apply(&self, ops: &[FileOperation]) -> Result<AppliedBatch, ApplyError> {
            apply_changes(&self.store, &self.ws(), "p", 1, ops)
        }

        fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
            let mut files = Vec::new();
            let mut stack = vec![self.dir.path().to_path_buf()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() && !path.is_symlink() {
                        stack.push(path);
                    } else if !path.is_symlink() && !path.ends_with(".tollgate/.gitignore") {
                        // The state directory's `.gitignore` comes with the journal's directory.
                        files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
                    }
                }
            }
            files.sort();
            files
        }
    }

    fn create(path: &str) -> FileOperation {
        FileOperation::Create {
            path: path.into(),
            content: "new\n".into(),
        }
    }

    crate::backend_fixture_tests! {
    fn unsafe_paths_are_refused_and_nothing_is_written(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(fx.dir.path(), fx.ws().join("escape")).unwrap();
            std::os::unix::fs::symlink(fx.dir.path().join("outside.txt"), fx.ws().join("link.txt"))
                .unwrap();
        }
        let before = fx.snapshot();
        let outside = fx.dir.path().join("outside.txt").display().to_string();
        let cases = [
            "../outside.txt".to_string(),
            "src/../../outside.txt".to_string(),
            outside,
            "/etc/passwd".to_string(),
            "escape/outside.txt".to_string(),
            "escape/new.txt".to_string(),
            "link.txt".to_string(),
            ".git/hooks/pre-commit".to_string(),
            "src/.git/config".to_string(),
            ".tollgate/tollgate.db".to_string(),
            "".to_string(),
            "src".to_string(),
            "src\\..\\..\\x".to_string(),
        ];
        for bad in cases {
            // A good operation first: it must not be written either.
            let ops = [
                create("src/fine.txt"),
                FileOperation::Modify {
                    path: bad.clone(),
                    content: "pwned\n".into(),
                },
            ];
            let err = fx.apply(&ops).unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT", "{bad}: {err}");
            assert_eq!(fx.snapshot(), before, "{bad} wrote something");
        }
        assert_eq!(
            std::fs::read_to_string(fx.dir.path().join("outside.txt")).unwrap(),
            "secret\n"
        );
        assert!(!fx.ws().join("src/fine.txt").exists());
    }
    }

    crate::backend_fixture_tests! {
    fn git_dir_in_any_letter_case_is_refused(backend) {
        // A case-insensitive file system (macOS, Windows) makes `.GIT` the real `.git`.
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let before = fx.snapshot();
        for bad in [
            ".GIT/hooks/pre-commit",
            ".Git/config",
            "src/.gIt/hooks/post-checkout",
            ".git./hooks/pre-commit",
            "GIT~1/hooks/pre-commit",
            ".TOLLGATE/tollgate.db",
        ] {
            let err = fx.apply(&[create(bad)]).unwrap_err();
            assert!(matches!(err, ApplyError::UnsafePath { .. }), "{bad}: {err}");
            assert_eq!(fx.snapshot(), before, "{bad} wrote something");
        }
    }
    }

    #[cfg(unix)]
    crate::backend_fixture_tests! {
    fn backups_do_not_follow_a_tollgate_link(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let elsewhere = fx.dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, fx.ws().join(".tollgate")).unwrap();
        let ops = [FileOperation::Modify {
            path: "src/a.txt".into(),
            content: "new\n".into(),
        }];
        let err = fx.apply(&ops).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
    }

    crate::backend_fixture_tests! {
    fn preconditions_are_checked_before_writing(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let before = fx.snapshot();
        for ops in [
            vec![create("src/a.txt")],
            vec![FileOperation::Delete {
                path: "src/missing.txt".into(),
            }],
            vec![create("src/x.txt"), create("src/x.txt")],
            vec![FileOperation::Rename {
                path: "src/a.txt".into(),
                new_path: "src/a.txt".into(),
                content: None,
            }],
        ] {
            let err = fx.apply(&ops).unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT", "{err}");
            assert_eq!(fx.snapshot(), before);
        }
    }
    }

    crate::backend_fixture_tests! {
    fn create_modify_delete_rename_apply_and_undo(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        std::fs::write(fx.ws().join("src/gone.txt"), "bye\n").unwrap();
        std::fs::write(fx.ws().join("src/old.txt"), "moved\n").unwrap();
        let before = fx.snapshot();
        let ops = [
            create("src/deep/new.txt"),
            FileOperation::Modify {
                path: "src/a.txt".into(),
                content: "one\nTWO\n".into(),
            },
            FileOperation::Delete {
                path: "src/gone.txt".into(),
            },
            FileOperation::Rename {
                path: "src/old.txt".into(),
                new_path: "lib/new.txt".into(),
                content: None,
            },
        ];
        let diffs = preview(&fx.ws(), &ops).unwrap();
        assert_eq!(
            diffs[1].diff,
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        );
        assert_eq!((diffs[0].lines_added, diffs[2].lines_removed), (1, 1));
        assert_eq!(diffs[3].diff, "");
        assert_eq!(fx.snapshot(), before, "preview wrote something");

        let batch = fx.apply(&ops).unwrap();
        assert_eq!(
            batch.files_applied,
            [
                "src/deep/new.txt",
                "src/a.txt",
                "src/gone.txt",
                "src/old.txt",
                "lib/new.txt"
            ]
        );
        assert_eq!(batch.backups_created.len(), 3);
        let ws = fx.ws();
        assert_eq!(
            std::fs::read_to_string(ws.join("src/deep/new.txt")).unwrap(),
            "new\n"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("src/a.txt")).unwrap(),
            "one\nTWO\n"
        );
        assert!(!ws.join("src/gone.txt").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join("lib/new.txt")).unwrap(),
            "moved\n"
        );
        // No temporary files left beside the targets.
        assert!(
            std::fs::read_dir(ws.join("src")).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp"))
        );

        let restored = undo_batch(&fx.store, &ws, "p", &batch.batch_id).unwrap();
        assert_eq!(restored.len(), 4);
        // Everything is back, apart from the backups (kept) and emptied new directories.
        let after: Vec<_> = fx
            .snapshot()
            .into_iter()
            .filter(|(path, _)| !path.contains(".tollgate/backups"))
            .collect();
        assert_eq!(after, before);
        let err = undo_batch(&fx.store, &ws, "p", &batch.batch_id).unwrap_err();
        assert!(err.to_string().contains("already undone"), "{err}");
    }
    }

    crate::backend_fixture_tests! {
    fn undo_refuses_a_file_edited_since(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let batch = fx
            .apply(&[FileOperation::Modify {
                path: "src/a.txt".into(),
                content: "model\n".into(),
            }])
            .unwrap();
        std::fs::write(fx.ws().join("src/a.txt"), "human edit\n").unwrap();
        let err = undo_batch(&fx.store, &fx.ws(), "p", &batch.batch_id).unwrap_err();
        assert!(err.to_string().contains("changed after"), "{err}");
        assert_eq!(
            std::fs::read_to_string(fx.ws().join("src/a.txt")).unwrap(),
            "human edit\n"
        );
    }
    }

    crate::backend_fixture_tests! {
    fn a_failure_midway_restores_the_earlier_files(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        std::fs::write(fx.ws().join("src/b.txt"), "b\n").unwrap();
        let before = fx.snapshot();
        FAIL_AT.with(|at| at.set(Some(2)));
        let err = fx
            .apply(&[
                FileOperation::Modify {
                    path: "src/a.txt".into(),
                    content: "changed\n".into(),
                },
                FileOperation::Delete {
                    path: "src/b.txt".into(),
                },
                create("src/c.txt"),
            ])
            .unwrap_err();
        FAIL_AT.with(|at| at.set(None));
        assert_eq!(err.code(), "EXECUTION_FAILED", "{err}");
        assert!(err.to_string().contains("restored"), "{err}");
        let after: Vec<_> = fx
            .snapshot()
            .into_iter()
            .filter(|(path, _)| !path.contains(".tollgate/backups"))
            .collect();
        assert_eq!(after, before);
        let rows = fx.store.snapshot(|tx| tx.applied_changes("p")).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|row| row.undone_at.is_some()));
    }
    }
}
