//! The PostgreSQL schema: the SQLite migrations' twins in PostgreSQL's dialect, recorded by the
//! same ids in `schema_migrations`, each applied once in its own transaction. A database that
//! records an id this build does not know was written by a newer Tollgate and is refused.
//!
//! The knowledge store's migrations (`0500_memory` … `0530_memory_marks`) have no twin
//! yet: it needs SQLite's FTS5, and memory operations on a PostgreSQL store say so.

use postgres::Client;

use super::super::StoreError;

struct Migration {
    id: &'static str,
    sql: &'static str,
}

/// Every migration, in the order they apply. Append only; ids shared with SQLite's list.
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
];

/// The advisory lock openers take turns on while they migrate (any number, unique to Tollgate).
const MIGRATION_LOCK: i64 = 0x746f_6c6c_6761_7465; // "tollgate"

pub(super) fn run(client: &mut Client, location: &str) -> Result<(), StoreError> {
    // Session-level: held across the per-migration transactions, so two processes opening a
    // fresh database at once apply each script once.
    client.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))?;
    let result = apply(client, location);
    let unlocked = client.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"));
    result?;
    unlocked?;
    Ok(())
}

fn apply(client: &mut Client, location: &str) -> Result<(), StoreError> {
    // Checked first rather than `CREATE TABLE IF NOT EXISTS`, whose notice every open would
    // send; the lock makes the check and the creation one step.
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])?
        .try_get(0)?;
    if !exists {
        client.batch_execute(
            "CREATE TABLE schema_migrations (
                 id TEXT PRIMARY KEY,
                 applied_at TEXT NOT NULL
             )",
        )?;
    }
    let applied: Vec<String> = client
        .query("SELECT id FROM schema_migrations ORDER BY id", &[])?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if let Some(unknown) = applied
        .iter()
        .find(|id| !MIGRATIONS.iter().any(|m| m.id == id.as_str()))
    {
        return Err(StoreError::NewerSchema {
            location: location.to_string(),
            id: unknown.clone(),
        });
    }
    for migration in MIGRATIONS {
        if applied.iter().any(|id| id == migration.id) {
            continue;
        }
        let failed = |source| StoreError::PostgresMigration {
            id: migration.id,
            source,
        };
        let mut tx = client.transaction().map_err(failed)?;
        tx.batch_execute(migration.sql).map_err(failed)?;
        tx.execute(
            "INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)",
            &[&migration.id, &crate::clock::now_rfc3339()],
        )
        .map_err(failed)?;
        tx.commit().map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_migration_ids_are_sqlite_ids_in_the_same_order() {
        let ids: Vec<&str> = MIGRATIONS.iter().map(|m| m.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "migration ids must be unique and in order");
        let sqlite = crate::store::migrate::ids();
        for id in ids {
            assert!(sqlite.contains(&id), "{id} is not an SQLite migration id");
        }
    }
}
