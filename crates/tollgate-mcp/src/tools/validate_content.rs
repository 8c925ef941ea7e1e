//! `validate_content`: check model output or text before trusting it (upstream's tool).

use tollgate::api::secrets::{ValidateContentRequest, validate_content};
use tollgate::secrets::ValidateContentResult;

use crate::error::ToolError;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ValidateContent;

impl Tool for ValidateContent {
    const NAME: &'static str = "validate_content";
    const TITLE: &'static str = "Validate content";
    const DESCRIPTION: &'static str = "Check text by content_type (finding JSON, plan JSON, \
generated code, raw text) for shape, secrets, long lines and TODOs; issues with line and column.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ValidateContentRequest;
    type Output = ValidateContentResult;

    fn call(
        _ctx: &ToolContext,
        input: ValidateContentRequest,
    ) -> Result<ValidateContentResult, ToolError> {
        Ok(validate_content(input)?)
    }
}
