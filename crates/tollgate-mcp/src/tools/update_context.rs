//! `update_context` (seed 002).

use tollgate::api::memory::{UpdateContextRequest, UpdateContextResponse, update_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct UpdateContext;

impl Tool for UpdateContext {
    const NAME: &'static str = "update_context";
    const TITLE: &'static str = "Update context";
    const DESCRIPTION: &'static str = "Update an entry's text, metadata, tags or images.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_UPDATE;

    type Input = UpdateContextRequest;
    type Output = UpdateContextResponse;

    fn call(
        ctx: &ToolContext,
        input: UpdateContextRequest,
    ) -> Result<UpdateContextResponse, ToolError> {
        super::with_memory(ctx, |memory| update_context(memory, &input))
    }
}
