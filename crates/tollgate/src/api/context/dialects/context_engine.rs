//! Context-Engine's indexer contract (seed 000): `repo_search` (and its alias `code_search`)
//! with every parameter and result field the seed lists, over the hybrid search.
//!
//! A list of queries is fused: each query's results scaled to its best, summed per chunk (a
//! chunk several queries find ranks higher). `kind` and `symbol` filter the searched chunks
//! (from the deepest pool a search gives); the other filters narrow the search itself. Scores
//! are relevance (the share of the queries' words a chunk holds: comparable across queries);
//! `components` gives each channel's own score. Tollgate has no neural reranker: `used_rerank`
//! is false, whatever `rerank_enabled` says.

use std::collections::HashMap;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tollgate_index::{Filter, MAX_TOP_K, SearchQuery, Tests};

use super::super::ContextError;
use super::super::ops::{
    in_range, invalid, parse_language, read_lines, require_text, round, searched, symbol_graph,
};
use super::super::request::{IndexWorkspaceRequest, SymbolGraphRequest, SymbolQueryType};
use super::super::{PathCommit, path_commits};
use super::super::{index_status, index_workspace, rebuild_index};
use super::scope;
use crate::workspace::IndexedWorkspace;

fn default_limit() -> usize {
    10
}
fn default_per_path() -> usize {
    2
}
fn default_true() -> bool {
    true
}
fn default_context_lines() -> usize {
    3
}
fn default_rerank_top_n() -> usize {
    50
}
fn default_rerank_return_m() -> usize {
    12
}

/// One string or a list of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one.clone()],
            OneOrMany::Many(many) => many.clone(),
        }
    }
}

/// Input of `repo_search` and `code_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoSearchRequest {
    /// What to look for; a list of queries is fused.
    pub query: OneOrMany,
    /// Results at most (1–100). Default 10.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: usize,
    /// Results per file at most (1–20). Default 2.
    #[serde(default = "default_per_path")]
    #[schemars(range(min = 1, max = 20))]
    pub per_path: usize,
    /// The repository or repositories to search: this server's (its directory name) or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<OneOrMany>,
    /// Only files in this language (`python`, `rust`, `typescript`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Only paths matching one of these globs (`**/db/**/*.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<OneOrMany>,
    /// Only under this directory (inside the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// Leave out paths matching these globs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_glob: Option<OneOrMany>,
    /// Only chunks whose symbol contains this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Only this construct: `function`, `class`, `variable`, `import`, or a Tollgate kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only files with these extensions (`py`, `.ts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext: Option<OneOrMany>,
    /// Include each result's code. Default true.
    #[serde(default = "default_true")]
    pub include_snippet: bool,
    /// Lines of context around each snippet (0–20). Default 3.
    #[serde(default = "default_context_lines")]
    #[schemars(range(max = 20))]
    pub context_lines: usize,
    /// List the snippet's lines holding query words, the words marked `<<…>>`. Default true.
    #[serde(default = "default_true", alias = "highlight")]
    pub highlight_snippet: bool,
    /// Accepted; Tollgate has no neural reranker (`used_rerank` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank_enabled: Option<bool>,
    /// Accepted (no reranker). Default 50.
    #[serde(default = "default_rerank_top_n")]
    pub rerank_top_n: usize,
    /// Accepted (no reranker). Default 12.
    #[serde(default = "default_rerank_return_m")]
    pub rerank_return_m: usize,
}

/// Each channel's part in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Components {
    /// The vector channel's cosine similarity, when it found the chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_score: Option<f64>,
    /// The lexical channel's BM25 score, when it found the chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical_score: Option<f64>,
    /// Never set: no reranker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranker_score: Option<f64>,
    /// The fused rank score, 1 for the best (averaged over the queries).
    pub final_score: f64,
}

/// What a result's chunk is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HitMetadata {
    pub language: String,
    /// Tollgate's chunk kind (`function`, `method`, `class`, `imports`, `gap`, …).
    pub kind: String,
    /// Estimated tokens of the chunk (characters / 4).
    pub tokens: usize,
}

