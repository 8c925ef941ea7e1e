//! `search_tests_for`: a context tool (upstream's name and parameters).

use tollgate::api::context::request::{SearchResponse, SearchTestsRequest};
use tollgate::api::context::search_tests_for;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchTestsFor;

impl Tool for SearchTestsFor {
    const NAME: &'static str = "search_tests_for";
    const TITLE: &'static str = "Search tests for";
    const DESCRIPTION: &'static str = "Find the tests for a symbol, file or behaviour (search \
restricted to test files).";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SearchTestsRequest;
    type Output = SearchResponse;

    fn call(ctx: &ToolContext, input: SearchTestsRequest) -> Result<SearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(search_tests_for(&ws, &input)?)
    }
}
