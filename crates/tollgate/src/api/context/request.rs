//! Requests and results of the context operations, with upstream's field names and defaults.
//! Relevance scores are normalised to 0–1 (the best result of a search is 1): raw fusion
//! scores are tiny rank-based numbers that mean little on their own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_top_k() -> usize {
    10
}
fn default_true() -> bool {
    true
}
fn default_max_files() -> usize {
    5
}
fn default_token_budget() -> usize {
    8000
}
fn default_min_relevance() -> f64 {
    0.3
}
fn default_max_commits() -> usize {
    10
}
fn default_limit() -> usize {
    50
}
fn default_symbol_limit() -> usize {
    20
}

/// `fast` (default) or `deep` (each channel over-fetches more and more commits are fused).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    #[default]
    Fast,
    Deep,
}

/// Input of `semantic_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SemanticSearchRequest {
    /// What to look for: natural language, identifiers, or both.
    pub query: String,
    /// Number of results (1–50).
    #[serde(default = "default_top_k")]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: usize,
    /// How hard to search: `fast`, or `deep` (over-fetches every channel and fuses more).
    #[serde(default)]
    pub mode: SearchMode,
    /// Accepted for upstream compatibility; Tollgate keeps no result cache.
    #[serde(default)]
    pub bypass_cache: bool,
    /// Accepted for upstream compatibility; the server's per-call limit applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// Options of `codebase_retrieval`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrievalOptions {
    /// Number of results (1–100, default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub top_k: Option<usize>,
    /// Only files with these extensions (`.ts`, `rs`).
    #[serde(default)]
    pub file_types: Vec<String>,
    /// Path prefixes or globs to leave out (`vendor/`, `**/*.gen.go`).
    #[serde(default)]
    pub exclude_paths: Vec<String>,
    /// Include test files (default false: they are left out).
    #[serde(default)]
    pub include_tests: bool,
    /// Only files in this language (`rust`, `typescript`, `python`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Only files under this subdirectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// Attach to each result why it ranks where it does (channel ranks and scores, boosts).
    #[serde(default)]
    pub explain: bool,
}

/// Input of `codebase_retrieval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodebaseRetrievalRequest {
    /// What to look for, in natural language or identifiers.
    pub query: String,
    /// Filters and limits (file types, exclude paths, include tests, top_k).
    #[serde(default)]
    pub options: RetrievalOptions,
}

/// One search result: a chunk of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// Relative to the workspace root.
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// `function`, `method`, `class`, …, `section`, `gap` (code between definitions), `imports`
    /// (a header of imports only), `window`.
    pub kind: String,
    pub language: String,
    /// 0–1: the IDF-weighted share of the query's words the chunk holds (absolute: a query
    /// nothing answers scores low, whatever ranks first).
    pub relevance: f64,
    /// The channels that found the file: `lexical`, `vector`, `history`.
    pub channels: Vec<String>,
    /// The chunk's current text (secrets masked), cut at 40 lines.
    pub snippet: String,
    /// Why it ranks here, when asked (`explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<RankExplanation>,
}

/// The evidence behind a result's rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankExplanation {
    /// `identifier`, `qualified`, `path` or `natural-language`: decides the channels' weights.
    pub query_class: String,
    /// `code`, `test`, `docs`, `changelog`, `generated` or `vendored`.
    pub file_class: String,
    /// Each arm that found the chunk (history: its file).
    pub evidence: Vec<ArmScore>,
    /// Factors applied, to the chunk's score (`definition`, `test module`) or the file's (its
    /// file class).
    pub boosts: Vec<Boost>,
    pub chunk_score: f64,
    pub file_score: f64,
}

/// One arm's part in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArmScore {
    /// `lexical`, `vector` or `history`.
    pub arm: String,
    /// 1-based rank within the arm.
    pub rank: usize,
    /// The arm's own score (BM25, cosine similarity, commit match).
    pub score: f64,
    /// What it added to the score: scaled to 0–1 within the arm, times the channel's weight.
    pub weighted: f64,
}

/// A factor on a score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Boost {
    pub name: String,
    pub factor: f64,
    /// `chunk` or `file`.
    pub on: String,
}

/// Result of `semantic_search`, `codebase_retrieval` and `search_tests_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResponse {
    pub query: String,
    pub results: Vec<SearchResult>,
    /// The same results as Markdown, for agents that want text (left out where the results
    /// are printed as JSON for people and scripts: `tollgate search --json`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub markdown: String,
    /// Channels that took part.
    pub channels: Vec<String>,
    /// The index was built by this call (there was none).
    pub index_built: bool,
    pub warnings: Vec<String>,
}

/// Input of `get_context_for_prompt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetContextRequest {
    /// The task or question the context is for.
    pub query: String,
    /// Files to include (1–20).
    #[serde(default = "default_max_files")]
    #[schemars(range(min = 1, max = 20))]
    pub max_files: usize,
    /// Approximate tokens (4 characters each) the bundle may use (100–200000).
    #[serde(default = "default_token_budget")]
    #[schemars(range(min = 100, max = 200_000))]
    pub token_budget: usize,
    /// Also list files the top results import or are imported by.
    #[serde(default = "default_true")]
    pub include_related: bool,
    /// Leave out files whose relevance (0–1, relative to the best) is below this.
    #[serde(default = "default_min_relevance")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_relevance: f64,
    /// Accepted for compatibility with upstream; results are always computed fresh from the index.
    #[serde(default)]
    pub bypass_cache: bool,
}

/// A file in a context bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextFile {
    pub path: String,
    pub relevance: f64,
    /// The spans included, as `[start_line, end_line]`.
    pub spans: Vec<[usize; 2]>,
}

