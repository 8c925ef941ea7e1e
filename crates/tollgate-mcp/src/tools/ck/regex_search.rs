//! ck's `regex_search`: the working tree under `path`, in pages.

use tollgate::api::context::dialects::ck::{self, CkRegexRequest, CkRegexResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RegexSearch;

impl Tool for RegexSearch {
    const NAME: &'static str = "regex_search";
    const TITLE: &'static str = "Regex search (ck)";
    const DESCRIPTION: &'static str = "Search for code using regex patterns (ripgrep syntax, \
.gitignore honoured, no index needed), in pages (`cursor`, `has_more`).";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CkRegexRequest;
    type Output = CkRegexResponse;

    fn call(ctx: &ToolContext, input: CkRegexRequest) -> Result<CkRegexResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(ck::regex_search(&ws, &input)?)
    }
}
