//! `start_step`: mark a ready step of a saved plan in progress (a blocked step is refused, naming what it waits on).

use tollgate::api::lifecycle::{StartStepRequest, start_step};
use tollgate::plan::lifecycle::progress::StepUpdate;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct StartStep;

impl Tool for StartStep {
    const NAME: &'static str = "start_step";
    const TITLE: &'static str = "Start step";
    const DESCRIPTION: &'static str = "Mark a ready step of a saved plan in progress; blocked steps \
are refused, naming what they wait on.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = StartStepRequest;
    type Output = StepUpdate;

    fn call(ctx: &ToolContext, mut input: StartStepRequest) -> Result<StepUpdate, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(start_step(&super::plan_store(ctx)?, input)?)
    }
}
