//! `pause_review`: stop starting new steps of a review session (upstream's tool).

use tollgate::api::session::SessionIdRequest;
use tollgate::session::{self, TransitionResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::store;

pub(crate) struct PauseReview;

impl Tool for PauseReview {
    const NAME: &'static str = "pause_review";
    const TITLE: &'static str = "Pause a review session";
    const DESCRIPTION: &'static str = "Pause a review session: running steps finish, no new step \
starts; resume_review continues it.";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

    type Input = SessionIdRequest;
    type Output = TransitionResponse;

    fn call(ctx: &ToolContext, input: SessionIdRequest) -> Result<TransitionResponse, ToolError> {
        Ok(session::pause(&store(ctx)?, &input.session_id)?)
    }
}
