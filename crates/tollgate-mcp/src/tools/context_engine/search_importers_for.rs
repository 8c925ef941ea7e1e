//! Context-Engine's `search_importers_for`: a module's importers in repo_search's shape.

use tollgate::api::context::dialects::context_engine::{
    self, RepoSearchResponse, SymbolUsesRequest,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchImportersFor;

impl Tool for SearchImportersFor {
    const NAME: &'static str = "search_importers_for";
    const TITLE: &'static str = "Search importers for (Context-Engine)";
    const DESCRIPTION: &'static str =
        "Find files importing a module or symbol; the result is repo_search's.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SymbolUsesRequest;
    type Output = RepoSearchResponse;

    fn call(ctx: &ToolContext, input: SymbolUsesRequest) -> Result<RepoSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::search_importers_for(&ws, &input)?)
    }
}
