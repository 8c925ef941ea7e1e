//! Saved plans: `save_plan`, `load_plan`, `list_plans`, `delete_plan`, and what the other
//! persistence operations share (the error type, plan arguments, loading the current version).
//!
//! Every saved change of a plan's content is a new version in the store with who made it and
//! why; saving content identical to the current version records nothing (upstream duplicated
//! history on every re-save). Deletion is soft: the plan leaves listings and frees its name, and
//! its versions stay in the store.

use crate::ErrorCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::now_rfc3339;
use crate::plan::lifecycle::apply::ApplyError;
use crate::plan::{GraphError, Plan, PlanResponse, StepNumber, link_steps};
use crate::store::plans::{NewPlan, PlanFacts, PlanFilter, PlanRow, VersionMeta};
use crate::store::{ReadTx, Store, StoreError, WriteTx};

/// Default and largest `limit` of `list_plans`.
pub const DEFAULT_LIST_LIMIT: usize = 50;
pub const MAX_LIST_LIMIT: usize = 1000;
/// The longest name, tag, note or comment accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 20_000;
/// Who made a change when the caller does not say.
pub const UNKNOWN_AUTHOR: &str = "unknown";

/// Plan statuses (`list_plans` filters by them).
pub mod status {
    pub const READY: &str = "ready";
    pub const APPROVED: &str = "approved";
    pub const EXECUTING: &str = "executing";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const ALL: [&str; 5] = [READY, APPROVED, EXECUTING, COMPLETED, FAILED];
}

/// Why a plan operation failed. Nothing was changed when one is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanStoreError {
    /// `api::plan::plan_store_error` adds how the user lists the saved plans.
    #[error("Plan `{0}` not found")]
    PlanNotFound(String),
    #[error("Plan `{plan_id}` has no version {version} (it has versions 1 to {latest})")]
    VersionNotFound {
        plan_id: String,
        version: u32,
        latest: u32,
    },
    #[error("Plan `{plan_id}` has no step {step_number}")]
    StepNotFound {
        plan_id: String,
        step_number: StepNumber,
    },
    #[error("Approval request `{0}` not found")]
    ApprovalNotFound(String),
    #[error("Invalid `{field}`: {message}")]
    InvalidInput {
        field: &'static str,
        message: String,
    },
    #[error("The plan is not valid: {0}")]
    InvalidPlan(#[from] GraphError),
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Apply(#[from] ApplyError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl PlanStoreError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            PlanStoreError::PlanNotFound(_) => ErrorCode::PlanNotFound,
            PlanStoreError::VersionNotFound { .. }
            | PlanStoreError::StepNotFound { .. }
            | PlanStoreError::ApprovalNotFound(_)
            | PlanStoreError::InvalidInput { .. }
            | PlanStoreError::InvalidPlan(_) => ErrorCode::InvalidInput,
            PlanStoreError::Conflict(_) => ErrorCode::Conflict,
            PlanStoreError::Apply(err) => err.code(),
            PlanStoreError::Store(err) => err.code(),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            PlanStoreError::InvalidInput { field, .. } => Some(field),
            PlanStoreError::InvalidPlan(_) => Some("plan"),
            PlanStoreError::StepNotFound { .. } => Some("step_number"),
            PlanStoreError::VersionNotFound { .. } => Some("version"),
            PlanStoreError::ApprovalNotFound(_) => Some("request_id"),
            _ => None,
        }
    }
}

pub(crate) fn invalid(field: &'static str, message: impl Into<String>) -> PlanStoreError {
    PlanStoreError::InvalidInput {
        field,
        message: message.into(),
    }
}

pub(crate) fn check_text(field: &'static str, text: &str) -> Result<(), PlanStoreError> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(invalid(
            field,
            format!("longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The author recorded for a change: the caller's, trimmed, else [`UNKNOWN_AUTHOR`].
pub(crate) fn author_of(author: Option<&str>) -> Result<String, PlanStoreError> {
    let author = author.map(str::trim).filter(|a| !a.is_empty());
    if let Some(author) = author {
        check_text("author", author)?;
    }
    Ok(author.unwrap_or(UNKNOWN_AUTHOR).to_string())
}

/// The facts of `plan` the index row keeps.
fn facts(plan: &Plan) -> PlanFacts<'_> {
    PlanFacts {
        goal: &plan.goal,
        step_count: u32::try_from(plan.steps.len()).unwrap_or(u32::MAX),
    }
}

fn plan_json(plan: &Plan) -> Result<String, PlanStoreError> {
    serde_json::to_string(plan).map_err(|err| {
        PlanStoreError::Store(StoreError::Corrupt {
            what: format!("plan {}", plan.id),
            reason: err.to_string(),
        })
    })
}

/// A plan's content without the fields every version changes.
fn content_of(plan: &Plan) -> Value {
    let mut value = serde_json::to_value(plan).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        for key in ["id", "version", "created_at", "updated_at"] {
            object.remove(key);
        }
    }
    value
}

