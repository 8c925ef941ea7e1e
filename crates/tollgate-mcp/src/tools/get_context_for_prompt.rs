//! `get_context_for_prompt`: a context tool (upstream's name and parameters).

use tollgate::api::context::get_context_for_prompt;
use tollgate::api::context::request::{ContextBundle, GetContextRequest};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct GetContextForPrompt;

impl Tool for GetContextForPrompt {
    const NAME: &'static str = "get_context_for_prompt";
    const TITLE: &'static str = "Context for a prompt";
    const DESCRIPTION: &'static str = "Bundle the code most relevant to a query into a token \
budget, as Markdown with paths and lines. Use to gather context before writing or reviewing code.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = GetContextRequest;
    type Output = ContextBundle;

    fn call(ctx: &ToolContext, input: GetContextRequest) -> Result<ContextBundle, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(get_context_for_prompt(&ws, &input)?)
    }
}
