//! `reactive_review_pr`: start a review session over a whole pull request (upstream's tool).

use tollgate::api::session::{ReactiveReviewPrRequest, reactive_review_pr};
use tollgate::session::{self, ReactiveReviewPrResponse, SessionState};

use crate::error::{INVALID_INPUT, ToolError};
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, spawn_runner, store};
use crate::tools::workspace_settings;

pub(crate) struct ReactiveReviewPr;

impl Tool for ReactiveReviewPr {
    const NAME: &'static str = "reactive_review_pr";
    const TITLE: &'static str = "Start a PR review session";
    const DESCRIPTION: &'static str = "Review a whole pull request (merge base of base_ref to \
commit_hash) in the background; returns a session_id at once. Poll get_review_status; \
pause/resume/cancel_review steer it. Use for large PRs.";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    const LONG_RUNNING: bool = true;

    type Input = ReactiveReviewPrRequest;
    type Output = ReactiveReviewPrResponse;

    fn call(
        ctx: &ToolContext,
        input: ReactiveReviewPrRequest,
    ) -> Result<ReactiveReviewPrResponse, ToolError> {
        // A broken tollgate.toml is reported now, not by a background thread nobody watches.
        workspace_settings(ctx)?
            .resolve()
            .map_err(|err| ToolError::new(INVALID_INPUT, err.to_string()))?;
        let store = store(ctx)?;
        let settings = settings();
        let mut created = reactive_review_pr(&store, ctx.workspace(), &input, &settings)?;
        let claimed = session::claim(&store, &created.session_id, &settings)?;
        spawn_runner(ctx, claimed)?;
        created.status = SessionState::Running;
        Ok(created)
    }
}
