//! Plan versions: `view_history`, `compare_plan_versions` and `rollback_plan`.
//!
//! Versions are append-only full snapshots with who made them, why and how (`created`,
//! `modified`, `refined`, `rolled_back`). A rollback never deletes anything: it records a new
//! version whose content equals the old one. A comparison is computed from the two snapshots:
//! steps added, removed and modified (field by field, keyed by step number), files, scope items
//! and risks added or removed, and every other changed field; text fields carry a unified diff
//! (similar).

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::library::{
    PlanStoreError, author_of, check_text, current_plan, plan_row, plan_version, record_version,
};
use super::progress::{PlanState, ProgressReport};
use crate::plan::model::{Plan, Risk, Step, StepNumber};
use crate::store::Store;
use crate::store::plans::VersionMeta;

/// Default and largest `limit` of `view_history`.
pub const DEFAULT_HISTORY_LIMIT: usize = 20;
pub const MAX_HISTORY_LIMIT: usize = 1000;

/// What `view_history` is asked to do (its wire request is `api::lifecycle::ViewHistory`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewHistory {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The newest versions and events to show (default 20, at most 1000).
    pub limit: Option<usize>,
    /// Include each version's full plan. Default false.
    pub include_plans: bool,
}

/// One version in the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VersionInfo {
    pub version: u32,
    /// `created`, `modified`, `refined` or `rolled_back`.
    pub change_type: String,
    /// Why.
    pub summary: String,
    /// Who.
    pub author: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}

/// One lifecycle event (steps, approvals, status changes, deletion).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanEvent {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_number: Option<StepNumber>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub author: String,
    pub created_at: String,
}

/// Output of `view_history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewHistoryResponse {
    pub plan_id: String,
    pub current_version: u32,
    pub total_versions: u32,
    /// Newest first.
    pub versions: Vec<VersionInfo>,
    /// Oldest first, the newest `limit`.
    pub events: Vec<PlanEvent>,
}

/// A plan's versions and events.
pub fn view_history(
    store: &Store,
    request: &ViewHistory,
) -> Result<ViewHistoryResponse, PlanStoreError> {
    let limit = request.limit.unwrap_or(DEFAULT_HISTORY_LIMIT);
    if limit == 0 || limit > MAX_HISTORY_LIMIT {
        return Err(super::library::invalid(
            "limit",
            format!("must be 1 to {MAX_HISTORY_LIMIT}"),
        ));
    }
    store.snapshot(|tx| {
        let row = plan_row(tx, &request.plan_id)?;
        let mut versions = Vec::new();
        for stored in tx.versions(&row.id, limit, request.include_plans)? {
            let plan = match &stored.plan_json {
                Some(text) => Some(serde_json::from_str(text).map_err(|err| {
                    crate::store::StoreError::Corrupt {
                        what: format!("plan {} version {}", row.id, stored.version),
                        reason: err.to_string(),
                    }
                })?),
                None => None,
            };
            versions.push(VersionInfo {
                version: stored.version,
                change_type: stored.change_type,
                summary: stored.summary,
                author: stored.author,
                created_at: stored.created_at,
                plan,
            });
        }
        let events = tx
            .events(&row.id, limit)?
            .into_iter()
            .map(|event| PlanEvent {
                kind: event.kind,
                step_number: event.step_number,
                detail: event.detail,
                author: event.author,
                created_at: event.created_at,
            })
            .collect();
        Ok(ViewHistoryResponse {
            plan_id: row.id.clone(),
            current_version: row.current_version,
            total_versions: tx.version_count(&row.id)?,
            versions,
            events,
        })
    })
}

/// What `compare_plan_versions` is asked to do (its wire request is `api::lifecycle::ComparePlanVersions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparePlanVersions {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The older version.
    pub from_version: u32,
    /// The newer version.
    pub to_version: u32,
}

/// A field whose value differs between the two versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldChange {
    /// A JSON path such as `goal`, `scope.included` or `testing_strategy.unit`.
    pub field: String,
    pub before: Value,
    pub after: Value,
    /// A unified diff of the two texts, for text fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// A step in one version only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepRef {
    pub step_number: StepNumber,
    pub title: String,
}

