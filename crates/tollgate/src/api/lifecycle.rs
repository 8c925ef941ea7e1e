//! The saved plan's lifecycle operations on the wire: progress (`view_progress`, `start_step`,
//! `complete_step`, `fail_step`), `undo_step`, approvals (`request_approval`,
//! `respond_approval`) and history (`view_history`, `compare_plan_versions`, `rollback_plan`).
//! Each request is converted by hand into the domain's command (`plan::lifecycle::progress::StartStep`, …),
//! which carries no serde; the domain checks what needs the store (a plan's state, a step's
//! dependencies) and answers with its own output types.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::StepNumber;
use crate::plan::lifecycle::approval::{
    self, ApprovalAction, ApprovalResponse, RequestApproval, RespondApproval,
};
use crate::plan::lifecycle::history::{
    self, ComparePlanVersions, MAX_HISTORY_LIMIT, PlanComparison, RollbackPlan,
    RollbackPlanResponse, ViewHistory, ViewHistoryResponse,
};
use crate::plan::lifecycle::library::PlanStoreError;
use crate::plan::lifecycle::progress::{
    self, CompleteStep, FailStep, ProgressReport, StartStep, StepUpdate, ViewProgress,
};
use crate::plan::lifecycle::undo::{self, UndoStep, UndoStepResponse};
use crate::store::Store;

/// Input of `view_progress`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewProgressRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
}

impl From<ViewProgressRequest> for ViewProgress {
    fn from(request: ViewProgressRequest) -> ViewProgress {
        ViewProgress {
            plan_id: request.plan_id,
        }
    }
}

/// `view_progress`.
pub fn view_progress(
    store: &Store,
    request: ViewProgressRequest,
) -> Result<ProgressReport, PlanStoreError> {
    progress::view_progress(store, &request.into())
}

/// Input of `start_step`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartStepRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    #[schemars(range(min = 1))]
    pub step_number: StepNumber,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<StartStepRequest> for StartStep {
    fn from(request: StartStepRequest) -> StartStep {
        StartStep {
            plan_id: request.plan_id,
            step_number: request.step_number,
            author: request.author,
        }
    }
}

/// `start_step`.
pub fn start_step(store: &Store, request: StartStepRequest) -> Result<StepUpdate, PlanStoreError> {
    progress::start_step(store, &request.into())
}

/// Input of `complete_step`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteStepRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    #[schemars(range(min = 1))]
    pub step_number: StepNumber,
    /// What was done, evidence that the acceptance criteria hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Workspace-relative paths the step changed.
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub files_modified: Vec<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<CompleteStepRequest> for CompleteStep {
    fn from(request: CompleteStepRequest) -> CompleteStep {
        CompleteStep {
            plan_id: request.plan_id,
            step_number: request.step_number,
            notes: request.notes,
            files_modified: request.files_modified,
            author: request.author,
        }
    }
}

/// `complete_step`.
pub fn complete_step(
    store: &Store,
    request: CompleteStepRequest,
) -> Result<StepUpdate, PlanStoreError> {
    progress::complete_step(store, &request.into())
}

/// Input of `fail_step`. Without an option the step is failed and its dependents stay blocked
/// until it is retried or skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailStepRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step, by its number in the plan.
    #[schemars(range(min = 1))]
    pub step_number: StepNumber,
    /// What went wrong.
    pub error: String,
    /// Put the step back in the queue, unless it was already started 3 times (then it fails).
    #[serde(default)]
    pub retry: bool,
    /// Give up on the step itself: it counts as skipped and its dependents may go on.
    #[serde(default)]
    pub skip: bool,
    /// Fail the step and skip every step that depends on it, directly or not.
    #[serde(default)]
    pub skip_dependents: bool,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<FailStepRequest> for FailStep {
    fn from(request: FailStepRequest) -> FailStep {
        FailStep {
            plan_id: request.plan_id,
            step_number: request.step_number,
            error: request.error,
            retry: request.retry,
            skip: request.skip,
            skip_dependents: request.skip_dependents,
            author: request.author,
        }
    }
}

/// `fail_step`.
pub fn fail_step(store: &Store, request: FailStepRequest) -> Result<StepUpdate, PlanStoreError> {
    progress::fail_step(store, &request.into())
}

