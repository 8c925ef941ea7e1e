//! `fts_search_context` (seed 002).

use tollgate::api::memory::{FtsSearchRequest, FtsSearchResponse, fts_search_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct FtsSearchContext;

impl Tool for FtsSearchContext {
    const NAME: &'static str = "fts_search_context";
    const TITLE: &'static str = "Full-text search";
    const DESCRIPTION: &'static str = "Full-text search (BM25) of knowledge entries.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = FtsSearchRequest;
    type Output = FtsSearchResponse;

    fn call(ctx: &ToolContext, input: FtsSearchRequest) -> Result<FtsSearchResponse, ToolError> {
        super::with_memory(ctx, |memory| fts_search_context(memory, &input))
    }
}
