//! The step lifecycle: `start_step`, `complete_step`, `fail_step` and `view_progress`.
//!
//! Step states live in the store, keyed by step number; readiness is recomputed from them on
//! every call with the step graph (`StepGraph::readiness`), never kept as a list that could go
//! stale: completing one step leaves every other ready step ready, and a blocked step becomes
//! ready as soon as its last blocker completes or is skipped. Each change is one write
//! transaction that reads the current state, checks the transition and writes the result, so
//! two processes acting on one plan cannot undo each other's changes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::library::{PlanStoreError, author_of, check_text, current_plan, invalid, status};
use crate::clock::now_rfc3339;
use crate::plan::graph::{StepGraph, StepOutcomes};
use crate::plan::model::{Plan, StepNumber};
use crate::store::plans::{PlanRow, StepStateRow};
use crate::store::{ReadTx, Store, WriteTx};

/// How many times a step may be started; `fail_step` with `retry` stops re-queuing it after.
pub const MAX_STEP_ATTEMPTS: u32 = 3;

/// A step's state as stored (`ready` and `blocked` are derived, never stored).
pub(crate) mod step_status {
    pub const PENDING: &str = "pending";
    pub const READY: &str = "ready";
    pub const BLOCKED: &str = "blocked";
    pub const IN_PROGRESS: &str = "in_progress";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const SKIPPED: &str = "skipped";
}

/// One step's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepProgress {
    pub step_number: StepNumber,
    pub title: String,
    /// `ready`, `blocked`, `in_progress`, `completed`, `failed` or `skipped`.
    pub status: String,
    /// How many times the step was started.
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_changed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// For a blocked step: the dependencies not yet completed or skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_on: Vec<StepNumber>,
}

/// Step counts by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProgressCounts {
    pub total: usize,
    pub ready: usize,
    pub blocked: usize,
    pub in_progress: usize,
    pub completed: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// Output of `view_progress`, and part of every lifecycle response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgressReport {
    pub plan_id: String,
    pub plan_version: u32,
    /// The plan's status after the call.
    pub plan_status: String,
    pub counts: ProgressCounts,
    /// Completed and skipped steps as a share of all steps, 0–100 (one decimal).
    pub percentage: f64,
    /// Steps that may start now, in execution order.
    pub next_ready_steps: Vec<StepNumber>,
    /// Steps waiting on others, in execution order.
    pub blocked_steps: Vec<StepNumber>,
    /// Steps in progress.
    pub current_steps: Vec<StepNumber>,
    /// Every step, in execution order.
    pub steps: Vec<StepProgress>,
}

/// What `view_progress` is asked to do (its wire request is `api::lifecycle::ViewProgress`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewProgress {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
}

/// What `start_step` is asked to do (its wire request is `api::lifecycle::StartStep`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartStep {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    pub step_number: StepNumber,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// What `complete_step` is asked to do (its wire request is `api::lifecycle::CompleteStep`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteStep {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    pub step_number: StepNumber,
    /// What was done, evidence that the acceptance criteria hold.
    pub notes: Option<String>,
    /// Workspace-relative paths the step changed.
    pub files_modified: Vec<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// What `fail_step` is asked to do (its wire request is `api::lifecycle::FailStep`). Without an option the step is failed and its dependents stay blocked
/// until it is retried or skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailStep {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    pub step_number: StepNumber,
    /// What went wrong.
    pub error: String,
    /// Put the step back in the queue, unless it was already started 3 times (then it fails).
    pub retry: bool,
    /// Give up on the step itself: it counts as skipped and its dependents may go on.
    pub skip: bool,
    /// Fail the step and skip every step that depends on it, directly or not.
    pub skip_dependents: bool,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// Output of the lifecycle operations: the step after the change, and the plan's progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepUpdate {
    pub step: StepProgress,
    /// Steps skipped by `skip_dependents`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_dependents: Vec<StepNumber>,
    pub message: String,
    pub progress: ProgressReport,
}

/// Loaded state of one plan: what every lifecycle decision is made from.
pub(crate) struct PlanState {
    pub(crate) row: PlanRow,
    pub(crate) plan: Plan,
    pub(crate) graph: StepGraph,
    pub(crate) states: BTreeMap<StepNumber, StepStateRow>,
}

