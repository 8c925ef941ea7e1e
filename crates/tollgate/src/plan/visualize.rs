//! `visualize_plan`: one Mermaid diagram of a plan (upstream's tool and output shape).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::plan::generate::PlanError;
use crate::plan::graph::link_steps;
use crate::plan::mermaid::{self, DiagramType};

/// Output of `visualize_plan`: `{diagram_type, mermaid, plan_id, plan_version}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VisualizePlanResponse {
    pub diagram_type: DiagramType,
    /// Mermaid source; every label is escaped.
    pub mermaid: String,
    pub plan_id: String,
    pub plan_version: u32,
}

/// Draws `diagram_type` of `plan`, validating its step graph first (a cycle or an unknown step
/// is an error naming the steps).
pub fn visualize(
    mut plan: Plan,
    diagram_type: DiagramType,
) -> Result<VisualizePlanResponse, PlanError> {
    let graph = link_steps(&mut plan)?;
    Ok(VisualizePlanResponse {
        diagram_type,
        mermaid: mermaid::render(&plan, &graph, diagram_type),
        plan_id: plan.id,
        plan_version: plan.version,
    })
}
