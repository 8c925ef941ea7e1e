//! `execute_plan`: carrying out a plan's steps with the configured model.
//!
//! For each chosen step the model is asked, under a strict JSON schema, for the step's file
//! operations (create, modify with the whole new content, delete, rename). It sees the plan's
//! goal, the step, the current contents of the files the step names (read inside the workspace
//! only, size-capped, scrubbed of secrets and fenced as data) and the caller's additional
//! context. The client repairs invalid JSON once ([`crate::llm`]); operations Tollgate refuses
//! (a path outside the workspace, a create over an existing file, …) are sent back once more with
//! the reason. What remains is checked and shown as unified diffs ([`apply::preview`]).
//!
//! - **Preview** (the default) writes nothing: no file and no step state. In `all_ready` and
//!   `full_plan` a previewed step counts as done only for choosing the next steps of the same
//!   call, and every diff is against the files as they are now.
//! - **Apply** writes each step's operations as [`apply::apply_changes`] does (all or nothing,
//!   inside the workspace, atomic, with backups) and records the step's lifecycle in the store:
//!   started, then completed with the files changed, or failed with the reason. Start and end are
//!   the transactions that open and close the step's journal entry ([`crate::plan::lifecycle::journal`]),
//!   so a run killed in between is rolled back by the next call. The next call therefore
//!   continues with the steps that became ready; a failed step stays failed until `fail_step`
//!   retries or skips it.
//! - A plan passed inline is saved before changes are applied (a new plan, or the next version of
//!   the saved plan with its id when the content differs), because step states belong to a saved
//!   plan; `saved` in the response says so. Previewing an inline plan saves nothing.
//! - Secrets: a file's secrets are masked before the model sees it. When a modified file comes
//!   back with a masked line unchanged, the original line is put back; a mask the model moved or
//!   rewrote refuses the step rather than overwrite the secret.

use crate::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::control::Control;
use crate::llm::{
    JsonRequest, LlmClient, UNTRUSTED_DATA_RULE, Usage, estimate_tokens, fence, fence_file,
};
use crate::plan::graph::{StepGraph, StepOutcomes};
use crate::plan::lifecycle::apply::{self, ApplyError, FileDiff, FileOperation, ReadFile};
use crate::plan::lifecycle::journal;
use crate::plan::lifecycle::library::{
    self, PlanStoreError, SaveOptions, SavePlanResponse, author_of,
};
use crate::plan::lifecycle::progress::{self, CompleteStep, FailStep, PlanState};
use crate::plan::model::{Plan, Step, StepNumber};
use crate::store::Store;
use crate::store::apply_journal::state as journal_state;

/// How many steps one call runs when `max_steps` is not given (upstream's default).
pub const DEFAULT_MAX_STEPS: usize = 5;
/// The most steps one call may run.
pub const MAX_STEPS_LIMIT: usize = 50;
/// The largest file shown to the model whole; a larger one is named but not shown.
const MAX_SHOWN_FILE_BYTES: u64 = 64 * 1024;
/// Estimated tokens of file content one step's prompt may carry.
const FILE_TOKEN_BUDGET: usize = 60_000;
/// The longest `additional_context` accepted.
pub const MAX_CONTEXT_CHARS: usize = 20_000;
/// Notes and errors recorded in the store are cut to this many characters.
const MAX_RECORDED_CHARS: usize = 4_000;

/// Which steps one call runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecuteMode {
    /// One step: `step_number`, else the first ready step.
    #[default]
    SingleStep,
    /// The steps ready when the call starts, in execution order, up to `max_steps`.
    AllReady,
    /// Ready steps in execution order, again and again as steps finish, until none is ready,
    /// a step fails (with `stop_on_failure`) or `max_steps` have run.
    FullPlan,
}

impl ExecuteMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecuteMode::SingleStep => "single_step",
            ExecuteMode::AllReady => "all_ready",
            ExecuteMode::FullPlan => "full_plan",
        }
    }
}

/// One `execute_plan` call: `api::plan::ExecutePlanRequest` parsed and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    pub plan: PlanSource,
    pub mode: ExecuteMode,
    /// The step for `single_step` (default: the first ready step); only with `single_step`.
    pub step_number: Option<StepNumber>,
    /// Write the changes and record each step's state; otherwise preview the diffs only.
    pub apply_changes: bool,
    /// The most steps this call runs, 1 to [`MAX_STEPS_LIMIT`].
    pub max_steps: usize,
    pub stop_on_failure: bool,
    /// More instructions or facts for the model (treated as data), at most
    /// [`MAX_CONTEXT_CHARS`] characters.
    pub additional_context: String,
    /// Who is acting, recorded in the plan's history.
    pub author: Option<String>,
}

