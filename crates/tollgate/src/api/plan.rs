//! Saved plans on the wire: `save_plan`, `load_plan`, `list_plans` and `delete_plan`, and how a
//! planning error reads on each front end.
//!
//! A plan arrives as JSON (an object, or its text: upstream passes strings) and is parsed here,
//! once; the domain (`plan::lifecycle::library`) takes a typed [`Plan`].

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ApiError;
use crate::control::Control;
use crate::llm::LlmClient;
use crate::plan::Plan;
use crate::plan::lifecycle::execute::{
    self, DEFAULT_MAX_STEPS, ExecuteError, ExecuteMode, ExecutePlanResponse, Execution,
    MAX_CONTEXT_CHARS, MAX_STEPS_LIMIT, PlanSource,
};
use crate::plan::lifecycle::library::{
    self, DeletePlanResponse, ListPlansResponse, Listing, LoadPlanResponse, MAX_LIST_LIMIT,
    PlanRef, PlanStoreError, SaveOptions, SavePlanResponse,
};
use crate::plan::{
    DiagramType, PlanError, PlanResponse, PlanTask, Refinement, StepNumber, VisualizePlanResponse,
};
use crate::store::Store;

/// The front end an error message is for: each points its user at its own commands.
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

/// A plan-store error for `front_end`'s user: a missing plan names that front end's way to list
/// the saved ones.
pub fn plan_store_error(err: PlanStoreError, front_end: FrontEnd) -> ApiError {
    let message = match &err {
        PlanStoreError::PlanNotFound(_) => {
            format!("{err} ({} shows the saved plans)", front_end.list_plans())
        }
        _ => err.to_string(),
    };
    with_field(ApiError::new(err.code(), message), err.field())
}

/// A planning error (create, refine, visualize): the same words on every front end (none of
/// them names a tool or a command).
pub fn plan_error(err: PlanError) -> ApiError {
    with_field(ApiError::new(err.code(), err.to_string()), err.field())
}

/// An `execute_plan` error for `front_end`'s user.
pub fn execute_error(err: ExecuteError, front_end: FrontEnd) -> ApiError {
    match err {
        ExecuteError::Plan(err) => plan_store_error(err, front_end),
        other => with_field(
            ApiError::new(other.code(), other.to_string()),
            other.field(),
        ),
    }
}

fn with_field(err: ApiError, field: Option<&str>) -> ApiError {
    match field {
        Some(field) => err.at(field),
        None => err,
    }
}

/// A plan argument (`field`): the plan as a JSON object, or as its JSON text.
pub fn parse_plan(value: &Value, field: &str) -> Result<Plan, ApiError> {
    let parsed = match value {
        Value::String(text) => serde_json::from_str::<Plan>(text),
        Value::Object(_) => serde_json::from_value::<Plan>(value.clone()),
        _ => return Err(invalid(field, "expected a plan object or its JSON text")),
    };
    parsed.map_err(|err| invalid(field, format!("not a plan: {err}")))
}

/// The longest task or feedback accepted, in characters.
pub const MAX_TASK_CHARS: usize = 20_000;

/// `INVALID_INPUT` for `field`, in the planning errors' wording.
fn invalid(field: &str, message: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(field, format!("invalid `{field}`: {message}"))
}

/// Input of `create_plan` (upstream's parameters and defaults, plus `plan` for an agent's own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePlanRequest {
    /// What to plan, in plain words. Paths it names (`src/a.rs`) are always in the plan.
    pub task: String,
    /// Repository files used as context, 1–50 [default: 10].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_files: Option<usize>,
    /// Tokens of file content a model sees, 1000–100000 [default: 12000].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_token_budget: Option<usize>,
    /// Store dependency, gantt and architecture diagrams in the plan [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_diagrams: Option<bool>,
    /// Only the minimum viable steps: no documentation step, no nice-to-have features
    /// [default: false].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mvp_only: Option<bool>,
    /// Only files matching these globs are considered (a directory matches its contents).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_paths: Vec<String>,
    /// Files matching these globs are never considered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_paths: Vec<String>,
    /// A plan written by the caller (object or JSON text): validated and enriched instead of
    /// generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    /// Save the plan in the workspace's plan store (as `save_plan` would) [default: false;
    /// upstream saves by default, Tollgate leaves that to the caller so creating has no side
    /// effect unless asked].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_save: Option<bool>,
}

