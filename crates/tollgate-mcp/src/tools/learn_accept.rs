//! `learn_accept`: record a finding as accepted in the workspace's `.review-learnings.jsonl`.

use tollgate::api::learn::{LearnRecordRequest, LearnRecordResponse, learn_record, now_rfc3339};
use tollgate::learnings::Disposition;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct LearnAccept;

impl Tool for LearnAccept {
    const NAME: &'static str = "learn_accept";
    const TITLE: &'static str = "Accept a finding";
    const DESCRIPTION: &'static str =
        "Accept a finding (fields from review_diff): the team wants it flagged.";
    const GROUP: Group = Group::In(Profile::Memory);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

    type Input = LearnRecordRequest;
    type Output = LearnRecordResponse;

    fn call(
        ctx: &ToolContext,
        input: LearnRecordRequest,
    ) -> Result<LearnRecordResponse, ToolError> {
        let recorded = learn_record(
            ctx.workspace(),
            Disposition::Accepted,
            input,
            &now_rfc3339(),
        )?;
        super::mirror_learnings(ctx);
        Ok(recorded)
    }
}