/// A step in both versions with different fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepChange {
    pub step_number: StepNumber,
    pub title: String,
    pub changes: Vec<FieldChange>,
}

/// Items added to and removed from a list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Scope items added and removed, per list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScopeChange {
    pub included: ListChange,
    pub excluded: ListChange,
    pub assumptions: ListChange,
    pub constraints: ListChange,
}

/// Risks added, removed and changed (a risk is identified by its `issue`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RiskChange {
    pub added: Vec<Risk>,
    pub removed: Vec<Risk>,
    pub modified: Vec<FieldChange>,
}

/// Output of `compare_plan_versions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanComparison {
    pub plan_id: String,
    pub from_version: u32,
    pub to_version: u32,
    pub steps_added: Vec<StepRef>,
    pub steps_removed: Vec<StepRef>,
    pub steps_modified: Vec<StepChange>,
    /// Paths any step touches (modify, create, delete, rename).
    pub files: ListChange,
    pub scope: ScopeChange,
    pub risks: RiskChange,
    /// Every other changed field (goal, confidence, testing strategy, …), steps, scope, risks
    /// and the derived dependency graph aside.
    pub field_changes: Vec<FieldChange>,
    /// One line per kind of change.
    pub summary: String,
}

/// Compares two versions of a saved plan.
pub fn compare_plan_versions(
    store: &Store,
    request: &ComparePlanVersions,
) -> Result<PlanComparison, PlanStoreError> {
    let (from, to) = store.snapshot(|tx| {
        let row = plan_row(tx, &request.plan_id)?;
        Ok::<_, PlanStoreError>((
            plan_version(tx, &row, request.from_version)?,
            plan_version(tx, &row, request.to_version)?,
        ))
    })?;
    let mut comparison = compare_plans(&from, &to);
    comparison.plan_id = request.plan_id.clone();
    comparison.from_version = request.from_version;
    comparison.to_version = request.to_version;
    Ok(comparison)
}

