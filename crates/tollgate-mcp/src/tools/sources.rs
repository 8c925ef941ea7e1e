//! `sources` (seed 004's HTTP API): the searchable sources with their document and chunk
//! counts (the code index, each configured `[sources.<name>]`, each other memory thread).
//! Offered on `GET /tools/sources` (and `POST`) only.

use tollgate::api::knowledge::{ToolsSourcesResponse, tools_sources};

use crate::error::ToolError;
use crate::tool::{Group, Hints, NoInput, Surface, Tool, ToolContext};

pub(crate) struct Sources;

impl Tool for Sources {
    const NAME: &'static str = "sources";
    const TITLE: &'static str = "Sources";
    const DESCRIPTION: &'static str = "List the searchable sources with their counts.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;
    const SURFACE: Surface = Surface::HttpApi { get: true };

    type Input = NoInput;
    type Output = ToolsSourcesResponse;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<ToolsSourcesResponse, ToolError> {
        let workspace = ctx.open_workspace()?;
        let configured = tollgate::api::sources::configured(&super::workspace_settings(ctx)?)?;
        super::with_memory(ctx, |memory| tools_sources(&workspace, memory, &configured))
    }
}
