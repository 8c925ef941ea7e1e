//! `regex_search`: a context tool (upstream's name and parameters).

use tollgate::api::context::regex_search;
use tollgate::api::context::request::{RegexSearchRequest, RegexSearchResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RegexSearch;

impl Tool for RegexSearch {
    const NAME: &'static str = "regex_search";
    const TITLE: &'static str = "Regex search";
    const DESCRIPTION: &'static str = "Search the working tree with a regex (ripgrep syntax, \
.gitignore honoured, no index needed). Use for exact text; semantic_search for meaning.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = RegexSearchRequest;
    type Output = RegexSearchResponse;

    fn call(
        ctx: &ToolContext,
        input: RegexSearchRequest,
    ) -> Result<RegexSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(regex_search(&ws, &input)?)
    }
}
