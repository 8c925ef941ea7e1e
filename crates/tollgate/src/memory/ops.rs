//! The operations: store (masked, embedded, atomic or one by one), get, list, the three
//! searches, update, delete, threads and statistics.

use std::collections::HashMap;

use serde_json::{Map, Value};
use tollgate_index::Embedder;

use super::entry::{check_images, check_metadata, check_text, normalize_tags};
use super::{Entry, Filter, FtsQuery, Image, MemoryError, NewEntry, Page, Source};
use crate::secrets;
use crate::store::memory::{self as sql, InsertRow, UpdateRow};
use crate::store::{Store, StoreError};

/// The knowledge store of one [`Store`], embedding with one [`Embedder`].
#[derive(Debug, Clone, Copy)]
pub struct Memory<'a> {
    store: &'a Store,
    embedder: &'a dyn Embedder,
}

/// What storing one entry did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    /// Secrets masked before the entry was written.
    pub n_secrets_scrubbed: usize,
}

/// A change of metadata: replaced whole, or merged (RFC 7396).
#[derive(Debug, Clone, PartialEq)]
pub enum MetadataChange {
    Replace(Map<String, Value>),
    Patch(Map<String, Value>),
}

/// Most ids (and thread ids) one delete names: each is a bound SQL parameter, and SQLite takes
/// at most 32,766 in a statement.
pub const MAX_DELETE_IDS: usize = 10_000;

/// A change to one entry; at least one field is set (checked by [`EntryUpdate::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EntryUpdate {
    id: i64,
    text: Option<String>,
    metadata: Option<MetadataChange>,
    tags: Option<Vec<String>>,
    images: Option<Vec<Image>>,
    /// Secrets already masked in the tags.
    masked: usize,
}

impl EntryUpdate {
    pub fn new(
        id: i64,
        text: Option<&str>,
        metadata: Option<MetadataChange>,
        tags: Option<&[String]>,
        images: Option<Vec<Image>>,
    ) -> Result<EntryUpdate, MemoryError> {
        if text.is_none() && metadata.is_none() && tags.is_none() && images.is_none() {
            return Err(MemoryError::invalid(
                "context_id",
                "nothing to update: give at least one of text, metadata, metadata_patch, tags, images",
            ));
        }
        let metadata = match metadata {
            Some(MetadataChange::Replace(map)) => {
                Some(MetadataChange::Replace(check_metadata("metadata", map)?))
            }
            Some(MetadataChange::Patch(map)) => Some(MetadataChange::Patch(check_metadata(
                "metadata_patch",
                map,
            )?)),
            None => None,
        };
        let mut masked = 0;
        Ok(EntryUpdate {
            id,
            text: text.map(|text| check_text("text", text)).transpose()?,
            metadata,
            tags: tags
                .map(|tags| normalize_tags("tags", tags, &mut masked))
                .transpose()?,
            images: images
                .map(|images| check_images("images", images))
                .transpose()?,
            masked,
        })
    }

    pub fn id(&self) -> i64 {
        self.id
    }

    /// The names of the fields this update changes, as the seed lists them.
    pub fn fields(&self) -> Vec<&'static str> {
        let mut fields = Vec::new();
        if self.text.is_some() {
            fields.push("text_content");
        }
        if self.metadata.is_some() {
            fields.push("metadata");
        }
        if self.tags.is_some() {
            fields.push("tags");
        }
        if self.images.is_some() {
            fields.push("images");
        }
        fields
    }
}

/// What a deletion selects; every criterion given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteCriteria {
    pub ids: Vec<i64>,
    pub thread_ids: Vec<String>,
    pub source: Option<Source>,
    pub created_before_ms: Option<i64>,
}

/// A thread and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSummary {
    pub thread_id: String,
    pub entry_count: u64,
    pub user_count: u64,
    pub agent_count: u64,
    pub multimodal_count: u64,
    pub first_ms: i64,
    pub last_ms: i64,
}

/// Totals over the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statistics {
    pub total_entries: u64,
    pub user_entries: u64,
    pub agent_entries: u64,
    pub multimodal_entries: u64,
    pub total_threads: u64,
    pub total_images: u64,
    pub unique_tags: u64,
    pub embedded_entries: u64,
    pub database_bytes: u64,
}

/// A search hit with the scores that placed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub entry: Entry,
    pub scores: HybridScores,
    /// The text with matches marked (`<mark>…</mark>`), when asked for.
    pub highlighted: Option<String>,
}

