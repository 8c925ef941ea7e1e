//! Path-safe file reads: a path from a user or model resolves inside the workspace (symlinks
//! too) or is refused.

use std::path::{Path, PathBuf};

use super::ContextError;
use super::request::{FileContent, FileMetadata, GetFileRequest};
use crate::secrets::scrub;
use crate::workspace::IndexedWorkspace;
use crate::workspace::{PathError, STATE_DIR};

/// The largest file `get_file` returns.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Resolves `path` inside the workspace ([`crate::workspace`]'s rules): relative to the root,
/// or absolute under it (`/repo/README.md` for the workspace `/repo`); a `..` may not climb
/// out, and after resolving symlinks the file is still inside.
/// Tollgate's own state under `.tollgate/` (the store, whose freed pages may hold deleted
/// entries, the index, backups) is refused, named or reached through a link.
pub(crate) fn resolve(workspace: &IndexedWorkspace, path: &str) -> Result<PathBuf, ContextError> {
    let paths = workspace.paths();
    let state = || ContextError::InvalidInput {
        field: "path",
        message: format!(
            "`{}` is Tollgate's own state (`{STATE_DIR}/`), never served as a file",
            path.escape_debug()
        ),
    };
    let resolved = paths
        .relative(path, "")
        .and_then(|rel| {
            if rel.starts_with_dir(STATE_DIR) {
                return Ok(None);
            }
            paths.resolve(&rel).map(Some)
        })
        .map_err(|err| match err {
            PathError::Invalid { reason, .. } => ContextError::InvalidInput {
                field: "path",
                message: format!("`{}`: {reason}", path.escape_debug()),
            },
            PathError::Outside { .. } => ContextError::OutsideWorkspace {
                path: path.to_string(),
            },
            PathError::NotFound { .. } => ContextError::FileNotFound {
                path: path.to_string(),
            },
            err => ContextError::Unreadable {
                path: path.to_string(),
                message: err.reason(),
            },
        })?
        .ok_or_else(state)?;
    let in_state = resolved
        .strip_prefix(workspace.root())
        .ok()
        .and_then(|rel| rel.components().next())
        .is_some_and(|first| {
            first
                .as_os_str()
                .to_string_lossy()
                .eq_ignore_ascii_case(STATE_DIR)
        });
    if in_state {
        return Err(state());
    }
    Ok(resolved)
}

/// `get_file`: a workspace file's content (secrets masked), size, line count and metadata.
pub fn get_file(
    workspace: &IndexedWorkspace,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str) -> GetFileRequest {
        GetFileRequest {
            path: path.to_string(),
            include_metadata: false,
        }
    }

    #[test]
    fn absolute_paths_inside_the_workspace_are_files_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("README.md"), "# hi\n").unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret\n").unwrap();
        let workspace = IndexedWorkspace::open(&root).unwrap();

        // As given (perhaps through a link, as /tmp is on macOS) and canonical.
        for given in [&root, workspace.root()] {
            let absolute = given.join("README.md").display().to_string();
            let file = get_file(&workspace, &request(&absolute)).unwrap();
            assert_eq!(
                (file.path.as_str(), file.content.as_str()),
                ("README.md", "# hi\n")
            );
        }
        let file = get_file(&workspace, &request("src/../src/a.rs")).unwrap();
        assert_eq!(file.path, "src/a.rs");

        let outside = dir.path().join("secret.txt").display().to_string();
        for path in [
            outside.as_str(),
            "/etc/passwd",
            "../secret.txt",
            "src/../../secret.txt",
        ] {
            let err = get_file(&workspace, &request(path)).unwrap_err();
            assert_eq!(err.code(), "PATH_OUTSIDE_WORKSPACE", "{path}: {err}");
        }
        assert_eq!(
            get_file(&workspace, &request("")).unwrap_err().code(),
            "INVALID_INPUT"
        );
        assert_eq!(
            get_file(&workspace, &request("src/missing.rs"))
                .unwrap_err()
                .code(),
            "FILE_NOT_FOUND"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("leak.txt"))
                .unwrap();
            let err = get_file(&workspace, &request("leak.txt")).unwrap_err();
            assert_eq!(err.code(), "PATH_OUTSIDE_WORKSPACE", "{err}");
        }
    }

    /// Tollgate's own state (the store with its freed pages, the index, backups) is never
    /// served as a file, by its name in any case or through a link to it.
    #[test]
    fn tollgate_state_is_never_served() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".tollgate")).unwrap();
        std::fs::write(root.join(".tollgate/tollgate.db"), "SQLite format 3\n").unwrap();
        let workspace = IndexedWorkspace::open(&root).unwrap();
        let absolute = workspace.root().join(".tollgate/tollgate.db");
        let mut paths = vec![
            ".tollgate/tollgate.db".to_string(),
            "./.tollgate/tollgate.db".to_string(),
            "src/../.tollgate/tollgate.db".to_string(),
            absolute.display().to_string(),
        ];
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(".tollgate/tollgate.db", root.join("db.txt")).unwrap();
            paths.push("db.txt".to_string());
        }
        for path in paths {
            let err = get_file(&workspace, &request(&path)).unwrap_err();
            assert_eq!(err.code(), "INVALID_INPUT", "{path}: {err}");
            assert!(err.to_string().contains("state"), "{path}: {err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_tollgate_link_does_not_move_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join(".tollgate")).unwrap();
        let err = IndexedWorkspace::open(&root).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }
}
