//! What the model is shown: one section per file (numbered hunks, then surrounding code), ranked
//! highest risk first and packed into requests that fit the token budget. A file too large for
//! one request is cut at hunk boundaries; files that fit nowhere are listed as omitted, never
//! sent whole. With a code index in the workspace, a file's section also shows the definitions
//! in other files that its added lines use ([`super::used_definitions`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::used_definitions::UsedDefinitions;
use crate::diff::{Diff, FileDiff, FileStatus, LineKind};
use crate::llm::{estimate_tokens, fence, fence_file};

/// Lines of surrounding code shown on each side of a changed line (upstream's ±16).
const CONTEXT_RADIUS: u32 = 16;
/// Requests per pass at most: past this, the rest of a large diff is omitted (and reported).
pub(crate) const MAX_CHUNKS_PER_PASS: usize = 6;
/// The largest repository file read for context.
const MAX_CONTEXT_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Where surrounding code comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ContextSource<'a> {
    /// The repository's working tree (used only when it matches the diff's new side).
    Workspace(&'a Path),
    /// New-side file contents the caller gave, by path (used only when they match the diff).
    Given(&'a BTreeMap<String, String>),
}

/// A file under review and how much its review matters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RankedFile<'a> {
    pub(crate) file: &'a FileDiff,
    pub(crate) weight: u32,
}

/// The requests of one pass.
#[derive(Debug, Default)]
pub(crate) struct Packed {
    /// Each entry: the user-message body of one request.
    pub(crate) chunks: Vec<String>,
    /// Paths whose diff went into some request.
    pub(crate) sent: Vec<String>,
    pub(crate) omitted: Vec<String>,
    /// Files cut to fit (some hunks not sent).
    pub(crate) truncated: Vec<String>,
    /// Given contents not used because they disagree with the diff's new side.
    pub(crate) context_mismatched: Vec<String>,
    /// Definitions from the code index shown, over all sections.
    pub(crate) index_definitions: usize,
}

/// Builds the sections of `files` (highest weight first) and packs them into requests of at most
/// `budget` tokens each, giving surrounding code to the first `max_context_files` files.
pub(crate) fn pack(
    diff: &Diff,
    files: &[RankedFile<'_>],
    context: ContextSource<'_>,
    max_context_files: usize,
    budget: usize,
) -> Packed {
    let mut ranked: Vec<&RankedFile<'_>> = files
        .iter()
        .filter(|f| {
            !f.file.binary && f.file.status != FileStatus::Deleted && !f.file.hunks.is_empty()
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.weight
            .cmp(&a.weight)
            .then_with(|| a.file.path().cmp(b.file.path()))
    });
    let root = match context {
        ContextSource::Workspace(root) => root.canonicalize().ok(),
        ContextSource::Given(_) => None,
    };
    let index = root.as_deref().and_then(UsedDefinitions::open);

    let mut packed = Packed::default();
    let mut current = String::new();
    let mut current_tokens = 0usize;
    for (rank, ranked_file) in ranked.iter().enumerate() {
        let file = ranked_file.file;
        let path = file.path().to_string();
        let hunks = numbered_hunks(diff, file);
        let (surrounding, used) = if rank < max_context_files {
            (
                surrounding_code(diff, file, context, root.as_deref()),
                index
                    .as_ref()
                    .zip(root.as_deref())
                    .and_then(|(index, root)| index.excerpt(diff, file, root)),
            )
        } else {
            (None, None)
        };
        if let ContextSource::Given(files) = context
            && surrounding.is_none()
            && rank < max_context_files
            && files.contains_key(&path)
        {
            packed.context_mismatched.push(path.clone());
        }
        // Hunks with surrounding code and used definitions, else with surrounding code only,
        // else hunks alone, in the current request or a new one; else as many whole hunks as
        // fit in a request of their own.
        let context_only = Context {
            surrounding: surrounding.as_deref(),
            used: None,
        };
        let full = Context {
            used: used.as_deref(),
            ..context_only
        };
        let mut candidates = vec![(section(&path, file, &hunks, full, None), used.is_some())];
        if used.is_some() {
            candidates.push((section(&path, file, &hunks, context_only, None), false));
        }
        candidates.push((section(&path, file, &hunks, Context::NONE, None), false));
        let mut placed = false;
        for (candidate, with_used) in candidates {
            let tokens = estimate_tokens(&candidate);
            if tokens > budget {
                continue;
            }
            if current_tokens + tokens > budget {
                if packed.chunks.len() + 2 > MAX_CHUNKS_PER_PASS {
                    continue;
                }
                packed.chunks.push(std::mem::take(&mut current));
                current_tokens = 0;
            }
            current.push_str(&candidate);
            current_tokens += tokens;
            if with_used {
                packed.index_definitions += used.as_deref().map_or(0, count_definitions);
            }
            placed = true;
            break;
        }
        if !placed {
            let n_requests = packed.chunks.len() + usize::from(!current.is_empty());
            // Room for one more request (the current one, when empty, is not counted yet).
            let can_open = n_requests < MAX_CHUNKS_PER_PASS;
            if can_open {
                let mut kept: Vec<String> = Vec::new();
                for hunk in &hunks {
                    kept.push(hunk.clone());
                    let attempt = section(
                        &path,
                        file,
                        &kept,
                        Context::NONE,
                        Some(hunks.len() - kept.len()),
                    );
                    if estimate_tokens(&attempt) > budget {
                        kept.pop();
                        break;
                    }
                }
                if !kept.is_empty() {
                    if !current.is_empty() {
                        packed.chunks.push(std::mem::take(&mut current));
                    }
                    current = section(
                        &path,
                        file,
                        &kept,
                        Context::NONE,
                        Some(hunks.len() - kept.len()),
                    );
                    current_tokens = estimate_tokens(&current);
                    packed.truncated.push(path.clone());
                    placed = true;
                }
            }
        }
        if placed {
            packed.sent.push(path);
        } else {
            packed.omitted.push(path);
        }
    }
    if !current.is_empty() {
        packed.chunks.push(current);
    }
    packed.chunks.retain(|chunk| !chunk.is_empty());
    packed
}

/// What a section shows besides its hunks.
#[derive(Debug, Clone, Copy)]
struct Context<'a> {
    surrounding: Option<&'a str>,
    used: Option<&'a str>,
}

