//! `tollgate search QUERY`: hybrid search of the code index, with filters and JSON output.

use tollgate::context::{self, request::CodebaseRetrievalRequest, request::RetrievalOptions};

use std::io::Write;

use super::ExitStatus;
use super::index::workspace;
use crate::args::SearchArgs;

pub fn run(args: SearchArgs) -> anyhow::Result<ExitStatus> {
    let ws = workspace(&args.location)?;
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
        writeln!(out, "{}", serde_json::to_string_pretty(&response)?)?;
        return Ok(ExitStatus::Pass);
    }
    for warning in response.warnings.drain(..) {
        eprintln!("warning: {warning}");
    }
    if response.results.is_empty() {
        eprintln!("no results");
    }
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
    }
    Ok(ExitStatus::Pass)
}

/// `--deep` without filters is `semantic_search` in deep mode; with filters the filtered search.
fn deep(
    ws: &context::Workspace,
    request: &CodebaseRetrievalRequest,
) -> anyhow::Result<context::request::SearchResponse> {
    let options = &request.options;
    let unfiltered = options.file_types.is_empty()
        && options.exclude_paths.is_empty()
        && options.language.is_none()
        && options.under.is_none();
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