/// Result of `get_context_for_prompt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextBundle {
    pub query: String,
    /// The bundle: per file its best spans with line numbers, then related files.
    pub markdown: String,
    pub files: Vec<ContextFile>,
    pub related_files: Vec<String>,
    /// Estimated tokens used (characters / 4).
    pub tokens_used: usize,
    pub truncated: bool,
    pub index_built: bool,
    pub warnings: Vec<String>,
}

/// Input of `get_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetFileRequest {
    /// Relative to the workspace root, or absolute inside it; must stay inside it (symlinks
    /// resolved).
    pub path: String,
    /// Include the modification time and git status.
    #[serde(default = "default_true")]
    pub include_metadata: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileMetadata {
    /// RFC 3339.
    pub last_modified: String,
    /// `clean`, `modified`, `staged`, `untracked`, `ignored`, …; absent outside a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_status: Option<String>,
}

/// Result of `get_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileContent {
    pub path: String,
    /// The text with secrets masked (invalid UTF-8 replaced).
    pub content: String,
    /// Size on disk in bytes.
    pub size: u64,
    pub lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<FileMetadata>,
    /// Secrets masked in `content`.
    pub secrets_masked: usize,
}

/// Input of `git_commit_retrieval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCommitRetrievalRequest {
    /// What the commits should be about.
    pub query: String,
    /// Commits to return (1–100).
    #[serde(default = "default_max_commits")]
    #[schemars(range(min = 1, max = 100))]
    pub max_commits: usize,
    /// An ISO date (`2024-05-01`, RFC 3339) or a relative one (`2 weeks ago`, `yesterday`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Case-insensitive part of the author's name or email.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitInfo {
    pub sha: String,
    pub message: String,
    pub author: String,
    /// RFC 3339.
    pub date: String,
    pub files_changed: Vec<String>,
    /// 0–1, relative to the best match.
    pub relevance_score: f64,
}

/// Result of `git_commit_retrieval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitResponse {
    pub commits: Vec<CommitInfo>,
    pub total_found: usize,
    pub index_built: bool,
}

/// Input of `regex_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegexSearchRequest {
    /// A Rust regex (ripgrep syntax).
    pub pattern: String,
    /// Only paths matching this glob (`src/**/*.ts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
    /// Match without regard to case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Lines of context before and after each match (0–10).
    #[serde(default)]
    #[schemars(range(max = 10))]
    pub context_lines: usize,
    /// Matches to skip (paging).
    #[serde(default)]
    pub offset: usize,
    /// Matches to return (1–500).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegexMatch {
    pub path: String,
    pub line: usize,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// Result of `regex_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegexSearchResponse {
    pub matches: Vec<RegexMatch>,
    /// Matches counted (up to 10,000).
    pub total: usize,
    /// More matches exist past this page.
    pub truncated: bool,
    pub files_searched: usize,
}

/// What `symbol_graph` asks about a symbol.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SymbolQueryType {
    /// Where it is defined.
    #[default]
    Definition,
    /// Where it is used (call sites and other references).
    Callers,
    /// Which files import it (a module or an imported name).
    Importers,
}

/// Input of `symbol_graph`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolGraphRequest {
    /// A name (`parse_config`), optionally qualified (`Parser::parse`, `Parser.parse`).
    pub symbol: String,
    /// What to find: `definition`, `callers` or `importers`.
    #[serde(default)]
    pub query_type: SymbolQueryType,
    /// Only symbols in this language (rust, typescript, python, go, java, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Only under this subdirectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// Results to return (1–200).
    #[serde(default = "default_symbol_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolLocation {
    pub path: String,
    pub line: usize,
    /// The definition's kind, the enclosing symbol of a use, or the import as written.
    pub detail: String,
    /// The source line.
    pub text: String,
}

/// Result of `symbol_graph` and `search_callers_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SymbolGraphResponse {
    pub symbol: String,
    pub query_type: SymbolQueryType,
    pub results: Vec<SymbolLocation>,
    /// `outline` (extracted symbols and imports), `references` (word-boundary matches) or
    /// `search` (no outline answer: hybrid search fallback).
    pub source: String,
    pub index_built: bool,
}

/// Input of `search_tests_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTestsRequest {
    /// A symbol, a file or a behaviour to find tests for.
    pub query: String,
    /// How many results (1–50).
    #[serde(default = "default_top_k")]
    #[schemars(range(min = 1, max = 50))]
    pub top_k: usize,
}

/// Input of `search_callers_for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCallersRequest {
    /// The symbol whose callers to find.
    pub symbol: String,
    /// Only callers in this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// At most this many callers (1–200).
    #[serde(default = "default_symbol_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: usize,
}

/// Input of `index_workspace`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexWorkspaceRequest {
    /// Only (re)index this subdirectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Result of `index_workspace`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexReport {
    pub files_total: usize,
    pub files_changed: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    pub files_skipped: usize,
    /// Files read because they are new or their size or mtime moved (none when nothing did).
    #[serde(default)]
    pub files_read: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub commits_added: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuilt: Option<String>,
    pub elapsed_ms: u64,
}

/// Result of `index_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStatusResponse {
    pub exists: bool,
    pub healthy: bool,
    pub files: usize,
    pub chunks: usize,
    pub vectors: usize,
    pub commits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_indexed: Option<String>,
    /// Bytes on disk.
    pub index_size: u64,
    pub source_size: u64,
    pub languages: std::collections::BTreeMap<String, usize>,
    /// An HNSW graph serves the vector channel (else exact search).
    pub hnsw_graph: bool,
    pub updating: bool,
    pub problems: Vec<String>,
    /// Where the index lives.
    pub index_dir: String,
}
