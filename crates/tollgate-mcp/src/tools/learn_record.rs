//! `learn_dismiss` and `learn_accept`: record a finding's disposition in the workspace's
//! `.review-learnings.jsonl`. One request, one core call; the two tools differ only in the
//! disposition they record.

use tollgate::api::learn::{LearnRecordRequest, LearnRecordResponse, learn_record};
use tollgate::clock::now_rfc3339;
use tollgate::learnings::Disposition;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

/// Writes the ledger (appends a line): neither read-only, destructive nor idempotent.
const LEDGER_WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

macro_rules! learn_record_tool {
    ($tool:ident, $name:literal, $title:literal, $description:literal, $disposition:expr) => {
        pub(crate) struct $tool;

        impl Tool for $tool {
            const NAME: &'static str = $name;
            const TITLE: &'static str = $title;
            const DESCRIPTION: &'static str = $description;
            const GROUP: Group = Group::In(Profile::Memory);
            const VERSION: &'static str = "1.0.0";
            const HINTS: Hints = LEDGER_WRITE;

            type Input = LearnRecordRequest;
            type Output = LearnRecordResponse;

            fn call(
                ctx: &ToolContext,
                input: LearnRecordRequest,
            ) -> Result<LearnRecordResponse, ToolError> {
                Ok(learn_record(
                    ctx.workspace(),
                    $disposition,
                    input,
                    &now_rfc3339(),
                )?)
            }
        }
    };
}

learn_record_tool!(
    LearnDismiss,
    "learn_dismiss",
    "Dismiss a finding",
    "Dismiss a review finding (fields from review_diff) with a reason: the gate leaves it out \
while its code is unchanged.",
    Disposition::Dismissed
);

learn_record_tool!(
    LearnAccept,
    "learn_accept",
    "Accept a finding",
    "Accept a review finding (fields from review_diff) as a real problem the team wants flagged.",
    Disposition::Accepted
);
