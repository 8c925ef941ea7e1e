//! One file per tool, each a thin adapter from its arguments to one core call. [`builtins`]
//! lists them: adding a tool is its file, a `mod` line and one line there.

mod cancel_review;
mod check_invariants;
mod ck;
mod codebase_retrieval;
mod compare_plan_versions;
mod complete_step;
mod context_answer;
mod context_engine;
mod create_plan;
mod delete_context;
mod delete_context_batch;
mod delete_plan;
mod execute_plan;
mod fail_step;
mod fts_search_context;
mod get;
mod get_context_by_ids;
mod get_context_for_prompt;
mod get_file;
mod get_review_status;
mod get_review_telemetry;
mod get_statistics;
mod get_workspace_info;
mod git_commit_retrieval;
mod hybrid_search_context;
mod index_status;
mod index_workspace;
mod learn_list;
mod learn_record;
mod list_plans;
mod list_threads;
mod load_plan;
mod memory_find;
mod memory_store;
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
mod search;
mod search_callers_for;
mod search_context;
mod search_tests_for;
mod semantic_search;
mod semantic_search_context;
mod session_common;
mod sources;
mod start_step;
mod store_context;
mod store_context_batch;
mod symbol_graph;
mod tool_manifest;
mod undo_step;
mod update_context;
mod update_context_batch;
mod validate_content;
mod view_history;
mod view_progress;
mod visualize_plan;

use tollgate::config::{self, ConfigFile, RawConfig};
use tollgate::plan::lifecycle::journal::recover_interrupted;
use tollgate::store::Store;

use crate::error::{INVALID_INPUT, ToolError};
use crate::tool::{Entry, Hints, ToolContext};

