//! ck's `semantic_search`: pure vector ranking.

use tollgate::api::context::dialects::ck::{self, CkSearchRequest, CkSearchResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SemanticSearch;

impl Tool for SemanticSearch {
    const NAME: &'static str = "semantic_search";
    const TITLE: &'static str = "Semantic search (ck)";
    const DESCRIPTION: &'static str = "Search for code semantically using embeddings: chunks \
ranked by cosine similarity to the query, over `threshold`, in pages (`cursor`, `has_more`).";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CkSearchRequest;
    type Output = CkSearchResponse;

    fn call(ctx: &ToolContext, input: CkSearchRequest) -> Result<CkSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(ck::semantic_search(&ws, &input)?)
    }
}
