//! Seed 000's memory tools, `memory_store` and `memory_find`, on the same knowledge store as
//! the seed-002 tools: a note is an entry of the `memory` thread whose kind, language, path,
//! topic, priority, code, author and creation time are metadata keys and whose tags are the
//! entry's tags (see `memory::note`). `memory_find` is the store's hybrid search (full text and
//! semantic, fused by RRF) with the seed's filters applied before the cut.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ApiError;
use crate::memory::{
    DateBound, Entry, Filter, FtsMode, FtsQuery, KIND_KEY, LANGUAGE_KEY, Memory, MetadataCondition,
    MetadataPath, NOTES_THREAD, NewEntry, NoteKind, Operator, PATH_KEY, PRIORITY_KEY, Page,
    Priority, SearchArm, Source, TOPIC_KEY, format_ms, highlights, parse_date,
};

/// `memory_find`'s limit when none is given (the seed's default).
pub const DEFAULT_FIND_LIMIT: u32 = 10;
/// The RRF constant of `memory_find`.
const FIND_RRF_K: u32 = 60;
/// A string field of a note's metadata, in bytes.
const MAX_NOTE_FIELD_BYTES: usize = 1024;

/// A note's structured metadata: seed 000's keys and no others (a misspelt key is refused, not
/// kept unsearchable). Inline and without `null`s in its schema: every tool definition costs
/// an agent context.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(inline)]
#[serde(deny_unknown_fields)]
pub struct NoteMetadata {
    #[serde(default)]
    #[schemars(with = "String")]
    pub kind: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub language: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub path: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 10))]
    pub priority: Option<i64>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub topic: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub code: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub author: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub created_at: Option<String>,
}

/// `memory_store`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryStoreRequest {
    /// What to remember.
    pub information: String,
    /// kind: snippet, explanation, pattern, example or reference.
    #[serde(default)]
    pub metadata: Option<NoteMetadata>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryStoreResponse {
    pub ok: bool,
    /// The note's id, a string as seed 000 has it (the store's entry id in decimal: the same
    /// entry `get_context_by_ids` reads).
    pub id: String,
    pub message: String,
    /// Secrets masked before storing.
    pub secrets_scrubbed: usize,
}

/// Tags as a list or one comma-separated string.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(inline)]
#[serde(untagged)]
pub enum TagsInput {
    One(String),
    Many(Vec<String>),
}

/// `memory_find`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryFindRequest {
    /// Search text.
    pub query: String,
    /// snippet, explanation, pattern, example or reference.
    #[serde(default)]
    pub kind: Option<String>,
    /// E.g. `python`.
    #[serde(default)]
    pub language: Option<String>,
    /// The topic.
    #[serde(default)]
    pub topic: Option<String>,
    /// Any of these; a list or comma-separated.
    #[serde(default)]
    pub tags: Option<TagsInput>,
    /// Default 10.
    #[serde(default = "default_find_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// 1–10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub priority_min: Option<i64>,
}

fn default_find_limit() -> u32 {
    DEFAULT_FIND_LIMIT
}

/// One note found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryHit {
    /// The note's id (a string, as `memory_store` returned it).
    pub id: String,
    pub information: String,
    /// The note's metadata with its `tags` and `created_at`.
    pub metadata: Map<String, Value>,
    /// The fused (RRF) score.
    pub score: f64,
    /// Fragments with the query's words marked `<<word>>`.
    pub highlights: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryFindResponse {
    pub ok: bool,
    pub results: Vec<MemoryHit>,
    /// Distinct candidates the two searches found (the results are their best `limit`).
    pub total: usize,
    pub query: String,
}

