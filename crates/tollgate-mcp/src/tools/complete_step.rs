//! `complete_step`: mark a step complete with notes (evidence for its acceptance criteria) and the files it changed.

use tollgate::api::lifecycle::{CompleteStepRequest, complete_step};
use tollgate::plan::lifecycle::progress::StepUpdate;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CompleteStep;

impl Tool for CompleteStep {
    const NAME: &'static str = "complete_step";
    const TITLE: &'static str = "Complete step";
    const DESCRIPTION: &'static str = "Mark a plan step done with notes and changed files; returns \
progress and the steps now ready.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = CompleteStepRequest;
    type Output = StepUpdate;

    fn call(ctx: &ToolContext, mut input: CompleteStepRequest) -> Result<StepUpdate, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(complete_step(&super::plan_store(ctx)?, input)?)
    }
}
