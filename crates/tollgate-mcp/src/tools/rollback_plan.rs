//! `rollback_plan`: make an old version of a saved plan current again.

use tollgate::api::lifecycle::{RollbackPlanRequest, rollback_plan};
use tollgate::plan::lifecycle::history::RollbackPlanResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RollbackPlan;

impl Tool for RollbackPlan {
    const NAME: &'static str = "rollback_plan";
    const TITLE: &'static str = "Roll back plan";
    const DESCRIPTION: &'static str = "Make an old version of a saved plan current again, recorded \
as a new version; nothing is deleted.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_DESTRUCTIVE;

    type Input = RollbackPlanRequest;
    type Output = RollbackPlanResponse;

    fn call(
        ctx: &ToolContext,
        mut input: RollbackPlanRequest,
    ) -> Result<RollbackPlanResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(rollback_plan(&super::plan_store(ctx)?, input)?)
    }
}