/// The live plan `plan_id`, or [`PlanStoreError::PlanNotFound`].
pub(crate) fn plan_row(conn: &dyn ReadTx, plan_id: &str) -> Result<PlanRow, PlanStoreError> {
    conn.plan_by_id(plan_id, false)?
        .ok_or_else(|| PlanStoreError::PlanNotFound(plan_id.to_string()))
}

/// Version `version` of a plan, parsed.
pub(crate) fn plan_version(
    conn: &dyn ReadTx,
    row: &PlanRow,
    version: u32,
) -> Result<Plan, PlanStoreError> {
    let stored =
        conn.version(&row.id, version)?
            .ok_or_else(|| PlanStoreError::VersionNotFound {
                plan_id: row.id.clone(),
                version,
                latest: row.current_version,
            })?;
    let text = stored.plan_json.unwrap_or_default();
    serde_json::from_str(&text).map_err(|err| {
        PlanStoreError::Store(StoreError::Corrupt {
            what: format!("plan {} version {version}", row.id),
            reason: err.to_string(),
        })
    })
}

/// The live plan `plan_id` and its current version.
pub(crate) fn current_plan(
    conn: &dyn ReadTx,
    plan_id: &str,
) -> Result<(PlanRow, Plan), PlanStoreError> {
    let row = plan_row(conn, plan_id)?;
    let plan = plan_version(conn, &row, row.current_version)?;
    Ok((row, plan))
}

/// Records `plan` as the next version of the saved plan `row` (validated, with its version
/// fields set), and voids an approval of the previous content. Returns the new version.
pub(crate) fn record_version(
    conn: &dyn WriteTx,
    row: &PlanRow,
    plan: &mut Plan,
    meta: VersionMeta<'_>,
) -> Result<u32, PlanStoreError> {
    link_steps(plan)?;
    plan.id = row.id.clone();
    plan.version = row.current_version + 1;
    plan.updated_at = now_rfc3339();
    if plan.created_at.is_empty() {
        plan.created_at = row.created_at.clone();
    }
    let version = conn.append_version(&row.id, facts(plan), &plan_json(plan)?, meta)?;
    if row.status == status::APPROVED {
        conn.set_status(&row.id, status::READY)?;
        conn.log_event(
            &row.id,
            None,
            "approval_voided",
            &format!("version {version} changed the approved content"),
            meta.author,
        )?;
    }
    Ok(version)
}

/// A saved plan as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanSummary {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub goal: String,
    /// `ready`, `approved`, `executing`, `completed` or `failed`.
    pub status: String,
    /// The current version.
    pub version: u32,
    pub tags: Vec<String>,
    pub step_count: u32,
    pub created_at: String,
    pub updated_at: String,
    /// When the plan was deleted (listings show deleted plans only when asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
}

impl From<PlanRow> for PlanSummary {
    fn from(row: PlanRow) -> PlanSummary {
        PlanSummary {
            id: row.id,
            name: row.name,
            goal: row.goal,
            status: row.status,
            version: row.current_version,
            tags: row.tags,
            step_count: row.step_count,
            created_at: row.created_at,
            updated_at: row.updated_at,
            deleted_at: row.deleted_at,
        }
    }
}

/// How [`save`] files a plan: its name and tags, whether it may become the next version of a
/// saved plan, and who saves it and why (recorded in the history).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaveOptions {
    /// A unique name to load the plan by.
    pub name: Option<String>,
    /// Tags to filter listings by; empty keeps a saved plan's tags.
    pub tags: Vec<String>,
    /// When the plan (its id, else its name) is already saved: `true` records this content as
    /// its next version, `false` refuses.
    pub overwrite: bool,
    pub author: Option<String>,
    pub reason: Option<String>,
}

/// Output of `save_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SavePlanResponse {
    pub plan: PlanSummary,
    /// `created` (a new plan), `new_version`, or `unchanged` (the content equals the current
    /// version: no version recorded; name and tags updated).
    pub outcome: String,
    pub message: String,
}