impl CreatePlanRequest {
    /// A request for `task` with every option at its default.
    pub fn new(task: impl Into<String>) -> CreatePlanRequest {
        CreatePlanRequest {
            task: task.into(),
            ..CreatePlanRequest::default()
        }
    }

    /// The request checked against its bounds, with defaults filled in.
    pub fn parse(self) -> Result<PlanTask, ApiError> {
        let plan = self
            .plan
            .as_ref()
            .map(|value| parse_plan(value, "plan"))
            .transpose()?;
        let task = self.task.trim();
        if task.is_empty() && plan.is_none() {
            return Err(invalid("task", "must not be empty"));
        }
        if task.chars().count() > MAX_TASK_CHARS {
            return Err(invalid(
                "task",
                format!("longer than {MAX_TASK_CHARS} characters"),
            ));
        }
        let defaults = PlanTask::new("");
        let max_context_files = self.max_context_files.unwrap_or(defaults.max_context_files);
        if !(1..=50).contains(&max_context_files) {
            return Err(invalid("max_context_files", "must be between 1 and 50"));
        }
        let context_token_budget = self
            .context_token_budget
            .unwrap_or(defaults.context_token_budget);
        if !(1000..=100_000).contains(&context_token_budget) {
            return Err(invalid(
                "context_token_budget",
                "must be between 1000 and 100000",
            ));
        }
        Ok(PlanTask {
            task: task.to_string(),
            max_context_files,
            context_token_budget,
            diagrams: self.generate_diagrams.unwrap_or(defaults.diagrams),
            mvp_only: self.mvp_only.unwrap_or(defaults.mvp_only),
            include_paths: self.include_paths,
            exclude_paths: self.exclude_paths,
            plan,
        })
    }
}

/// `create_plan` in the workspace `root`, with the configured model if any; `auto_save` saves
/// it in the store `store` configures (opened only then).
pub fn create_plan(
    root: &Path,
    llm: Option<&LlmClient>,
    request: CreatePlanRequest,
    front_end: FrontEnd,
    store: &crate::config::RawStore,
) -> Result<PlanResponse, ApiError> {
    let auto_save = request.auto_save.unwrap_or(false);
    let mut response = crate::plan::create(root, llm, request.parse()?).map_err(plan_error)?;
    if auto_save {
        let saved = crate::store::Store::open_configured(root, store)
            .map_err(PlanStoreError::from)
            .and_then(|store| {
                library::save_response(&store, &mut response, false, "create_plan", "created")
            });
        saved.map_err(|err| plan_store_error(err, front_end))?;
    }
    Ok(response)
}

/// Input of `refine_plan` (upstream's parameters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefinePlanRequest {
    /// The plan to refine: an object or its JSON text.
    pub current_plan: Value,
    /// What to change, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Answers to the plan's questions: an object `{question: answer}` or its JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarifications: Option<Value>,
    /// Step numbers the refinement is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus_steps: Vec<StepNumber>,
    /// Store regenerated diagrams in the plan [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_diagrams: Option<bool>,
}

impl RefinePlanRequest {
    /// The refinement without its plan, checked against its bounds.
    pub fn refinement(&self) -> Result<Refinement, ApiError> {
        refinement_of(
            self.feedback.as_deref(),
            self.clarifications.as_ref(),
            &self.focus_steps,
            self.generate_diagrams,
        )
    }
}