/// Input of `request_approval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestApprovalRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// Steps to approve: none for the whole plan, one for a step, several for a group.
    #[serde(default)]
    #[schemars(length(max = 1000))]
    pub step_numbers: Vec<StepNumber>,
    /// What the approver should look at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<RequestApprovalRequest> for RequestApproval {
    fn from(request: RequestApprovalRequest) -> RequestApproval {
        RequestApproval {
            plan_id: request.plan_id,
            step_numbers: request.step_numbers,
            note: request.note,
            author: request.author,
        }
    }
}

/// `request_approval`.
pub fn request_approval(
    store: &Store,
    request: RequestApprovalRequest,
) -> Result<ApprovalResponse, PlanStoreError> {
    approval::request_approval(store, &request.into())
}

/// Input of `respond_approval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RespondApprovalRequest {
    /// The approval request's id (`approval_…`).
    pub request_id: String,
    /// `approve`, `reject` or `request_modification`.
    pub action: ApprovalAction,
    /// The approver's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The changes asked for (free JSON), with `request_modification`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modifications: Option<Value>,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<RespondApprovalRequest> for RespondApproval {
    fn from(request: RespondApprovalRequest) -> RespondApproval {
        RespondApproval {
            request_id: request.request_id,
            action: request.action,
            comment: request.comment,
            modifications: request.modifications,
            author: request.author,
        }
    }
}

/// `respond_approval`.
pub fn respond_approval(
    store: &Store,
    request: RespondApprovalRequest,
) -> Result<ApprovalResponse, PlanStoreError> {
    approval::respond_approval(store, &request.into())
}

/// Input of `view_history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewHistoryRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The newest versions and events to show (default 20, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_HISTORY_LIMIT))]
    pub limit: Option<usize>,
    /// Include each version's full plan. Default false.
    #[serde(default)]
    pub include_plans: bool,
}

impl From<ViewHistoryRequest> for ViewHistory {
    fn from(request: ViewHistoryRequest) -> ViewHistory {
        ViewHistory {
            plan_id: request.plan_id,
            limit: request.limit,
            include_plans: request.include_plans,
        }
    }
}

/// `view_history`.
pub fn view_history(
    store: &Store,
    request: ViewHistoryRequest,
) -> Result<ViewHistoryResponse, PlanStoreError> {
    history::view_history(store, &request.into())
}

/// Input of `compare_plan_versions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparePlanVersionsRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The older version.
    #[schemars(range(min = 1))]
    pub from_version: u32,
    /// The newer version.
    #[schemars(range(min = 1))]
    pub to_version: u32,
}

impl From<ComparePlanVersionsRequest> for ComparePlanVersions {
    fn from(request: ComparePlanVersionsRequest) -> ComparePlanVersions {
        ComparePlanVersions {
            plan_id: request.plan_id,
            from_version: request.from_version,
            to_version: request.to_version,
        }
    }
}

/// `compare_plan_versions`.
pub fn compare_plan_versions(
    store: &Store,
    request: ComparePlanVersionsRequest,
) -> Result<PlanComparison, PlanStoreError> {
    history::compare_plan_versions(store, &request.into())
}

/// Input of `rollback_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackPlanRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The version whose content becomes current again.
    #[schemars(range(min = 1))]
    pub target_version: u32,
    /// Why, recorded in the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<RollbackPlanRequest> for RollbackPlan {
    fn from(request: RollbackPlanRequest) -> RollbackPlan {
        RollbackPlan {
            plan_id: request.plan_id,
            target_version: request.target_version,
            reason: request.reason,
            author: request.author,
        }
    }
}

/// `rollback_plan`.
pub fn rollback_plan(
    store: &Store,
    request: RollbackPlanRequest,
) -> Result<RollbackPlanResponse, PlanStoreError> {
    history::rollback_plan(store, &request.into())
}

/// Input of `undo_step`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoStepRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The step whose applied changes to undo [default: the step applied last].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub step_number: Option<StepNumber>,
    /// Restore the backups even over files edited since the step wrote them [default: false:
    /// refuse, naming the files].
    #[serde(default)]
    pub force: bool,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl From<UndoStepRequest> for UndoStep {
    fn from(request: UndoStepRequest) -> UndoStep {
        UndoStep {
            plan_id: request.plan_id,
            step_number: request.step_number,
            force: request.force,
            author: request.author,
        }
    }
}

/// `undo_step`.
pub fn undo_step(
    store: &Store,
    workspace: &Path,
    request: UndoStepRequest,
) -> Result<UndoStepResponse, PlanStoreError> {
    undo::undo_step(store, workspace, &request.into())
}
