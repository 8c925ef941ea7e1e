//! `store_context` (seed 002).

use tollgate::api::memory::{StoreContextRequest, StoreContextResponse, store_context};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct StoreContext;

impl Tool for StoreContext {
    const NAME: &'static str = "store_context";
    const TITLE: &'static str = "Store context";
    const DESCRIPTION: &'static str = "Store an entry in a thread; secrets are masked first.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::MEMORY_WRITE;

    type Input = StoreContextRequest;
    type Output = StoreContextResponse;

    fn call(
        ctx: &ToolContext,
        input: StoreContextRequest,
    ) -> Result<StoreContextResponse, ToolError> {
        super::with_memory(ctx, |memory| store_context(memory, &input))
    }
}
