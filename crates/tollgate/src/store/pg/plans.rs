//! Plans on PostgreSQL: the SQL of `store::plans` in PostgreSQL's dialect, behind the same
//! repository traits. Text that orders results is compared byte by byte (`COLLATE "C"`), as
//! SQLite does, so both backends list in the same order whatever the database's locale.

use postgres::Row;

use super::super::StoreError;
use super::super::plans::{
    AppliedChangeRow, ApprovalRow, EventRow, NewPlan, PlanFacts, PlanFilter, PlanRow, StepStateRow,
    VersionMeta, VersionRow, json_list, to_json,
};
use super::super::repo::{PlanReads, PlanWrites};
use super::tx::{PgTx, u32_of};
use crate::clock::now_rfc3339;

const PLAN_COLUMNS: &str =
    "id, name, goal, status, tags, current_version, step_count, created_at, updated_at, deleted_at";

fn plan_row(row: &Row) -> Result<PlanRow, StoreError> {
    let id: String = row.try_get(0)?;
    let tags: String = row.try_get(4)?;
    Ok(PlanRow {
        tags: json_list(&tags, &format!("tags of plan {id}"))?,
        id,
        name: row.try_get(1)?,
        goal: row.try_get(2)?,
        status: row.try_get(3)?,
        current_version: u32_of(row.try_get(5)?),
        step_count: u32_of(row.try_get(6)?),
        created_at: row.try_get(7)?,
        updated_at: row.try_get(8)?,
        deleted_at: row.try_get(9)?,
    })
}

fn version_row(row: &Row) -> Result<VersionRow, StoreError> {
    Ok(VersionRow {
        version: u32_of(row.try_get(0)?),
        change_type: row.try_get(1)?,
        summary: row.try_get(2)?,
        author: row.try_get(3)?,
        created_at: row.try_get(4)?,
        plan_json: row.try_get(5)?,
    })
}

const APPROVAL_COLUMNS: &str = "id, plan_id, plan_version, kind, step_numbers, status, requested_by, requested_at, note, responded_by, responded_at, comment, modifications";

fn approval_row(row: &Row) -> Result<ApprovalRow, StoreError> {
    let id: String = row.try_get(0)?;
    let steps: String = row.try_get(4)?;
    Ok(ApprovalRow {
        step_numbers: json_list(&steps, &format!("steps of approval {id}"))?,
        id,
        plan_id: row.try_get(1)?,
        plan_version: u32_of(row.try_get(2)?),
        kind: row.try_get(3)?,
        status: row.try_get(5)?,
        requested_by: row.try_get(6)?,
        requested_at: row.try_get(7)?,
        note: row.try_get(8)?,
        responded_by: row.try_get(9)?,
        responded_at: row.try_get(10)?,
        comment: row.try_get(11)?,
        modifications: row.try_get(12)?,
    })
}

const APPLIED_COLUMNS: &str = "batch_id, seq, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at, undone_at";

fn applied_change_row(row: &Row) -> Result<AppliedChangeRow, StoreError> {
    Ok(AppliedChangeRow {
        batch_id: row.try_get(0)?,
        seq: u32_of(row.try_get(1)?),
        step_number: u32_of(row.try_get(2)?),
        operation: row.try_get(3)?,
        path: row.try_get(4)?,
        new_path: row.try_get(5)?,
        backup_path: row.try_get(6)?,
        before_sha256: row.try_get(7)?,
        after_sha256: row.try_get(8)?,
        applied_at: row.try_get(9)?,
        undone_at: row.try_get(10)?,
    })
}

fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl PgTx<'_, '_> {
    fn insert_version(
        &self,
        plan_id: &str,
        version: u32,
        plan_json: &str,
        meta: VersionMeta<'_>,
        now: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_versions (plan_id, version, plan_json, change_type, summary, author, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &plan_id,
                &i64::from(version),
                &plan_json,
                &meta.change_type,
                &meta.summary,
                &meta.author,
                &now,
            ],
        )?;
        Ok(())
    }
}