/// Saves a plan after validating its step graph (see [`SaveOptions`]).
pub fn save(
    store: &Store,
    mut plan: Plan,
    request: &SaveOptions,
) -> Result<SavePlanResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    let name = request
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty());
    if let Some(name) = name {
        check_text("name", name)?;
    }
    for tag in &request.tags {
        if tag.trim().is_empty() {
            return Err(invalid("tags", "a tag is empty"));
        }
        check_text("tags", tag)?;
    }
    let reason = request.reason.as_deref().unwrap_or_default();
    check_text("reason", reason)?;
    link_steps(&mut plan)?;
    store.transact(|tx| {
        let by_id = if plan.id.is_empty() {
            None
        } else {
            tx.plan_by_id(&plan.id, false)?
        };
        let by_name = match name {
            Some(name) => tx.plan_by_name(name)?,
            None => None,
        };
        if let (Some(by_id), Some(by_name)) = (&by_id, &by_name)
            && by_id.id != by_name.id
        {
            return Err(PlanStoreError::Conflict(format!(
                "The name `{}` belongs to another plan (`{}`)",
                name.unwrap_or_default(),
                by_name.id
            )));
        }
        let tags = if request.tags.is_empty() { None } else { Some(request.tags.clone()) };
        match by_id.or(by_name) {
            Some(existing) => {
                if !request.overwrite {
                    return Err(PlanStoreError::Conflict(format!(
                        "Plan `{}` is already saved (version {}); pass overwrite: true to record this content as its next version",
                        existing.id, existing.current_version
                    )));
                }
                let new_name = name.or(existing.name.as_deref());
                let new_tags = tags.unwrap_or_else(|| existing.tags.clone());
                tx.set_name_and_tags(&existing.id, new_name, &new_tags)?;
                let (_, current) = current_plan(tx, &existing.id)?;
                let outcome = if content_of(&current) == content_of(&plan) {
                    "unchanged"
                } else {
                    let summary = if reason.is_empty() { "saved with overwrite" } else { reason };
                    let version = record_version(
                        tx,
                        &existing,
                        &mut plan,
                        VersionMeta {
                            change_type: "modified",
                            summary,
                            author: &author,
                        },
                    )?;
                    tx.log_event(&existing.id, None, "saved", &format!("version {version}"), &author)?;
                    "new_version"
                };
                let row = plan_row(tx, &existing.id)?;
                let message = match outcome {
                    "unchanged" => format!(
                        "Plan `{}` unchanged: the content equals version {}",
                        row.id, row.current_version
                    ),
                    _ => format!("Plan `{}` saved as version {}", row.id, row.current_version),
                };
                Ok(SavePlanResponse {
                    plan: row.into(),
                    outcome: outcome.to_string(),
                    message,
                })
            }
            None => {
                // An id of a deleted plan (or none) gets a fresh one.
                let taken = !plan.id.is_empty() && tx.plan_by_id(&plan.id, true)?.is_some();
                if plan.id.is_empty() || taken {
                    plan.id = crate::ids::new_id("plan");
                }
                let now = now_rfc3339();
                plan.version = 1;
                if plan.created_at.is_empty() {
                    plan.created_at = now.clone();
                }
                plan.updated_at = now;
                let json = plan_json(&plan)?;
                let row = tx.insert_plan(
                    &NewPlan {
                        id: &plan.id,
                        name,
                        status: status::READY,
                        tags: tags.as_deref().unwrap_or_default(),
                        facts: facts(&plan),
                        plan_json: &json,
                        meta: VersionMeta {
                            change_type: "created",
                            summary: if reason.is_empty() { "saved" } else { reason },
                            author: &author,
                        },
                    },
                )
                .map_err(|err| match err {
                    StoreError::Conflict(_) => PlanStoreError::Conflict(format!(
                        "The name `{}` is taken",
                        name.unwrap_or_default()
                    )),
                    other => other.into(),
                })?;
                tx.log_event(&row.id, None, "saved", "version 1", &author)?;
                let message = format!("Plan `{}` saved as version 1", row.id);
                Ok(SavePlanResponse {
                    plan: row.into(),
                    outcome: "created".to_string(),
                    message,
                })
            }
        }
    })
}

/// A saved plan, named by its id or by its unique name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanRef {
    Id(String),
    Name(String),
}

/// Output of `load_plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadPlanResponse {
    pub summary: PlanSummary,
    pub plan: Plan,
}

/// Finds a live plan.
pub(crate) fn find_plan(conn: &dyn ReadTx, plan: &PlanRef) -> Result<PlanRow, PlanStoreError> {
    match plan {
        PlanRef::Id(id) => plan_row(conn, id),
        PlanRef::Name(name) => conn
            .plan_by_name(name)?
            .ok_or_else(|| PlanStoreError::PlanNotFound(name.to_string())),
    }
}

/// Loads a saved plan: its current version, or `version`.
pub fn load(
    store: &Store,
    plan: &PlanRef,
    version: Option<u32>,
) -> Result<LoadPlanResponse, PlanStoreError> {
    store.snapshot(|tx| {
        let row = find_plan(tx, plan)?;
        let plan = plan_version(tx, &row, version.unwrap_or(row.current_version))?;
        Ok(LoadPlanResponse {
            summary: row.into(),
            plan,
        })
    })
}

