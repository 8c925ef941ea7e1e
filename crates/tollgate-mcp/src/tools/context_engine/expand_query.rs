//! Context-Engine's `expand_query`, deterministic: no model is asked.

use tollgate::api::context::dialects::context_engine::{
    self, ExpandQueryRequest, ExpandQueryResponse,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ExpandQuery;

impl Tool for ExpandQuery {
    const NAME: &'static str = "expand_query";
    const TITLE: &'static str = "Expand query (Context-Engine)";
    const DESCRIPTION: &'static str = "Alternative spellings of a query for code search \
(snake_case, camelCase, plain words); deterministic, no model.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ExpandQueryRequest;
    type Output = ExpandQueryResponse;

    fn call(
        _ctx: &ToolContext,
        input: ExpandQueryRequest,
    ) -> Result<ExpandQueryResponse, ToolError> {
        Ok(context_engine::expand_query(&input)?)
    }
}
