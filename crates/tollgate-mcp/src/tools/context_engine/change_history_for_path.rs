//! Context-Engine's `change_history_for_path`: a path's commits, newest first.

use tollgate::api::context::dialects::context_engine::{
    self, ChangeHistoryRequest, ChangeHistoryResponse,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ChangeHistoryForPath;

impl Tool for ChangeHistoryForPath {
    const NAME: &'static str = "change_history_for_path";
    const TITLE: &'static str = "Change history for path (Context-Engine)";
    const DESCRIPTION: &'static str = "The commits that changed a file or directory, newest \
first, with the seed's summary (path, last modified).";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ChangeHistoryRequest;
    type Output = ChangeHistoryResponse;

    fn call(
        ctx: &ToolContext,
        input: ChangeHistoryRequest,
    ) -> Result<ChangeHistoryResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::change_history_for_path(&ws, &input)?)
    }
}
