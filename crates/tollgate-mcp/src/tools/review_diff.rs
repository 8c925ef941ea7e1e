//! `review_diff`: the review gate on a unified diff (upstream's tool of that name).

use tollgate::api::review::{ReviewDiffRequest, ReviewDiffResponse, review_diff_request_until};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::workspace_settings;

pub(crate) struct ReviewDiff;

impl Tool for ReviewDiff {
    const NAME: &'static str = "review_diff";
    const TITLE: &'static str = "Review a diff";
    const DESCRIPTION: &'static str = "Review a unified diff and decide the gate (should_fail, \
fail_reasons): preflight checks, secrets, the repository's invariants, risk score; deterministic \
unless enable_llm. Use first to check a change before commit or merge. Unset options come from \
tollgate.toml.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ReviewDiffRequest;
    type Output = ReviewDiffResponse;

    fn call(ctx: &ToolContext, input: ReviewDiffRequest) -> Result<ReviewDiffResponse, ToolError> {
        let settings = workspace_settings(ctx)?;
        // A cancelled call kills running analyzers and skips model passes not yet started.
        Ok(review_diff_request_until(
            ctx.workspace(),
            settings,
            &input,
            ctx.control(),
        )?)
    }
}
