//! `load_plan`: load a saved plan by plan_id or name, optionally a past version.

use tollgate::api::plan::{FrontEnd, LoadPlanRequest, load_plan};
use tollgate::plan::lifecycle::library::LoadPlanResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct LoadPlan;

impl Tool for LoadPlan {
    const NAME: &'static str = "load_plan";
    const TITLE: &'static str = "Load plan";
    const DESCRIPTION: &'static str = "Load a saved plan by id or name, optionally a past version.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = LoadPlanRequest;
    type Output = LoadPlanResponse;

    fn call(ctx: &ToolContext, input: LoadPlanRequest) -> Result<LoadPlanResponse, ToolError> {
        Ok(load_plan(&super::plan_store(ctx)?, &input, FrontEnd::Mcp)?)
    }
}