/// One result of `repo_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepoHit {
    /// 0–1: the share of the queries' words the chunk holds.
    pub score: f64,
    /// Relative to the workspace root.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// 1-based, inclusive (the chunk, without context lines).
    pub start_line: usize,
    pub end_line: usize,
    /// The chunk with its context lines, secrets masked (absent without `include_snippet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    pub highlights: Vec<String>,
    pub components: Components,
    pub metadata: HitMetadata,
}

/// Result of `repo_search` and `code_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepoSearchResponse {
    pub ok: bool,
    pub results: Vec<RepoHit>,
    /// Results returned.
    pub total: usize,
    /// Always false: no reranker.
    pub used_rerank: bool,
    pub search_time_ms: u64,
    pub query: OneOrMany,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The name this server's repository goes by: its directory's.
fn repo_name(ws: &IndexedWorkspace) -> String {
    ws.root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Refuses a `repo` naming a repository this server does not serve (one server, one
/// repository: its directory's name, or `*`).
fn check_repo(ws: &IndexedWorkspace, repo: Option<&OneOrMany>) -> Result<(), ContextError> {
    check_served(ws, "repo", repo)
}

/// [`check_repo`] for the argument `field` (`repo`, `collection`).
fn check_served(
    ws: &IndexedWorkspace,
    field: &'static str,
    repo: Option<&OneOrMany>,
) -> Result<(), ContextError> {
    let name = repo_name(ws);
    for wanted in repo.map(OneOrMany::to_vec).unwrap_or_default() {
        if wanted != "*" && wanted != name {
            return Err(invalid(
                field,
                format!(
                    "`{}` is not served here: this server indexes one repository, `{name}` (or `*`); start a server per repository",
                    wanted.escape_debug()
                ),
            ));
        }
    }
    Ok(())
}

/// The Tollgate chunk kinds a seed `kind` means; `None` for any.
fn kinds(kind: Option<&str>) -> Result<Option<Vec<&'static str>>, ContextError> {
    const TOLLGATE_KINDS: [&str; 19] = [
        "function",
        "method",
        "class",
        "struct",
        "enum",
        "union",
        "trait",
        "interface",
        "type",
        "impl",
        "module",
        "namespace",
        "macro",
        "const",
        "static",
        "imports",
        "section",
        "gap",
        "window",
    ];
    let Some(kind) = kind.map(str::trim).filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    let kind = kind.to_ascii_lowercase();
    Ok(Some(match kind.as_str() {
        "function" => vec!["function", "method"],
        "class" => vec![
            "class",
            "struct",
            "enum",
            "union",
            "trait",
            "interface",
            "type",
            "impl",
        ],
        "variable" => vec!["const", "static"],
        "import" => vec!["imports"],
        "comment" => {
            return Err(invalid(
                "kind",
                "`comment` is not a chunk of its own here: comments and docstrings belong to the definition they document",
            ));
        }
        other => match TOLLGATE_KINDS.iter().find(|k| **k == other) {
            Some(k) => vec![*k],
            None => {
                return Err(invalid(
                    "kind",
                    format!(
                        "unknown kind `{other}`: function, class, variable, import, or one of {}",
                        TOLLGATE_KINDS.join(", ")
                    ),
                ));
            }
        },
    }))
}

/// The globs of `field`, each checked (so a bad one names its field).
fn globs(field: &'static str, globs: Option<&OneOrMany>) -> Result<Vec<String>, ContextError> {
    let globs = globs.map(OneOrMany::to_vec).unwrap_or_default();
    for glob in &globs {
        globset::Glob::new(glob).map_err(|err| invalid(field, format!("glob `{glob}`: {err}")))?;
    }
    Ok(globs)
}

/// The query's words worth marking: two or more characters, letters, digits or `_`.
fn query_words(queries: &[String]) -> Vec<String> {
    let mut words: Vec<String> = queries
        .iter()
        .flat_map(|q| q.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    // Longest first, so `connection` is marked before `conn` would split it.
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    words
}

/// Up to three of `lines` that hold a query word, each word marked `<<word>>`.
fn highlights(lines: &[String], words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        let lower = line.to_lowercase();
        // Lower-casing may change byte lengths (rare scripts); such a line is not marked.
        if lower.len() != line.len() {
            continue;
        }
        let mut marked = vec![false; line.len()];
        let mut any = false;
        for word in words {
            let mut from = 0;
            while let Some(at) = lower[from..].find(word.as_str()) {
                let start = from + at;
                let end = start + word.len();
                if !marked[start..end].iter().any(|m| *m) {
                    marked[start..end].iter_mut().for_each(|m| *m = true);
                    any = true;
                }
                from = end;
            }
        }
        if !any {
            continue;
        }
        let mut text = String::new();
        let mut inside = false;
        for (i, ch) in line.char_indices() {
            if marked[i] && !inside {
                text.push_str("<<");
                inside = true;
            } else if !marked[i] && inside {
                text.push_str(">>");
                inside = false;
            }
            text.push(ch);
        }
        if inside {
            text.push_str(">>");
        }
        out.push(text.trim().to_string());
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// A chunk found by one or more of the queries.
struct Found {
    hit: tollgate_index::Hit,
    /// Sum over the queries of the fused score scaled to each query's best.
    fused: f64,
    relevance: f64,
    dense: Option<f64>,
    lexical: Option<f64>,
}

/// Input of `search_callers_for` and `search_importers_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolUsesRequest {
    /// The symbol (or module) name.
    pub query: String,
    /// Results at most (1–200). Default 10.
    #[serde(default = "default_preset_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: usize,
    /// Only files in this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

/// `search_callers_for`: the symbol's uses (word-boundary references, definitions left out).
pub fn search_callers_for(
    ws: &IndexedWorkspace,
    request: &SymbolUsesRequest,
) -> Result<RepoSearchResponse, ContextError> {
    uses(ws, request, SymbolQueryType::Callers)
}

/// `search_importers_for`: the files importing the module or symbol.
pub fn search_importers_for(
    ws: &IndexedWorkspace,
    request: &SymbolUsesRequest,
) -> Result<RepoSearchResponse, ContextError> {
    uses(ws, request, SymbolQueryType::Importers)
}

/// The symbol graph's answer in `repo_search`'s shape. Graph answers are exact (score 1, in the
/// graph's order); when the graph knows nothing, `repo_search` answers the name instead, as
/// the seed's heuristic search would.
fn uses(
    ws: &IndexedWorkspace,
    request: &SymbolUsesRequest,
    query_type: SymbolQueryType,
) -> Result<RepoSearchResponse, ContextError> {
    let started = Instant::now();
    require_text("query", &request.query)?;
    in_range("limit", request.limit, 1, 200)?;
    let graph = symbol_graph(
        ws,
        &SymbolGraphRequest {
            symbol: request.query.clone(),
            query_type,
            language: request.language.clone(),
            under: None,
            limit: request.limit,
        },
    )?;
    if graph.source == "search" {
        let mut fallback = PresetSearchRequest {
            query: OneOrMany::One(request.query.clone()),
            limit: request.limit.min(100),
            include_snippet: true,
            language: request.language.clone(),
        }
        .as_repo_search();
        fallback.per_path = 1;
        return search(ws, &fallback, Preset::None);
    }
    let name = request.query.trim();
    let words = query_words(&[name.to_string()]);
    let context = default_context_lines();
    let results = graph
        .results
        .into_iter()
        .map(|location| {
            // An importer is a file; its line is the first that names the symbol.
            let line = if location.line > 0 {
                location.line
            } else {
                first_line_naming(ws, &location.path, name)
            };
            let lines = read_lines(
                ws,
                &location.path,
                line.saturating_sub(context).max(1),
                line + context,
            );
            let own = read_lines(ws, &location.path, line, line);
            let language =
                tollgate_index::walk::detect_language(std::path::Path::new(&location.path))
                    .map_or("text", |l| l.as_str())
                    .to_string();
            RepoHit {
                score: 1.0,
                symbol: None,
                start_line: line,
                end_line: line,
                highlights: highlights(&own, &words),
                snippet: Some(lines.join("\n")),
                components: Components {
                    dense_score: None,
                    lexical_score: None,
                    reranker_score: None,
                    final_score: 1.0,
                },
                metadata: HitMetadata {
                    language,
                    kind: match query_type {
                        SymbolQueryType::Importers => "import".to_string(),
                        _ => "reference".to_string(),
                    },
                    tokens: own.iter().map(|l| l.len() + 1).sum::<usize>().div_ceil(4),
                },
                path: location.path,
            }
        })
        .collect::<Vec<_>>();
    Ok(RepoSearchResponse {
        ok: true,
        total: results.len(),
        results,
        used_rerank: false,
        search_time_ms: started.elapsed().as_millis() as u64,
        query: OneOrMany::One(request.query.clone()),
        warnings: Vec::new(),
    })
}

/// The first line of `path` holding `name`'s last part (1 when none does).
fn first_line_naming(ws: &IndexedWorkspace, path: &str, name: &str) -> usize {
    let last = name.rsplit([':', '.', '/']).next().unwrap_or(name);
    read_lines(ws, path, 1, usize::MAX / 2)
        .iter()
        .position(|line| line.contains(last))
        .map_or(1, |at| at + 1)
}

fn default_max_points() -> usize {
    20
}

/// Input of `change_history_for_path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeHistoryRequest {
    /// A file or directory, relative to the workspace root.
    pub path: String,
    /// This server's repository (its directory name) or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Commits listed at most (1–1000). Default 20.
    #[serde(default = "default_max_points")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_points: usize,
}

/// The seed's summary of a path's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeSummary {
    pub path: String,
    /// The newest commit's date (RFC 3339); absent when no commit changed the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Commits listed.
    pub commits: usize,
}

/// Result of `change_history_for_path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeHistoryResponse {
    pub ok: bool,
    pub summary: ChangeSummary,
    /// The commits that changed the path, newest first.
    pub commits: Vec<PathCommit>,
}

