//! `validate_content`: check model output or text before trusting it (upstream's tool).

use tollgate::secrets::{ValidateContentRequest, ValidateContentResult, validate_content};

use crate::error::ToolError;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ValidateContent;

impl Tool for ValidateContent {
    const NAME: &'static str = "validate_content";
    const TITLE: &'static str = "Validate content";
    const DESCRIPTION: &'static str = "Check up to 1,000,000 characters by content_type: \
review_finding (JSON checked against Tollgate's Finding schema), plan_output (JSON with a plan's \
required shape), generated_code (balanced brackets, unterminated strings/comments, conflict \
markers, leftover Markdown fences; language from file_path), raw_text; every type is checked \
for secrets (kind and position, never the value), lines over 1,000 characters and leftover \
TODO/FIXME markers. Issues have line and column; passed=false when any is an error. \
scrub_secrets=true also returns scrubbed_content.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ValidateContentRequest;
    type Output = ValidateContentResult;

    fn call(
        _ctx: &ToolContext,
        input: ValidateContentRequest,
    ) -> Result<ValidateContentResult, ToolError> {
        Ok(validate_content(&input)?)
    }
}
