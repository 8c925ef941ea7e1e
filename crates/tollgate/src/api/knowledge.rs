//! Seed 004's HTTP tool API over both knowledge sources: `search` (keyword | semantic | hybrid)
//! across the code index and the knowledge store, `get` of either kind of id, and `sources`
//! (the code index, and each memory thread, with counts).
//!
//! Sources are named `code`, `memory:<thread>`, and `dir:<name>`, `git:<name>` or
//! `script:<name>` for a synced `[sources.<name>]` (its thread in the store); the `source`
//! filter takes any of them, or `memory` for every thread. Ids say their kind: `code:<path>:<start>-<end>` and
//! `memory:<id>`. With both sources, their lists are blended by one calibrated score, the share of
//! the query's words a result holds (each source's own scores are on different scales), and
//! `score` is that share. The `mode` applies to both
//! sources: the store's full-text and semantic arms, the index's lexical and vector channels.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use tollgate_index::Channel;

use super::ApiError;
use crate::api::context::request::GetFileRequest;
use crate::api::context::{self, ContextError};
use crate::config::SourcesConfig;
use crate::memory::{Entry, Filter, FtsMode, FtsQuery, Memory, Page, Scored, SearchArm, format_ms};
use crate::sources;
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
    /// code, memory, memory:<thread>, or a synced source (dir:<name>, git:<name>,
    /// script:<name>); default all.
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
    /// A synced document's url.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
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
    pub source_url: Option<String>,
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
        Some(synced) if sources::is_source_thread(synced) => {
            Scope::Memory(Some(synced.to_string()))
        }
        Some(other) => match other.strip_prefix("memory:") {
            Some(thread) if !thread.is_empty() => Scope::Memory(Some(thread.to_string())),
            _ => {
                return Err(ApiError::invalid(
                    "source",
                    format!(
                        "`{other}` is not a source: code, memory, memory:<thread>, dir:<name>, git:<name> or script:<name> (GET /tools/sources lists them)"
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
                .map(|hit| {
                    let share = word_share(query, &hit.entry.text);
                    (memory_hit(hit, mode), share)
                })
                .collect()
        }
    };
    let code_hits = match scope {
        Scope::Memory(_) => Vec::new(),
        Scope::All | Scope::Code => code_search(workspace, query, limit as usize, &arms)?,
    };
    let results = if memory_hits.is_empty() {
        code_hits
    } else if code_hits.is_empty() {
        memory_hits.into_iter().map(|(hit, _)| hit).collect()
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
        let origin = origin_of(&entry);
        return Ok(ToolsDocument {
            id: request.id.clone(),
            source: origin.source,
            source_id: origin.source_id,
            title: origin.title,
            source_url: origin.url,
            updated_at: Some(
                origin
                    .updated_at
                    .unwrap_or_else(|| format_ms(entry.updated_ms)),
            ),
            body: entry.text,
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
        source_url: None,
        updated_at: None,
    })
}

/// `GET /tools/sources`: the code index, each configured `[sources.<name>]` (0 documents
/// before its first sync), then each other memory thread.
pub fn tools_sources(
    workspace: &IndexedWorkspace,
    memory: &Memory<'_>,
    configured: &SourcesConfig,
) -> Result<ToolsSourcesResponse, ApiError> {
    let status = context::index_status(workspace)?;
    let mut sources = vec![SourceCount {
        source: CODE_SOURCE.to_string(),
        document_count: status.files as u64,
        chunk_count: status.chunks as u64,
    }];
    let threads = memory.threads()?;
    let synced: Vec<String> = configured.sources.iter().map(|s| s.thread()).collect();
    for thread in &synced {
        let count = threads
            .iter()
            .find(|summary| &summary.thread_id == thread)
            .map_or(0, |summary| summary.entry_count);
        sources.push(SourceCount {
            source: thread.clone(),
            document_count: count,
            chunk_count: count,
        });
    }
    for thread in threads {
        if synced.contains(&thread.thread_id) {
            continue;
        }
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
    arms: &[SearchArm],
) -> Result<Vec<ToolsSearchHit>, ApiError> {
    // The mode picks the index's channels as it picks the store's arms: keyword is the lexical
    // (BM25) channel, semantic the vector channel, hybrid every channel fused.
    let channels = match arms {
        [SearchArm::Fts] => vec![Channel::Lexical],
        [SearchArm::Semantic] => vec![Channel::Vector],
        _ => Vec::new(),
    };
    let response = context::search_channels(workspace, query, limit.min(50), channels)?;
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
            source_url: None,
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
    let origin = origin_of(&entry);
    ToolsSearchHit {
        id: format!("{MEMORY_PREFIX}:{}", entry.id),
        source: origin.source,
        source_id: origin.source_id,
        title: origin.title,
        score: score.unwrap_or_default(),
        snippet: entry.text.chars().take(240).collect(),
        source_url: origin.url,
    }
}

/// Where an entry came from, as `/tools/search` and `/tools/get` name it.
struct Origin {
    source: String,
    source_id: String,
    title: String,
    url: Option<String>,
    updated_at: Option<String>,
}

/// A synced document is named by its source (`dir:docs`) and its own id, title and url; any
/// other entry by its thread (`memory:<thread>`) and entry id.
fn origin_of(entry: &Entry) -> Origin {
    let text = |key: &str| {
        entry
            .metadata
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    match text(sources::DOC_ID_KEY) {
        Some(doc_id) if sources::is_source_thread(&entry.thread_id) => Origin {
            source: entry.thread_id.clone(),
            source_id: doc_id,
            title: text(sources::TITLE_KEY).unwrap_or_else(|| title_of(&entry.text)),
            url: text(sources::URL_KEY),
            updated_at: text(sources::UPDATED_AT_KEY),
        },
        _ => Origin {
            source: format!("{MEMORY_PREFIX}:{}", entry.thread_id),
            source_id: entry.id.to_string(),
            title: title_of(&entry.text),
            url: None,
            updated_at: None,
        },
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

/// Both lists blended by one calibrated score, the share of the query's words a result holds
/// (the code index's `relevance`; for an entry, [`word_share`]), which becomes `score`. Ranks
/// alone would give each source's first hit the same place however weak it is; a source's own
/// score (BM25, a cosine) has no meaning in the other. Equal scores keep the sources' own orders,
/// interleaved.
fn merge(
    code: Vec<ToolsSearchHit>,
    memory: Vec<(ToolsSearchHit, f64)>,
    limit: usize,
) -> Vec<ToolsSearchHit> {
    let mut code = code.into_iter();
    let mut memory = memory.into_iter().map(|(mut hit, share)| {
        hit.score = share;
        hit
    });
    let mut blended = Vec::new();
    loop {
        let (a, b) = (code.next(), memory.next());
        if a.is_none() && b.is_none() {
            break;
        }
        blended.extend(a.into_iter().chain(b));
    }
    // A stable sort: ties stay interleaved by rank.
    blended.sort_by(|a, b| b.score.total_cmp(&a.score));
    blended.truncate(limit);
    blended
}

/// The share of the query's distinct words (the index's tokens: identifiers split, stop words
/// dropped) that `text` holds, in [0, 1]: an entry's score on the code index's `relevance` scale.
fn word_share(query: &str, text: &str) -> f64 {
    let mut wanted = tollgate_index::tokens(query);
    wanted.sort();
    wanted.dedup();
    if wanted.is_empty() {
        return 0.0;
    }
    let held: std::collections::HashSet<String> =
        tollgate_index::tokens(text).into_iter().collect();
    wanted.iter().filter(|word| held.contains(*word)).count() as f64 / wanted.len() as f64
}

#[cfg(test)]
mod tests {
    use tollgate_index::HashedEmbedder;

    use super::*;
    use crate::store::Store;

    #[test]
    fn the_mode_picks_the_code_indexs_channels_too() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        std::fs::write(
            dir.path().join("billing.rs"),
            "/// Sums an invoice.\npub fn invoice_total(lines: &[u64]) -> u64 {\n    lines.iter().sum()\n}\n",
        )
        .unwrap();
        let workspace = IndexedWorkspace::open(dir.path()).unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let search = |mode: &str, query: &str| {
            let request = ToolsSearchRequest {
                query: query.to_string(),
                mode: Some(mode.to_string()),
                limit: None,
                source: Some(CODE_SOURCE.to_string()),
            };
            tools_search(&workspace, &memory, &request).unwrap().results
        };
        assert_eq!(search("keyword", "invoice_total").len(), 1);
        assert_eq!(search("semantic", "invoice_total").len(), 1);
        // A misspelling no file holds: BM25 finds nothing, the vectors still find the function
        // by its shared sub-word pieces, and hybrid has both.
        let query = "invoise totals";
        assert!(search("keyword", query).is_empty());
        assert_eq!(search("semantic", query).len(), 1);
        assert_eq!(search("hybrid", query).len(), 1);
    }

    /// Issue 30: both sources blend by one calibrated score (the share of the query's words a
    /// result holds), not by rank, so a source's first hit is not placed high for being first.
    #[test]
    fn code_and_memory_blend_by_calibrated_scores_not_by_rank() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# Webapp\n\nA small web application. Each session starts at login.\n",
        )
        .unwrap();
        let workspace = IndexedWorkspace::open(dir.path()).unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let entry = |text: &str| {
            crate::memory::NewEntry::new(
                "notes",
                crate::memory::Source::User,
                text,
                serde_json::Map::new(),
                &[],
                Vec::new(),
            )
            .unwrap()
        };
        for outcome in memory
            .store_entries(
                &[
                    entry("Screenshot of the login failure"),
                    entry("The session cookie is signed and expires after one hour"),
                ],
                true,
            )
            .unwrap()
        {
            outcome.unwrap();
        }
        for mode in ["semantic", "hybrid", "keyword"] {
            let request = ToolsSearchRequest {
                query: "session cookie".to_string(),
                mode: Some(mode.to_string()),
                limit: None,
                source: None,
            };
            let results = tools_search(&workspace, &memory, &request).unwrap().results;
            let titles: Vec<&str> = results.iter().map(|hit| hit.title.as_str()).collect();
            assert!(
                titles[0].starts_with("The session cookie"),
                "{mode}: the entry about the query comes first: {titles:?}"
            );
            if let Some(unrelated) = titles.iter().position(|t| t.starts_with("Screenshot")) {
                let readme = titles.iter().position(|t| t.starts_with("README.md"));
                assert!(
                    readme.is_some_and(|readme| readme < unrelated),
                    "{mode}: a result holding a query word outranks one holding none: {titles:?}"
                );
            }
            for pair in results.windows(2) {
                assert!(
                    pair[0].score >= pair[1].score,
                    "{mode}: scores follow the rank"
                );
            }
        }
    }

    #[test]
    fn synced_sources_are_listed_once_and_searched_by_their_name() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(
            dir.path().join("docs/auth.md"),
            "# Authentication\n\nTokens rotate hourly.\n",
        )
        .unwrap();
        let workspace = IndexedWorkspace::open(dir.path()).unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let raw = crate::config::RawConfig::from_toml(
            "[sources.docs]\nkind = \"dir\"\npath = \"docs\"\n[sources.wiki]\nkind = \"dir\"\npath = \"wiki\"\n",
            "tollgate.toml",
        )
        .unwrap();
        let configured = crate::config::resolve_sources(&raw.sources).unwrap();
        let root = dir.path().canonicalize().unwrap();
        crate::sources::sync_source(
            crate::sources::SyncContext {
                root: &root,
                env: &[],
                run_script: None,
            },
            &configured.sources[0],
            &memory,
        )
        .unwrap();
        let listed: Vec<(String, u64)> = tools_sources(&workspace, &memory, &configured)
            .unwrap()
            .sources
            .into_iter()
            .map(|source| (source.source, source.document_count))
            .collect();
        // The synced thread is listed by its source name, not again as memory:dir:docs; a
        // source not synced yet has no documents.
        assert_eq!(
            listed[1..],
            [("dir:docs".to_string(), 1), ("dir:wiki".to_string(), 0)]
        );
        let search = |source: &str| {
            let request = ToolsSearchRequest {
                query: "tokens rotate".to_string(),
                mode: None,
                limit: None,
                source: Some(source.to_string()),
            };
            tools_search(&workspace, &memory, &request)
        };
        let hits = search("dir:docs").unwrap().results;
        assert_eq!(hits.len(), 1);
        assert_eq!(
            (
                hits[0].source.as_str(),
                hits[0].source_id.as_str(),
                hits[0].title.as_str()
            ),
            ("dir:docs", "docs/auth.md", "Authentication")
        );
        assert!(search("dir:wiki").unwrap().results.is_empty());
        assert_eq!(search("memory").unwrap().results.len(), 1);
        let err = search("web:docs").unwrap_err();
        assert!(err.message.contains("dir:<name>"), "{}", err.message);
    }
}