/// Where the plan comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanSource {
    /// A saved plan's id.
    Saved(String),
    /// A plan given whole.
    Inline(Box<Plan>),
}

/// What happened to one step in this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepRunStatus {
    /// The model's changes are shown as diffs; nothing was written.
    Previewed,
    /// The changes were written and the step recorded as completed.
    Applied,
    /// No usable changes (or they could not be written); with `apply_changes` the step is
    /// recorded as failed.
    Failed,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepResult {
    pub step_number: StepNumber,
    pub title: String,
    pub status: StepRunStatus,
    /// The model's account of its changes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// The proposed changes as unified diffs, one per file operation.
    pub files: Vec<FileDiff>,
    /// Workspace-relative paths written (applied steps).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_applied: Vec<String>,
    /// Backups of the previous contents (applied steps), workspace-relative.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backups_created: Vec<String>,
    /// The change batch, for undoing it (applied steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// Why the step failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Step counts after the call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecutionProgress {
    pub total: usize,
    /// Completed steps (in a preview: recorded ones plus those previewed in this call).
    pub completed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub in_progress: usize,
    /// Completed and skipped steps as a share of all steps, 0–100 (one decimal).
    pub percentage: f64,
}

/// Output of `execute_plan`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExecutePlanResponse {
    /// The saved plan executed; `None` for a preview of a plan that is not saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    pub goal: String,
    pub mode: ExecuteMode,
    /// Whether changes were written (else this was a preview).
    pub apply_changes: bool,
    pub step_results: Vec<StepResult>,
    /// Steps that may run next, in execution order.
    pub next_ready_steps: Vec<StepNumber>,
    pub progress: ExecutionProgress,
    /// Every path written by this call.
    pub files_applied: Vec<String>,
    /// Why changes could not be written, per step.
    pub apply_errors: Vec<String>,
    /// Every backup made by this call.
    pub backups_created: Vec<String>,
    /// Why the call stopped before running out of ready steps, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_because: Option<String>,
    /// Set when an inline plan was saved so its step states could be recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SavePlanResponse>,
    /// Tokens (and cost, when prices are configured) of the model calls.
    pub usage: Usage,
    /// What the caller should know about the run (preview semantics, saving, …).
    pub notes: Vec<String>,
    /// The result as a Markdown report.
    pub markdown: String,
}

/// Why `execute_plan` did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecuteError {
    #[error(
        "execute_plan needs a model to write each step's changes, and none is configured: set \
         [llm] provider (openai, anthropic or command) in tollgate.toml, or TOLLGATE_LLM_PROVIDER \
         (with TOLLGATE_LLM_MODEL and the API key variable it names)"
    )]
    NoModel,
    #[error(transparent)]
    Plan(#[from] PlanStoreError),
}

impl ExecuteError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ExecuteError::NoModel => ErrorCode::LlmNotConfigured,
            ExecuteError::Plan(err) => err.code(),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ExecuteError::NoModel => None,
            ExecuteError::Plan(err) => err.field(),
        }
    }
}