/// A refinement from `refine_plan`'s options (for front ends that hold the plan already):
/// blank feedback is none, clarifications are parsed, bounds checked, defaults filled in.
pub fn refinement_of(
    feedback: Option<&str>,
    clarifications: Option<&Value>,
    focus_steps: &[StepNumber],
    generate_diagrams: Option<bool>,
) -> Result<Refinement, ApiError> {
    let feedback = feedback.map(str::trim).filter(|f| !f.is_empty());
    if feedback.is_some_and(|f| f.chars().count() > MAX_TASK_CHARS) {
        return Err(invalid(
            "feedback",
            format!("longer than {MAX_TASK_CHARS} characters"),
        ));
    }
    Ok(Refinement {
        feedback: feedback.map(str::to_string),
        clarifications: parse_clarifications(clarifications)?,
        focus_steps: focus_steps.to_vec(),
        diagrams: generate_diagrams.unwrap_or(true),
    })
}

/// `refine_plan`: the next version of `request.current_plan`.
pub fn refine_plan(
    llm: Option<&LlmClient>,
    request: &RefinePlanRequest,
) -> Result<PlanResponse, ApiError> {
    let current = parse_plan(&request.current_plan, "current_plan")?;
    let refinement = request.refinement()?;
    crate::plan::refine(llm, current, &refinement).map_err(plan_error)
}

/// `{question: answer}` as an object or its JSON text; non-string answers are kept as JSON.
fn parse_clarifications(value: Option<&Value>) -> Result<BTreeMap<String, String>, ApiError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(BTreeMap::new()),
        Some(Value::String(text)) => serde_json::from_str::<Value>(text)
            .map_err(|err| invalid("clarifications", format!("not a JSON object: {err}")))?,
        Some(other) => other.clone(),
    };
    let Value::Object(map) = object else {
        return Err(invalid(
            "clarifications",
            "expected an object {question: answer}",
        ));
    };
    Ok(map
        .into_iter()
        .map(|(question, answer)| {
            let answer = match answer {
                Value::String(text) => text,
                other => other.to_string(),
            };
            (question, answer)
        })
        .collect())
}

/// Input of `visualize_plan`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VisualizePlanRequest {
    /// The plan: an object or its JSON text.
    pub plan: Value,
    /// Which diagram [default: dependencies].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagram_type: Option<DiagramType>,
}

/// `visualize_plan`: one Mermaid diagram of the plan.
pub fn visualize_plan(request: &VisualizePlanRequest) -> Result<VisualizePlanResponse, ApiError> {
    let plan = parse_plan(&request.plan, "plan")?;
    crate::plan::visualize(plan, request.diagram_type.unwrap_or_default()).map_err(plan_error)
}

/// Input of `execute_plan` (upstream's parameters and defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecutePlanRequest {
    /// The plan: an object, its JSON text, or a saved plan's id (`plan_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    /// A saved plan's id, instead of `plan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// `single_step`, `all_ready` or `full_plan` [default: single_step].
    #[serde(default)]
    pub mode: ExecuteMode,
    /// The step for `single_step` [default: the first ready step]. A step whose dependencies
    /// are not done is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub step_number: Option<StepNumber>,
    /// Write the changes into the workspace and record each step's state [default: false:
    /// preview the diffs only, record nothing].
    #[serde(default)]
    pub apply_changes: bool,
    /// The most steps this call runs, 1–50 [default: 5].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    pub max_steps: Option<usize>,
    /// Stop at the first step that fails [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_failure: Option<bool>,
    /// More instructions or facts for the model (treated as data, not as commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_CONTEXT_CHARS))]
    pub additional_context: Option<String>,
    /// Who is acting, recorded in the plan's history (default: the front end's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl ExecutePlanRequest {
    /// The call checked against its bounds, with defaults filled in.
    pub fn parse(self) -> Result<Execution, ApiError> {
        let max_steps = self.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
        if !(1..=MAX_STEPS_LIMIT).contains(&max_steps) {
            return Err(invalid(
                "max_steps",
                format!("must be between 1 and {MAX_STEPS_LIMIT}"),
            ));
        }
        if self.step_number.is_some() && self.mode != ExecuteMode::SingleStep {
            return Err(invalid(
                "step_number",
                "only single_step runs a chosen step; all_ready and full_plan choose the ready ones",
            ));
        }
        let additional_context = self.additional_context.unwrap_or_default();
        if additional_context.chars().count() > MAX_CONTEXT_CHARS {
            return Err(invalid(
                "additional_context",
                format!("longer than {MAX_CONTEXT_CHARS} characters"),
            ));
        }
        let saved = |text: &str| {
            let text = text.trim();
            if text.is_empty() {
                Err(invalid("plan_id", "must not be empty"))
            } else {
                Ok(PlanSource::Saved(text.to_string()))
            }
        };
        let plan = match (&self.plan, &self.plan_id) {
            (Some(_), Some(_)) => return Err(invalid("plan", "give plan or plan_id, not both")),
            (None, None) => {
                return Err(invalid(
                    "plan",
                    "give the plan (object, JSON text or saved id) or plan_id",
                ));
            }
            (None, Some(plan_id)) => saved(plan_id)?,
            // Upstream accepts a plan id where the plan goes; JSON text always starts with `{`.
            (Some(Value::String(text)), None) if !text.trim_start().starts_with('{') => {
                saved(text)?
            }
            (Some(value), None) => PlanSource::Inline(Box::new(parse_plan(value, "plan")?)),
        };
        Ok(Execution {
            plan,
            mode: self.mode,
            step_number: self.step_number,
            apply_changes: self.apply_changes,
            max_steps,
            stop_on_failure: self.stop_on_failure.unwrap_or(true),
            additional_context,
            author: self.author,
        })
    }
}