impl PlanState {
    pub(crate) fn load(conn: &dyn ReadTx, plan_id: &str) -> Result<PlanState, PlanStoreError> {
        let (row, plan) = current_plan(conn, plan_id)?;
        let graph = StepGraph::build(&plan.steps)?;
        let states = conn
            .step_states(&row.id)?
            .into_iter()
            .map(|state| (state.step_number, state))
            .collect();
        Ok(PlanState {
            row,
            plan,
            graph,
            states,
        })
    }

    pub(crate) fn outcomes(&self) -> StepOutcomes {
        let mut outcomes = StepOutcomes::default();
        for (number, state) in &self.states {
            let set = match state.status.as_str() {
                step_status::COMPLETED => &mut outcomes.completed,
                step_status::FAILED => &mut outcomes.failed,
                step_status::SKIPPED => &mut outcomes.skipped,
                step_status::IN_PROGRESS => &mut outcomes.in_progress,
                _ => continue,
            };
            set.insert(*number);
        }
        outcomes
    }

    pub(crate) fn report(&self) -> ProgressReport {
        let readiness = self.graph.readiness(&self.outcomes());
        let waiting: BTreeMap<StepNumber, Vec<StepNumber>> = readiness
            .blocked
            .iter()
            .map(|blocked| (blocked.step_number, blocked.waiting_on.clone()))
            .collect();
        let mut counts = ProgressCounts {
            total: self.plan.steps.len(),
            ..ProgressCounts::default()
        };
        let mut steps = Vec::new();
        let mut current = Vec::new();
        for &number in self.graph.execution_order() {
            let title = self
                .plan
                .steps
                .iter()
                .find(|step| step.step_number == number)
                .map(|step| step.title.clone())
                .unwrap_or_default();
            let state = self.states.get(&number);
            let status = match state.map(|s| s.status.as_str()) {
                Some(
                    s @ (step_status::COMPLETED
                    | step_status::FAILED
                    | step_status::SKIPPED
                    | step_status::IN_PROGRESS),
                ) => s,
                _ if readiness.ready.contains(&number) => step_status::READY,
                _ => step_status::BLOCKED,
            };
            match status {
                step_status::READY => counts.ready += 1,
                step_status::BLOCKED => counts.blocked += 1,
                step_status::IN_PROGRESS => {
                    counts.in_progress += 1;
                    current.push(number);
                }
                step_status::COMPLETED => counts.completed += 1,
                step_status::FAILED => counts.failed += 1,
                _ => counts.skipped += 1,
            }
            steps.push(StepProgress {
                step_number: number,
                title,
                status: status.to_string(),
                attempts: state.map_or(0, |s| s.attempts),
                notes: state.map(|s| s.notes.clone()).unwrap_or_default(),
                files_changed: state.map(|s| s.files_changed.clone()).unwrap_or_default(),
                error: state.and_then(|s| s.error.clone()),
                started_at: state.and_then(|s| s.started_at.clone()),
                finished_at: state.and_then(|s| s.finished_at.clone()),
                waiting_on: if status == step_status::BLOCKED {
                    waiting.get(&number).cloned().unwrap_or_default()
                } else {
                    Vec::new()
                },
            });
        }
        let done = counts.completed + counts.skipped;
        let percentage = if counts.total == 0 {
            0.0
        } else {
            (done as f64 * 1000.0 / counts.total as f64).round() / 10.0
        };
        ProgressReport {
            plan_id: self.row.id.clone(),
            plan_version: self.row.current_version,
            plan_status: self.row.status.clone(),
            counts,
            percentage,
            next_ready_steps: readiness.ready,
            blocked_steps: readiness.blocked.iter().map(|b| b.step_number).collect(),
            current_steps: current,
            steps,
        }
    }

    pub(crate) fn step_progress(&self, number: StepNumber) -> StepProgress {
        self.report()
            .steps
            .into_iter()
            .find(|step| step.step_number == number)
            .expect("a step of the plan")
    }

    pub(crate) fn check_step(&self, number: StepNumber) -> Result<(), PlanStoreError> {
        if self
            .plan
            .steps
            .iter()
            .any(|step| step.step_number == number)
        {
            Ok(())
        } else {
            Err(PlanStoreError::StepNotFound {
                plan_id: self.row.id.clone(),
                step_number: number,
            })
        }
    }