/// Runs steps of a plan (see the module docs). `llm` is the configured model
/// ([`crate::plan::model_client`]); `control` receives a report per step and is checked between
/// steps, so a cancelled call stops before its next step and returns what it did.
pub fn execute(
    store: &Store,
    workspace: &Path,
    llm: Option<&LlmClient>,
    request: Execution,
    control: &Control,
) -> Result<ExecutePlanResponse, ExecuteError> {
    let max_steps = request.max_steps;
    let additional_context = request.additional_context.as_str();
    let author = author_of(request.author.as_deref())?;
    let source = request.plan.clone();
    let llm = llm.ok_or(ExecuteError::NoModel)?;

    let mut notes = Vec::new();
    // A run killed mid-step is rolled back before its step's state decides anything here.
    match journal::recover_interrupted(store, workspace) {
        Ok(recovered) => notes.extend(recovered.into_iter().map(|r| r.message)),
        Err(err) => notes.push(format!(
            "An interrupted step run could not be rolled back yet: [{}] {err}",
            err.code()
        )),
    }
    let mut saved = None;
    let (plan, plan_id) = match source {
        PlanSource::Saved(id) => {
            let state = store.snapshot(|tx| PlanState::load(tx, &id))?;
            (state.plan, Some(state.row.id))
        }
        PlanSource::Inline(plan) if request.apply_changes => {
            let response = library::save(
                store,
                *plan,
                &SaveOptions {
                    overwrite: true,
                    author: Some(author.clone()),
                    reason: Some("saved by execute_plan to record step states".into()),
                    ..SaveOptions::default()
                },
            )?;
            let id = response.plan.id.clone();
            notes.push(format!(
                "The plan was given inline and saved as `{id}` ({}) so its step states can be \
                 recorded; pass plan_id `{id}` to continue it.",
                response.outcome
            ));
            saved = Some(response);
            let state = store.snapshot(|tx| PlanState::load(tx, &id))?;
            (state.plan, Some(id))
        }
        PlanSource::Inline(mut plan) => {
            crate::plan::link_steps(&mut plan).map_err(PlanStoreError::from)?;
            // A saved plan's recorded states still decide readiness; nothing is written.
            let saved_id = (!plan.id.is_empty())
                .then(|| {
                    store
                        .snapshot(|tx| tx.plan_by_id(&plan.id, false))
                        .map_err(PlanStoreError::from)
                })
                .transpose()?
                .flatten()
                .map(|row| row.id);
            (*plan, saved_id)
        }
    };
    let graph = StepGraph::build(&plan.steps).map_err(PlanStoreError::from)?;
    if !request.apply_changes {
        notes.push(
            "Preview only: no file was written and no step state was recorded; pass \
             apply_changes: true to write the changes."
                .into(),
        );
        if request.mode != ExecuteMode::SingleStep {
            notes.push(
                "In a preview, later steps are chosen as if the earlier previewed steps were \
                 done, but their diffs are against the files as they are now."
                    .into(),
            );
        }
    }

    let mut run = Run {
        store,
        workspace,
        llm,
        plan: &plan,
        plan_id: plan_id.as_deref(),
        graph: &graph,
        outcomes: StepOutcomes::default(),
        apply: request.apply_changes,
        author: &author,
        additional_context,
        usage: Usage::default(),
    };
    run.refresh_outcomes()?;

    let mut queue: Vec<StepNumber> = match request.mode {
        ExecuteMode::SingleStep => {
            let number = match request.step_number {
                Some(number) => number,
                None => run.ready().first().copied().ok_or_else(|| {
                    PlanStoreError::Conflict(format!(
                        "No step of the plan is ready to run ({}); view_progress shows why",
                        run.progress_phrase()
                    ))
                })?,
            };
            run.check_ready(number)?;
            vec![number]
        }
        ExecuteMode::AllReady => run.ready().into_iter().take(max_steps).collect(),
        ExecuteMode::FullPlan => Vec::new(),
    };
    queue.reverse();
    let stop_on_failure = request.stop_on_failure;
    let planned_total = match request.mode {
        ExecuteMode::FullPlan => {
            let unfinished = plan
                .steps
                .iter()
                .filter(|step| !run.outcomes.satisfies(step.step_number))
                .count();
            unfinished.min(max_steps)
        }
        _ => queue.len(),
    };

    let mut results: Vec<StepResult> = Vec::new();
    let mut attempted = BTreeSet::new();
    let mut stopped_because = None;
    loop {
        let next = match request.mode {
            ExecuteMode::FullPlan => run
                .ready()
                .into_iter()
                .find(|number| !attempted.contains(number)),
            _ => queue.pop(),
        };
        let Some(number) = next else { break };
        if results.len() == max_steps {
            stopped_because = Some(format!(
                "max_steps ({max_steps}) reached; step {number} is next"
            ));
            break;
        }
        if control.is_cancelled() {
            stopped_because = Some(format!("cancelled before step {number}"));
            break;
        }
        let title = run
            .step(number)
            .map(|s| s.title.clone())
            .unwrap_or_default();
        control.report(
            results.len() as u64,
            Some(planned_total as u64),
            format!("step {number}: {title}"),
        );
        attempted.insert(number);
        let result = run.run_step(number)?;
        let failed = result.status == StepRunStatus::Failed;
        results.push(result);
        control.report(
            results.len() as u64,
            Some(planned_total as u64),
            format!("step {number} done"),
        );
        if failed && stop_on_failure {
            stopped_because = Some(format!("step {number} failed and stop_on_failure is set"));
            break;
        }
    }

    let mut files_applied = Vec::new();
    let mut backups_created = Vec::new();
    let mut apply_errors = Vec::new();
    for result in &results {
        files_applied.extend(result.files_applied.iter().cloned());
        backups_created.extend(result.backups_created.iter().cloned());
        if let (StepRunStatus::Failed, Some(error)) = (result.status, &result.error)
            && !result.files.is_empty()
            && run.apply
        {
            apply_errors.push(format!("step {}: {error}", result.step_number));
        }
    }
    let mut response = ExecutePlanResponse {
        plan_id: plan_id.clone(),
        goal: plan.goal.clone(),
        mode: request.mode,
        apply_changes: request.apply_changes,
        next_ready_steps: run.ready(),
        progress: run.progress(),
        step_results: results,
        files_applied,
        apply_errors,
        backups_created,
        stopped_because,
        saved,
        usage: run.usage,
        notes,
        markdown: String::new(),
    };
    response.markdown = render_markdown(&response);
    Ok(response)
}

