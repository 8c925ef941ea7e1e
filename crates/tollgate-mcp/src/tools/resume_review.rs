//! `resume_review`: continue a paused review session (upstream's tool).

use tollgate::api::session::SessionIdRequest;
use tollgate::session::{self, Resumed, SessionState, TransitionResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::session_common::{settings, spawn_runner, store};

pub(crate) struct ResumeReview;

impl Tool for ResumeReview {
    const NAME: &'static str = "resume_review";
    const TITLE: &'static str = "Resume a review session";
    const DESCRIPTION: &'static str = "Resume a paused (or orphaned) review session; finished steps \
are not repeated.";
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
