//! The knowledge store's SQL: entries with their tags, images and embeddings, the FTS5 index
//! (kept in step by triggers, see `migrations/0500_memory.sql`), and the translation of a
//! [`Filter`] into a `WHERE` clause whose every value is a bound parameter.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Transaction, params_from_iter};
use serde_json::{Map, Value};

use super::StoreError;
use super::quota::{self, MemoryQuota};
use crate::memory::{
    ContentType, DeleteCriteria, Entry, Filter, FtsQuery, Image, ImageMime, MetadataChange,
    MetadataCondition, Operator, Source, Statistics, ThreadSummary,
};

/// One entry to insert: validated, scrubbed and embedded by `memory`.
#[derive(Debug)]
pub(crate) struct InsertRow<'a> {
    pub thread_id: &'a str,
    pub source: Source,
    pub text: &'a str,
    pub metadata: &'a Map<String, Value>,
    pub tags: &'a [String],
    pub images: &'a [Image],
    pub embedding: Option<(&'a str, &'a [f32])>,
    pub now_ms: i64,
}

/// One entry to change; `None` leaves a field as it is.
#[derive(Debug)]
pub(crate) struct UpdateRow<'a> {
    pub id: i64,
    pub text: Option<&'a str>,
    pub embedding: Option<(&'a str, &'a [f32])>,
    pub metadata: Option<&'a MetadataChange>,
    pub tags: Option<&'a [String]>,
    pub images: Option<&'a [Image]>,
    pub now_ms: i64,
}

/// A full-text hit: entry id, BM25 relevance (higher is better), highlighted text if asked.
pub(crate) type FtsHit = (i64, f64, Option<String>);

/// Inserts `rows` in one transaction; their ids in order.
pub(crate) fn insert_all(
    tx: &Transaction<'_>,
    quota: &MemoryQuota,
    rows: &[InsertRow<'_>],
) -> Result<Vec<i64>, StoreError> {
    let threads: Vec<&str> = rows.iter().map(|row| row.thread_id).collect();
    within_quota(tx, quota, &threads, || {
        rows.iter().map(|row| insert(tx, row)).collect()
    })
}

/// Runs `write` and refuses its result (the caller's transaction then rolls back) when it
/// leaves the store or one of `threads` over `quota`.
fn within_quota<T>(
    tx: &Transaction<'_>,
    quota: &MemoryQuota,
    threads: &[&str],
    write: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut threads = threads.to_vec();
    threads.sort_unstable();
    threads.dedup();
    let before = quota::usage(tx, &threads)?;
    let written = write()?;
    quota.check(&before, &quota::usage(tx, &threads)?)?;
    Ok(written)
}

/// Records the bytes entry `id` keeps now (which the usage triggers add to its thread's).
fn record_size(tx: &Transaction<'_>, id: i64) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE memory_entries SET stored_bytes =
             length(CAST(text AS BLOB)) + length(CAST(metadata AS BLOB))
             + COALESCE((SELECT SUM(length(CAST(tag AS BLOB))) FROM memory_tags WHERE entry_id = ?1), 0)
             + COALESCE((SELECT SUM(length(data)) FROM memory_images WHERE entry_id = ?1), 0)
             + COALESCE((SELECT length(vector) FROM memory_embeddings WHERE entry_id = ?1), 0)
         WHERE id = ?1",
        [id],
    )?;
    Ok(())
}

