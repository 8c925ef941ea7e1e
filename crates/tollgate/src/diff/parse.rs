//! The unified-diff parser: git diffs (`diff --git` with extended headers) and plain patches
//! (`diff -u`, `diff -ruN`, svn, `git format-patch` mails), in one linear pass over the bytes.
//!
//! The parser is strict where strictness catches damage and lenient where real tools differ:
//!
//! - **Hunk counts are the law.** Every `@@ -a,b +c,d @@` hunk must contain exactly `b` old-side
//!   (context and removed) and `d` new-side (context and added) lines. A diff cut short, or a
//!   hunk with lines its header does not declare, is an error naming the line, never a silent
//!   partial parse. Counting is also what tells a removed line `-- x` from a mail signature.
//! - **Junk before the first file is ignored** (mail headers, commit messages, diffstats), and
//!   so is everything after a format-patch signature (`-- `) or a `git log -p` commit line
//!   until the next file starts. Between files only known noise is accepted: empty lines,
//!   `diff -r` command lines, svn `Index:`/`====` lines and `Only in` lines.
//! - **Paths.** C-quoted paths (`"a/t\303\251st"`) are decoded, bytes that are not UTF-8 are
//!   replaced. `rename`/`copy` headers win over `---`/`+++` lines, which win over the
//!   `diff --git` line. The `diff --git a/X b/Y` line is ambiguous when paths contain ` b/`;
//!   it is split at the separator nearest the middle, which is exact whenever both names are
//!   the same (the only case where git gives no other header to go by). Prefixes are stripped
//!   when the `diff --git` line shows them (`a/` `b/`, or git's mnemonic `c/` `i/` `w/` `o/`);
//!   a `--no-prefix` diff keeps its paths as written. Plain patches lose `a/` and `b/` only
//!   when both sides carry them (`/dev/null` aside).
//! - **Binary changes** (`Binary files … differ`, `GIT binary patch`) set `binary` and carry no
//!   hunks; the base85 data of a binary patch is skipped, not decoded or checked.
//! - **Line endings.** A line's content keeps a `\r` before its `\n`, so CRLF files survive
//!   exactly; header lines ignore trailing `\r`, so a patch saved with CRLF endings still parses.
//!
//! Combined diffs of merges (`diff --cc`, `@@@`) are refused with an error saying so.
//!
//! Memory: the [`Diff`] keeps the input and each line costs one small [`Line`] record of byte
//! offsets, so a diff of ordinary source lines needs about twice its size in total.

use crate::diff::model::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};

/// Why a diff could not be parsed, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct DiffError {
    /// 1-based line of the diff where the problem was found; one past the last line when the
    /// input ended too early.
    pub line: usize,
    /// What went wrong, for callers that branch on it.
    pub kind: DiffErrorKind,
    /// What was expected and what was found (the `Display` prefixes it with the line).
    pub message: String,
}

/// The kinds of [`DiffError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiffErrorKind {
    /// A hunk ended, at another line or at the end of the input, before it had all the lines
    /// its header declares.
    TruncatedHunk,
    /// A hunk has a line its header has no room for (more old or new lines than declared).
    HunkTooLong,
    /// A malformed `@@` line.
    BadHunkHeader,
    /// A malformed or contradictory file header: paths, quoting, modes, similarity.
    BadFileHeader,
    /// A file's `---`/`+++` lines are not followed by any hunk.
    MissingHunk,
    /// A line that fits nowhere in the diff.
    UnexpectedLine,
    /// A combined diff of a merge (`diff --cc`, `diff --combined`, `@@@`), which is not supported.
    CombinedDiff,
}

/// Parses a unified diff (a git diff or a plain patch) into a [`Diff`] that owns `bytes`.
///
/// An empty input, or one without any file header, gives an empty diff.
pub fn parse(bytes: Vec<u8>) -> Result<Diff, DiffError> {
    let files = Parser::new(&bytes).run()?;
    Ok(Diff {
        bytes: super::model::DiffBytes::new(bytes),
        files,
    })
}

/// One line of the input: `start..end` excludes the `\n`.
#[derive(Debug, Clone, Copy)]
struct RawLine {
    start: usize,
    end: usize,
    /// 1-based.
    number: usize,
}

/// Splits the input into lines, each scanned exactly once.
#[derive(Debug)]
struct LineReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    n_lines: usize,
    peeked: Option<RawLine>,
}

impl<'a> LineReader<'a> {
    fn new(bytes: &'a [u8]) -> LineReader<'a> {
        // A UTF-8 byte order mark (editors on Windows add one) would hide the first header.
        let pos = if bytes.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        LineReader {
            bytes,
            pos,
            n_lines: 0,
            peeked: None,
        }
    }

    fn next_line(&mut self) -> Option<RawLine> {
        if let Some(line) = self.peeked.take() {
            return Some(line);
        }
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let start = self.pos;
        let end = match rest.iter().position(|&b| b == b'\n') {
            Some(offset) => start + offset,
            None => self.bytes.len(),
        };
        self.pos = (end + 1).min(self.bytes.len());
        self.n_lines += 1;
        Some(RawLine {
            start,
            end,
            number: self.n_lines,
        })
    }

    fn peek(&mut self) -> Option<RawLine> {
        if self.peeked.is_none() {
            self.peeked = self.next_line();
        }
        self.peeked
    }

    fn text(&self, line: RawLine) -> &'a [u8] {
        self.bytes.get(line.start..line.end).unwrap_or_default()
    }

    /// The line number an error at the end of the input refers to: one past the last line.
    fn end_line(&self) -> usize {
        self.n_lines + 1
    }

    fn remaining_bytes(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }
}

/// Where the parser is, which decides what the next line may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first file, or after a mail signature or a `git log` commit line: anything
    /// that does not start a file is ignored.
    Preamble,
    /// Between files, after known noise such as a `diff -r` command line.
    Between,
    /// After a `diff --git` line: extended headers, `---`/`+++`, binary markers.
    GitHeader,
    /// After a file's `---`/`+++` lines or one of its hunks: more hunks or the next file.
    Hunks,
    /// After a binary marker: the file is complete, only the next file may follow.
    Closed,
    /// Inside a `GIT binary patch` block.
    BinaryPatch,
}

/// A path token from a `---`/`+++` or `Binary files` line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HeaderPath {
    DevNull,
    Path(Vec<u8>),
}

/// The two names of a `diff --git` line.
#[derive(Debug)]
struct GitLine {
    old: Vec<u8>,
    new: Vec<u8>,
    /// The `a/`-style prefix letters when the line shows them; `None` for `--no-prefix`.
    prefixes: Option<(u8, u8)>,
}

/// A file whose headers are still being read.
#[derive(Debug)]
struct PendingFile {
    diff_line: usize,
    git: Option<GitLine>,
    minus: Option<HeaderPath>,
    plus: Option<HeaderPath>,
    /// Line of the `---` line, when there was one (for the missing-hunk error).
    patch_header_line: Option<usize>,
    rename_from: Option<Vec<u8>>,
    rename_to: Option<Vec<u8>>,
    copy_from: Option<Vec<u8>>,
    copy_to: Option<Vec<u8>>,
    new_file: bool,
    deleted_file: bool,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    similarity: Option<u8>,
    binary: bool,
    hunks: Vec<Hunk>,
}

impl PendingFile {
    fn new(diff_line: usize) -> PendingFile {
        PendingFile {
            diff_line,
            git: None,
            minus: None,
            plus: None,
            patch_header_line: None,
            rename_from: None,
            rename_to: None,
            copy_from: None,
            copy_to: None,
            new_file: false,
            deleted_file: false,
            old_mode: None,
            new_mode: None,
            similarity: None,
            binary: false,
            hunks: Vec::new(),
        }
    }
}

