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

use crate::llm::{LlmClient, fence};
use crate::plan::generate::{
    Options, PlanError, PlanResponse, finish, invalid, model_plan, respond,
};
use crate::plan::model::{GenerationMethod, Plan, Provenance, StepNumber};

/// What to change in a plan: `api::plan::RefinePlanRequest` parsed and bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refinement {
    /// What to change, in plain words (trimmed, not blank).
    pub feedback: Option<String>,
    /// Answers to the plan's questions, `{question: answer}`.
    pub clarifications: BTreeMap<String, String>,
    /// Step numbers the refinement is about.
    pub focus_steps: Vec<StepNumber>,
    /// Store regenerated diagrams in the plan.
    pub diagrams: bool,
}

/// Refines `current` into its next version.
pub fn refine(
    llm: Option<&LlmClient>,
    mut current: Plan,
    request: &Refinement,
) -> Result<PlanResponse, PlanError> {
    // The plan must be valid before it is refined, so errors name the caller's plan.
    crate::plan::graph::link_steps(&mut current)?;
    let feedback = request.feedback.as_deref();
    let clarifications = &request.clarifications;
    for step in &request.focus_steps {
        if !current.steps.iter().any(|s| s.step_number == *step) {
            return Err(invalid(
                "focus_steps",
                format!("the plan has no step {step}"),
            ));
        }
    }
    let options = Options {
        diagrams: request.diagrams,
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
    for (question, answer) in clarifications {
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

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
