//! `view_progress`: a saved plan's progress: counts by state, percentage done, next_ready_steps, blocked steps (with what they wait on), current steps, and every step's state, attempts, notes and files.

use tollgate::api::lifecycle::{ViewProgressRequest, view_progress};
use tollgate::plan::lifecycle::progress::ProgressReport;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ViewProgress;

impl Tool for ViewProgress {
    const NAME: &'static str = "view_progress";
    const TITLE: &'static str = "View progress";
    const DESCRIPTION: &'static str = "A saved plan's progress: states, percentage, next ready, \
blocked and current steps.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ViewProgressRequest;
    type Output = ProgressReport;

    fn call(ctx: &ToolContext, input: ViewProgressRequest) -> Result<ProgressReport, ToolError> {
        Ok(view_progress(&super::plan_store(ctx)?, input)?)
    }
}