/// Every tool this build knows; the server serves those of its profiles. An error names a
/// tool whose input type makes no valid input schema (a bug in Tollgate).
pub(crate) fn builtins() -> Result<Vec<Entry>, String> {
    Ok(vec![
        Entry::of::<review_diff::ReviewDiff>()?,
        Entry::of::<review_changes::ReviewChanges>()?,
        Entry::of::<review_git_diff::ReviewGitDiff>()?,
        Entry::of::<review_auto::ReviewAuto>()?,
        Entry::of::<check_invariants::CheckInvariants>()?,
        Entry::of::<run_static_analysis::RunStaticAnalysis>()?,
        Entry::of::<scrub_secrets::ScrubSecrets>()?,
        Entry::of::<validate_content::ValidateContent>()?,
        Entry::of::<reactive_review_pr::ReactiveReviewPr>()?,
        Entry::of::<get_review_status::GetReviewStatus>()?,
        Entry::of::<pause_review::PauseReview>()?,
        Entry::of::<resume_review::ResumeReview>()?,
        Entry::of::<cancel_review::CancelReview>()?,
        Entry::of::<get_review_telemetry::GetReviewTelemetry>()?,
        Entry::of::<get_workspace_info::GetWorkspaceInfo>()?,
        Entry::of::<tool_manifest::ToolManifest>()?,
        Entry::of::<learn_record::LearnDismiss>()?,
        Entry::of::<learn_record::LearnAccept>()?,
        Entry::of::<learn_list::LearnList>()?,
        Entry::of::<create_plan::CreatePlan>()?,
        Entry::of::<refine_plan::RefinePlan>()?,
        Entry::of::<visualize_plan::VisualizePlan>()?,
        Entry::of::<semantic_search::SemanticSearch>()?,
        Entry::of::<codebase_retrieval::CodebaseRetrieval>()?,
        Entry::of::<get_context_for_prompt::GetContextForPrompt>()?,
        Entry::of::<get_file::GetFile>()?,
        Entry::of::<git_commit_retrieval::GitCommitRetrieval>()?,
        Entry::of::<regex_search::RegexSearch>()?,
        Entry::of::<symbol_graph::SymbolGraph>()?,
        Entry::of::<search_tests_for::SearchTestsFor>()?,
        Entry::of::<search_callers_for::SearchCallersFor>()?,
        Entry::of::<index_workspace::IndexWorkspace>()?,
        Entry::of::<index_status::IndexStatus>()?,
        Entry::of::<save_plan::SavePlan>()?,
        Entry::of::<load_plan::LoadPlan>()?,
        Entry::of::<list_plans::ListPlans>()?,
        Entry::of::<delete_plan::DeletePlan>()?,
        Entry::of::<view_history::ViewHistory>()?,
        Entry::of::<compare_plan_versions::ComparePlanVersions>()?,
        Entry::of::<rollback_plan::RollbackPlan>()?,
        Entry::of::<request_approval::RequestApproval>()?,
        Entry::of::<respond_approval::RespondApproval>()?,
        Entry::of::<start_step::StartStep>()?,
        Entry::of::<complete_step::CompleteStep>()?,
        Entry::of::<fail_step::FailStep>()?,
        Entry::of::<view_progress::ViewProgress>()?,
        Entry::of::<execute_plan::ExecutePlan>()?,
        Entry::of::<undo_step::UndoStep>()?,
        Entry::of::<store_context::StoreContext>()?,
        Entry::of::<search_context::SearchContext>()?,
        Entry::of::<get_context_by_ids::GetContextByIds>()?,
        Entry::of::<delete_context::DeleteContext>()?,
        Entry::of::<update_context::UpdateContext>()?,
        Entry::of::<list_threads::ListThreads>()?,
        Entry::of::<get_statistics::GetStatistics>()?,
        Entry::of::<semantic_search_context::SemanticSearchContext>()?,
        Entry::of::<fts_search_context::FtsSearchContext>()?,
        Entry::of::<hybrid_search_context::HybridSearchContext>()?,
        Entry::of::<store_context_batch::StoreContextBatch>()?,
        Entry::of::<update_context_batch::UpdateContextBatch>()?,
        Entry::of::<delete_context_batch::DeleteContextBatch>()?,
        Entry::of::<memory_store::MemoryStore>()?,
        Entry::of::<memory_find::MemoryFind>()?,
        Entry::of::<context_answer::ContextAnswer>()?,
        Entry::of::<search::Search>()?,
        Entry::of::<get::Get>()?,
        Entry::of::<sources::Sources>()?,
        Entry::of::<ck::semantic_search::SemanticSearch>()?,
        Entry::of::<ck::regex_search::RegexSearch>()?,
        Entry::of::<ck::hybrid_search::HybridSearch>()?,
        Entry::of::<ck::index_status::IndexStatus>()?,
        Entry::of::<ck::reindex::Reindex>()?,
        Entry::of::<ck::health_check::HealthCheck>()?,
        Entry::of::<context_engine::repo_search::RepoSearch>()?,
        Entry::of::<context_engine::code_search::CodeSearch>()?,
        Entry::of::<context_engine::search_tests_for::SearchTestsFor>()?,
        Entry::of::<context_engine::search_config_for::SearchConfigFor>()?,
        Entry::of::<context_engine::search_callers_for::SearchCallersFor>()?,
        Entry::of::<context_engine::search_importers_for::SearchImportersFor>()?,
        Entry::of::<context_engine::change_history_for_path::ChangeHistoryForPath>()?,
        Entry::of::<context_engine::expand_query::ExpandQuery>()?,
        Entry::of::<context_engine::qdrant_index::QdrantIndex>()?,
        Entry::of::<context_engine::info_request::InfoRequestTool>()?,
        Entry::of::<context_engine::qdrant_status::QdrantStatus>()?,
    ])
}

/// Names no user tool may take besides the built-ins': `/tools/list` is the listing itself.
pub(crate) const RESERVED_NAMES: &[&str] = &["list"];

/// The configuration layers under a request's options: the workspace's `tollgate.toml` (when
/// present), then the `TOLLGATE_*` environment the server was started with; the same layers
/// `tollgate review` reads. Read on every call, so an edited file applies without a restart.
pub(crate) fn workspace_settings(ctx: &ToolContext) -> Result<RawConfig, ToolError> {
    config::load(
        ConfigFile::Discover(ctx.workspace()),
        ctx.env().iter().map(|(k, v)| (k.as_str(), v.as_str())),
        RawConfig::default(),
    )
    .map_err(|err| ToolError::new(INVALID_INPUT, err.to_string()))
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

/// A knowledge-store tool that adds entries; it overwrites nothing.
const MEMORY_WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

/// A knowledge-store tool that replaces an entry's fields.
const MEMORY_UPDATE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: false,
};