/// `execute_plan` (see the `plan::lifecycle::execute` module docs); `llm` is the configured model.
pub fn execute_plan(
    store: &Store,
    workspace: &Path,
    llm: Option<&LlmClient>,
    request: ExecutePlanRequest,
    control: &Control,
    front_end: FrontEnd,
) -> Result<ExecutePlanResponse, ApiError> {
    let run = request.parse()?;
    execute::execute(store, workspace, llm, run, control)
        .map_err(|err| execute_error(err, front_end))
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

/// `save_plan`: parses the plan and saves it (see [`SavePlanRequest`]).
pub fn save_plan(
    store: &Store,
    request: SavePlanRequest,
    front_end: FrontEnd,
) -> Result<SavePlanResponse, ApiError> {
    let plan = parse_plan(&request.plan, "plan")?;
    let options = SaveOptions {
        name: request.name,
        tags: request.tags,
        overwrite: request.overwrite,
        author: request.author,
        reason: request.reason,
    };
    library::save(store, plan, &options).map_err(|err| plan_store_error(err, front_end))
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

impl LoadPlanRequest {
    /// The plan the request names: by id when given, else by name.
    pub fn plan_ref(&self) -> Result<PlanRef, ApiError> {
        match (&self.plan_id, &self.name) {
            (Some(id), _) => Ok(PlanRef::Id(id.clone())),
            (None, Some(name)) => Ok(PlanRef::Name(name.clone())),
            (None, None) => Err(invalid("plan_id", "give plan_id or name")),
        }
    }
}

/// `load_plan`.
pub fn load_plan(
    store: &Store,
    request: &LoadPlanRequest,
    front_end: FrontEnd,
) -> Result<LoadPlanResponse, ApiError> {
    let plan = request.plan_ref()?;
    library::load(store, &plan, request.version).map_err(|err| plan_store_error(err, front_end))
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

/// `list_plans`.
pub fn list_plans(
    store: &Store,
    request: ListPlansRequest,
    front_end: FrontEnd,
) -> Result<ListPlansResponse, ApiError> {
    let listing = Listing {
        status: request.status,
        tags: request.tags,
        limit: request.limit.unwrap_or(library::DEFAULT_LIST_LIMIT),
        include_deleted: request.include_deleted,
    };
    library::list(store, &listing).map_err(|err| plan_store_error(err, front_end))
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

/// `delete_plan`.
pub fn delete_plan(
    store: &Store,
    request: &DeletePlanRequest,
    front_end: FrontEnd,
) -> Result<DeletePlanResponse, ApiError> {
    library::delete(store, &request.plan_id, request.author.as_deref())
        .map_err(|err| plan_store_error(err, front_end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use crate::plan::lifecycle::library::tests::{sample_plan, save};

    const CLI: FrontEnd = FrontEnd::Cli;

    fn request(plan: Value) -> SavePlanRequest {
        SavePlanRequest {
            plan,
            name: None,
            tags: vec![],
            overwrite: false,
            author: None,
            reason: None,
        }
    }

    crate::backend_tests! {
    fn save_load_list_delete(store) {
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
            CLI,
        )
        .unwrap();
        assert_eq!(by_name.plan.id, id);
        assert_eq!(
            by_name.plan.steps[0].blocks,
            vec![2, 3],
            "the graph is linked on save"
        );

        // Re-saving without overwrite is refused; with overwrite and equal content, nothing is recorded.
        let mut again = request(serde_json::to_value(&by_name.plan).unwrap());
        let err = save_plan(&store, again.clone(), CLI).unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict);
        again.overwrite = true;
        assert_eq!(
            save_plan(&store, again.clone(), CLI).unwrap().outcome,
            "unchanged"
        );
        // Upstream passes the plan as JSON text.
        let mut changed = by_name.plan.clone();
        changed.goal = "Add a faster cache".into();
        again.plan = Value::String(serde_json::to_string(&changed).unwrap());
        let second = save_plan(&store, again, CLI).unwrap();
        assert_eq!(
            (second.outcome.as_str(), second.plan.version),
            ("new_version", 2)
        );
        assert_eq!(second.plan.tags, vec!["t1".to_string()], "tags kept");

        // A cycle is refused and names its steps; nothing changes.
        let mut cyclic = sample_plan();
        cyclic["steps"][0]["depends_on"] = serde_json::json!([2]);
        let err = save_plan(&store, request(cyclic), CLI).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert_eq!(err.field.as_deref(), Some("plan"));
        assert!(err.message.contains("cycle"), "{err}");
        // Not a plan at all: the field is named.
        let err = save_plan(&store, request(Value::from(3)), CLI).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("plan"));

        let other = save(&store, sample_plan(), None);
        let tagged = ListPlansRequest {
            tags: vec!["t1".into()],
            ..Default::default()
        };
        assert_eq!(list_plans(&store, tagged, CLI).unwrap().plans.len(), 2);
        let approved = ListPlansRequest {
            status: Some("approved".into()),
            ..Default::default()
        };
        assert!(list_plans(&store, approved, CLI).unwrap().plans.is_empty());
        let bogus = ListPlansRequest {
            status: Some("bogus".into()),
            ..Default::default()
        };
        let err = list_plans(&store, bogus, CLI).unwrap_err();
        assert_eq!(
            (err.code, err.field.as_deref()),
            (ErrorCode::InvalidInput, Some("status"))
        );

        let deleted = DeletePlanRequest {
            plan_id: id.clone(),
            author: None,
        };
        delete_plan(&store, &deleted, CLI).unwrap();
        let listed = list_plans(&store, ListPlansRequest::default(), CLI).unwrap();
        let ids: Vec<&str> = listed.plans.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, [other.plan.id.as_str()]);
        let gone = LoadPlanRequest {
            plan_id: Some(id.clone()),
            ..Default::default()
        };
        let err = load_plan(&store, &gone, CLI).unwrap_err();
        assert_eq!(err.code, ErrorCode::PlanNotFound);
        assert!(
            err.message
                .ends_with("(`tollgate plan list` shows the saved plans)"),
            "{err}"
        );
        let err = load_plan(&store, &gone, FrontEnd::Mcp).unwrap_err();
        assert!(err.message.contains("(list_plans shows"), "{err}");
        let with_deleted = ListPlansRequest {
            include_deleted: true,
            ..Default::default()
        };
        assert_eq!(
            list_plans(&store, with_deleted, CLI).unwrap().plans.len(),
            2
        );
        // The name is free again.
        assert_eq!(
            save(&store, sample_plan(), Some("cache")).outcome,
            "created"
        );
        // Neither id nor name.
        let err = load_plan(&store, &LoadPlanRequest::default(), CLI).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("plan_id"));
    }
    }
}