/// `change_history_for_path`: the commits that changed a file or directory, newest first.
pub fn change_history_for_path(
    ws: &IndexedWorkspace,
    request: &ChangeHistoryRequest,
) -> Result<ChangeHistoryResponse, ContextError> {
    require_text("path", &request.path)?;
    in_range("max_points", request.max_points, 1, 1000)?;
    check_served(
        ws,
        "collection",
        request.collection.clone().map(OneOrMany::One).as_ref(),
    )?;
    // A deleted file has a history too: the path need not exist, only stay inside.
    let path = ws
        .paths()
        .relative(request.path.trim(), "")
        .map_err(|err| invalid("path", err.to_string()))?;
    let commits = path_commits(ws, path.as_str(), request.max_points)?;
    Ok(ChangeHistoryResponse {
        ok: true,
        summary: ChangeSummary {
            path: path.as_str().to_string(),
            last_modified: commits.first().map(|c| c.date.clone()),
            commits: commits.len(),
        },
        commits,
    })
}

fn default_max_new() -> usize {
    2
}

/// Input of `expand_query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpandQueryRequest {
    /// The query or queries to expand.
    pub query: OneOrMany,
    /// Alternates at most (0–2). Default 2.
    #[serde(default = "default_max_new")]
    #[schemars(range(max = 2))]
    pub max_new: usize,
}