#[derive(Debug)]
struct Parser<'a> {
    lines: LineReader<'a>,
    files: Vec<FileDiff>,
    current: Option<PendingFile>,
    state: State,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8]) -> Parser<'a> {
        Parser {
            lines: LineReader::new(bytes),
            files: Vec::new(),
            current: None,
            state: State::Preamble,
        }
    }

    fn run(mut self) -> Result<Vec<FileDiff>, DiffError> {
        while let Some(line) = self.lines.next_line() {
            self.handle(line)?;
        }
        let end = self.lines.end_line();
        self.finish_file(end)?;
        Ok(self.files)
    }

    fn handle(&mut self, line: RawLine) -> Result<(), DiffError> {
        let text = trim_cr(self.lines.text(line));
        if self.state == State::BinaryPatch {
            if is_binary_patch_line(text) {
                return Ok(());
            }
            self.state = State::Closed;
        }

        // Lines that start a file, or refuse the input, whatever state we are in.
        if text.starts_with(b"diff --cc ") || text.starts_with(b"diff --combined ") {
            return Err(combined_diff(line.number));
        }
        if let Some(rest) = text.strip_prefix(b"diff --git ") {
            return self.start_git_file(line, rest);
        }
        if let Some(minus) = text.strip_prefix(b"--- ")
            && let Some(plus_line) = self.lines.peek()
            && let Some(plus) = trim_cr(self.lines.text(plus_line)).strip_prefix(b"+++ ")
        {
            self.lines.next_line();
            return self.patch_header(line, minus, plus);
        }
        if let Some(pair) = binary_files_line(text) {
            return self.binary_files(line, pair);
        }

        match self.state {
            State::Preamble => {
                // Otherwise a `git diff --color` would silently parse as an empty diff.
                if text.starts_with(b"\x1b[") {
                    return Err(DiffError::new(
                        line.number,
                        DiffErrorKind::UnexpectedLine,
                        "the diff contains ANSI color codes; produce it with `--no-color`",
                    ));
                }
                if text.starts_with(b"@@ -") {
                    return Err(DiffError::new(
                        line.number,
                        DiffErrorKind::UnexpectedLine,
                        "hunk header before any file header (expected a `diff --git` line or \
                         `---`/`+++` lines first)",
                    ));
                }
                Ok(())
            }
            State::GitHeader => self.git_header_line(line, text),
            State::Hunks => {
                if text.starts_with(b"@@@") {
                    return Err(combined_diff(line.number));
                }
                if text.starts_with(b"@@") {
                    let hunk = self.parse_hunk(line, text)?;
                    if let Some(file) = self.current.as_mut() {
                        file.hunks.push(hunk);
                    }
                    return Ok(());
                }
                self.between_files(line, text)
            }
            State::Closed | State::Between | State::BinaryPatch => self.between_files(line, text),
        }
    }

    /// A line after a complete file (or a complete hunk): only trailers and known noise.
    fn between_files(&mut self, line: RawLine, text: &[u8]) -> Result<(), DiffError> {
        if text.is_empty() {
            return Ok(());
        }
        if is_section_end(text) {
            self.finish_file(line.number)?;
            self.state = State::Preamble;
            return Ok(());
        }
        if is_noise(text) {
            self.finish_file(line.number)?;
            self.state = State::Between;
            return Ok(());
        }
        Err(self.unexpected(line, text))
    }

    /// The error for a line that fits nowhere, worded after what the parser was expecting.
    fn unexpected(&self, line: RawLine, text: &[u8]) -> DiffError {
        let found = snippet(text);
        let (kind, message) = match (self.state, self.current.as_ref()) {
            (State::Hunks, Some(file)) => match file.hunks.last() {
                Some(hunk) if matches!(text.first(), Some(b' ' | b'-' | b'+' | b'\\')) => (
                    DiffErrorKind::HunkTooLong,
                    format!(
                        "hunk {} already has all its {} old and {} new lines (found {found}; \
                         the hunk has more lines than its header declares)",
                        hunk_label(hunk),
                        hunk.old_count,
                        hunk.new_count
                    ),
                ),
                Some(_) => (
                    DiffErrorKind::UnexpectedLine,
                    format!(
                        "expected a hunk header `@@ -a,b +c,d @@` or the next file, found {found}"
                    ),
                ),
                None => (
                    DiffErrorKind::MissingHunk,
                    format!(
                        "expected a hunk header `@@ -a,b +c,d @@` after the `---`/`+++` lines, found {found}"
                    ),
                ),
            },
            (State::Closed, Some(file)) if file.binary && text.starts_with(b"@@") => (
                DiffErrorKind::UnexpectedLine,
                format!(
                    "binary file `{}` cannot have hunks, found {found}",
                    pending_name(file)
                ),
            ),
            (State::GitHeader, _) if text.starts_with(b"@@") => (
                DiffErrorKind::UnexpectedLine,
                format!("hunk header before the file's `---`/`+++` lines, found {found}"),
            ),
            (State::GitHeader, _) => (
                DiffErrorKind::UnexpectedLine,
                format!(
                    "expected a git extended header (`index`, `new file mode`, `rename from`, …), \
                     `---`/`+++` lines or the next file, found {found}"
                ),
            ),
            _ => (
                DiffErrorKind::UnexpectedLine,
                format!("expected the next file's header, found {found}"),
            ),
        };
        DiffError::new(line.number, kind, message)
    }

    fn start_git_file(&mut self, line: RawLine, rest: &[u8]) -> Result<(), DiffError> {
        self.finish_file(line.number)?;
        let git_line = split_git_line(rest).map_err(|why| {
            DiffError::new(
                line.number,
                DiffErrorKind::BadFileHeader,
                format!("cannot read the paths of `diff --git` line: {why}"),
            )
        })?;
        let mut file = PendingFile::new(line.number);
        file.git = Some(git_line);
        self.current = Some(file);
        self.state = State::GitHeader;
        Ok(())
    }

    /// A `---` line followed by a `+++` line: this git file's paths, or a new plain file.
    fn patch_header(&mut self, line: RawLine, minus: &[u8], plus: &[u8]) -> Result<(), DiffError> {
        let bad_path = |why: &str| {
            DiffError::new(
                line.number,
                DiffErrorKind::BadFileHeader,
                format!("bad path in `---`/`+++` lines: {why}"),
            )
        };
        let minus = patch_path(minus).map_err(bad_path)?;
        let plus = patch_path(plus).map_err(bad_path)?;
        if self.state != State::GitHeader {
            self.finish_file(line.number)?;
            self.current = Some(PendingFile::new(line.number));
        }
        if let Some(file) = self.current.as_mut() {
            file.minus = Some(minus);
            file.plus = Some(plus);
            file.patch_header_line = Some(line.number);
        }
        self.state = State::Hunks;
        Ok(())
    }

    /// `Binary files X and Y differ`: marks this git file binary, or is a plain binary file.
    fn binary_files(&mut self, line: RawLine, pair: &[u8]) -> Result<(), DiffError> {
        let (old, new) = split_pair(pair, b" and ").map_err(|why| {
            DiffError::new(
                line.number,
                DiffErrorKind::BadFileHeader,
                format!("cannot read the paths of `Binary files … differ` line: {why}"),
            )
        })?;
        let (old, new) = (header_path(old), header_path(new));
        if self.state == State::GitHeader {
            // The `diff --git` line names the file; this line only says whether a side is empty.
            if let Some(file) = self.current.as_mut() {
                file.binary = true;
                if old == HeaderPath::DevNull {
                    file.minus = Some(old);
                }
                if new == HeaderPath::DevNull {
                    file.plus = Some(new);
                }
            }
        } else {
            self.finish_file(line.number)?;
            let mut file = PendingFile::new(line.number);
            file.binary = true;
            file.minus = Some(old);
            file.plus = Some(new);
            self.current = Some(file);
        }
        self.state = State::Closed;
        Ok(())
    }

    /// One line of the extended header that follows `diff --git`.
    fn git_header_line(&mut self, line: RawLine, text: &[u8]) -> Result<(), DiffError> {
        let Some(file) = self.current.as_mut() else {
            return Err(self.unexpected(line, text));
        };
        let bad = |what: &str, why: &str| {
            DiffError::new(
                line.number,
                DiffErrorKind::BadFileHeader,
                format!("bad `{what}` header: {why} (found {})", snippet(text)),
            )
        };
        if let Some(rest) = text.strip_prefix(b"index ") {
            // `index <sha>..<sha>[ <mode>]`: the blob ids are of no use without the repository.
            if !rest.contains(&b'.') {
                return Err(bad("index", "expected `<sha>..<sha>`"));
            }
        } else if let Some(rest) = text.strip_prefix(b"old mode ") {
            file.old_mode = Some(parse_mode(rest).map_err(|why| bad("old mode", why))?);
        } else if let Some(rest) = text.strip_prefix(b"new mode ") {
            file.new_mode = Some(parse_mode(rest).map_err(|why| bad("new mode", why))?);
        } else if let Some(rest) = text.strip_prefix(b"deleted file mode ") {
            file.deleted_file = true;
            file.old_mode = Some(parse_mode(rest).map_err(|why| bad("deleted file mode", why))?);
        } else if let Some(rest) = text.strip_prefix(b"new file mode ") {
            file.new_file = true;
            file.new_mode = Some(parse_mode(rest).map_err(|why| bad("new file mode", why))?);
        } else if let Some(rest) = text.strip_prefix(b"similarity index ") {
            file.similarity =
                Some(parse_percent(rest).map_err(|why| bad("similarity index", why))?);
        } else if let Some(rest) = text.strip_prefix(b"dissimilarity index ") {
            // Only emitted for rewrites (`-B`); the model has no place for it, but check it.
            parse_percent(rest).map_err(|why| bad("dissimilarity index", why))?;
        } else if let Some(rest) = text
            .strip_prefix(b"rename from ")
            .or_else(|| text.strip_prefix(b"rename old "))
        {
            file.rename_from = Some(whole_path(rest).map_err(|why| bad("rename from", why))?);
        } else if let Some(rest) = text
            .strip_prefix(b"rename to ")
            .or_else(|| text.strip_prefix(b"rename new "))
        {
            file.rename_to = Some(whole_path(rest).map_err(|why| bad("rename to", why))?);
        } else if let Some(rest) = text.strip_prefix(b"copy from ") {
            file.copy_from = Some(whole_path(rest).map_err(|why| bad("copy from", why))?);
        } else if let Some(rest) = text.strip_prefix(b"copy to ") {
            file.copy_to = Some(whole_path(rest).map_err(|why| bad("copy to", why))?);
        } else if text == b"GIT binary patch" {
            file.binary = true;
            self.state = State::BinaryPatch;
        } else if text.starts_with(b"--- ") {
            return Err(DiffError::new(
                line.number,
                DiffErrorKind::BadFileHeader,
                format!(
                    "`---` line not followed by a `+++` line (found {})",
                    self.lines.peek().map_or_else(
                        || "end of input".to_owned(),
                        |l| snippet(self.lines.text(l))
                    )
                ),
            ));
        } else {
            return self.between_files(line, text);
        }
        Ok(())
    }

    /// Reads one hunk, header included, consuming exactly the lines it declares (and any
    /// `\ No newline at end of file` markers right after them).
    fn parse_hunk(&mut self, header_line: RawLine, text: &[u8]) -> Result<Hunk, DiffError> {
        let header = parse_hunk_header(text).map_err(|why| {
            DiffError::new(
                header_line.number,
                DiffErrorKind::BadHunkHeader,
                format!(
                    "malformed hunk header {}: {why} (expected `@@ -a,b +c,d @@`)",
                    snippet(text)
                ),
            )
        })?;
        // Reserve the least number of lines the hunk can have, but never more than the input
        // could hold: the counts are untrusted.
        let n_min_lines = usize::try_from(header.old_count.max(header.new_count)).unwrap_or(0);
        let capacity = n_min_lines.min(self.lines.remaining_bytes() / 2 + 1);
        let mut hunk = Hunk {
            old_start: header.old_start,
            old_count: header.old_count,
            new_start: header.new_start,
            new_count: header.new_count,
            section: header.section,
            lines: Vec::with_capacity(capacity),
        };
        let (mut old_left, mut new_left) = (hunk.old_count, hunk.new_count);
        let (mut old_line, mut new_line) = (hunk.old_start, hunk.new_start);

        while old_left > 0 || new_left > 0 {
            let Some(line) = self.lines.next_line() else {
                let end = self.lines.end_line();
                return Err(truncated(&hunk, old_left, new_left, end, "end of input"));
            };
            let raw = self.lines.text(line);
            let (kind, content_start) = match raw.first() {
                Some(b' ') => (LineKind::Context, line.start + 1),
                Some(b'-') => (LineKind::Removed, line.start + 1),
                Some(b'+') => (LineKind::Added, line.start + 1),
                Some(b'\\') => {
                    mark_no_newline(&mut hunk, line)?;
                    continue;
                }
                // Some tools and editors strip the space of an empty context line.
                None | Some(b'\r') if raw.len() <= 1 && old_left > 0 && new_left > 0 => {
                    (LineKind::Context, line.start)
                }
                _ => {
                    return Err(truncated(
                        &hunk,
                        old_left,
                        new_left,
                        line.number,
                        &snippet(raw),
                    ));
                }
            };
            let fits = match kind {
                LineKind::Context => old_left > 0 && new_left > 0,
                LineKind::Removed => old_left > 0,
                LineKind::Added => new_left > 0,
            };
            if !fits {
                return Err(too_long(&hunk, old_left, new_left, line.number, raw));
            }
            let (old, new) = match kind {
                LineKind::Context => (Some(old_line), Some(new_line)),
                LineKind::Removed => (Some(old_line), None),
                LineKind::Added => (None, Some(new_line)),
            };
            if old.is_some() {
                old_left -= 1;
                old_line = old_line.saturating_add(1);
            }
            if new.is_some() {
                new_left -= 1;
                new_line = new_line.saturating_add(1);
            }
            hunk.lines.push(Line {
                kind,
                old_line: old,
                new_line: new,
                no_newline_at_eof: false,
                content: content_start..line.end,
            });
        }

        // The marker for the hunk's last line comes after the counts are satisfied.
        while let Some(line) = self.lines.peek() {
            if !self.lines.text(line).starts_with(b"\\") {
                break;
            }
            self.lines.next_line();
            mark_no_newline(&mut hunk, line)?;
        }
        // Line records dominate memory on big diffs; growth may have doubled the reservation.
        hunk.lines.shrink_to_fit();
        Ok(hunk)
    }

    /// Turns the pending file into a [`FileDiff`]; `ended_at` is the line that ended it.
    fn finish_file(&mut self, ended_at: usize) -> Result<(), DiffError> {
        let Some(file) = self.current.take() else {
            return Ok(());
        };
        if let Some(header_line) = file.patch_header_line
            && file.hunks.is_empty()
            && !file.binary
        {
            return Err(DiffError::new(
                ended_at,
                DiffErrorKind::MissingHunk,
                format!(
                    "file `{}`: the `---`/`+++` lines at line {header_line} are not followed by \
                     any hunk (truncated diff?)",
                    pending_name(&file)
                ),
            ));
        }
        self.files.push(resolve(file)?);
        Ok(())
    }
}