/// Every score a hit can carry; each search fills its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HybridScores {
    pub rrf: Option<f64>,
    /// 1-based rank in the full-text arm (hybrid only).
    pub fts_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// BM25 relevance (higher is better).
    pub fts_score: Option<f64>,
    /// L2 distance between unit vectors (lower is better).
    pub semantic_distance: Option<f64>,
}

/// The arms a hybrid search may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchArm {
    Fts,
    Semantic,
}

impl SearchArm {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchArm::Fts => "fts",
            SearchArm::Semantic => "semantic",
        }
    }
}

/// A hybrid search's hits and how many each arm found.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridOutcome {
    pub hits: Vec<Scored>,
    pub n_fts: usize,
    pub n_semantic: usize,
    /// Distinct entries the arms found together (before the page).
    pub n_fused: usize,
    pub arms_used: Vec<SearchArm>,
}

/// Reciprocal rank fusion: each list adds `1 / (k + rank)` (rank 1-based) to its items.
pub fn rrf(lists: &[&[i64]], k: u32) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, f64> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    for list in lists {
        for (idx, id) in list.iter().enumerate() {
            let score = 1.0 / (f64::from(k) + (idx + 1) as f64);
            match scores.get_mut(id) {
                Some(total) => *total += score,
                None => {
                    scores.insert(*id, score);
                    order.push(*id);
                }
            }
        }
    }
    let mut fused: Vec<(i64, f64)> = order.into_iter().map(|id| (id, scores[&id])).collect();
    // Ties keep the order of first appearance (stable sort), so results do not vary.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

/// How many candidates each arm of a hybrid search contributes, at least.
const HYBRID_MIN_CANDIDATES: usize = 50;

