//! Schema migrations: an ordered list of SQL scripts, each applied once, in its own transaction,
//! and recorded by id in `schema_migrations`.
//!
//! Ids are recorded rather than a single version number so that each concern (cache, plans,
//! sessions) appends its own scripts without renumbering the others'. A script is never edited
//! once released: a change is a new script.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

struct Migration {
    id: &'static str,
    sql: &'static str,
}

/// Every migration, in the order they apply. Append only.
const MIGRATIONS: &[Migration] = &[
    Migration {
        id: "0001_llm_cache",
        sql: include_str!("migrations/0001_llm_cache.sql"),
    },
    Migration {
        id: "0100_plans",
        sql: include_str!("migrations/0100_plans.sql"),
    },
    Migration {
        id: "0200_sessions",
        sql: include_str!("migrations/0200_sessions.sql"),
    },
    Migration {
        id: "0300_plan_apply_journal",
        sql: include_str!("migrations/0300_plan_apply_journal.sql"),
    },
    Migration {
        id: "0400_session_gate",
        sql: include_str!("migrations/0400_session_gate.sql"),
    },
    Migration {
        id: "0500_memory",
        sql: include_str!("migrations/0500_memory.sql"),
    },
    Migration {
        id: "0510_memory_secure_delete",
        sql: include_str!("migrations/0510_memory_secure_delete.sql"),
    },
    Migration {
        id: "0520_memory_usage",
        sql: include_str!("migrations/0520_memory_usage.sql"),
    },
    Migration {
        id: "0530_memory_marks",
        sql: include_str!("migrations/0530_memory_marks.sql"),
    },
];

/// Every migration id, in order (PostgreSQL's list shares them).
#[cfg(test)]
pub(super) fn ids() -> Vec<&'static str> {
    MIGRATIONS.iter().map(|m| m.id).collect()
}

pub(super) fn run(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             id TEXT PRIMARY KEY,
             applied_at TEXT NOT NULL
         )",
    )
    .map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let applied: Vec<String> = {
        let mut stmt = conn.prepare("SELECT id FROM schema_migrations ORDER BY id")?;
        stmt.query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?
    };
    if let Some(unknown) = applied
        .iter()
        .find(|id| !MIGRATIONS.iter().any(|m| m.id == id.as_str()))
    {
        return Err(StoreError::NewerSchema {
            location: path.display().to_string(),
            id: unknown.clone(),
        });
    }
    for migration in MIGRATIONS {
        if applied.iter().any(|id| id == migration.id) {
            continue;
        }
        let failed = |source| StoreError::Migration {
            id: migration.id,
            source,
        };
        // IMMEDIATE: two processes opening a fresh store at once serialise here, and the second
        // sees the first's record and skips the script.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        let done: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE id = ?1)",
                [migration.id],
                |row| row.get(0),
            )
            .map_err(failed)?;
        if !done {
            tx.execute_batch(migration.sql).map_err(failed)?;
            tx.execute(
                "INSERT INTO schema_migrations (id, applied_at) VALUES (?1, ?2)",
                (migration.id, crate::clock::now_rfc3339()),
            )
            .map_err(failed)?;
        }
        tx.commit().map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_ids_are_unique_and_ordered() {
        let ids: Vec<&str> = MIGRATIONS.iter().map(|m| m.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "migration ids must be unique and in order");
    }

    #[test]
    fn a_store_from_a_newer_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        crate::store::Store::open(&path).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.execute(
            "INSERT INTO schema_migrations (id, applied_at) VALUES ('9999_future', 'x')",
            [],
        )
        .unwrap();
        drop(conn);
        let err = crate::store::Store::open(&path).unwrap_err();
        assert_eq!(err.code(), "STORE_VERSION_MISMATCH");
        assert!(err.to_string().contains("9999_future"), "{err}");
    }
}
