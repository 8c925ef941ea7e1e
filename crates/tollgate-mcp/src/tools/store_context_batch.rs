//! `store_context_batch` (seed 002).

use tollgate::api::memory::{BatchResponse, StoreContextBatchRequest, store_context_batch};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct StoreContextBatch;

impl Tool for StoreContextBatch {
    const NAME: &'static str = "store_context_batch";
    const TITLE: &'static str = "Store batch";
    const DESCRIPTION: &'static str = "Store up to 100 knowledge-store entries at once.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_WRITE;

    type Input = StoreContextBatchRequest;
    type Output = BatchResponse;

    fn call(
        ctx: &ToolContext,
        input: StoreContextBatchRequest,
    ) -> Result<BatchResponse, ToolError> {
        super::with_memory(ctx, |memory| store_context_batch(memory, &input))
    }
}
