//! `respond_approval`: answer a pending approval request: approve, reject, or request_modification (with a comment and the modifications asked for).

use tollgate::api::lifecycle::{RespondApprovalRequest, respond_approval};
use tollgate::plan::lifecycle::approval::ApprovalResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RespondApproval;

impl Tool for RespondApproval {
    const NAME: &'static str = "respond_approval";
    const TITLE: &'static str = "Respond to approval";
    const DESCRIPTION: &'static str = "Approve, reject or request changes on a pending approval \
request (answered once).";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = RespondApprovalRequest;
    type Output = ApprovalResponse;

    fn call(
        ctx: &ToolContext,
        mut input: RespondApprovalRequest,
    ) -> Result<ApprovalResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(respond_approval(&super::plan_store(ctx)?, input)?)
    }
}
