//! One file per tool, each a thin adapter from its arguments to one core call. [`ALL`] is the
//! registry: adding a tool is its file, a `mod` line and one line in [`ALL`].

mod cancel_review;
mod check_invariants;
mod codebase_retrieval;
mod compare_plan_versions;
mod complete_step;
mod create_plan;
mod delete_plan;
mod execute_plan;
mod fail_step;
mod get_context_for_prompt;
mod get_file;
mod get_review_status;
mod get_review_telemetry;
mod get_workspace_info;
mod git_commit_retrieval;
mod index_status;
mod index_workspace;
mod list_plans;
mod load_plan;
mod pause_review;
mod reactive_review_pr;
mod refine_plan;
mod regex_search;
mod request_approval;
mod respond_approval;
mod resume_review;
mod review_auto;
mod review_changes;
mod review_diff;
mod review_git_diff;
mod rollback_plan;
mod run_static_analysis;
mod save_plan;
mod scrub_secrets;
mod search_callers_for;
mod search_tests_for;
mod semantic_search;
mod session_common;
mod start_step;
mod symbol_graph;
mod tool_manifest;
mod undo_step;
mod validate_content;
mod view_history;
mod view_progress;
mod visualize_plan;

use tollgate::config::{CONFIG_FILE_NAME, RawConfig};
use tollgate::plan::journal::recover_interrupted;
use tollgate::store::Store;

use crate::error::{INVALID_INPUT, ToolError};
use crate::tool::{Entry, Hints, ToolContext};

/// Every tool this build knows; the server serves those of its profiles.
pub(crate) const ALL: &[Entry] = &[
    Entry::of::<review_diff::ReviewDiff>(),
    Entry::of::<review_changes::ReviewChanges>(),
    Entry::of::<review_git_diff::ReviewGitDiff>(),
    Entry::of::<review_auto::ReviewAuto>(),
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
    Entry::of::<save_plan::SavePlan>(),
    Entry::of::<load_plan::LoadPlan>(),
    Entry::of::<list_plans::ListPlans>(),
    Entry::of::<delete_plan::DeletePlan>(),
    Entry::of::<view_history::ViewHistory>(),
    Entry::of::<compare_plan_versions::ComparePlanVersions>(),
    Entry::of::<rollback_plan::RollbackPlan>(),
    Entry::of::<request_approval::RequestApproval>(),
    Entry::of::<respond_approval::RespondApproval>(),
    Entry::of::<start_step::StartStep>(),
    Entry::of::<complete_step::CompleteStep>(),
    Entry::of::<fail_step::FailStep>(),
    Entry::of::<view_progress::ViewProgress>(),
    Entry::of::<execute_plan::ExecutePlan>(),
    Entry::of::<undo_step::UndoStep>(),
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

/// The model reviews: they change nothing (the response cache aside) but call a model, which
/// answers differently from one call to the next.
const MODEL_REVIEW: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: false,
    open_world: true,
};

/// Who the plan tools record as the author of a change when the caller names nobody.
const MCP_AUTHOR: &str = "mcp";

/// A plan tool that records something (a version, an approval, a step state) and overwrites
/// nothing: every change is kept in the history.
const PLAN_WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

/// A plan tool that replaces what callers see (deletion, rollback); the store keeps the old state.
const PLAN_DESTRUCTIVE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};

/// The workspace's plan store (`.tollgate/tollgate.db`), opened per call: another process (the
/// CLI) may be using it too, and SQLite serialises the writers. A step run a killed process left
/// half done is rolled back first, so no plan tool sees its step stuck in progress.
fn plan_store(ctx: &ToolContext) -> Result<Store, ToolError> {
    let store = Store::open_in_workspace(ctx.workspace())
        .map_err(|err| ToolError::new(err.code(), err.to_string()))?;
    match recover_interrupted(&store, ctx.workspace()) {
        Ok(recovered) => {
            for run in recovered {
                tracing::warn!(plan = %run.plan_id, step = run.step_number, "{}", run.message);
            }
        }
        Err(err) => tracing::warn!(
            code = err.code(),
            "an interrupted step run could not be rolled back: {err}"
        ),
    }
    Ok(store)
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
