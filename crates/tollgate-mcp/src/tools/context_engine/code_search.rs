//! Context-Engine's `code_search`: the seed's exact alias of `repo_search`.

use tollgate::api::context::dialects::context_engine::{
    self, RepoSearchRequest, RepoSearchResponse,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CodeSearch;

impl Tool for CodeSearch {
    const NAME: &'static str = "code_search";
    const TITLE: &'static str = "Code search (Context-Engine)";
    const DESCRIPTION: &'static str = "Exact alias of repo_search: same parameters and result.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = RepoSearchRequest;
    type Output = RepoSearchResponse;

    fn call(ctx: &ToolContext, input: RepoSearchRequest) -> Result<RepoSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::repo_search(&ws, &input)?)
    }
}
