//! The workspace root and the paths inside it: the one home of path confinement.
//!
//! Paths reach Tollgate from hostile places (a pull request's diff and `tollgate.toml`, a tool's
//! output, a SARIF file, a model's file operations, an agent's `get_file`). A [`RepoPath`] is
//! a path that passed the lexical checks (relative, no `..`, no NUL or control characters,
//! normalised to `/`); only [`RepoPath::new`] builds one. A [`Workspace`] holds the canonical
//! root and turns a `RepoPath` into a file-system path only through a check of where it really
//! lands: [`Workspace::resolve`] for reads (the file exists and resolves, symlinks included,
//! inside the root), [`Workspace::locate`] for paths that may not exist yet (the nearest
//! existing ancestor resolves inside), [`Workspace::writable`] for writes (also: not a link,
//! nothing under `.git` in any spelling a file system may fold to it) and
//! [`Workspace::own_dir`] for the directories Tollgate keeps its own state in (no link
//! anywhere along them, so a committed `.tollgate` link cannot move the store, index or
//! caches).
//!
//! [`IndexedWorkspace`] adds the code index (feature `index`).
//!
//! This module is on the ground floor: it imports nothing from the rest of the crate but
//! `control` (the ground-floor cancellation handle an index build reports to).

#[cfg(feature = "index")]
mod indexed;

use crate::ErrorCode;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Where Tollgate keeps its state (store, index, caches, backups), relative to the root.
#[cfg(feature = "index")]
pub use indexed::{Embedder, HashedEmbedder, HttpEmbedder, IndexError, IndexedWorkspace, Progress};

pub const STATE_DIR: &str = ".tollgate";

/// The state root's `.gitignore`: everything but the team's tools (`.tollgate/tools/`), which
/// teams commit.
pub const STATE_GITIGNORE: &str = "# Written by Tollgate: its state is not source; the team's tools are.\n*\n!tools/\n!tools/**\n";

/// What earlier Tollgates wrote there, replaced by [`STATE_GITIGNORE`].
const OLD_STATE_GITIGNORE: &str = "# Written by Tollgate: its state is not source.\n*\n";

/// A path was refused, or could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path text itself is not acceptable.
    #[error("Refused path `{path}`: {reason}")]
    Invalid { path: String, reason: &'static str },
    /// The path leaves the workspace (lexically or through a symbolic link).
    #[error("Refused path `{path}`: {reason}")]
    Outside { path: String, reason: &'static str },
    /// The path is inside but may not be used this way (a link, `.git`, not a regular file).
    #[error("Refused path `{path}`: {reason}")]
    NotAllowed { path: String, reason: &'static str },
    #[error("`{path}`: no such file in the workspace")]
    NotFound { path: String },
    #[error("Cannot read `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl PathError {
    /// The stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            PathError::Invalid { .. } | PathError::NotAllowed { .. } => ErrorCode::InvalidInput,
            PathError::Outside { .. } => ErrorCode::PathOutsideWorkspace,
            PathError::NotFound { .. } => ErrorCode::FileNotFound,
            PathError::Io { .. } => ErrorCode::IoError,
        }
    }

    /// The path as given.
    pub fn path(&self) -> &str {
        match self {
            PathError::Invalid { path, .. }
            | PathError::Outside { path, .. }
            | PathError::NotAllowed { path, .. }
            | PathError::NotFound { path }
            | PathError::Io { path, .. } => path,
        }
    }

    /// Why, without the path: for messages that list several refused paths.
    pub fn reason(&self) -> String {
        match self {
            PathError::Invalid { reason, .. }
            | PathError::Outside { reason, .. }
            | PathError::NotAllowed { reason, .. } => (*reason).to_string(),
            PathError::NotFound { .. } => "the file does not exist in the workspace".to_string(),
            PathError::Io { source, .. } => source.to_string(),
        }
    }
}

/// A repository-relative path that passed the lexical checks: not empty, not absolute, no `..`
/// segment, no NUL or control character; `\` is read as a separator, `.` and empty segments
/// are dropped, and the text is `/`-separated. Where it lands on disk is [`Workspace`]'s
/// question.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RepoPath(String);

