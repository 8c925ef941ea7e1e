//! `memory_find` (seed 000).

use tollgate::api::notes::{MemoryFindRequest, MemoryFindResponse, memory_find};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct MemoryFind;

impl Tool for MemoryFind {
    const NAME: &'static str = "memory_find";
    const TITLE: &'static str = "Find memories";
    const DESCRIPTION: &'static str = "Hybrid search of the memories, filtered before the cut.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = MemoryFindRequest;
    type Output = MemoryFindResponse;

    fn call(ctx: &ToolContext, input: MemoryFindRequest) -> Result<MemoryFindResponse, ToolError> {
        super::with_memory(ctx, |memory| memory_find(memory, &input))
    }
}
