//! The workspace as analyzers see it: which changed paths may be handed to a tool and the
//! source lines findings are anchored to. Confinement itself is [`crate::workspace`]'s: paths
//! come from untrusted places (the diff, a tool's output, a SARIF file), so each one becomes a
//! [`RepoPath`] and is resolved by the [`Workspace`] before use.

use std::collections::HashMap;

use crate::workspace::{PathError, RepoPath, Workspace};

/// Files larger than this are not read for anchors or fixes.
const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Checks a changed path before it goes on a tool's command line: a [`RepoPath`] that does not
/// start with `-` and resolves, symlinks included, to a regular file inside the workspace.
pub(crate) fn check_changed_file(workspace: &Workspace, path: &str) -> Result<RepoPath, String> {
    let path = crate::workspace::changed_file(path).map_err(|err| err.reason())?;
    let resolved = workspace.resolve(&path).map_err(|err| match err {
        PathError::Outside { .. } => "it resolves outside the workspace".to_string(),
        err => err.reason(),
    })?;
    if !resolved.is_file() {
        return Err("it is not a regular file".to_string());
    }
    Ok(path)
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
    let path = RepoPath::new(path).ok()?;
    workspace
        .read(&path, MAX_SOURCE_BYTES)
        .ok()
        .map(SourceText::new)
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

        assert_eq!(
            check_changed_file(&workspace, "src/a.ts").map(|p| p.to_string()),
            Ok("src/a.ts".to_string())
        );
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
            let err = check_changed_file(&workspace, path).unwrap_err();
            assert!(err.contains(reason), "{path:?}: {err}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.ts"), root.join("link.ts"))
                .unwrap();
            let err = check_changed_file(&workspace, "link.ts").unwrap_err();
            assert!(err.contains("outside"), "{err}");
        }
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
