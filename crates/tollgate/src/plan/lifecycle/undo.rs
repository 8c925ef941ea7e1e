//! `undo_step`: putting back the files a step's applied changes replaced, from their backups.
//!
//! The batch undone is the step's last one still on record (or, without a step, the plan's last
//! one). Every file is checked before the first write: one edited since the step wrote it
//! refuses the whole undo unless `force` is set, so a person's later work is never overwritten
//! silently. The batch is then marked undone and the step put back to pending, in one
//! transaction. A failed write leaves the rest restored and the batch on record, so the same
//! undo can simply be run again (files already put back are skipped).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::lifecycle::apply::{self, ApplyError, RollBackMode};
use crate::plan::lifecycle::journal::recover_interrupted;
use crate::plan::lifecycle::library::{PlanStoreError, author_of};
use crate::plan::lifecycle::progress::{PlanState, StepProgress, step_status};
use crate::plan::model::StepNumber;
use crate::store::Store;
use crate::store::apply_journal::state as journal_state;

/// What `undo_step` is asked to do (its wire request is `api::lifecycle::UndoStep`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoStep {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step whose applied changes to undo [default: the step applied last].
    pub step_number: Option<StepNumber>,
    /// Restore the backups even over files edited since the step wrote them [default: false:
    /// refuse, naming the files].
    pub force: bool,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// Output of `undo_step`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UndoStepResponse {
    pub plan_id: String,
    pub step_number: StepNumber,
    /// The change batch undone.
    pub batch_id: String,
    /// Workspace-relative paths put back as they were before the step.
    pub files_restored: Vec<String>,
    /// Files edited since the step wrote them, overwritten because of `force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overwritten: Vec<String>,
    /// The step afterwards.
    pub step: StepProgress,
    pub message: String,
}

