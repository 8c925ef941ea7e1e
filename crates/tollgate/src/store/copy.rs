//! Copying a store to another (`tollgate store migrate`): every row of the repositories' tables
//! (plans and everything about them, review sessions, the model response cache), from one
//! snapshot of the source into one transaction on the target, then verified: the target read
//! back has the source's row count and checksum in every table.
//!
//! Rows travel as untyped cells (both schemas have the same tables and columns, SQLite's
//! INTEGER/REAL/TEXT being PostgreSQL's BIGINT/DOUBLE PRECISION/TEXT), in an order both backends
//! produce alike, so a checksum over the rows as read compares the two. A target that holds any
//! row is refused unless `force`, which replaces its contents. The knowledge store (SQLite only
//! in this build) is not copied; the report says how many entries stay behind.

use postgres::types::{ToSql, Type};
use rusqlite::types::{Value, ValueRef};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Backend, Store, StoreError};

/// One table as copied.
struct Table {
    name: &'static str,
    columns: &'static str,
    /// The order rows are read in, on SQLite and on PostgreSQL.
    sqlite_order: &'static str,
    pg_order: &'static str,
    /// PostgreSQL generates the first column (`GENERATED ALWAYS AS IDENTITY`): inserted with
    /// `OVERRIDING SYSTEM VALUE` and its sequence moved past the copied values.
    pg_identity: bool,
}

/// Parents before children (foreign keys); deleted in the reverse order.
const TABLES: &[Table] = &[
    Table {
        name: "llm_cache",
        columns: "key, model, response, input_tokens, output_tokens, created_at, last_hit_at, hits",
        sqlite_order: "key",
        pg_order: "key COLLATE \"C\"",
        pg_identity: false,
    },
    Table {
        name: "plans",
        columns: "id, name, goal, status, tags, current_version, step_count, created_at, updated_at, deleted_at",
        sqlite_order: "id",
        pg_order: "id COLLATE \"C\"",
        pg_identity: false,
    },
    Table {
        name: "plan_versions",
        columns: "plan_id, version, plan_json, change_type, summary, author, created_at",
        sqlite_order: "plan_id, version",
        pg_order: "plan_id COLLATE \"C\", version",
        pg_identity: false,
    },
    Table {
        name: "plan_approvals",
        columns: "id, plan_id, plan_version, kind, step_numbers, status, requested_by, requested_at, note, responded_by, responded_at, comment, modifications",
        sqlite_order: "id",
        pg_order: "id COLLATE \"C\"",
        pg_identity: false,
    },
    Table {
        name: "plan_step_states",
        columns: "plan_id, step_number, status, attempts, notes, files_changed, error, started_at, finished_at, updated_at",
        sqlite_order: "plan_id, step_number",
        pg_order: "plan_id COLLATE \"C\", step_number",
        pg_identity: false,
    },
    Table {
        name: "plan_events",
        columns: "seq, plan_id, step_number, kind, detail, author, created_at",
        sqlite_order: "seq",
        pg_order: "seq",
        pg_identity: true,
    },
    Table {
        name: "plan_applied_changes",
        columns: "batch_id, seq, plan_id, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at, undone_at",
        sqlite_order: "batch_id, seq",
        pg_order: "batch_id COLLATE \"C\", seq",
        pg_identity: false,
    },
    Table {
        name: "plan_apply_journal",
        columns: "batch_id, plan_id, step_number, state, temp_files, owner_pid, reason, opened_at, closed_at",
        sqlite_order: "batch_id",
        pg_order: "batch_id COLLATE \"C\"",
        pg_identity: false,
    },
    Table {
        name: "review_sessions",
        columns: "id, commit_hash, base_ref, base_sha, head_sha, title, author, additions, deletions, changed_files, max_workers, max_attempts, state, reason, warnings, created_at, started_at, finished_at, last_activity_at, active_ms, owner_token, owner_pid, owner_boot, heartbeat_at",
        sqlite_order: "id",
        pg_order: "id COLLATE \"C\"",
        pg_identity: false,
    },
    Table {
        name: "review_session_steps",
        columns: "session_id, idx, kind, files, changed_lines, state, attempts, last_error, next_attempt_at, worker, started_at, finished_at, duration_ms, findings_reported, findings_new, llm_passes, input_tokens, output_tokens, cost_usd, cache_hits, gate_reasons",
        sqlite_order: "session_id, idx",
        pg_order: "session_id COLLATE \"C\", idx",
        pg_identity: false,
    },
    // Findings keep the order they were found in (SQLite's rowid, PostgreSQL's `seq`), which
    // the copy recreates by inserting them in that order.
    Table {
        name: "review_session_findings",
        columns: "session_id, fingerprint, step_idx, severity, finding",
        sqlite_order: "rowid",
        pg_order: "seq",
        pg_identity: false,
    },
];

