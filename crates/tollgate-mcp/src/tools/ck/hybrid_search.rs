//! ck's `hybrid_search`: the hybrid search, scored by how much of the query a chunk holds.

use tollgate::api::context::dialects::ck::{self, CkSearchRequest, CkSearchResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct HybridSearch;

impl Tool for HybridSearch {
    const NAME: &'static str = "hybrid_search";
    const TITLE: &'static str = "Hybrid search (ck)";
    const DESCRIPTION: &'static str = "Combine semantic search with keyword filtering: lexical, \
vector and history search fused; the score is the share of the query's words a chunk holds.";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CkSearchRequest;
    type Output = CkSearchResponse;

    fn call(ctx: &ToolContext, input: CkSearchRequest) -> Result<CkSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(ck::hybrid_search(&ws, &input)?)
    }
}