impl PlanReads for PgTx<'_, '_> {
    fn plan_by_id(&self, id: &str, include_deleted: bool) -> Result<Option<PlanRow>, StoreError> {
        self.row(
            &format!(
                "SELECT {PLAN_COLUMNS} FROM plans WHERE id = $1 AND ($2 OR deleted_at IS NULL)"
            ),
            &[&id, &include_deleted],
        )?
        .as_ref()
        .map(plan_row)
        .transpose()
    }

    fn plan_by_name(&self, name: &str) -> Result<Option<PlanRow>, StoreError> {
        self.row(
            &format!("SELECT {PLAN_COLUMNS} FROM plans WHERE name = $1 AND deleted_at IS NULL"),
            &[&name],
        )?
        .as_ref()
        .map(plan_row)
        .transpose()
    }

    fn list_plans(&self, filter: &PlanFilter<'_>) -> Result<Vec<PlanRow>, StoreError> {
        let rows = self.rows(
            &format!(
                "SELECT {PLAN_COLUMNS} FROM plans
                 WHERE ($1 OR deleted_at IS NULL) AND ($2::TEXT IS NULL OR status = $2)
                 ORDER BY updated_at COLLATE \"C\" DESC, id COLLATE \"C\""
            ),
            &[&filter.include_deleted, &filter.status],
        )?;
        let mut plans = Vec::new();
        for row in &rows {
            let plan = plan_row(row)?;
            if filter.tags.iter().all(|tag| plan.tags.contains(tag)) {
                plans.push(plan);
                if plans.len() >= filter.limit {
                    break;
                }
            }
        }
        Ok(plans)
    }

    fn version(&self, plan_id: &str, version: u32) -> Result<Option<VersionRow>, StoreError> {
        self.row(
            "SELECT version, change_type, summary, author, created_at, plan_json
             FROM plan_versions WHERE plan_id = $1 AND version = $2",
            &[&plan_id, &i64::from(version)],
        )?
        .as_ref()
        .map(version_row)
        .transpose()
    }

    fn versions(
        &self,
        plan_id: &str,
        limit: usize,
        with_content: bool,
    ) -> Result<Vec<VersionRow>, StoreError> {
        self.rows(
            "SELECT version, change_type, summary, author, created_at,
                    CASE WHEN $3 THEN plan_json END
             FROM plan_versions WHERE plan_id = $1 ORDER BY version DESC LIMIT $2",
            &[&plan_id, &limit_of(limit), &with_content],
        )?
        .iter()
        .map(version_row)
        .collect()
    }

    fn version_count(&self, plan_id: &str) -> Result<u32, StoreError> {
        let row = self.one(
            "SELECT count(*) FROM plan_versions WHERE plan_id = $1",
            &[&plan_id],
        )?;
        Ok(u32_of(row.try_get(0)?))
    }