/// What a copy did, table by table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CopyReport {
    pub tables: Vec<TableCopy>,
    /// Rows in the target before the copy (replaced: only with `force`).
    pub replaced_rows: u64,
    /// What stays in the source, and why.
    pub not_copied: Vec<String>,
}

/// One table's rows, the same count and checksum in the source and the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableCopy {
    pub table: String,
    pub rows: u64,
    /// SHA-256 over the table's rows in order, in source and target alike.
    pub checksum: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

type Rows = Vec<Vec<Cell>>;

impl Store {
    /// Copies every plan, session and cached model answer of this store into `target`, in one
    /// transaction there, and checks the target against the source. A target with any row is
    /// refused unless `force` (its rows are replaced).
    pub fn copy_into(&self, target: &Store, force: bool) -> Result<CopyReport, StoreError> {
        let source = self.read_all()?;
        let replaced_rows = target.write_all(&source, force)?;
        let copied = target.read_all()?;
        let mut tables = Vec::new();
        for ((table, from), to) in TABLES.iter().zip(&source).zip(&copied) {
            let (want, got) = (checksum(from), checksum(to));
            if from.len() != to.len() || want != got {
                return Err(StoreError::Corrupt {
                    what: format!("the copy of table {}", table.name),
                    reason: format!(
                        "the target has {} rows (checksum {got}), the source {} (checksum {want})",
                        to.len(),
                        from.len()
                    ),
                });
            }
            tables.push(TableCopy {
                table: table.name.to_string(),
                rows: from.len() as u64,
                checksum: want,
            });
        }
        let mut not_copied = Vec::new();
        if let Backend::Sqlite { .. } = &self.backend {
            let entries: i64 = self.read(|conn| {
                conn.query_row("SELECT count(*) FROM memory_entries", [], |row| row.get(0))
                    .map_err(StoreError::from)
            })?;
            if entries > 0 {
                not_copied.push(format!(
                    "the knowledge store's {entries} entries (memory and learnings): not copied by this build"
                ));
            }
        }
        Ok(CopyReport {
            tables,
            replaced_rows,
            not_copied,
        })
    }

    /// Every table's rows, from one snapshot.
    fn read_all(&self) -> Result<Vec<Rows>, StoreError> {
        match &self.backend {
            Backend::Sqlite { .. } => self.read(|conn| {
                TABLES
                    .iter()
                    .map(|table| sqlite_rows(conn, table))
                    .collect()
            }),
            Backend::Postgres(pg) => pg.raw(true, |tx| {
                TABLES.iter().map(|table| pg_rows(tx, table)).collect()
            }),
        }
    }

