//! The SQL of plans: index rows, append-only versions, approvals, step states, the event log and
//! the record of applied file changes.
//!
//! Every function takes the open transaction, so the `plan` layer composes several of them into
//! one atomic change (read the current state, decide, write) under one `BEGIN IMMEDIATE`: two
//! processes doing read-modify-write on the same plan serialise instead of overwriting each
//! other. Plan content is opaque JSON here; its model lives in `plan`.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;
use crate::clock::now_rfc3339;

/// A plan's index row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    pub id: String,
    pub name: Option<String>,
    pub goal: String,
    pub status: String,
    pub tags: Vec<String>,
    pub current_version: u32,
    pub step_count: u32,
    pub created_at: String,
    pub updated_at: String,
    pub deleted_at: Option<String>,
}

/// One version of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRow {
    pub version: u32,
    pub change_type: String,
    pub summary: String,
    pub author: String,
    pub created_at: String,
    /// The full plan JSON; left out by listings that do not ask for it.
    pub plan_json: Option<String>,
}

/// What a new version records besides its content.
#[derive(Debug, Clone, Copy)]
pub struct VersionMeta<'a> {
    pub change_type: &'a str,
    pub summary: &'a str,
    pub author: &'a str,
}

/// The searchable facts of a plan's content, kept on its index row.
#[derive(Debug, Clone, Copy)]
pub struct PlanFacts<'a> {
    pub goal: &'a str,
    pub step_count: u32,
}

/// An approval request and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    pub id: String,
    pub plan_id: String,
    pub plan_version: u32,
    pub kind: String,
    pub step_numbers: Vec<u32>,
    pub status: String,
    pub requested_by: String,
    pub requested_at: String,
    pub note: String,
    pub responded_by: Option<String>,
    pub responded_at: Option<String>,
    pub comment: Option<String>,
    pub modifications: Option<String>,
}

/// The execution state of one step (a step without a row is pending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepStateRow {
    pub step_number: u32,
    pub status: String,
    pub attempts: u32,
    pub notes: String,
    pub files_changed: Vec<String>,
    pub error: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub updated_at: String,
}

/// One entry of a plan's event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub seq: i64,
    pub step_number: Option<u32>,
    pub kind: String,
    pub detail: String,
    pub author: String,
    pub created_at: String,
}

/// One applied file operation and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedChangeRow {
    pub batch_id: String,
    pub seq: u32,
    pub step_number: u32,
    pub operation: String,
    pub path: String,
    pub new_path: Option<String>,
    pub backup_path: Option<String>,
    pub before_sha256: Option<String>,
    pub after_sha256: Option<String>,
    pub applied_at: String,
    pub undone_at: Option<String>,
}

/// Filters of [`list_plans`].
#[derive(Debug, Clone, Default)]
pub struct PlanFilter<'a> {
    pub status: Option<&'a str>,
    /// Every tag must be present.
    pub tags: &'a [String],
    pub limit: usize,
    pub include_deleted: bool,
}

pub(super) fn json_list<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<Vec<T>, StoreError> {
    serde_json::from_str(text).map_err(|err| StoreError::Corrupt {
        what: what.to_string(),
        reason: err.to_string(),
    })
}

pub(super) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".to_string())
}

fn u32_of(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

const PLAN_COLUMNS: &str =
    "id, name, goal, status, tags, current_version, step_count, created_at, updated_at, deleted_at";

fn plan_row(row: &Row<'_>) -> rusqlite::Result<(PlanRow, String)> {
    Ok((
        PlanRow {
            id: row.get(0)?,
            name: row.get(1)?,
            goal: row.get(2)?,
            status: row.get(3)?,
            tags: Vec::new(),
            current_version: u32_of(row.get(5)?),
            step_count: u32_of(row.get(6)?),
            created_at: row.get(7)?,
            updated_at: row.get(8)?,
            deleted_at: row.get(9)?,
        },
        row.get(4)?,
    ))
}

fn finish_plan_row((mut plan, tags): (PlanRow, String)) -> Result<PlanRow, StoreError> {
    plan.tags = json_list(&tags, &format!("tags of plan {}", plan.id))?;
    Ok(plan)
}

/// A plan about to be created.
#[derive(Debug, Clone, Copy)]
pub struct NewPlan<'a> {
    pub id: &'a str,
    pub name: Option<&'a str>,
    pub status: &'a str,
    pub tags: &'a [String],
    pub facts: PlanFacts<'a>,
    pub plan_json: &'a str,
    pub meta: VersionMeta<'a>,
}