/// Result of `expand_query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExpandQueryResponse {
    pub ok: bool,
    pub original_query: OneOrMany,
    pub alternates: Vec<String>,
    /// The originals and the alternates.
    pub total_queries: usize,
    /// `fallback`: the deterministic expansion (no model is asked).
    pub decoder_used: String,
}

/// `expand_query` without a model: each query's other spellings in code, the words joined
/// `snake_case` and `camelCase` ("session cookie" → "session_cookie sessionCookie"), or an
/// identifier's words ("parseConfig" → "parse config"); the same query, the same alternates.
pub fn expand_query(request: &ExpandQueryRequest) -> Result<ExpandQueryResponse, ContextError> {
    let queries = request.query.to_vec();
    if queries.is_empty() {
        return Err(invalid("query", "give a query or a non-empty list of them"));
    }
    for query in &queries {
        require_text("query", query)?;
    }
    in_range("max_new", request.max_new, 0, 2)?;
    let mut alternates: Vec<String> = Vec::new();
    for query in &queries {
        for alternate in spellings(query) {
            let known = queries
                .iter()
                .chain(&alternates)
                .any(|q| q.eq_ignore_ascii_case(&alternate));
            if !known && alternates.len() < request.max_new {
                alternates.push(alternate);
            }
        }
    }
    Ok(ExpandQueryResponse {
        ok: true,
        total_queries: queries.len() + alternates.len(),
        original_query: request.query.clone(),
        alternates,
        decoder_used: "fallback".to_string(),
    })
}

