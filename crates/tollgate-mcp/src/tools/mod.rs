//! One file per tool, each a thin adapter from its arguments to one core call. [`ALL`] is the
//! registry: adding a tool is its file, a `mod` line and one line in [`ALL`].

mod cancel_review;
mod check_invariants;
mod codebase_retrieval;
mod create_plan;
mod get_context_for_prompt;
mod get_file;
mod get_review_status;
mod get_review_telemetry;
mod get_workspace_info;
mod git_commit_retrieval;
mod index_status;
mod index_workspace;
mod pause_review;
mod reactive_review_pr;
mod refine_plan;
mod regex_search;
mod resume_review;
mod review_diff;
mod run_static_analysis;
mod scrub_secrets;
mod search_callers_for;
mod search_tests_for;
mod semantic_search;
mod session_common;
mod symbol_graph;
mod tool_manifest;
mod validate_content;
mod visualize_plan;

use tollgate::config::{CONFIG_FILE_NAME, RawConfig};

use crate::error::{INVALID_INPUT, ToolError};
use crate::tool::{Entry, ToolContext};

/// Every tool this build knows; the server serves those of its profiles.
pub(crate) const ALL: &[Entry] = &[
    Entry::of::<review_diff::ReviewDiff>(),
    Entry::of::<check_invariants::CheckInvariants>(),
    Entry::of::<run_static_analysis::RunStaticAnalysis>(),
    Entry::of::<scrub_secrets::ScrubSecrets>(),
    Entry::of::<validate_content::ValidateContent>(),
    Entry::of::<reactive_review_pr::ReactiveReviewPr>(),
    Entry::of::<get_review_status::GetReviewStatus>(),
    Entry::of::<pause_review::PauseReview>(),
    Entry::of::<resume_review::ResumeReview>(),
    Entry::of::<cancel_review::CancelReview>(),
    Entry::of::<get_review_telemetry::GetReviewTelemetry>(),
    Entry::of::<get_workspace_info::GetWorkspaceInfo>(),
    Entry::of::<tool_manifest::ToolManifest>(),
    Entry::of::<create_plan::CreatePlan>(),
    Entry::of::<refine_plan::RefinePlan>(),
    Entry::of::<visualize_plan::VisualizePlan>(),
    Entry::of::<semantic_search::SemanticSearch>(),
    Entry::of::<codebase_retrieval::CodebaseRetrieval>(),
    Entry::of::<get_context_for_prompt::GetContextForPrompt>(),
    Entry::of::<get_file::GetFile>(),
    Entry::of::<git_commit_retrieval::GitCommitRetrieval>(),
    Entry::of::<regex_search::RegexSearch>(),
    Entry::of::<symbol_graph::SymbolGraph>(),
    Entry::of::<search_tests_for::SearchTestsFor>(),
    Entry::of::<search_callers_for::SearchCallersFor>(),
    Entry::of::<index_workspace::IndexWorkspace>(),
    Entry::of::<index_status::IndexStatus>(),
];

/// The configuration layers under a request's options: the workspace's `tollgate.toml` (when
/// present), then the `TOLLGATE_*` environment the server was started with; the same layers
/// `tollgate review` reads. Read on every call, so an edited file applies without a restart.
pub(crate) fn workspace_settings(ctx: &ToolContext) -> Result<RawConfig, ToolError> {
    let invalid =
        |err: tollgate::config::ConfigError| ToolError::new(INVALID_INPUT, err.to_string());
    let path = ctx.workspace().join(CONFIG_FILE_NAME);
    let file = if path.is_file() {
        RawConfig::from_file(&path).map_err(invalid)?
    } else {
        RawConfig::default()
    };
    let env = RawConfig::from_env(ctx.env().iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(invalid)?;
    Ok(file.overlay(env))
}

#[cfg(test)]
mod tests {
    use super::ALL;

    #[test]
    fn tool_names_are_unique_and_valid_and_their_schemas_build() {
        let mut names: Vec<&str> = ALL.iter().map(|entry| entry.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "a tool name is registered twice");
        for entry in ALL {
            assert!(
                entry
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                entry.name
            );
            let definition = entry.definition().unwrap();
            assert_eq!(definition.name, entry.name);
        }
    }
}
