//! Regex search of the working tree with the index's ignore rules (ripgrep's walker and
//! searcher); needs no index.

use std::path::Path;

use globset::Glob;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};

use crate::error::IndexError;
use crate::walk::walk;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepMatch {
    pub path: String,
    /// 1-based.
    pub line: usize,
    pub text: String,
    /// Lines before and after (up to the requested context), without the match itself.
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// What a regex search asks for.
#[derive(Debug, Clone)]
pub struct GrepQuery {
    pub pattern: String,
    /// A glob on the relative path (`src/**/*.rs`); `None`: every file.
    pub path_glob: Option<String>,
    pub ignore_case: bool,
    pub context_lines: usize,
    /// Matches to skip (paging).
    pub offset: usize,
    pub limit: usize,
}

#[derive(Debug, Clone, Default)]
pub struct GrepOutcome {
    pub matches: Vec<GrepMatch>,
    /// All matches found (past `offset + limit` counting stops at a cap).
    pub total: usize,
    pub truncated: bool,
    pub files_searched: usize,
}

/// Counting stops here: paging past it is not supported.
const MAX_COUNTED: usize = 10_000;

pub fn grep(root: &Path, query: &GrepQuery) -> Result<GrepOutcome, IndexError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(query.ignore_case)
        .build(&query.pattern)
        .map_err(|err| {
            IndexError::InvalidInput(format!("invalid regex `{}`: {err}", query.pattern))
        })?;
    let glob = match &query.path_glob {
        Some(glob) if !glob.trim().is_empty() => Some(
            Glob::new(glob)
                .map_err(|err| {
                    IndexError::InvalidInput(format!("invalid path glob `{glob}`: {err}"))
                })?
                .compile_matcher(),
        ),
        _ => None,
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .build();
    let mut outcome = GrepOutcome::default();
    let end = query.offset + query.limit;
    for file in walk(root, None) {
        if glob.as_ref().is_some_and(|g| !g.is_match(&file.path)) {
            continue;
        }
        outcome.files_searched += 1;
        let mut lines: Vec<(usize, String)> = Vec::new();
        let result = searcher.search_path(
            &matcher,
            &file.abs,
            UTF8(|line, text| {
                lines.push((
                    line as usize,
                    text.trim_end_matches(['\n', '\r']).to_string(),
                ));
                Ok(true)
            }),
        );
        if result.is_err() || lines.is_empty() {
            continue;
        }
        let file_lines: Option<Vec<String>> = (query.context_lines > 0)
            .then(|| std::fs::read_to_string(&file.abs).ok())
            .flatten()
            .map(|text| text.lines().map(str::to_string).collect());
        for (line, text) in lines {
            outcome.total += 1;
            if outcome.total > MAX_COUNTED {
                outcome.truncated = true;
                return Ok(outcome);
            }
            if outcome.total <= query.offset || outcome.total > end {
                if outcome.total > end {
                    outcome.truncated = true;
                }
                continue;
            }
            let (before, after) = match &file_lines {
                Some(all) => {
                    let idx = line - 1;
                    let from = idx.saturating_sub(query.context_lines);
                    let to = (idx + 1 + query.context_lines).min(all.len());
                    (
                        all[from..idx.min(all.len())].to_vec(),
                        all.get(idx + 1..to)
                            .map(<[String]>::to_vec)
                            .unwrap_or_default(),
                    )
                }
                None => (Vec::new(), Vec::new()),
            };
            outcome.matches.push(GrepMatch {
                path: file.path.clone(),
                line,
                text,
                before,
                after,
            });
        }
    }
    Ok(outcome)
}
