//! Context-Engine's `search_config_for`: repo_search over configuration files.

use tollgate::api::context::dialects::context_engine::{
    self, PresetSearchRequest, RepoSearchResponse,
};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct SearchConfigFor;

impl Tool for SearchConfigFor {
    const NAME: &'static str = "search_config_for";
    const TITLE: &'static str = "Search config for (Context-Engine)";
    const DESCRIPTION: &'static str = "Find configuration files (YAML, JSON, TOML, INI, …) related to a query; the result is repo_search's.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = PresetSearchRequest;
    type Output = RepoSearchResponse;

    fn call(
        ctx: &ToolContext,
        input: PresetSearchRequest,
    ) -> Result<RepoSearchResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::search_config_for(&ws, &input)?)
    }
}
