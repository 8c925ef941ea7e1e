//! The checkout's files as renderers may read them: only under [`ReportConfig::repo_root`]
//! (symlinks resolved, nothing outside it), only regular files up to a size cap, each read once.
//!
//! Formats whose columns are not [`Location`](crate::findings::Location)'s (characters) convert
//! through the line text: rdjson wants UTF-8 bytes. Without the file there is nothing to convert
//! through, and the caller leaves the columns out rather than guess.
//!
//! [`ReportConfig::repo_root`]: super::ReportConfig::repo_root

use std::collections::HashMap;
use std::path::Path;

use crate::workspace::{RepoPath, Workspace};

/// Files larger than this are not read.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Lines of the files read so far, by repository-relative path.
pub(super) struct SourceFiles {
    workspace: Option<Workspace>,
    files: HashMap<String, Option<Vec<String>>>,
}

impl SourceFiles {
    pub(super) fn new(repo_root: Option<&Path>) -> SourceFiles {
        SourceFiles {
            workspace: open(repo_root),
            files: HashMap::new(),
        }
    }

    /// The text of 1-based `line` of `path`, without its line ending; `None` when the file
    /// cannot be read or is shorter.
    pub(super) fn line(&mut self, path: &str, line: u32) -> Option<&str> {
        let workspace = self.workspace.as_ref()?;
        let lines = self
            .files
            .entry(path.to_string())
            .or_insert_with(|| read_lines(workspace, path))
            .as_ref()?;
        let idx = usize::try_from(line).ok()?.checked_sub(1)?;
        lines.get(idx).map(String::as_str)
    }

    /// Converts a 1-based character column of `line` of `path` to a 1-based UTF-8 byte
    /// column. A column one past the last character (an exclusive end) is allowed.
    pub(super) fn byte_column(&mut self, path: &str, line: u32, char_column: u32) -> Option<u32> {
        let text = self.line(path, line)?;
        byte_column(text, char_column)
    }
}

/// The 1-based byte column of the 1-based character column `char_column` of `text`; `None`
/// when the column lies more than one past the end of the line.
pub(super) fn byte_column(text: &str, char_column: u32) -> Option<u32> {
    let n_before = usize::try_from(char_column).ok()?.checked_sub(1)?;
    let offset = if n_before == text.chars().count() {
        text.len()
    } else {
        text.char_indices().nth(n_before)?.0
    };
    u32::try_from(offset + 1).ok()
}

fn read_lines(workspace: &Workspace, path: &str) -> Option<Vec<String>> {
    let text = read_confined(workspace, path)?;
    Some(
        text.split('\n')
            .map(|line| line.strip_suffix('\r').unwrap_or(line).to_string())
            .collect(),
    )
}

/// Reads `path` (repository-relative) in `workspace` as UTF-8 with replacement characters:
/// only a regular file of at most 16 MiB that resolves inside the root, symlinks included.
/// Every renderer that reads the checkout goes through here.
pub(super) fn read_confined(workspace: &Workspace, path: &str) -> Option<String> {
    let bytes = workspace
        .read(&RepoPath::new(path).ok()?, MAX_FILE_BYTES)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The workspace at `repo_root`, when it exists.
pub(super) fn open(repo_root: Option<&Path>) -> Option<Workspace> {
    repo_root.and_then(|root| Workspace::new(root).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::write_file;

    #[test]
    fn byte_columns_count_utf8_bytes() {
        assert_eq!(byte_column("abc", 1), Some(1));
        assert_eq!(byte_column("abc", 4), Some(4), "exclusive end");
        assert_eq!(byte_column("abc", 5), None);
        assert_eq!(byte_column("abc", 0), None);
        // `é` is 2 bytes, `日` 3, `😀` 4.
        assert_eq!(byte_column("é日😀x", 2), Some(3));
        assert_eq!(byte_column("é日😀x", 3), Some(6));
        assert_eq!(byte_column("é日😀x", 4), Some(10));
        assert_eq!(byte_column("é日😀x", 5), Some(11));
    }

    #[test]
    fn reads_lines_inside_the_checkout_only() {
        let outer = tempfile::tempdir().unwrap();
        write_file(outer.path(), "secret.txt", "top secret\n");
        let root = outer.path().join("repo");
        write_file(&root, "a.txt", "one\r\ntwo ü\n");
        let mut files = SourceFiles::new(Some(&root));
        assert_eq!(files.line("a.txt", 1), Some("one"));
        assert_eq!(files.line("a.txt", 2), Some("two ü"));
        assert_eq!(files.line("a.txt", 9), None);
        assert_eq!(files.line("../secret.txt", 1), None);
        assert_eq!(files.byte_column("a.txt", 2, 6), Some(7));
        assert_eq!(SourceFiles::new(None).line("a.txt", 1), None);
    }
}
