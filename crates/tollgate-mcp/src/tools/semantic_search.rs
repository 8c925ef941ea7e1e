//! `semantic_search`: a context tool (upstream's name and parameters).

use tollgate::api::context::request::{SearchResponse, SemanticSearchRequest};
use tollgate::api::context::semantic_search;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SemanticSearch;

impl Tool for SemanticSearch {
    const NAME: &'static str = "semantic_search";
    const TITLE: &'static str = "Semantic search";
    const DESCRIPTION: &'static str = "Find code by meaning and identifiers (hybrid lexical, \
vector, symbol and history search); returns ranked chunks with path, lines and snippet. Use to \
locate code you cannot name exactly.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SemanticSearchRequest;
    type Output = SearchResponse;

    fn call(ctx: &ToolContext, input: SemanticSearchRequest) -> Result<SearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(semantic_search(&ws, &input)?)
    }
}
