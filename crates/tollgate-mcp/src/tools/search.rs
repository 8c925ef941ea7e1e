//! `search` (seed 004's HTTP API): keyword, semantic or hybrid search over the code index and
//! the knowledge store. Offered on `POST /tools/search` only: over MCP the context and memory
//! tools do this.

use tollgate::api::knowledge::{ToolsSearchRequest, ToolsSearchResponse, tools_search};

use crate::error::ToolError;
use crate::tool::{Group, Hints, Surface, Tool, ToolContext};

pub(crate) struct Search;

impl Tool for Search {
    const NAME: &'static str = "search";
    const TITLE: &'static str = "Search";
    const DESCRIPTION: &'static str =
        "Search indexed code and knowledge by keyword, semantic or hybrid query.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;
    const SURFACE: Surface = Surface::HttpApi { get: false };

    type Input = ToolsSearchRequest;
    type Output = ToolsSearchResponse;

    fn call(
        ctx: &ToolContext,
        input: ToolsSearchRequest,
    ) -> Result<ToolsSearchResponse, ToolError> {
        let workspace = ctx.open_workspace()?;
        super::with_memory(ctx, |memory| tools_search(&workspace, memory, &input))
    }
}
