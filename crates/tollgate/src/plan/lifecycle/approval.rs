//! Approvals: `request_approval` (the whole plan, one step, or a group of steps) and
//! `respond_approval` (approve, reject, request modification, with comments).
//!
//! An approval is for one version of the plan. Approving the whole plan makes its status
//! `approved`; saving new content afterwards returns it to `ready` (the approval was for other
//! content). A request is answered once: a second answer is refused, so two reviewers answering
//! at the same time cannot overwrite each other.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::library::{
    PlanStoreError, author_of, check_text, current_plan, invalid, plan_row, status,
};
use crate::clock::now_rfc3339;
use crate::plan::model::StepNumber;
use crate::store::plans::ApprovalRow;
use crate::store::{ReadTx, Store};

/// The approval request that keeps `step` of the plan's `version` from starting, if any: every
/// request for that version covering the step (the whole plan, or a group holding the step)
/// must be approved; a pending one waits, and a rejected one (or one asking for changes) holds
/// the step until new content is saved, a new version with its own requests. Requests for
/// other versions do not count: an approval is for one content.
pub(crate) fn blocking_approval(
    conn: &dyn ReadTx,
    plan_id: &str,
    version: u32,
    step: StepNumber,
) -> Result<Option<ApprovalRow>, PlanStoreError> {
    Ok(conn.approvals(plan_id)?.into_iter().find(|a| {
        a.plan_version == version
            && (a.step_numbers.is_empty() || a.step_numbers.contains(&step))
            && a.status != "approved"
    }))
}

/// What `request_approval` is asked to do (its wire request is `api::lifecycle::RequestApproval`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestApproval {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// Steps to approve: none for the whole plan, one for a step, several for a group.
    pub step_numbers: Vec<StepNumber>,
    /// What the approver should look at.
    pub note: Option<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// What `respond_approval` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAction {
    Approve,
    Reject,
    RequestModification,
}

/// What `respond_approval` is asked to do (its wire request is `api::lifecycle::RespondApproval`).
#[derive(Debug, Clone, PartialEq)]
pub struct RespondApproval {
    /// The approval request's id (`approval_…`).
    pub request_id: String,
    /// `approve`, `reject` or `request_modification`.
    pub action: ApprovalAction,
    /// The approver's comment.
    pub comment: Option<String>,
    /// The changes asked for (free JSON), with `request_modification`.
    pub modifications: Option<Value>,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// An approval request and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Approval {
    pub id: String,
    pub plan_id: String,
    /// The plan version the request is for.
    pub plan_version: u32,
    /// `full_plan`, `step` or `step_group`.
    pub kind: String,
    pub step_numbers: Vec<StepNumber>,
    /// `pending`, `approved`, `rejected` or `modification_requested`.
    pub status: String,
    pub requested_by: String,
    pub requested_at: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responded_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modifications: Option<Value>,
}

impl From<ApprovalRow> for Approval {
    fn from(row: ApprovalRow) -> Approval {
        Approval {
            modifications: row
                .modifications
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            id: row.id,
            plan_id: row.plan_id,
            plan_version: row.plan_version,
            kind: row.kind,
            step_numbers: row.step_numbers,
            status: row.status,
            requested_by: row.requested_by,
            requested_at: row.requested_at,
            note: row.note,
            responded_by: row.responded_by,
            responded_at: row.responded_at,
            comment: row.comment,
        }
    }
}

/// Output of both approval operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalResponse {
    pub approval: Approval,
    /// The plan's status after the call.
    pub plan_status: String,
    pub message: String,
}

/// Asks for an approval.
pub fn request_approval(
    store: &Store,
    request: &RequestApproval,
) -> Result<ApprovalResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    let note = request.note.as_deref().unwrap_or_default();
    check_text("note", note)?;
    let mut steps = request.step_numbers.clone();
    steps.sort_unstable();
    steps.dedup();
    store.transact(|tx| {
        let (row, plan) = current_plan(tx, &request.plan_id)?;
        if let Some(missing) = steps
            .iter()
            .find(|n| !plan.steps.iter().any(|s| s.step_number == **n))
        {
            return Err(PlanStoreError::StepNotFound {
                plan_id: row.id.clone(),
                step_number: *missing,
            });
        }
        let kind = match steps.len() {
            0 => "full_plan",
            1 => "step",
            _ => "step_group",
        };
        let approval = ApprovalRow {
            id: crate::ids::new_id("approval"),
            plan_id: row.id.clone(),
            plan_version: row.current_version,
            kind: kind.to_string(),
            step_numbers: steps.clone(),
            status: "pending".to_string(),
            requested_by: author.clone(),
            requested_at: now_rfc3339(),
            note: note.to_string(),
            responded_by: None,
            responded_at: None,
            comment: None,
            modifications: None,
        };
        tx.insert_approval(&approval)?;
        tx.log_event(&row.id, None, "approval_requested", &approval.id, &author)?;
        Ok(ApprovalResponse {
            message: format!(
                "Approval `{}` requested for {} of plan `{}` (version {})",
                approval.id,
                describe(kind, &steps),
                row.id,
                row.current_version
            ),
            approval: approval.into(),
            plan_status: row.status,
        })
    })
}

