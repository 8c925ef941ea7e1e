//! The operations: each validates its request, calls the index once or twice and shapes the
//! answer (relevance normalised, snippets read from the working tree with secrets masked).

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::time::Instant;

use time::format_description::well_known::Rfc3339;
use tollgate_index::grep::{GrepQuery, grep};
use tollgate_index::walk::Language;
use tollgate_index::{CommitFilter, Filter, Hit, Mode, SearchQuery, Tests, symbols};

use super::ContextError;
use super::files::resolve;
use super::request::*;
use crate::control::Control;
use crate::secrets::scrub;
use crate::workspace::IndexedWorkspace;

const SNIPPET_LINES: usize = 40;

pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> ContextError {
    ContextError::InvalidInput {
        field,
        message: message.into(),
    }
}

pub(crate) fn require_text(field: &'static str, text: &str) -> Result<(), ContextError> {
    if text.trim().is_empty() {
        return Err(invalid(field, "must not be empty"));
    }
    if text.chars().count() > 10_000 {
        return Err(invalid(field, "longer than 10,000 characters"));
    }
    Ok(())
}

pub(crate) fn in_range(
    field: &'static str,
    value: usize,
    min: usize,
    max: usize,
) -> Result<(), ContextError> {
    if value < min || value > max {
        return Err(invalid(field, format!("{value} is outside {min}–{max}")));
    }
    Ok(())
}

/// Builds the index when the workspace has none; true when it did.
fn ensure_index(ws: &IndexedWorkspace) -> Result<bool, ContextError> {
    build_index_if_missing(ws, &mut index_progress(ws.control()))
}

/// Builds the index a search needs when there is none, reporting to `progress`; true when it
/// did. Only inside a git work tree: anywhere else the directory could be `/tmp` or a home,
/// and indexing it is for `tollgate index` to do deliberately.
pub fn build_index_if_missing(
    ws: &IndexedWorkspace,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> ControlFlow<()>,
) -> Result<bool, ContextError> {
    // Only whether an index is there: a full `status` would read every part of it per query.
    // One of an older format is rebuilt (the update does that).
    if tollgate_index::is_current(ws.index_config()) {
        return Ok(false);
    }
    let in_work_tree = git2::Repository::discover(ws.root())
        .ok()
        .is_some_and(|repo| repo.workdir().is_some());
    if !in_work_tree {
        return Err(tollgate_index::IndexError::NotAWorkTree(ws.root().to_path_buf()).into());
    }
    ws.prepare_index_dir().map_err(ContextError::unreadable)?;
    tollgate_index::update(ws.index_config(), None, ws.embedder(), progress)?;
    Ok(true)
}

/// Lines `[start, end]` of a workspace file, secrets masked; empty when it is gone.
pub(crate) fn read_lines(
    ws: &IndexedWorkspace,
    path: &str,
    start: usize,
    end: usize,
) -> Vec<String> {
    let Ok(resolved) = resolve(ws, path) else {
        return Vec::new();
    };
    let Ok(bytes) = std::fs::read(resolved) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let span: Vec<&str> = text
        .lines()
        .skip(start.saturating_sub(1))
        .take(end + 1 - start.max(1))
        .collect();
    scrub(&span.join("\n"), 0, 0)
        .text
        .lines()
        .map(str::to_string)
        .collect()
}

fn to_results(ws: &IndexedWorkspace, hits: Vec<Hit>) -> Vec<SearchResult> {
    hits.into_iter()
        .map(|hit| {
            let end = hit.end_line.min(hit.start_line + SNIPPET_LINES - 1);
            let snippet = read_lines(ws, &hit.path, hit.start_line, end).join("\n");
            SearchResult {
                relevance: round(f64::from(hit.relevance)),
                channels: hit
                    .channels
                    .iter()
                    .map(|c| c.as_str().to_string())
                    .collect(),
                path: hit.path,
                start_line: hit.start_line,
                end_line: hit.end_line,
                symbol: hit.symbol,
                kind: hit.kind,
                language: hit.language,
                snippet,
                explain: hit.explain.map(explanation),
            }
        })
        .collect()
}

