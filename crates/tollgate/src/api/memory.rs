//! The knowledge store's wire contract: the 13 context tools of seed 002 (`store_context`,
//! `search_context`, …, the three batches) with the seed's parameter names, defaults, bounds
//! and result shapes. Each function parses its request once (base64, MIME types, sources,
//! operators, modes, dates) into `memory` types and calls [`Memory`].

use std::time::Instant;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ApiError;
use crate::memory::{
    ContentType, DateBound, DeleteCriteria, Entry, EntryUpdate, Filter, FtsMode, FtsQuery, Image,
    Memory, MemoryError, MetadataChange, MetadataCondition, MetadataPath, NewEntry, Operator, Page,
    Scored, SearchArm, Source, format_ms, parse_date,
};

/// Entries per batch call.
pub const MAX_BATCH: usize = 100;
/// Characters of text `search_context` shows per entry.
pub const PREVIEW_CHARS: usize = 150;
/// The RRF constant when the caller gives none.
pub const DEFAULT_RRF_K: u32 = 60;

impl From<MemoryError> for ApiError {
    fn from(err: MemoryError) -> ApiError {
        let field = err.field().map(str::to_string);
        let error = ApiError::new(err.code(), err.to_string());
        match field {
            Some(field) => error.at(field),
            None => error,
        }
    }
}

/// An image as it travels: base64 bytes and their MIME type.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(inline)]
#[serde(deny_unknown_fields)]
pub struct ImageInput {
    pub data: String,
    pub mime_type: String,
}

/// An advanced metadata condition.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetadataFilterInput {
    /// Dotted for nested keys.
    pub key: String,
    pub operator: String,
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub case_sensitive: bool,
}

/// `store_context`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreContextRequest {
    /// The thread.
    pub thread_id: String,
    /// `user` or `agent`.
    pub source: String,
    /// The text.
    pub text: String,
    /// Base64 `data` with `mime_type`.
    #[serde(default)]
    pub images: Vec<ImageInput>,
    /// Free-form JSON object.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
    /// Labels.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// The filter fields every listing and search takes, borrowed from its request.
struct FilterFields<'a> {
    thread_id: Option<&'a str>,
    source: Option<&'a str>,
    tags: &'a [String],
    content_type: Option<&'a str>,
    metadata: Option<&'a Map<String, Value>>,
    metadata_filters: &'a [Map<String, Value>],
    start_date: Option<&'a str>,
    end_date: Option<&'a str>,
}

macro_rules! filter_fields {
    ($request:expr) => {
        FilterFields {
            thread_id: $request.thread_id.as_deref(),
            source: $request.source.as_deref(),
            tags: &$request.tags,
            content_type: $request.content_type.as_deref(),
            metadata: $request.metadata.as_ref(),
            metadata_filters: &$request.metadata_filters,
            start_date: $request.start_date.as_deref(),
            end_date: $request.end_date.as_deref(),
        }
    };
}

/// Declares a listing or search request: its own fields, then the filters every listing and
/// search takes (declared here once; [`filter_fields!`] borrows them).
macro_rules! filtered_request {
    ($(#[$attr:meta])* pub struct $name:ident {
        $($(#[$field_attr:meta])* pub $field:ident: $ty:ty,)*
    }) => {
        $(#[$attr])*
        pub struct $name {
            $($(#[$field_attr])* pub $field: $ty,)*
            /// The thread.
            #[serde(default)]
            pub thread_id: Option<String>,
            /// `user` or `agent`.
            #[serde(default)]
            pub source: Option<String>,
            /// Any of these.
            #[serde(default)]
            pub tags: Vec<String>,
            /// `text` or `multimodal`.
            #[serde(default)]
            pub content_type: Option<String>,
            /// key=value.
            #[serde(default)]
            pub metadata: Option<Map<String, Value>>,
            /// {key, operator, value}.
            #[serde(default)]
            pub metadata_filters: Vec<Map<String, Value>>,
            /// ISO 8601.
            #[serde(default)]
            pub start_date: Option<String>,
            /// ISO 8601, inclusive.
            #[serde(default)]
            pub end_date: Option<String>,
        }

        impl $name {
            /// The request with `filters` in place of its own (front ends that build requests
            /// by hand set the eight at once).
            pub fn with_filters(self, filters: Filters) -> $name {
                $name {
                    thread_id: filters.thread_id,
                    source: filters.source,
                    tags: filters.tags,
                    content_type: filters.content_type,
                    metadata: filters.metadata,
                    metadata_filters: filters.metadata_filters,
                    start_date: filters.start_date,
                    end_date: filters.end_date,
                    ..self
                }
            }
        }
    };
}

/// The filters every listing and search request takes, as one value.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub thread_id: Option<String>,
    pub source: Option<String>,
    pub tags: Vec<String>,
    pub content_type: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub metadata_filters: Vec<Map<String, Value>>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
}

/// A search request for `query` with every other field at its default: the defaults the wire
/// gives it, read from the request's serde attributes, so they have one home.
pub fn search_request<T: serde::de::DeserializeOwned>(query: &str) -> T {
    serde_json::from_value(serde_json::json!({ "query": query }))
        .expect("a search request needs nothing but its query")
}

filtered_request! {
    /// `search_context`.
    #[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct SearchContextRequest {
        /// Default 30.
        #[serde(default = "default_list_limit")]
        #[schemars(range(min = 1, max = 100))]
        pub limit: u32,
        /// Results to skip.
        #[serde(default)]
        pub offset: u32,
        /// Add images.
        #[serde(default)]
        pub include_images: bool,
        /// Add stats.
        #[serde(default)]
        pub explain_query: bool,
    }
}

/// `get_context_by_ids`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetContextByIdsRequest {
    /// Entry ids.
    pub context_ids: Vec<i64>,
    /// Default true.
    #[serde(default = "yes")]
    pub include_images: bool,
}

/// `delete_context`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteContextRequest {
    /// Entry ids.
    #[serde(default)]
    pub context_ids: Vec<i64>,
    /// The thread.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `update_context` (and each item of `update_context_batch`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateContextRequest {
    /// The entry.
    pub context_id: i64,
    /// New text.
    #[serde(default)]
    pub text: Option<String>,
    /// Replaces the whole object.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
    /// RFC 7396 merge patch (instead of `metadata`).
    #[serde(default)]
    pub metadata_patch: Option<Map<String, Value>>,
    /// New tags.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Base64 `data` with `mime_type`.
    #[serde(default)]
    pub images: Option<Vec<ImageInput>>,
}

filtered_request! {
    /// `semantic_search_context`.
    #[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct SemanticSearchRequest {
        /// Search text.
        pub query: String,
        /// 1–100, default 5.
        #[serde(default = "default_search_limit")]
        #[schemars(range(min = 1, max = 100))]
        pub limit: u32,
        /// Results to skip.
        #[serde(default)]
        pub offset: u32,
        /// Add images.
        #[serde(default)]
        pub include_images: bool,
        /// Add stats.
        #[serde(default)]
        pub explain_query: bool,
    }
}

filtered_request! {
    /// `fts_search_context`.
    #[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct FtsSearchRequest {
        /// Search text.
        pub query: String,
        /// match (default), prefix, phrase, boolean.
        #[serde(default = "default_mode")]
        pub mode: String,
        /// 1–100, default 5.
        #[serde(default = "default_search_limit")]
        #[schemars(range(min = 1, max = 100))]
        pub limit: u32,
        /// Results to skip.
        #[serde(default)]
        pub offset: u32,
        /// Add highlighted snippets.
        #[serde(default)]
        pub highlight: bool,
        /// Add images.
        #[serde(default)]
        pub include_images: bool,
        /// Add stats.
        #[serde(default)]
        pub explain_query: bool,
    }
}