/// `memory_store`: a note in the `memory` thread, masked and embedded like every entry.
pub fn memory_store(
    memory: &Memory<'_>,
    request: &MemoryStoreRequest,
) -> Result<MemoryStoreResponse, ApiError> {
    let metadata = request.metadata.clone().unwrap_or_default();
    let mut map = Map::new();
    if let Some(kind) = &metadata.kind {
        let kind = NoteKind::parse("metadata.kind", kind)?;
        map.insert(KIND_KEY.to_string(), Value::from(kind.as_str()));
    }
    if let Some(priority) = metadata.priority {
        let priority = Priority::new("metadata.priority", priority)?;
        map.insert(PRIORITY_KEY.to_string(), Value::from(priority.get()));
    }
    for (key, value) in [
        (LANGUAGE_KEY, &metadata.language),
        (PATH_KEY, &metadata.path),
        (TOPIC_KEY, &metadata.topic),
        ("author", &metadata.author),
    ] {
        if let Some(value) = value {
            let value = note_field(&format!("metadata.{key}"), value)?;
            map.insert(key.to_string(), Value::from(value));
        }
    }
    if let Some(code) = &metadata.code {
        map.insert("code".to_string(), Value::from(code.as_str()));
    }
    if let Some(created_at) = &metadata.created_at {
        let ms = parse_date("metadata.created_at", created_at, DateBound::Start)?;
        map.insert("created_at".to_string(), Value::from(format_ms(ms)));
    }
    let entry = NewEntry::new(
        NOTES_THREAD,
        Source::Agent,
        &request.information,
        map,
        &metadata.tags,
        Vec::new(),
    )
    .map_err(|err| {
        // The entry's `text` is the seed's `information`; its tags sit under `metadata`.
        let error = ApiError::from(err);
        match error.field.clone() {
            Some(field) if field == "text" => error.at("information"),
            Some(field) if field.starts_with("tags") => error.at(format!("metadata.{field}")),
            _ => error,
        }
    })?;
    let stored = memory
        .store_entries(std::slice::from_ref(&entry), true)?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::new(crate::ErrorCode::InternalError, "nothing was stored"))??;
    let mut message = "Successfully stored information".to_string();
    if stored.n_secrets_scrubbed > 0 {
        message.push_str(&format!(
            "; {} secret(s) were masked before storing",
            stored.n_secrets_scrubbed
        ));
    }
    Ok(MemoryStoreResponse {
        ok: true,
        id: stored.id.to_string(),
        message,
        secrets_scrubbed: stored.n_secrets_scrubbed,
    })
}

/// `memory_find`: hybrid search over every entry, the seed's filters before the cut.
pub fn memory_find(
    memory: &Memory<'_>,
    request: &MemoryFindRequest,
) -> Result<MemoryFindResponse, ApiError> {
    let text = request.query.trim();
    if text.is_empty() {
        return Err(ApiError::invalid("query", "must not be empty"));
    }
    if !(1..=100).contains(&request.limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("limit must be between 1 and 100, got {}", request.limit),
        ));
    }
    let filter = find_filter(request)?;
    let query = FtsQuery::build("query", text, FtsMode::Match)?;
    let outcome = memory.hybrid(
        query.as_ref(),
        text,
        &[SearchArm::Fts, SearchArm::Semantic],
        FIND_RRF_K,
        &filter,
        Page {
            limit: request.limit as usize,
            offset: 0,
        },
        false,
    )?;
    let results = outcome
        .hits
        .into_iter()
        .map(|hit| MemoryHit {
            highlights: highlights(&hit.entry.text, text),
            score: hit.scores.rrf.unwrap_or_default(),
            id: hit.entry.id.to_string(),
            metadata: note_metadata(&hit.entry),
            information: hit.entry.text,
        })
        .collect();
    Ok(MemoryFindResponse {
        ok: true,
        results,
        total: outcome.n_fused,
        query: request.query.clone(),
    })
}

/// A note's metadata as `memory_find` shows it: the stored keys plus its tags and creation
/// time (the one given at `memory_store`, else when it was stored).
fn note_metadata(entry: &Entry) -> Map<String, Value> {
    let mut map = entry.metadata.clone();
    map.insert("tags".to_string(), Value::from(entry.tags.clone()));
    if !map.contains_key("created_at") {
        map.insert(
            "created_at".to_string(),
            Value::from(format_ms(entry.created_ms)),
        );
    }
    map
}