impl Context<'_> {
    const NONE: Context<'static> = Context {
        surrounding: None,
        used: None,
    };
}

fn count_definitions(used: &str) -> usize {
    used.lines().filter(|l| l.starts_with('`')).count()
}

/// One file's section: a trusted header, then the fenced hunks, the fenced surrounding code and
/// the fenced definitions it uses.
fn section(
    path: &str,
    file: &FileDiff,
    hunks: &[String],
    context: Context<'_>,
    omitted_hunks: Option<usize>,
) -> String {
    let status = match file.status {
        FileStatus::Added => "added",
        FileStatus::Deleted => "deleted",
        FileStatus::Renamed => "renamed",
        FileStatus::Copied => "copied",
        _ => "modified",
    };
    // The path is as untrusted as the code: it goes inside each fence (`File: …`), never into
    // the headers or the fence labels.
    let mut out = format!("\n### Changed file ({status})\n");
    out.push_str(&fence_file("diff", path, &hunks.concat()));
    if let Some(n) = omitted_hunks.filter(|n| *n > 0) {
        let _ = writeln!(
            out,
            "({n} more hunk(s) of this file were not sent: over the token budget.)"
        );
    }
    if let Some(code) = context.surrounding {
        out.push_str("Surrounding code of the same file (new version, numbered):\n");
        out.push_str(&fence_file("context", path, code));
    }
    if let Some(code) = context.used {
        out.push_str(
            "Definitions in other files that the changes to this file use (from the code index, \
             numbered):\n",
        );
        out.push_str(&fence("definitions", code));
    }
    out
}

/// Each hunk as text with new-side line numbers in a left column.
fn numbered_hunks(diff: &Diff, file: &FileDiff) -> Vec<String> {
    file.hunks
        .iter()
        .map(|hunk| {
            let mut text = format!(
                "@@ -{},{} +{},{} @@ {}\n",
                hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count, hunk.section
            );
            for line in &hunk.lines {
                let content = diff.line_text(line);
                let content = content.trim_end_matches('\r');
                let (number, marker) = match line.kind {
                    LineKind::Added => (line.new_line, '+'),
                    LineKind::Removed => (None, '-'),
                    LineKind::Context => (line.new_line, ' '),
                };
                match number {
                    Some(n) => {
                        let _ = writeln!(text, "{n:>6} |{marker}{content}");
                    }
                    None => {
                        let _ = writeln!(text, "{:>6} |{marker}{content}", "");
                    }
                }
            }
            text
        })
        .collect()
}

/// ±16 lines around the changed lines of the new file, numbered, from the repository (only when
/// the file there matches the diff) or from the caller's contents.
fn surrounding_code(
    diff: &Diff,
    file: &FileDiff,
    context: ContextSource<'_>,
    root: Option<&Path>,
) -> Option<String> {
    let path = file.new_path.as_deref()?;
    let text = match context {
        ContextSource::Workspace(_) => read_confined(root?, path)?,
        ContextSource::Given(files) => files.get(path)?.clone(),
    };
    let lines: Vec<&str> = text.lines().collect();
    // The working tree may be at another commit than the diff's head: use it only when every
    // added line of the diff is there, at its number.
    for line in file.added_lines() {
        let n = line.new_line? as usize;
        let expected = diff.line_text(line);
        if lines
            .get(n.checked_sub(1)?)
            .map(|l| l.trim_end_matches('\r'))
            != Some(expected.trim_end_matches('\r'))
        {
            return None;
        }
    }
    let mut windows: Vec<(u32, u32)> = Vec::new();
    for hunk in &file.hunks {
        let start = hunk.new_start.saturating_sub(CONTEXT_RADIUS).max(1);
        let end = (hunk.new_start + hunk.new_count.saturating_sub(1) + CONTEXT_RADIUS)
            .min(lines.len() as u32);
        match windows.last_mut() {
            Some(last) if start <= last.1 + 1 => last.1 = last.1.max(end),
            _ => windows.push((start, end)),
        }
    }
    let mut out = String::new();
    for (start, end) in windows {
        if start > end {
            continue;
        }
        if !out.is_empty() {
            out.push_str("   ...\n");
        }
        for n in start..=end {
            let _ = writeln!(out, "{n:>6} | {}", lines[(n - 1) as usize]);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A repository file under the canonical `root`, symlinks resolved and confined (by
/// [`crate::workspace`]), as UTF-8.
pub(super) fn read_confined(root: &Path, path: &str) -> Option<String> {
    let workspace = crate::workspace::Workspace::new(root).ok()?;
    let path = crate::workspace::RepoPath::new(path).ok()?;
    let bytes = workspace.read(&path, MAX_CONTEXT_FILE_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
