//! `tollgate search QUERY`: hybrid search of the code index, with filters, the lines that
//! match (like `rg`), `--explain` and JSON output. Builds the index first when there is none.

use tollgate::api::context;
use tollgate::api::context::request::{
    CodebaseRetrievalRequest, RetrievalOptions, SearchResponse, SearchResult,
};
use tollgate::workspace::{IndexedWorkspace, Progress};

use std::io::Write;

use super::ExitStatus;
use super::index::{progress_bar, show_progress, workspace};
use crate::args::SearchArgs;

/// Matching lines shown per result when `-C` is not given.
const MAX_MATCHED_LINES: usize = 4;

pub fn run(args: SearchArgs) -> anyhow::Result<ExitStatus> {
    let ws = workspace(&args.location)?;
    build_if_missing(&ws, args.json)?;
    let mut out = std::io::stdout().lock();
    let request = CodebaseRetrievalRequest {
        query: args.query.clone(),
        options: RetrievalOptions {
            top_k: Some(args.top_k),
            file_types: args.file_types.clone(),
            exclude_paths: args.exclude.clone(),
            include_tests: args.tests != "exclude",
            language: args.language.clone(),
            under: args.under.clone(),
            explain: args.explain,
        },
    };
    let mut response = if args.tests == "only" {
        context::search_tests_for(
            &ws,
            &context::request::SearchTestsRequest {
                query: args.query.clone(),
                top_k: args.top_k,
            },
        )?
    } else if args.deep {
        deep(&ws, &request)?
    } else {
        context::codebase_retrieval(&ws, &request)?
    };
    if args.json {
        // The results once: the Markdown copy is for agents reading text.
        response.markdown.clear();
        writeln!(out, "{}", serde_json::to_string_pretty(&response)?)?;
        return Ok(ExitStatus::Pass);
    }
    for warning in response.warnings.drain(..) {
        eprintln!("warning: {warning}");
    }
    if response.results.is_empty() {
        eprintln!("no results");
    }
    print_results(&mut out, &response, &args)?;
    Ok(ExitStatus::Pass)
}

/// The first search of a repository builds its index, saying so on stderr with progress.
fn build_if_missing(ws: &IndexedWorkspace, quiet: bool) -> anyhow::Result<()> {
    let bar = progress_bar(quiet);
    let mut announced = false;
    context::build_index_if_missing(ws, &mut |progress: Progress| {
        if !announced {
            announced = true;
            if !quiet {
                eprintln!(
                    "no index yet: indexing {} (later searches reuse it)",
                    ws.root().display()
                );
            }
        }
        show_progress(&bar, progress);
        std::ops::ControlFlow::Continue(())
    })?;
    bar.finish_and_clear();
    Ok(())
}

fn print_results(
    out: &mut impl Write,
    response: &SearchResponse,
    args: &SearchArgs,
) -> anyhow::Result<()> {
    let words = query_words(&response.query);
    for result in &response.results {
        let symbol = result
            .symbol
            .as_ref()
            .map(|s| format!("  {s}"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}:{}-{}  {:.2}  {}{}",
            result.path, result.start_line, result.end_line, result.relevance, result.kind, symbol
        )?;
        for (line_no, text) in shown_lines(result, &words, args.context) {
            writeln!(out, "{line_no:>6}: {text}")?;
        }
        if let Some(explain) = &result.explain {
            let evidence: Vec<String> = explain
                .evidence
                .iter()
                .map(|e| format!("{} #{} ({:.3} → {:.3})", e.arm, e.rank, e.score, e.weighted))
                .collect();
            let boosts: Vec<String> = explain
                .boosts
                .iter()
                .map(|b| format!("{} ×{:.2} ({})", b.name, b.factor, b.on))
                .collect();
            writeln!(
                out,
                "        why: {} query, {} file; {}; boosts: {}; chunk {:.3}, file {:.3}",
                explain.query_class,
                explain.file_class,
                evidence.join(", "),
                if boosts.is_empty() {
                    "none".to_string()
                } else {
                    boosts.join(", ")
                },
                explain.chunk_score,
                explain.file_score
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The query's words, lowercased, for finding the lines that hold them.
fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// The snippet's lines that hold a query word, each with `context` lines around it (at most
/// [`MAX_MATCHED_LINES`] matches without `-C`); its first lines when none does.
fn shown_lines(result: &SearchResult, words: &[String], context: usize) -> Vec<(usize, String)> {
    let lines: Vec<&str> = result.snippet.lines().collect();
    let matched: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| {
            let lower = line.to_lowercase();
            words.iter().any(|w| lower.contains(w.as_str()))
        })
        .map(|(i, _)| i)
        .collect();
    let mut keep = vec![false; lines.len()];
    if matched.is_empty() {
        for flag in keep.iter_mut().take(2) {
            *flag = true;
        }
    }
    let limit = if context == 0 {
        MAX_MATCHED_LINES
    } else {
        usize::MAX
    };
    for &i in matched.iter().take(limit) {
        let from = i.saturating_sub(context);
        let to = (i + context).min(lines.len().saturating_sub(1));
        for flag in &mut keep[from..=to] {
            *flag = true;
        }
    }
    lines
        .iter()
        .enumerate()
        .filter(|(i, line)| keep[*i] && !line.trim().is_empty())
        .map(|(i, line)| (result.start_line + i, line.trim_end().to_string()))
        .collect()
}

/// `--deep` without filters is `semantic_search` in deep mode; with filters the filtered search.
fn deep(
    ws: &IndexedWorkspace,
    request: &CodebaseRetrievalRequest,
) -> anyhow::Result<SearchResponse> {
    let options = &request.options;
    let unfiltered = options.file_types.is_empty()
        && options.exclude_paths.is_empty()
        && options.language.is_none()
        && options.under.is_none()
        && !options.explain;
    if unfiltered {
        let semantic = context::request::SemanticSearchRequest {
            query: request.query.clone(),
            top_k: options.top_k.unwrap_or(10),
            mode: context::request::SearchMode::Deep,
            bypass_cache: false,
            timeout_ms: None,
        };
        return Ok(context::semantic_search(ws, &semantic)?);
    }
    Ok(context::codebase_retrieval(ws, request)?)
}