fn explanation(explain: tollgate_index::Explain) -> RankExplanation {
    let boost = |on: &str| {
        let on = on.to_string();
        move |(name, factor): (&str, f32)| Boost {
            name: name.to_string(),
            factor: round(f64::from(factor)),
            on: on.clone(),
        }
    };
    RankExplanation {
        query_class: explain.query_class.as_str().to_string(),
        file_class: explain.file_class.as_str().to_string(),
        evidence: explain
            .evidence
            .into_iter()
            .map(|e| ArmScore {
                arm: e.arm.to_string(),
                rank: e.rank,
                score: round(f64::from(e.score)),
                weighted: round(f64::from(e.weighted)),
            })
            .collect(),
        boosts: explain
            .chunk_boosts
            .into_iter()
            .map(boost("chunk"))
            .chain(explain.file_boosts.into_iter().map(boost("file")))
            .collect(),
        chunk_score: round(f64::from(explain.chunk_score)),
        file_score: round(f64::from(explain.file_score)),
    }
}

pub(crate) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn fence_for(text: &str) -> String {
    let mut fence = "```".to_string();
    while text.contains(&fence) {
        fence.push('`');
    }
    fence
}

fn results_markdown(query: &str, results: &[SearchResult]) -> String {
    let mut out = format!("# Results for: {query}\n\n");
    if results.is_empty() {
        out.push_str("No matches.\n");
    }
    for (i, r) in results.iter().enumerate() {
        let symbol = r
            .symbol
            .as_ref()
            .map(|s| format!(" `{s}`"))
            .unwrap_or_default();
        out.push_str(&format!(
            "## {}. {}:{}-{}{} ({}, relevance {:.2})\n\n",
            i + 1,
            r.path,
            r.start_line,
            r.end_line,
            symbol,
            r.kind,
            r.relevance
        ));
        let fence = fence_for(&r.snippet);
        out.push_str(&format!(
            "{fence}{}\n{}\n{fence}\n\n",
            r.language, r.snippet
        ));
    }
    out
}

/// Files changed since the index was built that a search re-indexes before answering; more
/// only get a warning (re-indexing them could take longer than the search).
const MAX_REINDEXED_ON_SEARCH: usize = 5;

/// A search over the index, built first when there is none: `search` (the hybrid search, or
/// [`tollgate_index::nearest`]) answers; files found that changed since the index was built are
/// re-indexed and the search asked again (a few), or named in a warning (more). Returns the
/// outcome and whether the index was built by this call. Every search operation goes through
/// here, the seed dialects' too.
pub(crate) fn searched(
    ws: &IndexedWorkspace,
    query: &SearchQuery,
    search: SearchFn,
) -> Result<(tollgate_index::SearchOutcome, bool), ContextError> {
    let index_built = ensure_index(ws)?;
    let mut outcome = search(ws.index_config(), ws.embedder(), query)?;
    if !outcome.stale.is_empty() && outcome.stale.len() <= MAX_REINDEXED_ON_SEARCH {
        for path in &outcome.stale {
            tollgate_index::update(
                ws.index_config(),
                Some(path),
                ws.embedder(),
                &mut index_progress(ws.control()),
            )?;
        }
        outcome = search(ws.index_config(), ws.embedder(), query)?;
    }
    if !outcome.stale.is_empty() {
        outcome.warnings.push(format!(
            "{} of the files found changed since the index was built (line ranges may be off): {}; run `tollgate index` to refresh it",
            outcome.stale.len(),
            outcome.stale.join(", ")
        ));
    }
    Ok((outcome, index_built))
}

/// The index's search functions ([`tollgate_index::search`], [`tollgate_index::nearest`]).
pub(crate) type SearchFn = fn(
    &tollgate_index::IndexConfig,
    &dyn tollgate_index::Embedder,
    &SearchQuery,
) -> Result<tollgate_index::SearchOutcome, tollgate_index::IndexError>;

fn run_search(ws: &IndexedWorkspace, query: SearchQuery) -> Result<SearchResponse, ContextError> {
    let (outcome, index_built) = searched(ws, &query, tollgate_index::search)?;
    let results = to_results(ws, outcome.hits);
    Ok(SearchResponse {
        markdown: results_markdown(&query.text, &results),
        query: query.text,
        results,
        channels: outcome
            .channels
            .iter()
            .map(|c| c.as_str().to_string())
            .collect(),
        index_built,
        warnings: outcome.warnings,
    })
}