    /// Writes a step state and keeps it in memory.
    pub(crate) fn put(
        &mut self,
        conn: &dyn WriteTx,
        state: StepStateRow,
    ) -> Result<(), PlanStoreError> {
        conn.put_step_state(&self.row.id, &state)?;
        self.states.insert(state.step_number, state);
        Ok(())
    }

    /// Sets the plan's status from its steps: completed or failed once every step is finished,
    /// executing while any has started.
    pub(crate) fn settle_plan_status(
        &mut self,
        conn: &dyn WriteTx,
        author: &str,
    ) -> Result<(), PlanStoreError> {
        let report = self.report();
        let c = report.counts;
        let finished = c.completed + c.failed + c.skipped;
        let new_status = if finished == c.total && c.total > 0 {
            if c.failed > 0 {
                status::FAILED
            } else {
                status::COMPLETED
            }
        } else if finished + c.in_progress > 0
            || [status::COMPLETED, status::FAILED].contains(&self.row.status.as_str())
        {
            // A finished plan with a step reopened (its changes undone) is under way again.
            status::EXECUTING
        } else {
            self.row.status.as_str()
        };
        if new_status != self.row.status {
            conn.set_status(&self.row.id, new_status)?;
            conn.log_event(&self.row.id, None, "status", new_status, author)?;
            self.row.status = new_status.to_string();
        }
        Ok(())
    }

    fn state_or_new(&self, number: StepNumber) -> StepStateRow {
        self.states
            .get(&number)
            .cloned()
            .unwrap_or_else(|| StepStateRow {
                step_number: number,
                status: step_status::PENDING.to_string(),
                attempts: 0,
                notes: String::new(),
                files_changed: Vec::new(),
                error: None,
                started_at: None,
                finished_at: None,
                updated_at: now_rfc3339(),
            })
    }

    /// Marks a ready step in progress (one more attempt).
    pub(crate) fn start(
        &mut self,
        conn: &dyn WriteTx,
        number: StepNumber,
        author: &str,
    ) -> Result<(), PlanStoreError> {
        self.check_step(number)?;
        let current = self.step_progress(number);
        if current.status != step_status::READY {
            return Err(transition_error(&current, "start"));
        }
        self.check_approved(conn, &current, "start")?;
        let now = now_rfc3339();
        let mut state = self.state_or_new(number);
        state.status = step_status::IN_PROGRESS.to_string();
        state.attempts += 1;
        state.started_at = Some(now.clone());
        state.finished_at = None;
        state.updated_at = now;
        self.put(conn, state)?;
        conn.log_event(&self.row.id, Some(number), "started", "", author)?;
        self.settle_plan_status(conn, author)
    }

    /// Refuses to start a step an approval request of this version holds (pending, rejected
    /// or modification requested).
    fn check_approved(
        &self,
        conn: &dyn ReadTx,
        current: &StepProgress,
        action: &str,
    ) -> Result<(), PlanStoreError> {
        let Some(approval) = crate::plan::lifecycle::approval::blocking_approval(
            conn,
            &self.row.id,
            self.row.current_version,
            current.step_number,
        )?
        else {
            return Ok(());
        };
        let status = approval.status.replace('_', " ");
        Err(PlanStoreError::Conflict(format!(
            "Cannot {action} step {} (\"{}\"): approval request `{}` for version {} is {status}; it starts once a request for this version is approved",
            current.step_number, current.title, approval.id, approval.plan_version
        )))
    }

    /// Completes a step that is in progress (or ready: started and finished in one call).
    pub(crate) fn complete(
        &mut self,
        conn: &dyn WriteTx,
        number: StepNumber,
        notes: &str,
        files: &[String],
        author: &str,
    ) -> Result<(), PlanStoreError> {
        self.check_step(number)?;
        let current = self.step_progress(number);
        if current.status != step_status::IN_PROGRESS && current.status != step_status::READY {
            return Err(transition_error(&current, "complete"));
        }
        if current.status == step_status::READY {
            // Started and finished in one call: the start's approval rule holds.
            self.check_approved(conn, &current, "complete")?;
        }
        let now = now_rfc3339();
        let mut state = self.state_or_new(number);
        if current.status == step_status::READY {
            state.attempts += 1;
            state.started_at = Some(now.clone());
        }
        state.status = step_status::COMPLETED.to_string();
        state.notes = notes.to_string();
        state.files_changed = files.to_vec();
        state.error = None;
        state.finished_at = Some(now.clone());
        state.updated_at = now;
        self.put(conn, state)?;
        conn.log_event(&self.row.id, Some(number), "completed", notes, author)?;
        self.settle_plan_status(conn, author)
    }

