//! `run_static_analysis`: tsc and semgrep on the changed files, plus imported SARIF (upstream's
//! tool of that name).

use tollgate::api::analysis::{StaticAnalysisRequest, StaticAnalysisResponse, run_static_analysis};

use crate::error::{INVALID_INPUT, ToolError};
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};
use crate::tools::workspace_settings;

pub(crate) struct RunStaticAnalysis;

impl Tool for RunStaticAnalysis {
    const NAME: &'static str = "run_static_analysis";
    const TITLE: &'static str = "Run static analysis";
    const DESCRIPTION: &'static str = "Run tsc and semgrep on changed files (or a diff's changed \
lines) and import SARIF files. Missing or failing analyzers are reported, never a clean run. \
review_diff can run them too.";
    const GROUP: Group = Group::In(Profile::Review);
    const VERSION: &'static str = "1.0.0";
    // Analyzers read the code; tsc may keep build info in Tollgate's cache directory, a cache
    // like the index (review_diff runs the same analyzers and is read-only too).
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = StaticAnalysisRequest;
    type Output = StaticAnalysisResponse;

    fn call(
        ctx: &ToolContext,
        input: StaticAnalysisRequest,
    ) -> Result<StaticAnalysisResponse, ToolError> {
        let config = workspace_settings(ctx)?
            .resolve()
            .map_err(|err| ToolError::new(INVALID_INPUT, err.to_string()))?;
        Ok(run_static_analysis(
            ctx.workspace(),
            &input,
            &config.analyzers,
        )?)
    }
}