/// `semantic_search`: hybrid search of the codebase by meaning and identifiers.
pub fn semantic_search(
    ws: &IndexedWorkspace,
    request: &SemanticSearchRequest,
) -> Result<SearchResponse, ContextError> {
    require_text("query", &request.query)?;
    in_range("top_k", request.top_k, 1, 50)?;
    let mut query = SearchQuery::new(&request.query, request.top_k);
    query.mode = match request.mode {
        SearchMode::Fast => Mode::Fast,
        SearchMode::Deep => Mode::Deep,
    };
    query.chunks_per_file = 2;
    run_search(ws, query)
}

pub(crate) fn parse_language(
    field: &'static str,
    language: Option<&str>,
) -> Result<Vec<Language>, ContextError> {
    match language {
        None => Ok(Vec::new()),
        Some(name) => Language::parse(name).map(|l| vec![l]).ok_or_else(|| {
            invalid(field, format!("unknown language `{name}`: rust, typescript, tsx, javascript, python, go, java, c, cpp, csharp, ruby, php, kotlin, swift, markdown or text"))
        }),
    }
}

/// `codebase_retrieval`: search with filters (file types, excluded paths, tests, language,
/// subdirectory), applied before the results are cut.
pub fn codebase_retrieval(
    ws: &IndexedWorkspace,
    request: &CodebaseRetrievalRequest,
) -> Result<SearchResponse, ContextError> {
    require_text("query", &request.query)?;
    let options = &request.options;
    let top_k = options.top_k.unwrap_or(10);
    in_range("options.top_k", top_k, 1, 100)?;
    let mut query = SearchQuery::new(&request.query, top_k);
    query.filter = Filter {
        extensions: options.file_types.clone(),
        include: Vec::new(),
        exclude: options.exclude_paths.clone(),
        tests: if options.include_tests {
            Tests::Include
        } else {
            Tests::Exclude
        },
        languages: parse_language("options.language", options.language.as_deref())?,
        under: options.under.clone(),
    };
    query.chunks_per_file = 2;
    query.explain = options.explain;
    run_search(ws, query).map_err(|err| match err {
        ContextError::Index(tollgate_index::IndexError::InvalidInput(message)) => {
            invalid("options.exclude_paths", message)
        }
        other => other,
    })
}

/// The hybrid search over some of its channels only (empty: all), tests included: the code
/// side of `/tools/search`, whose `mode` picks the lexical channel, the vector channel or both.
pub fn search_channels(
    ws: &IndexedWorkspace,
    text: &str,
    top_k: usize,
    channels: Vec<tollgate_index::Channel>,
) -> Result<SearchResponse, ContextError> {
    require_text("query", text)?;
    in_range("top_k", top_k, 1, 100)?;
    let mut query = SearchQuery::new(text, top_k);
    query.filter.tests = Tests::Include;
    query.chunks_per_file = 2;
    query.channels = channels;
    run_search(ws, query)
}

/// `search_tests_for`: the hybrid search restricted to test files.
pub fn search_tests_for(
    ws: &IndexedWorkspace,
    request: &SearchTestsRequest,
) -> Result<SearchResponse, ContextError> {
    require_text("query", &request.query)?;
    in_range("top_k", request.top_k, 1, 50)?;
    let mut query = SearchQuery::new(&request.query, request.top_k);
    query.filter.tests = Tests::Only;
    query.chunks_per_file = 2;
    run_search(ws, query)
}

