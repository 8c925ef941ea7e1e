//! `get_review_telemetry`: how a review session spent its time (upstream's tool).

use tollgate::api::session::SessionIdRequest;
use tollgate::session::{self, SessionTelemetry};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, store};

pub(crate) struct GetReviewTelemetry;

impl Tool for GetReviewTelemetry {
    const NAME: &'static str = "get_review_telemetry";
    const TITLE: &'static str = "Review session telemetry";
    const DESCRIPTION: &'static str = "Timings, attempts, errors, model usage and worker \
utilisation of a review session's steps.";
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
