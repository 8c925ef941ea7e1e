//! `codebase_retrieval`: a context tool (upstream's name and parameters).

use tollgate::api::context::codebase_retrieval;
use tollgate::api::context::request::{CodebaseRetrievalRequest, SearchResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CodebaseRetrieval;

impl Tool for CodebaseRetrieval {
    const NAME: &'static str = "codebase_retrieval";
    const TITLE: &'static str = "Codebase retrieval";
    const DESCRIPTION: &'static str = "Search code like semantic_search, with filters applied \
before ranking (file types, paths, tests, language, subdirectory). Use when the search must stay in \
part of the tree.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CodebaseRetrievalRequest;
    type Output = SearchResponse;

    fn call(
        ctx: &ToolContext,
        input: CodebaseRetrievalRequest,
    ) -> Result<SearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(codebase_retrieval(&ws, &input)?)
    }
}
