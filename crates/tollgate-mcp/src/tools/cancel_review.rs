//! `cancel_review`: stop a review session for good.

use tollgate::api::session::SessionIdRequest;
use tollgate::session::{self, TransitionResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::store;

pub(crate) struct CancelReview;

impl Tool for CancelReview {
    const NAME: &'static str = "cancel_review";
    const TITLE: &'static str = "Cancel a review session";
    const DESCRIPTION: &'static str = "Cancel a review session for good; running steps finish, \
findings are kept. To stop for now, use pause_review.";
    const GROUP: Group = Group::In(Profile::Session);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    type Input = SessionIdRequest;
    type Output = TransitionResponse;

    fn call(ctx: &ToolContext, input: SessionIdRequest) -> Result<TransitionResponse, ToolError> {
        Ok(session::cancel(&store(ctx)?, &input.session_id)?)
    }
}
