//! `review_changes`: the configured model reviews a unified diff (upstream's tool of that name,
//! answering its `ReviewResult`).

use tollgate::api::review::{ChangesReview, ReviewChangesRequest, review_changes};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Tool, ToolContext};
use crate::tools::{MODEL_REVIEW, workspace_settings};

pub(crate) struct ReviewChanges;

impl Tool for ReviewChanges {
    const NAME: &'static str = "review_changes";
    const TITLE: &'static str = "Review changes with a model";
    const DESCRIPTION: &'static str = "Model review of a unified diff (needs [llm] configured): \
findings with priority 0-3, category, confidence and location, plus a verdict. Secrets are scrubbed \
before sending. For the deterministic gate use review_diff.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    const HINTS: crate::tool::Hints = MODEL_REVIEW;

    type Input = ReviewChangesRequest;
    type Output = ChangesReview;

    fn call(ctx: &ToolContext, input: ReviewChangesRequest) -> Result<ChangesReview, ToolError> {
        let settings = workspace_settings(ctx)?;
        Ok(review_changes(ctx.workspace(), settings, &input)?)
    }
}