/// One call's state: the plan, its graph and what has happened to its steps.
struct Run<'a> {
    store: &'a Store,
    workspace: &'a Path,
    llm: &'a LlmClient,
    plan: &'a Plan,
    /// The saved plan whose states decide readiness (and, when applying, record the steps).
    plan_id: Option<&'a str>,
    graph: &'a StepGraph,
    outcomes: StepOutcomes,
    apply: bool,
    author: &'a str,
    additional_context: &'a str,
    usage: Usage,
}

impl Run<'_> {
    fn step(&self, number: StepNumber) -> Option<&Step> {
        self.plan.steps.iter().find(|s| s.step_number == number)
    }

    /// Reloads the recorded states (when the plan is saved); a preview keeps its simulated
    /// outcomes on top.
    fn refresh_outcomes(&mut self) -> Result<(), PlanStoreError> {
        let Some(id) = self.plan_id else {
            return Ok(());
        };
        let recorded = self
            .store
            .snapshot(|tx| PlanState::load(tx, id))?
            .outcomes();
        if self.apply {
            self.outcomes = recorded;
        } else {
            let simulated = std::mem::take(&mut self.outcomes);
            self.outcomes = recorded;
            self.outcomes.completed.extend(simulated.completed);
            self.outcomes.failed.extend(simulated.failed);
        }
        Ok(())
    }

    fn ready(&self) -> Vec<StepNumber> {
        self.graph.readiness(&self.outcomes).ready
    }

    fn progress(&self) -> ExecutionProgress {
        let o = &self.outcomes;
        let total = self.plan.steps.len();
        let done = o.completed.len() + o.skipped.len();
        ExecutionProgress {
            total,
            completed: o.completed.len(),
            failed: o.failed.len(),
            skipped: o.skipped.len(),
            in_progress: o.in_progress.len(),
            percentage: if total == 0 {
                0.0
            } else {
                (done as f64 * 1000.0 / total as f64).round() / 10.0
            },
        }
    }

    fn progress_phrase(&self) -> String {
        let p = self.progress();
        format!(
            "{} of {} completed, {} failed, {} in progress",
            p.completed, p.total, p.failed, p.in_progress
        )
    }

    /// Refuses a step that may not run now, naming what it waits on (as `start_step` does).
    fn check_ready(&self, number: StepNumber) -> Result<(), PlanStoreError> {
        let Some(step) = self.step(number) else {
            return Err(PlanStoreError::StepNotFound {
                plan_id: self.plan_id.unwrap_or(&self.plan.id).to_string(),
                step_number: number,
            });
        };
        let readiness = self.graph.readiness(&self.outcomes);
        if readiness.ready.contains(&number) {
            return Ok(());
        }
        let o = &self.outcomes;
        let detail = if let Some(blocked) = readiness
            .blocked
            .iter()
            .find(|blocked| blocked.step_number == number)
        {
            let list = |steps: &[StepNumber]| {
                steps
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut detail = format!(
                "it is blocked, waiting on step(s) {}",
                list(&blocked.waiting_on)
            );
            if !blocked.failed_dependencies.is_empty() {
                let _ = write!(
                    detail,
                    " (failed: {}; retry or skip them with fail_step)",
                    list(&blocked.failed_dependencies)
                );
            }
            detail
        } else if o.completed.contains(&number) {
            "it is completed".to_string()
        } else if o.skipped.contains(&number) {
            "it is skipped".to_string()
        } else if o.in_progress.contains(&number) {
            "it is in progress".to_string()
        } else {
            "it is failed (retry it with fail_step and retry: true)".to_string()
        };
        Err(PlanStoreError::Conflict(format!(
            "Cannot execute step {number} (\"{}\"): {detail}",
            step.title
        )))
    }

    /// Runs one step: asks the model, previews, and when applying writes and records it.
    fn run_step(&mut self, number: StepNumber) -> Result<StepResult, ExecuteError> {
        let step = self
            .step(number)
            .cloned()
            .ok_or_else(|| PlanStoreError::StepNotFound {
                plan_id: self.plan_id.unwrap_or(&self.plan.id).to_string(),
                step_number: number,
            })?;
        let mut result = StepResult {
            step_number: number,
            title: step.title.clone(),
            status: StepRunStatus::Failed,
            summary: String::new(),
            files: Vec::new(),
            files_applied: Vec::new(),
            backups_created: Vec::new(),
            batch_id: None,
            error: None,
            model: None,
        };
        let recording = match (self.apply, self.plan_id) {
            (true, Some(id)) => Some(id),
            _ => None,
        };
        // The step starts in the transaction that opens its journal entry, and completes or
        // fails in the one that closes it: a killed run is found and rolled back.
        let journal = match recording {
            Some(plan_id) => {
                let started = journal::begin(self.store, self.workspace, plan_id, number, |tx| {
                    PlanState::load(tx, plan_id)?.start(tx, number, self.author)
                });
                match started {
                    Ok(journal) => Some(journal),
                    Err(err) => {
                        // Another caller got there first, or the step is not ready any more.
                        result.error = Some(err.to_string());
                        self.refresh_outcomes()?;
                        return Ok(result);
                    }
                }
            }
            None => None,
        };

        let mut half_applied = false;
        let outcome = self.propose(&step).and_then(|proposal| {
            result.summary = proposal.summary.clone();
            result.files = proposal.diffs.clone();
            result.model = Some(proposal.model.clone());
            match &journal {
                // A step that needs no file change (research, review) completes with none.
                Some(_) if proposal.operations.is_empty() => Ok(Done::Applied(None)),
                Some(journal) => {
                    apply::apply_journaled(
                        self.store,
                        self.workspace,
                        journal,
                        &proposal.operations,
                    )
                    .map(|batch| Done::Applied(Some(batch)))
                    .map_err(|err| {
                        // Half applied: the entry stays open for the rollback to finish.
                        half_applied = matches!(err, ApplyError::RestoreFailed { .. });
                        format!("the changes could not be written: {err}")
                    })
                }
                None => Ok(Done::Previewed),
            }
        });

        match outcome {
            Ok(Done::Applied(batch)) => {
                result.status = StepRunStatus::Applied;
                if let Some(batch) = batch {
                    result.files_applied = batch.files_applied;
                    result.backups_created = batch.backups_created;
                    result.batch_id = Some(batch.batch_id);
                }
                let notes = if result.summary.trim().is_empty() {
                    "Applied by execute_plan.".to_string()
                } else {
                    cut(&result.summary)
                };
                let request = CompleteStep {
                    plan_id: recording.unwrap_or_default().to_string(),
                    step_number: number,
                    notes: Some(notes),
                    files_modified: result.files_applied.clone(),
                    author: Some(self.author.to_string()),
                };
                self.store.transact(|tx| {
                    progress::complete_step_in(tx, &request)?;
                    if let Some(journal) = &journal {
                        journal.close(tx, journal_state::COMPLETED, None)?;
                    }
                    Ok::<_, PlanStoreError>(())
                })?;
                if let Some(journal) = journal {
                    journal.release();
                }
            }
            Ok(Done::Previewed) => {
                result.status = StepRunStatus::Previewed;
                self.outcomes.completed.insert(number);
            }
            Err(error) => {
                if let Some(plan_id) = recording {
                    let request = FailStep {
                        plan_id: plan_id.to_string(),
                        step_number: number,
                        error: cut(&error),
                        retry: false,
                        skip: false,
                        skip_dependents: false,
                        author: Some(self.author.to_string()),
                    };
                    self.store.transact(|tx| {
                        progress::fail_step_in(tx, &request)?;
                        if let Some(journal) = journal.as_ref().filter(|_| !half_applied) {
                            journal.close(tx, journal_state::FAILED, Some(&request.error))?;
                        }
                        Ok::<_, PlanStoreError>(())
                    })?;
                    if let Some(journal) = journal.filter(|_| !half_applied) {
                        journal.release();
                    }
                } else {
                    self.outcomes.failed.insert(number);
                }
                result.error = Some(error);
            }
        }
        self.refresh_outcomes()?;
        Ok(result)
    }

    /// The model's operations for `step`, checked and previewed; one repair for refused ones.
    fn propose(&mut self, step: &Step) -> Result<Proposal, String> {
        let (user, shown) = self.prompt(step);
        let schema = answer_schema();
        let system = format!("{SYSTEM_PROMPT} {UNTRUSTED_DATA_RULE}");
        let ask = |run: &mut Run<'_>, user: &str| {
            let answer = run
                .llm
                .complete_json(&JsonRequest::new(&system, user, "step_changes", &schema))
                .map_err(|err| format!("[{}] {err}", err.code()))?;
            run.usage.add(&answer.usage);
            Ok::<_, String>(answer)
        };
        let answer = ask(self, &user)?;
        match self.check(&answer.value, &shown) {
            Ok(mut proposal) => {
                proposal.model = answer.model;
                Ok(proposal)
            }
            Err(reason) => {
                // The reason quotes the answer's paths: fenced like the answer.
                let repair = format!(
                    "{user}\nYour previous answer was refused for the reason in the block below. \
                     Answer again with that fixed.\n\n{}{}",
                    fence("refusal", &reason),
                    fence("previous answer", &answer.value.to_string())
                );
                let answer = ask(self, &repair)?;
                let mut proposal = self.check(&answer.value, &shown).map_err(|reason| {
                    format!("the model's changes were refused (also after one repair): {reason}")
                })?;
                proposal.model = answer.model;
                Ok(proposal)
            }
        }
    }

    /// Parses an answer, puts masked secret lines back, and previews it (which checks every path
    /// and precondition exactly as applying would).
    fn check(&self, value: &Value, shown: &BTreeMap<String, String>) -> Result<Proposal, String> {
        let answer: StepAnswer = serde_json::from_value(value.clone())
            .map_err(|err| format!("the answer does not match the schema: {err}"))?;
        let mut operations = answer.operations;
        for op in &mut operations {
            restore_secrets(op, shown)?;
        }
        let diffs = apply::preview(self.workspace, &operations).map_err(|err| match err {
            ApplyError::UnsafePath { .. }
            | ApplyError::Precondition { .. }
            | ApplyError::TooMany { .. } => err.to_string(),
            other => format!("the workspace cannot be read: {other}"),
        })?;
        Ok(Proposal {
            summary: answer.summary,
            operations,
            diffs,
            model: String::new(),
        })
    }

    /// The recorded notes and files of `number`'s completed dependencies, so the model builds
    /// on them (empty for an unsaved plan or when nothing is recorded).
    fn earlier_work(&self, number: StepNumber) -> String {
        let Some(id) = self.plan_id else {
            return String::new();
        };
        let Ok(state) = self.store.snapshot(|tx| PlanState::load(tx, id)) else {
            return String::new();
        };
        let mut text = String::new();
        for dependency in self.graph.dependencies(number) {
            let Some(recorded) = state.states.get(&dependency) else {
                continue;
            };
            if recorded.status != progress::step_status::COMPLETED {
                continue;
            }
            let title = self
                .step(dependency)
                .map(|s| s.title.as_str())
                .unwrap_or("");
            let _ = writeln!(
                text,
                "Step {dependency} ({title}): {}",
                recorded.notes.trim()
            );
            if !recorded.files_changed.is_empty() {
                let _ = writeln!(
                    text,
                    "  files changed: {}",
                    recorded.files_changed.join(", ")
                );
            }
        }
        text
    }

    /// The user message for `step` and the file contents it showed (by path, unscrubbed).
    fn prompt(&self, step: &Step) -> (String, BTreeMap<String, String>) {
        let mut user = format!(
            "Carry out step {} of this plan: return its file operations.\n\n",
            step.step_number
        );
        user.push_str(&fence("plan goal", &self.plan.goal));
        user.push('\n');
        user.push_str(&fence("step", &describe_step(step)));
        let earlier = self.earlier_work(step.step_number);
        if !earlier.is_empty() {
            user.push_str("\nWhat the steps it depends on recorded when they completed:\n");
            user.push_str(&fence("earlier steps", &earlier));
        }
        let mut paths: Vec<&str> = Vec::new();
        for path in step
            .touched_paths()
            .chain(step.files_to_delete.iter().map(String::as_str))
        {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        let mut shown = BTreeMap::new();
        let mut used = 0;
        if !paths.is_empty() {
            user.push_str("\nCurrent contents of the files the step names:\n");
        }
        // Paths come from the plan, so they are untrusted: each goes inside a fence, the shown
        // files' as their `File:` line, the others' in one fenced list.
        let mut not_shown = String::new();
        for path in paths {
            let shown_path = path.escape_debug();
            match apply::read_workspace_file(self.workspace, path, MAX_SHOWN_FILE_BYTES) {
                Ok(Some(ReadFile::Text(text))) => {
                    let block = fence_file("file", path, &text);
                    let cost = estimate_tokens(&block);
                    if used + cost > FILE_TOKEN_BUDGET {
                        let _ = writeln!(
                            not_shown,
                            "- {shown_path}: exists, not shown (over the prompt budget)"
                        );
                        continue;
                    }
                    used += cost;
                    user.push_str(&block);
                    shown.insert(path.to_string(), text);
                }
                Ok(Some(ReadFile::Binary)) => {
                    let _ = writeln!(not_shown, "- {shown_path}: a binary file");
                }
                Ok(Some(ReadFile::TooLarge { bytes })) => {
                    let _ = writeln!(
                        not_shown,
                        "- {shown_path}: too large to show ({bytes} bytes)"
                    );
                }
                Ok(None) => {
                    let _ = writeln!(not_shown, "- {shown_path}: does not exist yet");
                }
                Err(err) => {
                    let _ = writeln!(not_shown, "- {shown_path}: cannot be used ({err})");
                }
            }
        }
        if !not_shown.is_empty() {
            user.push_str(
                "\nFiles the step names that are not shown, each with the reason. Do not modify \
                 a file listed here, except to create one that does not exist yet:\n",
            );
            user.push_str(&fence("files not shown", &not_shown));
        }
        if !self.additional_context.trim().is_empty() {
            user.push_str("\nAdditional context from the caller:\n");
            user.push_str(&fence("additional context", self.additional_context));
        }
        (user, shown)
    }
}

