//! Context-Engine's `repo_search`: the hybrid search with its filters and result shape.

use tollgate::api::context::dialects::context_engine::{
    self, RepoSearchRequest, RepoSearchResponse,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RepoSearch;

impl Tool for RepoSearch {
    const NAME: &'static str = "repo_search";
    const TITLE: &'static str = "Repo search (Context-Engine)";
    const DESCRIPTION: &'static str = "Hybrid code search (lexical BM25, dense vectors, commit \
history) with path, language, kind and symbol filters; a list of queries is fused.";
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
