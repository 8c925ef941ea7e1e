//! `scrub_secrets`: mask credentials in a text (upstream's tool of that name).

use tollgate::api::secrets::{ScrubSecretsRequest, ScrubSecretsResult, scrub_secrets};

use crate::error::ToolError;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ScrubSecrets;

impl Tool for ScrubSecrets {
    const NAME: &'static str = "scrub_secrets";
    const TITLE: &'static str = "Scrub secrets";
    const DESCRIPTION: &'static str = "Mask secrets (keys, tokens, private keys, passwords) in text \
before sharing it or sending it to a model.";
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
