//! `review_auto`: review_diff for a given diff, review_git_diff otherwise (upstream's tool of
//! that name).

use tollgate::api::review::{ReviewAutoRequest, ReviewAutoResponse, review_auto};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Tool, ToolContext};
use crate::tools::{MODEL_REVIEW, workspace_settings};

pub(crate) struct ReviewAuto;

impl Tool for ReviewAuto {
    const NAME: &'static str = "review_auto";
    const TITLE: &'static str = "Review (choose the tool)";
    const DESCRIPTION: &'static str = "Review with whatever you have: a non-blank diff runs \
review_diff, otherwise review_git_diff reviews the workspace's git changes. Use when unsure which \
review tool fits. Returns {selected_tool, rationale, output}.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    const HINTS: crate::tool::Hints = MODEL_REVIEW;

    type Input = ReviewAutoRequest;
    type Output = ReviewAutoResponse;

    fn call(ctx: &ToolContext, input: ReviewAutoRequest) -> Result<ReviewAutoResponse, ToolError> {
        let settings = workspace_settings(ctx)?;
        Ok(review_auto(ctx.workspace(), settings, &input)?)
    }
}