fn describe(kind: &str, steps: &[StepNumber]) -> String {
    let list = steps
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match kind {
        "full_plan" => "the whole plan".to_string(),
        "step" => format!("step {list}"),
        _ => format!("steps {list}"),
    }
}

/// Answers a pending approval request.
pub fn respond_approval(
    store: &Store,
    request: &RespondApproval,
) -> Result<ApprovalResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    let comment = request
        .comment
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    if let Some(comment) = comment {
        check_text("comment", comment)?;
    }
    if request.modifications.is_some() && request.action != ApprovalAction::RequestModification {
        return Err(invalid(
            "modifications",
            "only with action request_modification",
        ));
    }
    let modifications = request.modifications.as_ref().map(Value::to_string);
    if let Some(text) = &modifications {
        check_text("modifications", text)?;
    }
    let new_status = match request.action {
        ApprovalAction::Approve => "approved",
        ApprovalAction::Reject => "rejected",
        ApprovalAction::RequestModification => "modification_requested",
    };
    store.transact(|tx| {
        let pending = tx.approval(&request.request_id)?
            .ok_or_else(|| PlanStoreError::ApprovalNotFound(request.request_id.clone()))?;
        let row = plan_row(tx, &pending.plan_id)?;
        if pending.status != "pending" {
            return Err(PlanStoreError::Conflict(format!(
                "Approval `{}` was already answered ({} by {})",
                pending.id,
                pending.status,
                pending.responded_by.as_deref().unwrap_or("?")
            )));
        }
        tx.respond_approval(&pending.id, new_status, &author, comment, modifications.as_deref())?;
        tx.log_event(
            &row.id,
            None,
            &format!("approval_{new_status}"),
            &format!("{}{}", pending.id, comment.map(|c| format!(": {c}")).unwrap_or_default()),
            &author,
        )?;
        let mut plan_status = row.status.clone();
        let mut note = String::new();
        if pending.kind == "full_plan" {
            if pending.plan_version != row.current_version {
                note = format!(
                    " (it was for version {}; the plan is now at version {}, so its status is unchanged)",
                    pending.plan_version, row.current_version
                );
            } else if request.action == ApprovalAction::Approve && row.status == status::READY {
                tx.set_status(&row.id, status::APPROVED)?;
                plan_status = status::APPROVED.to_string();
            } else if request.action != ApprovalAction::Approve && row.status == status::APPROVED {
                tx.set_status(&row.id, status::READY)?;
                plan_status = status::READY.to_string();
            }
        }
        let approval = tx.approval(&pending.id)?
            .ok_or_else(|| PlanStoreError::ApprovalNotFound(pending.id.clone()))?;
        Ok(ApprovalResponse {
            message: format!("Approval `{}` {new_status}{note}", pending.id),
            approval: approval.into(),
            plan_status,
        })
    })
}