/// `get_context_for_prompt`: the most relevant files' best spans, packed into a token budget,
/// as Markdown with paths and line numbers; related files listed when asked.
pub fn get_context_for_prompt(
    ws: &IndexedWorkspace,
    request: &GetContextRequest,
) -> Result<ContextBundle, ContextError> {
    require_text("query", &request.query)?;
    in_range("max_files", request.max_files, 1, 20)?;
    in_range("token_budget", request.token_budget, 100, 200_000)?;
    if !(0.0..=1.0).contains(&request.min_relevance) {
        return Err(invalid("min_relevance", "must be within 0–1"));
    }
    let index_built = ensure_index(ws)?;
    let mut query = SearchQuery::new(&request.query, request.max_files * 3);
    query.chunks_per_file = 3;
    let outcome = tollgate_index::search(ws.index_config(), ws.embedder(), &query)?;
    let best = outcome
        .hits
        .first()
        .map_or(1.0, |h| h.score)
        .max(f32::MIN_POSITIVE);

    // Group by file (results come file by file, best file first): path, relevance, language and
    // the chunks' (start line, end line, symbol).
    type Span = (usize, usize, Option<String>);
    let mut files: Vec<(String, f64, String, Vec<Span>)> = Vec::new();
    for hit in outcome.hits {
        let relevance = round(f64::from(hit.score / best));
        if relevance < request.min_relevance {
            continue;
        }
        let count = files.len();
        match files.iter_mut().find(|f| f.0 == hit.path) {
            Some(file) => file.3.push((hit.start_line, hit.end_line, hit.symbol)),
            None if count < request.max_files => files.push((
                hit.path,
                relevance,
                hit.language,
                vec![(hit.start_line, hit.end_line, hit.symbol)],
            )),
            None => {}
        }
    }
    let budget_chars = request.token_budget * 4;
    let mut markdown = format!("# Context for: {}\n\n", request.query);
    let mut truncated = false;
    let mut out_files = Vec::new();
    'files: for (path, relevance, language, mut spans) in files {
        // Merge spans that touch or nearly touch (within 3 lines).
        spans.sort_by_key(|s| s.0);
        let mut merged: Vec<(usize, usize, Vec<String>)> = Vec::new();
        for (start, end, symbol) in spans {
            match merged.last_mut() {
                Some(last) if start <= last.1 + 3 => {
                    last.1 = last.1.max(end);
                    last.2.extend(symbol);
                }
                _ => merged.push((start, end, symbol.into_iter().collect())),
            }
        }
        let header = format!("## {path} (relevance {relevance:.2})\n\n");
        if markdown.len() + header.len() > budget_chars {
            truncated = true;
            break;
        }
        markdown.push_str(&header);
        let mut included = Vec::new();
        for (start, end, symbols) in merged {
            let lines = read_lines(ws, &path, start, end);
            if lines.is_empty() {
                continue;
            }
            let label = if symbols.is_empty() {
                String::new()
            } else {
                format!(" ({})", symbols.join(", "))
            };
            let mut block = format!("Lines {start}-{end}{label}:\n");
            let body: Vec<String> = lines
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{:>5} | {l}", start + i))
                .collect();
            let fence = fence_for(&body.join("\n"));
            block.push_str(&format!("{fence}{language}\n"));
            let room = budget_chars.saturating_sub(markdown.len() + block.len() + fence.len() + 2);
            let mut used_end = start;
            let mut text = String::new();
            for (i, line) in body.iter().enumerate() {
                if text.len() + line.len() + 1 > room {
                    truncated = true;
                    break;
                }
                text.push_str(line);
                text.push('\n');
                used_end = start + i;
            }
            if text.is_empty() {
                truncated = true;
                if !included.is_empty() {
                    out_files.push(ContextFile {
                        path: path.clone(),
                        relevance,
                        spans: included,
                    });
                }
                break 'files;
            }
            block.push_str(&text);
            block.push_str(&format!("{fence}\n\n"));
            markdown.push_str(&block);
            included.push([start, used_end]);
        }
        out_files.push(ContextFile {
            path,
            relevance,
            spans: included,
        });
    }
    let mut related_files = Vec::new();
    if request.include_related {
        let mut seen: HashSet<String> = out_files.iter().map(|f| f.path.clone()).collect();
        for file in out_files.iter().take(3) {
            for other in symbols::related(ws.index_config(), &file.path, 5)? {
                if seen.insert(other.clone()) {
                    related_files.push(other);
                }
            }
        }
        if !related_files.is_empty() {
            let mut section = String::from("## Related files (imports)\n\n");
            for file in &related_files {
                section.push_str(&format!("- {file}\n"));
            }
            if markdown.len() + section.len() <= budget_chars {
                markdown.push_str(&section);
            } else {
                truncated = true;
            }
        }
    }
    if out_files.is_empty() {
        markdown.push_str("No relevant code found.\n");
    }
    Ok(ContextBundle {
        query: request.query.clone(),
        tokens_used: markdown.len().div_ceil(4),
        markdown,
        files: out_files,
        related_files,
        truncated,
        index_built,
        warnings: outcome.warnings,
    })
}