/// A knowledge-store tool that deletes entries for good.
const MEMORY_DELETE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: false,
};

/// The store the server's configuration names (`[store] url`, `TOLLGATE_STORE_URL`, which the
/// CLI's `--store` sets), else the workspace's SQLite file: the core's one recipe.
pub(crate) fn open_store(ctx: &ToolContext) -> Result<Store, ToolError> {
    let layers = workspace_settings(ctx)?;
    Store::open_configured(ctx.workspace(), &layers.store)
        .map_err(|err| ToolError::new(err.code(), err.to_string()))
}

/// Runs `operation` on the workspace's knowledge store (`.tollgate/tollgate.db`, opened per
/// call like the plan store) with the built-in hashed embedder, its `learnings` thread in line
/// with the ledger.
fn with_memory<T>(
    ctx: &ToolContext,
    operation: impl FnOnce(&tollgate::memory::Memory<'_>) -> Result<T, tollgate::api::ApiError>,
) -> Result<T, ToolError> {
    let store = open_store(ctx)?;
    let embedder = tollgate::workspace::HashedEmbedder;
    let memory = tollgate::memory::Memory::new(&store, &embedder);
    if let Some(warning) = tollgate::api::learn_mirror::sync_on_open(ctx.workspace(), &memory) {
        tracing::warn!("{warning}");
    }
    Ok(operation(&memory)?)
}

/// Mirrors the learnings ledger into the store's `learnings` thread after a decision (opening
/// the store syncs it); the ledger is written already, so a failure is logged, not returned.
fn mirror_learnings(ctx: &ToolContext) {
    if let Err(err) = with_memory(ctx, |_| Ok(())) {
        tracing::warn!("the knowledge store could not be opened to mirror the learnings: {err:?}");
    }
}

/// The workspace's plan store (`.tollgate/tollgate.db`), opened per call: another process (the
/// CLI) may be using it too, and SQLite serialises the writers. A step run a killed process left
/// half done is rolled back first, so no plan tool sees its step stuck in progress.
fn plan_store(ctx: &ToolContext) -> Result<Store, ToolError> {
    let store = open_store(ctx)?;
    match recover_interrupted(&store, ctx.workspace()) {
        Ok(recovered) => {
            for run in recovered {
                tracing::warn!(plan = %run.plan_id, step = run.step_number, "{}", run.message);
            }
        }
        Err(err) => tracing::warn!(
            code = err.code().as_str(),
            "an interrupted step run could not be rolled back: {err}"
        ),
    }
    Ok(store)
}

#[cfg(test)]
mod seed_000;
#[cfg(test)]
mod seed_000_indexer;
#[cfg(test)]
mod seed_002;
#[cfg(test)]
mod seed_003;

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::builtins;
    use crate::error::INVALID_INPUT;
    use crate::profile::Profiles;
    use crate::tool::{Catalog, ToolContext};

    /// The field no input type has.
    const UNKNOWN: &str = "tollgate_unknown_field";

    /// One step from an input down to a nested object: a property, or an array's item.
    #[derive(Debug, Clone)]
    enum Step {
        Field(String),
        Item,
    }

    /// An object found in a schema: the steps to it, the constant fields it needs, its schema.
    type Found = (Vec<Step>, serde_json::Map<String, Value>, Value);

    /// Every object an input schema describes (the input itself first), as the steps that lead
    /// to it and the constant fields it needs (an enum variant's tag). Maps (objects whose
    /// `additionalProperties` is a schema) take any key and are not listed.
    fn objects(
        schema: &Value,
        defs: &Value,
        path: &[Step],
        seen_refs: &mut Vec<String>,
        out: &mut Vec<Found>,
    ) {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/$defs/").to_string();
            if seen_refs.contains(&name) {
                return;
            }
            seen_refs.push(name.clone());
            objects(&defs[&name], defs, path, seen_refs, out);
            seen_refs.pop();
            return;
        }
        for combinator in ["anyOf", "oneOf", "allOf"] {
            for alternative in schema[combinator].as_array().into_iter().flatten() {
                objects(alternative, defs, path, seen_refs, out);
            }
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if let Some(properties) = schema["properties"].as_object() {
            let tags: serde_json::Map<String, Value> = properties
                .iter()
                .filter_map(|(name, property)| {
                    let constant = property.get("const").cloned().or_else(|| {
                        property["enum"]
                            .as_array()
                            .filter(|values| values.len() == 1)
                            .map(|values| values[0].clone())
                    })?;
                    Some((name.clone(), constant))
                })
                .collect();
            out.push((path.to_vec(), tags, schema.clone()));
            for (name, property) in properties {
                let mut next = path.to_vec();
                next.push(Step::Field(name.clone()));
                objects(property, defs, &next, seen_refs, out);
            }
        }
        if types.contains(&"array") {
            let mut next = path.to_vec();
            next.push(Step::Item);
            objects(&schema["items"], defs, &next, seen_refs, out);
        }
    }

    /// Arguments holding an unknown field in the object at `path` and nothing else.
    fn with_unknown_at(path: &[Step], tags: &serde_json::Map<String, Value>) -> Value {
        let mut value = Value::Object(tags.clone());
        value[UNKNOWN] = json!(true);
        for step in path.iter().rev() {
            value = match step {
                Step::Field(name) => json!({ name: value }),
                Step::Item => json!([value]),
            };
        }
        value
    }

    /// Generated from the schemas, so a new tool or a new nested option is covered without
    /// being listed here: every object of every input schema declares
    /// `additionalProperties: false`, and the input type refuses an unknown field there with
    /// `INVALID_INPUT` naming it.
    #[test]
    fn every_input_refuses_unknown_fields_at_every_level() {
        let workspace = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(
            workspace.path().to_path_buf(),
            Vec::new(),
            Catalog {
                profiles: Profiles::all(),
                registry: crate::registry::Registry::empty(),
            },
        );
        let mut problems = Vec::new();
        let mut covered = Vec::new();
        for entry in builtins().unwrap() {
            let definition = entry.definition();
            let schema = Value::Object(definition.input_schema.as_ref().clone());
            let mut found = Vec::new();
            objects(&schema, &schema["$defs"], &[], &mut Vec::new(), &mut found);
            assert!(
                found.first().is_some_and(|(path, _, _)| path.is_empty()),
                "{}: the input is an object",
                entry.name
            );
            for (path, tags, object) in found {
                let at = format!("{}{path:?}", entry.name);
                covered.push(at.clone());
                if object["additionalProperties"] != json!(false) {
                    problems.push(format!("{at}: schema lacks additionalProperties: false"));
                }
                let arguments = with_unknown_at(&path, &tags);
                let Value::Object(arguments) = arguments else {
                    unreachable!("the input is an object")
                };
                match entry.call(&ctx, arguments.clone()) {
                    Err(err)
                        if err.code() == INVALID_INPUT
                            && err
                                .to_json()
                                .to_string()
                                .contains(&format!("unknown field `{UNKNOWN}`")) => {}
                    Err(err) => problems.push(format!("{at}: {}", err.to_json())),
                    Ok(_) => problems.push(format!("{at}: accepted {}", Value::Object(arguments))),
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        // The walk reaches nested objects (the issue's case among them).
        for nested in [
            r#"run_static_analysis[Field("options")]"#,
            r#"review_diff[Field("options")]"#,
        ] {
            assert!(
                covered.iter().any(|at| at == nested),
                "{nested}: {covered:?}"
            );
        }
    }

    #[test]
    fn tool_names_are_unique_and_valid_and_their_schemas_build() {
        let all = builtins().unwrap();
        // A name is registered once per profile; two profiles may share one (a seed dialect's
        // and Tollgate's own), never two served together (the server refuses that).
        let mut names: Vec<(&str, &str)> = all
            .iter()
            .map(|entry| (&*entry.name, entry.group.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "a tool name is registered twice");
        for entry in &all {
            assert!(
                entry
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{}",
                entry.name
            );
            let definition = entry.definition();
            assert_eq!(definition.name, &*entry.name);
        }
    }
}