/// Works out status and paths from everything the headers said.
fn resolve(file: PendingFile) -> Result<FileDiff, DiffError> {
    let bad =
        |message: String| DiffError::new(file.diff_line, DiffErrorKind::BadFileHeader, message);
    let pair = |from: &Option<Vec<u8>>, to: &Option<Vec<u8>>, what: &str| match (from, to) {
        (Some(from), Some(to)) => Ok(Some((from.clone(), to.clone()))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(bad(format!("`{what} from` without `{what} to`"))),
        (None, Some(_)) => Err(bad(format!("`{what} to` without `{what} from`"))),
    };
    let rename = pair(&file.rename_from, &file.rename_to, "rename")?;
    let copy = pair(&file.copy_from, &file.copy_to, "copy")?;

    // Strip the `a/`/`b/` prefixes of `---`/`+++` paths (see the module docs for the rules).
    let (old_prefix, new_prefix) = match &file.git {
        Some(git) => match git.prefixes {
            Some((old, new)) => (Some(old), Some(new)),
            None => (None, None),
        },
        None => {
            let fits = |path: &Option<HeaderPath>, prefix: u8| match path {
                Some(HeaderPath::Path(p)) => p.starts_with(&[prefix, b'/']),
                Some(HeaderPath::DevNull) | None => true,
            };
            if fits(&file.minus, b'a') && fits(&file.plus, b'b') {
                (Some(b'a'), Some(b'b'))
            } else {
                (None, None)
            }
        }
    };
    let strip = |path: &[u8], prefix: Option<u8>| -> Vec<u8> {
        match prefix {
            Some(p) => path.strip_prefix(&[p, b'/']).unwrap_or(path).to_vec(),
            None => path.to_vec(),
        }
    };
    let side = |header: &Option<HeaderPath>, prefix: Option<u8>, fallback: Option<&Vec<u8>>| {
        match header {
            Some(HeaderPath::Path(p)) => Some(strip(p, prefix)),
            _ => fallback.cloned(),
        }
    };
    let git_old = file.git.as_ref().map(|g| &g.old);
    let git_new = file.git.as_ref().map(|g| &g.new);

    // Each side: `None` when the file has no such side, `Some(None)` when no header named it.
    let (status, old, new) = if let Some((from, to)) = rename {
        if copy.is_some() {
            return Err(bad("both `rename` and `copy` headers".to_owned()));
        }
        (FileStatus::Renamed, Some(Some(from)), Some(Some(to)))
    } else if let Some((from, to)) = copy {
        (FileStatus::Copied, Some(Some(from)), Some(Some(to)))
    } else {
        let added = file.new_file || file.minus == Some(HeaderPath::DevNull);
        let deleted = file.deleted_file || file.plus == Some(HeaderPath::DevNull);
        let old = || side(&file.minus, old_prefix, git_old);
        let new = || side(&file.plus, new_prefix, git_new);
        match (added, deleted) {
            (true, true) => {
                return Err(bad(
                    "the file is both added and deleted (`/dev/null` or file-mode headers on \
                     both sides)"
                        .to_owned(),
                ));
            }
            (true, false) => (FileStatus::Added, None, Some(new())),
            (false, true) => (FileStatus::Deleted, Some(old()), None),
            (false, false) => (FileStatus::Modified, Some(old()), Some(new())),
        }
    };
    let finish = |path: Option<Option<Vec<u8>>>| -> Result<Option<String>, DiffError> {
        match path {
            None => Ok(None),
            Some(None) => Err(bad("the file header gives no path".to_owned())),
            Some(Some(bytes)) if bytes.is_empty() => {
                Err(bad("empty path in file header".to_owned()))
            }
            Some(Some(bytes)) => Ok(Some(bytes_to_string(bytes))),
        }
    };
    let old = finish(old)?;
    let new = finish(new)?;
    Ok(FileDiff {
        old_path: old,
        new_path: new,
        status,
        similarity: file.similarity,
        old_mode: file.old_mode,
        new_mode: file.new_mode,
        binary: file.binary,
        hunks: file.hunks,
        diff_line: file.diff_line,
    })
}

impl DiffError {
    fn new(line: usize, kind: DiffErrorKind, message: impl Into<String>) -> DiffError {
        DiffError {
            line,
            kind,
            message: message.into(),
        }
    }
}

fn combined_diff(line: usize) -> DiffError {
    DiffError::new(
        line,
        DiffErrorKind::CombinedDiff,
        "combined diffs of merges (`diff --cc`, `@@@`) are not supported; diff the merge \
         against one parent instead (e.g. `git diff <merge>^1 <merge>`)",
    )
}

/// `@@ -3,7 +3,8 @@`, counts always shown, for messages.
fn hunk_label(hunk: &Hunk) -> String {
    format!(
        "@@ -{},{} +{},{} @@",
        hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count
    )
}

fn expected_markers(old_left: u32, new_left: u32) -> &'static str {
    match (old_left > 0, new_left > 0) {
        (true, true) => "a ' ', '-' or '+' line",
        (true, false) => "a '-' line",
        (false, true) => "a '+' line",
        (false, false) => "no more lines",
    }
}

