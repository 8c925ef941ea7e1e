//! `reactive_review_pr`: start a review session over a whole pull request (upstream's tool).

use tollgate::session::{self, ReactiveReviewPrRequest, ReactiveReviewPrResponse, SessionState};

use crate::error::{INVALID_INPUT, ToolError};
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, spawn_runner, store};
use crate::tools::workspace_settings;

pub(crate) struct ReactiveReviewPr;

impl Tool for ReactiveReviewPr {
    const NAME: &'static str = "reactive_review_pr";
    const TITLE: &'static str = "Start a PR review session";
    const DESCRIPTION: &'static str = "Start a review of a whole pull request in the background \
and return its session_id at once. The PR is the diff from the merge base of base_ref and \
commit_hash to commit_hash, restricted to changed_files (a list, CSV or JSON array string). \
The work is split into steps (groups of files balanced by changed lines, plus one whole-PR \
step), each running the full review pipeline (deterministic checks, secrets, invariants from \
the base commit, configured static analyzers) on max_workers threads (default 3; parallel=false \
means 1). Poll get_review_status; pause_review / resume_review / cancel_review steer it; \
get_review_telemetry gives timings. Sessions are stored in .tollgate/tollgate.db and survive a \
server restart (resume_review continues with the unfinished steps).";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

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
        let mut created = session::create(&store, ctx.workspace(), &input, &settings)?;
        let claimed = session::claim(&store, &created.session_id, &settings)?;
        spawn_runner(ctx, claimed)?;
        created.status = SessionState::Running;
        Ok(created)
    }
}
