//! The plan model: upstream's `EnhancedPlanOutput` / `EnhancedPlanStep` with their field names,
//! plus Tollgate's additions (`generated_by`, `previous_path` on a rename, effort in hours).
//!
//! Steps are keyed by `step_number`: dependencies, blocks, milestones, features, the critical
//! path and the parallel groups all refer to steps by number, as upstream's tools do
//! (`focus_steps`, `step_number`). Tollgate never renumbers a step once a plan exists; new steps
//! get new numbers, so a number is as stable as the opaque `id`.
//!
//! Every field has a serde default so that a partial plan handed in by an agent deserializes;
//! validation (`plan::graph`) then decides whether it is usable.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// A step's number: its key in the plan (1-based).
pub type StepNumber = u32;

/// An implementation plan (upstream `EnhancedPlanOutput`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// Opaque identifier, `plan_<unix ms>_<random>` for generated plans.
    #[serde(default)]
    pub id: String,
    /// Version, starting at 1; every refinement produces the next one.
    #[serde(default = "first_version")]
    pub version: u32,
    /// RFC 3339 timestamp of the first version.
    #[serde(default)]
    pub created_at: String,
    /// RFC 3339 timestamp of this version.
    #[serde(default)]
    pub updated_at: String,
    /// What the plan achieves, in one or two sentences.
    #[serde(default)]
    pub goal: String,
    #[serde(default)]
    pub scope: Scope,
    /// Features the minimum viable result needs.
    #[serde(default)]
    pub mvp_features: Vec<Feature>,
    /// Features that can wait.
    #[serde(default)]
    pub nice_to_have_features: Vec<Feature>,
    #[serde(default)]
    pub architecture: Architecture,
    #[serde(default)]
    pub risks: Vec<Risk>,
    #[serde(default)]
    pub milestones: Vec<Milestone>,
    /// The steps, in display order (ascending `step_number`).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Derived from the steps by `plan::graph`; recomputed whenever a plan is validated.
    #[serde(default)]
    pub dependency_graph: DependencyGraph,
    #[serde(default)]
    pub testing_strategy: TestingStrategy,
    /// Criteria for the whole plan being done.
    #[serde(default)]
    pub acceptance_criteria: Vec<AcceptanceCriterion>,
    /// How sure the planner is that the plan is right, 0 to 1.
    #[serde(default)]
    pub confidence_score: f64,
    /// What the planner needs answered to do better (answer them with `refine_plan`).
    #[serde(default)]
    pub questions_for_clarification: Vec<String>,
    /// Approaches considered and rejected.
    #[serde(default)]
    pub alternative_approaches: Vec<AlternativeApproach>,
    /// Repository-relative paths the plan was built from.
    #[serde(default)]
    pub context_files: Vec<String>,
    /// What the planner learned about the codebase.
    #[serde(default)]
    pub codebase_insights: Vec<String>,
    /// How this version was produced (Tollgate extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by: Option<Provenance>,
}

fn first_version() -> u32 {
    1
}

/// What is in and out of the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Scope {
    #[serde(default)]
    pub included: Vec<String>,
    #[serde(default)]
    pub excluded: Vec<String>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
}

/// A feature and the steps that deliver it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Feature {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Step numbers.
    #[serde(default)]
    pub steps: Vec<StepNumber>,
}

/// Architecture notes and diagrams.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Architecture {
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub patterns_used: Vec<String>,
    #[serde(default)]
    pub diagrams: Vec<Diagram>,
}

/// A Mermaid diagram stored with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diagram {
    #[serde(rename = "type")]
    pub kind: DiagramKind,
    #[serde(default)]
    pub title: String,
    /// Mermaid source.
    pub mermaid: String,
}

/// Upstream's diagram types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiagramKind {
    Architecture,
    Sequence,
    Flowchart,
    Er,
    C4,
    Gantt,
}

/// A risk and what to do about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Risk {
    pub issue: String,
    #[serde(default)]
    pub mitigation: String,
    #[serde(default)]
    pub likelihood: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<Level>,
}

/// Low, medium or high (risk likelihood and impact).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Low,
    #[default]
    Medium,
    High,
}

/// A milestone: a named group of steps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Milestone {
    pub name: String,
    /// Step numbers.
    #[serde(default)]
    pub steps_included: Vec<StepNumber>,
    #[serde(default)]
    pub estimated_time: String,
    #[serde(default)]
    pub deliverables: Vec<String>,
}

