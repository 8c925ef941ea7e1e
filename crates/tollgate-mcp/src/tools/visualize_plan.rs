//! `visualize_plan`: a Mermaid diagram of a plan (upstream's tool and output shape).

use tollgate::plan::{VisualizePlanRequest, VisualizePlanResponse, visualize_plan};

use super::create_plan::plan_error;
use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct VisualizePlan;

impl Tool for VisualizePlan {
    const NAME: &'static str = "visualize_plan";
    const TITLE: &'static str = "Visualize plan";
    const DESCRIPTION: &'static str = "Draw a plan as Mermaid: dependencies (critical path \
highlighted), architecture or gantt.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = VisualizePlanRequest;
    type Output = VisualizePlanResponse;

    fn call(
        _ctx: &ToolContext,
        input: VisualizePlanRequest,
    ) -> Result<VisualizePlanResponse, ToolError> {
        visualize_plan(&input).map_err(plan_error)
    }
}
