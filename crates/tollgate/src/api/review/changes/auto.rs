//! `review_auto`: one entry point for agents that do not know which review to ask for. A
//! non-blank diff goes to `review_diff` (the deterministic gate; model passes when enabled),
//! anything else to `review_git_diff` (the workspace's changes, reviewed by the model).

use std::path::Path;

use super::{
    AutoOutput, AutoTool, ReviewAutoRequest, ReviewAutoResponse, ReviewGitDiffRequest,
    review_git_diff,
};
use crate::api::review::{RequestError, ReviewDiffRequest, review_diff_request};
use crate::config::RawConfig;

/// Runs `review_auto`: picks a tool, runs it, and says why.
pub fn review_auto(
    workspace: &Path,
    settings: RawConfig,
    request: &ReviewAutoRequest,
) -> Result<ReviewAutoResponse, RequestError> {
    let diff = request.diff.as_deref().filter(|d| !d.trim().is_empty());
    let use_diff = match request.tool {
        AutoTool::ReviewDiff => true,
        AutoTool::ReviewGitDiff => false,
        AutoTool::Auto => diff.is_some(),
    };
    if use_diff {
        let rationale = match request.tool {
            AutoTool::ReviewDiff => "tool = review_diff was asked for".to_string(),
            _ => format!(
                "a diff was given ({} bytes): review_diff reviews it (deterministic checks, plus \
                 model passes when enable_llm is set)",
                diff.map_or(0, str::len)
            ),
        };
        let output = review_diff_request(
            workspace,
            settings,
            &ReviewDiffRequest {
                diff: request.diff.clone().unwrap_or_default(),
                changed_files: request.changed_files.clone(),
                base_sha: None,
                head_sha: None,
                options: request.review_diff_options.clone().unwrap_or_default(),
            },
        )
        .map_err(|err| options_field(err, "review_diff_options"))?;
        return Ok(ReviewAutoResponse {
            selected_tool: "review_diff".to_string(),
            rationale,
            output: AutoOutput::ReviewDiff(Box::new(output)),
        });
    }
    let target = request
        .target
        .as_deref()
        .unwrap_or(if request.base.is_some() {
            "HEAD"
        } else {
            "staged"
        });
    let mut rationale = match request.tool {
        AutoTool::ReviewGitDiff => "tool = review_git_diff was asked for".to_string(),
        _ => "no diff was given: review_git_diff reads the changes from git".to_string(),
    };
    rationale.push_str(&match &request.base {
        Some(base) => format!(" ({base}...{target})"),
        None => format!(" (target `{target}`)"),
    });
    if diff.is_some() {
        rationale.push_str("; the `diff` argument was not used");
    }
    let output = review_git_diff(
        workspace,
        settings,
        &ReviewGitDiffRequest {
            target: request.target.clone(),
            base: request.base.clone(),
            include_patterns: request.include_patterns.clone(),
            options: request.review_git_diff_options.clone().unwrap_or_default(),
        },
    )
    .map_err(|err| options_field(err, "review_git_diff_options"))?;
    Ok(ReviewAutoResponse {
        selected_tool: "review_git_diff".to_string(),
        rationale,
        output: AutoOutput::ReviewGitDiff(Box::new(output)),
    })
}

/// The tools name their options `options`; here they arrived as `name`, and an error must
/// name the field the caller wrote.
fn options_field(err: RequestError, name: &str) -> RequestError {
    match err {
        RequestError::Invalid { field, message } => {
            let field = match field.strip_prefix("options.") {
                Some(rest) => format!("{name}.{rest}"),
                None => field,
            };
            RequestError::Invalid { field, message }
        }
        other => other,
    }
}