fn truncated(hunk: &Hunk, old_left: u32, new_left: u32, line: usize, found: &str) -> DiffError {
    DiffError::new(
        line,
        DiffErrorKind::TruncatedHunk,
        format!(
            "hunk {} ended after {} of {} old lines and {} of {} new lines (expected {}, found {found})",
            hunk_label(hunk),
            hunk.old_count - old_left,
            hunk.old_count,
            hunk.new_count - new_left,
            hunk.new_count,
            expected_markers(old_left, new_left),
        ),
    )
}

fn too_long(hunk: &Hunk, old_left: u32, new_left: u32, line: usize, raw: &[u8]) -> DiffError {
    let side = if old_left == 0 { "old" } else { "new" };
    let (done, total) = if old_left == 0 {
        (hunk.old_count, hunk.old_count)
    } else {
        (hunk.new_count, hunk.new_count)
    };
    DiffError::new(
        line,
        DiffErrorKind::HunkTooLong,
        format!(
            "hunk {} already has all {done} of {total} {side} lines; expected {}, found {} \
             (more {side} lines than the header declares)",
            hunk_label(hunk),
            expected_markers(old_left, new_left),
            snippet(raw),
        ),
    )
}

fn mark_no_newline(hunk: &mut Hunk, line: RawLine) -> Result<(), DiffError> {
    match hunk.lines.last_mut() {
        Some(last) if !last.no_newline_at_eof => {
            last.no_newline_at_eof = true;
            Ok(())
        }
        Some(_) => Err(DiffError::new(
            line.number,
            DiffErrorKind::UnexpectedLine,
            "a second `\\ No newline at end of file` marker for the same line",
        )),
        None => Err(DiffError::new(
            line.number,
            DiffErrorKind::UnexpectedLine,
            "`\\ No newline at end of file` marker before any line of the hunk",
        )),
    }
}

/// The name of a pending file for messages, before its paths are resolved.
fn pending_name(file: &PendingFile) -> String {
    let from_header = |path: &Option<HeaderPath>| match path {
        Some(HeaderPath::Path(p)) => Some(p.clone()),
        _ => None,
    };
    let bytes = from_header(&file.plus)
        .or_else(|| from_header(&file.minus))
        .or_else(|| file.git.as_ref().map(|g| g.new.clone()))
        .unwrap_or_default();
    bytes_to_string(bytes)
}

/// A bounded, quoted excerpt of a line for error messages.
fn snippet(text: &[u8]) -> String {
    const MAX: usize = 60;
    let text = trim_cr(text);
    let shown = String::from_utf8_lossy(text.get(..MAX).unwrap_or(text));
    if text.len() > MAX {
        format!("{:?}…", shown)
    } else {
        format!("{:?}", shown)
    }
}

fn trim_cr(mut text: &[u8]) -> &[u8] {
    while let Some(rest) = text.strip_suffix(b"\r") {
        text = rest;
    }
    text
}

fn bytes_to_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// Sections end at a mail signature (`-- `), an mbox separator or a `git log -p` commit line;
/// after them anything goes until the next file.
fn is_section_end(text: &[u8]) -> bool {
    let hex_then_end = |rest: &[u8]| {
        let n_hex = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        (n_hex == 40 || n_hex == 64) && rest.get(n_hex).is_none_or(|&b| b == b' ')
    };
    text == b"--"
        || text == b"-- "
        || text.strip_prefix(b"commit ").is_some_and(hex_then_end)
        || text.strip_prefix(b"From ").is_some_and(hex_then_end)
}

/// Lines other tools put between files: `diff -r` command lines, svn's `Index:` and `====`,
/// `Only in` lines of `diff -r`.
fn is_noise(text: &[u8]) -> bool {
    text.starts_with(b"diff ")
        || text.starts_with(b"Index: ")
        || text.starts_with(b"Only in ")
        || (text.len() >= 4 && text.iter().all(|&b| b == b'='))
}

/// Whether a line belongs to a `GIT binary patch` block: `literal`/`delta` headers, base85
/// data lines (a length letter, then base85 characters) and the empty lines ending a chunk.
fn is_binary_patch_line(text: &[u8]) -> bool {
    const BASE85_PUNCTUATION: &[u8] = b"!#$%&()*+-;<=>?@^_`{|}~";
    let is_base85 = |b: &u8| b.is_ascii_alphanumeric() || BASE85_PUNCTUATION.contains(b);
    let is_size = |rest: &[u8]| !rest.is_empty() && rest.iter().all(u8::is_ascii_digit);
    text.is_empty()
        || text.strip_prefix(b"literal ").is_some_and(is_size)
        || text.strip_prefix(b"delta ").is_some_and(is_size)
        || (text.len() >= 2
            && text.first().is_some_and(u8::is_ascii_alphabetic)
            && text.iter().all(is_base85))
}

/// The text between `Binary files ` and ` differ`, if this is such a line.
fn binary_files_line(text: &[u8]) -> Option<&[u8]> {
    text.strip_prefix(b"Binary files ")?
        .strip_suffix(b" differ")
}

struct HunkHeader {
    old_start: u32,
    old_count: u32,
    new_start: u32,
    new_count: u32,
    section: String,
}

/// `@@ -a[,b] +c[,d] @@[ section]`.
fn parse_hunk_header(text: &[u8]) -> Result<HunkHeader, &'static str> {
    let rest = text
        .strip_prefix(b"@@ -")
        .ok_or("expected `@@ -` at the start")?;
    let (old_start, old_count, rest) = parse_range(rest)?;
    let rest = rest
        .strip_prefix(b" +")
        .ok_or("expected ` +` after the old range")?;
    let (new_start, new_count, rest) = parse_range(rest)?;
    let rest = rest
        .strip_prefix(b" @@")
        .ok_or("expected ` @@` after the new range")?;
    let section = rest.strip_prefix(b" ").unwrap_or(rest);
    for (start, count) in [(old_start, old_count), (new_start, new_count)] {
        if count > 0 && start == 0 {
            return Err("a range with lines cannot start at line 0");
        }
        if start.checked_add(count).is_none() {
            return Err("line numbers out of range");
        }
    }
    if old_count == 0 && new_count == 0 {
        return Err("the hunk declares no lines");
    }
    Ok(HunkHeader {
        old_start,
        old_count,
        new_start,
        new_count,
        section: String::from_utf8_lossy(section).into_owned(),
    })
}

/// `start[,count]`, count defaulting to 1; returns the rest of the text.
fn parse_range(text: &[u8]) -> Result<(u32, u32, &[u8]), &'static str> {
    let (start, rest) = parse_number(text)?;
    match rest.strip_prefix(b",") {
        Some(rest) => {
            let (count, rest) = parse_number(rest)?;
            Ok((start, count, rest))
        }
        None => Ok((start, 1, rest)),
    }
}

fn parse_number(text: &[u8]) -> Result<(u32, &[u8]), &'static str> {
    let n_digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if n_digits == 0 {
        return Err("expected a line number");
    }
    let (digits, rest) = text.split_at(n_digits);
    let mut value: u32 = 0;
    for &digit in digits {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u32::from(digit - b'0')))
            .ok_or("number too large")?;
    }
    Ok((value, rest))
}

fn parse_mode(text: &[u8]) -> Result<u32, &'static str> {
    if text.is_empty() || text.len() > 7 || !text.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return Err("expected an octal file mode such as 100644");
    }
    Ok(text
        .iter()
        .fold(0, |mode, &digit| mode * 8 + u32::from(digit - b'0')))
}

fn parse_percent(text: &[u8]) -> Result<u8, &'static str> {
    let digits = text
        .strip_suffix(b"%")
        .ok_or("expected a percentage such as 87%")?;
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return Err("expected a percentage such as 87%");
    }
    let value = digits
        .iter()
        .fold(0u32, |v, &digit| v * 10 + u32::from(digit - b'0'));
    u8::try_from(value)
        .ok()
        .filter(|&v| v <= 100)
        .ok_or("a percentage above 100")
}

/// A C-quoted string starting at `text[0] == b'"'`; returns the decoded bytes and the rest
/// after the closing quote.
fn parse_quoted(text: &[u8]) -> Result<(Vec<u8>, &[u8]), &'static str> {
    let mut out = Vec::with_capacity(text.len());
    let mut idx = 1;
    loop {
        let Some(&byte) = text.get(idx) else {
            return Err("unterminated quoted path");
        };
        idx += 1;
        match byte {
            b'"' => return Ok((out, text.get(idx..).unwrap_or_default())),
            b'\\' => {
                let Some(&escape) = text.get(idx) else {
                    return Err("unterminated quoted path");
                };
                idx += 1;
                let decoded = match escape {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'0'..=b'3' => {
                        let digits = text.get(idx - 1..idx + 2).ok_or("short octal escape")?;
                        if !digits.iter().all(|b| (b'0'..=b'7').contains(b)) {
                            return Err("bad octal escape in quoted path");
                        }
                        idx += 2;
                        digits
                            .iter()
                            .fold(0u8, |v, &digit| v.wrapping_mul(8) | (digit - b'0'))
                    }
                    _ => return Err("unknown escape in quoted path"),
                };
                out.push(decoded);
            }
            _ => out.push(byte),
        }
    }
}

/// A path that is the whole rest of a header line (`rename from`, `copy to`).
fn whole_path(text: &[u8]) -> Result<Vec<u8>, &'static str> {
    if text.first() == Some(&b'"') {
        let (path, rest) = parse_quoted(text)?;
        if !rest.is_empty() {
            return Err("unexpected text after the quoted path");
        }
        Ok(path)
    } else {
        Ok(text.to_vec())
    }
}

