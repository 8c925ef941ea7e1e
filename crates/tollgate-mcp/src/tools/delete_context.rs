//! `delete_context` (seed 002).

use tollgate::api::memory::{DeleteContextRequest, DeleteContextResponse, delete_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct DeleteContext;

impl Tool for DeleteContext {
    const NAME: &'static str = "delete_context";
    const TITLE: &'static str = "Delete context";
    const DESCRIPTION: &'static str = "Delete knowledge-store entries by id or thread.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_DELETE;

    type Input = DeleteContextRequest;
    type Output = DeleteContextResponse;

    fn call(
        ctx: &ToolContext,
        input: DeleteContextRequest,
    ) -> Result<DeleteContextResponse, ToolError> {
        super::with_memory(ctx, |memory| delete_context(memory, &input))
    }
}
