//! `check_invariants`: one invariants file against a diff (upstream's tool of that name).

use tollgate::api::review::{CheckInvariantsRequest, CheckInvariantsResult, check_invariants};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CheckInvariants;

impl Tool for CheckInvariants {
    const NAME: &'static str = "check_invariants";
    const TITLE: &'static str = "Check invariants";
    const DESCRIPTION: &'static str = "Run only the repository's YAML invariants \
(.review-invariants.yml) against a unified diff. Use when you need just the project's own rules; \
review_diff runs them too.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CheckInvariantsRequest;
    type Output = CheckInvariantsResult;

    fn call(
        ctx: &ToolContext,
        input: CheckInvariantsRequest,
    ) -> Result<CheckInvariantsResult, ToolError> {
        Ok(check_invariants(ctx.workspace(), &input)?)
    }
}
