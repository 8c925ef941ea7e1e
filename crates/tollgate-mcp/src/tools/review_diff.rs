//! `review_diff`: the review gate on a unified diff (upstream's tool of that name).

use tollgate::review::{ReviewDiffRequest, ReviewDiffResponse, review_diff_request_until};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::workspace_settings;

pub(crate) struct ReviewDiff;

impl Tool for ReviewDiff {
    const NAME: &'static str = "review_diff";
    const TITLE: &'static str = "Review a diff";
    const DESCRIPTION: &'static str = "Review a unified diff: deterministic by default (no \
model, no network): preflight checks (tests missing, public API, config, dependencies, hotspots, large \
changes, secrets in added lines), the repository's invariants file, a classification and a 1-5 \
risk score, then the gate: `should_fail` with `fail_reasons`. Every finding points at its exact \
line and has a stable fingerprint. Options follow upstream's names and defaults \
(confidence_threshold 0.55, max_findings 20, fail_on_severity CRITICAL); unset options take the \
workspace's tollgate.toml. include_sarif / include_markdown add the reports as strings. \
enable_llm adds model passes (needs [llm] in tollgate.toml): a structural pass and, when the \
risk reaches risk_threshold or it found something high, a detailed pass; the diff is split to \
token_budget highest-risk files first, secrets are scrubbed, and every model location is checked \
against the diff. Options that had no effect (no provider, no analyzer ran) are reported in \
metadata.warnings.";
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
