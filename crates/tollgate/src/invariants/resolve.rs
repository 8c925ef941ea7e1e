//! Confining an invariants path (from a flag, a config file, an MCP call or a model) to the
//! workspace: `..` that climbs out, absolute paths elsewhere and symlinks pointing outside are all
//! refused, each with its own reason.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::error::{InvariantsError, PathRefusal};

/// Resolves `given` (relative to `workspace_root`, or absolute but inside it) to the canonical
/// path of an existing regular file inside the workspace.
pub fn resolve_invariants_path(
    workspace_root: &Path,
    given: &str,
) -> Result<PathBuf, InvariantsError> {
    let refuse = |reason: PathRefusal| InvariantsError::Refused {
        given: given.to_string(),
        reason,
    };
    if given.trim().is_empty() {
        return Err(refuse(PathRefusal::Empty));
    }
    let root = workspace_root
        .canonicalize()
        .map_err(|source| InvariantsError::Read {
            path: workspace_root.to_path_buf(),
            source,
        })?;
    let given_path = Path::new(given);
    let candidate = if given_path.is_absolute() {
        given_path.to_path_buf()
    } else {
        // Lexical check first, so `../x` is refused even when `../x` does not exist.
        let mut depth: usize = 0;
        for component in given_path.components() {
            match component {
                Component::Normal(_) => depth += 1,
                Component::CurDir => {}
                Component::ParentDir => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| refuse(PathRefusal::ParentEscape))?;
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refuse(PathRefusal::OutsideWorkspace {
                        workspace: root.clone(),
                    }));
                }
            }
        }
        root.join(given_path)
    };
    let canonical = match candidate.canonicalize() {
        Ok(canonical) => canonical,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            // An absolute path outside the workspace is refused whether or not it exists, so
            // the answer does not reveal which files exist elsewhere.
            if given_path.is_absolute() && !lexically_inside(&candidate, workspace_root, &root) {
                return Err(refuse(PathRefusal::OutsideWorkspace { workspace: root }));
            }
            return Err(InvariantsError::NotFound { path: candidate });
        }
        Err(source) => {
            return Err(InvariantsError::Read {
                path: candidate,
                source,
            });
        }
    };
    if !canonical.starts_with(&root) {
        let reason =
            if given_path.is_absolute() && !lexically_inside(&candidate, workspace_root, &root) {
                PathRefusal::OutsideWorkspace { workspace: root }
            } else {
                PathRefusal::SymlinkEscape { target: canonical }
            };
        return Err(refuse(reason));
    }
    if !canonical.is_file() {
        return Err(refuse(PathRefusal::NotAFile));
    }
    Ok(canonical)
}

/// Whether an absolute path names something under the workspace as written (before symlinks
/// are resolved), under either the given or the canonical spelling of the root.
fn lexically_inside(path: &Path, root_as_given: &Path, root_canonical: &Path) -> bool {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normalized.pop();
            }
            Component::CurDir => {}
            other => normalized.push(other),
        }
    }
    normalized.starts_with(root_as_given) || normalized.starts_with(root_canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("config")).unwrap();
        std::fs::write(root.join(".review-invariants.yml"), "a: []\n").unwrap();
        std::fs::write(root.join("config/inv.yml"), "a: []\n").unwrap();
        std::fs::write(dir.path().join("outside.yml"), "a: []\n").unwrap();
        (dir, root)
    }

    fn refusal(result: Result<PathBuf, InvariantsError>) -> PathRefusal {
        match result {
            Err(InvariantsError::Refused { reason, .. }) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn relative_paths_inside_resolve() {
        let (_dir, root) = workspace();
        let canonical_root = root.canonicalize().unwrap();
        assert_eq!(
            resolve_invariants_path(&root, ".review-invariants.yml").unwrap(),
            canonical_root.join(".review-invariants.yml")
        );
        assert_eq!(
            resolve_invariants_path(&root, "./config/../config/inv.yml").unwrap(),
            canonical_root.join("config/inv.yml")
        );
    }

    #[test]
    fn parent_escapes_are_refused_even_when_the_target_exists() {
        let (_dir, root) = workspace();
        assert_eq!(
            refusal(resolve_invariants_path(&root, "../outside.yml")),
            PathRefusal::ParentEscape
        );
        assert_eq!(
            refusal(resolve_invariants_path(&root, "config/../../outside.yml")),
            PathRefusal::ParentEscape
        );
    }

    #[test]
    fn absolute_paths_outside_are_refused_and_inside_are_allowed() {
        let (dir, root) = workspace();
        let outside = dir.path().join("outside.yml");
        assert!(matches!(
            refusal(resolve_invariants_path(&root, outside.to_str().unwrap())),
            PathRefusal::OutsideWorkspace { .. }
        ));
        assert!(matches!(
            refusal(resolve_invariants_path(&root, "/etc/passwd")),
            PathRefusal::OutsideWorkspace { .. }
        ));
        assert!(matches!(
            refusal(resolve_invariants_path(&root, "/no/such/file.yml")),
            PathRefusal::OutsideWorkspace { .. }
        ));
        let inside = root.join("config/inv.yml");
        assert!(resolve_invariants_path(&root, inside.to_str().unwrap()).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_escaping_the_workspace_are_refused() {
        let (dir, root) = workspace();
        std::os::unix::fs::symlink(dir.path().join("outside.yml"), root.join("link.yml")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        assert!(matches!(
            refusal(resolve_invariants_path(&root, "link.yml")),
            PathRefusal::SymlinkEscape { .. }
        ));
        assert!(matches!(
            refusal(resolve_invariants_path(&root, "up/outside.yml")),
            PathRefusal::SymlinkEscape { .. }
        ));
        std::os::unix::fs::symlink(root.join("config/inv.yml"), root.join("inner.yml")).unwrap();
        assert!(resolve_invariants_path(&root, "inner.yml").is_ok());
    }

    #[test]
    fn missing_files_empty_paths_and_directories() {
        let (_dir, root) = workspace();
        assert!(matches!(
            resolve_invariants_path(&root, "nope.yml"),
            Err(InvariantsError::NotFound { .. })
        ));
        assert_eq!(
            refusal(resolve_invariants_path(&root, " ")),
            PathRefusal::Empty
        );
        assert_eq!(
            refusal(resolve_invariants_path(&root, "config")),
            PathRefusal::NotAFile
        );
    }
}
