//! `memory_store` (seed 000).

use tollgate::api::notes::{MemoryStoreRequest, MemoryStoreResponse, memory_store};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct MemoryStore;

impl Tool for MemoryStore {
    const NAME: &'static str = "memory_store";
    const TITLE: &'static str = "Store a memory";
    const DESCRIPTION: &'static str = "Remember a note with kind, language, path, tags, priority.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_WRITE;

    type Input = MemoryStoreRequest;
    type Output = MemoryStoreResponse;

    fn call(
        ctx: &ToolContext,
        input: MemoryStoreRequest,
    ) -> Result<MemoryStoreResponse, ToolError> {
        super::with_memory(ctx, |memory| memory_store(memory, &input))
    }
}