    /// Writes `rows` (one list per table) in one transaction; returns how many rows were there.
    fn write_all(&self, rows: &[Rows], force: bool) -> Result<u64, StoreError> {
        let refuse = |present: u64| {
            if present > 0 && !force {
                Err(StoreError::Conflict(format!(
                    "the target store is not empty ({present} rows in plans, sessions and the model cache); give --force to replace its contents"
                )))
            } else {
                Ok(present)
            }
        };
        match &self.backend {
            Backend::Sqlite { .. } => self.write(|tx| {
                let mut present = 0;
                for table in TABLES {
                    let n: i64 =
                        tx.query_row(&format!("SELECT count(*) FROM {}", table.name), [], |row| {
                            row.get(0)
                        })?;
                    present += n as u64;
                }
                refuse(present)?;
                for table in TABLES.iter().rev() {
                    tx.execute(&format!("DELETE FROM {}", table.name), [])?;
                }
                for (table, rows) in TABLES.iter().zip(rows) {
                    sqlite_insert(tx, table, rows)?;
                }
                Ok(present)
            }),
            Backend::Postgres(pg) => pg.raw(false, |tx| {
                let mut present = 0;
                for table in TABLES {
                    let n: i64 = tx
                        .query_one(&format!("SELECT count(*) FROM {}", table.name), &[])?
                        .try_get(0)?;
                    present += n as u64;
                }
                refuse(present)?;
                for table in TABLES.iter().rev() {
                    tx.execute(&format!("DELETE FROM {}", table.name), &[])?;
                }
                for (table, rows) in TABLES.iter().zip(rows) {
                    pg_insert(tx, table, rows)?;
                }
                Ok(present)
            }),
        }
    }
}

fn placeholders(n: usize, dollar: bool) -> String {
    (1..=n)
        .map(|i| {
            if dollar {
                format!("${i}")
            } else {
                format!("?{i}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_count(table: &Table) -> usize {
    table.columns.split(',').count()
}

fn sqlite_rows(conn: &rusqlite::Connection, table: &Table) -> Result<Rows, StoreError> {
    let n = column_count(table);
    let mut stmt = conn.prepare(&format!(
        "SELECT {} FROM {} ORDER BY {}",
        table.columns, table.name, table.sqlite_order
    ))?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(match row.get_ref(i)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(v) => Cell::Int(v),
                ValueRef::Real(v) => Cell::Real(v),
                ValueRef::Text(bytes) => Cell::Text(String::from_utf8_lossy(bytes).into_owned()),
                ValueRef::Blob(_) => {
                    return Err(StoreError::Corrupt {
                        what: format!("table {}", table.name),
                        reason: "a binary value where text or a number belongs".to_string(),
                    });
                }
            });
        }
        out.push(cells);
    }
    Ok(out)
}

fn sqlite_insert(
    tx: &rusqlite::Transaction<'_>,
    table: &Table,
    rows: &Rows,
) -> Result<(), StoreError> {
    let mut stmt = tx.prepare(&format!(
        "INSERT INTO {} ({}) VALUES ({})",
        table.name,
        table.columns,
        placeholders(column_count(table), false)
    ))?;
    for row in rows {
        let values: Vec<Value> = row
            .iter()
            .map(|cell| match cell {
                Cell::Null => Value::Null,
                Cell::Int(v) => Value::Integer(*v),
                Cell::Real(v) => Value::Real(*v),
                Cell::Text(v) => Value::Text(v.clone()),
            })
            .collect();
        stmt.execute(rusqlite::params_from_iter(values))?;
    }
    Ok(())
}

fn pg_rows(tx: &mut postgres::Transaction<'_>, table: &Table) -> Result<Rows, StoreError> {
    let rows = tx.query(
        &format!(
            "SELECT {} FROM {} ORDER BY {}",
            table.columns, table.name, table.pg_order
        ),
        &[],
    )?;
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| {
                    let ty = row.columns()[i].type_();
                    Ok(if *ty == Type::INT8 {
                        row.try_get::<_, Option<i64>>(i)?
                            .map_or(Cell::Null, Cell::Int)
                    } else if *ty == Type::FLOAT8 {
                        row.try_get::<_, Option<f64>>(i)?
                            .map_or(Cell::Null, Cell::Real)
                    } else {
                        row.try_get::<_, Option<String>>(i)?
                            .map_or(Cell::Null, Cell::Text)
                    })
                })
                .collect()
        })
        .collect()
}

