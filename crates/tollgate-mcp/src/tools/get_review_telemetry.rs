//! `get_review_telemetry`: how a review session spent its time (upstream's tool).

use tollgate::session::{self, SessionIdRequest, SessionTelemetry};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, store};

pub(crate) struct GetReviewTelemetry;

impl Tool for GetReviewTelemetry {
    const NAME: &'static str = "get_review_telemetry";
    const TITLE: &'static str = "Review session telemetry";
    const DESCRIPTION: &'static str = "Per-step timings (start, end, duration, worker), attempts \
and errors, findings reported and new after deduplication, model usage (passes, input and \
output tokens, cost, cache hits; zero when no model pass ran), totals, and worker utilisation \
(step time over workers x active time) of a review session.";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SessionIdRequest;
    type Output = SessionTelemetry;

    fn call(ctx: &ToolContext, input: SessionIdRequest) -> Result<SessionTelemetry, ToolError> {
        Ok(session::telemetry(
            &store(ctx)?,
            &input.session_id,
            &settings(),
        )?)
    }
}
