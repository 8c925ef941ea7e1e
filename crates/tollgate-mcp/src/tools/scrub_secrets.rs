//! `scrub_secrets`: mask credentials in a text (upstream's tool of that name).

use tollgate::secrets::{ScrubSecretsRequest, ScrubSecretsResult, scrub_secrets};

use crate::error::ToolError;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ScrubSecrets;

impl Tool for ScrubSecrets {
    const NAME: &'static str = "scrub_secrets";
    const TITLE: &'static str = "Scrub secrets";
    const DESCRIPTION: &'static str = "Mask secrets (cloud and API keys, tokens, private keys, \
JWTs, passwords in URLs and assignments) in up to 1,000,000 characters of text before it is \
shared or sent to a model. Every other character is returned unchanged; show_start / show_end \
keep up to 8 characters of each secret visible (never more than half of it).";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ScrubSecretsRequest;
    type Output = ScrubSecretsResult;

    fn call(
        _ctx: &ToolContext,
        input: ScrubSecretsRequest,
    ) -> Result<ScrubSecretsResult, ToolError> {
        Ok(scrub_secrets(&input)?)
    }
}
