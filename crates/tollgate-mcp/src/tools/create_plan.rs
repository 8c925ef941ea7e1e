//! `create_plan`: a new implementation plan for a task (upstream's tool of that name), from the
//! configured model, the caller's own plan, or deterministically from the repository.

use tollgate::api::plan::{CreatePlanRequest, FrontEnd, create_plan};
use tollgate::plan::{PlanResponse, planning_model as planning_model_of};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CreatePlan;

impl Tool for CreatePlan {
    const NAME: &'static str = "create_plan";
    const TITLE: &'static str = "Create plan";
    const DESCRIPTION: &'static str = "Create an implementation plan for a task: steps with files, \
a validated dependency graph, risks, tests, acceptance criteria, Mermaid diagrams. Uses the \
configured model, else builds it deterministically; pass `plan` to validate your own. Start here \
when asked to plan work.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    type Input = CreatePlanRequest;
    type Output = PlanResponse;

    fn call(ctx: &ToolContext, input: CreatePlanRequest) -> Result<PlanResponse, ToolError> {
        let llm = planning_model(ctx)?;
        let store = crate::tools::workspace_settings(ctx)?.store;
        Ok(create_plan(
            ctx.workspace(),
            llm.as_ref(),
            input,
            FrontEnd::Mcp,
            &store,
        )?)
    }
}

/// The model the workspace's configuration names, or `None` (plans are then deterministic).
pub(super) fn planning_model(
    ctx: &ToolContext,
) -> Result<Option<tollgate::llm::LlmClient>, ToolError> {
    planning_model_of(
        ctx.workspace(),
        ctx.env().iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(|err| ToolError::new(err.code(), err.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::profile::Profiles;
    use crate::tool::{Catalog, Entry, ToolContext};

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(
            dir.to_path_buf(),
            Vec::new(),
            Catalog {
                profiles: Profiles::all(),
                registry: crate::registry::Registry::empty(),
            },
        )
    }

    fn call<T: crate::tool::Tool>(ctx: &ToolContext, args: Value) -> Result<Value, Value> {
        let Value::Object(args) = args else {
            panic!("arguments are an object")
        };
        Entry::of::<T>()
            .unwrap()
            .call(ctx, args)
            .map_err(|err| err.to_json())
    }

    #[test]
    fn plan_tools_create_refine_and_visualize_without_a_model() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/retry.rs"), "// retry backoff\n").unwrap();
        let ctx = ctx(dir.path());
        let created =
            call::<super::CreatePlan>(&ctx, json!({"task": "Add retry backoff"})).unwrap();
        assert_eq!(created["plan"]["generated_by"]["method"], "deterministic");
        assert!(
            created["markdown"]
                .as_str()
                .unwrap()
                .starts_with("# Plan: Add retry backoff")
        );
        assert_eq!(created["plan"]["steps"][1]["title"], "Update src/retry.rs");

        // Upstream passes plans as JSON text.
        let plan_text = created["plan"].to_string();
        let refined = call::<crate::tools::refine_plan::RefinePlan>(
            &ctx,
            json!({"current_plan": plan_text, "feedback": "Keep it small", "focus_steps": [2]}),
        )
        .unwrap();
        assert_eq!(refined["plan"]["version"], 2);
        assert_eq!(refined["plan"]["id"], created["plan"]["id"]);

        let drawn = call::<crate::tools::visualize_plan::VisualizePlan>(
            &ctx,
            json!({"plan": plan_text, "diagram_type": "gantt"}),
        )
        .unwrap();
        assert_eq!(drawn["diagram_type"], "gantt");
        assert_eq!(drawn["plan_version"], 1);
        assert!(drawn["mermaid"].as_str().unwrap().starts_with("gantt\n"));

        let cyclic = json!({"plan": {"steps": [
            {"step_number": 1, "title": "a", "depends_on": [2]},
            {"step_number": 2, "title": "b", "depends_on": [1]}]}});
        let err = call::<crate::tools::visualize_plan::VisualizePlan>(&ctx, cyclic).unwrap_err();
        assert_eq!(err["error"]["code"], "INVALID_INPUT");
        assert_eq!(err["error"]["details"]["field"], "plan");
        assert!(err["error"]["message"].as_str().unwrap().contains("cycle"));

        let err = call::<super::CreatePlan>(&ctx, json!({"task": "x", "bogus": 1})).unwrap_err();
        assert_eq!(err["error"]["code"], "INVALID_INPUT");
    }
}
