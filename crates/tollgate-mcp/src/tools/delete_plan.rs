//! `delete_plan`: delete a saved plan.

use tollgate::api::plan::{DeletePlanRequest, FrontEnd, delete_plan};
use tollgate::plan::lifecycle::library::DeletePlanResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct DeletePlan;

impl Tool for DeletePlan {
    const NAME: &'static str = "delete_plan";
    const TITLE: &'static str = "Delete plan";
    const DESCRIPTION: &'static str = "Soft-delete a saved plan: it leaves listings and frees its \
name; its versions stay in the store.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_DESTRUCTIVE;

    type Input = DeletePlanRequest;
    type Output = DeletePlanResponse;

    fn call(
        ctx: &ToolContext,
        mut input: DeletePlanRequest,
    ) -> Result<DeletePlanResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(delete_plan(
            &super::plan_store(ctx)?,
            &input,
            FrontEnd::Mcp,
        )?)
    }
}
