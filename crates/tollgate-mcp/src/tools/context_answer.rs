//! `context_answer` (seed 000).

use tollgate::api::answer::{ContextAnswerRequest, ContextAnswerResponse, context_answer};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ContextAnswer;

impl Tool for ContextAnswer {
    const NAME: &'static str = "context_answer";
    const TITLE: &'static str = "Answer from context";
    const DESCRIPTION: &'static str =
        "Answer from code and memories via the model; citations checked.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MODEL_REVIEW;

    type Input = ContextAnswerRequest;
    type Output = ContextAnswerResponse;

    fn call(
        ctx: &ToolContext,
        input: ContextAnswerRequest,
    ) -> Result<ContextAnswerResponse, ToolError> {
        let llm = super::create_plan::planning_model(ctx)?;
        let workspace = ctx.open_workspace()?;
        super::with_memory(ctx, |memory| {
            context_answer(&workspace, memory, llm.as_ref(), &input)
        })
    }
}
