//! `execute_plan`: carry out steps of a plan with the configured model, as diffs (preview) or
//! written into the workspace with the step states recorded (`apply_changes`).

use tollgate::api::plan::{ExecutePlanRequest, FrontEnd, execute_plan};
use tollgate::plan::lifecycle::execute::ExecutePlanResponse;

use super::create_plan::planning_model;
use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ExecutePlan;

impl Tool for ExecutePlan {
    const NAME: &'static str = "execute_plan";
    const TITLE: &'static str = "Execute plan";
    const DESCRIPTION: &'static str = "Carry out plan steps with the configured model and return \
each step's changes as unified diffs. Nothing is written unless apply_changes is true (then files \
are written with backups and step state recorded). Use after a plan is approved.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    // Calls a model and, with apply_changes, overwrites or deletes workspace files.
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };
    const LONG_RUNNING: bool = true;

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
        let workspace = ctx.workspace();
        let control = ctx.control();
        Ok(execute_plan(
            &store,
            workspace,
            llm.as_ref(),
            input,
            control,
            FrontEnd::Mcp,
        )?)
    }
}
