//! `get` (seed 004's HTTP API): a whole document, code chunk or knowledge entry, by the id a
//! `search` gave. Offered on `POST /tools/get` only.

use tollgate::api::knowledge::{ToolsDocument, ToolsGetRequest, tools_get};

use crate::error::ToolError;
use crate::tool::{Group, Hints, Surface, Tool, ToolContext};

pub(crate) struct Get;

impl Tool for Get {
    const NAME: &'static str = "get";
    const TITLE: &'static str = "Get document";
    const DESCRIPTION: &'static str = "Get a document's full content by the id a search gave.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;
    const SURFACE: Surface = Surface::HttpApi { get: false };

    type Input = ToolsGetRequest;
    type Output = ToolsDocument;

    fn call(ctx: &ToolContext, input: ToolsGetRequest) -> Result<ToolsDocument, ToolError> {
        let workspace = ctx.open_workspace()?;
        super::with_memory(ctx, |memory| tools_get(&workspace, memory, &input))
    }
}
