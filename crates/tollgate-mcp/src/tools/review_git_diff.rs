//! `review_git_diff`: the workspace repository's changes, reviewed by the configured model
//! (upstream's tool of that name).

use tollgate::api::review::{ReviewGitDiffRequest, ReviewGitDiffResponse, review_git_diff};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Tool, ToolContext};
use crate::tools::{MODEL_REVIEW, workspace_settings};

pub(crate) struct ReviewGitDiff;

impl Tool for ReviewGitDiff {
    const NAME: &'static str = "review_git_diff";
    const TITLE: &'static str = "Review git changes with a model";
    const DESCRIPTION: &'static str = "Review changes read from the workspace's git repository \
(staged by default, unstaged, head, a branch or a commit; base for base...target) like \
review_changes. Use when you have no diff text.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    const HINTS: crate::tool::Hints = MODEL_REVIEW;

    type Input = ReviewGitDiffRequest;
    type Output = ReviewGitDiffResponse;

    fn call(
        ctx: &ToolContext,
        input: ReviewGitDiffRequest,
    ) -> Result<ReviewGitDiffResponse, ToolError> {
        let settings = workspace_settings(ctx)?;
        Ok(review_git_diff(ctx.workspace(), settings, &input)?)
    }
}