/// Parses `since`: an ISO date or date-time, or `N unit(s) ago`, `yesterday`, `today`.
pub(crate) fn parse_since(text: &str, now: time::OffsetDateTime) -> Result<i64, ContextError> {
    let text = text.trim();
    let bad = || {
        invalid(
            "since",
            format!(
                "`{text}` is neither an ISO date (2024-05-01) nor a relative one (2 weeks ago)"
            ),
        )
    };
    if let Ok(t) = time::OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let date_format = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(text, &date_format) {
        return Ok(date.midnight().assume_utc().unix_timestamp());
    }
    let lower = text.to_ascii_lowercase();
    match lower.as_str() {
        "today" => return Ok(now.date().midnight().assume_utc().unix_timestamp()),
        "yesterday" => return Ok(now.unix_timestamp() - 86_400),
        _ => {}
    }
    let words: Vec<&str> = lower.split_whitespace().collect();
    let (count, unit) = match words.as_slice() {
        [unit, "ago"] | ["a" | "an", unit, "ago"] => (1, *unit),
        [n, unit, "ago"] => (n.parse::<i64>().map_err(|_| bad())?, *unit),
        ["last", unit] => (1, *unit),
        _ => return Err(bad()),
    };
    let seconds = match unit.trim_end_matches('s') {
        "second" | "sec" => 1,
        "minute" | "min" => 60,
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 604_800,
        "month" => 2_592_000,
        "year" => 31_536_000,
        _ => return Err(bad()),
    };
    Ok(now.unix_timestamp() - count.max(0) * seconds)
}

/// `git_commit_retrieval`: commits relevant to a query, with their files.
pub fn git_commit_retrieval(
    ws: &IndexedWorkspace,
    request: &GitCommitRetrievalRequest,
) -> Result<CommitResponse, ContextError> {
    require_text("query", &request.query)?;
    in_range("max_commits", request.max_commits, 1, 100)?;
    let since = request
        .since
        .as_deref()
        .map(|s| parse_since(s, time::OffsetDateTime::now_utc()))
        .transpose()?;
    let index_built = ensure_index(ws)?;
    let filter = CommitFilter {
        since,
        author: request.author.clone().filter(|a| !a.trim().is_empty()),
    };
    let hits = tollgate_index::commits(
        ws.index_config(),
        &request.query,
        request.max_commits,
        &filter,
    )?;
    let commits: Vec<CommitInfo> = hits
        .into_iter()
        .map(|hit| CommitInfo {
            sha: hit.sha,
            message: scrub(&hit.message, 0, 0).text,
            author: hit.author,
            date: time::OffsetDateTime::from_unix_timestamp(hit.time)
                .ok()
                .and_then(|t| t.format(&Rfc3339).ok())
                .unwrap_or_default(),
            files_changed: hit.files,
            relevance_score: round(f64::from(hit.score)),
        })
        .collect();
    Ok(CommitResponse {
        total_found: commits.len(),
        commits,
        index_built,
    })
}

/// `regex_search`: ripgrep-class search of the working tree (no index needed).
pub fn regex_search(
    ws: &IndexedWorkspace,
    request: &RegexSearchRequest,
) -> Result<RegexSearchResponse, ContextError> {
    if request.pattern.is_empty() {
        return Err(invalid("pattern", "must not be empty"));
    }
    in_range("context_lines", request.context_lines, 0, 10)?;
    in_range("limit", request.limit, 1, 500)?;
    let query = GrepQuery {
        pattern: request.pattern.clone(),
        path_glob: request.path_glob.clone(),
        ignore_case: request.ignore_case,
        context_lines: request.context_lines,
        offset: request.offset,
        limit: request.limit,
    };
    let outcome = grep(ws.root(), &query).map_err(|err| match err {
        tollgate_index::IndexError::InvalidInput(message)
            if message.starts_with("invalid path glob") =>
        {
            invalid("path_glob", message)
        }
        tollgate_index::IndexError::InvalidInput(message) => invalid("pattern", message),
        other => ContextError::Index(other),
    })?;
    let clean = |line: &str| scrub(line, 0, 0).text;
    Ok(RegexSearchResponse {
        matches: outcome
            .matches
            .into_iter()
            .map(|m| RegexMatch {
                path: m.path,
                line: m.line,
                text: clean(&m.text),
                before: m.before.iter().map(|l| clean(l)).collect(),
                after: m.after.iter().map(|l| clean(l)).collect(),
            })
            .collect(),
        total: outcome.total,
        truncated: outcome.truncated,
        files_searched: outcome.files_searched,
    })
}