    fn events(&self, plan_id: &str, limit: usize) -> Result<Vec<EventRow>, StoreError> {
        self.rows(
            "SELECT seq, step_number, kind, detail, author, created_at FROM (
                 SELECT * FROM plan_events WHERE plan_id = $1 ORDER BY seq DESC LIMIT $2
             ) newest ORDER BY seq",
            &[&plan_id, &limit_of(limit)],
        )?
        .iter()
        .map(|row| {
            Ok(EventRow {
                seq: row.try_get(0)?,
                step_number: row.try_get::<_, Option<i64>>(1)?.map(u32_of),
                kind: row.try_get(2)?,
                detail: row.try_get(3)?,
                author: row.try_get(4)?,
                created_at: row.try_get(5)?,
            })
        })
        .collect()
    }

    fn approval(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        self.row(
            &format!("SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE id = $1"),
            &[&id],
        )?
        .as_ref()
        .map(approval_row)
        .transpose()
    }

    fn approvals(&self, plan_id: &str) -> Result<Vec<ApprovalRow>, StoreError> {
        self.rows(
            &format!(
                "SELECT {APPROVAL_COLUMNS} FROM plan_approvals WHERE plan_id = $1
                 ORDER BY requested_at COLLATE \"C\", id COLLATE \"C\""
            ),
            &[&plan_id],
        )?
        .iter()
        .map(approval_row)
        .collect()
    }

    fn step_states(&self, plan_id: &str) -> Result<Vec<StepStateRow>, StoreError> {
        self.rows(
            "SELECT step_number, status, attempts, notes, files_changed, error, started_at, finished_at, updated_at
             FROM plan_step_states WHERE plan_id = $1 ORDER BY step_number",
            &[&plan_id],
        )?
        .iter()
        .map(|row| {
            let step_number = u32_of(row.try_get(0)?);
            let files: String = row.try_get(4)?;
            Ok(StepStateRow {
                step_number,
                status: row.try_get(1)?,
                attempts: u32_of(row.try_get(2)?),
                notes: row.try_get(3)?,
                files_changed: json_list(&files, &format!("files of step {step_number}"))?,
                error: row.try_get(5)?,
                started_at: row.try_get(6)?,
                finished_at: row.try_get(7)?,
                updated_at: row.try_get(8)?,
            })
        })
        .collect()
    }

    fn applied_changes(&self, plan_id: &str) -> Result<Vec<AppliedChangeRow>, StoreError> {
        self.rows(
            &format!(
                "SELECT {APPLIED_COLUMNS} FROM plan_applied_changes WHERE plan_id = $1
                 ORDER BY applied_at COLLATE \"C\", batch_id COLLATE \"C\", seq"
            ),
            &[&plan_id],
        )?
        .iter()
        .map(applied_change_row)
        .collect()
    }

    fn applied_changes_of_batch(
        &self,
        batch_id: &str,
    ) -> Result<Vec<AppliedChangeRow>, StoreError> {
        self.rows(
            &format!(
                "SELECT {APPLIED_COLUMNS} FROM plan_applied_changes WHERE batch_id = $1 ORDER BY seq"
            ),
            &[&batch_id],
        )?
        .iter()
        .map(applied_change_row)
        .collect()
    }
}

impl PlanWrites for PgTx<'_, '_> {
    fn insert_plan(&self, plan: &NewPlan<'_>) -> Result<PlanRow, StoreError> {
        let NewPlan {
            id,
            name,
            status,
            tags,
            facts,
            plan_json,
            meta,
        } = *plan;
        // Checked before writing, so the transaction stays usable for a caller that goes on
        // after the refusal (a failed statement would abort it). Writers run one at a time
        // (the store's write lock), so nothing takes the name in between.
        if let Some(name) = name
            && self.plan_by_name(name)?.is_some()
        {
            return Err(StoreError::Conflict(format!("the name `{name}` is taken")));
        }
        let now = now_rfc3339();
        self.exec(
            "INSERT INTO plans (id, name, goal, status, tags, current_version, step_count, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $7)",
            &[
                &id,
                &name,
                &facts.goal,
                &status,
                &to_json(tags),
                &i64::from(facts.step_count),
                &now,
            ],
        )?;
        self.insert_version(id, 1, plan_json, meta, &now)?;
        self.plan_by_id(id, false)?
            .ok_or_else(|| StoreError::Corrupt {
                what: format!("plan {id}"),
                reason: "not found right after it was written".to_string(),
            })
    }

    fn append_version(
        &self,
        plan_id: &str,
        facts: PlanFacts<'_>,
        plan_json: &str,
        meta: VersionMeta<'_>,
    ) -> Result<u32, StoreError> {
        let row = self.one(
            "SELECT coalesce(max(version), 0) FROM plan_versions WHERE plan_id = $1",
            &[&plan_id],
        )?;
        let version = u32_of(row.try_get(0)?) + 1;
        let now = now_rfc3339();
        self.insert_version(plan_id, version, plan_json, meta, &now)?;
        self.exec(
            "UPDATE plans SET current_version = $2, goal = $3, step_count = $4, updated_at = $5 WHERE id = $1",
            &[
                &plan_id,
                &i64::from(version),
                &facts.goal,
                &i64::from(facts.step_count),
                &now,
            ],
        )?;
        Ok(version)
    }

