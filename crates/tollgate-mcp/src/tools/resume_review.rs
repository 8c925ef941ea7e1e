//! `resume_review`: continue a paused review session (upstream's tool).

use tollgate::session::{self, Resumed, SessionIdRequest, SessionState, TransitionResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, spawn_runner, store};

pub(crate) struct ResumeReview;

impl Tool for ResumeReview {
    const NAME: &'static str = "resume_review";
    const TITLE: &'static str = "Resume a review session";
    const DESCRIPTION: &'static str = "Resume a paused review session: its unfinished steps run \
(finished ones are not repeated), in this server unless the process that ran it is still \
finishing its last steps. Also continues a session whose worker died (after a restart). \
Resuming a running or ended session is an INVALID_STATE_TRANSITION error.";
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
        let store = store(ctx)?;
        let message = match session::resume(&store, &input.session_id, &settings())? {
            Resumed::ByOwner { pid } => {
                format!("resumed: process {pid}, which was running it, carries on")
            }
            Resumed::Claimed(claimed) => {
                spawn_runner(ctx, claimed)?;
                "resumed: the unfinished steps run in this server".to_string()
            }
        };
        Ok(TransitionResponse {
            session_id: input.session_id,
            status: SessionState::Running,
            message,
        })
    }
}