/// `symbol_graph`: definitions, uses or importers of a symbol, from the extracted outlines;
/// when they know nothing, the hybrid search answers in the same shape.
pub fn symbol_graph(
    ws: &IndexedWorkspace,
    request: &SymbolGraphRequest,
) -> Result<SymbolGraphResponse, ContextError> {
    require_text("symbol", &request.symbol)?;
    in_range("limit", request.limit, 1, 200)?;
    let language = parse_language("language", request.language.as_deref())?
        .first()
        .map(|l| l.as_str());
    let index_built = ensure_index(ws)?;
    let config = ws.index_config();
    let symbol = request.symbol.trim();
    let under = request.under.as_deref();
    let line_text = |path: &str, line: usize| {
        read_lines(ws, path, line, line)
            .into_iter()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let (results, source) = match request.query_type {
        SymbolQueryType::Definition => {
            let defs = symbols::definitions(config, symbol, language, under, request.limit)?;
            let results: Vec<SymbolLocation> = defs
                .into_iter()
                .map(|d| SymbolLocation {
                    text: line_text(&d.path, d.line),
                    detail: match d.parent {
                        Some(parent) => format!("{} in {parent}", d.kind),
                        None => d.kind,
                    },
                    path: d.path,
                    line: d.line,
                })
                .collect();
            (results, "outline")
        }
        SymbolQueryType::Importers => {
            let found = symbols::importers(config, symbol, language, under, request.limit)?;
            let results = found
                .into_iter()
                .map(|i| SymbolLocation {
                    path: i.path,
                    line: 0,
                    detail: i.import,
                    text: String::new(),
                })
                .collect();
            (results, "outline")
        }
        SymbolQueryType::Callers => (
            references(ws, symbol, language, under, request.limit)?,
            "references",
        ),
    };
    if !results.is_empty() {
        return Ok(SymbolGraphResponse {
            symbol: symbol.to_string(),
            query_type: request.query_type,
            results,
            source: source.to_string(),
            index_built,
        });
    }
    // Nothing in the outlines: the hybrid search answers in the same shape.
    let mut query = SearchQuery::new(symbol, request.limit);
    query.filter.languages = parse_language("language", request.language.as_deref())?;
    query.filter.under = request.under.clone();
    let outcome = tollgate_index::search(config, ws.embedder(), &query)?;
    let results = outcome
        .hits
        .into_iter()
        .map(|hit| SymbolLocation {
            text: line_text(&hit.path, hit.start_line),
            detail: hit.symbol.unwrap_or(hit.kind),
            path: hit.path,
            line: hit.start_line,
        })
        .collect();
    Ok(SymbolGraphResponse {
        symbol: symbol.to_string(),
        query_type: request.query_type,
        results,
        source: "search".to_string(),
        index_built,
    })
}

/// Word-boundary uses of the symbol's last name part, definition lines left out.
fn references(
    ws: &IndexedWorkspace,
    symbol: &str,
    language: Option<&str>,
    under: Option<&str>,
    limit: usize,
) -> Result<Vec<SymbolLocation>, ContextError> {
    let name = symbol
        .rsplit("::")
        .next()
        .unwrap_or(symbol)
        .rsplit('.')
        .next()
        .unwrap_or(symbol);
    let definitions: HashSet<(String, usize)> =
        symbols::definitions(ws.index_config(), name, language, under, 1000)?
            .into_iter()
            .map(|d| (d.path, d.line))
            .collect();
    let query = GrepQuery {
        pattern: format!(r"\b{}\b", regex::escape(name)),
        path_glob: under
            .map(|u| format!("{}/**", u.trim_start_matches("./").trim_end_matches('/'))),
        ignore_case: false,
        context_lines: 0,
        offset: 0,
        limit: limit * 4 + definitions.len(),
    };
    let outcome = grep(ws.root(), &query)?;
    let mut out = Vec::new();
    for m in outcome.matches {
        if definitions.contains(&(m.path.clone(), m.line)) {
            continue;
        }
        if let Some(lang) = language {
            let detected = tollgate_index::walk::detect_language(std::path::Path::new(&m.path))
                .map(|l| l.as_str());
            if detected != Some(lang) {
                continue;
            }
        }
        out.push(SymbolLocation {
            path: m.path,
            line: m.line,
            detail: "reference".to_string(),
            text: scrub(m.text.trim(), 0, 0).text,
        });
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// `search_callers_for`: uses of a symbol (the `callers` query of `symbol_graph`).
pub fn search_callers_for(
    ws: &IndexedWorkspace,
    request: &SearchCallersRequest,
) -> Result<SymbolGraphResponse, ContextError> {
    symbol_graph(
        ws,
        &SymbolGraphRequest {
            symbol: request.symbol.clone(),
            query_type: SymbolQueryType::Callers,
            language: request.language.clone(),
            under: None,
            limit: request.limit,
        },
    )
}

/// An index update's progress for `control`: one count that only grows (changed files read,
/// then commits indexed, then the write), whose total is known once the walk has counted both;
/// the update stops at its next phase or file or commit once `control` is cancelled.
pub fn index_progress(
    control: &Control,
) -> impl FnMut(tollgate_index::Progress) -> ControlFlow<()> + '_ {
    use tollgate_index::Progress;
    // Changed files and commits, known from the walk on.
    let mut planned: Option<(u64, u64)> = None;
    move |progress| {
        let (files, commits) = planned.unwrap_or((0, 0));
        let total = planned.map(|(files, commits)| files + commits + 1);
        match progress {
            Progress::Walked {
                files: walked,
                changed,
                commits,
            } => {
                planned = Some((changed as u64, commits as u64));
                control.report(
                    0,
                    Some(changed as u64 + commits as u64 + 1),
                    format!("found {walked} files, {changed} to index, and {commits} commits"),
                );
            }
            Progress::Processed { done, .. } => {
                control.report(done as u64, total, "indexing changed files");
            }
            Progress::History { done, .. } => {
                control.report(files + done as u64, total, "indexing commit history");
            }
            Progress::Committing => {
                control.report(files + commits, total, "writing the index");
            }
            Progress::Graph => {
                control.report(files + commits, total, "rebuilding the vector graph");
            }
        }
        if control.is_cancelled() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// Rebuilds the whole index from the files, as if there were none (ck's `reindex` with `force`).
pub fn rebuild_index(
    ws: &IndexedWorkspace,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> ControlFlow<()>,
) -> Result<IndexReport, ContextError> {
    let mut config = ws.index_config().clone();
    config.rebuild = true;
    update_index(ws, &config, None, progress)
}

/// `index_workspace`: brings the index up to date (only `path` when given).
pub fn index_workspace(
    ws: &IndexedWorkspace,
    request: &IndexWorkspaceRequest,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> ControlFlow<()>,
) -> Result<IndexReport, ContextError> {
    let under = match request
        .path
        .as_deref()
        .filter(|p| !p.trim().is_empty() && *p != ".")
    {
        Some(path) => {
            let resolved = resolve(ws, path)?;
            if !resolved.is_dir() {
                return Err(invalid("path", format!("{path} is not a directory")));
            }
            Some(
                resolved
                    .strip_prefix(ws.root())
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default(),
            )
        }
        None => None,
    };
    update_index(ws, ws.index_config(), under.as_deref(), progress)
}

fn update_index(
    ws: &IndexedWorkspace,
    config: &tollgate_index::IndexConfig,
    under: Option<&str>,
    progress: &mut dyn FnMut(tollgate_index::Progress) -> ControlFlow<()>,
) -> Result<IndexReport, ContextError> {
    let started = Instant::now();
    ws.prepare_index_dir().map_err(ContextError::unreadable)?;
    let report = tollgate_index::update(config, under, ws.embedder(), progress)?;
    Ok(IndexReport {
        files_total: report.files_total,
        files_changed: report.files_changed,
        files_unchanged: report.files_unchanged,
        files_removed: report.files_removed,
        files_skipped: report.files_skipped,
        files_read: report.files_read,
        chunks_added: report.chunks_added,
        chunks_removed: report.chunks_removed,
        commits_added: report.commits_added,
        rebuilt: report.rebuilt,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// `index_status`: the index's health and size.
pub fn index_status(ws: &IndexedWorkspace) -> Result<IndexStatusResponse, ContextError> {
    let s = tollgate_index::status(ws.index_config())?;
    Ok(IndexStatusResponse {
        exists: s.exists,
        healthy: s.healthy && s.exists,
        files: s.files,
        chunks: s.chunks,
        vectors: s.vectors,
        commits: s.commits,
        embedder: s.embedder,
        last_indexed: s
            .indexed_at
            .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
            .and_then(|t| t.format(&Rfc3339).ok()),
        index_size: s.size_bytes,
        source_size: s.source_bytes,
        languages: s.languages,
        hnsw_graph: s.graph,
        updating: s.updating,
        problems: s.problems,
        index_dir: ws.index_config().dir.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository at `root` with one commit per file.
    fn commit_each(root: &std::path::Path, files: &[&str]) {
        let repo = git2::Repository::init(root).unwrap();
        let signature = git2::Signature::now("T", "t@example.com").unwrap();
        let mut parent: Option<git2::Oid> = None;
        for name in files {
            std::fs::write(root.join(name), format!("pub fn {}() {{}}\n", &name[..2])).unwrap();
            let mut index = repo.index().unwrap();
            index.add_path(std::path::Path::new(name)).unwrap();
            index.write().unwrap();
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let parents: Vec<git2::Commit> = parent
                .map(|oid| repo.find_commit(oid).unwrap())
                .into_iter()
                .collect();
            let parents: Vec<&git2::Commit> = parents.iter().collect();
            parent = Some(
                repo.commit(Some("HEAD"), &signature, &signature, name, &tree, &parents)
                    .unwrap(),
            );
        }
    }

    #[test]
    fn index_progress_only_grows_across_phases_and_stops_in_any() {
        let dir = tempfile::tempdir().unwrap();
        commit_each(dir.path(), &["aa.rs", "bb.rs", "cc.rs", "dd.rs"]);
        let ws = IndexedWorkspace::open(dir.path()).unwrap();
        let request = IndexWorkspaceRequest { path: None };

        // Cancelled while commits are indexed: the update stops there and writes nothing.
        let control = Control::new();
        let mut reported = index_progress(&control);
        let err = index_workspace(&ws, &request, &mut |progress| {
            if matches!(progress, tollgate_index::Progress::History { .. }) {
                control.cancel();
            }
            reported(progress)
        })
        .unwrap_err();
        assert_eq!(err.code(), "CANCELLED");
        assert!(!tollgate_index::exists(ws.index_config()));

        // Run through: one count over files, commits and the write, never going back.
        let control = Control::new();
        let mut reported = index_progress(&control);
        let mut seen = Vec::new();
        index_workspace(&ws, &request, &mut |progress| {
            let flow = reported(progress);
            seen.push(control.latest().unwrap().1);
            flow
        })
        .unwrap();
        assert!(
            seen.windows(2).all(|pair| pair[0].done <= pair[1].done),
            "{seen:?}"
        );
        // Four files, four commits and the write.
        assert!(seen.iter().all(|p| p.total == Some(9)), "{seen:?}");
        assert!(
            seen.iter()
                .any(|p| p.done == 8 && p.message == "writing the index")
        );
        // Commits are read while files are indexed; their count follows the files'.
        assert!(
            seen.iter()
                .any(|p| p.done > 4 && p.message == "indexing commit history"),
            "{seen:?}"
        );
    }

    #[test]
    fn since_accepts_iso_and_relative_dates() {
        let now = time::macros::datetime!(2024-06-15 12:00 UTC);
        assert_eq!(
            parse_since("2024-06-01", now).unwrap(),
            time::macros::datetime!(2024-06-01 0:00 UTC).unix_timestamp()
        );
        assert_eq!(
            parse_since("2 weeks ago", now).unwrap(),
            now.unix_timestamp() - 14 * 86_400
        );
        assert_eq!(
            parse_since("yesterday", now).unwrap(),
            now.unix_timestamp() - 86_400
        );
        assert_eq!(
            parse_since("2024-06-01T10:00:00Z", now).unwrap(),
            time::macros::datetime!(2024-06-01 10:00 UTC).unix_timestamp()
        );
        let err = parse_since("soonish", now).unwrap_err();
        assert_eq!(err.field(), Some("since"));
    }
}