fn find_filter(request: &MemoryFindRequest) -> Result<Filter, ApiError> {
    let mut filter = Filter::default();
    let mut equals = |field: &str, key: &str, value: String| -> Result<(), ApiError> {
        let path = MetadataPath::parse(field, key)?;
        filter.metadata.push(MetadataCondition::new(
            field,
            path,
            Operator::Eq,
            Some(Value::from(value)),
            false,
        )?);
        Ok(())
    };
    if let Some(kind) = &request.kind {
        let kind = NoteKind::parse("kind", kind)?;
        equals("kind", KIND_KEY, kind.as_str().to_string())?;
    }
    if let Some(language) = &request.language {
        equals("language", LANGUAGE_KEY, note_field("language", language)?)?;
    }
    if let Some(topic) = &request.topic {
        equals("topic", TOPIC_KEY, note_field("topic", topic)?)?;
    }
    if let Some(priority_min) = request.priority_min {
        let priority = Priority::new("priority_min", priority_min)?;
        let path = MetadataPath::parse("priority_min", PRIORITY_KEY)?;
        filter.metadata.push(MetadataCondition::new(
            "priority_min",
            path,
            Operator::Gte,
            Some(Value::from(priority.get())),
            false,
        )?);
    }
    let tags: Vec<String> = match &request.tags {
        None => Vec::new(),
        Some(TagsInput::One(text)) => text
            .split(',')
            .map(str::trim)
            .filter(|tag| !tag.is_empty())
            .map(str::to_string)
            .collect(),
        Some(TagsInput::Many(tags)) => tags.clone(),
    };
    filter.tags = crate::memory::normalize_filter_tags(&tags)?;
    Ok(filter)
}

