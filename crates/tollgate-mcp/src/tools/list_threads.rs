//! `list_threads` (seed 002).

use tollgate::api::memory::{ListThreadsResponse, list_threads};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::NoInput;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ListThreads;

impl Tool for ListThreads {
    const NAME: &'static str = "list_threads";
    const TITLE: &'static str = "List threads";
    const DESCRIPTION: &'static str = "Knowledge-store threads with entry counts.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = ListThreadsResponse;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<ListThreadsResponse, ToolError> {
        super::with_memory(ctx, list_threads)
    }
}
