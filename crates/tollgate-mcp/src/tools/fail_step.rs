//! `fail_step`: record a step's failure with the error.

use tollgate::api::lifecycle::{FailStepRequest, fail_step};
use tollgate::plan::lifecycle::progress::StepUpdate;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct FailStep;

impl Tool for FailStep {
    const NAME: &'static str = "fail_step";
    const TITLE: &'static str = "Fail step";
    const DESCRIPTION: &'static str = "Record a plan step's failure; optionally retry it, skip it, \
or skip it with its dependents.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = FailStepRequest;
    type Output = StepUpdate;

    fn call(ctx: &ToolContext, mut input: FailStepRequest) -> Result<StepUpdate, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(fail_step(&super::plan_store(ctx)?, input)?)
    }
}
