//! `view_history`: a saved plan's versions, newest first (change type, author, reason, time; full plans with include_plans), and its lifecycle events (steps, approvals, status changes).

use tollgate::api::lifecycle::{ViewHistoryRequest, view_history};
use tollgate::plan::lifecycle::history::ViewHistoryResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ViewHistory;

impl Tool for ViewHistory {
    const NAME: &'static str = "view_history";
    const TITLE: &'static str = "View plan history";
    const DESCRIPTION: &'static str =
        "A saved plan's versions (newest first) and lifecycle events.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ViewHistoryRequest;
    type Output = ViewHistoryResponse;

    fn call(
        ctx: &ToolContext,
        input: ViewHistoryRequest,
    ) -> Result<ViewHistoryResponse, ToolError> {
        Ok(view_history(&super::plan_store(ctx)?, input)?)
    }
}
