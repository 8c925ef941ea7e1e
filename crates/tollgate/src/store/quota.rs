//! The knowledge store's quota: how many bytes its entries may keep, in all and per thread.
//!
//! Each entry records the bytes it keeps (text, metadata, tags, images, embedding) and the
//! `memory_usage` table sums them per thread (triggers of `migrations/0520_memory_usage.sql`), so
//! a write checks the quota in its own transaction without scanning the entries. A write that
//! leaves the store or one of its threads over the quota, and larger than before, is refused
//! whole ([`StoreError::Full`]); shrinking and deleting are always allowed, so a store over a
//! lowered quota can be brought back under it.

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;

/// The limits (`[store] memory_quota_mb`, `thread_quota_mb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryQuota {
    pub store_bytes: u64,
    pub thread_bytes: u64,
}

impl MemoryQuota {
    pub const DEFAULT_STORE_MB: u64 = 1024;
    pub const DEFAULT_THREAD_MB: u64 = 256;

    /// From the configured sizes in MiB; an absent one takes its default.
    pub fn from_mb(store_mb: Option<u64>, thread_mb: Option<u64>) -> MemoryQuota {
        let bytes = |mb: u64| mb.saturating_mul(1024 * 1024);
        MemoryQuota {
            store_bytes: bytes(store_mb.unwrap_or(MemoryQuota::DEFAULT_STORE_MB)),
            thread_bytes: bytes(thread_mb.unwrap_or(MemoryQuota::DEFAULT_THREAD_MB)),
        }
    }
}

impl Default for MemoryQuota {
    fn default() -> MemoryQuota {
        MemoryQuota::from_mb(None, None)
    }
}

/// The bytes kept: in all, and by each of `threads`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Usage {
    total: u64,
    threads: Vec<(String, u64)>,
}

pub(crate) fn usage(conn: &Connection, threads: &[&str]) -> Result<Usage, StoreError> {
    let total: i64 = conn.query_row(
        "SELECT COALESCE(SUM(bytes), 0) FROM memory_usage",
        [],
        |row| row.get(0),
    )?;
    let mut stmt = conn.prepare_cached("SELECT bytes FROM memory_usage WHERE thread_id = ?1")?;
    let mut per_thread = Vec::with_capacity(threads.len());
    for thread in threads {
        let bytes: Option<i64> = stmt.query_row([thread], |row| row.get(0)).optional()?;
        per_thread.push((thread.to_string(), bytes.unwrap_or(0).max(0) as u64));
    }
    Ok(Usage {
        total: total.max(0) as u64,
        threads: per_thread,
    })
}

impl MemoryQuota {
    /// Whether a change that took the usage from `before` to `after` (same threads) may stand.
    pub(crate) fn check(&self, before: &Usage, after: &Usage) -> Result<(), StoreError> {
        if after.total > self.store_bytes && after.total > before.total {
            return Err(StoreError::Full {
                scope: "the knowledge store".to_string(),
                used: after.total,
                quota: self.store_bytes,
                setting: "memory_quota_mb",
            });
        }
        for ((thread, was), (_, now)) in before.threads.iter().zip(&after.threads) {
            if *now > self.thread_bytes && now > was {
                return Err(StoreError::Full {
                    scope: format!("thread `{thread}`"),
                    used: *now,
                    quota: self.thread_bytes,
                    setting: "thread_quota_mb",
                });
            }
        }
        Ok(())
    }
}
