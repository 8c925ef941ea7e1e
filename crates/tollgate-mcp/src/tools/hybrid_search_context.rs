//! `hybrid_search_context` (seed 002).

use tollgate::api::memory::{HybridSearchRequest, HybridSearchResponse, hybrid_search_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct HybridSearchContext;

impl Tool for HybridSearchContext {
    const NAME: &'static str = "hybrid_search_context";
    const TITLE: &'static str = "Hybrid search";
    const DESCRIPTION: &'static str = "Full-text and semantic search, fused by RRF.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = HybridSearchRequest;
    type Output = HybridSearchResponse;

    fn call(
        ctx: &ToolContext,
        input: HybridSearchRequest,
    ) -> Result<HybridSearchResponse, ToolError> {
        super::with_memory(ctx, |memory| hybrid_search_context(memory, &input))
    }
}
