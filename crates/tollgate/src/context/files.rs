//! Path-safe file reads: a path from a user or model resolves inside the workspace (symlinks
//! too) or is refused.

use std::path::{Component, Path, PathBuf};

use super::request::{FileContent, FileMetadata, GetFileRequest};
use super::{ContextError, Workspace};
use crate::secrets::scrub;

/// The largest file `get_file` returns.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Resolves `path` inside the workspace: relative, no escaping `..`, and after resolving
/// symlinks still inside.
pub(crate) fn resolve(workspace: &Workspace, path: &str) -> Result<PathBuf, ContextError> {
    let outside = || ContextError::OutsideWorkspace {
        path: path.to_string(),
    };
    if path.trim().is_empty() {
        return Err(ContextError::InvalidInput {
            field: "path",
            message: "must not be empty".into(),
        });
    }
    let rel = Path::new(path);
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
    {
        return Err(outside());
    }
    let joined = workspace.root().join(rel);
    let resolved = match joined.canonicalize() {
        Ok(resolved) => resolved,
        Err(_) => {
            // Say "outside" rather than "not found" for paths that would leave the root.
            let mut depth: i32 = 0;
            for c in rel.components() {
                match c {
                    Component::ParentDir => depth -= 1,
                    Component::Normal(_) => depth += 1,
                    _ => {}
                }
                if depth < 0 {
                    return Err(outside());
                }
            }
            return Err(ContextError::FileNotFound {
                path: path.to_string(),
            });
        }
    };
    if !resolved.starts_with(workspace.root()) {
        return Err(outside());
    }
    Ok(resolved)
}

/// `get_file`: a workspace file's content (secrets masked), size, line count and metadata.
pub fn get_file(
    workspace: &Workspace,
    request: &GetFileRequest,
) -> Result<FileContent, ContextError> {
    let resolved = resolve(workspace, &request.path)?;
    let meta = std::fs::metadata(&resolved).map_err(|err| ContextError::Unreadable {
        path: request.path.clone(),
        message: err.to_string(),
    })?;
    if !meta.is_file() {
        return Err(ContextError::InvalidInput {
            field: "path",
            message: format!("{} is not a file", request.path),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ContextError::InvalidInput {
            field: "path",
            message: format!(
                "{} is {} bytes; get_file returns files up to {MAX_FILE_BYTES} bytes",
                request.path,
                meta.len()
            ),
        });
    }
    let bytes = std::fs::read(&resolved).map_err(|err| ContextError::Unreadable {
        path: request.path.clone(),
        message: err.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let scrubbed = scrub(&text, 0, 0);
    let lines = text.lines().count();
    let rel = resolved
        .strip_prefix(workspace.root())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| request.path.clone());
    let metadata = request.include_metadata.then(|| FileMetadata {
        last_modified: meta
            .modified()
            .ok()
            .map(time::OffsetDateTime::from)
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_default(),
        git_status: git_status(workspace.root(), &resolved),
    });
    Ok(FileContent {
        path: rel,
        content: scrubbed.text,
        size: meta.len(),
        lines,
        metadata,
        secrets_masked: scrubbed.secrets.len(),
    })
}

fn git_status(root: &Path, file: &Path) -> Option<String> {
    let repo = git2::Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let rel = file.strip_prefix(&workdir).ok()?;
    let status = repo.status_file(rel).ok()?;
    let name = if status.is_empty() {
        "clean"
    } else if status.is_ignored() {
        "ignored"
    } else if status.is_wt_new() {
        "untracked"
    } else if status.is_conflicted() {
        "conflicted"
    } else if status.intersects(
        git2::Status::INDEX_NEW
            | git2::Status::INDEX_MODIFIED
            | git2::Status::INDEX_DELETED
            | git2::Status::INDEX_RENAMED,
    ) && !status.intersects(git2::Status::WT_MODIFIED | git2::Status::WT_DELETED)
    {
        "staged"
    } else {
        "modified"
    };
    Some(name.to_string())
}