impl<'a> Memory<'a> {
    pub fn new(store: &'a Store, embedder: &'a dyn Embedder) -> Memory<'a> {
        Memory { store, embedder }
    }

    /// The embedder's id (`model` in semantic results).
    pub fn model(&self) -> String {
        self.embedder.id()
    }

    /// Masks secrets, embeds and stores `entries`: all in one transaction when `atomic`, else
    /// each on its own (one failing leaves the others stored). The outer error is one that
    /// stopped everything.
    pub fn store_entries(
        &self,
        entries: &[NewEntry],
        atomic: bool,
    ) -> Result<Vec<Result<Stored, MemoryError>>, MemoryError> {
        let model = self.embedder.id();
        let mut prepared = Vec::with_capacity(entries.len());
        for entry in entries {
            prepared.push(scrub_entry(entry));
        }
        let texts: Vec<&str> = prepared
            .iter()
            .map(|(entry, _)| entry.text.as_str())
            .collect();
        let vectors = self
            .embedder
            .embed(&texts)
            .map_err(|err| MemoryError::Embedder(err.to_string()))?;
        let now = crate::session::now_ms();
        let rows: Vec<InsertRow<'_>> = prepared
            .iter()
            .zip(&vectors)
            .map(|((entry, _), vector)| InsertRow {
                thread_id: &entry.thread_id,
                source: entry.source,
                text: &entry.text,
                metadata: &entry.metadata,
                tags: &entry.tags,
                images: &entry.images,
                embedding: Some((model.as_str(), vector.as_slice())),
                now_ms: now,
            })
            .collect();
        if atomic {
            let ids = self
                .store
                .write(|tx| sql::insert_all(tx, self.store.memory_quota(), &rows))?;
            return Ok(ids
                .into_iter()
                .zip(&prepared)
                .map(|(id, (_, n))| {
                    Ok(Stored {
                        id,
                        n_secrets_scrubbed: *n,
                    })
                })
                .collect());
        }
        Ok(rows
            .iter()
            .zip(&prepared)
            .map(|(row, (_, n))| {
                let ids = self.store.write(|tx| {
                    sql::insert_all(tx, self.store.memory_quota(), std::slice::from_ref(row))
                })?;
                Ok(Stored {
                    id: ids[0],
                    n_secrets_scrubbed: *n,
                })
            })
            .collect())
    }

    /// The entries with `ids`, in that order; an id that does not exist is an error naming
    /// it (under `field`).
    pub fn get(
        &self,
        field: &str,
        ids: &[i64],
        include_images: bool,
    ) -> Result<Vec<Entry>, MemoryError> {
        let entries = self.store.read(|tx| sql::get(tx, ids, include_images))?;
        let missing: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| !entries.iter().any(|entry| entry.id == *id))
            .collect();
        if !missing.is_empty() {
            return Err(MemoryError::NotFound {
                field: field.to_string(),
                ids: missing,
            });
        }
        Ok(entries)
    }

    /// Entries matching `filter`, newest first.
    pub fn list(
        &self,
        filter: &Filter,
        page: Page,
        include_images: bool,
    ) -> Result<Vec<Entry>, MemoryError> {
        Ok(self
            .store
            .read(|tx| sql::list(tx, filter, page.limit, page.offset, include_images))?)
    }

    /// Full-text search (BM25) among entries matching `filter`.
    pub fn fts(
        &self,
        query: Option<&FtsQuery>,
        filter: &Filter,
        page: Page,
        highlight: bool,
        include_images: bool,
    ) -> Result<Vec<Scored>, MemoryError> {
        let Some(query) = query else {
            return Ok(Vec::new());
        };
        // One snapshot for the hits and their entries, and each hit joined to its entry by id:
        // a delete between the two can neither shift a highlight onto another entry nor show
        // a deleted one.
        let (hits, entries) = self.store.read(|tx| {
            let hits: Vec<_> = sql::fts(tx, query, filter, page.offset + page.limit, highlight)?
                .into_iter()
                .skip(page.offset)
                .map(|(id, score, highlighted)| (id, (score, highlighted)))
                .collect();
            #[cfg(test)]
            tests::after_ranking();
            let ids: Vec<i64> = hits.iter().map(|(id, _)| *id).collect();
            let entries = sql::get(tx, &ids, include_images)?;
            Ok::<_, StoreError>((hits, entries))
        })?;
        Ok(join_by_id(entries, hits)
            .map(|(entry, (score, highlighted))| Scored {
                entry,
                scores: HybridScores {
                    fts_score: Some(score),
                    ..HybridScores::default()
                },
                highlighted,
            })
            .collect())
    }

    /// Semantic search: exact nearest neighbours among the entries matching `filter`.
    pub fn semantic(
        &self,
        text: &str,
        filter: &Filter,
        page: Page,
        include_images: bool,
    ) -> Result<Vec<Scored>, MemoryError> {
        let ranked = self.nearest(text, filter, page.offset + page.limit)?;
        let ranked: Vec<_> = ranked.into_iter().skip(page.offset).collect();
        let ids: Vec<i64> = ranked.iter().map(|(id, _)| *id).collect();
        let entries = self.store.read(|tx| sql::get(tx, &ids, include_images))?;
        Ok(join_by_id(entries, ranked)
            .map(|(entry, distance)| Scored {
                entry,
                scores: HybridScores {
                    semantic_distance: Some(distance),
                    ..HybridScores::default()
                },
                highlighted: None,
            })
            .collect())
    }

    /// Both arms over the same filter, fused by [`rrf`].
    #[allow(
        clippy::too_many_arguments,
        reason = "the seed's parameters, each typed"
    )]
    pub fn hybrid(
        &self,
        query: Option<&FtsQuery>,
        text: &str,
        arms: &[SearchArm],
        rrf_k: u32,
        filter: &Filter,
        page: Page,
        include_images: bool,
    ) -> Result<HybridOutcome, MemoryError> {
        let want = (3 * (page.offset + page.limit)).max(HYBRID_MIN_CANDIDATES);
        let fts: Vec<(i64, f64)> = match query {
            Some(query) if arms.contains(&SearchArm::Fts) => self
                .store
                .read(|tx| sql::fts(tx, query, filter, want, false))?
                .into_iter()
                .map(|(id, score, _)| (id, score))
                .collect(),
            _ => Vec::new(),
        };
        let semantic = if arms.contains(&SearchArm::Semantic) {
            self.nearest(text, filter, want)?
        } else {
            Vec::new()
        };
        let fts_ids: Vec<i64> = fts.iter().map(|(id, _)| *id).collect();
        let semantic_ids: Vec<i64> = semantic.iter().map(|(id, _)| *id).collect();
        let fused = rrf(&[&fts_ids, &semantic_ids], rrf_k);
        let n_fused = fused.len();
        let page_hits: Vec<(i64, f64)> = fused
            .into_iter()
            .skip(page.offset)
            .take(page.limit)
            .collect();
        let ids: Vec<i64> = page_hits.iter().map(|(id, _)| *id).collect();
        let entries = self.store.read(|tx| sql::get(tx, &ids, include_images))?;
        let hits = join_by_id(entries, page_hits)
            .map(|(entry, score)| {
                let id = entry.id;
                let fts_at = fts_ids.iter().position(|x| *x == id);
                let semantic_at = semantic_ids.iter().position(|x| *x == id);
                Scored {
                    entry,
                    scores: HybridScores {
                        rrf: Some(score),
                        fts_rank: fts_at.map(|idx| idx + 1),
                        semantic_rank: semantic_at.map(|idx| idx + 1),
                        fts_score: fts_at.map(|idx| fts[idx].1),
                        semantic_distance: semantic_at.map(|idx| semantic[idx].1),
                    },
                    highlighted: None,
                }
            })
            .collect();
        Ok(HybridOutcome {
            hits,
            n_fts: fts_ids.len(),
            n_semantic: semantic_ids.len(),
            n_fused,
            arms_used: arms.to_vec(),
        })
    }

    /// Masks secrets, re-embeds changed text and applies `updates`: all in one transaction
    /// when `atomic` (an unknown id changes nothing), else each on its own.
    pub fn update(
        &self,
        updates: &[EntryUpdate],
        atomic: bool,
    ) -> Result<Vec<Result<usize, MemoryError>>, MemoryError> {
        let model = self.embedder.id();
        let scrubbed: Vec<(EntryUpdate, usize)> = updates.iter().map(scrub_update).collect();
        let texts: Vec<&str> = scrubbed
            .iter()
            .filter_map(|(update, _)| update.text.as_deref())
            .collect();
        let vectors = if texts.is_empty() {
            Vec::new()
        } else {
            self.embedder
                .embed(&texts)
                .map_err(|err| MemoryError::Embedder(err.to_string()))?
        };
        let mut vectors = vectors.iter();
        let now = crate::session::now_ms();
        let rows: Vec<UpdateRow<'_>> = scrubbed
            .iter()
            .map(|(update, _)| UpdateRow {
                id: update.id,
                text: update.text.as_deref(),
                embedding: update
                    .text
                    .as_ref()
                    .and_then(|_| vectors.next())
                    .map(|vector| (model.as_str(), vector.as_slice())),
                metadata: update.metadata.as_ref(),
                tags: update.tags.as_deref(),
                images: update.images.as_deref(),
                now_ms: now,
            })
            .collect();
        let not_found = |ids: Vec<i64>| MemoryError::NotFound {
            field: "context_id".to_string(),
            ids,
        };
        if atomic {
            self.store
                .write(|tx| sql::update_all(tx, self.store.memory_quota(), &rows))?
                .map_err(not_found)?;
            return Ok(scrubbed.iter().map(|(_, n)| Ok(*n)).collect());
        }
        Ok(rows
            .iter()
            .zip(&scrubbed)
            .map(|(row, (_, n))| {
                self.store
                    .write(|tx| {
                        sql::update_all(tx, self.store.memory_quota(), std::slice::from_ref(row))
                    })?
                    .map_err(not_found)?;
                Ok(*n)
            })
            .collect())
    }

    /// Deletes what `criteria` selects; how many entries went. No criterion: an error; at most
    /// [`MAX_DELETE_IDS`] ids and as many thread ids.
    pub fn delete(&self, criteria: &DeleteCriteria) -> Result<usize, MemoryError> {
        for (field, n) in [
            ("context_ids", criteria.ids.len()),
            ("thread_ids", criteria.thread_ids.len()),
        ] {
            if n > MAX_DELETE_IDS {
                return Err(MemoryError::invalid(
                    field,
                    format!(
                        "{n} ids, over the limit of {MAX_DELETE_IDS} per call: delete in batches"
                    ),
                ));
            }
        }
        if criteria.ids.is_empty()
            && criteria.thread_ids.is_empty()
            && criteria.created_before_ms.is_none()
        {
            return Err(MemoryError::invalid(
                "context_ids",
                "give context ids, thread ids or an age: a source alone would delete too much",
            ));
        }
        Ok(self.store.write(|tx| sql::delete(tx, criteria))?)
    }

    pub fn threads(&self) -> Result<Vec<ThreadSummary>, MemoryError> {
        Ok(self.store.read(sql::threads)?)
    }

    pub fn statistics(&self) -> Result<Statistics, MemoryError> {
        Ok(self.store.read(sql::statistics)?)
    }

    /// What a mirror into this store last saw of its source (the learnings ledger's stamp),
    /// under `name`.
    pub fn mark(&self, name: &str) -> Result<Option<String>, MemoryError> {
        Ok(self.store.read(|tx| sql::mark(tx, name))?)
    }

    pub fn set_mark(&self, name: &str, value: &str) -> Result<(), MemoryError> {
        Ok(self.store.write(|tx| sql::set_mark(tx, name, value))?)
    }

    /// The `limit` entries (matching `filter`, embedded by this embedder) nearest to `text`,
    /// with their L2 distances, nearest first.
    fn nearest(
        &self,
        text: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let query = super::vector::Query::new(
            self.embedder
                .embed(&[text])
                .map_err(|err| MemoryError::Embedder(err.to_string()))?
                .into_iter()
                .next()
                .unwrap_or_default(),
        );
        let mut scored: Vec<(i64, f32)> = Vec::new();
        self.store.read(|tx| {
            sql::vectors(tx, &self.embedder.id(), filter, |id, bytes| {
                if let Some(dot) = query.similarity(bytes) {
                    scored.push((id, dot));
                }
            })
        })?;
        // Highest similarity first; ties by id, so the order never varies.
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(scored
            .into_iter()
            .map(|(id, dot)| (id, f64::from((2.0 - 2.0 * dot).max(0.0)).sqrt()))
            .collect())
    }
}

