//! `learn_dismiss`: record a finding as dismissed in the workspace's `.review-learnings.jsonl`.

use tollgate::api::learn::{LearnRecordRequest, LearnRecordResponse, learn_record, now_rfc3339};
use tollgate::learnings::Disposition;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct LearnDismiss;

impl Tool for LearnDismiss {
    const NAME: &'static str = "learn_dismiss";
    const TITLE: &'static str = "Dismiss a finding";
    const DESCRIPTION: &'static str =
        "Dismiss a finding (fields from review_diff): out of the gate while its code is unchanged.";
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
            Disposition::Dismissed,
            input,
            &now_rfc3339(),
        )?;
        super::mirror_learnings(ctx);
        Ok(recorded)
    }
}
