//! `refine_plan`: the next version of a plan from feedback, answers and focus steps (upstream's
//! tool of that name).

use tollgate::api::plan::{RefinePlanRequest, refine_plan};
use tollgate::plan::PlanResponse;

use super::create_plan::planning_model;
use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RefinePlan;

impl Tool for RefinePlan {
    const NAME: &'static str = "refine_plan";
    const TITLE: &'static str = "Refine plan";
    const DESCRIPTION: &'static str = "Make the next version of a plan from feedback, answers to \
its questions and focus steps (with the model when configured, else recorded on the plan). Save it \
with save_plan.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: false,
        open_world: true,
    };

    type Input = RefinePlanRequest;
    type Output = PlanResponse;

    fn call(ctx: &ToolContext, input: RefinePlanRequest) -> Result<PlanResponse, ToolError> {
        let llm = planning_model(ctx)?;
        Ok(refine_plan(llm.as_ref(), &input)?)
    }
}
