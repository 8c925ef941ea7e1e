//! ck's search contract (seed 003): `semantic_search`, `hybrid_search`, `regex_search`,
//! `index_status`, `reindex` and `health_check` with ck's parameter names, defaults and
//! `next_cursor`/`has_more` pages, over the context operations.
//!
//! ck's `semantic_search` is pure vector ranking ([`tollgate_index::nearest`]: its score is the
//! cosine similarity the `threshold` applies to); `hybrid_search` is the hybrid search, scored by
//! relevance (the share of the query's words a chunk holds, so a chunk without the keywords
//! falls under the threshold, as ck's keyword filter means). ck's `path` scopes a call to a
//! directory or file; here it must lie inside the workspace.

use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tollgate_index::grep::{GrepQuery, grep};
use tollgate_index::{MAX_TOP_K, SearchQuery};

use super::super::ContextError;
use super::super::ops::{
    in_range, invalid, read_lines, rebuild_index, require_text, round, searched,
};
use super::super::request::{IndexWorkspaceRequest, RegexMatch};
use super::{cursor_at, cut_chars, offset_of, scope};
use crate::api::context::{index_status as tollgate_index_status, index_workspace};
use crate::secrets::scrub;
use crate::workspace::IndexedWorkspace;

fn default_threshold() -> f64 {
    0.6
}
fn default_top_k() -> usize {
    100
}
fn default_snippet_length() -> usize {
    500
}
fn default_page_size() -> usize {
    50
}
fn default_true() -> bool {
    true
}

/// The most context lines around a result or match.
const MAX_CONTEXT: usize = 20;

/// Input of ck's `semantic_search` and `hybrid_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CkSearchRequest {
    /// What to look for, in natural language.
    pub query: String,
    /// The directory (or file) to search: absolute inside the workspace, or relative to it.
    pub path: String,
    /// Minimum score (0–1). Default 0.6.
    #[serde(default = "default_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: f64,
    /// Results at most (1–200). Default 100.
    #[serde(default = "default_top_k")]
    #[schemars(range(min = 1, max = 200))]
    pub top_k: usize,
    /// Lines of context around each result (0–20). Default 0.
    #[serde(default, alias = "context")]
    #[schemars(range(max = 20))]
    pub context_lines: usize,
    /// Characters per snippet at most. Default 500.
    #[serde(default = "default_snippet_length")]
    #[schemars(range(min = 1))]
    pub snippet_length: usize,
    /// Results per page (1–200). Default 50.
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = 200))]
    pub page_size: usize,
    /// The previous page's `next_cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// One result of ck's searches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkHit {
    /// Relative to the workspace root.
    pub path: String,
    /// 1-based, inclusive (the chunk, without the context lines).
    pub start_line: usize,
    pub end_line: usize,
    /// 0–1 (`semantic_search`: cosine similarity; `hybrid_search`: relevance).
    pub score: f64,
    /// The chunk with its context lines, secrets masked, cut at `snippet_length` characters.
    pub snippet: String,
}

/// Result of ck's `semantic_search` and `hybrid_search`: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkSearchResponse {
    pub results: Vec<CkHit>,
    /// The page as ck's text: `path:start-end (score)` and the snippet, per result.
    pub text: String,
    /// Results over the threshold on every page.
    pub total: usize,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub has_more: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Input of ck's `regex_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CkRegexRequest {
    /// A regex (ripgrep syntax).
    pub pattern: String,
    /// The directory (or file) to search: absolute inside the workspace, or relative to it.
    pub path: String,
    /// Match without regard to case. Default false.
    #[serde(default)]
    pub ignore_case: bool,
    /// Lines of context around each match (0–20). Default 0.
    #[serde(default, alias = "context_lines")]
    #[schemars(range(max = 20))]
    pub context: usize,
    /// Matches per page (1–500). Default 50.
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = 500))]
    pub page_size: usize,
    /// The previous page's `next_cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Result of ck's `regex_search`: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkRegexResponse {
    pub results: Vec<RegexMatch>,
    /// The page as grep's text: `path:line:text`, context lines `path-line-text`.
    pub text: String,
    /// Matches counted (up to 10,000).
    pub total: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

