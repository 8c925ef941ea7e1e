//! `semantic_search_context` (seed 002).

use tollgate::api::memory::{
    SemanticSearchRequest, SemanticSearchResponse, semantic_search_context,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SemanticSearchContext;

impl Tool for SemanticSearchContext {
    const NAME: &'static str = "semantic_search_context";
    const TITLE: &'static str = "Semantic search";
    const DESCRIPTION: &'static str = "Search knowledge-store entries by meaning.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SemanticSearchRequest;
    type Output = SemanticSearchResponse;

    fn call(
        ctx: &ToolContext,
        input: SemanticSearchRequest,
    ) -> Result<SemanticSearchResponse, ToolError> {
        super::with_memory(ctx, |memory| semantic_search_context(memory, &input))
    }
}
