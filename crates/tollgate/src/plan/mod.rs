//! Implementation plans: the model (upstream's `EnhancedPlanOutput`), the step graph (a
//! petgraph DAG: validation, execution order, critical path, parallel groups, ready steps) and
//! its Mermaid diagrams.
//!
//! A plan's steps refer to each other by `step_number`. [`link_steps`] validates a plan and
//! rewrites everything derived from its graph; [`StepGraph`] answers scheduling questions for
//! the lifecycle code (`StepGraph::readiness` given [`StepOutcomes`]).

pub use generate::{CreatePlanRequest, PlanError, PlanResponse, create_plan};
pub use graph::{
    BlockedStep, CriticalPath, CycleStep, GraphError, Readiness, StepGraph, StepOutcomes,
    link_steps,
};
pub use markdown::render as render_markdown;
pub use mermaid::{DiagramType, render as render_mermaid};
pub use model::{
    AcceptanceCriterion, AlternativeApproach, Architecture, ChangeType, Complexity,
    DependencyGraph, Diagram, DiagramKind, EdgeKind, Feature, FileChange, GenerationMethod,
    GraphEdge, GraphNode, Level, Milestone, Plan, Priority, Provenance, Risk, Scope, Step,
    StepNumber, StepOutput, TestingStrategy, parse_effort_hours,
};
pub use refine::{RefinePlanRequest, refine_plan, save_refined};
pub use visualize::{VisualizePlanRequest, VisualizePlanResponse, visualize_plan};

pub mod apply;
pub mod approval;
pub mod execute;
mod generate;
mod graph;
pub mod history;
pub mod journal;
pub mod library;
mod markdown;
mod mermaid;
mod model;
pub mod progress;
mod refine;
mod scan;
#[cfg(test)]
mod tests;
pub mod undo;
mod visualize;

/// The configured model client for planning, or `None` when no provider is configured (plans
/// are then deterministic). A provider configured incompletely is an error.
pub fn model_client(
    config: &crate::config::LlmConfig,
    workspace: &std::path::Path,
) -> Result<Option<crate::llm::LlmClient>, crate::llm::LlmError> {
    match crate::llm::LlmClient::from_config(config, workspace) {
        Ok(client) => Ok(Some(client)),
        Err(crate::llm::LlmError::NotConfigured) => Ok(None),
        Err(err) => Err(err),
    }
}

/// The JSON Schema of [`Plan`] as Tollgate writes it (draft 2020-12); committed as
/// `schemas/plan.schema.json`.
pub fn plan_schema() -> serde_json::Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Plan>()
        .to_value()
}

#[cfg(test)]
mod schema_tests {
    use std::path::Path;

    use super::*;

    /// The committed schemas must match the types; `TOLLGATE_UPDATE_SCHEMAS=1` rewrites them.
    #[test]
    fn committed_schemas_are_up_to_date() {
        let workspace_root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .expect("the crate sits at crates/tollgate");
        use schemars::generate::SchemaSettings;
        fn request<T: schemars::JsonSchema>() -> serde_json::Value {
            SchemaSettings::draft2020_12()
                .for_deserialize()
                .into_generator()
                .into_root_schema_for::<T>()
                .to_value()
        }
        fn response<T: schemars::JsonSchema>() -> serde_json::Value {
            SchemaSettings::draft2020_12()
                .for_serialize()
                .into_generator()
                .into_root_schema_for::<T>()
                .to_value()
        }
        for (name, schema) in [
            ("plan.schema.json", plan_schema()),
            (
                "create-plan-request.schema.json",
                request::<CreatePlanRequest>(),
            ),
            (
                "refine-plan-request.schema.json",
                request::<RefinePlanRequest>(),
            ),
            ("plan-response.schema.json", response::<PlanResponse>()),
            (
                "visualize-plan-request.schema.json",
                request::<VisualizePlanRequest>(),
            ),
            (
                "visualize-plan-response.schema.json",
                response::<VisualizePlanResponse>(),
            ),
            (
                "execute-plan-request.schema.json",
                request::<execute::ExecutePlanRequest>(),
            ),
            (
                "execute-plan-response.schema.json",
                response::<execute::ExecutePlanResponse>(),
            ),
        ] {
            let path = workspace_root.join("schemas").join(name);
            if std::env::var_os("TOLLGATE_UPDATE_SCHEMAS").is_some_and(|value| value == "1") {
                let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
                std::fs::write(&path, text).unwrap();
                continue;
            }
            let committed: Option<serde_json::Value> = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok());
            assert!(
                committed.as_ref() == Some(&schema),
                "{} is stale: it does not match the plan types.\n\
                 Regenerate it with `TOLLGATE_UPDATE_SCHEMAS=1 cargo test -p tollgate --lib \
                 plan::` and commit the result.",
                path.display()
            );
        }
    }
}