/// Creates a plan with its first version and returns its index row.
pub fn insert_plan(conn: &Connection, plan: &NewPlan<'_>) -> Result<PlanRow, StoreError> {
    let NewPlan {
        id,
        name,
        status,
        tags,
        facts,
        plan_json,
        meta,
    } = *plan;
    let now = now_rfc3339();
    conn.execute(
        "INSERT INTO plans (id, name, goal, status, tags, current_version, step_count, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, ?7)",
        params![id, name, facts.goal, status, to_json(tags), facts.step_count, now],
    )
    .map_err(|err| match err {
        rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
            StoreError::Conflict(format!("the name `{}` is taken", name.unwrap_or_default()))
        }
        other => other.into(),
    })?;
    insert_version(conn, id, 1, plan_json, meta, &now)?;
    plan_by_id(conn, id, false)?.ok_or_else(|| StoreError::Corrupt {
        what: format!("plan {id}"),
        reason: "not found right after it was written".to_string(),
    })
}

fn insert_version(
    conn: &Connection,
    plan_id: &str,
    version: u32,
    plan_json: &str,
    meta: VersionMeta<'_>,
    now: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_versions (plan_id, version, plan_json, change_type, summary, author, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![plan_id, version, plan_json, meta.change_type, meta.summary, meta.author, now],
    )?;
    Ok(())
}

/// Appends a version (the next number) and makes it current; returns its number.
pub fn append_version(
    conn: &Connection,
    plan_id: &str,
    facts: PlanFacts<'_>,
    plan_json: &str,
    meta: VersionMeta<'_>,
) -> Result<u32, StoreError> {
    let current: i64 = conn.query_row(
        "SELECT max(version) FROM plan_versions WHERE plan_id = ?1",
        [plan_id],
        |row| row.get(0),
    )?;
    let version = u32_of(current) + 1;
    let now = now_rfc3339();
    insert_version(conn, plan_id, version, plan_json, meta, &now)?;
    conn.execute(
        "UPDATE plans SET current_version = ?2, goal = ?3, step_count = ?4, updated_at = ?5 WHERE id = ?1",
        params![plan_id, version, facts.goal, facts.step_count, now],
    )?;
    Ok(version)
}

/// The index row of `id` (deleted plans only when asked).
pub fn plan_by_id(
    conn: &Connection,
    id: &str,
    include_deleted: bool,
) -> Result<Option<PlanRow>, StoreError> {
    let sql =
        format!("SELECT {PLAN_COLUMNS} FROM plans WHERE id = ?1 AND (?2 OR deleted_at IS NULL)");
    conn.query_row(&sql, params![id, include_deleted], plan_row)
        .optional()?
        .map(finish_plan_row)
        .transpose()
}

/// The live plan called `name`.
pub fn plan_by_name(conn: &Connection, name: &str) -> Result<Option<PlanRow>, StoreError> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE name = ?1 AND deleted_at IS NULL");
    conn.query_row(&sql, [name], plan_row)
        .optional()?
        .map(finish_plan_row)
        .transpose()
}