/// One step of a plan (upstream `EnhancedPlanStep`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// The step's key and display position (1-based, unique in the plan, never renumbered).
    pub step_number: StepNumber,
    /// Opaque identifier, `step_<n>` for generated steps.
    #[serde(default)]
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub files_to_modify: Vec<FileChange>,
    #[serde(default)]
    pub files_to_create: Vec<FileChange>,
    /// Repository-relative paths.
    #[serde(default)]
    pub files_to_delete: Vec<String>,
    /// Steps that must finish before this one starts.
    #[serde(default)]
    pub depends_on: Vec<StepNumber>,
    /// Steps that cannot start before this one finishes (the inverse of their `depends_on`;
    /// validation keeps both lists consistent).
    #[serde(default)]
    pub blocks: Vec<StepNumber>,
    /// Steps on the same parallel level (derived): at most 20, the nearest by number;
    /// `dependency_graph.parallel_groups` has the whole groups.
    #[serde(default)]
    pub can_parallel_with: Vec<StepNumber>,
    #[serde(default)]
    pub priority: Priority,
    /// Free text such as `2h`, `30 minutes`, `1-2 days`; [`Step::effort_hours`] reads it.
    #[serde(default, deserialize_with = "string_or_number")]
    pub estimated_effort: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_tokens: Option<u64>,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_strategy: Option<String>,
    /// What the step produces for later steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<StepOutput>,
    /// Names of earlier steps' outputs this step uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_refs: Vec<String>,
}

impl Step {
    /// The estimated effort in hours, when `estimated_effort` can be read (`2h`, `1.5 hours`,
    /// `30 min`, `1-2 days` (the midpoint), `1 week`; a day is 8 hours, a week 40; a bare
    /// number is hours).
    pub fn effort_hours(&self) -> Option<f64> {
        parse_effort_hours(&self.estimated_effort)
    }

    /// Every path the step touches: modified, created (and renamed from), deleted.
    pub fn touched_paths(&self) -> impl Iterator<Item = &str> {
        self.files_to_modify
            .iter()
            .chain(&self.files_to_create)
            .flat_map(|change| {
                std::iter::once(change.path.as_str()).chain(change.previous_path.as_deref())
            })
            .chain(self.files_to_delete.iter().map(String::as_str))
    }
}

/// A file a step changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    /// Repository-relative path (the new path of a rename).
    pub path: String,
    #[serde(default)]
    pub change_type: ChangeType,
    /// Estimated lines of code added or changed.
    #[serde(default)]
    pub estimated_loc: u32,
    #[serde(default)]
    pub complexity: Complexity,
    #[serde(default)]
    pub reason: String,
    /// The old path of a rename (Tollgate extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_path: Option<String>,
}

/// How a file changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeType {
    Create,
    #[default]
    Modify,
    Rename,
    Delete,
}

/// How hard a file change is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Complexity {
    Trivial,
    #[default]
    Simple,
    Moderate,
    Complex,
}

/// A step's priority.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Critical,
    High,
    #[default]
    Medium,
    Low,
}

/// Something a step produces for later steps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepOutput {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The step graph as upstream serialises it; derived by `plan::graph`, never trusted as input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DependencyGraph {
    #[serde(default)]
    pub nodes: Vec<GraphNode>,
    #[serde(default)]
    pub edges: Vec<GraphEdge>,
    /// The longest chain of steps, weighted by estimated effort (step numbers, in order).
    #[serde(default)]
    pub critical_path: Vec<StepNumber>,
    /// The critical path's total effort in hours; a step without a readable estimate counts one
    /// hour (Tollgate extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_path_hours: Option<f64>,
    /// Steps that can run at the same time: each longest-path level with more than one step.
    #[serde(default)]
    pub parallel_groups: Vec<Vec<StepNumber>>,
    /// A topological order, ties broken by step number.
    #[serde(default)]
    pub execution_order: Vec<StepNumber>,
}

/// A node of [`DependencyGraph`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    pub id: String,
    pub step_number: StepNumber,
}

/// An edge of [`DependencyGraph`]: `from` must finish before `to` starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GraphEdge {
    pub from: StepNumber,
    pub to: StepNumber,
    #[serde(rename = "type", default)]
    pub kind: EdgeKind,
}

/// Upstream's edge types; Tollgate derives only `blocks` (every dependency is a hard one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    #[default]
    Blocks,
    Informs,
}

/// How the plan will be tested.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestingStrategy {
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub integration: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e: Option<String>,
    #[serde(default)]
    pub coverage_target: String,
    #[serde(default)]
    pub test_files: Vec<String>,
}

/// A plan-level acceptance criterion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcceptanceCriterion {
    pub description: String,
    #[serde(default)]
    pub verification: String,
}

/// An approach considered and not taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AlternativeApproach {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub reason_not_chosen: String,
    #[serde(default)]
    pub pros: Vec<String>,
    #[serde(default)]
    pub cons: Vec<String>,
}

