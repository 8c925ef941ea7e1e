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

use super::apply::ApplyError;
use super::graph::{GraphError, link_steps};
use super::model::{Plan, StepNumber};
use crate::store::plans::{self as sql, NewPlan, PlanFacts, PlanFilter, PlanRow, VersionMeta};
use crate::store::{Store, StoreError, now_rfc3339};

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
    /// [`PlanStoreError::message`] adds how the user lists the saved plans.
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

/// The front end a message is for: each points the user at its own commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    Cli,
    Mcp,
}

impl FrontEnd {
    /// How this front end's user lists the saved plans.
    pub fn list_plans(self) -> &'static str {
        match self {
            FrontEnd::Cli => "`tollgate plan list`",
            FrontEnd::Mcp => "list_plans",
        }
    }
}

impl PlanStoreError {
    /// The message for `front_end`'s user: a missing plan names that front end's way to list
    /// the saved ones.
    pub fn message(&self, front_end: FrontEnd) -> String {
        match self {
            PlanStoreError::PlanNotFound(_) => {
                format!("{self} ({} shows the saved plans)", front_end.list_plans())
            }
            _ => self.to_string(),
        }
    }

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

/// A plan argument: the plan as a JSON object, or as JSON text (upstream passes a string).
pub fn parse_plan_arg(value: &Value) -> Result<Plan, PlanStoreError> {
    let parsed = match value {
        Value::String(text) => serde_json::from_str::<Plan>(text),
        Value::Object(_) => serde_json::from_value::<Plan>(value.clone()),
        _ => return Err(invalid("plan", "expected a plan object or its JSON text")),
    };
    parsed.map_err(|err| invalid("plan", format!("not a plan: {err}")))
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
pub(crate) fn plan_row(
    conn: &rusqlite::Connection,
    plan_id: &str,
) -> Result<PlanRow, PlanStoreError> {
    sql::plan_by_id(conn, plan_id, false)?
        .ok_or_else(|| PlanStoreError::PlanNotFound(plan_id.to_string()))
}

/// Version `version` of a plan, parsed.
pub(crate) fn plan_version(
    conn: &rusqlite::Connection,
    row: &PlanRow,
    version: u32,
) -> Result<Plan, PlanStoreError> {
    let stored =
        sql::version(conn, &row.id, version)?.ok_or_else(|| PlanStoreError::VersionNotFound {
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
    conn: &rusqlite::Connection,
    plan_id: &str,
) -> Result<(PlanRow, Plan), PlanStoreError> {
    let row = plan_row(conn, plan_id)?;
    let plan = plan_version(conn, &row, row.current_version)?;
    Ok((row, plan))
}

/// Records `plan` as the next version of the saved plan `row` (validated, with its version
/// fields set), and voids an approval of the previous content. Returns the new version.
pub(crate) fn record_version(
    conn: &rusqlite::Connection,
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
    let version = sql::append_version(conn, &row.id, facts(plan), &plan_json(plan)?, meta)?;
    if row.status == status::APPROVED {
        sql::set_status(conn, &row.id, status::READY)?;
        sql::log_event(
            conn,
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

/// Input of `save_plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SavePlanRequest {
    /// The plan (upstream `EnhancedPlanOutput`), as an object or as its JSON text. It is
    /// validated (unknown step references and cycles are refused) and its dependency graph
    /// recomputed before saving.
    pub plan: Value,
    /// A unique name to load the plan by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub name: Option<String>,
    /// Tags to filter listings by.
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub tags: Vec<String>,
    /// When the plan (its id, else its name) is already saved: `true` records this content as
    /// its next version, `false` (default) refuses.
    #[serde(default)]
    pub overwrite: bool,
    /// Who is saving, recorded in the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Why, recorded in the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// Saves a plan (see [`SavePlanRequest`]).
pub fn save_plan(
    store: &Store,
    request: &SavePlanRequest,
) -> Result<SavePlanResponse, PlanStoreError> {
    let mut plan = parse_plan_arg(&request.plan)?;
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
    store.write(|tx| {
        let by_id = if plan.id.is_empty() {
            None
        } else {
            sql::plan_by_id(tx, &plan.id, false)?
        };
        let by_name = match name {
            Some(name) => sql::plan_by_name(tx, name)?,
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
                sql::set_name_and_tags(tx, &existing.id, new_name, &new_tags)?;
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
                    sql::log_event(tx, &existing.id, None, "saved", &format!("version {version}"), &author)?;
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
                let taken = !plan.id.is_empty() && sql::plan_by_id(tx, &plan.id, true)?.is_some();
                if plan.id.is_empty() || taken {
                    plan.id = sql::new_id(tx, "plan")?;
                }
                let now = now_rfc3339();
                plan.version = 1;
                if plan.created_at.is_empty() {
                    plan.created_at = now.clone();
                }
                plan.updated_at = now;
                let json = plan_json(&plan)?;
                let row = sql::insert_plan(
                    tx,
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
                    StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                        if e.code == rusqlite::ErrorCode::ConstraintViolation =>
                    {
                        PlanStoreError::Conflict(format!(
                            "The name `{}` is taken",
                            name.unwrap_or_default()
                        ))
                    }
                    other => other.into(),
                })?;
                sql::log_event(tx, &row.id, None, "saved", "version 1", &author)?;
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

/// Input of `load_plan`: `plan_id` or `name` (one of them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadPlanRequest {
    /// The saved plan's id (`plan_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// The plan's unique name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A past version instead of the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub version: Option<u32>,
}

/// Output of `load_plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadPlanResponse {
    pub summary: PlanSummary,
    pub plan: Plan,
}

/// Finds a live plan by id, else by name.
pub(crate) fn find_plan(
    conn: &rusqlite::Connection,
    plan_id: Option<&str>,
    name: Option<&str>,
) -> Result<PlanRow, PlanStoreError> {
    match (plan_id, name) {
        (Some(id), _) => plan_row(conn, id),
        (None, Some(name)) => sql::plan_by_name(conn, name)?
            .ok_or_else(|| PlanStoreError::PlanNotFound(name.to_string())),
        (None, None) => Err(invalid("plan_id", "give plan_id or name")),
    }
}

/// Loads a saved plan (see [`LoadPlanRequest`]).
pub fn load_plan(
    store: &Store,
    request: &LoadPlanRequest,
) -> Result<LoadPlanResponse, PlanStoreError> {
    store.read(|tx| {
        let row = find_plan(tx, request.plan_id.as_deref(), request.name.as_deref())?;
        let plan = plan_version(tx, &row, request.version.unwrap_or(row.current_version))?;
        Ok(LoadPlanResponse {
            summary: row.into(),
            plan,
        })
    })
}

/// Input of `list_plans`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPlansRequest {
    /// Only plans with this status: `ready`, `approved`, `executing`, `completed`, `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Only plans with every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// At most this many (default 50, at most 1000), most recently updated first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_LIST_LIMIT))]
    pub limit: Option<usize>,
    /// Include deleted plans. Default false.
    #[serde(default)]
    pub include_deleted: bool,
}

/// Output of `list_plans`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListPlansResponse {
    pub plans: Vec<PlanSummary>,
}

/// Lists saved plans (see [`ListPlansRequest`]).
pub fn list_plans(
    store: &Store,
    request: &ListPlansRequest,
) -> Result<ListPlansResponse, PlanStoreError> {
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
    let limit = request.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if limit == 0 || limit > MAX_LIST_LIMIT {
        return Err(invalid("limit", format!("must be 1 to {MAX_LIST_LIMIT}")));
    }
    let rows = store.read(|tx| {
        sql::list_plans(
            tx,
            &PlanFilter {
                status: request.status.as_deref(),
                tags: &request.tags,
                limit,
                include_deleted: request.include_deleted,
            },
        )
    })?;
    Ok(ListPlansResponse {
        plans: rows.into_iter().map(PlanSummary::from).collect(),
    })
}

/// Input of `delete_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeletePlanRequest {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// Who is acting, recorded in the history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// Output of `delete_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeletePlanResponse {
    pub plan_id: String,
    pub deleted: bool,
    pub message: String,
}

/// Deletes a plan softly (see the module docs).
pub fn delete_plan(
    store: &Store,
    request: &DeletePlanRequest,
) -> Result<DeletePlanResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    store.write(|tx| {
        let row = plan_row(tx, &request.plan_id)?;
        sql::soft_delete(tx, &row.id)?;
        sql::log_event(tx, &row.id, None, "deleted", "", &author)?;
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

    pub(crate) fn save(store: &Store, plan: Value, name: Option<&str>) -> SavePlanResponse {
        save_plan(
            store,
            &SavePlanRequest {
                plan,
                name: name.map(str::to_string),
                tags: vec!["t1".into()],
                overwrite: false,
                author: Some("tester".into()),
                reason: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn save_load_list_delete() {
        let store = Store::open_in_memory().unwrap();
        let saved = save(&store, sample_plan(), Some("cache"));
        assert_eq!(saved.outcome, "created");
        assert_eq!(saved.plan.version, 1);
        assert_eq!(saved.plan.step_count, 3);
        let id = saved.plan.id.clone();
        assert!(id.starts_with("plan_"), "{id}");

        let by_name = load_plan(
            &store,
            &LoadPlanRequest {
                name: Some("cache".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(by_name.plan.id, id);
        assert_eq!(
            by_name.plan.steps[0].blocks,
            vec![2, 3],
            "the graph is linked on save"
        );

        // Re-saving without overwrite is refused; with overwrite and equal content, nothing is recorded.
        let mut again = SavePlanRequest {
            plan: serde_json::to_value(&by_name.plan).unwrap(),
            name: None,
            tags: vec![],
            overwrite: false,
            author: None,
            reason: None,
        };
        assert_eq!(save_plan(&store, &again).unwrap_err().code(), "CONFLICT");
        again.overwrite = true;
        assert_eq!(save_plan(&store, &again).unwrap().outcome, "unchanged");
        let mut changed = by_name.plan.clone();
        changed.goal = "Add a faster cache".into();
        again.plan = Value::String(serde_json::to_string(&changed).unwrap());
        let second = save_plan(&store, &again).unwrap();
        assert_eq!(
            (second.outcome.as_str(), second.plan.version),
            ("new_version", 2)
        );
        assert_eq!(second.plan.tags, vec!["t1".to_string()], "tags kept");

        // A cycle is refused and names its steps; nothing changes.
        let mut cyclic = sample_plan();
        cyclic["steps"][0]["depends_on"] = serde_json::json!([2]);
        let err = save_plan(
            &store,
            &SavePlanRequest {
                plan: cyclic,
                name: None,
                tags: vec![],
                overwrite: false,
                author: None,
                reason: None,
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("cycle"), "{err}");

        let other = save(&store, sample_plan(), None);
        let listed = list_plans(
            &store,
            &ListPlansRequest {
                tags: vec!["t1".into()],
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(listed.plans.len(), 2);
        let ready = list_plans(
            &store,
            &ListPlansRequest {
                status: Some("approved".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(ready.plans.is_empty());
        assert_eq!(
            list_plans(
                &store,
                &ListPlansRequest {
                    status: Some("bogus".into()),
                    ..Default::default()
                }
            )
            .unwrap_err()
            .code(),
            "INVALID_INPUT"
        );

        delete_plan(
            &store,
            &DeletePlanRequest {
                plan_id: id.clone(),
                author: None,
            },
        )
        .unwrap();
        let listed = list_plans(&store, &ListPlansRequest::default()).unwrap();
        assert_eq!(
            listed
                .plans
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>(),
            [other.plan.id.as_str()]
        );
        let err = load_plan(
            &store,
            &LoadPlanRequest {
                plan_id: Some(id.clone()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "PLAN_NOT_FOUND");
        let all = list_plans(
            &store,
            &ListPlansRequest {
                include_deleted: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(all.plans.len(), 2);
        // The name is free again.
        assert_eq!(
            save(&store, sample_plan(), Some("cache")).outcome,
            "created"
        );
    }
}