/// How a step that produced usable changes ended.
enum Done {
    Previewed,
    /// Written (`None`: the step needed no file change).
    Applied(Option<apply::AppliedBatch>),
}

/// A checked answer.
struct Proposal {
    summary: String,
    operations: Vec<FileOperation>,
    diffs: Vec<FileDiff>,
    model: String,
}

/// What the model must answer for a step.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepAnswer {
    /// What the changes do and how they meet the step's acceptance criteria.
    summary: String,
    /// The file operations, in order.
    operations: Vec<FileOperation>,
}

fn answer_schema() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<StepAnswer>()
        .to_value()
}

/// Instructions for the model: trusted text only.
const SYSTEM_PROMPT: &str = "You are a senior engineer carrying out one step of an \
implementation plan in a repository. Answer with JSON for the given schema: `operations` lists \
the file changes, each with `operation` create (path, content), modify (path, content: the whole \
new file), delete (path) or rename (path, new_path, optional new content). Paths are relative to \
the repository root with `/` separators, never absolute, never containing `..`, never under .git \
or .tollgate. Change only what the step needs, write complete file contents (no placeholders or \
elisions), and keep lines shown as `****` unchanged: they hide secrets. `summary` says what you \
changed and how the step's acceptance criteria are met. A step that needs no file change \
(research, review) gets an empty `operations` list and a summary of what was found.";

