//! `search_callers_for`: a context tool (upstream's name and parameters).

use tollgate::api::context::request::{SearchCallersRequest, SymbolGraphResponse};
use tollgate::api::context::search_callers_for;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchCallersFor;

impl Tool for SearchCallersFor {
    const NAME: &'static str = "search_callers_for";
    const TITLE: &'static str = "Search callers for";
    const DESCRIPTION: &'static str = "Find the call sites and other uses of a symbol across the \
workspace.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SearchCallersRequest;
    type Output = SymbolGraphResponse;

    fn call(
        ctx: &ToolContext,
        input: SearchCallersRequest,
    ) -> Result<SymbolGraphResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(search_callers_for(&ws, &input)?)
    }
}
