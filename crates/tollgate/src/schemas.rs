//! The JSON Schemas of Tollgate's public contracts, generated from the Rust types and committed
//! under `schemas/` so that a contract change shows up in review. One list, one freshness test:
//! `TOLLGATE_UPDATE_SCHEMAS=1 cargo test -p tollgate --lib schemas` rewrites the files.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::{api, plan, report};

/// The schema of what a caller sends (`T` as it deserialises).
pub fn request_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The schema of what Tollgate answers (`T` as it serialises).
pub fn response_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Every committed schema: its file name under `schemas/` and its content.
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("review-result.schema.json", report::review_result_schema()),
        (
            "review-diff-request.schema.json",
            request_schema::<api::review::ReviewDiffRequest>(),
        ),
        (
            "review-diff-response.schema.json",
            response_schema::<api::review::ReviewDiffResponse>(),
        ),
        (
            "check-invariants-request.schema.json",
            request_schema::<api::review::CheckInvariantsRequest>(),
        ),
        (
            "check-invariants-result.schema.json",
            response_schema::<api::review::CheckInvariantsResult>(),
        ),
        (
            "scrub-secrets-request.schema.json",
            request_schema::<api::secrets::ScrubSecretsRequest>(),
        ),
        (
            "scrub-secrets-result.schema.json",
            response_schema::<api::secrets::ScrubSecretsResult>(),
        ),
        (
            "review-changes-request.schema.json",
            request_schema::<api::review::ReviewChangesRequest>(),
        ),
        (
            "review-changes-result.schema.json",
            response_schema::<api::review::ChangesReview>(),
        ),
        (
            "review-git-diff-request.schema.json",
            request_schema::<api::review::ReviewGitDiffRequest>(),
        ),
        (
            "review-git-diff-response.schema.json",
            response_schema::<api::review::ReviewGitDiffResponse>(),
        ),
        (
            "review-auto-request.schema.json",
            request_schema::<api::review::ReviewAutoRequest>(),
        ),
        (
            "review-auto-response.schema.json",
            response_schema::<api::review::ReviewAutoResponse>(),
        ),
        ("plan.schema.json", plan::plan_schema()),
        (
            "create-plan-request.schema.json",
            request_schema::<api::plan::CreatePlanRequest>(),
        ),
        (
            "refine-plan-request.schema.json",
            request_schema::<api::plan::RefinePlanRequest>(),
        ),
        (
            "plan-response.schema.json",
            response_schema::<plan::PlanResponse>(),
        ),
        (
            "visualize-plan-request.schema.json",
            request_schema::<api::plan::VisualizePlanRequest>(),
        ),
        (
            "visualize-plan-response.schema.json",
            response_schema::<plan::VisualizePlanResponse>(),
        ),
        (
            "execute-plan-request.schema.json",
            request_schema::<api::plan::ExecutePlanRequest>(),
        ),
        (
            "execute-plan-response.schema.json",
            response_schema::<plan::lifecycle::execute::ExecutePlanResponse>(),
        ),
        (
            "static-analysis-request.schema.json",
            request_schema::<api::analysis::StaticAnalysisRequest>(),
        ),
        (
            "static-analysis-response.schema.json",
            response_schema::<api::analysis::StaticAnalysisResponse>(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;

    /// The committed schemas match the types, and `schemas/` holds nothing else (a schema
    /// whose type was removed goes too).
    #[test]
    fn committed_schemas_are_up_to_date() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .expect("the crate sits at crates/tollgate")
            .join("schemas");
        let update = std::env::var_os("TOLLGATE_UPDATE_SCHEMAS").is_some_and(|value| value == "1");
        let all = schemas();
        let names: BTreeSet<&str> = all.iter().map(|(name, _)| *name).collect();
        assert_eq!(names.len(), all.len(), "a schema file name is listed twice");
        for (name, schema) in &all {
            let path = dir.join(name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                let text = serde_json::to_string_pretty(schema).unwrap() + "\n";
                std::fs::write(&path, text).unwrap();
                continue;
            }
            // Compared as JSON values, so a change of key order alone does not make it stale.
            let committed: Option<Value> = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok());
            assert!(
                committed.as_ref() == Some(schema),
                "{} is stale: it does not match its Rust type.\n\
                 Regenerate with `TOLLGATE_UPDATE_SCHEMAS=1 cargo test -p tollgate --lib schemas` \
                 and commit the result.",
                path.display()
            );
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".schema.json") && !names.contains(name.as_str()) {
                if update {
                    std::fs::remove_file(dir.join(&name)).unwrap();
                } else {
                    panic!("schemas/{name} has no type any more: delete it");
                }
            }
        }
    }
}
