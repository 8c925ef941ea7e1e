//! Seed 004's HTTP tool API over both knowledge sources: `search` (keyword | semantic | hybrid)
//! across the code index and the knowledge store, `get` of either kind of id, and `sources`
//! (the code index, and each memory thread, with counts).
//!
//! Sources are named `code` and `memory:<thread>`; the `source` filter takes either, or
//! `memory` for every thread. Ids say their kind: `code:<path>:<start>-<end>` and
//! `memory:<id>`. With both sources, their lists are merged by reciprocal rank fusion (their
//! scores are on different scales), and `score` is the fused score.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ApiError;
use crate::api::context::request::{CodebaseRetrievalRequest, GetFileRequest, RetrievalOptions};
use crate::api::context::{self, ContextError};
use crate::memory::{Filter, FtsMode, FtsQuery, Memory, Page, Scored, SearchArm, format_ms, rrf};
use crate::workspace::IndexedWorkspace;

/// Results when the caller gives no limit.
pub const DEFAULT_LIMIT: u32 = 10;
/// The source name of the code index.
pub const CODE_SOURCE: &str = "code";
const MEMORY_PREFIX: &str = "memory";

impl From<ContextError> for ApiError {
    fn from(err: ContextError) -> ApiError {
        let field = err.field();
        let error = ApiError::new(err.code(), err.to_string());
        match field {
            Some(field) => error.at(field),
            None => error,
        }
    }
}

/// `POST /tools/search`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsSearchRequest {
    pub query: String,
    /// keyword (default), semantic or hybrid.
    #[serde(default)]
    pub mode: Option<String>,
    /// Default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// code, memory, or memory:<thread>; default all.
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsSearchHit {
    pub id: String,
    pub source: String,
    pub source_id: String,
    pub title: String,
    pub score: f64,
    pub snippet: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsSearchResponse {
    pub results: Vec<ToolsSearchHit>,
}

/// `POST /tools/get`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsGetRequest {
    pub id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsDocument {
    pub id: String,
    pub source: String,
    pub source_id: String,
    pub title: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceCount {
    pub source: String,
    pub document_count: u64,
    pub chunk_count: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolsSourcesResponse {
    pub sources: Vec<SourceCount>,
}

/// Which sources a search covers.
enum Scope {
    All,
    Code,
    Memory(Option<String>),
}

/// `POST /tools/search`.
pub fn tools_search(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    request: &ToolsSearchRequest,
) -> Result<ToolsSearchResponse, ApiError> {
    let query = request.query.trim();
    if query.is_empty() {
        return Err(ApiError::invalid("query", "must not be empty"));
    }
    let mode = request.mode.as_deref().unwrap_or("keyword");
    let arms = match mode {
        "keyword" => vec![SearchArm::Fts],
        "semantic" => vec![SearchArm::Semantic],
        "hybrid" => vec![SearchArm::Fts, SearchArm::Semantic],
        other => {
            return Err(ApiError::invalid(
                "mode",
                format!("`{other}` is not a mode: keyword, semantic or hybrid"),
            ));
        }
    };
    let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("limit must be between 1 and 100, got {limit}"),
        ));
    }
    let scope = match request.source.as_deref() {
        None => Scope::All,
        Some(CODE_SOURCE) => Scope::Code,
        Some(MEMORY_PREFIX) => Scope::Memory(None),
        Some(other) => match other.strip_prefix("memory:") {
            Some(thread) if !thread.is_empty() => Scope::Memory(Some(thread.to_string())),
            _ => {
                return Err(ApiError::invalid(
                    "source",
                    format!(
                        "`{other}` is not a source: code, memory or memory:<thread> (GET /tools/sources lists them)"
                    ),
                ));
            }
        },
    };
    let page = Page {
        limit: limit as usize,
        offset: 0,
    };
    let memory_hits = match &scope {
        Scope::Code => Vec::new(),
        Scope::All | Scope::Memory(_) => {
            let filter = Filter {
                thread_id: match &scope {
                    Scope::Memory(thread) => thread.clone(),
                    _ => None,
                },
                ..Filter::default()
            };
            let fts = FtsQuery::build("query", query, FtsMode::Match)?;
            memory
                .hybrid(
                    fts.as_ref(),
                    query,
                    &arms,
                    super::memory::DEFAULT_RRF_K,
                    &filter,
                    page,
                    false,
                )?
                .hits
                .into_iter()
                .map(|hit| memory_hit(hit, mode))
                .collect()
        }
    };
    let code_hits = match scope {
        Scope::Memory(_) => Vec::new(),
        Scope::All | Scope::Code => code_search(workspace, query, limit as usize)?,
    };
    let results = if memory_hits.is_empty() {
        code_hits
    } else if code_hits.is_empty() {
        memory_hits
    } else {
        merge(code_hits, memory_hits, limit as usize)
    };
    Ok(ToolsSearchResponse { results })
}