impl RepoPath {
    /// Checks and normalises `path`.
    pub fn new(path: &str) -> Result<RepoPath, PathError> {
        let invalid = |reason| PathError::Invalid {
            path: path.escape_debug().to_string(),
            reason,
        };
        if path.trim().is_empty() {
            return Err(invalid("empty path"));
        }
        if path.chars().any(char::is_control) {
            return Err(invalid("NUL and control characters are not allowed"));
        }
        if path.starts_with(['/', '\\']) || path.get(1..2) == Some(":") {
            return Err(invalid(
                "absolute paths are not allowed; give it relative to the workspace root",
            ));
        }
        let mut parts = Vec::new();
        for part in path.split(['/', '\\']) {
            match part {
                ".." => return Err(invalid("`..` segments are not allowed")),
                "" | "." => {}
                part => parts.push(part),
            }
        }
        if parts.is_empty() {
            return Err(invalid("names no file"));
        }
        Ok(RepoPath(parts.join("/")))
    }

    /// The `/`-separated text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether any segment is `.git` as some file system may read it (any letter case,
    /// trailing dots or spaces, the 8.3 name `GIT~1`, ignorable code points HFS+ drops).
    pub fn is_in_git_dir(&self) -> bool {
        self.0.split('/').any(is_git_alias)
    }

    /// Whether the first segment is `name` in any letter case (for `.tollgate`).
    pub fn starts_with_dir(&self, name: &str) -> bool {
        self.0
            .split('/')
            .next()
            .is_some_and(|first| fold(first).eq_ignore_ascii_case(name))
    }

    /// `self/rest`.
    pub fn join(&self, rest: &RepoPath) -> RepoPath {
        RepoPath(format!("{}/{}", self.0, rest.0))
    }

    fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A segment as a case-insensitive or HFS+ file system may see it: ignorable code points
/// dropped, trailing dots and spaces trimmed (Windows).
fn fold(segment: &str) -> String {
    let kept: String = segment
        .chars()
        .filter(|c| {
            !matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}')
        })
        .collect();
    kept.trim_end_matches(['.', ' ']).to_string()
}

fn is_git_alias(segment: &str) -> bool {
    let folded = fold(segment);
    folded.eq_ignore_ascii_case(".git") || folded.eq_ignore_ascii_case("git~1")
}

/// A changed file named by a caller (`changed_files` of a review, a session or an analysis):
/// a [`RepoPath`] that also does not start with `-`, since it may reach a tool's command line.
pub fn changed_file(path: &str) -> Result<RepoPath, PathError> {
    let repo_path = RepoPath::new(path)?;
    if path.starts_with('-') || repo_path.as_str().starts_with('-') {
        return Err(PathError::Invalid {
            path: path.escape_debug().to_string(),
            reason: "paths may not start with `-`",
        });
    }
    Ok(repo_path)
}

/// The workspace: its root as given and canonicalised, built once.
#[derive(Debug, Clone)]
pub struct Workspace {
    given: PathBuf,
    root: PathBuf,
}

