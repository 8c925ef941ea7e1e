//! `delete_context_batch` (seed 002).

use tollgate::api::memory::{DeleteBatchResponse, DeleteContextBatchRequest, delete_context_batch};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct DeleteContextBatch;

impl Tool for DeleteContextBatch {
    const NAME: &'static str = "delete_context_batch";
    const TITLE: &'static str = "Delete batch";
    const DESCRIPTION: &'static str = "Delete knowledge entries by ids, threads, age, source.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_DELETE;

    type Input = DeleteContextBatchRequest;
    type Output = DeleteBatchResponse;

    fn call(
        ctx: &ToolContext,
        input: DeleteContextBatchRequest,
    ) -> Result<DeleteBatchResponse, ToolError> {
        super::with_memory(ctx, |memory| delete_context_batch(memory, &input))
    }
}
