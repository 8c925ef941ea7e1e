//! The workspace as analyzers see it: which paths may be handed to a tool, how the paths a tool
//! prints become repository-relative, and the source lines findings are anchored to.
//!
//! Paths come from untrusted places (the diff, a tool's output, a SARIF file), so each one is
//! checked before use: changed files must be plain relative paths that resolve, symlinks
//! included, to a regular file inside the workspace; reported paths are normalised lexically
//! and refused when they leave the workspace.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Files larger than this are not read for anchors or fixes.
const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// The repository root, as given and canonicalised.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    given: PathBuf,
    canonical: PathBuf,
}

impl Workspace {
    pub(crate) fn new(root: &Path) -> std::io::Result<Workspace> {
        Ok(Workspace {
            given: root.to_path_buf(),
            canonical: root.canonicalize()?,
        })
    }

    /// The canonical root: tools run here.
    pub(crate) fn root(&self) -> &Path {
        &self.canonical
    }

    /// Checks a changed path before it goes on a tool's command line. The error is the reason.
    pub(crate) fn check_changed_file(&self, path: &str) -> Result<(), &'static str> {
        check_relative_path(path)?;
        let resolved = self
            .canonical
            .join(path)
            .canonicalize()
            .map_err(|_| "the file does not exist in the workspace")?;
        if !resolved.starts_with(&self.canonical) {
            return Err("it resolves outside the workspace");
        }
        if !resolved.is_file() {
            return Err("it is not a regular file");
        }
        Ok(())
    }

    /// Turns a path printed by a tool into a `/`-separated path relative to the root. Relative
    /// paths are taken relative to `base` (the tool's working directory, relative to the root).
    /// `None` when the path lies outside the workspace.
    pub(crate) fn relative(&self, reported: &str, base: &str) -> Option<String> {
        let reported = reported.replace('\\', "/");
        let path = Path::new(&reported);
        if path.is_absolute() {
            let normalized = normalize(path)?;
            for root in [&self.canonical, &self.given] {
                if let Ok(rest) = normalized.strip_prefix(root) {
                    return to_slash(rest);
                }
            }
            // The root may be reached through a symlink the tool did not resolve.
            let resolved = normalized.canonicalize().ok()?;
            return to_slash(resolved.strip_prefix(&self.canonical).ok()?);
        }
        to_slash(&normalize(&Path::new(base).join(path))?)
    }
}

/// The rules every relative path from outside must follow (upstream's `changed_files` rules).
pub(crate) fn check_relative_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        Err("empty path")
    } else if path.starts_with('/') || path.starts_with('\\') || path.get(1..2) == Some(":") {
        Err("absolute paths are not allowed")
    } else if path.split(['/', '\\']).any(|segment| segment == "..") {
        Err("`..` segments are not allowed")
    } else if path.chars().any(char::is_control) {
        Err("control characters are not allowed")
    } else if path.starts_with('-') {
        Err("paths may not start with `-`")
    } else {
        Ok(())
    }
}

/// Resolves `.` and `..` without touching the file system; `None` when `..` climbs above the
/// start of a relative path.
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

fn to_slash(path: &Path) -> Option<String> {
    let text = path.to_str()?.replace('\\', "/");
    (!text.is_empty()).then_some(text)
}

/// Source files read on demand, each at most once.
#[derive(Debug)]
pub(crate) struct SourceFiles<'w> {
    workspace: &'w Workspace,
    files: HashMap<String, Option<SourceText>>,
}

/// A file's bytes and where its lines start.
#[derive(Debug)]
pub(crate) struct SourceText {
    bytes: Vec<u8>,
    line_starts: Vec<usize>,
}

impl SourceText {
    fn new(bytes: Vec<u8>) -> SourceText {
        let mut line_starts = vec![0];
        line_starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(idx, _)| idx + 1),
        );
        if line_starts.last() == Some(&bytes.len()) && !bytes.is_empty() {
            line_starts.pop();
        }
        SourceText { bytes, line_starts }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Byte range of 1-based `line`, without its line ending.
    pub(crate) fn line_range(&self, line: u32) -> Option<std::ops::Range<usize>> {
        let idx = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.line_starts.get(idx)?;
        let mut end = self
            .line_starts
            .get(idx + 1)
            .copied()
            .unwrap_or(self.bytes.len());
        for ending in [b'\n', b'\r'] {
            if end > start && self.bytes[end - 1] == ending {
                end -= 1;
            }
        }
        Some(start..end)
    }

    /// 1-based `line` as text (invalid UTF-8 replaced).
    pub(crate) fn line(&self, line: u32) -> Option<String> {
        let range = self.line_range(line)?;
        Some(String::from_utf8_lossy(&self.bytes[range]).into_owned())
    }
}

