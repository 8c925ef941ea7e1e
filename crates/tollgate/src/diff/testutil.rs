//! Test helpers for the diff module: building [`Diff`] models by hand, comparing models by
//! content (byte ranges and `diff_line` aside), and proptest strategies for random models.

use proptest::prelude::*;

use crate::diff::model::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};

/// A file of a model to build: like [`FileDiff`], with line contents inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileSpec {
    pub(crate) old_path: Option<String>,
    pub(crate) new_path: Option<String>,
    pub(crate) status: FileStatus,
    pub(crate) similarity: Option<u8>,
    pub(crate) old_mode: Option<u32>,
    pub(crate) new_mode: Option<u32>,
    pub(crate) binary: bool,
    pub(crate) hunks: Vec<HunkSpec>,
}

/// A hunk of a model to build; counts and line numbers are derived from the lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HunkSpec {
    pub(crate) old_start: u32,
    pub(crate) new_start: u32,
    pub(crate) section: String,
    pub(crate) lines: Vec<LineSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineSpec {
    pub(crate) kind: LineKind,
    pub(crate) content: Vec<u8>,
    pub(crate) no_newline_at_eof: bool,
}

/// Builds a [`Diff`] whose bytes are just the line contents, back to back.
pub(crate) fn build(files: &[FileSpec]) -> Diff {
    let mut bytes = Vec::new();
    let mut built = Vec::new();
    for file in files {
        let mut hunks = Vec::new();
        for spec in &file.hunks {
            let (mut old_line, mut new_line) = (spec.old_start, spec.new_start);
            let mut lines = Vec::new();
            for line in &spec.lines {
                let start = bytes.len();
                bytes.extend_from_slice(&line.content);
                let has_old = line.kind != LineKind::Added;
                let has_new = line.kind != LineKind::Removed;
                lines.push(Line {
                    kind: line.kind,
                    old_line: has_old.then_some(old_line),
                    new_line: has_new.then_some(new_line),
                    no_newline_at_eof: line.no_newline_at_eof,
                    content: start..bytes.len(),
                });
                old_line += u32::from(has_old);
                new_line += u32::from(has_new);
            }
            hunks.push(Hunk {
                old_start: spec.old_start,
                old_count: old_line - spec.old_start,
                new_start: spec.new_start,
                new_count: new_line - spec.new_start,
                section: spec.section.clone(),
                lines,
            });
        }
        built.push(FileDiff {
            old_path: file.old_path.clone(),
            new_path: file.new_path.clone(),
            status: file.status,
            similarity: file.similarity,
            old_mode: file.old_mode,
            new_mode: file.new_mode,
            binary: file.binary,
            hunks,
            diff_line: 0,
        });
    }
    Diff {
        bytes: super::model::DiffBytes::new(bytes),
        files: built,
    }
}

/// A model by content: what a diff says, independent of where in its bytes it says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NormFile {
    old_path: Option<String>,
    new_path: Option<String>,
    status: FileStatus,
    similarity: Option<u8>,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    binary: bool,
    hunks: Vec<NormHunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NormHunk {
    header: (u32, u32, u32, u32),
    section: String,
    lines: Vec<NormLine>,
}

/// (kind, old line, new line, no newline at end of file, content).
type NormLine = (LineKind, Option<u32>, Option<u32>, bool, Vec<u8>);

