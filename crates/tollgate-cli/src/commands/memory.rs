//! `tollgate memory store|find|search|get|delete|threads|stats`: the knowledge store through
//! the same `api::memory` functions as the MCP tools; `--json` prints the tool's result.

use std::io::Read;

use anyhow::{Context, anyhow};
use serde::Serialize;
use serde_json::Value;
use tollgate::api::ApiError;
use tollgate::api::memory::{
    self as api, DeleteContextBatchRequest, EntryOut, Filters, FtsSearchRequest,
    GetContextByIdsRequest, HybridSearchRequest, SearchContextRequest, SemanticSearchRequest,
    StoreContextRequest,
};
use tollgate::memory::Memory;
use tollgate::workspace::{Embedder, HashedEmbedder, HttpEmbedder};

use super::ExitStatus;
use crate::args::{MemoryArgs, MemoryCommand, MemoryFilterArgs};

pub fn run(args: MemoryArgs) -> anyhow::Result<ExitStatus> {
    let store = super::store::open(&args.repo)?;
    let embedder: Box<dyn Embedder> = match (&args.embed_url, &args.embed_model) {
        (Some(url), Some(model)) => Box::new(HttpEmbedder::connect(
            url,
            model,
            args.embed_api_key.clone(),
        )?),
        _ => Box::new(HashedEmbedder),
    };
    let memory = Memory::new(&store, embedder.as_ref());
    if let Some(warning) = tollgate::api::learn_mirror::sync_on_open(&args.repo, &memory) {
        eprintln!("warning: {warning}");
    }
    let json = args.json;
    match args.command {
        MemoryCommand::Store {
            text,
            thread,
            source,
            tags,
            metadata,
        } => {
            let text = if text == "-" {
                let mut buffer = String::new();
                std::io::stdin()
                    .read_to_string(&mut buffer)
                    .context("reading the entry's text from stdin")?;
                buffer
            } else {
                text
            };
            let metadata = metadata
                .map(|text| match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => Ok(map),
                    _ => Err(anyhow!("--metadata: not a JSON object: {text}")),
                })
                .transpose()?;
            let request = StoreContextRequest {
                thread_id: thread,
                source,
                text,
                images: Vec::new(),
                metadata,
                tags,
            };
            let response = api::store_context(&memory, &request).map_err(coded)?;
            print(json, &response, || {
                textln!("stored {}", response.context_id);
                if response.secrets_scrubbed > 0 {
                    eprintln!(
                        "note: {} secret(s) were masked before storing",
                        response.secrets_scrubbed
                    );
                }
            })
        }
        MemoryCommand::Find { filter } => {
            let request = SearchContextRequest {
                limit: filter.limit.unwrap_or(30),
                ..SearchContextRequest::default()
            }
            .with_filters(filters(&filter)?);
            let response = api::search_context(&memory, &request).map_err(coded)?;
            print(json, &response, || print_entries(&response.results))
        }
        MemoryCommand::Search {
            query,
            mode,
            fts_mode,
            filter,
        } => search(&memory, json, query, &mode, fts_mode, &filter),
        MemoryCommand::Get { ids } => {
            let request = GetContextByIdsRequest {
                context_ids: ids,
                include_images: false,
            };
            let response = api::get_context_by_ids(&memory, &request)
                .map_err(|err| coded_with(err, &[("context_ids", "IDS")]))?;
            print(json, &response, || {
                for entry in &response.results {
                    textln!(
                        "#{} [{}] {} {}",
                        entry.id,
                        entry.thread_id,
                        entry.source,
                        entry.created_at
                    );
                    textln!("{}", entry.text_content);
                    textln!();
                }
            })
        }
        MemoryCommand::Delete {
            ids,
            threads,
            source,
            older_than_days,
        } => {
            let request = DeleteContextBatchRequest {
                context_ids: ids,
                thread_ids: threads,
                source,
                older_than_days,
            };
            let response = api::delete_context_batch(&memory, &request).map_err(coded)?;
            print(json, &response, || {
                textln!("deleted {}", response.deleted_count);
            })
        }
        MemoryCommand::Threads => {
            let response = api::list_threads(&memory).map_err(coded)?;
            print(json, &response, || {
                for thread in &response.threads {
                    textln!(
                        "{}\t{} entries\t{} .. {}",
                        thread.thread_id,
                        thread.entry_count,
                        thread.first_entry,
                        thread.last_entry
                    );
                }
            })
        }
        MemoryCommand::Stats => {
            let response = api::get_statistics(&memory).map_err(coded)?;
            print(json, &response, || {
                textln!("entries: {}", response.total_entries);
                textln!("threads: {}", response.total_threads);
                textln!("images: {}", response.total_images);
                textln!("tags: {}", response.unique_tags);
                textln!("size: {} MB", response.database_size_mb);
            })
        }
    }
}

