//! `visualize_plan`: a Mermaid diagram of a plan (upstream's tool and output shape).

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use tollgate::api::plan::{VisualizePlanRequest, visualize_plan};
use tollgate::plan::VisualizePlanResponse;

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
        Ok(visualize_plan(&input)?)
    }
}
