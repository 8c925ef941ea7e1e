//! `undo_step`: put back the files a step's applied changes replaced, from their backups.

use tollgate::api::lifecycle::{UndoStepRequest, undo_step};
use tollgate::plan::lifecycle::undo::UndoStepResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct UndoStep;

impl Tool for UndoStep {
    const NAME: &'static str = "undo_step";
    const TITLE: &'static str = "Undo step";
    const DESCRIPTION: &'static str = "Undo the file changes execute_plan applied for a step, from \
its backups; refused if the files changed since (force overrides).";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_DESTRUCTIVE;

    type Input = UndoStepRequest;
    type Output = UndoStepResponse;

    fn call(ctx: &ToolContext, mut input: UndoStepRequest) -> Result<UndoStepResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(undo_step(&super::plan_store(ctx)?, ctx.workspace(), input)?)
    }
}
