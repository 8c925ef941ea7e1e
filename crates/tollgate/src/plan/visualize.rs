//! `visualize_plan`: one Mermaid diagram of a plan (upstream's tool and output shape).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::generate::{PlanError, parse_plan_value};
use crate::plan::graph::link_steps;
use crate::plan::mermaid::{self, DiagramType};

/// Input of `visualize_plan`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VisualizePlanRequest {
    /// The plan: an object or its JSON text.
    pub plan: Value,
    /// Which diagram [default: dependencies].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagram_type: Option<DiagramType>,
}

/// Output of `visualize_plan`: `{diagram_type, mermaid, plan_id, plan_version}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VisualizePlanResponse {
    pub diagram_type: DiagramType,
    /// Mermaid source; every label is escaped.
    pub mermaid: String,
    pub plan_id: String,
    pub plan_version: u32,
}

/// Draws the requested diagram of `request.plan`, validating its step graph first (a cycle or
/// an unknown step is an error naming the steps).
pub fn visualize_plan(request: &VisualizePlanRequest) -> Result<VisualizePlanResponse, PlanError> {
    let mut plan = parse_plan_value(&request.plan)?;
    let graph = link_steps(&mut plan)?;
    let diagram_type = request.diagram_type.unwrap_or_default();
    Ok(VisualizePlanResponse {
        diagram_type,
        mermaid: mermaid::render(&plan, &graph, diagram_type),
        plan_id: plan.id,
        plan_version: plan.version,
    })
}
