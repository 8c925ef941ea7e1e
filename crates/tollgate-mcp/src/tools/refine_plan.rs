//! `refine_plan`: the next version of a plan from feedback, answers and focus steps (upstream's
//! tool of that name).

use tollgate::plan::{PlanResponse, RefinePlanRequest, refine_plan};

use super::create_plan::{plan_error, planning_model};
use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RefinePlan;

impl Tool for RefinePlan {
    const NAME: &'static str = "refine_plan";
    const TITLE: &'static str = "Refine plan";
    const DESCRIPTION: &'static str = "Refine a plan into its next version (same id, version + 1) \
from feedback, answers to its questions_for_clarification (clarifications: {question: answer}) \
and focus_steps (step numbers). With a model configured the model rewrites the plan, keeping \
step numbers, and the result is validated like a new plan; without one the feedback and answers \
are recorded on the plan (constraints, assumptions, notes on the focus steps) and the steps are \
left as they were. current_plan may be the plan object or its JSON text. Returns the plan and a \
Markdown rendering; save it with save_plan (overwrite) to record the version.";
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
        refine_plan(llm.as_ref(), &input).map_err(plan_error)
    }
}
