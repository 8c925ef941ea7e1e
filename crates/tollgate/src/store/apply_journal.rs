//! The SQL of the apply journal (`plan_apply_journal`): one row per `execute_plan` step run that
//! may write files, opened with the step's start and closed with its completion or failure.
//!
//! The rows say nothing about liveness: whether the process that opened an `open` row is still
//! running is decided by its lock file (`plan::lifecycle::journal`), never by the row.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::plans::{json_list, to_json};
use crate::clock::now_rfc3339;

/// The states of a journal entry.
pub mod state {
    pub const OPEN: &str = "open";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const ROLLED_BACK: &str = "rolled_back";
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalRow {
    pub batch_id: String,
    pub plan_id: String,
    pub step_number: u32,
    pub state: String,
    pub temp_files: Vec<String>,
    pub owner_pid: u32,
    pub reason: Option<String>,
    pub opened_at: String,
    pub closed_at: Option<String>,
}

const COLUMNS: &str =
    "batch_id, plan_id, step_number, state, temp_files, owner_pid, reason, opened_at, closed_at";

fn row_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<(JournalRow, String)> {
    Ok((
        JournalRow {
            batch_id: row.get(0)?,
            plan_id: row.get(1)?,
            step_number: u32::try_from(row.get::<_, i64>(2)?.max(0)).unwrap_or(u32::MAX),
            state: row.get(3)?,
            temp_files: Vec::new(),
            owner_pid: u32::try_from(row.get::<_, i64>(5)?.max(0)).unwrap_or(u32::MAX),
            reason: row.get(6)?,
            opened_at: row.get(7)?,
            closed_at: row.get(8)?,
        },
        row.get(4)?,
    ))
}

fn finish((mut entry, temp_files): (JournalRow, String)) -> Result<JournalRow, StoreError> {
    entry.temp_files = json_list(&temp_files, &format!("temp files of {}", entry.batch_id))?;
    Ok(entry)
}

/// Opens an entry for step `step_number` of `plan_id`.
pub fn open(
    conn: &Connection,
    batch_id: &str,
    plan_id: &str,
    step_number: u32,
    owner_pid: u32,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO plan_apply_journal (batch_id, plan_id, step_number, state, owner_pid, opened_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            batch_id,
            plan_id,
            step_number,
            state::OPEN,
            owner_pid,
            now_rfc3339()
        ],
    )?;
    Ok(())
}

/// Records the temporary files an open entry's writes may leave behind.
pub fn set_temp_files(
    conn: &Connection,
    batch_id: &str,
    temp_files: &[String],
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE plan_apply_journal SET temp_files = ?2 WHERE batch_id = ?1 AND state = ?3",
        params![batch_id, to_json(temp_files), state::OPEN],
    )?;
    Ok(())
}

/// Closes an open entry; `false` when it was not open (closed by someone else already).
pub fn close(
    conn: &Connection,
    batch_id: &str,
    new_state: &str,
    reason: Option<&str>,
) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE plan_apply_journal SET state = ?2, reason = ?3, closed_at = ?4
         WHERE batch_id = ?1 AND state = ?5",
        params![batch_id, new_state, reason, now_rfc3339(), state::OPEN],
    )?;
    Ok(changed == 1)
}

/// One entry, by its batch id.
pub fn entry(conn: &Connection, batch_id: &str) -> Result<Option<JournalRow>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM plan_apply_journal WHERE batch_id = ?1"),
        [batch_id],
        row_of,
    )
    .optional()?
    .map(finish)
    .transpose()
}

/// Every open entry, oldest first.
pub fn open_entries(conn: &Connection) -> Result<Vec<JournalRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM plan_apply_journal WHERE state = ?1 ORDER BY opened_at, batch_id"
    ))?;
    let rows = stmt
        .query_map([state::OPEN], row_of)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(finish).collect()
}