/// Each hit `(id, value)` with its entry, in the hits' order; a hit whose entry is gone (deleted
/// since it was ranked) is dropped, never paired with another entry.
fn join_by_id<T>(entries: Vec<Entry>, hits: Vec<(i64, T)>) -> impl Iterator<Item = (Entry, T)> {
    let mut by_id: HashMap<i64, Entry> =
        entries.into_iter().map(|entry| (entry.id, entry)).collect();
    hits.into_iter()
        .filter_map(move |(id, value)| by_id.remove(&id).map(|entry| (entry, value)))
}

/// Masks every secret in what an entry would store (text, metadata strings, tags).
fn scrub_entry(entry: &NewEntry) -> (NewEntry, usize) {
    let mut n = entry.masked;
    let mut out = entry.clone();
    out.text = scrub_text(&entry.text, &mut n);
    scrub_map(&mut out.metadata, &mut n);
    for tag in &mut out.tags {
        *tag = scrub_text(tag, &mut n);
    }
    (out, n)
}

fn scrub_update(update: &EntryUpdate) -> (EntryUpdate, usize) {
    let mut n = update.masked;
    let mut out = update.clone();
    if let Some(text) = &mut out.text {
        *text = scrub_text(text, &mut n);
    }
    match &mut out.metadata {
        Some(MetadataChange::Replace(map) | MetadataChange::Patch(map)) => scrub_map(map, &mut n),
        None => {}
    }
    for tag in out.tags.iter_mut().flatten() {
        *tag = scrub_text(tag, &mut n);
    }
    (out, n)
}

