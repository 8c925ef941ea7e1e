//! `get_review_status`: where a review session is (upstream's tool).

use tollgate::api::session::SessionStatusRequest;
use tollgate::session::{self, SessionStatus};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, store};

pub(crate) struct GetReviewStatus;

impl Tool for GetReviewStatus {
    const NAME: &'static str = "get_review_status";
    const TITLE: &'static str = "Review session status";
    const DESCRIPTION: &'static str = "Poll a review session: state, progress with ETA, findings by \
severity (include_findings for the list), stalled detection.";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = SessionStatusRequest;
    type Output = SessionStatus;

    fn call(ctx: &ToolContext, input: SessionStatusRequest) -> Result<SessionStatus, ToolError> {
        let store = store(ctx)?;
        Ok(session::status(
            &store,
            &input.session_id,
            input.include_findings,
            &settings(),
        )?)
    }
}
