//! The apply journal on PostgreSQL: `store::apply_journal`'s SQL in PostgreSQL's dialect.

use postgres::Row;

use super::super::StoreError;
use super::super::apply_journal::{JournalRow, state};
use super::super::plans::{json_list, to_json};
use super::super::repo::{JournalReads, JournalWrites};
use super::tx::{PgTx, u32_of};
use crate::clock::now_rfc3339;

const COLUMNS: &str =
    "batch_id, plan_id, step_number, state, temp_files, owner_pid, reason, opened_at, closed_at";

fn journal_row(row: &Row) -> Result<JournalRow, StoreError> {
    let batch_id: String = row.try_get(0)?;
    let temp_files: String = row.try_get(4)?;
    Ok(JournalRow {
        temp_files: json_list(&temp_files, &format!("temp files of {batch_id}"))?,
        batch_id,
        plan_id: row.try_get(1)?,
        step_number: u32_of(row.try_get(2)?),
        state: row.try_get(3)?,
        owner_pid: u32_of(row.try_get(5)?),
        reason: row.try_get(6)?,
        opened_at: row.try_get(7)?,
        closed_at: row.try_get(8)?,
    })
}

impl JournalReads for PgTx<'_, '_> {
    fn journal_entry(&self, batch_id: &str) -> Result<Option<JournalRow>, StoreError> {
        self.row(
            &format!("SELECT {COLUMNS} FROM plan_apply_journal WHERE batch_id = $1"),
            &[&batch_id],
        )?
        .as_ref()
        .map(journal_row)
        .transpose()
    }

    fn journal_open_entries(&self) -> Result<Vec<JournalRow>, StoreError> {
        self.rows(
            &format!(
                "SELECT {COLUMNS} FROM plan_apply_journal WHERE state = $1
                 ORDER BY opened_at COLLATE \"C\", batch_id COLLATE \"C\""
            ),
            &[&state::OPEN],
        )?
        .iter()
        .map(journal_row)
        .collect()
    }
}

impl JournalWrites for PgTx<'_, '_> {
    fn journal_open(
        &self,
        batch_id: &str,
        plan_id: &str,
        step_number: u32,
        owner_pid: u32,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_apply_journal (batch_id, plan_id, step_number, state, owner_pid, opened_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &batch_id,
                &plan_id,
                &i64::from(step_number),
                &state::OPEN,
                &i64::from(owner_pid),
                &now_rfc3339(),
            ],
        )?;
        Ok(())
    }

    fn journal_set_temp_files(
        &self,
        batch_id: &str,
        temp_files: &[String],
    ) -> Result<(), StoreError> {
        self.exec(
            "UPDATE plan_apply_journal SET temp_files = $2 WHERE batch_id = $1 AND state = $3",
            &[&batch_id, &to_json(temp_files), &state::OPEN],
        )?;
        Ok(())
    }

    fn journal_close(
        &self,
        batch_id: &str,
        new_state: &str,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        let changed = self.exec(
            "UPDATE plan_apply_journal SET state = $2, reason = $3, closed_at = $4
             WHERE batch_id = $1 AND state = $5",
            &[&batch_id, &new_state, &reason, &now_rfc3339(), &state::OPEN],
        )?;
        Ok(changed == 1)
    }
}