fn search(
    memory: &Memory<'_>,
    json: bool,
    query: String,
    mode: &str,
    fts_mode: String,
    filter: &MemoryFilterArgs,
) -> anyhow::Result<ExitStatus> {
    let limit = filter.limit.unwrap_or(10);
    let filters = filters(filter)?;
    match mode {
        "fts" => {
            let request = FtsSearchRequest {
                mode: fts_mode,
                limit,
                ..api::search_request(&query)
            }
            .with_filters(filters);
            let response = api::fts_search_context(memory, &request).map_err(coded)?;
            print(json, &response, || print_entries(&response.results))
        }
        "semantic" => {
            let request = SemanticSearchRequest {
                limit,
                ..api::search_request(&query)
            }
            .with_filters(filters);
            let response = api::semantic_search_context(memory, &request).map_err(coded)?;
            print(json, &response, || print_entries(&response.results))
        }
        "hybrid" => {
            let request = HybridSearchRequest {
                limit,
                ..api::search_request(&query)
            }
            .with_filters(filters);
            let response = api::hybrid_search_context(memory, &request).map_err(coded)?;
            print(json, &response, || print_entries(&response.results))
        }
        other => Err(anyhow!(
            "--mode: `{other}` is not a search mode: hybrid, fts or semantic"
        )),
    }
}

/// The filter flags as the API's filters; each `--where` is a JSON object of `metadata_filters`.
fn filters(filter: &MemoryFilterArgs) -> anyhow::Result<Filters> {
    let metadata_filters = filter
        .conditions
        .iter()
        .map(|text| match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(condition)) => Ok(condition),
            _ => Err(anyhow!("--where: not a JSON object: {text}")),
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Filters {
        thread_id: filter.thread.clone(),
        source: filter.source.clone(),
        tags: filter.tags.clone(),
        metadata_filters,
        start_date: filter.since.clone(),
        end_date: filter.until.clone(),
        ..Filters::default()
    })
}

/// An API error with its code first, as the other front ends show it, naming the flag the
/// user typed rather than the API's field (`--id`, not `context_ids`).
fn coded(err: ApiError) -> anyhow::Error {
    coded_with(err, &[])
}

/// [`coded`] for a command that takes a field as a positional: `(field, its name)`.
fn coded_with(err: ApiError, positionals: &[(&str, &str)]) -> anyhow::Error {
    match &err.field {
        Some(field) => {
            let flag = positionals
                .iter()
                .find(|(name, _)| name == field)
                .map_or_else(|| flag_of(field), |(_, positional)| positional.to_string());
            let message = err
                .message
                .strip_prefix(field.as_str())
                .map_or(err.message.clone(), |rest| {
                    rest.trim_start_matches(':').trim_start().to_string()
                });
            anyhow!("[{}] {flag}: {message}", err.code)
        }
        None => anyhow!("[{}] {}", err.code, err.message),
    }
}

/// The command-line spelling of an API field (`tags[1]` is the second `--tag`).
fn flag_of(field: &str) -> String {
    // `name`, `name[i]` or `name[i].part`.
    let (name, index, part) = match field.split_once('[') {
        Some((name, rest)) => {
            let (index, part) = rest.split_once(']').unwrap_or((rest, ""));
            (
                name,
                index.parse::<usize>().ok(),
                part.trim_start_matches('.'),
            )
        }
        None => (field, None, ""),
    };
    let flag = match name {
        "context_ids" | "context_id" => "--id",
        "thread_ids" | "thread_id" => "--thread",
        "tags" => "--tag",
        "source" => "--source",
        "older_than_days" => "--older-than-days",
        "start_date" => "--since",
        "end_date" => "--until",
        "metadata" => "--metadata",
        "metadata_filters" => "--where",
        "limit" => "--limit",
        "query" => "QUERY",
        "text" | "text_content" => "TEXT",
        _ => return field.to_string(),
    };
    match (index, part) {
        (Some(n), "") => format!("{flag} (#{})", n + 1),
        (Some(n), part) => format!("{flag} (#{}, {part})", n + 1),
        (None, _) => flag.to_string(),
    }
}

fn print<T: Serialize>(json: bool, value: &T, text: impl FnOnce()) -> anyhow::Result<ExitStatus> {
    if json {
        outln!("{}", serde_json::to_string_pretty(value)?);
    } else {
        text();
    }
    Ok(ExitStatus::Pass)
}

fn print_entries(entries: &[EntryOut]) {
    if entries.is_empty() {
        eprintln!("no entries");
    }
    for entry in entries {
        let first_line = entry.text_content.lines().next().unwrap_or_default();
        textln!(
            "#{}\t{}\t{}\t{}",
            entry.id,
            entry.thread_id,
            entry.created_at,
            first_line
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate::ErrorCode;

    /// Issue 28: errors name the flag typed, not the API field.
    #[test]
    fn errors_name_the_flag_typed() {
        let err = |field: &str, message: &str| {
            coded(ApiError::invalid(field, message.to_string())).to_string()
        };
        assert_eq!(
            err("context_ids", "context_ids: at most 10000 ids"),
            "[INVALID_INPUT] --id: at most 10000 ids"
        );
        assert_eq!(
            err("tags[1]", "a tag is 1 to 100 characters"),
            "[INVALID_INPUT] --tag (#2): a tag is 1 to 100 characters"
        );
        assert_eq!(
            err("thread_ids", "too many"),
            "[INVALID_INPUT] --thread: too many"
        );
        assert_eq!(
            err("metadata_filters[0].operator", "`like` is not an operator"),
            "[INVALID_INPUT] --where (#1, operator): `like` is not an operator"
        );
        assert_eq!(
            err("rrf_k", "out of range"),
            "[INVALID_INPUT] rrf_k: out of range"
        );
        let unfielded = coded(ApiError::new(
            ErrorCode::StoreError,
            "disk full".to_string(),
        ));
        assert_eq!(unfielded.to_string(), "[STORE_ERROR] disk full");
    }
}
