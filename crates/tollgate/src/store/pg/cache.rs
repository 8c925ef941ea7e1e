//! The model response cache on PostgreSQL: `store::llm_cache`'s SQL in PostgreSQL's dialect.

use super::super::StoreError;
use super::super::llm_cache::{CachedResponse, LlmCacheStats};
use super::super::repo::{CacheReads, CacheWrites};
use super::tx::{PgTx, i64_of, u64_of};
use crate::clock::now_rfc3339;

impl CacheReads for PgTx<'_, '_> {
    fn cache_stats(&self) -> Result<LlmCacheStats, StoreError> {
        let row = self.one(
            "SELECT count(*), coalesce(sum(hits), 0)::BIGINT FROM llm_cache",
            &[],
        )?;
        Ok(LlmCacheStats {
            entries: u64_of(row.try_get(0)?),
            hits: u64_of(row.try_get(1)?),
        })
    }
}

impl CacheWrites for PgTx<'_, '_> {
    fn cache_get(&self, key: &str) -> Result<Option<CachedResponse>, StoreError> {
        // One statement counts the hit and returns the answer.
        let Some(row) = self.row(
            "UPDATE llm_cache SET hits = hits + 1, last_hit_at = $2 WHERE key = $1
             RETURNING model, response, input_tokens, output_tokens",
            &[&key, &now_rfc3339()],
        )?
        else {
            return Ok(None);
        };
        Ok(Some(CachedResponse {
            model: row.try_get(0)?,
            response: row.try_get(1)?,
            input_tokens: u64_of(row.try_get(2)?),
            output_tokens: u64_of(row.try_get(3)?),
        }))
    }

    fn cache_put(&self, key: &str, entry: &CachedResponse) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO llm_cache (key, model, response, input_tokens, output_tokens, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (key) DO UPDATE SET model = excluded.model, response = excluded.response,
                 input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
                 created_at = excluded.created_at",
            &[
                &key,
                &entry.model,
                &entry.response,
                &i64_of(entry.input_tokens),
                &i64_of(entry.output_tokens),
                &now_rfc3339(),
            ],
        )?;
        Ok(())
    }
}
