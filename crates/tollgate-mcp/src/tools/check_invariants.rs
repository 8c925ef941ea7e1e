//! `check_invariants`: one invariants file against a diff (upstream's tool of that name).

use tollgate::review::{CheckInvariantsRequest, CheckInvariantsResult, check_invariants};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct CheckInvariants;

impl Tool for CheckInvariants {
    const NAME: &'static str = "check_invariants";
    const TITLE: &'static str = "Check invariants";
    const DESCRIPTION: &'static str = "Run the repository's YAML invariants \
(`.review-invariants.yml` by default) against a unified diff, deterministically. Returns upstream's \
shape: success, invariants_path, checked_invariants, warnings, findings (each at its exact \
line). A missing or invalid invariants file is a result with success=false, error and \
error_code (every problem with its line and column); a path outside the workspace is refused.";
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
