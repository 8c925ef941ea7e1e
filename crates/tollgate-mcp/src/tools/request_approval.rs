//! `request_approval`: ask for approval of a saved plan's current version: the whole plan (no step_numbers), one step, or a group of steps.

use tollgate::api::lifecycle::{RequestApprovalRequest, request_approval};
use tollgate::plan::lifecycle::approval::ApprovalResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct RequestApproval;

impl Tool for RequestApproval {
    const NAME: &'static str = "request_approval";
    const TITLE: &'static str = "Request approval";
    const DESCRIPTION: &'static str = "Ask for approval of a saved plan, one step or a group of \
steps; returns the request id for respond_approval.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = super::PLAN_WRITE;

    type Input = RequestApprovalRequest;
    type Output = ApprovalResponse;

    fn call(
        ctx: &ToolContext,
        mut input: RequestApprovalRequest,
    ) -> Result<ApprovalResponse, ToolError> {
        input
            .author
            .get_or_insert_with(|| super::MCP_AUTHOR.to_string());
        Ok(request_approval(&super::plan_store(ctx)?, input)?)
    }
}
