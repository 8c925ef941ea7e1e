//! `symbol_graph`: a context tool (upstream's name and parameters).

use tollgate::api::context::request::{SymbolGraphRequest, SymbolGraphResponse};
use tollgate::api::context::symbol_graph;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SymbolGraph;

impl Tool for SymbolGraph {
    const NAME: &'static str = "symbol_graph";
    const TITLE: &'static str = "Symbol graph";
    const DESCRIPTION: &'static str = "Where a symbol is defined, who calls it, or which files \
import it, from the index's symbols and imports.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SymbolGraphRequest;
    type Output = SymbolGraphResponse;

    fn call(
        ctx: &ToolContext,
        input: SymbolGraphRequest,
    ) -> Result<SymbolGraphResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(symbol_graph(&ws, &input)?)
    }
}