/// Input of ck's `index_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CkPathRequest {
    /// The project directory: absolute inside the workspace, or relative to it.
    pub path: String,
}

/// Result of ck's `index_status` (the workspace's one index, whichever `path` inside it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkIndexStatus {
    pub indexed: bool,
    pub file_count: usize,
    pub chunk_count: usize,
    pub index_size_mb: f64,
    /// RFC 3339; absent without an index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
}

/// Input of ck's `reindex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CkReindexRequest {
    /// The directory to reindex: absolute inside the workspace, or relative to it.
    pub path: String,
    /// Rebuild the whole index from scratch, even if up to date; false: update only the files
    /// changed under `path`. Default true.
    #[serde(default = "default_true")]
    pub force: bool,
}

/// Result of ck's `reindex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkReindexResponse {
    /// `success`.
    pub status: String,
    /// Files read and indexed by this call.
    pub files_indexed: usize,
    pub chunks_created: usize,
    pub time_seconds: f64,
}

/// Result of ck's `health_check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CkHealth {
    /// `healthy`.
    pub status: String,
    /// Tollgate's version.
    pub version: String,
}

/// Which ranking a ck search means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ranking {
    /// Cosine similarity alone (`semantic_search`).
    Vector,
    /// The hybrid search, scored by relevance (`hybrid_search`).
    Hybrid,
}

/// ck's `semantic_search`: the chunks nearest the query by embedding, over the threshold.
pub fn semantic_search(
    ws: &IndexedWorkspace,
    request: &CkSearchRequest,
) -> Result<CkSearchResponse, ContextError> {
    search(ws, request, Ranking::Vector)
}

/// ck's `hybrid_search`: the hybrid search, results holding the query's words over the
/// threshold.
pub fn hybrid_search(
    ws: &IndexedWorkspace,
    request: &CkSearchRequest,
) -> Result<CkSearchResponse, ContextError> {
    search(ws, request, Ranking::Hybrid)
}

fn search(
    ws: &IndexedWorkspace,
    request: &CkSearchRequest,
    ranking: Ranking,
) -> Result<CkSearchResponse, ContextError> {
    require_text("query", &request.query)?;
    if !(0.0..=1.0).contains(&request.threshold) {
        return Err(invalid("threshold", "must be within 0–1"));
    }
    in_range("top_k", request.top_k, 1, MAX_TOP_K)?;
    in_range("page_size", request.page_size, 1, 200)?;
    in_range("context_lines", request.context_lines, 0, MAX_CONTEXT)?;
    in_range("snippet_length", request.snippet_length, 1, 1_000_000)?;
    let under = scope(ws, "path", &request.path)?;
    let offset = offset_of(request.cursor.as_deref())?;
    let mut query = SearchQuery::new(&request.query, request.top_k);
    query.filter.under = under;
    query.chunks_per_file = 3;
    let (outcome, _) = match ranking {
        Ranking::Vector => searched(ws, &query, tollgate_index::nearest)?,
        Ranking::Hybrid => searched(ws, &query, tollgate_index::search)?,
    };
    let scored: Vec<(f64, tollgate_index::Hit)> = outcome
        .hits
        .into_iter()
        .map(|hit| {
            let score = match ranking {
                Ranking::Vector => hit.score,
                Ranking::Hybrid => hit.relevance,
            };
            (round(f64::from(score).clamp(0.0, 1.0)), hit)
        })
        .filter(|(score, _)| *score >= request.threshold)
        .collect();
    let total = scored.len();
    let context = request.context_lines;
    let results: Vec<CkHit> = scored
        .into_iter()
        .skip(offset)
        .take(request.page_size)
        .map(|(score, hit)| {
            let first = hit.start_line.saturating_sub(context).max(1);
            let lines = read_lines(ws, &hit.path, first, hit.end_line + context);
            CkHit {
                snippet: cut_chars(&lines.join("\n"), request.snippet_length),
                path: hit.path,
                start_line: hit.start_line,
                end_line: hit.end_line,
                score,
            }
        })
        .collect();
    let mut text = String::new();
    for hit in &results {
        text.push_str(&format!(
            "{}:{}-{} ({:.2})\n{}\n\n",
            hit.path, hit.start_line, hit.end_line, hit.score, hit.snippet
        ));
    }
    let shown = offset + results.len();
    let has_more = shown < total;
    Ok(CkSearchResponse {
        results,
        text,
        total,
        next_cursor: has_more.then(|| cursor_at(shown)),
        has_more,
        warnings: outcome.warnings,
    })
}