/// The step as the model reads it.
fn describe_step(step: &Step) -> String {
    let mut text = format!("Step {}: {}\n", step.step_number, step.title);
    if !step.description.trim().is_empty() {
        let _ = writeln!(text, "\n{}", step.description.trim());
    }
    let list = |text: &mut String, heading: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(text, "\n{heading}:");
            for item in items {
                let _ = writeln!(text, "- {item}");
            }
        }
    };
    let change = |change: &crate::plan::model::FileChange| {
        let mut line = change.path.clone();
        if let Some(previous) = &change.previous_path {
            let _ = write!(line, " (renamed from {previous})");
        }
        if !change.reason.trim().is_empty() {
            let _ = write!(line, ": {}", change.reason.trim());
        }
        line
    };
    list(
        &mut text,
        "Files to modify",
        step.files_to_modify.iter().map(change).collect(),
    );
    list(
        &mut text,
        "Files to create",
        step.files_to_create.iter().map(change).collect(),
    );
    list(&mut text, "Files to delete", step.files_to_delete.clone());
    list(
        &mut text,
        "Acceptance criteria",
        step.acceptance_criteria.clone(),
    );
    text
}

/// Puts back the secret lines of a shown file that the model returned masked and unchanged;
/// refuses content that carries a mask anywhere else, since writing it would destroy a secret.
fn restore_secrets(op: &mut FileOperation, shown: &BTreeMap<String, String>) -> Result<(), String> {
    let (path, content) = match op {
        FileOperation::Modify { path, content } => (path.as_str(), content),
        FileOperation::Rename {
            path,
            content: Some(content),
            ..
        } => (path.as_str(), content),
        _ => return Ok(()),
    };
    let Some(original) = shown.get(path) else {
        return Ok(());
    };
    let scrubbed = crate::secrets::scrub(original, 0, 0);
    if scrubbed.secrets.is_empty() {
        return Ok(());
    }
    // Masked line → original line, where the scrub kept the line structure and is unambiguous.
    let mut lines: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let original_lines: Vec<&str> = original.split_inclusive('\n').collect();
    let scrubbed_lines: Vec<&str> = scrubbed.text.split_inclusive('\n').collect();
    if original_lines.len() == scrubbed_lines.len() {
        for (masked, plain) in scrubbed_lines.iter().zip(&original_lines) {
            if masked != plain {
                lines
                    .entry(masked)
                    .and_modify(|known| {
                        if *known != Some(*plain) {
                            *known = None;
                        }
                    })
                    .or_insert(Some(plain));
            }
        }
    }
    let restored: String = content
        .split_inclusive('\n')
        .map(|line| match lines.get(line) {
            Some(Some(plain)) => *plain,
            _ => line,
        })
        .collect();
    let mask = crate::secrets::MASK;
    if restored.matches(mask).count() > original.matches(mask).count() {
        return Err(format!(
            "the new content of `{path}` carries masked secrets (`{mask}`) on lines it changed; \
             writing it would destroy them, so keep the lines that hold secrets unchanged"
        ));
    }
    *content = restored;
    Ok(())
}