/// The path of a `---`/`+++` line: quoted or raw, possibly followed by a tab and a timestamp
/// (GNU diff, svn), and git adds a lone tab after names containing spaces.
fn patch_path(text: &[u8]) -> Result<HeaderPath, &'static str> {
    let path = if text.first() == Some(&b'"') {
        let (path, rest) = parse_quoted(text)?;
        if !(rest.is_empty() || rest.starts_with(b"\t") || rest.starts_with(b" ")) {
            return Err("unexpected text after the quoted path");
        }
        path
    } else {
        let end = text.iter().position(|&b| b == b'\t').unwrap_or(text.len());
        text.get(..end).unwrap_or(text).to_vec()
    };
    Ok(header_path(path))
}

fn header_path(path: Vec<u8>) -> HeaderPath {
    if path == b"/dev/null" {
        HeaderPath::DevNull
    } else {
        HeaderPath::Path(path)
    }
}

/// Splits `X<sep>Y` where either side may be C-quoted. Unquoted names may contain the
/// separator, so the occurrence nearest the middle wins: exact when both names are equal up
/// to same-length prefixes, which is the only case git leaves without other headers.
fn split_pair<'t>(text: &'t [u8], sep: &[u8]) -> Result<(Vec<u8>, Vec<u8>), &'static str> {
    let second = |rest: &'t [u8]| -> Result<Vec<u8>, &'static str> {
        if rest.is_empty() {
            return Err("missing second path");
        }
        whole_path(rest)
    };
    if text.first() == Some(&b'"') {
        let (first, rest) = parse_quoted(text)?;
        let rest = rest.strip_prefix(sep).ok_or("expected a second path")?;
        return Ok((first, second(rest)?));
    }
    if text.last() == Some(&b'"')
        && let Some(quote) = text.iter().position(|&b| b == b'"')
        && let Some(first) = text.get(..quote).and_then(|t| t.strip_suffix(sep))
        && !first.is_empty()
    {
        // An unquoted name never contains `"` (git would have quoted it), so the first quote
        // opens the second name.
        let (path, rest) = parse_quoted(text.get(quote..).unwrap_or_default())?;
        if rest.is_empty() {
            return Ok((first.to_vec(), path));
        }
    }
    let middle = text.len().saturating_sub(sep.len()) / 2;
    let nearest_middle = text
        .windows(sep.len())
        .enumerate()
        .filter(|(_, window)| *window == sep)
        .map(|(idx, _)| idx)
        .min_by_key(|&idx| idx.abs_diff(middle));
    let halves = |split: usize| {
        (
            text.get(..split).unwrap_or_default(),
            text.get(split + sep.len()..).unwrap_or_default(),
        )
    };
    if let Some(split) = nearest_middle {
        let (first, rest) = halves(split);
        if !first.is_empty() && without_prefix(first) == without_prefix(rest) {
            return Ok((first.to_vec(), second(rest)?));
        }
    }
    // `Binary files /dev/null and b/x differ`: the names differ, but one side is known.
    if let Some(rest) = text.strip_prefix(b"/dev/null")
        && let Some(rest) = rest.strip_prefix(sep)
    {
        return Ok((b"/dev/null".to_vec(), second(rest)?));
    }
    if let Some(first) = text.strip_suffix(b"/dev/null")
        && let Some(first) = first.strip_suffix(sep)
        && !first.is_empty()
    {
        return Ok((first.to_vec(), b"/dev/null".to_vec()));
    }
    let (first, rest) = halves(nearest_middle.ok_or("expected two paths")?);
    if first.is_empty() {
        return Err("missing first path");
    }
    Ok((first.to_vec(), second(rest)?))
}

/// `name` without a one-letter `a/`-style prefix.
fn without_prefix(name: &[u8]) -> &[u8] {
    match name {
        [letter, b'/', rest @ ..] if letter.is_ascii_alphanumeric() => rest,
        _ => name,
    }
}

/// The two names of `diff --git <old> <new>` and whether they carry prefixes.
fn split_git_line(text: &[u8]) -> Result<GitLine, &'static str> {
    let (old, new) = split_pair(text, b" ")?;
    let prefix = |name: &[u8]| match name {
        [letter, b'/', _, ..] if letter.is_ascii_alphanumeric() => Some(*letter),
        _ => None,
    };
    let prefixes = match (prefix(&old), prefix(&new)) {
        (Some(a), Some(b)) if a != b => Some((a, b)),
        _ => None,
    };
    let (old, new) = match prefixes {
        Some(_) => (
            old.get(2..).unwrap_or_default().to_vec(),
            new.get(2..).unwrap_or_default().to_vec(),
        ),
        None => (old, new),
    };
    Ok(GitLine { old, new, prefixes })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::diff::render;
    use crate::diff::testutil::{arb_files, build};

    fn ok(text: &str) -> Diff {
        ok_bytes(text.as_bytes())
    }

    fn ok_bytes(bytes: &[u8]) -> Diff {
        match parse(bytes.to_vec()) {
            Ok(diff) => diff,
            Err(err) => panic!("expected a parse, got `{err}`"),
        }
    }

    fn err(text: &str) -> DiffError {
        match parse(text.as_bytes().to_vec()) {
            Ok(diff) => panic!("expected an error, got {:#?}", diff.files()),
            Err(err) => err,
        }
    }

    /// (kind, old_line, new_line, text) of every line of a file.
    fn lines_of(diff: &Diff, file_idx: usize) -> Vec<(LineKind, Option<u32>, Option<u32>, String)> {
        diff.files()[file_idx]
            .hunks
            .iter()
            .flat_map(|hunk| hunk.lines.iter())
            .map(|line| {
                (
                    line.kind,
                    line.old_line,
                    line.new_line,
                    diff.line_text(line).into_owned(),
                )
            })
            .collect()
    }

    fn paths(diff: &Diff) -> Vec<(FileStatus, Option<&str>, Option<&str>)> {
        diff.files()
            .iter()
            .map(|f| (f.status, f.old_path.as_deref(), f.new_path.as_deref()))
            .collect()
    }

    use LineKind::{Added, Context, Removed};

    const MODIFIED: &str = r"diff --git a/src/lib.rs b/src/lib.rs
index 3b18e51..a9c4d2f 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,4 +1,5 @@
 use std::fmt;