    /// Fails a step that is in progress or ready; see [`FailStep`] for the options.
    pub(crate) fn fail(
        &mut self,
        conn: &dyn WriteTx,
        number: StepNumber,
        error: &str,
        option: FailOption,
        author: &str,
    ) -> Result<(Vec<StepNumber>, String), PlanStoreError> {
        self.check_step(number)?;
        let current = self.step_progress(number);
        // A failed step may be failed again with an option: that is how it is retried or skipped.
        let allowed = current.status == step_status::IN_PROGRESS
            || current.status == step_status::READY
            || (current.status == step_status::FAILED && option != FailOption::None);
        if !allowed {
            return Err(transition_error(&current, "fail"));
        }
        let now = now_rfc3339();
        let mut state = self.state_or_new(number);
        state.error = Some(error.to_string());
        state.updated_at = now.clone();
        let mut skipped = Vec::new();
        let message;
        match option {
            FailOption::Retry if state.attempts < MAX_STEP_ATTEMPTS => {
                state.status = step_status::PENDING.to_string();
                state.finished_at = None;
                message = format!(
                    "Step {number} failed (attempt {} of {MAX_STEP_ATTEMPTS}) and is queued again",
                    state.attempts
                );
            }
            FailOption::Retry => {
                state.status = step_status::FAILED.to_string();
                state.finished_at = Some(now.clone());
                message = format!(
                    "Step {number} failed: it was started {} times, the retry limit; retry refused",
                    state.attempts
                );
            }
            FailOption::Skip => {
                state.status = step_status::SKIPPED.to_string();
                state.finished_at = Some(now.clone());
                message = format!("Step {number} skipped; the steps after it may go on");
            }
            FailOption::SkipDependents | FailOption::None => {
                state.status = step_status::FAILED.to_string();
                state.finished_at = Some(now.clone());
                message = if option == FailOption::SkipDependents {
                    format!("Step {number} failed; every step depending on it is skipped")
                } else {
                    format!(
                        "Step {number} failed; the steps depending on it stay blocked until it is retried or skipped"
                    )
                };
            }
        }
        let kind = state.status.clone();
        self.put(conn, state)?;
        conn.log_event(
            &self.row.id,
            Some(number),
            &format!("failed:{kind}"),
            error,
            author,
        )?;
        if option == FailOption::SkipDependents {
            for dependent in self.graph.transitive_dependents(number) {
                let existing = self.states.get(&dependent).map(|s| s.status.as_str());
                if matches!(existing, None | Some(step_status::PENDING)) {
                    let mut dep_state = self.state_or_new(dependent);
                    dep_state.status = step_status::SKIPPED.to_string();
                    dep_state.error = Some(format!("skipped because step {number} failed"));
                    dep_state.finished_at = Some(now.clone());
                    dep_state.updated_at = now.clone();
                    self.put(conn, dep_state)?;
                    conn.log_event(
                        &self.row.id,
                        Some(dependent),
                        "skipped",
                        &format!("step {number} failed"),
                        author,
                    )?;
                    skipped.push(dependent);
                }
            }
        }
        self.settle_plan_status(conn, author)?;
        Ok((skipped, message))
    }
}

impl PlanState {
    /// Puts a completed step back to pending once its changes were undone.
    pub(crate) fn reopen(
        &mut self,
        conn: &dyn WriteTx,
        number: StepNumber,
        note: &str,
        author: &str,
    ) -> Result<(), PlanStoreError> {
        self.check_step(number)?;
        let now = now_rfc3339();
        let mut state = self.state_or_new(number);
        state.status = step_status::PENDING.to_string();
        state.notes = note.to_string();
        state.files_changed.clear();
        state.error = None;
        state.finished_at = None;
        state.updated_at = now;
        self.put(conn, state)?;
        conn.log_event(&self.row.id, Some(number), "undone", note, author)?;
        self.settle_plan_status(conn, author)
    }
}

/// What `fail_step` does besides recording the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailOption {
    None,
    Retry,
    Skip,
    SkipDependents,
}