/// `POST /tools/get`: a memory entry or a code chunk by the id a search gave.
pub fn tools_get(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    request: &ToolsGetRequest,
) -> Result<ToolsDocument, ApiError> {
    if let Some(id) = request.id.strip_prefix("memory:") {
        let id: i64 = id
            .parse()
            .map_err(|_| ApiError::invalid("id", format!("`{}` is not a memory id", request.id)))?;
        let entry = memory
            .get("id", &[id], false)?
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::invalid("id", "no such entry"))?;
        return Ok(ToolsDocument {
            id: request.id.clone(),
            source: format!("{MEMORY_PREFIX}:{}", entry.thread_id),
            source_id: entry.id.to_string(),
            title: title_of(&entry.text),
            body: entry.text,
            updated_at: Some(format_ms(entry.updated_ms)),
        });
    }
    let bad = || {
        ApiError::invalid(
            "id",
            format!(
                "`{}` is not an id from /tools/search (memory:<id> or code:<path>:<start>-<end>)",
                request.id
            ),
        )
    };
    let rest = request.id.strip_prefix("code:").ok_or_else(bad)?;
    let (path, range) = rest.rsplit_once(':').ok_or_else(bad)?;
    let (start, end) = range.split_once('-').ok_or_else(bad)?;
    let (start, end): (usize, usize) = (
        start.parse().map_err(|_| bad())?,
        end.parse().map_err(|_| bad())?,
    );
    if start == 0 || end < start {
        return Err(bad());
    }
    let file = context::get_file(
        workspace,
        &GetFileRequest {
            path: path.to_string(),
            include_metadata: false,
        },
    )?;
    let body: Vec<&str> = file
        .content
        .lines()
        .skip(start - 1)
        .take(end - start + 1)
        .collect();
    Ok(ToolsDocument {
        id: request.id.clone(),
        source: CODE_SOURCE.to_string(),
        source_id: path.to_string(),
        title: format!("{path}:{start}-{end}"),
        body: crate::secrets::scrub(&body.join("\n"), 0, 0).text,
        updated_at: None,
    })
}

/// `GET /tools/sources`.
pub fn tools_sources(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
) -> Result<ToolsSourcesResponse, ApiError> {
    let status = context::index_status(workspace)?;
    let mut sources = vec![SourceCount {
        source: CODE_SOURCE.to_string(),
        document_count: status.files as u64,
        chunk_count: status.chunks as u64,
    }];
    for thread in memory.threads()? {
        sources.push(SourceCount {
            source: format!("{MEMORY_PREFIX}:{}", thread.thread_id),
            document_count: thread.entry_count,
            chunk_count: thread.entry_count,
        });
    }
    Ok(ToolsSourcesResponse { sources })
}

fn code_search(
    workspace: &IndexedWorkspace,
    query: &str,
    limit: usize,
) -> Result<Vec<ToolsSearchHit>, ApiError> {
    let response = context::codebase_retrieval(
        workspace,
        &CodebaseRetrievalRequest {
            query: query.to_string(),
            options: RetrievalOptions {
                top_k: Some(limit.min(50)),
                include_tests: true,
                ..RetrievalOptions::default()
            },
        },
    )?;
    Ok(response
        .results
        .into_iter()
        .map(|hit| ToolsSearchHit {
            id: format!("code:{}:{}-{}", hit.path, hit.start_line, hit.end_line),
            source: CODE_SOURCE.to_string(),
            title: match &hit.symbol {
                Some(symbol) => format!("{} ({symbol})", hit.path),
                None => format!("{}:{}", hit.path, hit.start_line),
            },
            source_id: hit.path,
            score: hit.relevance,
            snippet: hit.snippet.lines().take(8).collect::<Vec<_>>().join("\n"),
        })
        .collect())
}

fn memory_hit(hit: Scored, mode: &str) -> ToolsSearchHit {
    let score = match mode {
        "keyword" => hit.scores.fts_score,
        "semantic" => hit.scores.semantic_distance.map(|d| 1.0 - d / 2.0),
        _ => hit.scores.rrf,
    };
    let entry = hit.entry;
    ToolsSearchHit {
        id: format!("{MEMORY_PREFIX}:{}", entry.id),
        source: format!("{MEMORY_PREFIX}:{}", entry.thread_id),
        source_id: entry.id.to_string(),
        title: title_of(&entry.text),
        score: score.unwrap_or_default(),
        snippet: entry.text.chars().take(240).collect(),
    }
}

/// The first line, cut to 80 characters.
fn title_of(text: &str) -> String {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .chars()
        .take(80)
        .collect()
}

/// Both lists fused by rank; `score` becomes the fused score.
fn merge(
    code: Vec<ToolsSearchHit>,
    memory: Vec<ToolsSearchHit>,
    limit: usize,
) -> Vec<ToolsSearchHit> {
    // Positions stand in for ids: code first, then memory, so both fit one id space.
    let code_ids: Vec<i64> = (0..code.len() as i64).collect();
    let memory_ids: Vec<i64> = (code.len() as i64..(code.len() + memory.len()) as i64).collect();
    let mut all: Vec<Option<ToolsSearchHit>> = code.into_iter().chain(memory).map(Some).collect();
    rrf(&[&code_ids, &memory_ids], super::memory::DEFAULT_RRF_K)
        .into_iter()
        .take(limit)
        .filter_map(|(idx, score)| {
            let mut hit = all.get_mut(usize::try_from(idx).ok()?)?.take()?;
            hit.score = score;
            Some(hit)
        })
        .collect()
}
