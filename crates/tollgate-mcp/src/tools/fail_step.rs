//! `fail_step`: record a step's failure with the error.

use tollgate::plan::progress::{FailStepRequest, StepUpdate, fail_step};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct FailStep;

impl Tool for FailStep {
    const NAME: &'static str = "fail_step";
    const TITLE: &'static str = "Fail step";
    const DESCRIPTION: &'static str = "Record a step's failure with the error. Options (at most one): retry (queue it again, up to 3 attempts), skip (give up on the step, its dependents may go on), skip_dependents (fail it and skip everything that depends on it). Without an option its dependents stay blocked until it is retried or skipped.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = FailStepRequest;
    type Output = StepUpdate;

    fn call(ctx: &ToolContext, mut input: FailStepRequest) -> Result<StepUpdate, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(fail_step(&super::plan_store(ctx)?, &input)?)
    }
}