fn pg_insert(
    tx: &mut postgres::Transaction<'_>,
    table: &Table,
    rows: &Rows,
) -> Result<(), StoreError> {
    let overriding = if table.pg_identity {
        " OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    let stmt = tx.prepare(&format!(
        "INSERT INTO {} ({}){overriding} VALUES ({})",
        table.name,
        table.columns,
        placeholders(column_count(table), true)
    ))?;
    let types = stmt.params().to_vec();
    for row in rows {
        let values: Vec<Box<dyn ToSql + Sync>> = row
            .iter()
            .zip(&types)
            .map(|(cell, ty)| -> Box<dyn ToSql + Sync> {
                let int = *ty == Type::INT8;
                let real = *ty == Type::FLOAT8;
                match cell {
                    Cell::Null if int => Box::new(None::<i64>),
                    Cell::Null if real => Box::new(None::<f64>),
                    Cell::Null => Box::new(None::<String>),
                    Cell::Int(v) if real => Box::new(*v as f64),
                    Cell::Int(v) if int => Box::new(*v),
                    Cell::Int(v) => Box::new(v.to_string()),
                    Cell::Real(v) if real => Box::new(*v),
                    Cell::Real(v) => Box::new(v.to_string()),
                    Cell::Text(v) => Box::new(v.clone()),
                }
            })
            .collect();
        let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(AsRef::as_ref).collect();
        tx.execute(&stmt, &params)?;
    }
    if table.pg_identity {
        let first = table.columns.split(',').next().unwrap_or_default().trim();
        tx.query_one(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{name}', '{first}'), coalesce(max({first}), 0) + 1, false) FROM {name}",
                name = table.name
            ),
            &[],
        )?;
    }
    Ok(())
}