/// `text` cut to what the store records.
fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_RECORDED_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_RECORDED_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The response as Markdown: each step with its diffs, then what is next.
pub fn render_markdown(response: &ExecutePlanResponse) -> String {
    let mut md = format!("# Plan execution: {}\n\n", response.goal.trim());
    let _ = writeln!(
        md,
        "- Mode: {} ({})",
        response.mode.as_str(),
        if response.apply_changes {
            "changes applied"
        } else {
            "preview"
        }
    );
    if let Some(id) = &response.plan_id {
        let _ = writeln!(md, "- Plan: `{id}`");
    }
    let p = response.progress;
    // A preview records nothing: its progress is what applying it would reach.
    let label = if response.apply_changes {
        "Progress"
    } else {
        "Progress if applied (a preview records nothing)"
    };
    let _ = writeln!(
        md,
        "- {label}: {}% ({} of {} completed, {} failed, {} skipped)",
        p.percentage, p.completed, p.total, p.failed, p.skipped
    );
    let next = if response.next_ready_steps.is_empty() {
        "none".to_string()
    } else {
        response
            .next_ready_steps
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(md, "- Ready next: {next}");
    if let Some(reason) = &response.stopped_because {
        let _ = writeln!(md, "- Stopped: {reason}");
    }
    for note in &response.notes {
        let _ = writeln!(md, "- Note: {note}");
    }
    if response.step_results.is_empty() {
        md.push_str("\nNo step ran.\n");
    }
    for result in &response.step_results {
        let status = match result.status {
            StepRunStatus::Previewed => "previewed",
            StepRunStatus::Applied => "applied",
            StepRunStatus::Failed => "failed",
        };
        let _ = writeln!(
            md,
            "\n## Step {}: {} ({status})\n",
            result.step_number, result.title
        );
        if !result.summary.trim().is_empty() {
            let _ = writeln!(md, "{}\n", result.summary.trim());
        }
        if let Some(error) = &result.error {
            let _ = writeln!(md, "**Error:** {error}\n");
        }
        for diff in &result.files {
            let target = diff
                .new_path
                .as_deref()
                .map_or_else(|| diff.path.clone(), |to| format!("{} → {to}", diff.path));
            let _ = writeln!(
                md,
                "### {} `{target}` (+{} −{})\n",
                diff.operation, diff.lines_added, diff.lines_removed
            );
            if !diff.diff.is_empty() {
                // A fence longer than any backtick run inside keeps the diff intact.
                let longest = diff
                    .diff
                    .split(|c| c != '`')
                    .map(str::len)
                    .max()
                    .unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                let newline = if diff.diff.ends_with('\n') { "" } else { "\n" };
                let _ = writeln!(md, "{fence}diff\n{}{newline}{fence}\n", diff.diff);
            }
        }
        if !result.backups_created.is_empty() {
            let _ = writeln!(md, "Backups: {}\n", result.backups_created.join(", "));
        }
    }
    md
}

#[cfg(test)]
mod tests;