impl Workspace {
    /// Canonicalises `root` (it must exist).
    pub fn new(root: &Path) -> std::io::Result<Workspace> {
        Ok(Workspace {
            given: root.to_path_buf(),
            root: root.canonicalize()?,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` under the root, without looking at the file system.
    pub fn join(&self, path: &RepoPath) -> PathBuf {
        path.segments()
            .fold(self.root.clone(), |acc, s| acc.join(s))
    }

    /// For reads: the canonical path of an existing `path` that resolves, symlinks included,
    /// inside the root.
    pub fn resolve(&self, path: &RepoPath) -> Result<PathBuf, PathError> {
        let joined = self.join(path);
        let resolved = match joined.canonicalize() {
            Ok(resolved) => resolved,
            Err(_) if joined.symlink_metadata().is_ok() => {
                return Err(PathError::NotAllowed {
                    path: path.to_string(),
                    reason: "it is a dangling symbolic link",
                });
            }
            Err(_) => {
                return Err(PathError::NotFound {
                    path: path.to_string(),
                });
            }
        };
        if !resolved.starts_with(&self.root) {
            return Err(outside(path));
        }
        Ok(resolved)
    }

    /// For paths that may not exist yet: the nearest existing ancestor of `path` (itself
    /// included) resolves inside the root, and the rest is appended to it. The result is
    /// under the canonical root.
    pub fn locate(&self, path: &RepoPath) -> Result<PathBuf, PathError> {
        let segments: Vec<&str> = path.segments().collect();
        for depth in (0..=segments.len()).rev() {
            let prefix = segments[..depth]
                .iter()
                .fold(self.root.clone(), |acc, s| acc.join(s));
            if prefix.symlink_metadata().is_err() {
                continue;
            }
            let resolved = prefix.canonicalize().map_err(|_| PathError::NotAllowed {
                path: path.to_string(),
                reason: "it goes through a dangling symbolic link",
            })?;
            if !resolved.starts_with(&self.root) {
                return Err(outside(path));
            }
            if depth < segments.len() && !resolved.is_dir() {
                return Err(PathError::NotAllowed {
                    path: path.to_string(),
                    reason: "a parent is not a directory",
                });
            }
            return Ok(segments[depth..]
                .iter()
                .fold(resolved, |acc, s| acc.join(s)));
        }
        // The root itself always exists; reaching here means it was removed.
        Err(PathError::NotFound {
            path: path.to_string(),
        })
    }

    /// For writes: [`Workspace::locate`], and the path is not a symbolic link or a directory
    /// and is not under `.git` (in any spelling, before or after resolving).
    pub fn writable(&self, path: &RepoPath) -> Result<PathBuf, PathError> {
        let not_allowed = |reason| PathError::NotAllowed {
            path: path.to_string(),
            reason,
        };
        if path.is_in_git_dir() {
            return Err(not_allowed("`.git` is not writable"));
        }
        if let Ok(meta) = self.join(path).symlink_metadata() {
            if meta.file_type().is_symlink() {
                return Err(not_allowed(
                    "it is a symbolic link; Tollgate does not write through links",
                ));
            }
            if meta.is_dir() {
                return Err(not_allowed("it is a directory"));
            }
        }
        let located = self.locate(path)?;
        if self
            .relative_of(&located)
            .is_some_and(|rel| rel.is_in_git_dir())
        {
            return Err(not_allowed(
                "it resolves into `.git`, which is not writable",
            ));
        }
        Ok(located)
    }

    /// Writes `bytes` to `path` (checked by [`Workspace::writable`]), creating its parent
    /// directories, through a new temporary file renamed over it: a link put there after the
    /// check is replaced, never followed. Returns where it wrote.
    pub fn write(&self, path: &RepoPath, bytes: &[u8]) -> Result<PathBuf, PathError> {
        let target = self.writable(path)?;
        let io = |source| PathError::Io {
            path: path.to_string(),
            source,
        };
        let dir = target.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir).map_err(io)?;
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        // Unique per call, not only per process: two threads writing the same file at once
        // must not share (and fail on) one temporary file.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tollgate-{}-{n}.tmp", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut file| std::io::Write::write_all(&mut file, bytes))
            .and_then(|()| std::fs::rename(&tmp, &target));
        if let Err(source) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(source));
        }
        Ok(target)
    }

    /// Whether anything is at `path`, a dangling link included (`Path::exists` says no to one).
    pub fn is_occupied(&self, path: &RepoPath) -> bool {
        self.join(path).symlink_metadata().is_ok()
    }

    /// A directory Tollgate keeps its own state in (`.tollgate/…`, the analyzer cache): no
    /// existing segment may be a symbolic link or anything but a directory, and none may be
    /// `.git`. Not created here.
    pub fn own_dir(&self, path: &RepoPath) -> Result<PathBuf, PathError> {
        let not_allowed = |reason| PathError::NotAllowed {
            path: path.to_string(),
            reason,
        };
        if path.is_in_git_dir() {
            return Err(not_allowed("`.git` is not writable"));
        }
        let mut dir = self.root.clone();
        for segment in path.segments() {
            dir.push(segment);
            match dir.symlink_metadata() {
                Err(_) => {}
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(not_allowed(
                        "it goes through a symbolic link; Tollgate keeps its state only in real directories of the workspace (remove the link)",
                    ));
                }
                Ok(meta) if !meta.is_dir() => {
                    return Err(not_allowed("a segment of it is not a directory"));
                }
                Ok(_) => {}
            }
        }
        Ok(dir)
    }

    /// `<root>/.tollgate/<sub>` through [`Workspace::own_dir`]; `sub` is a fixed name.
    pub fn state_dir(&self, sub: &str) -> Result<PathBuf, PathError> {
        let path = if sub.is_empty() {
            RepoPath::new(STATE_DIR)?
        } else {
            RepoPath::new(&format!("{STATE_DIR}/{sub}"))?
        };
        self.own_dir(&path)
    }

    /// [`Workspace::state_dir`], created, for a writer. The state root gets a `.gitignore`
    /// ([`STATE_GITIGNORE`]) when it lacks one, so Tollgate's files never show as untracked in
    /// `git status`, while the team's tools in `.tollgate/tools/` stay trackable.
    pub fn create_state_dir(&self, sub: &str) -> Result<PathBuf, PathError> {
        let dir = self.state_dir(sub)?;
        let io = |source| PathError::Io {
            path: format!("{STATE_DIR}/{sub}"),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let ignore = self.root.join(STATE_DIR).join(".gitignore");
        // Written when missing, and rewritten when it is an older Tollgate's (which ignored the
        // tools too); a file the team edited is theirs.
        let stale = ignore.symlink_metadata().is_ok_and(|meta| meta.is_file())
            && std::fs::read_to_string(&ignore).is_ok_and(|text| text == OLD_STATE_GITIGNORE);
        if ignore.symlink_metadata().is_err() || stale {
            std::fs::write(&ignore, STATE_GITIGNORE).map_err(io)?;
        }
        Ok(dir)
    }

    /// Reads a regular file of at most `max_bytes` that resolves inside the root.
    pub fn read(&self, path: &RepoPath, max_bytes: u64) -> Result<Vec<u8>, PathError> {
        let resolved = self.resolve(path)?;
        let io = |source| PathError::Io {
            path: path.to_string(),
            source,
        };
        let meta = std::fs::metadata(&resolved).map_err(io)?;
        if !meta.is_file() {
            return Err(PathError::NotAllowed {
                path: path.to_string(),
                reason: "it is not a regular file",
            });
        }
        if meta.len() > max_bytes {
            return Err(PathError::NotAllowed {
                path: path.to_string(),
                reason: "the file is too large",
            });
        }
        std::fs::read(&resolved).map_err(io)
    }

    /// A path printed by a tool or written in a SARIF file, or given absolute by a caller, as
    /// a repository path. Relative paths are taken relative to `base` (a repository-relative
    /// directory, `""` for the root) and may use `..` as long as they stay inside; absolute
    /// ones must lie under the root (as given or canonical, or reached through a link). Either
    /// way the result must [`locate`](Workspace::locate) inside: a path through an in-repo
    /// link that points out is refused.
    pub fn relative(&self, reported: &str, base: &str) -> Result<RepoPath, PathError> {
        let text = reported.replace('\\', "/");
        let given = Path::new(&text);
        let refused = || PathError::Outside {
            path: reported.escape_debug().to_string(),
            reason: "it lies outside the workspace",
        };
        let rel = if given.is_absolute() {
            let normalized = normalize(given).ok_or_else(refused)?;
            let lexical = [&self.root, &self.given]
                .into_iter()
                .find_map(|root| normalized.strip_prefix(root).ok().map(Path::to_path_buf));
            match lexical {
                Some(rel) => rel,
                // The root may be reached through a link the tool did not resolve.
                None => {
                    let resolved = normalized.canonicalize().map_err(|_| refused())?;
                    resolved
                        .strip_prefix(&self.root)
                        .map_err(|_| refused())?
                        .to_path_buf()
                }
            }
        } else {
            normalize(&Path::new(base).join(given)).ok_or_else(refused)?
        };
        let text = rel.to_str().ok_or_else(|| PathError::Invalid {
            path: reported.escape_debug().to_string(),
            reason: "the path is not valid UTF-8",
        })?;
        let path = RepoPath::new(text)?;
        self.locate(&path)?;
        Ok(path)
    }

    /// The repository path of `abs`, an absolute path under the canonical root.
    fn relative_of(&self, abs: &Path) -> Option<RepoPath> {
        RepoPath::new(abs.strip_prefix(&self.root).ok()?.to_str()?).ok()
    }
}

fn outside(path: &RepoPath) -> PathError {
    PathError::Outside {
        path: path.to_string(),
        reason: "it resolves outside the workspace (through a symbolic link)",
    }
}

/// Resolves `.` and `..` without touching the file system; `None` when `..` climbs above the
/// start of a relative path or above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(part) => {
                out.push(part);
                depth += 1;
            }
            Component::RootDir | Component::Prefix(_) => out.push(component.as_os_str()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repo/src")).unwrap();
        std::fs::write(dir.path().join("repo/src/a.rs"), "a\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "top secret\n").unwrap();
        let workspace = Workspace::new(&dir.path().join("repo")).unwrap();
        (dir, workspace)
    }

    #[cfg(unix)]
    fn link(target: &Path, at: &Path) {
        std::os::unix::fs::symlink(target, at).unwrap();
    }

    #[test]
    fn repo_paths_are_normalised_and_lexically_checked() {
        assert_eq!(RepoPath::new("./src//a.rs").unwrap().as_str(), "src/a.rs");
        assert_eq!(RepoPath::new("src\\win.rs").unwrap().as_str(), "src/win.rs");
        for (bad, reason) in [
            ("", "empty"),
            ("  ", "empty"),
            ("/etc/passwd", "absolute"),
            ("\\\\server\\x", "absolute"),
            ("C:/x", "absolute"),
            ("../x", "`..`"),
            ("src/../../x", "`..`"),
            ("src\\..\\x", "`..`"),
            ("a\0b", "NUL"),
            ("a\nb", "control"),
            (".", "names no file"),
        ] {
            let err = RepoPath::new(bad).unwrap_err();
            assert!(err.to_string().contains(reason), "{bad:?}: {err}");
            assert_eq!(err.code(), "INVALID_INPUT");
        }
    }

    #[test]
    fn git_dir_in_any_spelling_is_recognised() {
        for path in [
            ".git/hooks/pre-commit",
            ".GIT/hooks/pre-commit",
            "sub/.Git/config",
            ".git./hooks/x",
            ".git /hooks/x",
            "GIT~1/hooks/x",
            ".g\u{200c}it/hooks/x",
        ] {
            assert!(RepoPath::new(path).unwrap().is_in_git_dir(), "{path:?}");
        }
        for path in [".github/workflows/x.yml", "git/x", ".gitignore", "a.git"] {
            assert!(!RepoPath::new(path).unwrap().is_in_git_dir(), "{path:?}");
        }
        assert!(
            RepoPath::new(".TOLLGATE/x")
                .unwrap()
                .starts_with_dir(".tollgate")
        );
    }

    #[test]
    fn reads_resolve_inside_the_root() {
        let (dir, workspace) = ws();
        let path = RepoPath::new("src/a.rs").unwrap();
        assert_eq!(workspace.read(&path, 1024).unwrap(), b"a\n");
        let missing = RepoPath::new("src/missing.rs").unwrap();
        assert_eq!(
            workspace.resolve(&missing).unwrap_err().code(),
            "FILE_NOT_FOUND"
        );
        let err = workspace
            .read(&RepoPath::new("src").unwrap(), 1024)
            .unwrap_err();
        assert!(err.to_string().contains("regular file"), "{err}");
        let err = workspace.read(&path, 1).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        #[cfg(unix)]
        {
            link(
                &dir.path().join("secret.txt"),
                &workspace.root().join("leak.txt"),
            );
            link(dir.path(), &workspace.root().join("up"));
            link(
                &workspace.root().join("src/a.rs"),
                &workspace.root().join("inner.rs"),
            );
            for escaping in ["leak.txt", "up/secret.txt"] {
                let err = workspace
                    .read(&RepoPath::new(escaping).unwrap(), 1024)
                    .unwrap_err();
                assert_eq!(err.code(), "PATH_OUTSIDE_WORKSPACE", "{escaping}: {err}");
            }
            let inner = RepoPath::new("inner.rs").unwrap();
            assert_eq!(workspace.read(&inner, 1024).unwrap(), b"a\n");
        }
    }

    #[cfg(unix)]
    #[test]
    fn locate_checks_the_nearest_existing_ancestor() {
        let (dir, workspace) = ws();
        link(dir.path(), &workspace.root().join("up"));
        let new_file = RepoPath::new("src/new/deeper.rs").unwrap();
        assert_eq!(
            workspace.locate(&new_file).unwrap(),
            workspace.root().join("src/new/deeper.rs")
        );
        let through_link = RepoPath::new("up/new/file.rs").unwrap();
        assert_eq!(
            workspace.locate(&through_link).unwrap_err().code(),
            "PATH_OUTSIDE_WORKSPACE"
        );
    }

    #[cfg(unix)]
    #[test]
    fn writes_refuse_links_directories_and_git_in_any_case() {
        let (dir, workspace) = ws();
        std::fs::create_dir_all(workspace.root().join(".git/hooks")).unwrap();
        link(
            &workspace.root().join(".git"),
            &workspace.root().join("gitlink"),
        );
        link(
            &dir.path().join("nowhere"),
            &workspace.root().join("dangling.toml"),
        );
        assert!(
            workspace
                .writable(&RepoPath::new("src/b.rs").unwrap())
                .is_ok()
        );
        for (path, reason) in [
            (".git/hooks/pre-commit", ".git"),
            (".GIT/hooks/pre-commit", ".git"),
            ("gitlink/hooks/pre-commit", ".git"),
            ("dangling.toml", "symbolic link"),
            ("src", "directory"),
        ] {
            let err = workspace
                .writable(&RepoPath::new(path).unwrap())
                .unwrap_err();
            assert!(err.to_string().contains(reason), "{path}: {err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn writes_replace_nothing_outside() {
        let (dir, workspace) = ws();
        let outside = dir.path().join("target.toml");
        link(&outside, &workspace.root().join("tollgate.toml"));
        let config = RepoPath::new("tollgate.toml").unwrap();
        assert!(
            workspace.is_occupied(&config),
            "a dangling link is something"
        );
        let err = workspace.write(&config, b"x").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!outside.exists());
        let fresh = RepoPath::new("new/dir/file.txt").unwrap();
        assert!(!workspace.is_occupied(&fresh));
        workspace.write(&fresh, b"hello").unwrap();
        workspace.write(&fresh, b"again").unwrap();
        assert_eq!(workspace.read(&fresh, 100).unwrap(), b"again");
        let names: Vec<_> = std::fs::read_dir(workspace.root().join("new/dir"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["file.txt"], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn own_dirs_go_through_no_link() {
        let (dir, workspace) = ws();
        assert_eq!(
            workspace.state_dir("index").unwrap(),
            workspace.root().join(".tollgate/index")
        );
        link(
            &workspace.root().join("src"),
            &workspace.root().join(".tollgate"),
        );
        let err = workspace.state_dir("index").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        std::fs::remove_file(workspace.root().join(".tollgate")).unwrap();
        link(dir.path(), &workspace.root().join(".tollgate"));
        assert!(workspace.state_dir("").is_err());
        let cache = RepoPath::new("cache").unwrap();
        std::fs::write(workspace.root().join("cache"), "").unwrap();
        let err = workspace.own_dir(&cache).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn reported_paths_become_repository_paths() {
        let (dir, workspace) = ws();
        let root = workspace.root().display().to_string();
        let rel = |reported: &str, base: &str| {
            workspace
                .relative(reported, base)
                .map(|p| p.as_str().to_string())
                .ok()
        };
        assert_eq!(rel("src/a.rs", "").as_deref(), Some("src/a.rs"));
        assert_eq!(
            rel("./x/../lib/b.ts", "pkg").as_deref(),
            Some("pkg/lib/b.ts")
        );
        assert_eq!(rel("src\\win.ts", "").as_deref(), Some("src/win.ts"));
        assert_eq!(
            rel(&format!("{root}/src/a.rs"), "").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(rel("../elsewhere.ts", ""), None);
        assert_eq!(rel("../../x.ts", "pkg"), None);
        assert_eq!(rel("/usr/lib/x.d.ts", ""), None);
        assert_eq!(rel(&root, ""), None, "the root is not a file");
        #[cfg(unix)]
        {
            link(Path::new("/etc"), &workspace.root().join("etc"));
            assert_eq!(rel("etc/passwd", ""), None);
            assert_eq!(rel(&format!("{root}/etc/passwd"), ""), None);
            // The root reached through a link outside it.
            link(workspace.root(), &dir.path().join("alias"));
            let alias = dir.path().join("alias/src/a.rs").display().to_string();
            assert_eq!(rel(&alias, "").as_deref(), Some("src/a.rs"));
        }
    }

    #[test]
    fn the_state_gitignore_hides_state_but_not_the_teams_tools() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join(".tollgate")).unwrap();
        std::fs::write(dir.path().join(".tollgate/.gitignore"), OLD_STATE_GITIGNORE).unwrap();
        workspace.create_state_dir("index").unwrap();
        let ignored = |path: &str| repo.is_path_ignored(path).unwrap();
        assert!(ignored(".tollgate/tollgate.db"));
        assert!(ignored(".tollgate/index/x.bin"));
        assert!(!ignored(".tollgate/tools/create_ticket.lua"));
        assert!(!ignored(".tollgate/tools/lib/helpers.lua"));
    }
}
