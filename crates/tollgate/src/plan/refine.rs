//! `refine_plan`: the next version of a plan from feedback, answers to its clarification
//! questions and a set of steps to focus on.
//!
//! With a model, the model rewrites the plan (told to keep the numbers of steps it does not
//! remove) and the result is validated like a new one, repaired once. Without a model (or when
//! it fails, with a warning) the refinement is recorded, not interpreted: answered questions
//! move to the assumptions, feedback becomes a constraint and a note on each focus step, and the
//! steps themselves are left as they were. Either way the version number goes up by one and the
//! plan keeps its id.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::{LlmClient, fence};
use crate::plan::generate::{
    Options, PlanError, PlanResponse, finish, invalid, model_plan, parse_plan_value, respond,
};
use crate::plan::model::{GenerationMethod, Plan, Provenance, StepNumber};

/// Input of `refine_plan` (upstream's parameters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefinePlanRequest {
    /// The plan to refine: an object or its JSON text.
    pub current_plan: Value,
    /// What to change, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Answers to the plan's questions: an object `{question: answer}` or its JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarifications: Option<Value>,
    /// Step numbers the refinement is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus_steps: Vec<StepNumber>,
    /// Store regenerated diagrams in the plan [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_diagrams: Option<bool>,
}

const MAX_FEEDBACK_CHARS: usize = 20_000;

/// Stores a refined plan as the next version of its plan (a plan not saved yet is created),
/// recording `author`, and says so in `response.saved`. Refining alone saves nothing.
pub fn save_refined(
    root: &std::path::Path,
    response: &mut PlanResponse,
    author: &str,
) -> Result<(), PlanError> {
    super::generate::save_response(root, response, true, author, "refined")
}

/// Refines `request.current_plan` into its next version.
pub fn refine_plan(
    llm: Option<&LlmClient>,
    request: &RefinePlanRequest,
) -> Result<PlanResponse, PlanError> {
    let mut current =
        parse_plan_value(&request.current_plan).map_err(|err| rename_field(err, "current_plan"))?;
    // The plan must be valid before it is refined, so errors name the caller's plan.
    crate::plan::graph::link_steps(&mut current)?;
    let feedback = request
        .feedback
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty());
    if feedback.is_some_and(|f| f.chars().count() > MAX_FEEDBACK_CHARS) {
        return Err(invalid(
            "feedback",
            format!("longer than {MAX_FEEDBACK_CHARS} characters"),
        ));
    }
    let clarifications = parse_clarifications(request.clarifications.as_ref())?;
    for step in &request.focus_steps {
        if !current.steps.iter().any(|s| s.step_number == *step) {
            return Err(invalid(
                "focus_steps",
                format!("the plan has no step {step}"),
            ));
        }
    }
    let options = Options {
        diagrams: request.generate_diagrams.unwrap_or(true),
        mvp_only: false,
    };
    let next_version = current.version.max(1) + 1;
    let mut warnings = Vec::new();

    if let Some(client) = llm {
        let mut user = String::from(
            "Refine this plan. Return the whole revised plan. Keep the step_number of every step \
             you keep; give new steps numbers above the current highest.\n\n",
        );
        user.push_str(&fence(
            "current plan",
            &serde_json::to_string(&current).unwrap_or_default(),
        ));
        if let Some(feedback) = feedback {
            user.push_str("\n\nFeedback:\n");
            user.push_str(&fence("feedback", feedback));
        }
        if !clarifications.is_empty() {
            user.push_str("\n\nAnswers to the plan's questions:\n");
            let text: String = clarifications
                .iter()
                .map(|(q, a)| format!("Q: {q}\nA: {a}\n"))
                .collect();
            user.push_str(&fence("clarifications", &text));
        }
        if !request.focus_steps.is_empty() {
            let steps: Vec<String> = request.focus_steps.iter().map(u32::to_string).collect();
            let _ = write!(
                user,
                "\n\nChange only steps {} (and add steps if needed); keep the others as they are.",
                steps.join(", ")
            );
        }
        let prepare = |plan: &mut Plan| {
            plan.id = current.id.clone();
            plan.created_at = current.created_at.clone();
            plan.version = next_version;
            if plan.goal.trim().is_empty() {
                plan.goal = current.goal.clone();
            }
        };
        match model_plan(client, &user, prepare, &options, false) {
            Ok(plan) => return Ok(respond(plan, warnings)),
            Err(err) => warnings.push(format!(
                "The model could not refine the plan ({err}); the refinement was recorded \
                 without a model instead."
            )),
        }
    }

    if feedback.is_none() && clarifications.is_empty() {
        return Err(invalid(
            "feedback",
            "without a model, a refinement needs feedback or clarifications to record",
        ));
    }
    let mut plan = current;
    plan.version = next_version;
    for (question, answer) in &clarifications {
        let key = normalise(question);
        plan.questions_for_clarification
            .retain(|q| normalise(q) != key);
        plan.scope.assumptions.push(format!(
            "Clarified: {} → {}",
            question.trim(),
            answer.trim()
        ));
    }
    if let Some(feedback) = feedback {
        plan.scope
            .constraints
            .push(format!("Feedback for version {next_version}: {feedback}"));
        for step in plan
            .steps
            .iter_mut()
            .filter(|s| request.focus_steps.contains(&s.step_number))
        {
            if !step.description.is_empty() {
                step.description.push_str("\n\n");
            }
            let _ = write!(
                step.description,
                "Refinement (version {next_version}): {feedback}"
            );
        }
    }
    let provenance = Provenance {
        method: GenerationMethod::Deterministic,
        model: None,
        note: "Refined without a language model: feedback and answers are recorded on the plan; \
               the steps were not rewritten."
            .into(),
    };
    finish(&mut plan, provenance, &options, false)?;
    Ok(respond(plan, warnings))
}

fn rename_field(err: PlanError, field: &'static str) -> PlanError {
    match err {
        PlanError::InvalidInput { message, .. } => PlanError::InvalidInput { field, message },
        other => other,
    }
}

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// `{question: answer}` as an object or its JSON text; non-string answers are kept as JSON.
fn parse_clarifications(value: Option<&Value>) -> Result<BTreeMap<String, String>, PlanError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(BTreeMap::new()),
        Some(Value::String(text)) => serde_json::from_str::<Value>(text)
            .map_err(|err| invalid("clarifications", format!("not a JSON object: {err}")))?,
        Some(other) => other.clone(),
    };
    let Value::Object(map) = object else {
        return Err(invalid(
            "clarifications",
            "expected an object {question: answer}",
        ));
    };
    Ok(map
        .into_iter()
        .map(|(question, answer)| {
            let answer = match answer {
                Value::String(text) => text,
                other => other.to_string(),
            };
            (question, answer)
        })
        .collect())
}
