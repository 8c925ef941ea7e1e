//! `search_context` (seed 002).

use tollgate::api::memory::{SearchContextRequest, SearchContextResponse, search_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchContext;

impl Tool for SearchContext {
    const NAME: &'static str = "search_context";
    const TITLE: &'static str = "Search context";
    const DESCRIPTION: &'static str = "List knowledge entries by filters, newest first.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SearchContextRequest;
    type Output = SearchContextResponse;

    fn call(
        ctx: &ToolContext,
        input: SearchContextRequest,
    ) -> Result<SearchContextResponse, ToolError> {
        super::with_memory(ctx, |memory| search_context(memory, &input))
    }
}