-use std::io;
+use std::io::{self, Read};
+use std::path::Path;
 
 fn main() {
@@ -10,3 +11,3 @@ impl Foo {
     fn bar(&self) {
-        old();
+        new();
     }
";

    #[test]
    fn empty_input_is_an_empty_diff() {
        assert!(ok("").is_empty());
        assert_eq!(ok("").line_counts(), (0, 0));
    }

    #[test]
    fn text_without_any_file_is_an_empty_diff() {
        assert!(ok("just some\ntext\n").is_empty());
    }

    #[test]
    fn modified_file_with_two_hunks() {
        let diff = ok(MODIFIED);
        assert_eq!(
            paths(&diff),
            [(FileStatus::Modified, Some("src/lib.rs"), Some("src/lib.rs"))]
        );
        let file = &diff.files()[0];
        assert_eq!(file.path(), "src/lib.rs");
        assert_eq!(file.diff_line, 1);
        assert_eq!(file.hunks.len(), 2);
        let hunk = &file.hunks[1];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_count,
                hunk.new_start,
                hunk.new_count
            ),
            (10, 3, 11, 3)
        );
        assert_eq!(hunk.section, "impl Foo {");
        assert_eq!(file.hunks[0].section, "");
        assert_eq!(file.line_counts(), (3, 2));
        assert_eq!(diff.line_counts(), (3, 2));
        assert_eq!(
            lines_of(&diff, 0),
            [
                (Context, Some(1), Some(1), "use std::fmt;".to_owned()),
                (Removed, Some(2), None, "use std::io;".to_owned()),
                (
                    Added,
                    None,
                    Some(2),
                    "use std::io::{self, Read};".to_owned()
                ),
                (Added, None, Some(3), "use std::path::Path;".to_owned()),
                (Context, Some(3), Some(4), "".to_owned()),
                (Context, Some(4), Some(5), "fn main() {".to_owned()),
                (
                    Context,
                    Some(10),
                    Some(11),
                    "    fn bar(&self) {".to_owned()
                ),
                (Removed, Some(11), None, "        old();".to_owned()),
                (Added, None, Some(12), "        new();".to_owned()),
                (Context, Some(12), Some(13), "    }".to_owned()),
            ]
        );
        let added: Vec<_> = file.added_lines().map(|l| l.new_line).collect();
        assert_eq!(added, [Some(2), Some(3), Some(12)]);
        assert_eq!(file.removed_lines().count(), 2);
    }

    #[test]
    fn new_and_deleted_files() {
        let diff = ok(r"diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
diff --git a/gone.txt b/gone.txt
deleted file mode 100755
index 3b18e51..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Added, None, Some("new.txt")),
                (FileStatus::Deleted, Some("gone.txt"), None),
            ]
        );
        let (added, deleted) = (&diff.files()[0], &diff.files()[1]);
        assert_eq!((added.old_mode, added.new_mode), (None, Some(0o100644)));
        assert_eq!((deleted.old_mode, deleted.new_mode), (Some(0o100755), None));
        assert_eq!(deleted.path(), "gone.txt");
        assert_eq!(deleted.diff_line, 9);
        let hunk = &added.hunks[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_count,
                hunk.new_start,
                hunk.new_count
            ),
            (0, 0, 1, 2)
        );
        assert_eq!(
            lines_of(&diff, 1),
            [(Removed, Some(1), None, "bye".to_owned())]
        );
    }

    #[test]
    fn empty_new_file_has_no_hunks() {
        let diff = ok("diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n");
        assert_eq!(paths(&diff), [(FileStatus::Added, None, Some("empty"))]);
        assert!(diff.files()[0].hunks.is_empty());
    }

    #[test]
    fn mode_only_change() {
        let diff = ok("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
        let file = &diff.files()[0];
        assert_eq!(file.status, FileStatus::Modified);
        assert_eq!(
            (file.old_mode, file.new_mode),
            (Some(0o100644), Some(0o100755))
        );
        assert!(file.hunks.is_empty() && !file.binary);
        assert_eq!(file.path(), "run.sh");
    }

    #[test]
    fn pure_rename_with_full_similarity() {
        let diff = ok(r"diff --git a/old/name.rs b/new/name.rs
similarity index 100%
rename from old/name.rs
rename to new/name.rs
diff --git a/x b/x
old mode 100644
new mode 100755
");
        assert_eq!(
            paths(&diff)[0],
            (
                FileStatus::Renamed,
                Some("old/name.rs"),
                Some("new/name.rs")
            )
        );
        assert_eq!(diff.files()[0].similarity, Some(100));
        assert!(diff.files()[0].hunks.is_empty());
        assert_eq!(diff.files().len(), 2);
    }

    #[test]
    fn rename_and_copy_with_changes() {
        let diff = ok(r"diff --git a/a.rs b/b.rs
similarity index 87%
rename from a.rs
rename to b.rs
index 1111111..2222222 100644
--- a/a.rs
+++ b/b.rs
@@ -1 +1 @@
-x
+y
diff --git a/src/t.rs b/src/u.rs
similarity index 72%
copy from src/t.rs
copy to src/u.rs
--- a/src/t.rs
+++ b/src/u.rs
@@ -2,0 +3 @@ fn t()
+z
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Renamed, Some("a.rs"), Some("b.rs")),
                (FileStatus::Copied, Some("src/t.rs"), Some("src/u.rs")),
            ]
        );
        assert_eq!(diff.files()[0].similarity, Some(87));
        assert_eq!(diff.files()[1].similarity, Some(72));
        assert_eq!(lines_of(&diff, 1), [(Added, None, Some(3), "z".to_owned())]);
    }

    #[test]
    fn dissimilarity_index_is_accepted() {
        let diff = ok(
            "diff --git a/x b/x\ndissimilarity index 90%\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        );
        assert_eq!(diff.files()[0].status, FileStatus::Modified);
        assert_eq!(diff.files()[0].similarity, None);
    }

    #[test]
    fn binary_files_differ_form() {
        let diff = ok(r"diff --git a/logo.png b/logo.png
index 1111111..2222222 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/new.bin b/new.bin
new file mode 100644
index 0000000..2222222
Binary files /dev/null and b/new.bin differ
diff --git a/x b/x
--- a/x
+++ b/x
@@ -1 +1 @@
-a
+b
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("logo.png"), Some("logo.png")),
                (FileStatus::Added, None, Some("new.bin")),
                (FileStatus::Modified, Some("x"), Some("x")),
            ]
        );
        assert!(diff.files()[0].binary && diff.files()[0].hunks.is_empty());
        assert!(diff.files()[1].binary);
        assert!(!diff.files()[2].binary);
    }

    #[test]
    fn git_binary_patch_form() {
        let diff = ok(r"diff --git a/img.bin b/img.bin
index 2a1b3c4..5d6e7f8 100644
GIT binary patch
literal 12
TcmZQzWMXDvWn*Ao0096009pW;

delta 5
McmZo*WMXDv00Cf+8~^|S

diff --git a/gone.bin b/gone.bin
deleted file mode 100644
index 5d6e7f8..0000000
GIT binary patch
literal 0
HcmV?d00001

literal 12
TcmZQzWMXDvWn*Ao0096009pW;

diff --git a/after.txt b/after.txt
--- a/after.txt
+++ b/after.txt
@@ -1 +1 @@
-a
+b
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("img.bin"), Some("img.bin")),
                (FileStatus::Deleted, Some("gone.bin"), None),
                (FileStatus::Modified, Some("after.txt"), Some("after.txt")),
            ]
        );
        assert!(diff.files()[0].binary && diff.files()[0].hunks.is_empty());
        assert!(diff.files()[1].binary);
        assert_eq!(diff.files()[2].hunks.len(), 1);
    }

    #[test]
    fn binary_patch_at_end_of_input() {
        let diff = ok(
            "diff --git a/b b/b\nGIT binary patch\nliteral 3\nKcmZQz\n\nliteral 0\nHcmV?d00001\n",
        );
        assert!(diff.files()[0].binary);
    }

    #[test]
    fn hunk_after_binary_marker_is_an_error() {
        let e = err("diff --git a/b b/b\nBinary files a/b and b/b differ\n@@ -1 +1 @@\n-a\n+b\n");
        assert_eq!(e.line, 3);
        assert!(
            e.message.contains("binary file `b` cannot have hunks"),
            "{e}"
        );
    }

    #[test]
    fn quoted_paths_with_escapes() {
        let diff = ok(
            r#"diff --git "a/t\303\251st \"q\".txt" "b/t\303\251st \"q\".txt"
new file mode 100644
--- /dev/null
+++ "b/t\303\251st \"q\".txt"
@@ -0,0 +1 @@
+x
diff --git "a/tab\there" "b/tab\there"
old mode 100644
new mode 100755
"#,
        );
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Added, None, Some("tést \"q\".txt")),
                (FileStatus::Modified, Some("tab\there"), Some("tab\there")),
            ]
        );
    }

    #[test]
    fn quoted_path_with_invalid_utf8_is_decoded_lossily() {
        let diff = ok(
            "diff --git \"a/bad\\377name\" \"b/bad\\377name\"\nold mode 100644\nnew mode 100755\n",
        );
        assert_eq!(diff.files()[0].path(), "bad\u{fffd}name");
    }

    #[test]
    fn rename_headers_with_quoted_paths() {
        let diff = ok(r#"diff --git "a/caf\303\251.txt" b/cafe.txt
similarity index 100%
rename from "caf\303\251.txt"
rename to cafe.txt
"#);
        assert_eq!(
            paths(&diff),
            [(FileStatus::Renamed, Some("café.txt"), Some("cafe.txt"))]
        );
    }

    #[test]
    fn mixed_quoting_on_the_git_line() {
        let diff = ok(
            "diff --git a/plain \"b/caf\\303\\251\"\nsimilarity index 100%\nrename from plain\nrename to \"caf\\303\\251\"\n",
        );
        assert_eq!(
            paths(&diff),
            [(FileStatus::Renamed, Some("plain"), Some("café"))]
        );
        let git = split_git_line(b"a/plain \"b/caf\\303\\251\"").expect("splits");
        assert_eq!(
            (git.old.as_slice(), git.new.as_slice()),
            (&b"plain"[..], "café".as_bytes())
        );
    }

    #[test]
    fn paths_with_spaces_and_b_slash_split_in_the_middle() {
        // No ---/+++ lines: the `diff --git` line is all there is.
        let diff = ok("diff --git a/x b/y b/x b/y\nold mode 100644\nnew mode 100755\n");
        assert_eq!(diff.files()[0].path(), "x b/y");
        let diff = ok("diff --git a/my dir/a b/c.txt b/my dir/a b/c.txt\nnew file mode 100644\n");
        assert_eq!(
            paths(&diff),
            [(FileStatus::Added, None, Some("my dir/a b/c.txt"))]
        );
    }

    #[test]
    fn paths_with_spaces_come_from_patch_lines_and_stop_at_the_tab() {
        let diff =
            ok("diff --git a/a b/c b/a b/c\n--- a/a b/c\t\n+++ b/a b/c\t\n@@ -1 +1 @@\n-x\n+y\n");
        assert_eq!(
            paths(&diff),
            [(FileStatus::Modified, Some("a b/c"), Some("a b/c"))]
        );
    }

    #[test]
    fn rename_headers_win_over_an_ambiguous_git_line() {
        let diff =
            ok("diff --git a/x b/y b/z\nsimilarity index 100%\nrename from x b/y\nrename to z\n");
        assert_eq!(
            paths(&diff),
            [(FileStatus::Renamed, Some("x b/y"), Some("z"))]
        );
    }

    #[test]
    fn no_prefix_diffs_keep_their_paths() {
        let diff = ok(r"diff --git src/x.rs src/x.rs
index 1..2 100644
--- src/x.rs
+++ src/x.rs
@@ -1 +1 @@
-a
+b
diff --git a/b.txt a/b.txt
--- a/b.txt
+++ a/b.txt
@@ -1 +1 @@
-a
+b
diff --git new.txt new.txt
new file mode 100644
--- /dev/null
+++ new.txt
@@ -0,0 +1 @@
+n
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("src/x.rs"), Some("src/x.rs")),
                (FileStatus::Modified, Some("a/b.txt"), Some("a/b.txt")),
                (FileStatus::Added, None, Some("new.txt")),
            ]
        );
    }

    #[test]
    fn mnemonic_prefixes_are_stripped() {
        let diff = ok(
            "diff --git i/src/x.rs w/src/x.rs\n--- i/src/x.rs\n+++ w/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n",
        );
        assert_eq!(
            paths(&diff),
            [(FileStatus::Modified, Some("src/x.rs"), Some("src/x.rs"))]
        );
    }

    #[test]
    fn plain_unified_diff_with_timestamps() {
        let diff = ok(r"--- hello.c.orig	2024-01-02 10:00:00.000000000 +0100
+++ hello.c	2024-01-02 10:05:00.000000000 +0100
@@ -1,3 +1,3 @@
 #include <stdio.h>
-int main() { return 1; }
+int main() { return 0; }
 /* end */
");
        assert_eq!(
            paths(&diff),
            [(FileStatus::Modified, Some("hello.c.orig"), Some("hello.c"))]
        );
        assert_eq!(diff.files()[0].diff_line, 1);
        assert_eq!(diff.files()[0].line_counts(), (1, 1));
    }

    #[test]
    fn plain_patch_strips_a_b_prefixes_only_when_both_have_them() {
        let diff = ok(r"--- a/src/x.rs
+++ b/src/x.rs
@@ -1 +1 @@
-a
+b
--- /dev/null
+++ b/added.rs
@@ -0,0 +1 @@
+n
--- a/kept.rs
+++ c/kept.rs
@@ -1 +1 @@
-a
+b
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("src/x.rs"), Some("src/x.rs")),
                (FileStatus::Added, None, Some("added.rs")),
                (FileStatus::Modified, Some("a/kept.rs"), Some("c/kept.rs")),
            ]
        );
    }

    #[test]
    fn recursive_diff_output_with_noise_between_files() {
        let diff = ok(r"Only in old: removed.txt
diff -ruN old/a.txt new/a.txt
--- old/a.txt	2024-01-01 00:00:00.000000000 +0000
+++ new/a.txt	2024-01-02 00:00:00.000000000 +0000
@@ -1 +1 @@
-x
+y
Only in new: extra.txt
diff -ruN old/logo.png new/logo.png
Binary files old/logo.png and new/logo.png differ
diff -ruN old/b.txt new/b.txt
--- old/b.txt	2024-01-01 00:00:00.000000000 +0000
+++ /dev/null	1970-01-01 00:00:00.000000000 +0000
@@ -1 +0,0 @@
-gone
");
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("old/a.txt"), Some("new/a.txt")),
                (
                    FileStatus::Modified,
                    Some("old/logo.png"),
                    Some("new/logo.png")
                ),
                (FileStatus::Deleted, Some("old/b.txt"), None),
            ]
        );
        assert!(diff.files()[1].binary);
    }

    #[test]
    fn svn_diff() {
        let diff = ok(r"Index: trunk/a.c
===================================================================
--- trunk/a.c	(revision 41)
+++ trunk/a.c	(working copy)
@@ -1 +1 @@
-a
+b
Index: trunk/b.c
===================================================================
--- trunk/b.c	(revision 41)
+++ trunk/b.c	(working copy)
@@ -1 +1,2 @@
 a
+b
");
        assert_eq!(diff.files().len(), 2);
        assert_eq!(diff.files()[1].path(), "trunk/b.c");
    }

    #[test]
    fn no_newline_markers() {
        let diff = ok(r"diff --git a/x b/x
--- a/x
+++ b/x
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+c
\ No newline at end of file
diff --git a/y b/y
--- a/y
+++ b/y
@@ -1 +1 @@
-same
+same
\ Kein Zeilenumbruch am Dateiende.
");
        let flags: Vec<_> = diff.files()[0].hunks[0]
            .lines
            .iter()
            .map(|l| l.no_newline_at_eof)
            .collect();
        assert_eq!(flags, [false, true, true]);
        let flags: Vec<_> = diff.files()[1].hunks[0]
            .lines
            .iter()
            .map(|l| l.no_newline_at_eof)
            .collect();
        assert_eq!(flags, [false, true], "localised markers count too");
    }

    #[test]
    fn crlf_content_is_kept_exactly() {
        let diff = ok_bytes(b"diff --git a/w.txt b/w.txt\n--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n keep\r\n-old\r\n+new\r\n");
        let lines: Vec<_> = diff.files()[0].hunks[0].lines.iter().collect();
        assert_eq!(diff.line_bytes(lines[0]), b"keep\r");
        assert_eq!(diff.line_bytes(lines[2]), b"new\r");
        assert_eq!(diff.line_text(lines[2]), "new");
    }

    #[test]
    fn a_diff_saved_with_crlf_line_endings_parses() {
        let text = MODIFIED.replace('\n', "\r\n");
        let diff = ok(&text);
        assert_eq!(diff.files()[0].path(), "src/lib.rs");
        assert_eq!(diff.files()[0].hunks[1].section, "impl Foo {");
        let first = &diff.files()[0].hunks[0].lines[0];
        assert_eq!(diff.line_bytes(first), b"use std::fmt;\r");
    }

    #[test]
    fn non_utf8_content_is_kept_and_read_lossily() {
        let diff =
            ok_bytes(b"--- a/l1.txt\n+++ b/l1.txt\n@@ -1 +1 @@\n-caf\xe9\n+caf\xc3\xa9 \xff\xfe\n");
        let lines = &diff.files()[0].hunks[0].lines;
        assert_eq!(diff.line_bytes(&lines[0]), b"caf\xe9");
        assert_eq!(diff.line_text(&lines[0]), "caf\u{fffd}");
        assert_eq!(diff.line_text(&lines[1]), "café \u{fffd}\u{fffd}");
    }

    #[test]
    fn empty_line_counts_as_empty_context_while_the_hunk_expects_lines() {
        let diff = ok("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n");
        assert_eq!(
            lines_of(&diff, 0),
            [
                (Context, Some(1), Some(1), "a".to_owned()),
                (Context, Some(2), Some(2), "".to_owned()),
                (Removed, Some(3), None, "b".to_owned()),
                (Added, None, Some(3), "c".to_owned()),
            ]
        );
        // After the hunk is complete, an empty line is only a separator.
        let diff = ok(
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-b\n+c\n\n\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-b\n+c\n",
        );
        assert_eq!(diff.files().len(), 2);
        assert_eq!(diff.files()[0].hunks[0].lines.len(), 2);
    }

    #[test]
    fn format_patch_mails_are_read_through() {
        let diff = ok(
            r"From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001
From: Dev <dev@example.com>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH 1/2] Fix things

The message mentions --- and +++ and even
@@ in passing.
---
 a.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/a.txt b/a.txt
index 1..2 100644
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+b
-- 
2.43.0

From abcdefabcdefabcdefabcdefabcdefabcdefabcd Mon Sep 17 00:00:00 2001
From: Dev <dev@example.com>
Subject: [PATCH 2/2] More

diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -1,2 +1 @@
-- removed line that looks like a signature
 kept
-- 
2.43.0
",
        );
        assert_eq!(diff.files().len(), 2);
        assert_eq!(
            lines_of(&diff, 1),
            [
                (
                    Removed,
                    Some(1),
                    None,
                    "- removed line that looks like a signature".to_owned()
                ),
                (Context, Some(2), Some(1), "kept".to_owned()),
            ]
        );
    }

    #[test]
    fn git_log_patch_output_with_several_commits() {
        let diff = ok(r"commit 1234567890abcdef1234567890abcdef12345678
Author: Dev <dev@example.com>
Date:   Mon Jan 1 00:00:00 2024 +0000

    Second

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-b
+c

commit abcdefabcdefabcdefabcdefabcdefabcdefabcd
Author: Dev <dev@example.com>

    First

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+b
");
        assert_eq!(diff.files().len(), 2);
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(MODIFIED.as_bytes());
        assert_eq!(ok_bytes(&bytes).files().len(), 1);
    }

    #[test]
    fn last_line_without_newline() {
        let diff = ok("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b");
        assert_eq!(diff.line_bytes(&diff.files()[0].hunks[0].lines[1]), b"b");
    }

    #[test]
    fn hunk_count_defaults_to_one() {
        let diff = ok("--- a/x\n+++ b/x\n@@ -7 +7,2 @@\n-a\n+b\n+c\n");
        let hunk = &diff.files()[0].hunks[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_count,
                hunk.new_start,
                hunk.new_count
            ),
            (7, 1, 7, 2)
        );
    }

    // Errors: each names the line and what was expected.

    #[test]
    fn truncated_hunk_at_end_of_input() {
        let text = MODIFIED.lines().take(13).collect::<Vec<_>>().join("\n") + "\n";
        let e = err(&text);
        assert_eq!(e.kind, DiffErrorKind::TruncatedHunk);
        assert_eq!(e.line, 14);
        assert_eq!(
            e.to_string(),
            "line 14: hunk @@ -10,3 +11,3 @@ ended after 1 of 3 old lines and 1 of 3 new lines \
             (expected a ' ', '-' or '+' line, found end of input)"
        );
    }

    #[test]
    fn truncated_hunk_followed_by_another_file() {
        let e = err(r"diff --git a/x b/x
--- a/x
+++ b/x
@@ -3,7 +3,8 @@
 a
 b
-c
+d
+e
 f
 g
diff --git a/y b/y
");
        assert_eq!(e.kind, DiffErrorKind::TruncatedHunk);
        assert_eq!(
            e.to_string(),
            "line 12: hunk @@ -3,7 +3,8 @@ ended after 5 of 7 old lines and 6 of 8 new lines \
             (expected a ' ', '-' or '+' line, found \"diff --git a/y b/y\")"
        );
    }

    #[test]
    fn hunk_with_more_lines_than_declared() {
        let e = err("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n+d\n");
        assert_eq!(e.kind, DiffErrorKind::HunkTooLong);
        assert_eq!(e.line, 7);
        assert!(
            e.message.contains("hunk @@ -1,2 +1,2 @@ already has"),
            "{e}"
        );
        // A context line when only new lines are left overflows the old side.
        let e = err("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n-b\n c\n");
        assert_eq!(e.kind, DiffErrorKind::HunkTooLong);
        assert_eq!(e.line, 6);
        assert_eq!(
            e.message,
            "hunk @@ -1,2 +1,3 @@ already has all 2 of 2 old lines; expected a '+' line, \
             found \" c\" (more old lines than the header declares)"
        );
    }

    #[test]
    fn empty_line_is_no_context_when_only_one_side_is_left() {
        let e = err("--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n\n");
        assert_eq!(e.kind, DiffErrorKind::TruncatedHunk);
        assert_eq!(e.line, 6);
        assert!(e.message.contains("expected a '+' line, found \"\""), "{e}");
    }

    #[test]
    fn malformed_hunk_headers() {
        for (header, why) in [
            ("@@ -1,x +1 @@", "expected a line number"),
            ("@@ -1 1 @@", "expected ` +` after the old range"),
            ("@@ -a +1 @@", "expected a line number"),
            ("@@ -1 +1", "expected ` @@` after the new range"),
            ("@@ -1 +99999999999 @@", "number too large"),
            ("@@ -0,0 +0,0 @@", "the hunk declares no lines"),
            (
                "@@ -0,2 +1,2 @@",
                "a range with lines cannot start at line 0",
            ),
            ("@@ -4294967295,2 +1 @@", "line numbers out of range"),
        ] {
            let e = err(&format!("--- a/x\n+++ b/x\n{header}\n-a\n+b\n"));
            assert_eq!(e.kind, DiffErrorKind::BadHunkHeader, "{header}");
            assert_eq!(e.line, 3, "{header}");
            assert!(e.message.contains(why), "{header}: {e}");
        }
    }

    #[test]
    fn combined_diffs_are_refused() {
        let e = err("some preamble\ndiff --cc merged.rs\nindex 1,2..3\n");
        assert_eq!(e.kind, DiffErrorKind::CombinedDiff);
        assert_eq!(e.line, 2);
        assert!(
            e.to_string()
                .starts_with("line 2: combined diffs of merges"),
            "{e}"
        );
        let e = err("diff --combined x\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::CombinedDiff, 1));
        let e = err("--- a/x\n+++ b/x\n@@@ -1,2 -1,2 +1,2 @@@\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::CombinedDiff, 3));
    }

    #[test]
    fn colored_diffs_are_refused() {
        let e = err("\x1b[1mdiff --git a/x b/x\x1b[m\n\x1b[1m--- a/x\x1b[m\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 1));
        assert!(e.message.contains("`--no-color`"), "{e}");
    }

    #[test]
    fn junk_after_a_hunk_is_an_error() {
        let e = err("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nstray text\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 6));
        assert!(e.message.contains("found \"stray text\""), "{e}");
    }

    #[test]
    fn unknown_git_header_is_an_error() {
        let e = err("diff --git a/x b/x\nfrobnicate 3\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 2));
        assert!(e.message.contains("expected a git extended header"), "{e}");
    }

    #[test]
    fn patch_header_without_hunk_is_an_error() {
        let e = err("diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::MissingHunk, 5));
        assert!(
            e.message
                .contains("lines at line 3 are not followed by any hunk"),
            "{e}"
        );
        let e = err("--- a/x\n+++ b/x\ndiff --git a/y b/y\nold mode 100644\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::MissingHunk, 3));
    }

    #[test]
    fn minus_line_without_plus_line_in_a_git_header() {
        let e = err("diff --git a/x b/x\n--- a/x\n@@ -1 +1 @@\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::BadFileHeader, 2));
        assert!(
            e.message
                .contains("not followed by a `+++` line (found \"@@ -1 +1 @@\")"),
            "{e}"
        );
    }

    #[test]
    fn hunk_before_any_file_is_an_error() {
        let e = err("intro\n@@ -1 +1 @@\n-a\n+b\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 2));
        let e = err("diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 2));
        assert!(
            e.message.contains("before the file's `---`/`+++` lines"),
            "{e}"
        );
    }

    #[test]
    fn bad_file_headers() {
        for (text, line, why) in [
            (
                "diff --git a/x b/x\nold mode 10064x\n",
                2,
                "expected an octal file mode",
            ),
            (
                "diff --git a/x b/x\nsimilarity index 101%\n",
                2,
                "a percentage above 100",
            ),
            (
                "diff --git a/x b/x\nsimilarity index 50\n",
                2,
                "expected a percentage",
            ),
            ("diff --git \"a/x b/x\n", 1, "unterminated quoted path"),
            ("diff --git a/x\n", 1, "expected two paths"),
            ("diff --git \"a/\\q\" \"b/\\q\"\n", 1, "unknown escape"),
            (
                "diff --git a/x b/y\nrename from x\n",
                1,
                "`rename from` without `rename to`",
            ),
            (
                "diff --git a/x b/x\nnew file mode 100644\ndeleted file mode 100644\n",
                1,
                "both added and deleted",
            ),
            (
                "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n",
                1,
                "both added and deleted",
            ),
            ("--- a/\n+++ b/\n@@ -1 +1 @@\n-a\n+b\n", 1, "empty path"),
        ] {
            let e = err(text);
            assert_eq!(e.kind, DiffErrorKind::BadFileHeader, "{text:?}: {e}");
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn misplaced_no_newline_markers() {
        let e = err("--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 4));
        let e = err("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\\ No newline\n\\ No newline\n");
        assert_eq!((e.kind, e.line), (DiffErrorKind::UnexpectedLine, 7));
    }

    #[test]
    fn error_lines_in_a_crlf_diff_show_no_carriage_return() {
        let e = err("--- a/x\r\n+++ b/x\r\n@@ -1,2 +1 @@\r\n-a\r\n+b\r\nstray\r\n");
        assert!(e.message.ends_with("found \"stray\")"), "{e}");
    }

    #[test]
    fn long_found_lines_are_shortened_in_messages() {
        let long = "x".repeat(500);
        let e = err(&format!("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n{long}\n"));
        assert!(e.message.len() < 200, "{e}");
        assert!(e.message.contains("…"), "{e}");
    }

    #[test]
    fn split_pair_picks_the_separator_nearest_the_middle() {
        let split = |text: &str| {
            let (a, b) = split_pair(text.as_bytes(), b" and ").expect("splits");
            (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap())
        };
        assert_eq!(
            split("a/x and y and b/x and y"),
            ("a/x and y".into(), "b/x and y".into())
        );
        assert_eq!(
            split("/dev/null and b/p and q"),
            ("/dev/null".into(), "b/p and q".into())
        );
        assert_eq!(
            split("a/p and q and /dev/null"),
            ("a/p and q".into(), "/dev/null".into())
        );
    }

    #[test]
    fn big_diffs_parse() {
        // Not a timing test: it guards against accidental quadratic work by keeping a large
        // input in the suite, which would make the run visibly slow.
        let mut text = String::from("--- a/big\n+++ b/big\n@@ -1,200000 +1,200000 @@\n");
        for idx in 0..200_000 {
            text.push_str(&format!("-line {idx}\n+line {idx} changed\n"));
        }
        let diff = ok(&text);
        assert_eq!(diff.line_counts(), (200_000, 200_000));
        let last = diff.files()[0].hunks[0].lines.last().expect("lines");
        assert_eq!((last.old_line, last.new_line), (None, Some(200_000)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(bytes);
        }

        /// Bytes made of diff-ish pieces reach deep into the parser.
        #[test]
        fn diffish_junk_never_panics(pieces in prop::collection::vec(prop::sample::select(&[
            "diff --git a/x b/x\n", "--- a/x\n", "+++ b/x\n", "--- /dev/null\n", "+++ /dev/null\n",
            "@@ -1 +1 @@\n", "@@ -0,0 +1,2 @@\n", "@@ -1,2 +0,0 @@\n", "-a\n", "+b\n", " c\n", "\n",
            "\\ No newline at end of file\n", "new file mode 100644\n", "deleted file mode 100644\n",
            "rename from \"q\\303\"\n", "rename to x\n", "similarity index 90%\n", "GIT binary patch\n",
            "literal 3\n", "Binary files a/x and /dev/null differ\n", "-- \n", "\r\n", "\"", "\\",
            "diff --cc x\n", "@@@ -1 -1 +1 @@@\n", "Index: x\n", "=====\n", "\u{fffd}", "\u{0}",
        ][..]), 0..40)) {
            let _ = parse(pieces.concat().into_bytes());
        }

        /// Dropping or duplicating one line of a valid diff never panics.
        #[test]
        fn mutated_diffs_never_panic(
            files in arb_files(),
            target in any::<prop::sample::Index>(),
            duplicate in any::<bool>(),
        ) {
            let rendered = render(&build(&files));
            let mut lines: Vec<&[u8]> = rendered.split_inclusive(|&b| b == b'\n').collect();
            if !lines.is_empty() {
                let idx = target.index(lines.len());
                if duplicate {
                    lines.insert(idx, lines[idx]);
                } else {
                    lines.remove(idx);
                }
            }
            let _ = parse(lines.concat());
        }
    }
}
