//! `symbol_graph`: a context tool (upstream's name and parameters).

use tollgate::context::request::{SymbolGraphRequest, SymbolGraphResponse};
use tollgate::context::symbol_graph;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SymbolGraph;

impl Tool for SymbolGraph {
    const NAME: &'static str = "symbol_graph";
    const TITLE: &'static str = "Symbol graph";
    const DESCRIPTION: &'static str = "Answer where a symbol is defined (query_type=definition), where it is used (callers) or which files import it (importers), from the symbols and imports extracted at indexing; falls back to hybrid search in the same shape when the outlines know nothing (source says which). Filters: language, under; limit (default 20).";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::BUILDS_INDEX;

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