pub(crate) fn normalize(diff: &Diff) -> Vec<NormFile> {
    diff.files()
        .iter()
        .map(|file| NormFile {
            old_path: file.old_path.clone(),
            new_path: file.new_path.clone(),
            status: file.status,
            similarity: file.similarity,
            old_mode: file.old_mode,
            new_mode: file.new_mode,
            binary: file.binary,
            hunks: file
                .hunks
                .iter()
                .map(|hunk| NormHunk {
                    header: (
                        hunk.old_start,
                        hunk.old_count,
                        hunk.new_start,
                        hunk.new_count,
                    ),
                    section: hunk.section.clone(),
                    lines: hunk
                        .lines
                        .iter()
                        .map(|line| {
                            (
                                line.kind,
                                line.old_line,
                                line.new_line,
                                line.no_newline_at_eof,
                                diff.line_bytes(line).to_vec(),
                            )
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// Pieces of awkward paths: spaces, ` b/`, ` and `, quotes, escapes, Unicode, control bytes.
const PATH_PIECES: &[&str] = &[
    "src", "/", "a", "b/", " b/", "a/", " ", "é", "日本", "\"q\"", "\\", "\t", "x.rs", " and ",
    "\u{fffd}", "\n", "\r", "-", "@@", "--- ", "+++ ", "dir/", "\u{1}",
];

fn arb_path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PATH_PIECES), 1..5)
        .prop_map(|pieces| pieces.concat())
}

fn arb_mode() -> impl Strategy<Value = Option<u32>> {
    prop::option::of(prop::sample::select(
        &[0o100644, 0o100755, 0o120000, 0o160000][..],
    ))
}

fn arb_line() -> impl Strategy<Value = LineSpec> {
    let kind = prop::sample::select(&[LineKind::Context, LineKind::Added, LineKind::Removed][..]);
    // Any byte but the line terminator, with `\r` and invalid UTF-8 well represented.
    let byte = prop_oneof![
        4 => any::<u8>().prop_map(|b| if b == b'\n' { b'\r' } else { b }),
        1 => Just(b'\r'),
        1 => Just(b' '),
    ];
    let content = prop::collection::vec(byte, 0..12);
    (kind, content, prop::bool::weighted(0.1)).prop_map(|(kind, content, no_newline_at_eof)| {
        LineSpec {
            kind,
            content,
            no_newline_at_eof,
        }
    })
}

fn arb_hunk() -> impl Strategy<Value = HunkSpec> {
    let section = prop::collection::vec(
        prop::sample::select(&["", " ", "fn f()", "é", "{", "\t"][..]),
        0..3,
    )
    .prop_map(|pieces| pieces.concat());
    (
        1u32..5000,
        1u32..5000,
        section,
        prop::collection::vec(arb_line(), 1..8),
    )
        .prop_map(|(old_start, new_start, section, lines)| {
            // A side without lines starts at the line before the hunk, as git writes it.
            let has_old = lines.iter().any(|l| l.kind != LineKind::Added);
            let has_new = lines.iter().any(|l| l.kind != LineKind::Removed);
            HunkSpec {
                old_start: if has_old { old_start } else { old_start - 1 },
                new_start: if has_new { new_start } else { new_start - 1 },
                section,
                lines,
            }
        })
}

fn arb_file() -> impl Strategy<Value = FileSpec> {
    let status = prop::sample::select(
        &[
            FileStatus::Added,
            FileStatus::Deleted,
            FileStatus::Modified,
            FileStatus::Renamed,
            FileStatus::Copied,
        ][..],
    );
    (
        status,
        arb_path(),
        arb_path(),
        prop::bool::weighted(0.5),
        prop::option::of(0u8..=100),
        arb_mode(),
        arb_mode(),
        prop::bool::weighted(0.15),
        prop::collection::vec(arb_hunk(), 0..4),
    )
        .prop_map(
            |(status, old, new, same_path, similarity, old_mode, new_mode, binary, hunks)| {
                let new = if same_path { old.clone() } else { new };
                let (old_path, new_path) = match status {
                    FileStatus::Added => (None, Some(new)),
                    FileStatus::Deleted => (Some(old), None),
                    FileStatus::Modified | FileStatus::Renamed | FileStatus::Copied => {
                        (Some(old), Some(new))
                    }
                };
                let hunks = if binary { Vec::new() } else { hunks };
                // Git always says why a file is added or deleted: a file mode, `/dev/null`
                // in `---`/`+++` (which needs a hunk) or in a `Binary files` line.
                let implied = binary || !hunks.is_empty();
                let new_mode = match status {
                    FileStatus::Added if !implied => new_mode.or(Some(0o100644)),
                    _ => new_mode,
                };
                let old_mode = match status {
                    FileStatus::Deleted if !implied => old_mode.or(Some(0o100644)),
                    _ => old_mode,
                };
                FileSpec {
                    old_path,
                    new_path,
                    status,
                    similarity,
                    old_mode,
                    new_mode,
                    binary,
                    hunks,
                }
            },
        )
}

/// Random models of diffs git could print: consistent counts, any paths and contents.
pub(crate) fn arb_files() -> impl Strategy<Value = Vec<FileSpec>> {
    prop::collection::vec(arb_file(), 0..5)
}
