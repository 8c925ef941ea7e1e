//! `learn_list`: the workspace's review learnings, newest first.

use tollgate::api::learn::{LearnListRequest, LearnListResponse, learn_list};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct LearnList;

impl Tool for LearnList {
    const NAME: &'static str = "learn_list";
    const TITLE: &'static str = "List learnings";
    const DESCRIPTION: &'static str =
        "List the team's finding decisions (dismissed, accepted, fixed).";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = LearnListRequest;
    type Output = LearnListResponse;

    fn call(ctx: &ToolContext, input: LearnListRequest) -> Result<LearnListResponse, ToolError> {
        Ok(learn_list(ctx.workspace(), &input)?)
    }
}