/// Which saved plans [`list`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// Only plans with this status (one of [`status::ALL`]).
    pub status: Option<String>,
    /// Only plans with every one of these tags.
    pub tags: Vec<String>,
    /// At most this many, most recently updated first.
    pub limit: usize,
    pub include_deleted: bool,
}

impl Default for Listing {
    fn default() -> Listing {
        Listing {
            status: None,
            tags: Vec::new(),
            limit: DEFAULT_LIST_LIMIT,
            include_deleted: false,
        }
    }
}

/// Output of `list_plans`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListPlansResponse {
    pub plans: Vec<PlanSummary>,
}

/// Lists saved plans (see [`Listing`]).
pub fn list(store: &Store, request: &Listing) -> Result<ListPlansResponse, PlanStoreError> {
    if let Some(wanted) = &request.status
        && !status::ALL.contains(&wanted.as_str())
    {
        return Err(invalid(
            "status",
            format!(
                "`{wanted}` is not a status; one of {}",
                status::ALL.join(", ")
            ),
        ));
    }
    let limit = request.limit;
    if limit == 0 || limit > MAX_LIST_LIMIT {
        return Err(invalid("limit", format!("must be 1 to {MAX_LIST_LIMIT}")));
    }
    let rows = store.snapshot(|tx| {
        tx.list_plans(&PlanFilter {
            status: request.status.as_deref(),
            tags: &request.tags,
            limit,
            include_deleted: request.include_deleted,
        })
    })?;
    Ok(ListPlansResponse {
        plans: rows.into_iter().map(PlanSummary::from).collect(),
    })
}

/// Output of `delete_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeletePlanResponse {
    pub plan_id: String,
    pub deleted: bool,
    pub message: String,
}

/// Deletes a plan softly (see the module docs); `author` is recorded in its history.
pub fn delete(
    store: &Store,
    plan_id: &str,
    author: Option<&str>,
) -> Result<DeletePlanResponse, PlanStoreError> {
    let author = author_of(author)?;
    store.transact(|tx| {
        let row = plan_row(tx, plan_id)?;
        tx.soft_delete(&row.id)?;
        tx.log_event(&row.id, None, "deleted", "", &author)?;
        Ok(DeletePlanResponse {
            plan_id: row.id.clone(),
            deleted: true,
            message: format!(
                "Plan `{}` deleted ({} version(s) kept in the store; a plan listing that includes deleted plans shows it)",
                row.id, row.current_version
            ),
        })
    })
}

/// Saves `response.plan` in `store` (`overwrite`: as the next version of its
/// plan) with `author` and `reason` in its history, and says so in `response.saved`: how
/// `create_plan`'s `auto_save` and `tollgate plan create|refine --save` keep what they made.
pub fn save_response(
    store: &Store,
    response: &mut PlanResponse,
    overwrite: bool,
    author: &str,
    reason: &str,
) -> Result<(), PlanStoreError> {
    let saved = save(
        store,
        response.plan.clone(),
        &SaveOptions {
            overwrite,
            author: Some(author.to_string()),
            reason: Some(reason.to_string()),
            ..Default::default()
        },
    )?;
    response.saved = Some(saved);
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A three-step plan: 1 → 2, 1 → 3.
    pub(crate) fn sample_plan() -> Value {
        serde_json::json!({
            "goal": "Add a cache",
            "scope": {"included": ["cache layer"], "excluded": [], "assumptions": [], "constraints": []},
            "risks": [{"issue": "stale data", "mitigation": "ttl", "likelihood": "medium"}],
            "steps": [
                {"step_number": 1, "id": "step_1", "title": "Design", "description": "Design the cache",
                 "files_to_create": [{"path": "src/cache.rs", "change_type": "create", "reason": "new"}]},
                {"step_number": 2, "id": "step_2", "title": "Implement", "depends_on": [1],
                 "files_to_modify": [{"path": "src/lib.rs", "reason": "wire"}]},
                {"step_number": 3, "id": "step_3", "title": "Test", "depends_on": [1]}
            ]
        })
    }

    /// Saves `plan` (JSON, as tests write it) as a new plan tagged `t1` by `tester`.
    pub(crate) fn save(store: &Store, plan: Value, name: Option<&str>) -> SavePlanResponse {
        let plan: Plan = serde_json::from_value(plan).expect("a plan");
        super::save(
            store,
            plan,
            &SaveOptions {
                name: name.map(str::to_string),
                tags: vec!["t1".into()],
                author: Some("tester".into()),
                ..SaveOptions::default()
            },
        )
        .unwrap()
    }
}