impl<'w> SourceFiles<'w> {
    pub(crate) fn new(workspace: &'w Workspace) -> SourceFiles<'w> {
        SourceFiles {
            workspace,
            files: HashMap::new(),
        }
    }

    /// The file at a repository-relative path, when it resolves inside the workspace.
    pub(crate) fn get(&mut self, path: &str) -> Option<&SourceText> {
        let workspace = self.workspace;
        self.files
            .entry(path.to_string())
            .or_insert_with(|| read_confined(workspace, path))
            .as_ref()
    }
}

fn read_confined(workspace: &Workspace, path: &str) -> Option<SourceText> {
    check_relative_path(path).ok()?;
    let resolved = workspace.canonical.join(path).canonicalize().ok()?;
    if !resolved.starts_with(&workspace.canonical) {
        return None;
    }
    let meta = std::fs::metadata(&resolved).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
        return None;
    }
    std::fs::read(&resolved).ok().map(SourceText::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_files_must_be_plain_paths_to_files_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.ts"), "x\n").unwrap();
        std::fs::write(dir.path().join("outside.ts"), "x\n").unwrap();
        let workspace = Workspace::new(&root).unwrap();

        assert_eq!(workspace.check_changed_file("src/a.ts"), Ok(()));
        for (path, reason) in [
            ("", "empty"),
            ("/etc/passwd", "absolute"),
            ("../outside.ts", ".."),
            ("src/../../outside.ts", ".."),
            ("-rf", "`-`"),
            ("src/a\n.ts", "control"),
            ("src/missing.ts", "does not exist"),
            ("src", "regular file"),
        ] {
            let err = workspace.check_changed_file(path).unwrap_err();
            assert!(err.contains(reason), "{path:?}: {err}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.ts"), root.join("link.ts"))
                .unwrap();
            let err = workspace.check_changed_file("link.ts").unwrap_err();
            assert!(err.contains("outside"), "{err}");
        }
    }

    #[test]
    fn reported_paths_become_repository_relative() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let root = workspace.root().display().to_string();
        assert_eq!(
            workspace.relative("src/a.ts", "").as_deref(),
            Some("src/a.ts")
        );
        assert_eq!(
            workspace.relative("./src/../lib/b.ts", "pkg").as_deref(),
            Some("pkg/lib/b.ts")
        );
        assert_eq!(
            workspace.relative("src\\win.ts", "").as_deref(),
            Some("src/win.ts")
        );
        assert_eq!(
            workspace
                .relative(&format!("{root}/src/c.ts"), "")
                .as_deref(),
            Some("src/c.ts")
        );
        assert_eq!(workspace.relative("../elsewhere.ts", ""), None);
        assert_eq!(workspace.relative("../../x.ts", "pkg"), None);
        assert_eq!(workspace.relative("/usr/lib/x.d.ts", ""), None);
    }

    #[test]
    fn lines_are_read_once_and_confined() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.ts"), "one\r\ntwo\n\nfour").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let mut files = SourceFiles::new(&workspace);
        let text = files.get("a.ts").unwrap();
        assert_eq!(text.line(1).as_deref(), Some("one"));
        assert_eq!(text.line(2).as_deref(), Some("two"));
        assert_eq!(text.line(3).as_deref(), Some(""));
        assert_eq!(text.line(4).as_deref(), Some("four"));
        assert_eq!(text.line(5), None);
        assert_eq!(text.line(0), None);
        assert!(files.get("../a.ts").is_none());
        assert!(files.get("missing.ts").is_none());

        let ends_with_newline = SourceText::new(b"a\nb\n".to_vec());
        assert_eq!(ends_with_newline.line(2).as_deref(), Some("b"));
        assert_eq!(ends_with_newline.line(3), None);
    }
}
