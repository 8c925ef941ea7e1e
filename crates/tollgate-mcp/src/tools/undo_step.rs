//! `undo_step`: put back the files a step's applied changes replaced, from their backups.

use tollgate::plan::undo::{UndoStepRequest, UndoStepResponse, undo_step};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct UndoStep;

impl Tool for UndoStep {
    const NAME: &'static str = "undo_step";
    const TITLE: &'static str = "Undo step";
    const DESCRIPTION: &'static str = "Undo the changes execute_plan applied for a step \
(step_number, else the step applied last): every file is restored from its backup under \
.tollgate/backups, and the step goes back to pending. Refused, with nothing changed, when a file \
was edited since the step wrote it, naming the files; force: true restores the backups anyway. \
Recorded in the plan's history.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_DESTRUCTIVE;

    type Input = UndoStepRequest;
    type Output = UndoStepResponse;

    fn call(ctx: &ToolContext, mut input: UndoStepRequest) -> Result<UndoStepResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(undo_step(
            &super::plan_store(ctx)?,
            ctx.workspace(),
            &input,
        )?)
    }
}