filtered_request! {
    /// `hybrid_search_context`.
    #[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct HybridSearchRequest {
        /// Search text.
        pub query: String,
        /// 1–100, default 5.
        #[serde(default = "default_search_limit")]
        #[schemars(range(min = 1, max = 100))]
        pub limit: u32,
        /// Results to skip.
        #[serde(default)]
        pub offset: u32,
        /// `fts`, `semantic` (default both).
        #[serde(default)]
        pub search_modes: Option<Vec<String>>,
        /// `rrf`.
        #[serde(default = "default_fusion")]
        pub fusion_method: String,
        /// RRF constant, 1–1000.
        #[serde(default)]
        #[schemars(range(min = 1, max = 1000))]
        pub rrf_k: Option<u32>,
        /// Add images.
        #[serde(default)]
        pub include_images: bool,
        /// Add stats.
        #[serde(default)]
        pub explain_query: bool,
    }
}

/// `store_context_batch`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreContextBatchRequest {
    /// Up to 100 `store_context` entries.
    pub entries: Vec<Map<String, Value>>,
    /// All or nothing (default true).
    #[serde(default = "yes")]
    pub atomic: bool,
}

/// `update_context_batch`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateContextBatchRequest {
    /// Up to 100 `update_context` updates.
    pub updates: Vec<Map<String, Value>>,
    /// All or nothing (default true).
    #[serde(default = "yes")]
    pub atomic: bool,
}

/// `delete_context_batch`: every criterion given must hold.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteContextBatchRequest {
    /// Entry ids.
    #[serde(default)]
    pub context_ids: Vec<i64>,
    /// Every entry of these threads.
    #[serde(default)]
    pub thread_ids: Vec<String>,
    /// `user` or `agent`.
    #[serde(default)]
    pub source: Option<String>,
    /// Entries older than this.
    #[serde(default)]
    pub older_than_days: Option<u32>,
}

fn yes() -> bool {
    true
}
fn default_list_limit() -> u32 {
    30
}
fn default_search_limit() -> u32 {
    5
}
fn default_mode() -> String {
    "match".to_string()
}
fn default_fusion() -> String {
    "rrf".to_string()
}

/// An entry as results show it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntryOut {
    pub id: i64,
    pub thread_id: String,
    pub source: String,
    pub content_type: String,
    pub text_content: String,
    /// `search_context` only: the text was cut to its first 150 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_truncated: Option<bool>,
    pub metadata: Map<String, Value>,
    pub tags: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageInput>>,
    /// The search's scores (`fts_score`, `semantic_distance`, ranks, `rrf`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highlighted: Option<String>,
}