/// Plans, most recently updated first.
pub fn list_plans(conn: &Connection, filter: &PlanFilter<'_>) -> Result<Vec<PlanRow>, StoreError> {
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM plans
         WHERE (?1 OR deleted_at IS NULL) AND (?2 IS NULL OR status = ?2)
         ORDER BY updated_at DESC, id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(params![filter.include_deleted, filter.status], plan_row)?
        .collect::<Result<Vec<_>, _>>()?;
    let mut plans = Vec::new();
    for row in rows {
        let plan = finish_plan_row(row)?;
        if filter.tags.iter().all(|tag| plan.tags.contains(tag)) {
            plans.push(plan);
            if plans.len() >= filter.limit {
                break;
            }
        }
    }
    Ok(plans)
}

/// Updates name and tags of a plan.
pub fn set_name_and_tags(
    conn: &Connection,
    plan_id: &str,
    name: Option<&str>,
    tags: &[String],
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE plans SET name = ?2, tags = ?3, updated_at = ?4 WHERE id = ?1",
        params![plan_id, name, to_json(tags), now_rfc3339()],
    )?;
    Ok(())
}

pub fn set_status(conn: &Connection, plan_id: &str, status: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE plans SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![plan_id, status, now_rfc3339()],
    )?;
    Ok(())
}

/// Soft-deletes a plan: it disappears from listings and frees its name, nothing is erased.
pub fn soft_delete(conn: &Connection, plan_id: &str) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE plans SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1 AND deleted_at IS NULL",
        params![plan_id, now_rfc3339()],
    )?;
    Ok(changed == 1)
}

/// One version, with its content.
pub fn version(
    conn: &Connection,
    plan_id: &str,
    version: u32,
) -> Result<Option<VersionRow>, StoreError> {
    conn.query_row(
        "SELECT version, change_type, summary, author, created_at, plan_json
         FROM plan_versions WHERE plan_id = ?1 AND version = ?2",
        params![plan_id, version],
        |row| {
            Ok(VersionRow {
                version: u32_of(row.get(0)?),
                change_type: row.get(1)?,
                summary: row.get(2)?,
                author: row.get(3)?,
                created_at: row.get(4)?,
                plan_json: Some(row.get(5)?),
            })
        },
    )
    .optional()
    .map_err(StoreError::from)
}

/// Versions, newest first, at most `limit`; contents only when `with_content`.
pub fn versions(
    conn: &Connection,
    plan_id: &str,
    limit: usize,
    with_content: bool,
) -> Result<Vec<VersionRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT version, change_type, summary, author, created_at,
                CASE WHEN ?3 THEN plan_json END
         FROM plan_versions WHERE plan_id = ?1 ORDER BY version DESC LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    stmt.query_map(params![plan_id, limit, with_content], |row| {
        Ok(VersionRow {
            version: u32_of(row.get(0)?),
            change_type: row.get(1)?,
            summary: row.get(2)?,
            author: row.get(3)?,
            created_at: row.get(4)?,
            plan_json: row.get(5)?,
        })
    })?
    .collect::<Result<_, _>>()
    .map_err(StoreError::from)
}

pub fn version_count(conn: &Connection, plan_id: &str) -> Result<u32, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM plan_versions WHERE plan_id = ?1",
        [plan_id],
        |row| row.get(0),
    )?;
    Ok(u32_of(n))
}

/// Appends to the event log.
pub fn log_event(
    conn: &Connection,
    plan_id: &str,
    step_number: Option<u32>,
    kind: &str,
    detail: &str,
    author: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_events (plan_id, step_number, kind, detail, author, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![plan_id, step_number, kind, detail, author, now_rfc3339()],
    )?;
    Ok(())
}

/// The newest `limit` events, oldest first.
pub fn events(conn: &Connection, plan_id: &str, limit: usize) -> Result<Vec<EventRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT seq, step_number, kind, detail, author, created_at FROM (
             SELECT * FROM plan_events WHERE plan_id = ?1 ORDER BY seq DESC LIMIT ?2
         ) ORDER BY seq",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    stmt.query_map(params![plan_id, limit], |row| {
        Ok(EventRow {
            seq: row.get(0)?,
            step_number: row.get::<_, Option<i64>>(1)?.map(u32_of),
            kind: row.get(2)?,
            detail: row.get(3)?,
            author: row.get(4)?,
            created_at: row.get(5)?,
        })
    })?
    .collect::<Result<_, _>>()
    .map_err(StoreError::from)
}

