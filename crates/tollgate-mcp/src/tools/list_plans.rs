//! `list_plans`: list saved plans, most recently updated first; filter by status (ready, approved, executing, completed, failed) and tags (all must match); limit defaults to 50.

use tollgate::api::plan::{FrontEnd, ListPlansRequest, list_plans};
use tollgate::plan::lifecycle::library::ListPlansResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ListPlans;

impl Tool for ListPlans {
    const NAME: &'static str = "list_plans";
    const TITLE: &'static str = "List plans";
    const DESCRIPTION: &'static str =
        "List saved plans, newest first, filtered by status and tags.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ListPlansRequest;
    type Output = ListPlansResponse;

    fn call(ctx: &ToolContext, input: ListPlansRequest) -> Result<ListPlansResponse, ToolError> {
        Ok(list_plans(&super::plan_store(ctx)?, input, FrontEnd::Mcp)?)
    }
}