/// The differences from `from` to `to` (their ids and versions are taken from the plans).
pub fn compare_plans(from: &Plan, to: &Plan) -> PlanComparison {
    let old_steps: BTreeMap<StepNumber, &Step> =
        from.steps.iter().map(|s| (s.step_number, s)).collect();
    let new_steps: BTreeMap<StepNumber, &Step> =
        to.steps.iter().map(|s| (s.step_number, s)).collect();
    let step_ref = |step: &Step| StepRef {
        step_number: step.step_number,
        title: step.title.clone(),
    };
    let steps_added: Vec<StepRef> = new_steps
        .iter()
        .filter(|(n, _)| !old_steps.contains_key(n))
        .map(|(_, s)| step_ref(s))
        .collect();
    let steps_removed: Vec<StepRef> = old_steps
        .iter()
        .filter(|(n, _)| !new_steps.contains_key(n))
        .map(|(_, s)| step_ref(s))
        .collect();
    let mut steps_modified = Vec::new();
    for (number, old) in &old_steps {
        let Some(new) = new_steps.get(number) else {
            continue;
        };
        let mut changes = Vec::new();
        diff_values("", &to_value(*old), &to_value(*new), &mut changes);
        if !changes.is_empty() {
            steps_modified.push(StepChange {
                step_number: *number,
                title: new.title.clone(),
                changes,
            });
        }
    }
    let files_of = |plan: &Plan| -> BTreeSet<String> {
        plan.steps
            .iter()
            .flat_map(|s| s.touched_paths().map(str::to_string).collect::<Vec<_>>())
            .collect()
    };
    let files = list_change(&files_of(from), &files_of(to));
    let scope = ScopeChange {
        included: list_change_vec(&from.scope.included, &to.scope.included),
        excluded: list_change_vec(&from.scope.excluded, &to.scope.excluded),
        assumptions: list_change_vec(&from.scope.assumptions, &to.scope.assumptions),
        constraints: list_change_vec(&from.scope.constraints, &to.scope.constraints),
    };
    let old_risks: BTreeMap<&str, &Risk> =
        from.risks.iter().map(|r| (r.issue.as_str(), r)).collect();
    let new_risks: BTreeMap<&str, &Risk> = to.risks.iter().map(|r| (r.issue.as_str(), r)).collect();
    let mut risks = RiskChange::default();
    for (issue, risk) in &new_risks {
        match old_risks.get(issue) {
            None => risks.added.push((*risk).clone()),
            Some(old) => diff_values(
                &format!("risks[{issue}]"),
                &to_value(*old),
                &to_value(*risk),
                &mut risks.modified,
            ),
        }
    }
    risks.removed = old_risks
        .iter()
        .filter(|(issue, _)| !new_risks.contains_key(*issue))
        .map(|(_, r)| (*r).clone())
        .collect();
    let mut field_changes = Vec::new();
    let (mut old_rest, mut new_rest) = (to_value(from), to_value(to));
    for value in [&mut old_rest, &mut new_rest] {
        if let Some(object) = value.as_object_mut() {
            for key in [
                "id",
                "version",
                "created_at",
                "updated_at",
                "steps",
                "scope",
                "risks",
                "dependency_graph",
            ] {
                object.remove(key);
            }
        }
    }
    diff_values("", &old_rest, &new_rest, &mut field_changes);
    if from.steps.len() != to.steps.len() {
        field_changes.push(FieldChange {
            field: "step_count".to_string(),
            before: Value::from(from.steps.len()),
            after: Value::from(to.steps.len()),
            diff: None,
        });
    }
    let scope_changes = [
        &scope.included,
        &scope.excluded,
        &scope.assumptions,
        &scope.constraints,
    ]
    .iter()
    .map(|l| l.added.len() + l.removed.len())
    .sum::<usize>();
    let summary = format!(
        "{} step(s) added, {} removed, {} modified; {} file(s) added, {} removed; {} scope change(s); {} risk(s) added, {} removed, {} risk field(s) changed; {} other field(s) changed",
        steps_added.len(),
        steps_removed.len(),
        steps_modified.len(),
        files.added.len(),
        files.removed.len(),
        scope_changes,
        risks.added.len(),
        risks.removed.len(),
        risks.modified.len(),
        field_changes.len(),
    );
    PlanComparison {
        plan_id: to.id.clone(),
        from_version: from.version,
        to_version: to.version,
        steps_added,
        steps_removed,
        steps_modified,
        files,
        scope,
        risks,
        field_changes,
        summary,
    }
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn list_change(old: &BTreeSet<String>, new: &BTreeSet<String>) -> ListChange {
    ListChange {
        added: new.difference(old).cloned().collect(),
        removed: old.difference(new).cloned().collect(),
    }
}

fn list_change_vec(old: &[String], new: &[String]) -> ListChange {
    list_change(
        &old.iter().cloned().collect(),
        &new.iter().cloned().collect(),
    )
}

/// Appends a change for every differing leaf field: objects are compared key by key, anything
/// else (arrays included) as a whole.
fn diff_values(path: &str, old: &Value, new: &Value, out: &mut Vec<FieldChange>) {
    if old == new {
        return;
    }
    if let (Value::Object(a), Value::Object(b)) = (old, new) {
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for key in keys {
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            diff_values(
                &child,
                a.get(key).unwrap_or(&Value::Null),
                b.get(key).unwrap_or(&Value::Null),
                out,
            );
        }
        return;
    }
    let diff = match (old, new) {
        (Value::String(a), Value::String(b)) => Some(text_diff(a, b)),
        _ => None,
    };
    out.push(FieldChange {
        field: path.to_string(),
        before: old.clone(),
        after: new.clone(),
        diff,
    });
}

fn text_diff(old: &str, new: &str) -> String {
    // Lines without a final newline would print "\ No newline" hints; a field is not a file.
    let old = format!("{old}\n");
    let new = format!("{new}\n");
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("before", "after")
        .to_string()
}

/// What `rollback_plan` is asked to do (its wire request is `api::lifecycle::RollbackPlan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackPlan {
    /// The saved plan's id (`plan_…`).
    pub plan_id: String,
    /// The version whose content becomes current again.
    pub target_version: u32,
    /// Why, recorded in the history.
    pub reason: Option<String>,
    /// Who is acting, recorded in the history (default: the front end's name).
    pub author: Option<String>,
}