/// A query's other spellings: its words as code identifiers, and its identifiers as words.
fn spellings(query: &str) -> Vec<String> {
    // Words: split on anything but letters and digits, and at lower-to-upper case changes.
    let mut words: Vec<String> = Vec::new();
    for part in query.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for ch in part.chars() {
            if ch.is_uppercase() && previous_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word).to_lowercase());
            }
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
            word.push(ch);
        }
        if !word.is_empty() {
            words.push(word.to_lowercase());
        }
    }
    if words.len() < 2 {
        return Vec::new();
    }
    let snake = words.join("_");
    let camel: String = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                w.clone()
            } else {
                let mut chars = w.chars();
                chars
                    .next()
                    .map(|first| first.to_uppercase().chain(chars).collect())
                    .unwrap_or_default()
            }
        })
        .collect();
    let plain = words.join(" ");
    [format!("{snake} {camel}"), plain]
        .into_iter()
        .filter(|alternate| alternate != query)
        .collect()
}

/// Input of `qdrant_index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexRequest {
    /// Only (re)index this subdirectory (default: the whole workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// Rebuild the whole index from scratch. Default false.
    #[serde(default)]
    pub recreate: bool,
    /// This server's repository (its directory name) or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
}

/// What an index run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStats {
    /// Files read and indexed.
    pub files_processed: usize,
    pub chunks_created: usize,
    /// One per chunk.
    pub vectors_generated: usize,
    pub processing_time_seconds: f64,
    /// Files skipped (too large, binary, unreadable).
    pub errors: usize,
}

/// Result of `qdrant_index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexResponse {
    pub ok: bool,
    /// `index`.
    pub operation: String,
    pub subdir: String,
    /// This server's repository.
    pub collection: String,
    pub recreate: bool,
    pub stats: IndexStats,
    pub message: String,
}

/// `qdrant_index`: brings the index up to date (`subdir` only), or rebuilds it (`recreate`).
pub fn qdrant_index(
    ws: &IndexedWorkspace,
    request: &IndexRequest,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> std::ops::ControlFlow<()>,
) -> Result<IndexResponse, ContextError> {
    check_served(
        ws,
        "collection",
        request.collection.clone().map(OneOrMany::One).as_ref(),
    )?;
    let subdir = match request.subdir.as_deref().map(str::trim) {
        Some(subdir) if !subdir.is_empty() && subdir != "." => scope(ws, "subdir", subdir)?,
        _ => None,
    };
    let report = if request.recreate {
        rebuild_index(ws, progress)?
    } else {
        index_workspace(
            ws,
            &IndexWorkspaceRequest {
                path: subdir.clone(),
            },
            progress,
        )?
    };
    Ok(IndexResponse {
        ok: true,
        operation: "index".to_string(),
        subdir: if request.recreate {
            String::new()
        } else {
            subdir.unwrap_or_default()
        },
        collection: repo_name(ws),
        recreate: request.recreate,
        stats: IndexStats {
            files_processed: report.files_changed,
            chunks_created: report.chunks_added,
            vectors_generated: report.chunks_added,
            processing_time_seconds: report.elapsed_ms as f64 / 1000.0,
            errors: report.files_skipped,
        },
        message: match &report.rebuilt {
            Some(why) => format!("Indexing completed successfully (rebuilt: {why})"),
            None => "Indexing completed successfully".to_string(),
        },
    })
}

fn default_status_max_points() -> usize {
    5000
}
fn default_status_batch() -> usize {
    1000
}

