//! `review_changes`: the configured model reviews a unified diff (upstream's tool of that name,
//! answering its `ReviewResult`).

use tollgate::review::{ChangesReview, ReviewChangesRequest, review_changes};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Tool, ToolContext};
use crate::tools::{MODEL_REVIEW, workspace_settings};

pub(crate) struct ReviewChanges;

impl Tool for ReviewChanges {
    const NAME: &'static str = "review_changes";
    const TITLE: &'static str = "Review changes with a model";
    const DESCRIPTION: &'static str = "Model review of a unified diff, answering upstream's \
ReviewResult: findings with priority 0-3 (P0 = must fix), category, confidence, exact location \
and an optional suggestion, plus an overall verdict (`patch is correct`, `patch is incorrect`, \
`needs attention`) with its explanation. Needs a model ([llm] in tollgate.toml or \
TOLLGATE_LLM_*; without one: LLM_NOT_CONFIGURED). Secrets are scrubbed from the diff and from \
file_contexts before anything is sent; large diffs are split to the token budget, highest-risk \
files first; every location is checked against the diff (findings elsewhere are dropped, \
is_on_changed_line is computed from the diff). Filters in upstream's order: \
confidence_threshold (0.7), changed_lines_only (true; P0 always kept), categories, sort by \
priority, max_findings (20). A model failure still returns a result (`needs attention`, reason \
in warnings). For the deterministic gate use review_diff.";
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