fn transition_error(current: &StepProgress, action: &str) -> PlanStoreError {
    let detail = if current.status == step_status::BLOCKED {
        format!(
            "it is blocked, waiting on step(s) {}",
            current
                .waiting_on
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!("it is {}", current.status)
    };
    PlanStoreError::Conflict(format!(
        "Cannot {action} step {} (\"{}\"): {detail}",
        current.step_number, current.title
    ))
}

/// The progress of a saved plan.
pub fn view_progress(
    store: &Store,
    request: &ViewProgress,
) -> Result<ProgressReport, PlanStoreError> {
    store.snapshot(|tx| Ok(PlanState::load(tx, &request.plan_id)?.report()))
}

/// Starts a ready step.
pub fn start_step(store: &Store, request: &StartStep) -> Result<StepUpdate, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    store.transact(|tx| {
        let mut state = PlanState::load(tx, &request.plan_id)?;
        state.start(tx, request.step_number, &author)?;
        Ok(update(
            &state,
            request.step_number,
            Vec::new(),
            format!("Step {} started", request.step_number),
        ))
    })
}

/// Completes a step in progress (or a ready one).
pub fn complete_step(store: &Store, request: &CompleteStep) -> Result<StepUpdate, PlanStoreError> {
    store.transact(|tx| complete_step_in(tx, request))
}

/// [`complete_step`] inside the caller's transaction.
pub(crate) fn complete_step_in(
    tx: &dyn WriteTx,
    request: &CompleteStep,
) -> Result<StepUpdate, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    let notes = request.notes.as_deref().unwrap_or_default();
    check_text("notes", notes)?;
    for file in &request.files_modified {
        check_text("files_modified", file)?;
    }
    let mut state = PlanState::load(tx, &request.plan_id)?;
    state.complete(
        tx,
        request.step_number,
        notes,
        &request.files_modified,
        &author,
    )?;
    let ready = state.report().next_ready_steps;
    let message = format!(
        "Step {} completed; ready now: {}",
        request.step_number,
        if ready.is_empty() {
            "none".to_string()
        } else {
            ready
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    Ok(update(&state, request.step_number, Vec::new(), message))
}

/// Fails a step (see [`FailStep`]).
pub fn fail_step(store: &Store, request: &FailStep) -> Result<StepUpdate, PlanStoreError> {
    store.transact(|tx| fail_step_in(tx, request))
}

/// [`fail_step`] inside the caller's transaction.
pub(crate) fn fail_step_in(
    tx: &dyn WriteTx,
    request: &FailStep,
) -> Result<StepUpdate, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    if request.error.trim().is_empty() {
        return Err(invalid("error", "say what went wrong"));
    }
    check_text("error", &request.error)?;
    let option = match (request.retry, request.skip, request.skip_dependents) {
        (false, false, false) => FailOption::None,
        (true, false, false) => FailOption::Retry,
        (false, true, false) => FailOption::Skip,
        (false, false, true) => FailOption::SkipDependents,
        _ => {
            return Err(invalid(
                "retry",
                "choose at most one of retry, skip and skip_dependents",
            ));
        }
    };
    let mut state = PlanState::load(tx, &request.plan_id)?;
    let (skipped, message) =
        state.fail(tx, request.step_number, &request.error, option, &author)?;
    Ok(update(&state, request.step_number, skipped, message))
}