/// Applies `rows`, all or none: when an id does not exist nothing is written and the missing
/// ids are returned as `Err(ids)`.
pub(crate) fn update_all(
    tx: &Transaction<'_>,
    quota: &MemoryQuota,
    rows: &[UpdateRow<'_>],
) -> Result<Result<(), Vec<i64>>, StoreError> {
    let mut missing = Vec::new();
    let mut threads = Vec::with_capacity(rows.len());
    for row in rows {
        match thread_of(tx, row.id)? {
            Some(thread) => threads.push(thread),
            None => missing.push(row.id),
        }
    }
    if !missing.is_empty() {
        return Ok(Err(missing));
    }
    let threads: Vec<&str> = threads.iter().map(String::as_str).collect();
    within_quota(tx, quota, &threads, || {
        for row in rows {
            update(tx, row)?;
        }
        Ok(Ok(()))
    })
}

fn thread_of(tx: &Transaction<'_>, id: i64) -> Result<Option<String>, StoreError> {
    Ok(tx
        .query_row(
            "SELECT thread_id FROM memory_entries WHERE id = ?1",
            [id],
            |row| row.get(0),
        )
        .optional()?)
}

/// The entries with these ids that exist, in the order asked.
pub(crate) fn get(
    tx: &Connection,
    ids: &[i64],
    include_images: bool,
) -> Result<Vec<Entry>, StoreError> {
    hydrate(tx, ids, include_images)
}

/// Entries matching `filter`, newest first.
pub(crate) fn list(
    tx: &Connection,
    filter: &Filter,
    limit: usize,
    offset: usize,
    include_images: bool,
) -> Result<Vec<Entry>, StoreError> {
    let mut params = Vec::new();
    let clause = where_clause(filter, &mut params);
    let sql = format!(
        "SELECT e.id FROM memory_entries e WHERE {clause}
                 ORDER BY e.created_ms DESC, e.id DESC LIMIT {} OFFSET {}",
        sql_count(limit),
        sql_count(offset)
    );
    let ids = ids_of(tx, &sql, &params)?;
    hydrate(tx, &ids, include_images)
}

/// The best `limit` full-text hits among entries matching `filter` (the filter applies
/// before the cut), best first.
pub(crate) fn fts(
    tx: &Connection,
    query: &FtsQuery,
    filter: &Filter,
    limit: usize,
    highlight: bool,
) -> Result<Vec<FtsHit>, StoreError> {
    let mut params = vec![SqlValue::Text(query.as_str().to_string())];
    let clause = where_clause(filter, &mut params);
    let highlight_sql = if highlight {
        "highlight(memory_fts, 0, '<mark>', '</mark>')"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT e.id, bm25(memory_fts) AS relevance, {highlight_sql}
                 FROM memory_fts JOIN memory_entries e ON e.id = memory_fts.rowid
                 WHERE memory_fts MATCH ?1 AND {clause}
                 ORDER BY relevance, e.id LIMIT {}",
        sql_count(limit)
    );
    let mut stmt = tx.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |row| {
        Ok((row.get::<_, i64>(0)?, -row.get::<_, f64>(1)?, row.get(2)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Calls `visit` with the id and vector bytes of every entry matching `filter` embedded by
/// `model`.
pub(crate) fn vectors(
    tx: &Connection,
    model: &str,
    filter: &Filter,
    mut visit: impl FnMut(i64, &[u8]),
) -> Result<(), StoreError> {
    let mut params = vec![SqlValue::Text(model.to_string())];
    let clause = where_clause(filter, &mut params);
    let sql = format!(
        "SELECT e.id, v.vector FROM memory_entries e
                 JOIN memory_embeddings v ON v.entry_id = e.id
                 WHERE v.model = ?1 AND {clause}"
    );
    let mut stmt = tx.prepare(&sql)?;
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let bytes = row.get_ref(1)?.as_blob().unwrap_or_default();
        visit(id, bytes);
    }
    Ok(())
}

/// Deletes what `criteria` selects; how many entries went.
pub(crate) fn delete(tx: &Transaction<'_>, criteria: &DeleteCriteria) -> Result<usize, StoreError> {
    let mut conditions = Vec::new();
    let mut params = Vec::new();
    if !criteria.ids.is_empty() {
        conditions.push(format!(
            "id IN ({})",
            placeholders(
                &mut params,
                criteria.ids.iter().map(|id| SqlValue::Integer(*id))
            )
        ));
    }
    if !criteria.thread_ids.is_empty() {
        conditions.push(format!(
            "thread_id IN ({})",
            placeholders(
                &mut params,
                criteria
                    .thread_ids
                    .iter()
                    .map(|t| SqlValue::Text(t.clone()))
            )
        ));
    }
    if let Some(source) = criteria.source {
        params.push(SqlValue::Text(source.as_str().to_string()));
        conditions.push(format!("source = ?{}", params.len()));
    }
    if let Some(before) = criteria.created_before_ms {
        params.push(SqlValue::Integer(before));
        conditions.push(format!("created_ms < ?{}", params.len()));
    }
    if conditions.is_empty() {
        return Ok(0);
    }
    let sql = format!(
        "DELETE FROM memory_entries WHERE {}",
        conditions.join(" AND ")
    );
    Ok(tx.execute(&sql, params_from_iter(params.iter()))?)
}

/// Every thread with its counts, most recently active first.
pub(crate) fn threads(tx: &Connection) -> Result<Vec<ThreadSummary>, StoreError> {
    let mut stmt = tx.prepare(
        "SELECT thread_id, count(*),
                        sum(source = 'user'), sum(source = 'agent'),
                        sum(content_type = 'multimodal'),
                        min(created_ms), max(created_ms)
                 FROM memory_entries GROUP BY thread_id
                 ORDER BY max(created_ms) DESC, thread_id",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(ThreadSummary {
            thread_id: row.get(0)?,
            entry_count: count(row.get(1)?),
            user_count: count(row.get(2)?),
            agent_count: count(row.get(3)?),
            multimodal_count: count(row.get(4)?),
            first_ms: row.get(5)?,
            last_ms: row.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Totals over the whole store.
/// The mark called `name`, if one was set.
pub(crate) fn mark(tx: &Connection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(tx
        .query_row(
            "SELECT value FROM memory_marks WHERE name = ?1",
            [name],
            |row| row.get(0),
        )
        .optional()?)
}

pub(crate) fn set_mark(tx: &Transaction<'_>, name: &str, value: &str) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO memory_marks (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )?;
    Ok(())
}

pub(crate) fn statistics(tx: &Connection) -> Result<Statistics, StoreError> {
    let (total, user, agent, multimodal, threads): (i64, i64, i64, i64, i64) = tx.query_row(
        "SELECT count(*), coalesce(sum(source = 'user'), 0),
                            coalesce(sum(source = 'agent'), 0),
                            coalesce(sum(content_type = 'multimodal'), 0),
                            count(DISTINCT thread_id)
                     FROM memory_entries",
        [],
        |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            ))
        },
    )?;
    let images: i64 = tx.query_row("SELECT count(*) FROM memory_images", [], |row| row.get(0))?;
    let tags: i64 = tx.query_row("SELECT count(DISTINCT tag) FROM memory_tags", [], |row| {
        row.get(0)
    })?;
    let embedded: i64 = tx.query_row("SELECT count(*) FROM memory_embeddings", [], |row| {
        row.get(0)
    })?;
    let bytes: i64 = tx.query_row(
        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
        [],
        |row| row.get(0),
    )?;
    Ok(Statistics {
        total_entries: count(total),
        user_entries: count(user),
        agent_entries: count(agent),
        multimodal_entries: count(multimodal),
        total_threads: count(threads),
        total_images: count(images),
        unique_tags: count(tags),
        embedded_entries: count(embedded),
        database_bytes: count(bytes),
    })
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A `LIMIT`/`OFFSET` literal (an integer the caller bounded; never user text).
fn sql_count(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn insert(tx: &Transaction<'_>, row: &InsertRow<'_>) -> Result<i64, StoreError> {
    let content_type = if row.images.is_empty() {
        ContentType::Text
    } else {
        ContentType::Multimodal
    };
    tx.execute(
        "INSERT INTO memory_entries (thread_id, source, text, metadata, content_type, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        (
            row.thread_id,
            row.source.as_str(),
            row.text,
            Value::Object(row.metadata.clone()).to_string(),
            content_type.as_str(),
            row.now_ms,
        ),
    )?;
    let id = tx.last_insert_rowid();
    write_tags(tx, id, row.tags)?;
    write_images(tx, id, row.images)?;
    if let Some((model, vector)) = row.embedding {
        write_embedding(tx, id, model, vector)?;
    }
    record_size(tx, id)?;
    Ok(id)
}

fn update(tx: &Transaction<'_>, row: &UpdateRow<'_>) -> Result<(), StoreError> {
    if let Some(text) = row.text {
        tx.execute(
            "UPDATE memory_entries SET text = ?2 WHERE id = ?1",
            (row.id, text),
        )?;
        tx.execute(
            "DELETE FROM memory_embeddings WHERE entry_id = ?1",
            [row.id],
        )?;
        if let Some((model, vector)) = row.embedding {
            write_embedding(tx, row.id, model, vector)?;
        }
    }
    match row.metadata {
        Some(MetadataChange::Replace(metadata)) => {
            tx.execute(
                "UPDATE memory_entries SET metadata = ?2 WHERE id = ?1",
                (row.id, Value::Object(metadata.clone()).to_string()),
            )?;
        }
        Some(MetadataChange::Patch(patch)) => {
            // SQLite's json_patch is RFC 7396 (`memory::merge_patch` is the same rule in Rust).
            tx.execute(
                "UPDATE memory_entries SET metadata = json_patch(metadata, ?2) WHERE id = ?1",
                (row.id, Value::Object(patch.clone()).to_string()),
            )?;
        }
        None => {}
    }
    if let Some(tags) = row.tags {
        tx.execute("DELETE FROM memory_tags WHERE entry_id = ?1", [row.id])?;
        write_tags(tx, row.id, tags)?;
    }
    if let Some(images) = row.images {
        tx.execute("DELETE FROM memory_images WHERE entry_id = ?1", [row.id])?;
        write_images(tx, row.id, images)?;
        let content_type = if images.is_empty() {
            ContentType::Text
        } else {
            ContentType::Multimodal
        };
        tx.execute(
            "UPDATE memory_entries SET content_type = ?2 WHERE id = ?1",
            (row.id, content_type.as_str()),
        )?;
    }
    tx.execute(
        "UPDATE memory_entries SET updated_ms = ?2 WHERE id = ?1",
        (row.id, row.now_ms),
    )?;
    record_size(tx, row.id)
}

fn write_tags(tx: &Transaction<'_>, id: i64, tags: &[String]) -> Result<(), StoreError> {
    let mut stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO memory_tags (entry_id, tag) VALUES (?1, ?2)")?;
    for tag in tags {
        stmt.execute((id, tag))?;
    }
    Ok(())
}

fn write_images(tx: &Transaction<'_>, id: i64, images: &[Image]) -> Result<(), StoreError> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO memory_images (entry_id, position, mime_type, data) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, image) in images.iter().enumerate() {
        stmt.execute((id, sql_count(position), image.mime().as_str(), image.data()))?;
    }
    Ok(())
}

fn write_embedding(
    tx: &Transaction<'_>,
    id: i64,
    model: &str,
    vector: &[f32],
) -> Result<(), StoreError> {
    let bytes = crate::memory::vector::encode(vector);
    tx.prepare_cached(
        "INSERT OR REPLACE INTO memory_embeddings (entry_id, model, vector) VALUES (?1, ?2, ?3)",
    )?
    .execute((id, model, bytes))?;
    Ok(())
}

fn ids_of(tx: &Connection, sql: &str, params: &[SqlValue]) -> Result<Vec<i64>, StoreError> {
    let mut stmt = tx.prepare(sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |row| row.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The entries with `ids`, in that order (missing ones left out).
fn hydrate(tx: &Connection, ids: &[i64], include_images: bool) -> Result<Vec<Entry>, StoreError> {
    let mut entries = Vec::with_capacity(ids.len());
    let mut entry_stmt = tx.prepare_cached(
        "SELECT thread_id, source, content_type, text, metadata, created_ms, updated_ms
         FROM memory_entries WHERE id = ?1",
    )?;
    let mut tag_stmt =
        tx.prepare_cached("SELECT tag FROM memory_tags WHERE entry_id = ?1 ORDER BY tag")?;
    let mut image_stmt = tx.prepare_cached(
        "SELECT mime_type, data FROM memory_images WHERE entry_id = ?1 ORDER BY position",
    )?;
    for &id in ids {
        let mut rows = entry_stmt.query([id])?;
        let Some(row) = rows.next()? else {
            continue;
        };
        let corrupt = |what: &str, value: String| StoreError::Corrupt {
            what: format!("memory entry {id}: {what}"),
            reason: value,
        };
        let source: String = row.get(1)?;
        let content_type: String = row.get(2)?;
        let metadata: String = row.get(4)?;
        let metadata = match serde_json::from_str::<Value>(&metadata) {
            Ok(Value::Object(map)) => map,
            _ => return Err(corrupt("metadata", metadata)),
        };
        let mut entry = Entry {
            id,
            thread_id: row.get(0)?,
            source: Source::parse(&source).ok_or_else(|| corrupt("source", source.clone()))?,
            content_type: ContentType::parse(&content_type)
                .ok_or_else(|| corrupt("content type", content_type.clone()))?,
            text: row.get(3)?,
            metadata,
            tags: Vec::new(),
            images: Vec::new(),
            created_ms: row.get(5)?,
            updated_ms: row.get(6)?,
        };
        drop(rows);
        entry.tags = tag_stmt
            .query_map([id], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        if include_images {
            let images: Vec<(String, Vec<u8>)> = image_stmt
                .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?;
            for (mime, data) in images {
                let mime =
                    ImageMime::parse(&mime).ok_or_else(|| corrupt("image type", mime.clone()))?;
                entry.images.push(Image::stored(mime, data));
            }
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// `?N, ?N+1, …` for `values`, appended to `params`.
fn placeholders(params: &mut Vec<SqlValue>, values: impl Iterator<Item = SqlValue>) -> String {
    let mut out = Vec::new();
    for value in values {
        params.push(value);
        out.push(format!("?{}", params.len()));
    }
    out.join(", ")
}

fn bind(params: &mut Vec<SqlValue>, value: SqlValue) -> String {
    params.push(value);
    format!("?{}", params.len())
}

/// The filter as SQL over `memory_entries e`; every value goes to `params` (numbered).
fn where_clause(filter: &Filter, params: &mut Vec<SqlValue>) -> String {
    let mut conditions = vec!["1".to_string()];
    if let Some(thread_id) = &filter.thread_id {
        let p = bind(params, SqlValue::Text(thread_id.clone()));
        conditions.push(format!("e.thread_id = {p}"));
    }
    if let Some(source) = filter.source {
        let p = bind(params, SqlValue::Text(source.as_str().to_string()));
        conditions.push(format!("e.source = {p}"));
    }
    if let Some(content_type) = filter.content_type {
        let p = bind(params, SqlValue::Text(content_type.as_str().to_string()));
        conditions.push(format!("e.content_type = {p}"));
    }
    if !filter.tags.is_empty() {
        let list = placeholders(
            params,
            filter.tags.iter().map(|t| SqlValue::Text(t.clone())),
        );
        conditions.push(format!(
            "EXISTS (SELECT 1 FROM memory_tags t WHERE t.entry_id = e.id AND t.tag IN ({list}))"
        ));
    }
    if let Some(from) = filter.created_from_ms {
        let p = bind(params, SqlValue::Integer(from));
        conditions.push(format!("e.created_ms >= {p}"));
    }
    if let Some(to) = filter.created_to_ms {
        let p = bind(params, SqlValue::Integer(to));
        conditions.push(format!("e.created_ms <= {p}"));
    }
    for condition in &filter.metadata {
        conditions.push(metadata_condition(condition, params));
    }
    conditions.join(" AND ")
}

/// One metadata condition. `x` is the value at the path (SQL form), `t` its JSON type (SQL
/// `NULL` when the key is absent, `'null'` for a JSON null).
fn metadata_condition(condition: &MetadataCondition, params: &mut Vec<SqlValue>) -> String {
    let path = bind(params, SqlValue::Text(condition.path().json_path()));
    let x = format!("json_extract(e.metadata, {path})");
    let t = format!("json_type(e.metadata, {path})");
    let case_sensitive = condition.case_sensitive();
    let value = condition.value();
    let equals = |params: &mut Vec<SqlValue>, value: &Value, x: &str, t: &str| {
        scalar_equals(params, value, x, t, case_sensitive)
    };
    let text_op = |params: &mut Vec<SqlValue>, build: &dyn Fn(&str, &str) -> String| {
        let needle = value.as_str().unwrap_or_default();
        let p = bind(params, SqlValue::Text(needle.to_string()));
        let (x, p) = if case_sensitive {
            (x.clone(), p)
        } else {
            (format!("lower({x})"), format!("lower({p})"))
        };
        format!("({t} = 'text' AND {})", build(&x, &p))
    };
    match condition.operator() {
        Operator::Eq => equals(params, value, &x, &t),
        Operator::Ne => format!(
            "({t} IS NOT NULL AND NOT {})",
            equals(params, value, &x, &t)
        ),
        Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => {
            let op = match condition.operator() {
                Operator::Gt => ">",
                Operator::Gte => ">=",
                Operator::Lt => "<",
                _ => "<=",
            };
            match value {
                Value::String(text) => {
                    let p = bind(params, SqlValue::Text(text.clone()));
                    format!("({t} = 'text' AND {x} {op} {p})")
                }
                number => {
                    let p = bind(params, number_value(number));
                    format!("({t} IN ('integer', 'real') AND {x} {op} {p})")
                }
            }
        }
        Operator::In | Operator::NotIn => {
            let any: Vec<String> = value
                .as_array()
                .into_iter()
                .flatten()
                .map(|item| equals(params, item, &x, &t))
                .collect();
            let any = format!("({})", any.join(" OR "));
            if condition.operator() == Operator::In {
                any
            } else {
                format!("({t} IS NOT NULL AND NOT {any})")
            }
        }
        Operator::Exists => format!("{t} IS NOT NULL"),
        Operator::NotExists => format!("{t} IS NULL"),
        Operator::IsNull => format!("{t} = 'null'"),
        Operator::IsNotNull => format!("({t} IS NOT NULL AND {t} != 'null')"),
        Operator::Contains => text_op(params, &|x, p| format!("instr({x}, {p}) > 0")),
        Operator::StartsWith => {
            text_op(params, &|x, p| format!("substr({x}, 1, length({p})) = {p}"))
        }
        Operator::EndsWith => text_op(params, &|x, p| {
            format!("length({x}) >= length({p}) AND substr({x}, -length({p})) = {p}")
        }),
        Operator::ArrayContains => {
            let inner = equals(params, value, "j.value", "j.type");
            format!(
                "({t} = 'array' AND EXISTS (SELECT 1 FROM json_each(e.metadata, {path}) j WHERE {inner}))"
            )
        }
    }
}

fn scalar_equals(
    params: &mut Vec<SqlValue>,
    value: &Value,
    x: &str,
    t: &str,
    case_sensitive: bool,
) -> String {
    match value {
        Value::String(text) => {
            let p = bind(params, SqlValue::Text(text.clone()));
            if case_sensitive {
                format!("({t} = 'text' AND {x} = {p})")
            } else {
                format!("({t} = 'text' AND lower({x}) = lower({p}))")
            }
        }
        Value::Bool(true) => format!("({t} = 'true')"),
        Value::Bool(false) => format!("({t} = 'false')"),
        Value::Null => format!("({t} = 'null')"),
        number @ Value::Number(_) => {
            let p = bind(params, number_value(number));
            format!("({t} IN ('integer', 'real') AND {x} = {p})")
        }
        // Refused by `MetadataCondition::new`; matches nothing if it ever got here.
        Value::Array(_) | Value::Object(_) => "0".to_string(),
    }
}

fn number_value(value: &Value) -> SqlValue {
    match value.as_i64() {
        Some(int) => SqlValue::Integer(int),
        None => SqlValue::Real(value.as_f64().unwrap_or(f64::NAN)),
    }
}