/// Output of `rollback_plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RollbackPlanResponse {
    pub plan_id: String,
    /// The version the rollback recorded.
    pub new_version: u32,
    pub rolled_back_to: u32,
    pub plan: Plan,
    /// Step progress after the rollback (kept by step number).
    pub progress: ProgressReport,
    pub message: String,
}

/// Makes an old version current again, as a new version.
pub fn rollback_plan(
    store: &Store,
    request: &RollbackPlan,
) -> Result<RollbackPlanResponse, PlanStoreError> {
    let author = author_of(request.author.as_deref())?;
    let reason = request
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if let Some(reason) = reason {
        check_text("reason", reason)?;
    }
    store.transact(|tx| {
        let (row, _) = current_plan(tx, &request.plan_id)?;
        if request.target_version == row.current_version {
            return Err(PlanStoreError::Conflict(format!(
                "Version {} is already the current version of plan `{}`",
                row.current_version, row.id
            )));
        }
        let mut plan = plan_version(tx, &row, request.target_version)?;
        let summary = match reason {
            Some(reason) => format!(
                "rolled back to version {}: {reason}",
                request.target_version
            ),
            None => format!("rolled back to version {}", request.target_version),
        };
        let version = record_version(
            tx,
            &row,
            &mut plan,
            VersionMeta {
                change_type: "rolled_back",
                summary: &summary,
                author: &author,
            },
        )?;
        tx.log_event(&row.id, None, "rolled_back", &summary, &author)?;
        let progress = PlanState::load(tx, &row.id)?.report();
        Ok(RollbackPlanResponse {
            plan_id: row.id.clone(),
            new_version: version,
            rolled_back_to: request.target_version,
            plan,
            progress,
            message: format!(
                "Plan `{}` is at version {version}, a copy of version {}",
                row.id, request.target_version
            ),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::lifecycle::library::tests::{sample_plan, save};
    use crate::plan::lifecycle::library::{self, PlanRef, SaveOptions};

    fn overwrite(store: &Store, plan: Value, reason: &str) -> u32 {
        let options = SaveOptions {
            overwrite: true,
            author: Some("editor".into()),
            reason: Some(reason.into()),
            ..SaveOptions::default()
        };
        library::save(store, serde_json::from_value(plan).unwrap(), &options)
            .unwrap()
            .plan
            .version
    }

    crate::backend_tests! {
    fn compare_rollback_and_history(store) {
        let v1 = sample_plan();
        let id = save(&store, v1.clone(), None).plan.id;
        let mut v2 = v1.clone();
        v2["id"] = Value::from(id.clone());
        v2["goal"] = Value::from("Add an LRU cache");
        v2["scope"]["included"] = serde_json::json!(["cache layer", "eviction"]);
        v2["risks"] = serde_json::json!([
            {"issue": "stale data", "mitigation": "ttl and invalidation", "likelihood": "high"},
            {"issue": "memory", "mitigation": "cap", "likelihood": "low"}
        ]);
        v2["steps"][1]["title"] = Value::from("Implement LRU");
        v2["steps"][1]["files_to_modify"] =
            serde_json::json!([{"path": "src/lru.rs", "reason": "core"}]);
        v2["steps"].as_array_mut().unwrap().remove(2);
        v2["steps"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"step_number": 4, "title": "Bench", "depends_on": [2]}));
        assert_eq!(overwrite(&store, v2, "review feedback"), 2);

        let cmp = compare_plan_versions(
            &store,
            &ComparePlanVersions {
                plan_id: id.clone(),
                from_version: 1,
                to_version: 2,
            },
        )
        .unwrap();
        assert_eq!(
            cmp.steps_added,
            vec![StepRef {
                step_number: 4,
                title: "Bench".into()
            }]
        );
        assert_eq!(
            cmp.steps_removed,
            vec![StepRef {
                step_number: 3,
                title: "Test".into()
            }]
        );
        let modified: Vec<_> = cmp.steps_modified.iter().map(|s| s.step_number).collect();
        assert_eq!(
            modified,
            vec![1, 2],
            "step 1's blocks changed (3 → 4), step 2's title and files"
        );
        let step2 = &cmp.steps_modified[1];
        let title = step2.changes.iter().find(|c| c.field == "title").unwrap();
        assert_eq!(title.before, Value::from("Implement"));
        assert_eq!(
            title.diff.as_deref(),
            Some("--- before\n+++ after\n@@ -1 +1 @@\n-Implement\n+Implement LRU\n")
        );
        assert!(step2.changes.iter().any(|c| c.field == "files_to_modify"));
        assert_eq!(
            cmp.files,
            ListChange {
                added: vec!["src/lru.rs".into()],
                removed: vec!["src/lib.rs".into()]
            }
        );
        assert_eq!(cmp.scope.included.added, vec!["eviction".to_string()]);
        assert_eq!(cmp.risks.added.len(), 1);
        assert_eq!(cmp.risks.added[0].issue, "memory");
        let risk_fields: Vec<_> = cmp
            .risks
            .modified
            .iter()
            .map(|c| c.field.as_str())
            .collect();
        assert_eq!(
            risk_fields,
            [
                "risks[stale data].likelihood",
                "risks[stale data].mitigation"
            ]
        );
        let goal = cmp
            .field_changes
            .iter()
            .find(|c| c.field == "goal")
            .unwrap();
        assert!(goal.diff.as_deref().unwrap().contains("+Add an LRU cache"));
        assert!(
            cmp.summary
                .starts_with("1 step(s) added, 1 removed, 2 modified"),
            "{}",
            cmp.summary
        );

        // Comparing a version with itself shows nothing.
        let same = compare_plan_versions(
            &store,
            &ComparePlanVersions {
                plan_id: id.clone(),
                from_version: 2,
                to_version: 2,
            },
        )
        .unwrap();
        assert!(
            same.steps_modified.is_empty()
                && same.field_changes.is_empty()
                && same.files.added.is_empty()
        );

        let rolled = rollback_plan(
            &store,
            &RollbackPlan {
                plan_id: id.clone(),
                target_version: 1,
                reason: Some("LRU was premature".into()),
                author: Some("lead".into()),
            },
        )
        .unwrap();
        assert_eq!((rolled.new_version, rolled.rolled_back_to), (3, 1));
        // Version 3 has version 1's content; 2 is still there.
        let back = compare_plan_versions(
            &store,
            &ComparePlanVersions {
                plan_id: id.clone(),
                from_version: 1,
                to_version: 3,
            },
        )
        .unwrap();
        assert!(
            back.steps_added.is_empty()
                && back.steps_removed.is_empty()
                && back.steps_modified.is_empty()
                && back.field_changes.is_empty(),
            "{back:?}"
        );
        let current = library::load(&store, &PlanRef::Id(id.clone()), None).unwrap();
        assert_eq!(current.plan.version, 3);
        assert_eq!(current.plan.goal, "Add a cache");
        assert_eq!(
            library::load(&store, &PlanRef::Id(id.clone()), Some(2))
                .unwrap()
                .plan
                .goal,
            "Add an LRU cache"
        );

        let history = view_history(
            &store,
            &ViewHistory {
                plan_id: id.clone(),
                limit: None,
                include_plans: true,
            },
        )
        .unwrap();
        assert_eq!(history.total_versions, 3);
        let kinds: Vec<_> = history
            .versions
            .iter()
            .map(|v| (v.version, v.change_type.as_str(), v.author.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (3, "rolled_back", "lead"),
                (2, "modified", "editor"),
                (1, "created", "tester")
            ]
        );
        assert_eq!(
            history.versions[0].summary,
            "rolled back to version 1: LRU was premature"
        );
        assert_eq!(history.versions[1].summary, "review feedback");
        assert_eq!(
            history.versions[2].plan.as_ref().unwrap().goal,
            "Add a cache"
        );

        let err = rollback_plan(
            &store,
            &RollbackPlan {
                plan_id: id.clone(),
                target_version: 9,
                reason: None,
                author: None,
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("versions 1 to 3"), "{err}");
        let err = rollback_plan(
            &store,
            &RollbackPlan {
                plan_id: "plan_nope".into(),
                target_version: 1,
                reason: None,
                author: None,
            },
        )
        .unwrap_err();
        assert_eq!(err.code(), "PLAN_NOT_FOUND");
    }
    }
}