fn update(
    state: &PlanState,
    number: StepNumber,
    skipped: Vec<StepNumber>,
    message: String,
) -> StepUpdate {
    StepUpdate {
        step: state.step_progress(number),
        skipped_dependents: skipped,
        message,
        progress: state.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::lifecycle::library::tests::{sample_plan, save};

    fn start(store: &Store, plan_id: &str, n: StepNumber) -> Result<StepUpdate, PlanStoreError> {
        start_step(
            store,
            &StartStep {
                plan_id: plan_id.into(),
                step_number: n,
                author: None,
            },
        )
    }

    fn complete(store: &Store, plan_id: &str, n: StepNumber) -> StepUpdate {
        complete_step(
            store,
            &CompleteStep {
                plan_id: plan_id.into(),
                step_number: n,
                notes: Some("done".into()),
                files_modified: vec!["src/x.rs".into()],
                author: Some("me".into()),
            },
        )
        .unwrap()
    }

    fn fail(store: &Store, plan_id: &str, n: StepNumber, opt: (bool, bool, bool)) -> StepUpdate {
        fail_step(
            store,
            &FailStep {
                plan_id: plan_id.into(),
                step_number: n,
                error: "boom".into(),
                retry: opt.0,
                skip: opt.1,
                skip_dependents: opt.2,
                author: None,
            },
        )
        .unwrap()
    }

    /// 1 → 2, 1 → 3, {2, 3} → 4.
    fn diamond() -> serde_json::Value {
        let mut plan = sample_plan();
        plan["steps"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!(
                {"step_number": 4, "title": "Ship", "depends_on": [2, 3]}
            ));
        plan
    }

    crate::backend_tests! {
    fn completing_keeps_other_ready_steps_and_unblocks_dependents(store) {
        let id = save(&store, diamond(), None).plan.id;
        let progress = view_progress(
            &store,
            &ViewProgress {
                plan_id: id.clone(),
            },
        )
        .unwrap();
        assert_eq!(progress.next_ready_steps, vec![1]);
        assert_eq!(progress.blocked_steps, vec![2, 3, 4]);
        assert_eq!(progress.plan_status, "ready");

        let err = start(&store, &id, 2).unwrap_err();
        assert_eq!(err.code(), "CONFLICT");
        assert!(err.to_string().contains("waiting on step(s) 1"), "{err}");

        assert_eq!(
            start(&store, &id, 1).unwrap().progress.plan_status,
            "executing"
        );
        let after_1 = complete(&store, &id, 1);
        assert_eq!(after_1.progress.next_ready_steps, vec![2, 3]);
        // Completing 2 must not drop 3 from the ready set.
        let after_2 = complete(&store, &id, 2);
        assert_eq!(after_2.progress.next_ready_steps, vec![3]);
        assert_eq!(after_2.progress.blocked_steps, vec![4]);
        let after_3 = complete(&store, &id, 3);
        assert_eq!(after_3.progress.next_ready_steps, vec![4]);
        assert_eq!(after_3.progress.percentage, 75.0);
        let done = complete(&store, &id, 4);
        assert_eq!(done.progress.plan_status, "completed");
        assert_eq!(done.progress.percentage, 100.0);
        assert_eq!(done.step.files_changed, vec!["src/x.rs".to_string()]);
        assert_eq!(
            complete_step(
                &store,
                &CompleteStep {
                    plan_id: id,
                    step_number: 4,
                    notes: None,
                    files_modified: vec![],
                    author: None
                }
            )
            .unwrap_err()
            .code(),
            "CONFLICT"
        );
    }
    }

    /// Issue 28: a plan is no longer completed once one of its steps is reopened (its changes
    /// undone): it is executing again.
    #[test]
    fn reopening_a_step_of_a_completed_plan_puts_it_back_to_executing() {
        let store = Store::open_in_memory().unwrap();
        let id = save(&store, diamond(), None).plan.id;
        for step in 1..=4 {
            start(&store, &id, step).unwrap();
            complete(&store, &id, step);
        }
        let status = |store: &Store| {
            store
                .snapshot(|tx| tx.plan_by_id(&id, false))
                .unwrap()
                .unwrap()
                .status
        };
        assert_eq!(status(&store), "completed");
        store
            .transact(|tx| {
                PlanState::load(tx, &id)?.reopen(tx, 4, "undone", "tester")?;
                Ok::<_, PlanStoreError>(())
            })
            .unwrap();
        assert_eq!(status(&store), "executing");
    }

    crate::backend_tests! {
    fn fail_retry_skip_and_skip_dependents(store) {
        let id = save(&store, diamond(), None).plan.id;
        // Retry up to the limit, then the step fails for good.
        for attempt in 1..=MAX_STEP_ATTEMPTS {
            start(&store, &id, 1).unwrap();
            let update = fail(&store, &id, 1, (true, false, false));
            if attempt < MAX_STEP_ATTEMPTS {
                assert_eq!(update.step.status, "ready", "attempt {attempt}");
                assert_eq!(update.progress.next_ready_steps, vec![1]);
            } else {
                assert_eq!(update.step.status, "failed");
                assert_eq!(update.step.attempts, MAX_STEP_ATTEMPTS);
                assert!(update.progress.next_ready_steps.is_empty());
            }
        }
        assert_eq!(start(&store, &id, 1).unwrap_err().code(), "CONFLICT");

        let id = save(&store, diamond(), None).plan.id;
        complete(&store, &id, 1);
        start(&store, &id, 2).unwrap();
        // Skipping 2 lets 4 wait only on 3.
        let update = fail(&store, &id, 2, (false, true, false));
        assert_eq!(update.step.status, "skipped");
        assert_eq!(update.progress.next_ready_steps, vec![3]);
        let blocked = update
            .progress
            .steps
            .iter()
            .find(|s| s.step_number == 4)
            .unwrap();
        assert_eq!(blocked.waiting_on, vec![3]);

        let id = save(&store, diamond(), None).plan.id;
        complete(&store, &id, 1);
        let update = fail(&store, &id, 3, (false, false, true));
        assert_eq!(update.skipped_dependents, vec![4]);
        assert_eq!(
            update.progress.next_ready_steps,
            vec![2],
            "2 is not a dependent of 3"
        );
        let done = complete(&store, &id, 2);
        assert_eq!(done.progress.plan_status, "failed");
        assert_eq!(done.progress.counts.skipped, 1);
        assert_eq!(done.progress.counts.failed, 1);

        let err = fail_step(
            &store,
            &FailStep {
                plan_id: id,
                step_number: 9,
                error: "x".into(),
                retry: false,
                skip: false,
                skip_dependents: false,
                author: None,
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
    }
    }
}

/// Several connections (as several processes have) writing one store file at once.
#[cfg(test)]
mod concurrency_tests {
    use super::*;
    use crate::plan::lifecycle::library::{self, Listing, SaveOptions};

    /// Eight writers, each on its own handle, save plans and move steps of one plan at once.
    fn concurrent_writers_lose_nothing(backend: crate::store::testing::Backend) {
        const WRITERS: u32 = 8;
        const PLANS_EACH: usize = 5;
        let Some(db) = crate::store::testing::TestDb::new(backend) else {
            return;
        };
        let steps: Vec<serde_json::Value> = (1..=WRITERS)
            .map(|n| serde_json::json!({"step_number": n, "title": format!("step {n}")}))
            .chain([serde_json::json!({
                "step_number": WRITERS + 1,
                "title": "join",
                "depends_on": (1..=WRITERS).collect::<Vec<_>>()
            })])
            .collect();
        let shared = db.open();
        let plan_id = crate::plan::lifecycle::library::tests::save(
            &shared,
            serde_json::json!({"goal": "g", "steps": steps}),
            None,
        )
        .plan
        .id;
        std::thread::scope(|scope| {
            for writer in 1..=WRITERS {
                let db = &db;
                let plan_id = plan_id.clone();
                scope.spawn(move || {
                    let store = db.open();
                    for i in 0..PLANS_EACH {
                        let plan = serde_json::from_value(serde_json::json!({"goal": format!("w{writer} p{i}"), "steps": [{"step_number": 1, "title": "only"}]})).unwrap();
                        let options = SaveOptions { name: Some(format!("w{writer}-p{i}")), tags: vec![format!("w{writer}")], author: Some(format!("w{writer}")), ..SaveOptions::default() };
                        library::save(&store, plan, &options).unwrap();
                    }
                    start_step(&store, &StartStep { plan_id: plan_id.clone(), step_number: writer, author: None }).unwrap();
                    complete_step(&store, &CompleteStep { plan_id, step_number: writer, notes: Some(format!("by w{writer}")), files_modified: vec![], author: Some(format!("w{writer}")) }).unwrap();
                });
            }
        });
        let store = db.open();
        let all = library::list(
            &store,
            &Listing {
                limit: 1000,
                ..Listing::default()
            },
        )
        .unwrap();
        assert_eq!(all.plans.len(), 1 + WRITERS as usize * PLANS_EACH);
        let progress = view_progress(&store, &ViewProgress { plan_id }).unwrap();
        assert_eq!(progress.counts.completed, WRITERS as usize, "{progress:?}");
        assert_eq!(
            progress.next_ready_steps,
            vec![WRITERS + 1],
            "the join step is ready once all completed"
        );
        for step in progress.steps.iter().take(WRITERS as usize) {
            assert_eq!(step.notes, format!("by w{}", step.step_number));
        }
    }

    #[test]
    fn concurrent_writers_on_one_file_lose_nothing() {
        concurrent_writers_lose_nothing(crate::store::testing::Backend::Sqlite);
    }

    #[test]
    fn concurrent_writers_on_one_postgres_database_lose_nothing() {
        concurrent_writers_lose_nothing(crate::store::testing::Backend::Postgres);
    }
}