/// Undoes a step's applied changes (see the module docs).
pub fn undo_step(
    store: &Store,
    workspace: &Path,
    request: &UndoStep,
) -> Result<UndoStepResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    // An interrupted run is rolled back first; its batch is never the one undone here.
    recover_interrupted(store, workspace)?;
    let root = crate::plan::lifecycle::apply::canonical_root(workspace)?;
    let (plan_id, rows) = store.snapshot(|tx| {
        let state = PlanState::load(tx, &request.plan_id)?;
        if let Some(number) = request.step_number {
            state.check_step(number)?;
        }
        let rows = tx.applied_changes(&state.row.id)?;
        Ok::<_, PlanStoreError>((state.row.id, rows))
    })?;
    let batch_id = rows
        .iter()
        .rev()
        .filter(|row| row.undone_at.is_none())
        .find(|row| request.step_number.is_none_or(|n| row.step_number == n))
        .map(|row| row.batch_id.clone())
        .ok_or_else(|| {
            PlanStoreError::Conflict(match request.step_number {
                Some(n) => format!("Step {n} of plan `{plan_id}` has no applied changes to undo"),
                None => format!("Plan `{plan_id}` has no applied changes to undo"),
            })
        })?;
    let batch: Vec<_> = rows
        .into_iter()
        .filter(|row| row.batch_id == batch_id)
        .collect();
    let step_number = batch[0].step_number;
    let entry = store.snapshot(|tx| tx.journal_entry(&batch_id))?;
    if let Some(entry) = entry.filter(|entry| entry.state == journal_state::OPEN) {
        return Err(PlanStoreError::Conflict(format!(
            "Step {step_number} is being applied right now (process {}, batch {batch_id}); undo \
             it once that run has ended",
            entry.owner_pid
        )));
    }

    let mode = if request.force {
        RollBackMode::Force
    } else {
        RollBackMode::AllOrNothing
    };
    let rolled = apply::roll_back_rows(&root, &batch, mode);
    let undo_error = |reason: String| ApplyError::Undo {
        batch_id: batch_id.clone(),
        reason,
    };
    if !rolled.unusable.is_empty() {
        return Err(undo_error(format!(
            "{}; nothing was changed",
            rolled.unusable.join("; ")
        ))
        .into());
    }
    if rolled.refused {
        return Err(undo_error(format!(
            "{}; nothing was changed. Pass --force (force: true) to restore the backups anyway",
            rolled.conflicts.join("; ")
        ))
        .into());
    }
    if !rolled.failed.is_empty() {
        return Err(undo_error(format!(
            "{}; restored: {}. Run the undo again once the cause is fixed",
            rolled.failed.join("; "),
            if rolled.restored.is_empty() {
                "nothing".to_string()
            } else {
                rolled.restored.join(", ")
            }
        ))
        .into());
    }
    let note = format!(
        "Applied changes undone (batch {batch_id}): {} file(s) restored{}",
        rolled.restored.len(),
        if rolled.conflicts.is_empty() {
            String::new()
        } else {
            format!(", overwriting later edits: {}", rolled.conflicts.join("; "))
        }
    );
    let (step, message) = store.transact(|tx| {
        tx.mark_batch_undone(&batch_id)?;
        let mut state = PlanState::load(tx, &plan_id)?;
        let completed = state
            .states
            .get(&step_number)
            .is_some_and(|s| s.status == step_status::COMPLETED);
        let mut message = note.clone();
        if completed {
            state.reopen(tx, step_number, &note, &author)?;
            message.push_str(&format!("; step {step_number} is pending again"));
            let still_done: Vec<String> = state
                .graph
                .transitive_dependents(step_number)
                .into_iter()
                .filter(|n| {
                    state
                        .states
                        .get(n)
                        .is_some_and(|s| s.status == step_status::COMPLETED)
                })
                .map(|n| n.to_string())
                .collect();
            if !still_done.is_empty() {
                message.push_str(&format!(
                    "; step(s) {} depend on it and stay completed",
                    still_done.join(", ")
                ));
            }
        } else {
            tx.log_event(&plan_id, Some(step_number), "undone", &note, &author)?;
        }
        Ok::<_, PlanStoreError>((state.step_progress(step_number), message))
    })?;
    Ok(UndoStepResponse {
        plan_id,
        step_number,
        batch_id,
        files_restored: rolled.restored,
        overwritten: if request.force {
            rolled.conflicts
        } else {
            Vec::new()
        },
        step,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::lifecycle::journal::tests::{Fixture, ops};

    fn undo(fx: &Fixture, force: bool) -> Result<UndoStepResponse, PlanStoreError> {
        undo_step(
            &fx.store,
            fx.ws(),
            &UndoStep {
                plan_id: fx.plan_id.clone(),
                step_number: Some(1),
                force,
                author: Some("tester".into()),
            },
        )
    }

    #[test]
    fn undo_restores_a_completed_step_and_reopens_it() {
        let fx = Fixture::new();
        let before = fx.files();
        let batch_id = fx.run_step(&ops());
        assert_eq!(fx.step_status(1), "completed");
        assert_ne!(fx.files(), before);

        let response = undo(&fx, false).unwrap();
        assert_eq!(response.batch_id, batch_id);
        assert_eq!(response.files_restored.len(), 6, "{response:?}");
        assert_eq!(fx.files(), before);
        assert_eq!(response.step.status, "ready");
        assert_eq!(fx.step_status(1), "pending");
        // Nothing left to undo for the step.
        let again = undo(&fx, false).unwrap_err();
        assert!(again.to_string().contains("no applied changes"), "{again}");
    }

    #[test]
    fn undo_refuses_a_file_edited_since_unless_forced() {
        let fx = Fixture::new();
        let before = fx.files();
        fx.run_step(&ops());
        std::fs::write(fx.ws().join("src/c.txt"), "edited by a person\n").unwrap();
        let edited = fx.files();
        let err = undo(&fx, false).unwrap_err();
        assert_eq!(err.code(), "EXECUTION_FAILED", "{err}");
        assert!(err.to_string().contains("src/c.txt"), "{err}");
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(fx.files(), edited, "a refused undo wrote something");
        assert_eq!(fx.step_status(1), "completed");

        let forced = undo(&fx, true).unwrap();
        assert_eq!(forced.overwritten.len(), 1, "{forced:?}");
        assert_eq!(fx.files(), before);
        assert_eq!(fx.step_status(1), "pending");
    }
}
