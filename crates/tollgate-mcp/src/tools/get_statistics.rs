//! `get_statistics` (seed 002).

use tollgate::api::memory::{StatisticsResponse, get_statistics};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::NoInput;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct GetStatistics;

impl Tool for GetStatistics {
    const NAME: &'static str = "get_statistics";
    const TITLE: &'static str = "Statistics";
    const DESCRIPTION: &'static str = "Knowledge-store entry counts and its size.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = StatisticsResponse;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<StatisticsResponse, ToolError> {
        super::with_memory(ctx, get_statistics)
    }
}
