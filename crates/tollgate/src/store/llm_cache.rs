//! The model response cache: what a model answered, keyed by a hash the `llm` layer computes
//! from everything that determines the answer (provider, model, schema, prompt).

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;
use crate::clock::now_rfc3339;

/// A stored model answer and what it cost when it was first paid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedResponse {
    pub model: String,
    pub response: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Size and use of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LlmCacheStats {
    pub entries: u64,
    pub hits: u64,
}

/// The cached answer for `key`, counting the hit.
pub fn get(tx: &Connection, key: &str) -> Result<Option<CachedResponse>, StoreError> {
    let found = tx
        .query_row(
            "SELECT model, response, input_tokens, output_tokens FROM llm_cache WHERE key = ?1",
            [key],
            |row| {
                Ok(CachedResponse {
                    model: row.get(0)?,
                    response: row.get(1)?,
                    input_tokens: row.get::<_, i64>(2)?.max(0) as u64,
                    output_tokens: row.get::<_, i64>(3)?.max(0) as u64,
                })
            },
        )
        .optional()?;
    if found.is_some() {
        tx.execute(
            "UPDATE llm_cache SET hits = hits + 1, last_hit_at = ?2 WHERE key = ?1",
            (key, now_rfc3339()),
        )?;
    }
    Ok(found)
}

/// Stores (or replaces) the answer for `key`.
pub fn put(tx: &Connection, key: &str, entry: &CachedResponse) -> Result<(), StoreError> {
    tx.execute(
                "INSERT INTO llm_cache (key, model, response, input_tokens, output_tokens, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(key) DO UPDATE SET model = excluded.model, response = excluded.response,
                     input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
                     created_at = excluded.created_at",
                (
                    key,
                    &entry.model,
                    &entry.response,
                    i64::try_from(entry.input_tokens).unwrap_or(i64::MAX),
                    i64::try_from(entry.output_tokens).unwrap_or(i64::MAX),
                    now_rfc3339(),
                ),
            )?;
    Ok(())
}

/// How many answers are cached and how often they were reused.
pub fn stats(tx: &Connection) -> Result<LlmCacheStats, StoreError> {
    tx.query_row(
        "SELECT count(*), coalesce(sum(hits), 0) FROM llm_cache",
        [],
        |row| {
            Ok(LlmCacheStats {
                entries: row.get::<_, i64>(0)?.max(0) as u64,
                hits: row.get::<_, i64>(1)?.max(0) as u64,
            })
        },
    )
    .map_err(StoreError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{Backend, TestDb};

    fn put_get_and_stats_survive_a_reopen(backend: Backend) {
        let Some(db) = TestDb::new(backend) else {
            return;
        };
        let entry = CachedResponse {
            model: "m".into(),
            response: "{\"findings\": []}".into(),
            input_tokens: 120,
            output_tokens: 8,
        };
        {
            let store = db.open();
            assert_eq!(store.transact(|tx| tx.cache_get("k")).unwrap(), None);
            store.transact(|tx| tx.cache_put("k", &entry)).unwrap();
        }
        let store = db.open();
        assert_eq!(
            store.transact(|tx| tx.cache_get("k")).unwrap(),
            Some(entry.clone())
        );
        assert_eq!(store.transact(|tx| tx.cache_get("k")).unwrap(), Some(entry));
        assert_eq!(
            store.snapshot(|tx| tx.cache_stats()).unwrap(),
            LlmCacheStats {
                entries: 1,
                hits: 2
            }
        );
    }

    #[test]
    fn put_get_and_stats_survive_a_reopen_sqlite() {
        put_get_and_stats_survive_a_reopen(Backend::Sqlite);
    }

    #[test]
    fn put_get_and_stats_survive_a_reopen_postgres() {
        put_get_and_stats_survive_a_reopen(Backend::Postgres);
    }
}