/// `explain_query` statistics.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QueryStats {
    pub execution_time_ms: f64,
    pub filters_applied: usize,
    pub rows_returned: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StoreContextResponse {
    pub success: bool,
    pub context_id: i64,
    /// Secrets masked in the text, metadata and tags before they were stored.
    pub secrets_scrubbed: usize,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchContextResponse {
    pub results: Vec<EntryOut>,
    pub count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<QueryStats>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GetContextByIdsResponse {
    pub results: Vec<EntryOut>,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeleteContextResponse {
    pub success: bool,
    pub deleted_count: usize,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UpdateContextResponse {
    pub success: bool,
    pub context_id: i64,
    pub updated_fields: Vec<String>,
    pub secrets_scrubbed: usize,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadOut {
    pub thread_id: String,
    pub entry_count: u64,
    /// Entries per source (`user`, `agent`).
    pub source_types: Map<String, Value>,
    pub multimodal_count: u64,
    pub first_entry: String,
    pub last_entry: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListThreadsResponse {
    pub threads: Vec<ThreadOut>,
    pub total_threads: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatisticsResponse {
    pub total_entries: u64,
    pub by_source: Map<String, Value>,
    pub by_content_type: Map<String, Value>,
    pub total_images: u64,
    pub unique_tags: u64,
    pub total_threads: u64,
    pub database_size_mb: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SemanticSearchResponse {
    pub query: String,
    pub results: Vec<EntryOut>,
    pub count: usize,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<QueryStats>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FtsSearchResponse {
    pub query: String,
    pub mode: String,
    pub results: Vec<EntryOut>,
    pub count: usize,
    pub language: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<QueryStats>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HybridSearchResponse {
    pub query: String,
    pub fusion_method: String,
    pub results: Vec<EntryOut>,
    pub count: usize,
    pub search_modes_used: Vec<String>,
    pub fts_count: usize,
    pub semantic_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<QueryStats>,
}

/// One item of a batch.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BatchItem {
    pub index: usize,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets_scrubbed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BatchResponse {
    pub success: bool,
    pub total: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub results: Vec<BatchItem>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeleteBatchResponse {
    pub success: bool,
    pub deleted_count: usize,
    pub criteria_used: Vec<String>,
    pub message: String,
}

/// `store_context`.
pub fn store_context(
    memory: &Memory<'_>,
    request: &StoreContextRequest,
) -> Result<StoreContextResponse, ApiError> {
    let entry = parse_entry(request, "")?;
    let stored = memory
        .store_entries(std::slice::from_ref(&entry), true)?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::new(crate::ErrorCode::InternalError, "nothing was stored"))??;
    Ok(StoreContextResponse {
        success: true,
        context_id: stored.id,
        secrets_scrubbed: stored.n_secrets_scrubbed,
        message: scrubbed_message(
            format!("Stored context {}", stored.id),
            stored.n_secrets_scrubbed,
        ),
    })
}

/// `store_context_batch`: validation errors refuse an atomic batch whole, naming the entry.
pub fn store_context_batch(
    memory: &Memory<'_>,
    request: &StoreContextBatchRequest,
) -> Result<BatchResponse, ApiError> {
    check_batch("entries", request.entries.len())?;
    let mut items: Vec<Option<BatchItem>> = vec![None; request.entries.len()];
    let mut entries = Vec::new();
    let mut positions = Vec::new();
    for (index, entry) in request.entries.iter().enumerate() {
        let prefix = format!("entries[{index}].");
        match batch_item::<StoreContextRequest>(entry, &prefix)
            .and_then(|entry| parse_entry(&entry, &prefix))
        {
            Ok(entry) => {
                entries.push(entry);
                positions.push(index);
            }
            Err(err) if request.atomic => return Err(err),
            Err(err) => items[index] = Some(failed_item(index, &err)),
        }
    }
    let outcomes = memory.store_entries(&entries, request.atomic)?;
    for (index, outcome) in positions.into_iter().zip(outcomes) {
        items[index] = Some(match outcome {
            Ok(stored) => BatchItem {
                index,
                success: true,
                context_id: Some(stored.id),
                secrets_scrubbed: Some(stored.n_secrets_scrubbed),
                error: None,
            },
            Err(err) => failed_item(index, &ApiError::from(err)),
        });
    }
    Ok(batch_response("Stored", items))
}

/// `search_context`: newest first, text cut to [`PREVIEW_CHARS`].
pub fn search_context(
    memory: &Memory<'_>,
    request: &SearchContextRequest,
) -> Result<SearchContextResponse, ApiError> {
    let started = Instant::now();
    let filter = parse_filter(&filter_fields!(request))?;
    let page = parse_page(request.limit, request.offset)?;
    let entries = memory.list(&filter, page, request.include_images)?;
    let results: Vec<EntryOut> = entries
        .into_iter()
        .map(|entry| {
            let mut out = entry_out(entry);
            let n_chars = out.text_content.chars().count();
            out.is_truncated = Some(n_chars > PREVIEW_CHARS);
            if n_chars > PREVIEW_CHARS {
                out.text_content = out.text_content.chars().take(PREVIEW_CHARS).collect();
            }
            out
        })
        .collect();
    let stats = request
        .explain_query
        .then(|| stats(started, &filter, results.len()));
    Ok(SearchContextResponse {
        count: results.len(),
        results,
        stats,
    })
}

/// `get_context_by_ids`: an id that does not exist is `MEMORY_NOT_FOUND` naming it.
pub fn get_context_by_ids(
    memory: &Memory<'_>,
    request: &GetContextByIdsRequest,
) -> Result<GetContextByIdsResponse, ApiError> {
    if request.context_ids.is_empty() || request.context_ids.len() > MAX_BATCH {
        return Err(ApiError::invalid(
            "context_ids",
            format!(
                "give 1 to {MAX_BATCH} ids, got {}",
                request.context_ids.len()
            ),
        ));
    }
    let entries = memory.get("context_ids", &request.context_ids, request.include_images)?;
    let results: Vec<EntryOut> = entries.into_iter().map(entry_out).collect();
    Ok(GetContextByIdsResponse {
        count: results.len(),
        results,
    })
}

/// `delete_context`: by ids, by thread, or both (both must hold).
pub fn delete_context(
    memory: &Memory<'_>,
    request: &DeleteContextRequest,
) -> Result<DeleteContextResponse, ApiError> {
    if request.context_ids.is_empty() && request.thread_id.is_none() {
        return Err(ApiError::invalid(
            "context_ids",
            "give context_ids or thread_id (or both)",
        ));
    }
    let criteria = DeleteCriteria {
        ids: request.context_ids.clone(),
        thread_ids: request
            .thread_id
            .iter()
            .map(|thread| crate::memory::stored_thread_id(thread))
            .collect(),
        source: None,
        created_before_ms: None,
    };
    let deleted = memory.delete(&criteria)?;
    Ok(DeleteContextResponse {
        success: true,
        deleted_count: deleted,
        message: format!("Deleted {deleted} context entries"),
    })
}

/// `update_context`: an unknown id is `MEMORY_NOT_FOUND` and changes nothing.
pub fn update_context(
    memory: &Memory<'_>,
    request: &UpdateContextRequest,
) -> Result<UpdateContextResponse, ApiError> {
    let update = parse_update(request, "")?;
    let fields: Vec<String> = update.fields().into_iter().map(str::to_string).collect();
    let n = memory
        .update(std::slice::from_ref(&update), true)?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::new(crate::ErrorCode::InternalError, "nothing was updated"))??;
    Ok(UpdateContextResponse {
        success: true,
        context_id: request.context_id,
        message: scrubbed_message(
            format!(
                "Updated {} of context {}",
                fields.join(", "),
                request.context_id
            ),
            n,
        ),
        updated_fields: fields,
        secrets_scrubbed: n,
    })
}

/// `update_context_batch`.
pub fn update_context_batch(
    memory: &Memory<'_>,
    request: &UpdateContextBatchRequest,
) -> Result<BatchResponse, ApiError> {
    check_batch("updates", request.updates.len())?;
    let mut items: Vec<Option<BatchItem>> = vec![None; request.updates.len()];
    let mut updates = Vec::new();
    let mut positions = Vec::new();
    for (index, update) in request.updates.iter().enumerate() {
        let prefix = format!("updates[{index}].");
        match batch_item::<UpdateContextRequest>(update, &prefix)
            .and_then(|update| parse_update(&update, &prefix))
        {
            Ok(update) => {
                updates.push(update);
                positions.push(index);
            }
            Err(err) if request.atomic => return Err(err),
            Err(err) => items[index] = Some(failed_item(index, &err)),
        }
    }
    let outcomes = memory
        .update(&updates, request.atomic)
        .map_err(|err| ApiError::from(err.within("updates.")))?;
    for ((index, update), outcome) in positions.into_iter().zip(&updates).zip(outcomes) {
        items[index] = Some(match outcome {
            Ok(n) => BatchItem {
                index,
                success: true,
                context_id: Some(update.id()),
                secrets_scrubbed: Some(n),
                error: None,
            },
            Err(err) => failed_item(index, &ApiError::from(err)),
        });
    }
    Ok(batch_response("Updated", items))
}

/// `delete_context_batch`.
pub fn delete_context_batch(
    memory: &Memory<'_>,
    request: &DeleteContextBatchRequest,
) -> Result<DeleteBatchResponse, ApiError> {
    let mut criteria_used = Vec::new();
    let mut criteria = DeleteCriteria::default();
    if !request.context_ids.is_empty() {
        criteria.ids = request.context_ids.clone();
        criteria_used.push("context_ids".to_string());
    }
    if !request.thread_ids.is_empty() {
        criteria.thread_ids = request
            .thread_ids
            .iter()
            .map(|thread| crate::memory::stored_thread_id(thread))
            .collect();
        criteria_used.push("thread_ids".to_string());
    }
    if let Some(days) = request.older_than_days {
        criteria.created_before_ms = Some(crate::session::now_ms() - i64::from(days) * 86_400_000);
        criteria_used.push("older_than_days".to_string());
    }
    if let Some(source) = &request.source {
        criteria.source = Some(parse_source("source", source)?);
        criteria_used.push("source".to_string());
    }
    if criteria_used.is_empty() {
        return Err(ApiError::invalid(
            "context_ids",
            "give at least one criterion: context_ids, thread_ids or older_than_days (source only with another)",
        ));
    }
    if criteria_used == ["source"] {
        return Err(ApiError::invalid(
            "source",
            "source must be combined with context_ids, thread_ids or older_than_days",
        ));
    }
    let deleted = memory.delete(&criteria)?;
    Ok(DeleteBatchResponse {
        success: true,
        deleted_count: deleted,
        message: format!(
            "Deleted {deleted} context entries ({})",
            criteria_used.join(", ")
        ),
        criteria_used,
    })
}

/// `list_threads`.
pub fn list_threads(memory: &Memory<'_>) -> Result<ListThreadsResponse, ApiError> {
    let threads: Vec<ThreadOut> = memory
        .threads()?
        .into_iter()
        .map(|thread| {
            let mut source_types = Map::new();
            source_types.insert("user".to_string(), Value::from(thread.user_count));
            source_types.insert("agent".to_string(), Value::from(thread.agent_count));
            ThreadOut {
                thread_id: thread.thread_id,
                entry_count: thread.entry_count,
                source_types,
                multimodal_count: thread.multimodal_count,
                first_entry: format_ms(thread.first_ms),
                last_entry: format_ms(thread.last_ms),
            }
        })
        .collect();
    Ok(ListThreadsResponse {
        total_threads: threads.len(),
        threads,
    })
}

/// `get_statistics`.
pub fn get_statistics(memory: &Memory<'_>) -> Result<StatisticsResponse, ApiError> {
    let stats = memory.statistics()?;
    let pair = |a: (&str, u64), b: (&str, u64)| {
        let mut map = Map::new();
        map.insert(a.0.to_string(), Value::from(a.1));
        map.insert(b.0.to_string(), Value::from(b.1));
        map
    };
    Ok(StatisticsResponse {
        total_entries: stats.total_entries,
        by_source: pair(("user", stats.user_entries), ("agent", stats.agent_entries)),
        by_content_type: pair(
            ("text", stats.total_entries - stats.multimodal_entries),
            ("multimodal", stats.multimodal_entries),
        ),
        total_images: stats.total_images,
        unique_tags: stats.unique_tags,
        total_threads: stats.total_threads,
        database_size_mb: (stats.database_bytes as f64 / 1_048_576.0 * 100.0).round() / 100.0,
    })
}

/// `semantic_search_context`.
pub fn semantic_search_context(
    memory: &Memory<'_>,
    request: &SemanticSearchRequest,
) -> Result<SemanticSearchResponse, ApiError> {
    let started = Instant::now();
    let query = check_query(&request.query)?;
    let filter = parse_filter(&filter_fields!(request))?;
    let page = parse_page(request.limit, request.offset)?;
    let hits = memory.semantic(query, &filter, page, request.include_images)?;
    let results: Vec<EntryOut> = hits
        .into_iter()
        .map(|hit| scored_out(hit, &["semantic_distance", "semantic_rank"]))
        .collect();
    let stats = request
        .explain_query
        .then(|| stats(started, &filter, results.len()));
    Ok(SemanticSearchResponse {
        query: request.query.clone(),
        count: results.len(),
        results,
        model: memory.model(),
        stats,
    })
}

/// `fts_search_context`.
pub fn fts_search_context(
    memory: &Memory<'_>,
    request: &FtsSearchRequest,
) -> Result<FtsSearchResponse, ApiError> {
    let started = Instant::now();
    let text = check_query(&request.query)?;
    let mode = FtsMode::parse(&request.mode).ok_or_else(|| {
        ApiError::invalid(
            "mode",
            format!(
                "`{}` is not a mode: match, prefix, phrase or boolean",
                request.mode
            ),
        )
    })?;
    let query = FtsQuery::build("query", text, mode)?;
    let filter = parse_filter(&filter_fields!(request))?;
    let page = parse_page(request.limit, request.offset)?;
    let hits = memory.fts(
        query.as_ref(),
        &filter,
        page,
        request.highlight,
        request.include_images,
    )?;
    let results: Vec<EntryOut> = hits
        .into_iter()
        .map(|hit| scored_out(hit, &["fts_score", "fts_rank"]))
        .collect();
    let stats = request
        .explain_query
        .then(|| stats(started, &filter, results.len()));
    Ok(FtsSearchResponse {
        query: request.query.clone(),
        mode: mode.as_str().to_string(),
        count: results.len(),
        results,
        language: "english".to_string(),
        stats,
    })
}

/// `hybrid_search_context`.
pub fn hybrid_search_context(
    memory: &Memory<'_>,
    request: &HybridSearchRequest,
) -> Result<HybridSearchResponse, ApiError> {
    let started = Instant::now();
    let text = check_query(&request.query)?;
    if request.fusion_method != "rrf" {
        return Err(ApiError::invalid(
            "fusion_method",
            format!("`{}` is not a fusion method: rrf", request.fusion_method),
        ));
    }
    let rrf_k = request.rrf_k.unwrap_or(DEFAULT_RRF_K);
    if !(1..=1000).contains(&rrf_k) {
        return Err(ApiError::invalid(
            "rrf_k",
            format!("rrf_k must be between 1 and 1000, got {rrf_k}"),
        ));
    }
    let arms = match &request.search_modes {
        None => vec![SearchArm::Fts, SearchArm::Semantic],
        Some(modes) => {
            let mut arms = Vec::new();
            for (idx, mode) in modes.iter().enumerate() {
                let arm = match mode.as_str() {
                    "fts" => SearchArm::Fts,
                    "semantic" => SearchArm::Semantic,
                    other => {
                        return Err(ApiError::invalid(
                            format!("search_modes[{idx}]"),
                            format!("`{other}` is not a search mode: fts or semantic"),
                        ));
                    }
                };
                if !arms.contains(&arm) {
                    arms.push(arm);
                }
            }
            if arms.is_empty() {
                return Err(ApiError::invalid(
                    "search_modes",
                    "give fts, semantic or both",
                ));
            }
            arms
        }
    };
    let query = FtsQuery::build("query", text, FtsMode::Match)?;
    let filter = parse_filter(&filter_fields!(request))?;
    let page = parse_page(request.limit, request.offset)?;
    let outcome = memory.hybrid(
        query.as_ref(),
        text,
        &arms,
        rrf_k,
        &filter,
        page,
        request.include_images,
    )?;
    let results: Vec<EntryOut> = outcome
        .hits
        .into_iter()
        .map(|hit| {
            scored_out(
                hit,
                &[
                    "rrf",
                    "fts_rank",
                    "semantic_rank",
                    "fts_score",
                    "semantic_distance",
                ],
            )
        })
        .collect();
    let stats = request
        .explain_query
        .then(|| stats(started, &filter, results.len()));
    Ok(HybridSearchResponse {
        query: request.query.clone(),
        fusion_method: "rrf".to_string(),
        count: results.len(),
        results,
        search_modes_used: outcome
            .arms_used
            .iter()
            .map(|arm| arm.as_str().to_string())
            .collect(),
        fts_count: outcome.n_fts,
        semantic_count: outcome.n_semantic,
        stats,
    })
}

/// One item of a batch as its single-entry request; errors name the item.
fn batch_item<T: serde::de::DeserializeOwned>(
    item: &Map<String, Value>,
    prefix: &str,
) -> Result<T, ApiError> {
    serde_json::from_value(Value::Object(item.clone())).map_err(|err| {
        ApiError::invalid(prefix.trim_end_matches('.'), format!("invalid item: {err}"))
    })
}

fn check_query(query: &str) -> Result<&str, ApiError> {
    let trimmed = query.trim();
    if trimmed.is_empty() {
        return Err(ApiError::invalid("query", "must not be empty"));
    }
    Ok(trimmed)
}

fn check_batch(field: &str, n: usize) -> Result<(), ApiError> {
    if n == 0 || n > MAX_BATCH {
        return Err(ApiError::invalid(
            field,
            format!("a batch holds 1 to {MAX_BATCH} items, got {n}"),
        ));
    }
    Ok(())
}

fn parse_source(field: &str, source: &str) -> Result<Source, ApiError> {
    Source::parse(source).ok_or_else(|| {
        ApiError::invalid(field, format!("`{source}` is not a source: user or agent"))
    })
}

fn parse_page(limit: u32, offset: u32) -> Result<Page, ApiError> {
    if !(1..=100).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("limit must be between 1 and 100, got {limit}"),
        ));
    }
    if offset > 100_000 {
        return Err(ApiError::invalid(
            "offset",
            format!("offset must be at most 100000, got {offset}"),
        ));
    }
    Ok(Page {
        limit: limit as usize,
        offset: offset as usize,
    })
}

fn parse_images(images: &[ImageInput], prefix: &str) -> Result<Vec<Image>, ApiError> {
    if images.len() > crate::memory::MAX_IMAGES {
        return Err(MemoryError::TooLarge {
            field: format!("{prefix}images"),
            message: format!(
                "{} images, over the limit of {}",
                images.len(),
                crate::memory::MAX_IMAGES
            ),
        }
        .into());
    }
    let mut out = Vec::with_capacity(images.len());
    for (idx, image) in images.iter().enumerate() {
        let field = format!("{prefix}images[{idx}]");
        // Base64 is 4/3 of the bytes: refuse oversized text before decoding it.
        if image.data.len() / 4 * 3 > crate::memory::MAX_IMAGE_BYTES + 3 {
            return Err(MemoryError::TooLarge {
                field: format!("{field}.data"),
                message: format!(
                    "the image is over the limit of {} bytes",
                    crate::memory::MAX_IMAGE_BYTES
                ),
            }
            .into());
        }
        let data = base64::engine::general_purpose::STANDARD
            .decode(image.data.trim())
            .map_err(|err| {
                ApiError::invalid(format!("{field}.data"), format!("not valid base64: {err}"))
            })?;
        out.push(Image::new(&field, &image.mime_type, data)?);
    }
    Ok(out)
}

fn parse_entry(request: &StoreContextRequest, prefix: &str) -> Result<NewEntry, ApiError> {
    let source = parse_source(&format!("{prefix}source"), &request.source)?;
    let images = parse_images(&request.images, prefix)?;
    NewEntry::new(
        &request.thread_id,
        source,
        &request.text,
        request.metadata.clone().unwrap_or_default(),
        &request.tags,
        images,
    )
    .map_err(|err| err.within(prefix).into())
}

fn parse_update(request: &UpdateContextRequest, prefix: &str) -> Result<EntryUpdate, ApiError> {
    let metadata = match (&request.metadata, &request.metadata_patch) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                format!("{prefix}metadata_patch"),
                "metadata and metadata_patch are mutually exclusive: give one",
            ));
        }
        (Some(metadata), None) => Some(MetadataChange::Replace(metadata.clone())),
        (None, Some(patch)) => Some(MetadataChange::Patch(patch.clone())),
        (None, None) => None,
    };
    let images = request
        .images
        .as_deref()
        .map(|images| parse_images(images, prefix))
        .transpose()?;
    EntryUpdate::new(
        request.context_id,
        request.text.as_deref(),
        metadata,
        request.tags.as_deref(),
        images,
    )
    .map_err(|err| err.within(prefix).into())
}

fn parse_filter(fields: &FilterFields<'_>) -> Result<Filter, ApiError> {
    let mut filter = Filter {
        thread_id: fields.thread_id.map(crate::memory::stored_thread_id),
        source: fields
            .source
            .map(|source| parse_source("source", source))
            .transpose()?,
        tags: crate::memory::normalize_filter_tags(fields.tags)?,
        content_type: fields
            .content_type
            .map(|kind| {
                ContentType::parse(kind).ok_or_else(|| {
                    ApiError::invalid(
                        "content_type",
                        format!("`{kind}` is not a content type: text or multimodal"),
                    )
                })
            })
            .transpose()?,
        metadata: Vec::new(),
        created_from_ms: fields
            .start_date
            .map(|date| parse_date("start_date", date, DateBound::Start))
            .transpose()?,
        created_to_ms: fields
            .end_date
            .map(|date| parse_date("end_date", date, DateBound::End))
            .transpose()?,
    };
    for (key, value) in fields.metadata.into_iter().flatten() {
        let path = MetadataPath::parse(&format!("metadata.{key}"), key)?;
        if value.is_array() || value.is_object() {
            return Err(ApiError::invalid(
                format!("metadata.{key}"),
                "equality takes a string, number, boolean or null; use metadata_filters for lists",
            ));
        }
        filter
            .metadata
            .push(MetadataCondition::equals(path, value.clone()));
    }
    for (idx, condition) in fields.metadata_filters.iter().enumerate() {
        let field = format!("metadata_filters[{idx}]");
        let condition: MetadataFilterInput =
            serde_json::from_value(Value::Object(condition.clone())).map_err(|err| {
                ApiError::invalid(
                    field.clone(),
                    format!("not a condition {{key, operator, value, case_sensitive}}: {err}"),
                )
            })?;
        let operator = Operator::parse(&condition.operator).ok_or_else(|| {
            ApiError::invalid(
                format!("{field}.operator"),
                format!(
                    "`{}` is not an operator: {}",
                    condition.operator,
                    Operator::ALL.map(Operator::as_str).join(", ")
                ),
            )
        })?;
        let path = MetadataPath::parse(&format!("{field}.key"), &condition.key)?;
        filter.metadata.push(MetadataCondition::new(
            &field,
            path,
            operator,
            condition.value.clone(),
            condition.case_sensitive,
        )?);
    }
    if filter.metadata.len() > 50 {
        return Err(ApiError::invalid(
            "metadata_filters",
            "at most 50 metadata conditions",
        ));
    }
    Ok(filter)
}

fn entry_out(entry: Entry) -> EntryOut {
    let images = (!entry.images.is_empty()).then(|| {
        entry
            .images
            .iter()
            .map(|image| ImageInput {
                data: base64::engine::general_purpose::STANDARD.encode(image.data()),
                mime_type: image.mime().as_str().to_string(),
            })
            .collect()
    });
    EntryOut {
        id: entry.id,
        thread_id: entry.thread_id,
        source: entry.source.as_str().to_string(),
        content_type: entry.content_type.as_str().to_string(),
        text_content: entry.text,
        is_truncated: None,
        metadata: entry.metadata,
        tags: entry.tags,
        created_at: format_ms(entry.created_ms),
        updated_at: format_ms(entry.updated_ms),
        images,
        scores: None,
        highlighted: None,
    }
}

/// The entry with the named scores (a missing one is `null`).
fn scored_out(hit: Scored, names: &[&str]) -> EntryOut {
    let scores = hit.scores;
    let mut map = Map::new();
    for name in names {
        let value = match *name {
            "rrf" => scores.rrf.map(Value::from),
            "fts_rank" => scores.fts_rank.map(Value::from),
            "semantic_rank" => scores.semantic_rank.map(Value::from),
            "fts_score" => scores.fts_score.map(Value::from),
            "semantic_distance" => scores.semantic_distance.map(Value::from),
            _ => None,
        };
        map.insert((*name).to_string(), value.unwrap_or(Value::Null));
    }
    let mut out = entry_out(hit.entry);
    out.scores = Some(map);
    out.highlighted = hit.highlighted;
    out
}

fn stats(started: Instant, filter: &Filter, rows: usize) -> QueryStats {
    QueryStats {
        execution_time_ms: (started.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
        filters_applied: filter.n_conditions(),
        rows_returned: rows,
    }
}

fn failed_item(index: usize, err: &ApiError) -> BatchItem {
    let error = match &err.field {
        Some(field) => format!("{}: {field}: {}", err.code, err.message),
        None => format!("{}: {}", err.code, err.message),
    };
    BatchItem {
        index,
        success: false,
        context_id: None,
        secrets_scrubbed: None,
        error: Some(error),
    }
}

fn batch_response(verb: &str, items: Vec<Option<BatchItem>>) -> BatchResponse {
    let results: Vec<BatchItem> = items.into_iter().flatten().collect();
    let succeeded = results.iter().filter(|item| item.success).count();
    let failed = results.len() - succeeded;
    BatchResponse {
        success: failed == 0,
        total: results.len(),
        succeeded,
        failed,
        message: format!("{verb} {succeeded} of {} entries", results.len()),
        results,
    }
}

fn scrubbed_message(message: String, n: usize) -> String {
    if n == 0 {
        message
    } else {
        format!("{message}; {n} secret(s) were masked before storing")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tollgate_index::{Embedder, HashedEmbedder};

    use super::*;
    use crate::ErrorCode;
    use crate::memory::MAX_DELETE_IDS;
    use crate::store::Store;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\nrest-of-image";

    fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn requests_built_by_hand_get_the_wires_defaults_and_the_filters() {
        let hybrid: HybridSearchRequest = search_request("retry");
        assert_eq!((hybrid.limit, hybrid.fusion_method.as_str()), (5, "rrf"));
        let fts: FtsSearchRequest = search_request("retry");
        assert_eq!((fts.query.as_str(), fts.mode.as_str()), ("retry", "match"));
        let filters = Filters {
            thread_id: Some("t".into()),
            tags: vec!["a".into()],
            end_date: Some("2026-01-01".into()),
            ..Filters::default()
        };
        let filtered = SemanticSearchRequest {
            limit: 7,
            ..search_request("retry")
        }
        .with_filters(filters);
        assert_eq!(filtered.limit, 7);
        assert_eq!(filtered.thread_id.as_deref(), Some("t"));
        assert_eq!(filtered.tags, ["a"]);
        assert_eq!(filtered.end_date.as_deref(), Some("2026-01-01"));
    }

    fn store(memory: &Memory<'_>, value: Value) -> StoreContextResponse {
        store_context(memory, &parse(value)).unwrap()
    }

    fn total(memory: &Memory<'_>) -> u64 {
        get_statistics(memory).unwrap().total_entries
    }

    fn ids(results: &[EntryOut]) -> Vec<i64> {
        results.iter().map(|entry| entry.id).collect()
    }

    /// A deleted entry's text is gone from the database file itself, not only from every
    /// answer: freed pages are zeroed and the full-text index forgets its words.
    /// A full-text search with highlights while another connection deletes the entries it
    /// ranked (between the ranking and the reading of the entries, where the race bit): every
    /// hit's highlight is its own entry's text.
    #[test]
    fn a_search_racing_deletes_never_shows_another_entrys_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tollgate.db");
        let db = Store::open(&path).unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        for n in 0..30 {
            store(
                &memory,
                json!({"thread_id": "t", "source": "user",
                       "text": format!("canary deploy {} entry{n}", "word ".repeat(n % 7))}),
            );
        }
        let search = |memory: &Memory<'_>| {
            fts_search_context(
                memory,
                &parse(json!({"query": "canary", "highlight": true, "limit": 10})),
            )
            .unwrap()
        };
        let mut mismatches = Vec::new();
        for _ in 0..5 {
            let top = ids(&search(&memory).results);
            let victim = top[1];
            let deleter_path = path.clone();
            crate::memory::ops_tests::set_after_ranking(Some(Box::new(move || {
                let other = Store::open(&deleter_path).unwrap();
                let deleter = Memory::new(&other, &HashedEmbedder);
                delete_context(&deleter, &parse(json!({"context_ids": [victim]}))).unwrap();
            })));
            let found = search(&memory);
            crate::memory::ops_tests::set_after_ranking(None);
            for hit in found.results {
                let shown = hit.highlighted.clone().unwrap_or_default();
                let plain = shown.replace("<mark>", "").replace("</mark>", "");
                if plain != hit.text_content {
                    mismatches.push((hit.id, shown));
                }
            }
        }
        assert!(
            mismatches.is_empty(),
            "highlights of other entries: {mismatches:?}"
        );
    }

    /// Past its quota the store refuses a write whole (STORE_FULL, naming the setting) and
    /// keeps what it had; per thread and in all; deleting brings it back under.
    #[test]
    fn the_quota_refuses_what_would_grow_past_it_and_deleting_makes_room() {
        use crate::store::MemoryQuota;
        let db = Store::open_in_memory()
            .unwrap()
            .with_memory_quota(MemoryQuota {
                store_bytes: 40_000,
                thread_bytes: 25_000,
            });
        let memory = Memory::new(&db, &HashedEmbedder);
        let text = |n: usize| "word ".repeat(n);
        // Each entry keeps its embedding (516 bytes, quantised) beside its text.
        let first = store(
            &memory,
            json!({"thread_id": "a", "source": "user", "text": text(3000)}),
        );
        let err = store_context(
            &memory,
            &parse(json!({"thread_id": "a", "source": "user", "text": text(2000)})),
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreFull, "{}", err.message);
        assert!(err.message.contains("thread `a`"), "{}", err.message);
        assert!(err.message.contains("thread_quota_mb"), "{}", err.message);
        assert_eq!(total(&memory), 1, "the refused entry is not stored");

        // Another thread has room of its own, until the store's total is reached; an atomic
        // batch past it stores none of its entries.
        store(
            &memory,
            json!({"thread_id": "b", "source": "user", "text": text(3000)}),
        );
        let batch = json!({"entries": [
            {"thread_id": "c", "source": "user", "text": text(100)},
            {"thread_id": "c", "source": "user", "text": text(2000)},
        ]});
        let err = store_context_batch(&memory, &parse(batch)).unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreFull, "{}", err.message);
        assert!(err.message.contains("knowledge store"), "{}", err.message);
        assert!(err.message.contains("memory_quota_mb"), "{}", err.message);
        assert_eq!(total(&memory), 2);

        // Growing an entry past the thread's quota is refused, shrinking one is not.
        let grow = json!({"context_id": first.context_id, "text": text(5000)});
        let err = update_context(&memory, &parse(grow)).unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreFull, "{}", err.message);
        let shrink = json!({"context_id": first.context_id, "text": text(10)});
        update_context(&memory, &parse(shrink)).unwrap();
        store(
            &memory,
            json!({"thread_id": "a", "source": "user", "text": text(2000)}),
        );

        // Deleting a thread frees its bytes.
        delete_context_batch(&memory, &parse(json!({"thread_ids": ["b"]}))).unwrap();
        store(
            &memory,
            json!({"thread_id": "c", "source": "user", "text": text(3000)}),
        );
        assert_eq!(total(&memory), 3);
    }

    /// A delete naming more ids than the limit is a field-named 400, not a store error.
    #[test]
    fn delete_lists_are_bounded_with_a_field_named_error() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let ids: Vec<i64> = (1..=40_000).collect();
        let err = delete_context(&memory, &parse(json!({"context_ids": ids}))).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{}", err.message);
        assert_eq!(err.field.as_deref(), Some("context_ids"));
        assert!(err.message.contains("10000"), "{}", err.message);
        let err = delete_context_batch(&memory, &parse(json!({"context_ids": ids}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("context_ids"), "{}", err.message);
        let threads: Vec<String> = (0..10_001).map(|n| format!("t{n}")).collect();
        let err =
            delete_context_batch(&memory, &parse(json!({"thread_ids": threads}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("thread_ids"), "{}", err.message);
        let ok: Vec<i64> = (1..=MAX_DELETE_IDS as i64).collect();
        assert_eq!(
            delete_context(&memory, &parse(json!({"context_ids": ok})))
                .unwrap()
                .deleted_count,
            0
        );
    }

    #[test]
    fn a_deleted_entry_leaves_no_text_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tollgate.db");
        let marker = "xylophonequartz";
        let file_holds_marker = || {
            ["", "-wal"].iter().any(|suffix| {
                let bytes =
                    std::fs::read(format!("{}{suffix}", path.display())).unwrap_or_default();
                bytes
                    .windows(marker.len())
                    .any(|window| window == marker.as_bytes())
            })
        };
        {
            let db = Store::open(&path).unwrap();
            let memory = Memory::new(&db, &HashedEmbedder);
            for n in 0..20 {
                store(
                    &memory,
                    json!({"thread_id": "t", "source": "user", "text": format!("keep {n} other words")}),
                );
            }
            store(
                &memory,
                json!({"thread_id": "secret", "source": "user",
                       "text": format!("the {marker} launch code")}),
            );
        }
        assert!(
            file_holds_marker(),
            "the entry is in the file before the delete"
        );
        {
            let db = Store::open(&path).unwrap();
            let memory = Memory::new(&db, &HashedEmbedder);
            let deleted = delete_context(&memory, &parse(json!({"thread_id": "secret"}))).unwrap();
            assert_eq!(deleted.deleted_count, 1);
        }
        assert!(
            !file_holds_marker(),
            "the deleted text is still in the file"
        );
    }

    #[test]
    fn secrets_in_thread_ids_tags_and_metadata_keys_are_masked_too() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let aws = "AKIAQWERTYUIOPASDFGH";
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let thread = format!("deploy-{token}");
        let stored = store(
            &memory,
            json!({"thread_id": thread, "source": "agent", "text": "deploy notes",
                   "tags": [aws, "ops"], "metadata": {token.clone(): "value", "nested": {aws: 1}}}),
        );
        assert_eq!(stored.secrets_scrubbed, 4, "{}", stored.message);
        let leaks = |text: &str| {
            let lower = text.to_lowercase();
            lower.contains(&aws.to_lowercase()) || lower.contains(&token.to_lowercase())
        };
        let got = get_context_by_ids(&memory, &parse(json!({"context_ids": [stored.context_id]})))
            .unwrap();
        let entry = serde_json::to_string(&got.results[0]).unwrap();
        assert!(!leaks(&entry), "the entry keeps a secret: {entry}");
        assert!(got.results[0].tags.contains(&"ops".to_string()));
        let threads = serde_json::to_string(&list_threads(&memory).unwrap()).unwrap();
        assert!(!leaks(&threads), "a thread id keeps a secret: {threads}");
        // A filter naming the thread as the caller knows it still finds it.
        let found = fts_search_context(
            &memory,
            &parse(json!({"query": "deploy", "thread_id": thread})),
        )
        .unwrap();
        assert_eq!(found.count, 1);
        // Neither spelling of the key reaches the full-text index.
        for query in [aws.to_string(), aws.to_lowercase()] {
            let found = fts_search_context(&memory, &parse(json!({"query": query}))).unwrap();
            assert_eq!(found.count, 0, "{query}");
        }
    }

    #[test]
    fn stores_reads_back_and_masks_secrets_before_storing() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let png = base64::engine::general_purpose::STANDARD.encode(PNG);
        let stored = store(
            &memory,
            json!({"thread_id": "t1", "source": "agent", "text": format!("deploy with {token}"),
                   "tags": [" Auth ", "auth", "DB"], "metadata": {"status": "done", "key": token},
                   "images": [{"data": png, "mime_type": "image/png"}]}),
        );
        assert_eq!(stored.secrets_scrubbed, 2);
        assert!(stored.message.contains("masked"), "{}", stored.message);
        let got = get_context_by_ids(&memory, &parse(json!({"context_ids": [stored.context_id]})))
            .unwrap();
        let entry = &got.results[0];
        assert!(!entry.text_content.contains(&token));
        assert!(
            !Value::Object(entry.metadata.clone())
                .to_string()
                .contains(&token)
        );
        assert_eq!(entry.tags, ["auth", "db"]);
        assert_eq!(entry.content_type, "multimodal");
        assert_eq!(entry.images.as_ref().unwrap()[0].data, png);
        // Not even the full-text index saw the secret.
        let found = fts_search_context(&memory, &parse(json!({"query": "a1B2a1B2"}))).unwrap();
        assert_eq!(found.count, 0);
    }

    #[test]
    fn bad_input_names_the_field_and_stores_nothing() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let big = "x".repeat(crate::memory::MAX_TEXT_BYTES + 1);
        let cases: Vec<(Value, ErrorCode, &str)> = vec![
            (
                json!({"thread_id": "t", "source": "robot", "text": "x"}),
                ErrorCode::InvalidInput,
                "source",
            ),
            (
                json!({"thread_id": "t", "source": "user", "text": big}),
                ErrorCode::InputTooLarge,
                "text",
            ),
            (
                json!({"thread_id": " ", "source": "user", "text": "x"}),
                ErrorCode::InvalidInput,
                "thread_id",
            ),
            (
                json!({"thread_id": "t", "source": "user", "text": "x",
                    "images": [{"data": "%%%not-base64", "mime_type": "image/png"}]}),
                ErrorCode::InvalidInput,
                "images[0].data",
            ),
            (
                json!({"thread_id": "t", "source": "user", "text": "x",
                    "images": [{"data": "aGVsbG8=", "mime_type": "text/html"}]}),
                ErrorCode::InvalidInput,
                "images[0].mime_type",
            ),
            (
                json!({"thread_id": "t", "source": "user", "text": "x",
                    "images": [{"data": "aGVsbG8=", "mime_type": "image/png"}]}),
                ErrorCode::InvalidInput,
                "images[0].data",
            ),
            (
                json!({"thread_id": "t", "source": "user", "text": "x",
                    "images": [{"data": "A".repeat(6 * 1024 * 1024), "mime_type": "image/png"}]}),
                ErrorCode::InputTooLarge,
                "images[0].data",
            ),
        ];
        for (request, code, field) in cases {
            let err = store_context(&memory, &parse(request)).unwrap_err();
            assert_eq!(
                (err.code, err.field.as_deref()),
                (code, Some(field)),
                "{err}"
            );
        }
        // Unknown operator, unknown ids, bad dates, invalid JSON for the wire type.
        let err = search_context(
            &memory,
            &parse(json!({"metadata_filters": [{"key": "p", "operator": "like", "value": 1}]})),
        )
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("metadata_filters[0].operator"));
        assert!(err.message.contains("array_contains"), "{err}");
        let err =
            get_context_by_ids(&memory, &parse(json!({"context_ids": [41, 42]}))).unwrap_err();
        assert_eq!(err.code, ErrorCode::MemoryNotFound);
        assert!(err.message.contains("41, 42"), "{err}");
        let err = search_context(&memory, &parse(json!({"end_date": "soon"}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("end_date"));
        assert!(
            serde_json::from_value::<StoreContextRequest>(
                json!({"thread_id": "t", "source": "user", "text": "x", "metadata": [1]})
            )
            .is_err()
        );
        let err =
            update_context(&memory, &parse(json!({"context_id": 7, "text": "new"}))).unwrap_err();
        assert_eq!(err.code, ErrorCode::MemoryNotFound);
        assert_eq!(total(&memory), 0);
    }

    #[test]
    fn an_atomic_batch_is_all_or_nothing_and_a_loose_one_keeps_the_good_entries() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let entries = json!([
            {"thread_id": "t", "source": "user", "text": "one"},
            {"thread_id": "t", "source": "nobody", "text": "two"},
            {"thread_id": "t", "source": "agent", "text": "three"}
        ]);
        let err = store_context_batch(&memory, &parse(json!({"entries": entries}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("entries[1].source"));
        assert_eq!(total(&memory), 0);
        let loose = store_context_batch(
            &memory,
            &parse(json!({"entries": entries, "atomic": false})),
        )
        .unwrap();
        assert_eq!((loose.total, loose.succeeded, loose.failed), (3, 2, 1));
        assert!(!loose.results[1].success);
        assert!(
            loose.results[1]
                .error
                .as_deref()
                .unwrap()
                .contains("entries[1].source")
        );
        assert_eq!(total(&memory), 2);
        // An update batch with an unknown id changes nothing.
        let first = loose.results[0].context_id.unwrap();
        let err = update_context_batch(
            &memory,
            &parse(json!({"updates": [{"context_id": first, "text": "changed"},
                                      {"context_id": 999, "text": "nope"}]})),
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::MemoryNotFound);
        let got = get_context_by_ids(&memory, &parse(json!({"context_ids": [first]}))).unwrap();
        assert_eq!(got.results[0].text_content, "one");
        let err = store_context_batch(&memory, &parse(json!({"entries": []}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("entries"));
    }

    #[test]
    fn filters_cover_threads_tags_dates_and_every_metadata_operator() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let a = store(
            &memory,
            json!({"thread_id": "t1", "source": "user", "text": "alpha",
            "tags": ["x"], "metadata": {"status": "Active", "priority": 5, "done": false,
            "owner": null, "langs": ["rust", "go"], "ref": {"issue": 19}}}),
        )
        .context_id;
        let b = store(
            &memory,
            json!({"thread_id": "t2", "source": "agent", "text": "beta",
            "tags": ["y"], "metadata": {"status": "pending", "priority": 9, "done": true}}),
        )
        .context_id;
        let search = |filters: Value| -> Vec<i64> {
            let mut found = ids(&search_context(&memory, &parse(filters)).unwrap().results);
            found.sort_unstable();
            found
        };
        let op = |operator: &str, key: &str, value: Value| json!({"metadata_filters": [{"key": key, "operator": operator, "value": value}]});
        assert_eq!(search(json!({"thread_id": "t1"})), [a]);
        assert_eq!(search(json!({"source": "agent"})), [b]);
        assert_eq!(search(json!({"tags": ["Y", "z"]})), [b]);
        assert_eq!(search(json!({"metadata": {"status": "pending"}})), [b]);
        assert_eq!(
            search(json!({"metadata": {"status": "active"}})),
            Vec::<i64>::new()
        );
        assert_eq!(search(op("eq", "status", json!("active"))), [a]);
        assert_eq!(search(op("ne", "status", json!("active"))), [b]);
        assert_eq!(search(op("gt", "priority", json!(5))), [b]);
        assert_eq!(search(op("gte", "priority", json!(5))), [a, b]);
        assert_eq!(search(op("lt", "priority", json!(9))), [a]);
        assert_eq!(search(op("lte", "priority", json!(9))), [a, b]);
        assert_eq!(search(op("in", "status", json!(["PENDING", "x"]))), [b]);
        assert_eq!(search(op("not_in", "status", json!(["pending"]))), [a]);
        assert_eq!(search(op("exists", "owner", Value::Null)), [a]);
        assert_eq!(search(op("not_exists", "owner", Value::Null)), [b]);
        assert_eq!(search(op("contains", "status", json!("TIV"))), [a]);
        assert_eq!(search(op("starts_with", "status", json!("pen"))), [b]);
        assert_eq!(search(op("ends_with", "status", json!("ive"))), [a]);
        assert_eq!(search(op("is_null", "owner", Value::Null)), [a]);
        assert_eq!(search(op("is_not_null", "status", Value::Null)), [a, b]);
        assert_eq!(search(op("array_contains", "langs", json!("go"))), [a]);
        assert_eq!(search(op("eq", "done", json!(true))), [b]);
        assert_eq!(search(op("eq", "ref.issue", json!(19))), [a]);
        assert_eq!(
            search(
                json!({"metadata_filters": [{"key": "status", "operator": "eq",
                "value": "active", "case_sensitive": true}]})
            ),
            Vec::<i64>::new()
        );
        let today = format_ms(crate::session::now_ms())[..10].to_string();
        assert_eq!(
            search(json!({"start_date": today, "end_date": today})),
            [a, b]
        );
        assert_eq!(search(json!({"end_date": "2000-01-01"})), Vec::<i64>::new());
        // A key that tries to break out of its JSON path is refused, not interpreted.
        let err =
            search_context(&memory, &parse(op("eq", "a\") OR 1=1 --", json!(1)))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("metadata_filters[0].key"));
    }

    #[test]
    fn searches_rank_filter_before_the_cut_and_fuse() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        // Many strong matches in one thread, one weaker match in another: the filter must
        // apply before the limit, or the other thread's match would be cut.
        for idx in 0..30 {
            store(
                &memory,
                json!({"thread_id": "noise", "source": "agent",
                "text": format!("authentication token rotation authentication {idx}")}),
            );
        }
        let wanted = store(
            &memory,
            json!({"thread_id": "quiet", "source": "user",
            "text": "notes on authentication for the billing service"}),
        )
        .context_id;
        for tool in ["fts", "semantic", "hybrid"] {
            let request = json!({"query": "authentication", "limit": 1, "thread_id": "quiet"});
            let found = match tool {
                "fts" => ids(&fts_search_context(&memory, &parse(request))
                    .unwrap()
                    .results),
                "semantic" => ids(&semantic_search_context(&memory, &parse(request))
                    .unwrap()
                    .results),
                _ => ids(&hybrid_search_context(&memory, &parse(request))
                    .unwrap()
                    .results),
            };
            assert_eq!(found, [wanted], "{tool}");
        }
        let fts = fts_search_context(
            &memory,
            &parse(json!({"query": "billing servic", "mode": "prefix", "highlight": true})),
        )
        .unwrap();
        assert_eq!(ids(&fts.results), [wanted]);
        assert!(
            fts.results[0]
                .highlighted
                .as_deref()
                .unwrap()
                .contains("<mark>billing</mark>")
        );
        assert!(
            fts.results[0].scores.as_ref().unwrap()["fts_score"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let phrase = fts_search_context(
            &memory,
            &parse(json!({"query": "service billing", "mode": "phrase"})),
        )
        .unwrap();
        assert_eq!(phrase.count, 0);
        let boolean = fts_search_context(
            &memory,
            &parse(json!({"query": "authentication NOT rotation", "mode": "boolean"})),
        )
        .unwrap();
        assert_eq!(ids(&boolean.results), [wanted]);
        let err = fts_search_context(
            &memory,
            &parse(json!({"query": "text: OR", "mode": "boolean"})),
        )
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("query"));
        let hybrid = hybrid_search_context(
            &memory,
            &parse(json!({"query": "billing authentication", "limit": 3, "explain_query": true})),
        )
        .unwrap();
        assert_eq!(hybrid.results[0].id, wanted);
        let scores = hybrid.results[0].scores.as_ref().unwrap();
        assert_eq!(scores["fts_rank"], json!(1));
        assert!(scores["rrf"].as_f64().unwrap() > 0.0);
        assert_eq!(hybrid.search_modes_used, ["fts", "semantic"]);
        assert!(hybrid.stats.is_some());
        let semantic =
            semantic_search_context(&memory, &parse(json!({"query": "billing"}))).unwrap();
        assert_eq!(semantic.model, HashedEmbedder.id());
        assert_eq!(semantic.results[0].id, wanted);
    }

    #[test]
    fn updates_deletes_threads_and_statistics() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let id = store(
            &memory,
            json!({"thread_id": "t", "source": "user", "text": "old words",
            "metadata": {"a": 1, "b": 2}}),
        )
        .context_id;
        store(
            &memory,
            json!({"thread_id": "u", "source": "agent", "text": "other"}),
        );
        let updated = update_context(
            &memory,
            &parse(json!({"context_id": id, "text": "fresh words", "metadata_patch": {"b": null, "c": 3}})),
        )
        .unwrap();
        assert_eq!(updated.updated_fields, ["text_content", "metadata"]);
        let got = get_context_by_ids(&memory, &parse(json!({"context_ids": [id]}))).unwrap();
        assert_eq!(
            Value::Object(got.results[0].metadata.clone()),
            json!({"a": 1, "c": 3})
        );
        let old = fts_search_context(&memory, &parse(json!({"query": "old"}))).unwrap();
        assert_eq!(old.count, 0);
        let fresh = fts_search_context(&memory, &parse(json!({"query": "fresh"}))).unwrap();
        assert_eq!(ids(&fresh.results), [id]);
        let err = update_context(
            &memory,
            &parse(json!({"context_id": id, "metadata": {}, "metadata_patch": {}})),
        )
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("metadata_patch"));
        let threads = list_threads(&memory).unwrap();
        assert_eq!(threads.total_threads, 2);
        let stats = get_statistics(&memory).unwrap();
        assert_eq!(stats.total_entries, 2);
        assert_eq!(memory.statistics().unwrap().embedded_entries, 2);
        let err = delete_context_batch(&memory, &parse(json!({"source": "user"}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("source"));
        let deleted = delete_context_batch(
            &memory,
            &parse(json!({"thread_ids": ["t", "u"], "source": "agent"})),
        )
        .unwrap();
        assert_eq!(deleted.deleted_count, 1);
        let deleted = delete_context(&memory, &parse(json!({"thread_id": "t"}))).unwrap();
        assert_eq!(deleted.deleted_count, 1);
        assert_eq!(total(&memory), 0);
    }
}
