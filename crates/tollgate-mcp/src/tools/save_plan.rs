//! `save_plan`: save a plan (EnhancedPlanOutput, as an object or JSON text) to the workspace's plan store.

use tollgate::api::plan::{FrontEnd, SavePlanRequest, save_plan};
use tollgate::plan::lifecycle::library::SavePlanResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SavePlan;

impl Tool for SavePlan {
    const NAME: &'static str = "save_plan";
    const TITLE: &'static str = "Save plan";
    const DESCRIPTION: &'static str = "Save a plan (object or JSON text) to the workspace's plan \
store after validating its step graph; overwrite=true records a new version.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = SavePlanRequest;
    type Output = SavePlanResponse;

    fn call(ctx: &ToolContext, mut input: SavePlanRequest) -> Result<SavePlanResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(save_plan(&super::plan_store(ctx)?, input, FrontEnd::Mcp)?)
    }
}
