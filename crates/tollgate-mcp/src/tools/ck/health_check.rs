//! ck's `health_check`.

use tollgate::api::context::dialects::ck::{self, CkHealth};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, NoInput, Tool, ToolContext};

pub(crate) struct HealthCheck;

impl Tool for HealthCheck {
    const NAME: &'static str = "health_check";
    const TITLE: &'static str = "Health check (ck)";
    const DESCRIPTION: &'static str = "Verify server is running: status and version.";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = CkHealth;

    fn call(_ctx: &ToolContext, _input: NoInput) -> Result<CkHealth, ToolError> {
        Ok(ck::health_check())
    }
}
