//! `get_context_by_ids` (seed 002).

use tollgate::api::memory::{GetContextByIdsRequest, GetContextByIdsResponse, get_context_by_ids};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct GetContextByIds;

impl Tool for GetContextByIds {
    const NAME: &'static str = "get_context_by_ids";
    const TITLE: &'static str = "Get context";
    const DESCRIPTION: &'static str = "Fetch knowledge-store entries by their ids.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = GetContextByIdsRequest;
    type Output = GetContextByIdsResponse;

    fn call(
        ctx: &ToolContext,
        input: GetContextByIdsRequest,
    ) -> Result<GetContextByIdsResponse, ToolError> {
        super::with_memory(ctx, |memory| get_context_by_ids(memory, &input))
    }
}