fn checksum(rows: &Rows) -> String {
    let mut hash = Sha256::new();
    for row in rows {
        for cell in row {
            match cell {
                Cell::Null => hash.update([0u8]),
                Cell::Int(v) => {
                    hash.update([1u8]);
                    hash.update(v.to_le_bytes());
                }
                Cell::Real(v) => {
                    hash.update([2u8]);
                    hash.update(v.to_bits().to_le_bytes());
                }
                Cell::Text(v) => {
                    hash.update([3u8]);
                    hash.update((v.len() as u64).to_le_bytes());
                    hash.update(v.as_bytes());
                }
            }
        }
        hash.update([0xffu8]);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::record::{FindingRow, Lease, LeaseRecord, NewSession, NewStep, StepUsage};
    use crate::store::llm_cache::CachedResponse;
    use crate::store::plans::{NewPlan, PlanFacts, VersionMeta};
    use crate::store::testing::{Backend, TestDb};

    /// A plan with two versions, an approval, a step state, events and an applied change; a
    /// session with a completed step and two findings; a cached answer.
    fn fill(store: &Store, plan: &str) {
        let facts = PlanFacts {
            goal: "g",
            step_count: 1,
        };
        let meta = VersionMeta {
            change_type: "created",
            summary: "s",
            author: "a",
        };
        store
            .transact(|tx| {
                tx.insert_plan(&NewPlan {
                    id: plan,
                    name: Some(plan),
                    status: "ready",
                    tags: &["t".to_string()],
                    facts,
                    plan_json: "{\"v\":1}",
                    meta,
                })?;
                tx.append_version(plan, facts, "{\"v\":2}", meta)?;
                tx.log_event(plan, Some(1), "step_started", "d", "a")?;
                tx.log_event(plan, None, "note", "", "")?;
                tx.journal_open(&format!("{plan}-batch"), plan, 1, 42)?;
                tx.cache_put(
                    &format!("{plan}-key"),
                    &CachedResponse {
                        model: "m".into(),
                        response: "r".into(),
                        input_tokens: 3,
                        output_tokens: 4,
                    },
                )?;
                tx.session_insert(&NewSession {
                    id: format!("{plan}-session"),
                    commit_hash: "c".into(),
                    base_ref: "main".into(),
                    base_sha: "b".into(),
                    head_sha: "h".into(),
                    title: None,
                    author: Some("me".into()),
                    additions: Some(1),
                    deletions: None,
                    changed_files: vec!["a.rs".into()],
                    max_workers: 1,
                    max_attempts: 2,
                    warnings: vec![],
                    steps: vec![NewStep {
                        kind: "files".into(),
                        files: vec!["a.rs".into()],
                        changed_lines: 1,
                    }],
                    now: 10,
                })?;
                let lease = Lease {
                    token: "t".into(),
                    pid: 1,
                    boot: None,
                };
                let alive = |_: &LeaseRecord| false;
                tx.session_claim(&format!("{plan}-session"), &lease, 11, &alive)?;
                let finding = |print: &str| FindingRow {
                    fingerprint: print.into(),
                    severity: "HIGH".into(),
                    json: "{}".into(),
                };
                tx.session_step_complete(
                    &format!("{plan}-session"),
                    0,
                    "t",
                    1.5,
                    StepUsage::default(),
                    &[finding("zz"), finding("aa")],
                    &[],
                    12,
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
    }

    fn rows(report: &CopyReport, table: &str) -> u64 {
        report
            .tables
            .iter()
            .find(|t| t.table == table)
            .map_or(0, |t| t.rows)
    }

    #[test]
    fn a_store_copies_to_postgres_and_back_with_the_same_rows() {
        let Some(pg) = TestDb::new(Backend::Postgres) else {
            return;
        };
        let source = Store::open_in_memory().unwrap();
        fill(&source, "p1");
        let target = pg.open();
        let report = source.copy_into(&target, false).unwrap();
        assert_eq!(report.replaced_rows, 0);
        assert_eq!(rows(&report, "plans"), 1);
        assert_eq!(rows(&report, "plan_versions"), 2);
        assert_eq!(rows(&report, "plan_events"), 2);
        assert_eq!(rows(&report, "review_session_findings"), 2);
        assert_eq!(rows(&report, "llm_cache"), 1);
        // The copy reads as the source does, through the repositories.
        let findings = target
            .snapshot(|tx| tx.session_findings("p1-session"))
            .unwrap();
        let prints: Vec<&str> = findings.iter().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(
            prints,
            ["zz", "aa"],
            "findings keep the order they were found in"
        );
        assert_eq!(
            target
                .snapshot(|tx| tx.plan_by_name("p1"))
                .unwrap()
                .unwrap()
                .current_version,
            2
        );
        // New events number on after the copied ones.
        target
            .transact(|tx| tx.log_event("p1", None, "after", "", ""))
            .unwrap();
        let events = target.snapshot(|tx| tx.events("p1", 10)).unwrap();
        assert_eq!(events.len(), 3);
        assert!(events[2].seq > events[1].seq);

        // A target with rows is refused, and nothing changes.
        let other = Store::open_in_memory().unwrap();
        fill(&other, "p2");
        let err = other.copy_into(&target, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        assert!(
            target
                .snapshot(|tx| tx.plan_by_name("p2"))
                .unwrap()
                .is_none()
        );
        // --force replaces its contents with the source's.
        let forced = other.copy_into(&target, true).unwrap();
        assert!(forced.replaced_rows > 0);
        assert!(
            target
                .snapshot(|tx| tx.plan_by_name("p1"))
                .unwrap()
                .is_none()
        );
        assert!(
            target
                .snapshot(|tx| tx.plan_by_name("p2"))
                .unwrap()
                .is_some()
        );

        // And back to SQLite: the same rows, checksum for checksum.
        let back = TestDb::new(Backend::Sqlite).unwrap();
        let returned = target.copy_into(&back.open(), false).unwrap();
        assert_eq!(returned.tables, forced.tables);
    }

    #[test]
    fn an_sqlite_copy_reports_the_knowledge_store_it_leaves_behind() {
        let source = Store::open_in_memory().unwrap();
        fill(&source, "p");
        source
            .write(|tx| {
                tx.execute(
                    "INSERT INTO memory_entries (thread_id, source, text, content_type, created_ms, updated_ms)
                     VALUES ('t', 'user', 'x', 'text', 0, 0)",
                    [],
                )
                .map_err(StoreError::from)
            })
            .unwrap();
        let target = Store::open_in_memory().unwrap();
        let report = source.copy_into(&target, false).unwrap();
        assert_eq!(rows(&report, "review_session_steps"), 1);
        assert_eq!(report.not_copied.len(), 1, "{report:?}");
        assert!(report.not_copied[0].contains("1 entries"), "{report:?}");
    }
}
