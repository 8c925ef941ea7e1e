//! `update_context_batch` (seed 002).

use tollgate::api::memory::{BatchResponse, UpdateContextBatchRequest, update_context_batch};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct UpdateContextBatch;

impl Tool for UpdateContextBatch {
    const NAME: &'static str = "update_context_batch";
    const TITLE: &'static str = "Update batch";
    const DESCRIPTION: &'static str = "Update up to 100 knowledge-store entries at once.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_UPDATE;

    type Input = UpdateContextBatchRequest;
    type Output = BatchResponse;

    fn call(
        ctx: &ToolContext,
        input: UpdateContextBatchRequest,
    ) -> Result<BatchResponse, ToolError> {
        super::with_memory(ctx, |memory| update_context_batch(memory, &input))
    }
}
