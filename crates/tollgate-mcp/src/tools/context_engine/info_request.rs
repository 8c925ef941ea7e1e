//! Context-Engine's `info_request`: code for a description, optionally explained.

use tollgate::api::context::dialects::info_request::{self, InfoRequest, InfoResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct InfoRequestTool;

impl Tool for InfoRequestTool {
    const NAME: &'static str = "info_request";
    const TITLE: &'static str = "Info request (Context-Engine)";
    const DESCRIPTION: &'static str = "Find code for a natural-language description, each \
result in a sentence; optionally an explanation (summary, locations, confidence) and each \
result's imports and related files.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = InfoRequest;
    type Output = InfoResponse;

    fn call(ctx: &ToolContext, input: InfoRequest) -> Result<InfoResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(info_request::info_request(&ws, &input)?)
    }
}