const APPROVAL_COLUMNS: &str = "id, plan_id, plan_version, kind, step_numbers, status, requested_by, requested_at, note, responded_by, responded_at, comment, modifications";

fn approval_row(row: &Row<'_>) -> rusqlite::Result<(ApprovalRow, String)> {
    Ok((
        ApprovalRow {
            id: row.get(0)?,
            plan_id: row.get(1)?,
            plan_version: u32_of(row.get(2)?),
            kind: row.get(3)?,
            step_numbers: Vec::new(),
            status: row.get(5)?,
            requested_by: row.get(6)?,
            requested_at: row.get(7)?,
            note: row.get(8)?,
            responded_by: row.get(9)?,
            responded_at: row.get(10)?,
            comment: row.get(11)?,
            modifications: row.get(12)?,
        },
        row.get(4)?,
    ))
}

fn finish_approval(
    (mut approval, steps): (ApprovalRow, String),
) -> Result<ApprovalRow, StoreError> {
    approval.step_numbers = json_list(&steps, &format!("steps of approval {}", approval.id))?;
    Ok(approval)
}

pub fn insert_approval(conn: &Connection, approval: &ApprovalRow) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_approvals (id, plan_id, plan_version, kind, step_numbers, status, requested_by, requested_at, note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            approval.id,
            approval.plan_id,
            approval.plan_version,
            approval.kind,
            to_json(&approval.step_numbers),
            approval.status,
            approval.requested_by,
            approval.requested_at,
            approval.note,
        ],
    )?;
    Ok(())
}

pub fn approval(conn: &Connection, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
    let sql = format!("SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE id = ?1");
    conn.query_row(&sql, [id], approval_row)
        .optional()?
        .map(finish_approval)
        .transpose()
}

/// A plan's approvals, oldest first.
pub fn approvals(conn: &Connection, plan_id: &str) -> Result<Vec<ApprovalRow>, StoreError> {
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE plan_id = ?1 ORDER BY requested_at, id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map([plan_id], approval_row)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(finish_approval).collect()
}

/// Records the answer to a pending approval; `false` when it was no longer pending (someone
/// else answered first).
pub fn respond_approval(
    conn: &Connection,
    id: &str,
    status: &str,
    responded_by: &str,
    comment: Option<&str>,
    modifications: Option<&str>,
) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE plan_approvals SET status = ?2, responded_by = ?3, responded_at = ?4, comment = ?5, modifications = ?6
         WHERE id = ?1 AND status = 'pending'",
        params![id, status, responded_by, now_rfc3339(), comment, modifications],
    )?;
    Ok(changed == 1)
}