/// Who or what produced a plan version (Tollgate extension).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    pub method: GenerationMethod,
    /// The model, for [`GenerationMethod::Llm`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A sentence a reader sees, e.g. why the plan is deterministic.
    #[serde(default)]
    pub note: String,
}

/// How a plan version was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GenerationMethod {
    /// Built from the repository without a model: a starting point, not a design.
    Deterministic,
    /// Generated by a language model and validated.
    Llm,
    /// Handed in by the calling agent and validated.
    Agent,
}

/// Reads `2h`, `1.5 hours`, `30 min`, `1-2 days`, `1 week`, `3` (hours).
pub fn parse_effort_hours(text: &str) -> Option<f64> {
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return None;
    }
    let (numbers, unit) = split_range_and_unit(&lower);
    let values: Vec<f64> = numbers
        .iter()
        .map(|n| n.parse::<f64>())
        .collect::<Result<_, _>>()
        .ok()?;
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return None;
    }
    let amount = values.iter().sum::<f64>() / values.len() as f64;
    let unit = unit.trim().trim_end_matches('.');
    let per_unit = match unit {
        "" | "h" | "hr" | "hrs" | "hour" | "hours" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 1.0 / 60.0,
        "d" | "day" | "days" => 8.0,
        "w" | "wk" | "wks" | "week" | "weeks" => 40.0,
        _ => return None,
    };
    Some(amount * per_unit)
}

/// `"1-2 days"` → (`["1", "2"]`, `"days"`); `"1 to 2 h"` → (`["1", "2"]`, `"h"`).
fn split_range_and_unit(text: &str) -> (Vec<&str>, &str) {
    let mut numbers = Vec::new();
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        let Some(first) = trimmed.chars().next() else {
            break;
        };
        if first.is_ascii_digit() || first == '.' {
            let end = trimmed
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(trimmed.len());
            numbers.push(&trimmed[..end]);
            rest = &trimmed[end..];
        } else if first == '-' || first == '–' {
            rest = &trimmed[first.len_utf8()..];
        } else if let Some(after) = trimmed.strip_prefix("to ") {
            rest = after;
        } else {
            rest = trimmed;
            break;
        }
    }
    (numbers, rest)
}

/// Accepts `"2h"` or `2` (an agent may send a number) for a free-text field.
fn string_or_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Number(serde_json::Number),
        Null(()),
    }
    Ok(match Raw::deserialize(deserializer)? {
        Raw::Text(text) => text,
        Raw::Number(number) => number.to_string(),
        Raw::Null(()) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_texts_are_read_in_hours() {
        for (text, hours) in [
            ("2h", Some(2.0)),
            ("1.5 hours", Some(1.5)),
            ("30 min", Some(0.5)),
            ("1-2 days", Some(12.0)),
            ("1 to 3 hours", Some(2.0)),
            ("1 week", Some(40.0)),
            ("3", Some(3.0)),
            ("", None),
            ("a while", None),
            ("2 fortnights", None),
        ] {
            assert_eq!(parse_effort_hours(text), hours, "{text:?}");
        }
    }

    #[test]
    fn a_partial_agent_plan_deserializes_with_defaults() {
        let plan: Plan = serde_json::from_str(
            r#"{"goal": "g", "steps": [{"step_number": 1, "title": "a", "estimated_effort": 3},
                {"step_number": 2, "title": "b", "depends_on": [1], "priority": "high"}]}"#,
        )
        .unwrap();
        assert_eq!(plan.version, 1);
        assert_eq!(plan.steps[0].estimated_effort, "3");
        assert_eq!(plan.steps[1].priority, Priority::High);
        assert_eq!(plan.steps[1].depends_on, vec![1]);
    }

    #[test]
    fn upstream_field_names_round_trip() {
        let plan = Plan {
            architecture: Architecture {
                diagrams: vec![Diagram {
                    kind: DiagramKind::Gantt,
                    title: "t".into(),
                    mermaid: "gantt".into(),
                }],
                ..Architecture::default()
            },
            dependency_graph: DependencyGraph {
                edges: vec![GraphEdge {
                    from: 1,
                    to: 2,
                    kind: EdgeKind::Blocks,
                }],
                ..DependencyGraph::default()
            },
            ..Plan::default()
        };
        let value = serde_json::to_value(&plan).unwrap();
        assert_eq!(value["architecture"]["diagrams"][0]["type"], "gantt");
        assert_eq!(value["dependency_graph"]["edges"][0]["type"], "blocks");
        let back: Plan = serde_json::from_value(value).unwrap();
        assert_eq!(back, plan);
    }
}