/// ck's `regex_search`: the working tree under `path`, a page of matches.
pub fn regex_search(
    ws: &IndexedWorkspace,
    request: &CkRegexRequest,
) -> Result<CkRegexResponse, ContextError> {
    if request.pattern.is_empty() {
        return Err(invalid("pattern", "must not be empty"));
    }
    in_range("context", request.context, 0, MAX_CONTEXT)?;
    in_range("page_size", request.page_size, 1, 500)?;
    let under = scope(ws, "path", &request.path)?;
    let offset = offset_of(request.cursor.as_deref())?;
    // A file is its own glob; a directory, everything under it.
    let path_glob = under.map(|rel| {
        let escaped = globset::escape(&rel);
        if ws.root().join(&rel).is_dir() {
            format!("{escaped}/**")
        } else {
            escaped
        }
    });
    let query = GrepQuery {
        pattern: request.pattern.clone(),
        path_glob,
        ignore_case: request.ignore_case,
        context_lines: request.context,
        offset,
        limit: request.page_size,
    };
    let outcome = grep(ws.root(), &query).map_err(|err| match err {
        tollgate_index::IndexError::InvalidInput(message) => invalid("pattern", message),
        other => ContextError::Index(other),
    })?;
    let clean = |line: &str| scrub(line, 0, 0).text;
    let results: Vec<RegexMatch> = outcome
        .matches
        .into_iter()
        .map(|m| RegexMatch {
            path: m.path,
            line: m.line,
            text: clean(&m.text),
            before: m.before.iter().map(|l| clean(l)).collect(),
            after: m.after.iter().map(|l| clean(l)).collect(),
        })
        .collect();
    let mut text = String::new();
    for m in &results {
        let first = m.line - m.before.len();
        for (i, line) in m.before.iter().enumerate() {
            text.push_str(&format!("{}-{}-{line}\n", m.path, first + i));
        }
        text.push_str(&format!("{}:{}:{}\n", m.path, m.line, m.text));
        for (i, line) in m.after.iter().enumerate() {
            text.push_str(&format!("{}-{}-{line}\n", m.path, m.line + 1 + i));
        }
    }
    let has_more = outcome.truncated;
    Ok(CkRegexResponse {
        next_cursor: has_more.then(|| cursor_at(offset + results.len())),
        results,
        text,
        total: outcome.total,
        has_more,
    })
}

/// ck's `index_status`: the workspace index's counts (`path` must lie inside it).
pub fn index_status(
    ws: &IndexedWorkspace,
    request: &CkPathRequest,
) -> Result<CkIndexStatus, ContextError> {
    scope(ws, "path", &request.path)?;
    let status = tollgate_index_status(ws)?;
    Ok(CkIndexStatus {
        indexed: status.exists,
        file_count: status.files,
        chunk_count: status.chunks,
        index_size_mb: (status.index_size as f64 / 1_048_576.0 * 10.0).round() / 10.0,
        last_updated: status.last_indexed,
    })
}

/// ck's `reindex`: a full rebuild (`force`), or an update of the files changed under `path`.
pub fn reindex(
    ws: &IndexedWorkspace,
    request: &CkReindexRequest,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> ControlFlow<()>,
) -> Result<CkReindexResponse, ContextError> {
    let under = scope(ws, "path", &request.path)?;
    let report = if request.force {
        rebuild_index(ws, progress)?
    } else {
        index_workspace(ws, &IndexWorkspaceRequest { path: under }, progress)?
    };
    Ok(CkReindexResponse {
        status: "success".to_string(),
        files_indexed: report.files_changed,
        chunks_created: report.chunks_added,
        time_seconds: report.elapsed_ms as f64 / 1000.0,
    })
}

/// ck's `health_check`.
pub fn health_check() -> CkHealth {
    CkHealth {
        status: "healthy".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}