/// Every step state of a plan, by step id.
pub fn step_states(conn: &Connection, plan_id: &str) -> Result<Vec<StepStateRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT step_number, status, attempts, notes, files_changed, error, started_at, finished_at, updated_at
         FROM plan_step_states WHERE plan_id = ?1 ORDER BY step_number",
    )?;
    let rows = stmt
        .query_map([plan_id], |row| {
            Ok((
                StepStateRow {
                    step_number: u32_of(row.get(0)?),
                    status: row.get(1)?,
                    attempts: u32_of(row.get(2)?),
                    notes: row.get(3)?,
                    files_changed: Vec::new(),
                    error: row.get(5)?,
                    started_at: row.get(6)?,
                    finished_at: row.get(7)?,
                    updated_at: row.get(8)?,
                },
                row.get::<_, String>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(mut state, files)| {
            state.files_changed =
                json_list(&files, &format!("files of step {}", state.step_number))?;
            Ok(state)
        })
        .collect()
}

/// Writes a step's state (insert or replace).
pub fn put_step_state(
    conn: &Connection,
    plan_id: &str,
    state: &StepStateRow,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_step_states (plan_id, step_number, status, attempts, notes, files_changed, error, started_at, finished_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (plan_id, step_number) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
             notes = excluded.notes, files_changed = excluded.files_changed, error = excluded.error,
             started_at = excluded.started_at, finished_at = excluded.finished_at, updated_at = excluded.updated_at",
        params![
            plan_id,
            state.step_number,
            state.status,
            state.attempts,
            state.notes,
            to_json(&state.files_changed),
            state.error,
            state.started_at,
            state.finished_at,
            state.updated_at,
        ],
    )?;
    Ok(())
}

pub fn insert_applied_change(
    conn: &Connection,
    plan_id: &str,
    change: &AppliedChangeRow,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_applied_changes (batch_id, seq, plan_id, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            change.batch_id,
            change.seq,
            plan_id,
            change.step_number,
            change.operation,
            change.path,
            change.new_path,
            change.backup_path,
            change.before_sha256,
            change.after_sha256,
            change.applied_at,
        ],
    )?;
    Ok(())
}

/// Applied changes of a plan, in application order.
pub fn applied_changes(
    conn: &Connection,
    plan_id: &str,
) -> Result<Vec<AppliedChangeRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT batch_id, seq, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at, undone_at
         FROM plan_applied_changes WHERE plan_id = ?1 ORDER BY applied_at, batch_id, seq",
    )?;
    stmt.query_map([plan_id], applied_change_row)?
        .collect::<Result<_, _>>()
        .map_err(StoreError::from)
}

/// The applied changes of one batch, in application order.
pub fn applied_changes_of_batch(
    conn: &Connection,
    batch_id: &str,
) -> Result<Vec<AppliedChangeRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT batch_id, seq, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at, undone_at
         FROM plan_applied_changes WHERE batch_id = ?1 ORDER BY seq",
    )?;
    stmt.query_map([batch_id], applied_change_row)?
        .collect::<Result<_, _>>()
        .map_err(StoreError::from)
}

fn applied_change_row(row: &Row<'_>) -> rusqlite::Result<AppliedChangeRow> {
    Ok(AppliedChangeRow {
        batch_id: row.get(0)?,
        seq: u32_of(row.get(1)?),
        step_number: u32_of(row.get(2)?),
        operation: row.get(3)?,
        path: row.get(4)?,
        new_path: row.get(5)?,
        backup_path: row.get(6)?,
        before_sha256: row.get(7)?,
        after_sha256: row.get(8)?,
        applied_at: row.get(9)?,
        undone_at: row.get(10)?,
    })
}