/// Input of `qdrant_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {
    /// This server's repository (its directory name) or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Accepted; the counts are exact, nothing is scanned. Default 5000.
    #[serde(default = "default_status_max_points")]
    pub max_points: usize,
    /// Accepted; nothing is scanned. Default 1000.
    #[serde(default = "default_status_batch")]
    pub batch: usize,
}

/// A moment, as the seed writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timestamp {
    pub unix: i64,
    /// RFC 3339.
    pub iso: String,
}

/// Result of `qdrant_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusResponse {
    pub ok: bool,
    /// This server's repository.
    pub collection: String,
    pub exists: bool,
    /// Chunks indexed (each one vector).
    pub count: usize,
    /// When the index was last updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_ingested_at: Option<Timestamp>,
    /// The embedder's id and dimension.
    pub vectors_config: std::collections::BTreeMap<String, usize>,
    pub storage_size_mb: f64,
    /// `healthy`, `unhealthy` (see `problems`) or `missing`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// `qdrant_status`: the workspace index's state, in the seed's shape.
pub fn qdrant_status(
    ws: &IndexedWorkspace,
    request: &StatusRequest,
) -> Result<StatusResponse, ContextError> {
    check_served(
        ws,
        "collection",
        request.collection.clone().map(OneOrMany::One).as_ref(),
    )?;
    let status = index_status(ws)?;
    let last_ingested_at = status.last_indexed.as_ref().and_then(|iso| {
        time::OffsetDateTime::parse(iso, &time::format_description::well_known::Rfc3339)
            .ok()
            .map(|t| Timestamp {
                unix: t.unix_timestamp(),
                iso: iso.clone(),
            })
    });
    let embedder = ws.embedder();
    let vectors_config = status
        .embedder
        .iter()
        .map(|id| {
            let dim = if *id == embedder.id() {
                embedder.dim()
            } else {
                0
            };
            (id.clone(), dim)
        })
        .collect();
    Ok(StatusResponse {
        ok: true,
        collection: repo_name(ws),
        exists: status.exists,
        count: status.chunks,
        last_ingested_at,
        vectors_config,
        storage_size_mb: (status.index_size as f64 / 1_048_576.0 * 10.0).round() / 10.0,
        status: match (status.exists, status.healthy) {
            (false, _) => "missing",
            (true, true) => "healthy",
            (true, false) => "unhealthy",
        }
        .to_string(),
        problems: status.problems,
    })
}

fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `repo_search` (and `code_search`): the hybrid search with seed 000's filters and shape.
pub fn repo_search(
    ws: &IndexedWorkspace,
    request: &RepoSearchRequest,
) -> Result<RepoSearchResponse, ContextError> {
    search(ws, request, Preset::None)
}

/// Files a preset search keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Preset {
    None,
    /// Test files only (`search_tests_for`).
    Tests,
    /// Configuration files only (`search_config_for`).
    Config,
}

/// The extensions of configuration files (`search_config_for`).
const CONFIG_EXTENSIONS: [&str; 12] = [
    "yaml",
    "yml",
    "json",
    "jsonc",
    "toml",
    "ini",
    "cfg",
    "conf",
    "properties",
    "env",
    "xml",
    "hcl",
];

fn default_preset_limit() -> usize {
    10
}

/// Input of `search_tests_for` and `search_config_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetSearchRequest {
    /// What to look for; a list of queries is fused.
    pub query: OneOrMany,
    /// Results at most (1–100). Default 10.
    #[serde(default = "default_preset_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: usize,
    /// Include each result's code. Default true.
    #[serde(default = "default_true")]
    pub include_snippet: bool,
    /// Only files in this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl PresetSearchRequest {
    fn as_repo_search(&self) -> RepoSearchRequest {
        RepoSearchRequest {
            query: self.query.clone(),
            limit: self.limit,
            per_path: default_per_path(),
            repo: None,
            language: self.language.clone(),
            path_glob: None,
            under: None,
            not_glob: None,
            symbol: None,
            kind: None,
            ext: None,
            include_snippet: self.include_snippet,
            context_lines: default_context_lines(),
            highlight_snippet: true,
            rerank_enabled: None,
            rerank_top_n: default_rerank_top_n(),
            rerank_return_m: default_rerank_return_m(),
        }
    }
}