/// Every approval request of a plan, oldest first.
pub fn list_approvals(store: &Store, plan_id: &str) -> Result<Vec<Approval>, PlanStoreError> {
    store.snapshot(|tx| {
        let row = plan_row(tx, plan_id)?;
        Ok(tx
            .approvals(&row.id)?
            .into_iter()
            .map(Approval::from)
            .collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::lifecycle::library;
    use crate::plan::lifecycle::library::tests::{sample_plan, save};

    fn ask(
        store: &Store,
        plan_id: &str,
        steps: Vec<StepNumber>,
    ) -> Result<ApprovalResponse, PlanStoreError> {
        request_approval(
            store,
            &RequestApproval {
                plan_id: plan_id.into(),
                step_numbers: steps,
                note: None,
                author: Some("dev".into()),
            },
        )
    }

    fn answer(
        store: &Store,
        id: &str,
        action: ApprovalAction,
    ) -> Result<ApprovalResponse, PlanStoreError> {
        respond_approval(
            store,
            &RespondApproval {
                request_id: id.into(),
                action,
                comment: Some("looks fine".into()),
                modifications: None,
                author: Some("lead".into()),
            },
        )
    }

    crate::backend_tests! {
    fn a_step_an_unapproved_request_covers_cannot_start(store) {
        use crate::plan::lifecycle::progress::{
            CompleteStep, StartStep, complete_step, start_step,
        };
        let id = save(&store, sample_plan(), None).plan.id;
        let start = |n| {
            start_step(
                &store,
                &StartStep {
                    plan_id: id.clone(),
                    step_number: n,
                    author: None,
                },
            )
        };
        let request = ask(&store, &id, vec![1]).unwrap().approval.id;
        let err = start(1).unwrap_err();
        assert_eq!(err.code(), "CONFLICT");
        assert!(
            err.to_string().contains(&request) && err.to_string().contains("pending"),
            "{err}"
        );
        // A whole-plan request holds every step, until it is approved.
        answer(&store, &request, ApprovalAction::Approve).unwrap();
        let full = ask(&store, &id, vec![]).unwrap().approval.id;
        assert!(start(1).unwrap_err().to_string().contains(&full));
        answer(&store, &full, ApprovalAction::Approve).unwrap();
        // A rejection holds its steps for this version; other steps go on.
        let group = ask(&store, &id, vec![2]).unwrap().approval.id;
        answer(&store, &group, ApprovalAction::Reject).unwrap();
        start(1).unwrap();
        complete_step(
            &store,
            &CompleteStep {
                plan_id: id.clone(),
                step_number: 1,
                notes: None,
                files_modified: Vec::new(),
                author: None,
            },
        )
        .unwrap();
        let held = start(2).unwrap_err().to_string();
        assert!(held.contains(&group) && held.contains("rejected"), "{held}");
        start(3).unwrap();
    }
    }

    crate::backend_tests! {
    fn approvals_for_plan_step_and_group(store) {
        let saved = save(&store, sample_plan(), None);
        let id = saved.plan.id;
        let full = ask(&store, &id, vec![]).unwrap();
        assert_eq!(
            (full.approval.kind.as_str(), full.approval.status.as_str()),
            ("full_plan", "pending")
        );
        assert!(full.approval.id.starts_with("approval_"));
        assert_eq!(ask(&store, &id, vec![2]).unwrap().approval.kind, "step");
        let group = ask(&store, &id, vec![3, 2, 3]).unwrap();
        assert_eq!(
            (
                group.approval.kind.as_str(),
                group.approval.step_numbers.clone()
            ),
            ("step_group", vec![2, 3])
        );
        assert_eq!(
            ask(&store, &id, vec![7]).unwrap_err().code(),
            "INVALID_INPUT"
        );

        let approved = answer(&store, &full.approval.id, ApprovalAction::Approve).unwrap();
        assert_eq!(approved.plan_status, "approved");
        assert_eq!(approved.approval.responded_by.as_deref(), Some("lead"));
        assert_eq!(approved.approval.comment.as_deref(), Some("looks fine"));
        // Answered once only.
        let err = answer(&store, &full.approval.id, ApprovalAction::Reject).unwrap_err();
        assert_eq!(err.code(), "CONFLICT");
        assert!(err.to_string().contains("approved by lead"), "{err}");

        let modification = respond_approval(
            &store,
            &RespondApproval {
                request_id: group.approval.id.clone(),
                action: ApprovalAction::RequestModification,
                comment: None,
                modifications: Some(serde_json::json!({"step": 3, "add": "load test"})),
                author: None,
            },
        )
        .unwrap();
        assert_eq!(modification.approval.status, "modification_requested");
        assert_eq!(
            modification.approval.modifications.unwrap()["add"],
            "load test"
        );

        // New content voids the plan approval.
        let mut plan = library::load(&store, &library::PlanRef::Id(id.clone()), None)
            .unwrap()
            .plan;
        plan.goal = "changed".into();
        let overwrite = library::SaveOptions {
            overwrite: true,
            ..Default::default()
        };
        let resaved = library::save(&store, plan, &overwrite).unwrap();
        assert_eq!(resaved.plan.status, "ready");
        let all = list_approvals(&store, &id).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(
            answer(&store, "approval_missing", ApprovalAction::Approve)
                .unwrap_err()
                .code(),
            "INVALID_INPUT"
        );
    }
    }
}
