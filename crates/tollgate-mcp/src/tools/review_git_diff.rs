//! `review_git_diff`: the workspace repository's changes, reviewed by the configured model
//! (upstream's tool of that name).

use tollgate::review::{ReviewGitDiffRequest, ReviewGitDiffResponse, review_git_diff};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Tool, ToolContext};
use crate::tools::{MODEL_REVIEW, workspace_settings};

pub(crate) struct ReviewGitDiff;

impl Tool for ReviewGitDiff {
    const NAME: &'static str = "review_git_diff";
    const TITLE: &'static str = "Review git changes with a model";
    const DESCRIPTION: &'static str = "Read a diff from the workspace's git repository and \
review it like review_changes. target: `staged` (default: index against HEAD), `unstaged` \
(working tree against the index), `head` (every uncommitted change against HEAD), or a branch \
or commit (that commit against its parent). With base, the diff is base...target (from their \
merge base, what a pull request shows). Refs must name commits; anything starting with `-`, \
containing whitespace or `..` is refused. include_patterns keeps matching files only; options \
are review_changes' (without diff). Returns git_info (what was compared, commit ids, sizes) and \
the review. Nothing to review returns at once, without a model call.";
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