/// `search_tests_for`: `repo_search` over test files only.
pub fn search_tests_for(
    ws: &IndexedWorkspace,
    request: &PresetSearchRequest,
) -> Result<RepoSearchResponse, ContextError> {
    search(ws, &request.as_repo_search(), Preset::Tests)
}

/// `search_config_for`: `repo_search` over configuration files only (YAML, JSON, TOML, INI, …).
pub fn search_config_for(
    ws: &IndexedWorkspace,
    request: &PresetSearchRequest,
) -> Result<RepoSearchResponse, ContextError> {
    search(ws, &request.as_repo_search(), Preset::Config)
}

fn search(
    ws: &IndexedWorkspace,
    request: &RepoSearchRequest,
    preset: Preset,
) -> Result<RepoSearchResponse, ContextError> {
    let started = Instant::now();
    let queries = request.query.to_vec();
    if queries.is_empty() {
        return Err(invalid("query", "give a query or a non-empty list of them"));
    }
    for query in &queries {
        require_text("query", query)?;
    }
    check_repo(ws, request.repo.as_ref())?;
    in_range("limit", request.limit, 1, 100)?;
    in_range("per_path", request.per_path, 1, 20)?;
    in_range("context_lines", request.context_lines, 0, 20)?;
    let kinds = kinds(request.kind.as_deref())?;
    let symbol = request
        .symbol
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_lowercase);
    let under = match request.under.as_deref().map(str::trim) {
        Some(under) if !under.is_empty() && under != "." => scope(ws, "under", under)?,
        _ => None,
    };
    let mut extensions = request
        .ext
        .as_ref()
        .map(OneOrMany::to_vec)
        .unwrap_or_default();
    if preset == Preset::Config {
        extensions = CONFIG_EXTENSIONS.iter().map(|e| e.to_string()).collect();
    }
    let filter = Filter {
        extensions,
        include: globs("path_glob", request.path_glob.as_ref())?,
        exclude: globs("not_glob", request.not_glob.as_ref())?,
        tests: if preset == Preset::Tests {
            Tests::Only
        } else {
            Tests::Include
        },
        languages: parse_language("language", request.language.as_deref())?,
        under,
    };
    // `kind` and `symbol` filter found chunks: those searches draw from the deepest pool.
    let fetch = if kinds.is_some() || symbol.is_some() {
        MAX_TOP_K
    } else {
        request.limit
    };
    let mut found: Vec<Found> = Vec::new();
    let mut at: HashMap<(String, usize, usize), usize> = HashMap::new();
    let mut warnings = Vec::new();
    for text in &queries {
        let mut query = SearchQuery::new(text, fetch);
        query.filter = filter.clone();
        query.chunks_per_file = request.per_path;
        query.explain = true;
        let (outcome, _) = searched(ws, &query, tollgate_index::search)?;
        warnings.extend(outcome.warnings);
        let best = outcome
            .hits
            .first()
            .map_or(1.0, |h| h.score)
            .max(f32::MIN_POSITIVE);
        for hit in outcome.hits {
            if let Some(kinds) = &kinds
                && !kinds.contains(&hit.kind.as_str())
            {
                continue;
            }
            if let Some(symbol) = &symbol
                && !hit
                    .symbol
                    .as_deref()
                    .is_some_and(|s| s.to_lowercase().contains(symbol.as_str()))
            {
                continue;
            }
            let arm = |name: &str| {
                hit.explain.as_ref().and_then(|e| {
                    e.evidence
                        .iter()
                        .find(|a| a.arm == name)
                        .map(|a| round(f64::from(a.score)))
                })
            };
            let (dense, lexical) = (arm("vector"), arm("lexical"));
            let fused = f64::from(hit.score / best);
            let relevance = f64::from(hit.relevance);
            let key = (hit.path.clone(), hit.start_line, hit.end_line);
            match at.get(&key) {
                Some(&i) => {
                    let entry = &mut found[i];
                    entry.fused += fused;
                    entry.relevance = entry.relevance.max(relevance);
                    entry.dense = larger(entry.dense, dense);
                    entry.lexical = larger(entry.lexical, lexical);
                }
                None => {
                    at.insert(key, found.len());
                    found.push(Found {
                        hit,
                        fused,
                        relevance,
                        dense,
                        lexical,
                    });
                }
            }
        }
    }
    found.sort_by(|a, b| b.fused.total_cmp(&a.fused));
    let words = query_words(&queries);
    let mut per_file: HashMap<String, usize> = HashMap::new();
    let mut results = Vec::new();
    for entry in found {
        let count = per_file.entry(entry.hit.path.clone()).or_default();
        if *count >= request.per_path {
            continue;
        }
        *count += 1;
        let hit = entry.hit;
        let chunk = read_lines(ws, &hit.path, hit.start_line, hit.end_line);
        let tokens = chunk.iter().map(|l| l.len() + 1).sum::<usize>().div_ceil(4);
        let context = request.context_lines;
        let (snippet, highlighted) = if request.include_snippet {
            let first = hit.start_line.saturating_sub(context).max(1);
            let lines = read_lines(ws, &hit.path, first, hit.end_line + context);
            let highlighted = if request.highlight_snippet {
                highlights(&lines, &words)
            } else {
                Vec::new()
            };
            (Some(lines.join("\n")), highlighted)
        } else {
            (None, Vec::new())
        };
        results.push(RepoHit {
            score: round(entry.relevance),
            path: hit.path,
            symbol: hit.symbol,
            start_line: hit.start_line,
            end_line: hit.end_line,
            snippet,
            highlights: highlighted,
            components: Components {
                dense_score: entry.dense,
                lexical_score: entry.lexical,
                reranker_score: None,
                final_score: round(entry.fused / queries.len() as f64),
            },
            metadata: HitMetadata {
                language: hit.language,
                kind: hit.kind,
                tokens,
            },
        });
        if results.len() == request.limit {
            break;
        }
    }
    warnings.sort();
    warnings.dedup();
    Ok(RepoSearchResponse {
        ok: true,
        total: results.len(),
        results,
        used_rerank: false,
        search_time_ms: started.elapsed().as_millis() as u64,
        query: request.query.clone(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_mark_the_query_words_in_the_lines_holding_them() {
        let words = query_words(&["session cookie".to_string()]);
        let lines = vec![
            "fn set_session_cookie(c: &Cookie) {".to_string(),
            "    let x = 1;".to_string(),
        ];
        assert_eq!(
            highlights(&lines, &words),
            vec!["fn set_<<session>>_<<cookie>>(c: &<<Cookie>>) {"]
        );
        assert!(highlights(&lines[1..], &words).is_empty());
    }

    #[test]
    fn expand_query_spells_words_as_identifiers_and_identifiers_as_words() {
        let expand = |query: &str, max_new: usize| {
            expand_query(&ExpandQueryRequest {
                query: OneOrMany::One(query.to_string()),
                max_new,
            })
            .unwrap()
        };
        let expanded = expand("session cookie", 2);
        assert_eq!(expanded.alternates, ["session_cookie sessionCookie"]);
        assert_eq!(expanded.total_queries, 2);
        assert_eq!(expanded.decoder_used, "fallback");
        assert_eq!(
            expand("parseConfig", 2).alternates,
            ["parse_config parseConfig", "parse config"]
        );
        assert!(expand("parseConfig", 0).alternates.is_empty());
        assert!(expand("cookie", 2).alternates.is_empty());
    }

    #[test]
    fn the_seeds_kinds_map_to_chunk_kinds_and_comment_is_refused() {
        assert_eq!(
            kinds(Some("function")).unwrap(),
            Some(vec!["function", "method"])
        );
        assert_eq!(kinds(Some("import")).unwrap(), Some(vec!["imports"]));
        assert_eq!(kinds(None).unwrap(), None);
        assert_eq!(kinds(Some("comment")).unwrap_err().field(), Some("kind"));
        assert_eq!(kinds(Some("gadget")).unwrap_err().field(), Some("kind"));
    }
}
