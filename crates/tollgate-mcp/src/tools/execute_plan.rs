//! `execute_plan`: carry out steps of a plan with the configured model, as diffs (preview) or
//! written into the workspace with the step states recorded (`apply_changes`).

use tollgate::plan::execute::{
    ExecuteError, ExecutePlanRequest, ExecutePlanResponse, execute_plan,
};

use super::create_plan::planning_model;
use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ExecutePlan;

impl Tool for ExecutePlan {
    const NAME: &'static str = "execute_plan";
    const TITLE: &'static str = "Execute plan";
    const DESCRIPTION: &'static str = "Carry out steps of a plan (a saved plan's id, or the plan \
itself) with the configured model ([llm] in tollgate.toml; without one this fails with \
LLM_NOT_CONFIGURED). mode: single_step (step_number, else the first ready step; a step whose \
dependencies are not done is refused with CONFLICT naming them), all_ready (the steps ready now), \
full_plan (ready steps in execution order until done, a failure with stop_on_failure, or \
max_steps). Each step's file changes are returned as unified diffs. By default nothing is written \
and no step state is recorded; apply_changes: true writes them (inside the workspace only, all or \
nothing per step, with backups under .tollgate/backups) and records the step as completed or \
failed, so the next call continues with the steps that became ready (an inline plan is saved \
first). Reports progress per step and stops between steps when cancelled.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    // Calls a model and, with apply_changes, overwrites or deletes workspace files.
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    type Input = ExecutePlanRequest;
    type Output = ExecutePlanResponse;

    fn call(
        ctx: &ToolContext,
        mut input: ExecutePlanRequest,
    ) -> Result<ExecutePlanResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        let llm = planning_model(ctx)?;
        let store = super::plan_store(ctx)?;
        execute_plan(&store, ctx.workspace(), llm.as_ref(), &input, ctx.control())
            .map_err(execute_error)
    }
}

fn execute_error(err: ExecuteError) -> ToolError {
    ToolError::new(err.code(), err.to_string()).with_field(err.field())
}