    fn set_name_and_tags(
        &self,
        plan_id: &str,
        name: Option<&str>,
        tags: &[String],
    ) -> Result<(), StoreError> {
        if let Some(name) = name
            && self
                .plan_by_name(name)?
                .is_some_and(|other| other.id != plan_id)
        {
            return Err(StoreError::Conflict(format!("the name `{name}` is taken")));
        }
        self.exec(
            "UPDATE plans SET name = $2, tags = $3, updated_at = $4 WHERE id = $1",
            &[&plan_id, &name, &to_json(tags), &now_rfc3339()],
        )?;
        Ok(())
    }

    fn set_status(&self, plan_id: &str, status: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE plans SET status = $2, updated_at = $3 WHERE id = $1",
            &[&plan_id, &status, &now_rfc3339()],
        )?;
        Ok(())
    }

    fn soft_delete(&self, plan_id: &str) -> Result<bool, StoreError> {
        let changed = self.exec(
            "UPDATE plans SET deleted_at = $2, updated_at = $2 WHERE id = $1 AND deleted_at IS NULL",
            &[&plan_id, &now_rfc3339()],
        )?;
        Ok(changed == 1)
    }

    fn log_event(
        &self,
        plan_id: &str,
        step_number: Option<u32>,
        kind: &str,
        detail: &str,
        author: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_events (plan_id, step_number, kind, detail, author, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &plan_id,
                &step_number.map(i64::from),
                &kind,
                &detail,
                &author,
                &now_rfc3339(),
            ],
        )?;
        Ok(())
    }

    fn insert_approval(&self, approval: &ApprovalRow) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_approvals (id, plan_id, plan_version, kind, step_numbers, status, requested_by, requested_at, note)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &approval.id,
                &approval.plan_id,
                &i64::from(approval.plan_version),
                &approval.kind,
                &to_json(&approval.step_numbers),
                &approval.status,
                &approval.requested_by,
                &approval.requested_at,
                &approval.note,
            ],
        )?;
        Ok(())
    }

    fn respond_approval(
        &self,
        id: &str,
        status: &str,
        responded_by: &str,
        comment: Option<&str>,
        modifications: Option<&str>,
    ) -> Result<bool, StoreError> {
        let changed = self.exec(
            "UPDATE plan_approvals SET status = $2, responded_by = $3, responded_at = $4, comment = $5, modifications = $6
             WHERE id = $1 AND status = 'pending'",
            &[&id, &status, &responded_by, &now_rfc3339(), &comment, &modifications],
        )?;
        Ok(changed == 1)
    }

    fn put_step_state(&self, plan_id: &str, state: &StepStateRow) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_step_states (plan_id, step_number, status, attempts, notes, files_changed, error, started_at, finished_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (plan_id, step_number) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
                 notes = excluded.notes, files_changed = excluded.files_changed, error = excluded.error,
                 started_at = excluded.started_at, finished_at = excluded.finished_at, updated_at = excluded.updated_at",
            &[
                &plan_id,
                &i64::from(state.step_number),
                &state.status,
                &i64::from(state.attempts),
                &state.notes,
                &to_json(&state.files_changed),
                &state.error,
                &state.started_at,
                &state.finished_at,
                &state.updated_at,
            ],
        )?;
        Ok(())
    }

    fn insert_applied_change(
        &self,
        plan_id: &str,
        change: &AppliedChangeRow,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO plan_applied_changes (batch_id, seq, plan_id, step_number, operation, path, new_path, backup_path, before_sha256, after_sha256, applied_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            &[
                &change.batch_id,
                &i64::from(change.seq),
                &plan_id,
                &i64::from(change.step_number),
                &change.operation,
                &change.path,
                &change.new_path,
                &change.backup_path,
                &change.before_sha256,
                &change.after_sha256,
                &change.applied_at,
            ],
        )?;
        Ok(())
    }

    fn mark_batch_undone(&self, batch_id: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE plan_applied_changes SET undone_at = $2 WHERE batch_id = $1 AND undone_at IS NULL",
            &[&batch_id, &now_rfc3339()],
        )?;
        Ok(())
    }
}