pub fn mark_batch_undone(conn: &Connection, batch_id: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE plan_applied_changes SET undone_at = ?2 WHERE batch_id = ?1 AND undone_at IS NULL",
        params![batch_id, now_rfc3339()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(change_type: &str) -> VersionMeta<'_> {
        VersionMeta {
            change_type,
            summary: "s",
            author: "tester",
        }
    }

    fn new_plan<'a>(
        id: &'a str,
        name: Option<&'a str>,
        tags: &'a [String],
        facts: PlanFacts<'a>,
    ) -> NewPlan<'a> {
        NewPlan {
            id,
            name,
            status: "ready",
            tags,
            facts,
            plan_json: "{}",
            meta: meta("created"),
        }
    }

    fn pending_approval(id: &str, plan_id: &str) -> ApprovalRow {
        ApprovalRow {
            id: id.to_string(),
            plan_id: plan_id.into(),
            plan_version: 1,
            kind: "step".into(),
            step_numbers: vec![2],
            status: "pending".into(),
            requested_by: "a".into(),
            requested_at: now_rfc3339(),
            note: String::new(),
            responded_by: None,
            responded_at: None,
            comment: None,
            modifications: None,
        }
    }

    crate::backend_tests! {
        fn versions_append_and_names_are_unique_among_live_plans(store) {
            let tags = vec!["a".to_string()];
            let facts = PlanFacts {
                goal: "g",
                step_count: 2,
            };
            store
                .transact(|tx| {
                    let plan = tx.insert_plan(&new_plan("p1", Some("n"), &tags, facts))?;
                    assert_eq!(plan.current_version, 1);
                    assert_eq!(plan.tags, vec!["a".to_string()]);
                    assert_eq!(
                        tx.append_version("p1", facts, "{\"v\":2}", meta("refined"))?,
                        2
                    );
                    Ok::<_, StoreError>(())
                })
                .unwrap();
            // Same name, second live plan: refused, nothing written.
            let err = store
                .transact(|tx| tx.insert_plan(&new_plan("p2", Some("n"), &[], facts)))
                .unwrap_err();
            assert!(matches!(err, StoreError::Conflict(_)), "{err}");
            assert!(store.snapshot(|tx| tx.plan_by_id("p2", true)).unwrap().is_none());
            store
                .transact(|tx| {
                    assert!(tx.soft_delete("p1")?);
                    assert!(!tx.soft_delete("p1")?);
                    tx.insert_plan(&new_plan("p2", Some("n"), &[], facts))
                })
                .unwrap();
            store
                .snapshot(|tx| {
                    assert_eq!(tx.plan_by_name("n")?.unwrap().id, "p2");
                    assert!(tx.plan_by_id("p1", false)?.is_none());
                    assert_eq!(tx.plan_by_id("p1", true)?.unwrap().current_version, 2);
                    assert_eq!(tx.version_count("p1")?, 2);
                    let listed = tx.versions("p1", 10, false)?;
                    assert_eq!(listed.iter().map(|v| v.version).collect::<Vec<_>>(), [2, 1]);
                    assert!(listed[0].plan_json.is_none());
                    assert_eq!(tx.versions("p1", 1, true)?[0].plan_json.as_deref(), Some("{\"v\":2}"));
                    assert_eq!(
                        tx.version("p1", 2)?.unwrap().plan_json.as_deref(),
                        Some("{\"v\":2}")
                    );
                    assert!(tx.version("p1", 3)?.is_none());
                    Ok::<_, StoreError>(())
                })
                .unwrap();
        }

        fn listings_filter_by_status_tags_and_deletion(store) {
            let facts = PlanFacts {
                goal: "g",
                step_count: 1,
            };
            let red = vec!["red".to_string()];
            let both = vec!["red".to_string(), "blue".to_string()];
            store
                .transact(|tx| {
                    tx.insert_plan(&new_plan("a", Some("a"), &red, facts))?;
                    tx.insert_plan(&new_plan("b", None, &both, facts))?;
                    tx.insert_plan(&new_plan("c", None, &[], facts))?;
                    tx.set_status("c", "done")?;
                    tx.set_name_and_tags("a", Some("renamed"), &both)?;
                    tx.soft_delete("b").map(drop)
                })
                .unwrap();
            let ids = |filter: PlanFilter<'_>| {
                let mut ids: Vec<String> = store
                    .snapshot(|tx| tx.list_plans(&filter))
                    .unwrap()
                    .into_iter()
                    .map(|plan| plan.id)
                    .collect();
                ids.sort();
                ids
            };
            let all = PlanFilter { limit: 10, ..PlanFilter::default() };
            assert_eq!(ids(all.clone()), ["a", "c"]);
            assert_eq!(ids(PlanFilter { include_deleted: true, ..all.clone() }), ["a", "b", "c"]);
            assert_eq!(ids(PlanFilter { status: Some("done"), ..all.clone() }), ["c"]);
            let blue = vec!["blue".to_string()];
            assert_eq!(ids(PlanFilter { tags: &blue, ..all.clone() }), ["a"]);
            assert_eq!(ids(PlanFilter { limit: 1, ..all }).len(), 1);
            let renamed = store.snapshot(|tx| tx.plan_by_name("renamed")).unwrap().unwrap();
            assert_eq!(renamed.tags, both);
        }

        fn an_approval_is_answered_once(store) {
            store
                .transact(|tx| {
                    let facts = PlanFacts {
                        goal: "",
                        step_count: 0,
                    };
                    tx.insert_plan(&new_plan("p", None, &[], facts))?;
                    let id = crate::ids::new_id("approval");
                    assert!(id.starts_with("approval_"));
                    tx.insert_approval(&pending_approval(&id, "p"))?;
                    assert!(tx.respond_approval(&id, "approved", "b", Some("ok"), None)?);
                    assert!(!tx.respond_approval(&id, "rejected", "c", None, None)?);
                    let stored = tx.approval(&id)?.unwrap();
                    assert_eq!(stored.status, "approved");
                    assert_eq!(stored.step_numbers, vec![2]);
                    assert_eq!(stored.responded_by.as_deref(), Some("b"));
                    assert_eq!(tx.approvals("p")?.len(), 1);
                    Ok::<_, StoreError>(())
                })
                .unwrap();
        }

        fn step_states_events_and_applied_changes_round_trip(store) {
            let facts = PlanFacts {
                goal: "",
                step_count: 2,
            };
            let state = StepStateRow {
                step_number: 2,
                status: "in_progress".into(),
                attempts: 1,
                notes: "n".into(),
                files_changed: vec!["a.rs".into()],
                error: None,
                started_at: Some(now_rfc3339()),
                finished_at: None,
                updated_at: now_rfc3339(),
            };
            let change = AppliedChangeRow {
                batch_id: "batch_1".into(),
                seq: 0,
                step_number: 2,
                operation: "write".into(),
                path: "a.rs".into(),
                new_path: None,
                backup_path: Some(".tollgate/backup/x".into()),
                before_sha256: None,
                after_sha256: Some("ab".into()),
                applied_at: now_rfc3339(),
                undone_at: None,
            };
            store
                .transact(|tx| {
                    tx.insert_plan(&new_plan("p", None, &[], facts))?;
                    tx.put_step_state("p", &state)?;
                    tx.put_step_state("p", &StepStateRow { status: "completed".into(), attempts: 2, ..state.clone() })?;
                    for kind in ["one", "two", "three"] {
                        tx.log_event("p", Some(2), kind, "d", "me")?;
                    }
                    tx.log_event("p", None, "four", "", "")?;
                    tx.insert_applied_change("p", &change)?;
                    tx.insert_applied_change("p", &AppliedChangeRow { seq: 1, ..change.clone() })?;
                    Ok::<_, StoreError>(())
                })
                .unwrap();
            store
                .snapshot(|tx| {
                    let states = tx.step_states("p")?;
                    assert_eq!(states.len(), 1);
                    assert_eq!((states[0].status.as_str(), states[0].attempts), ("completed", 2));
                    assert_eq!(states[0].files_changed, ["a.rs"]);
                    let events = tx.events("p", 2)?;
                    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
                    assert_eq!(kinds, ["three", "four"], "the newest, oldest first");
                    assert_eq!(events[1].step_number, None);
                    assert!(events[0].seq < events[1].seq);
                    assert_eq!(tx.applied_changes("p")?.len(), 2);
                    assert_eq!(tx.applied_changes_of_batch("batch_1")?[1].seq, 1);
                    Ok::<_, StoreError>(())
                })
                .unwrap();
            store.transact(|tx| tx.mark_batch_undone("batch_1")).unwrap();
            let undone = store.snapshot(|tx| tx.applied_changes_of_batch("batch_1")).unwrap();
            assert!(undone.iter().all(|row| row.undone_at.is_some()));
        }

        fn a_failed_transaction_leaves_nothing_behind(store) {
            let facts = PlanFacts {
                goal: "",
                step_count: 0,
            };
            let result: Result<(), StoreError> = store.transact(|tx| {
                tx.insert_plan(&new_plan("gone", None, &[], facts))?;
                Err(StoreError::Corrupt {
                    what: "test".into(),
                    reason: "abort".into(),
                })
            });
            assert!(result.is_err());
            assert!(store.snapshot(|tx| tx.plan_by_id("gone", true)).unwrap().is_none());
        }
    }
}
