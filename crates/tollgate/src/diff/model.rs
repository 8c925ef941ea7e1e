//! The parsed diff. A [`Diff`] owns the raw bytes it was parsed from; lines refer to them by
//! range, so a 100 MB diff costs little more than its own size in memory.

use std::borrow::Cow;
use std::ops::Range;

/// A parsed unified diff (git or plain patch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    pub(crate) bytes: DiffBytes,
    pub(crate) files: Vec<FileDiff>,
}

/// The diff's bytes, kept as a `String` when they are valid UTF-8 (nearly always): a line's text
/// is then a slice, where lossy decoding would re-validate every line for every check that reads
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiffBytes {
    Text(String),
    Binary(Vec<u8>),
}

impl DiffBytes {
    pub(crate) fn new(bytes: Vec<u8>) -> DiffBytes {
        match String::from_utf8(bytes) {
            Ok(text) => DiffBytes::Text(text),
            Err(err) => DiffBytes::Binary(err.into_bytes()),
        }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            DiffBytes::Text(text) => text.as_bytes(),
            DiffBytes::Binary(bytes) => bytes,
        }
    }
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    /// Renamed, with git's similarity index (0–100) when the diff gave one.
    Renamed,
    Copied,
}

/// One file's section of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// `None` for an added file (`/dev/null`).
    pub old_path: Option<String>,
    /// `None` for a deleted file (`/dev/null`).
    pub new_path: Option<String>,
    pub status: FileStatus,
    /// Similarity index of a rename or copy, 0–100.
    pub similarity: Option<u8>,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// A binary change (`Binary files … differ` or a `GIT binary patch` block).
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// 1-based line of the diff where this file's section starts (for error messages).
    pub diff_line: usize,
}

/// One `@@ -a,b +c,d @@ section` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_count: u32,
    pub new_start: u32,
    pub new_count: u32,
    /// The text after the closing `@@` (often the enclosing function), without the leading space.
    pub section: String,
    pub lines: Vec<Line>,
}

/// The kind of a hunk line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk. Its text lives in the owning [`Diff`]; read it with [`Diff::line_text`]
/// or [`Diff::line_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: LineKind,
    /// Line number in the old file (context and removed lines).
    pub old_line: Option<u32>,
    /// Line number in the new file (context and added lines).
    pub new_line: Option<u32>,
    /// Followed by `\ No newline at end of file`.
    pub no_newline_at_eof: bool,
    /// Byte range of the content in the diff: after the `+`/`-`/` ` marker, before the `\n`
    /// (a `\r` of a CRLF line stays inside, so content is kept exact).
    pub(crate) content: Range<usize>,
}

impl Diff {
    /// An empty diff (no files).
    pub fn empty() -> Diff {
        Diff {
            bytes: DiffBytes::Text(String::new()),
            files: Vec::new(),
        }
    }

    pub fn files(&self) -> &[FileDiff] {
        &self.files
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The raw bytes the diff was parsed from.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_bytes()
    }

    /// The exact bytes of a line's content (a CRLF line keeps its `\r`).
    pub fn line_bytes(&self, line: &Line) -> &[u8] {
        &self.bytes.as_bytes()[line.content.clone()]
    }

    /// A line's content as text: invalid UTF-8 is replaced, a trailing `\r` is dropped.
    pub fn line_text(&self, line: &Line) -> Cow<'_, str> {
        // Content starts after an ASCII marker and ends before `\n`, so in valid UTF-8 both ends
        // are character boundaries and the slice cannot fail; `get` keeps that from panicking.
        if let DiffBytes::Text(text) = &self.bytes
            && let Some(content) = text.get(line.content.clone())
        {
            return Cow::Borrowed(content.strip_suffix('\r').unwrap_or(content));
        }
        let bytes = self.line_bytes(line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        String::from_utf8_lossy(bytes)
    }

    /// Total added and removed lines over all files.
    pub fn line_counts(&self) -> (usize, usize) {
        self.files.iter().fold((0, 0), |(a, r), f| {
            let (fa, fr) = f.line_counts();
            (a + fa, r + fr)
        })
    }
}

impl FileDiff {
    /// The path this change is known by: the new path, or the old one for a deletion.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }

    /// Added lines, in order.
    pub fn added_lines(&self) -> impl Iterator<Item = &Line> {
        self.hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter(|l| l.kind == LineKind::Added)
    }

    /// Removed lines, in order.
    pub fn removed_lines(&self) -> impl Iterator<Item = &Line> {
        self.hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter(|l| l.kind == LineKind::Removed)
    }

    /// (added, removed) line counts.
    pub fn line_counts(&self) -> (usize, usize) {
        let mut added = 0;
        let mut removed = 0;
        for line in self.hunks.iter().flat_map(|h| h.lines.iter()) {
            match line.kind {
                LineKind::Added => added += 1,
                LineKind::Removed => removed += 1,
                LineKind::Context => {}
            }
        }
        (added, removed)
    }
}