fn scrub_text(text: &str, n: &mut usize) -> String {
    let scrubbed = secrets::scrub(text, 0, 0);
    *n += scrubbed.secrets.len();
    scrubbed.text
}

/// Masks keys as well as values: a key is text a caller chose, and every read path shows it.
fn scrub_map(map: &mut Map<String, Value>, n: &mut usize) {
    let entries = std::mem::take(map);
    for (key, mut value) in entries {
        scrub_value(&mut value, n);
        map.insert(scrub_text(&key, n), value);
    }
}

fn scrub_value(value: &mut Value, n: &mut usize) {
    match value {
        Value::String(text) => *text = scrub_text(text, n),
        Value::Array(items) => items.iter_mut().for_each(|item| scrub_value(item, n)),
        Value::Object(map) => scrub_map(map, n),
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;

    thread_local! {
        /// Run by a full-text search between ranking its hits and loading their entries: a
        /// test makes a race happen exactly there.
        static AFTER_RANKING: RefCell<Option<Box<dyn Fn()>>> = RefCell::new(None);
    }

    pub(crate) fn set_after_ranking(hook: Option<Box<dyn Fn()>>) {
        AFTER_RANKING.with(|slot| *slot.borrow_mut() = hook);
    }

    pub(super) fn after_ranking() {
        AFTER_RANKING.with(|slot| {
            if let Some(hook) = &*slot.borrow() {
                hook();
            }
        });
    }
}