/// A short string field of a note (a language, a path, a topic): trimmed, bounded, one line.
fn note_field(field: &str, value: &str) -> Result<String, ApiError> {
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_NOTE_FIELD_BYTES || value.chars().any(char::is_control)
    {
        return Err(ApiError::invalid(
            field,
            format!("1 to {MAX_NOTE_FIELD_BYTES} bytes on one line"),
        ));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tollgate_index::HashedEmbedder;

    use super::*;
    use crate::ErrorCode;
    use crate::api::memory::{GetContextByIdsRequest, get_context_by_ids};
    use crate::store::Store;

    fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    fn find(memory: &Memory<'_>, request: Value) -> MemoryFindResponse {
        memory_find(memory, &parse(request)).unwrap()
    }

    fn ids(found: &MemoryFindResponse) -> Vec<String> {
        found.results.iter().map(|hit| hit.id.clone()).collect()
    }

    #[test]
    fn a_note_is_an_entry_of_the_memory_thread_with_its_fields_as_metadata() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let stored = memory_store(
            &memory,
            &parse(json!({"information": "Efficient Python pattern for processing large files using generators",
                "metadata": {"kind": "Pattern", "language": "python", "path": "utils/file_processor.py",
                    "tags": ["Python", "generators"], "priority": 8, "topic": "performance",
                    "code": format!("def f(): return '{token}'")}})),
        )
        .unwrap();
        assert!(stored.ok);
        assert_eq!(stored.secrets_scrubbed, 1);
        // The seed-002 tools see the same entry.
        let got = get_context_by_ids(
            &memory,
            &GetContextByIdsRequest {
                context_ids: vec![stored.id.parse().unwrap()],
                include_images: false,
            },
        )
        .unwrap();
        let entry = &got.results[0];
        assert_eq!(entry.thread_id, NOTES_THREAD);
        assert_eq!(entry.tags, ["generators", "python"]);
        assert_eq!(entry.metadata["kind"], "pattern");
        assert_eq!(entry.metadata["priority"], 8);
        assert!(!entry.metadata["code"].as_str().unwrap().contains(&token));

        let found = find(
            &memory,
            json!({"query": "python file processing generators"}),
        );
        assert_eq!(ids(&found), std::slice::from_ref(&stored.id));
        let hit = &found.results[0];
        assert_eq!(hit.metadata["path"], "utils/file_processor.py");
        assert_eq!(hit.metadata["tags"], json!(["generators", "python"]));
        assert!(hit.metadata["created_at"].as_str().unwrap().ends_with('Z'));
        assert!(hit.score > 0.0);
        assert!(
            hit.highlights.iter().any(|h| h.contains("<<Python>>")),
            "{:?}",
            hit.highlights
        );
        assert_eq!(found.query, "python file processing generators");
    }

    #[test]
    fn find_filters_apply_before_the_cut() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        // Many better matches of another kind: the filter must run before the limit.
        for idx in 0..20 {
            memory_store(
                &memory,
                &parse(
                    json!({"information": format!("database connection pooling tips {idx}"),
                    "metadata": {"kind": "explanation", "language": "go", "priority": 3}}),
                ),
            )
            .unwrap();
        }
        let wanted = memory_store(
            &memory,
            &parse(
                json!({"information": "pooling database connections with sqlalchemy",
                "metadata": {"kind": "pattern", "language": "Python", "priority": 9,
                    "topic": "db", "tags": ["sql", "pool"]}}),
            ),
        )
        .unwrap()
        .id;
        for request in [
            json!({"query": "database connection pooling", "kind": "pattern", "limit": 1}),
            json!({"query": "database connection pooling", "language": "python", "limit": 1}),
            json!({"query": "database connection pooling", "topic": "DB", "limit": 1}),
            json!({"query": "database connection pooling", "priority_min": 5, "limit": 1}),
            json!({"query": "database connection pooling", "tags": "x, SQL", "limit": 1}),
            json!({"query": "database connection pooling", "tags": ["pool"], "limit": 1}),
        ] {
            assert_eq!(
                ids(&find(&memory, request.clone())),
                std::slice::from_ref(&wanted),
                "{request}"
            );
        }
        let all = find(&memory, json!({"query": "database connection pooling"}));
        assert_eq!(all.results.len(), 10);
        assert_eq!(all.total, 21);
        let none = find(
            &memory,
            json!({"query": "database", "kind": "snippet", "priority_min": 10}),
        );
        assert!(none.results.is_empty());
    }

    #[test]
    fn bad_notes_name_the_field_and_store_nothing() {
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let cases = [
            (json!({"information": " "}), "information"),
            (
                json!({"information": "x", "metadata": {"kind": "recipe"}}),
                "metadata.kind",
            ),
            (
                json!({"information": "x", "metadata": {"priority": 11}}),
                "metadata.priority",
            ),
            (
                json!({"information": "x", "metadata": {"created_at": "soon"}}),
                "metadata.created_at",
            ),
            (
                json!({"information": "x", "metadata": {"tags": [""]}}),
                "metadata.tags[0]",
            ),
            (
                json!({"information": "x", "metadata": {"path": "a\nb"}}),
                "metadata.path",
            ),
        ];
        for (request, field) in cases {
            let err = memory_store(&memory, &parse(request.clone())).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidInput, "{request}");
            assert_eq!(err.field.as_deref(), Some(field), "{request}: {err}");
        }
        assert_eq!(memory.statistics().unwrap().total_entries, 0);
        let misspelt = serde_json::from_value::<MemoryStoreRequest>(
            json!({"information": "x", "metadata": {"langauge": "go"}}),
        );
        assert!(misspelt.unwrap_err().to_string().contains("langauge"));
        for (request, field) in [
            (json!({"query": "x", "kind": "recipe"}), "kind"),
            (json!({"query": "x", "priority_min": 0}), "priority_min"),
            (json!({"query": "x", "limit": 0}), "limit"),
            (json!({"query": ""}), "query"),
        ] {
            let err = memory_find(&memory, &parse(request.clone())).unwrap_err();
            assert_eq!(err.field.as_deref(), Some(field), "{request}: {err}");
        }
    }
}
