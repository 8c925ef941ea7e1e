//! Context-Engine's `search_callers_for`: a symbol's uses in repo_search's shape.

use tollgate::api::context::dialects::context_engine::{
    self, RepoSearchResponse, SymbolUsesRequest,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchCallersFor;

impl Tool for SearchCallersFor {
    const NAME: &'static str = "search_callers_for";
    const TITLE: &'static str = "Search callers for (Context-Engine)";
    const DESCRIPTION: &'static str =
        "Find callers and other uses of a symbol; the result is repo_search's.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SymbolUsesRequest;
    type Output = RepoSearchResponse;

    fn call(ctx: &ToolContext, input: SymbolUsesRequest) -> Result<RepoSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::search_callers_for(&ws, &input)?)
    }
}
