//! Implementation plans: the model (upstream's `EnhancedPlanOutput`), the step graph (a
//! petgraph DAG: validation, execution order, critical path, parallel groups, ready steps) and
//! its Mermaid diagrams.
//!
//! A plan's steps refer to each other by `step_number`. [`link_steps`] validates a plan and
//! rewrites everything derived from its graph; [`StepGraph`] answers scheduling questions for
//! the lifecycle code (`StepGraph::readiness` given [`StepOutcomes`]).

pub use generate::{PlanError, PlanResponse, PlanTask, create};
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
pub use refine::{Refinement, refine};
pub use visualize::{VisualizePlanResponse, visualize};

mod generate;
mod graph;
pub mod lifecycle;
mod markdown;
mod mermaid;
mod model;
mod refine;
mod scan;
#[cfg(test)]
mod tests;
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

/// Why the planning model could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelSetupError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Model(#[from] crate::llm::LlmError),
}

impl ModelSetupError {
    /// Stable machine code.
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            ModelSetupError::Config(_) => crate::ErrorCode::InvalidInput,
            ModelSetupError::Model(err) => err.code(),
        }
    }
}

/// The planning model of `workspace`, as every front end builds it: its `tollgate.toml`, then
/// the environment (`env`, the caller's variables), through [`crate::config::load`]; `None` when
/// no provider is configured.
pub fn planning_model<I, K, V>(
    workspace: &std::path::Path,
    env: I,
) -> Result<Option<crate::llm::LlmClient>, ModelSetupError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let config = crate::config::load(
        crate::config::ConfigFile::Discover(workspace),
        env,
        crate::config::RawConfig::default(),
    )?
    .resolve()?;
    Ok(model_client(&config.llm, workspace)?)
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
