//! `tollgate plan list|save|load|delete|history|diff|rollback|approve|progress|step`: saved
//! plans, versions, approvals and step progress on the workspace's store.

use std::path::Path;

use anyhow::Context;

use tollgate::api::ApiError;
use tollgate::api::plan::{
    DeletePlanRequest, FrontEnd, ListPlansRequest, LoadPlanRequest, SavePlanRequest, delete_plan,
    list_plans, load_plan, plan_store_error, save_plan,
};
use tollgate::plan::lifecycle::approval::{
    ApprovalAction, RequestApproval, RespondApproval, list_approvals, request_approval,
    respond_approval,
};
use tollgate::plan::lifecycle::history::{
    ComparePlanVersions, PlanComparison, RollbackPlan, ViewHistory, ViewHistoryResponse,
    compare_plan_versions, rollback_plan, view_history,
};
use tollgate::plan::lifecycle::library::{ListPlansResponse, PlanStoreError};
use tollgate::plan::lifecycle::progress::{
    CompleteStep, FailStep, ProgressReport, StartStep, StepUpdate, ViewProgress, complete_step,
    fail_step, start_step, view_progress,
};
use tollgate::store::Store;

use super::ExitStatus;
use crate::args::{PlanApproveCommand, PlanArgs, PlanCommand, PlanStepCommand};

pub fn run(args: PlanArgs) -> anyhow::Result<ExitStatus> {
    let store = super::store::open(&args.repo)?;
    let author = Some(args.author.clone().unwrap_or_else(default_author));
    let json = args.json;
    let outcome = dispatch(&store, args.command, author, json);
    match outcome {
        Ok(()) => Ok(ExitStatus::Pass),
        Err(Failure::Api(err)) => {
            eprintln!("error [{}]: {}", err.code, err.message);
            Ok(ExitStatus::Error)
        }
        Err(Failure::Other(err)) => Err(err),
    }
}

/// The CLI's default author: the login name, else `cli`.
pub(super) fn default_author() -> String {
    std::env::var("USER")
        .ok()
        .filter(|user| !user.is_empty())
        .unwrap_or_else(|| "cli".to_string())
}

enum Failure {
    Api(ApiError),
    Other(anyhow::Error),
}

impl From<PlanStoreError> for Failure {
    fn from(err: PlanStoreError) -> Failure {
        Failure::Api(plan_store_error(err, FrontEnd::Cli))
    }
}

impl From<ApiError> for Failure {
    fn from(err: ApiError) -> Failure {
        Failure::Api(err)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(err: anyhow::Error) -> Failure {
        Failure::Other(err)
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).map_err(anyhow::Error::from)?;
    outln!("{text}");
    Ok(())
}

/// Prints `value` as JSON with `--json`, else the way `human` shows it.
fn show<T: serde::Serialize>(json: bool, value: &T, human: impl FnOnce(&T)) -> Result<(), Failure> {
    if json {
        return print_json(value);
    }
    human(value);
    Ok(())
}

fn print_listing(response: &ListPlansResponse) {
    if response.plans.is_empty() {
        textln!("No saved plans.");
    }
    for plan in &response.plans {
        textln!(
            "{}  v{}  {:<9}  {} step(s)  {}{}{}",
            plan.id,
            plan.version,
            plan.status,
            plan.step_count,
            plan.name
                .as_deref()
                .map(|n| format!("[{n}] "))
                .unwrap_or_default(),
            plan.goal,
            if plan.deleted_at.is_some() {
                "  (deleted)"
            } else {
                ""
            }
        );
    }
}

fn print_history(response: &ViewHistoryResponse) {
    textln!(
        "Plan {}: version {} of {}",
        response.plan_id,
        response.current_version,
        response.total_versions
    );
    for version in &response.versions {
        textln!(
            "  v{:<3} {:<12} {}  by {}: {}",
            version.version,
            version.change_type,
            version.created_at,
            version.author,
            version.summary
        );
    }
    if !response.events.is_empty() {
        textln!("Events:");
        for event in &response.events {
            textln!(
                "  {}  {}{}  by {}{}",
                event.created_at,
                event.kind,
                event
                    .step_number
                    .map(|n| format!(" (step {n})"))
                    .unwrap_or_default(),
                event.author,
                if event.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", event.detail)
                }
            );
        }
    }
}

fn print_comparison(cmp: &PlanComparison) {
    textln!(
        "Plan {}: version {} → {}\n{}",
        cmp.plan_id,
        cmp.from_version,
        cmp.to_version,
        cmp.summary
    );
    for step in &cmp.steps_added {
        textln!("+ step {}: {}", step.step_number, step.title);
    }
    for step in &cmp.steps_removed {
        textln!("- step {}: {}", step.step_number, step.title);
    }
    for step in &cmp.steps_modified {
        textln!("~ step {}: {}", step.step_number, step.title);
        for change in &step.changes {
            print_change("    ", change);
        }
    }
    for file in &cmp.files.added {
        textln!("+ file {file}");
    }
    for file in &cmp.files.removed {
        textln!("- file {file}");
    }
    for change in cmp.risks.modified.iter().chain(&cmp.field_changes) {
        print_change("", change);
    }
}

fn dispatch(
    store: &Store,
    command: PlanCommand,
    author: Option<String>,
    json: bool,
) -> Result<(), Failure> {
    match command {
        // plan.rs sends the authoring commands to plan_authoring.rs; they never reach here.
        PlanCommand::Create { .. }
        | PlanCommand::Refine { .. }
        | PlanCommand::Show { .. }
        | PlanCommand::Visualize { .. }
        | PlanCommand::Execute { .. }
        | PlanCommand::Undo { .. } => {
            unreachable!("authoring, execute and undo commands are not store commands")
        }
        PlanCommand::List {
            status,
            tags,
            limit,
            include_deleted,
        } => {
            let request = ListPlansRequest {
                status,
                tags,
                limit,
                include_deleted,
            };
            let response = list_plans(store, request, FrontEnd::Cli)?;
            show(json, &response, print_listing)
        }
        PlanCommand::Save {
            file,
            name,
            tags,
            overwrite,
            reason,
        } => {
            let text = read_input(&file)?;
            let plan: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", file.display()))?;
            let request = SavePlanRequest {
                plan,
                name,
                tags,
                overwrite,
                author,
                reason,
            };
            let response = save_plan(store, request, FrontEnd::Cli)?;
            show(json, &response, |response| textln!("{}", response.message))
        }
        PlanCommand::Load {
            plan_id,
            name,
            version,
        } => {
            let request = LoadPlanRequest {
                plan_id,
                name,
                version,
            };
            let response = load_plan(store, &request, FrontEnd::Cli)?;
            // A plan is data: JSON either way.
            if json {
                print_json(&response)
            } else {
                print_json(&response.plan)
            }
        }
        PlanCommand::Delete { plan_id } => {
            let request = DeletePlanRequest { plan_id, author };
            let response = delete_plan(store, &request, FrontEnd::Cli)?;
            show(json, &response, |response| textln!("{}", response.message))
        }
        PlanCommand::History {
            plan_id,
            limit,
            include_plans,
        } => {
            let response = view_history(
                store,
                &ViewHistory {
                    plan_id,
                    limit,
                    include_plans,
                },
            )?;
            show(json, &response, print_history)
        }
        PlanCommand::Diff {
            plan_id,
            from_version,
            to_version,
        } => {
            let cmp = compare_plan_versions(
                store,
                &ComparePlanVersions {
                    plan_id,
                    from_version,
                    to_version,
                },
            )?;
            show(json, &cmp, print_comparison)
        }
        PlanCommand::Rollback {
            plan_id,
            target_version,
            reason,
        } => {
            let response = rollback_plan(
                store,
                &RollbackPlan {
                    plan_id,
                    target_version,
                    reason,
                    author,
                },
            )?;
            show(json, &response, |response| textln!("{}", response.message))
        }
        PlanCommand::Approve { command } => approve(store, command, author, json),
        PlanCommand::Progress { plan_id } => {
            let report = view_progress(store, &ViewProgress { plan_id })?;
            show(json, &report, print_progress)
        }
        PlanCommand::Step { command } => {
            let update = step(store, command, author)?;
            show(json, &update, |update| {
                textln!("{}", update.message);
                print_progress(&update.progress);
            })
        }
    }
}

/// `plan step start|complete|fail`.
fn step(
    store: &Store,
    command: PlanStepCommand,
    author: Option<String>,
) -> Result<StepUpdate, PlanStoreError> {
    Ok(match command {
        PlanStepCommand::Start {
            plan_id,
            step_number,
        } => start_step(
            store,
            &StartStep {
                plan_id,
                step_number,
                author,
            },
        )?,
        PlanStepCommand::Complete {
            plan_id,
            step_number,
            notes,
            files,
        } => complete_step(
            store,
            &CompleteStep {
                plan_id,
                step_number,
                notes,
                files_modified: files,
                author,
            },
        )?,
        PlanStepCommand::Fail {
            plan_id,
            step_number,
            error,
            retry,
            skip,
            skip_dependents,
        } => fail_step(
            store,
            &FailStep {
                plan_id,
                step_number,
                error,
                retry,
                skip,
                skip_dependents,
                author,
            },
        )?,
    })
}

fn approve(
    store: &Store,
    command: PlanApproveCommand,
    author: Option<String>,
    json: bool,
) -> Result<(), Failure> {
    let response = match command {
        PlanApproveCommand::Request {
            plan_id,
            steps,
            note,
        } => request_approval(
            store,
            &RequestApproval {
                plan_id,
                step_numbers: steps,
                note,
                author,
            },
        )?,
        PlanApproveCommand::Respond {
            request_id,
            action,
            comment,
            modifications,
        } => {
            let action = match action.as_str() {
                "approve" => ApprovalAction::Approve,
                "reject" => ApprovalAction::Reject,
                _ => ApprovalAction::RequestModification,
            };
            let modifications = modifications
                .map(|text| serde_json::from_str(&text))
                .transpose()
                .context("--modifications is not JSON")?;
            respond_approval(
                store,
                &RespondApproval {
                    request_id,
                    action,
                    comment,
                    modifications,
                    author,
                },
            )?
        }
        PlanApproveCommand::List { plan_id } => {
            let approvals = list_approvals(store, &plan_id)?;
            if json {
                return print_json(&approvals);
            }
            for approval in &approvals {
                textln!(
                    "{}  {:<10} {:<22} v{}  requested by {}{}",
                    approval.id,
                    approval.kind,
                    approval.status,
                    approval.plan_version,
                    approval.requested_by,
                    approval
                        .responded_by
                        .as_deref()
                        .map(|by| format!(", answered by {by}"))
                        .unwrap_or_default()
                );
            }
            return Ok(());
        }
    };
    if json {
        return print_json(&response);
    }
    textln!(
        "{} (plan status: {})",
        response.message,
        response.plan_status
    );
    Ok(())
}

fn print_change(indent: &str, change: &tollgate::plan::lifecycle::history::FieldChange) {
    match &change.diff {
        Some(diff) => {
            textln!("{indent}{}:", change.field);
            for line in diff.lines().skip(2) {
                textln!("{indent}  {line}");
            }
        }
        None => textln!(
            "{indent}{}: {} → {}",
            change.field,
            change.before,
            change.after
        ),
    }
}

fn print_progress(report: &ProgressReport) {
    let c = report.counts;
    let list = |steps: &[u32]| {
        if steps.is_empty() {
            "none".to_string()
        } else {
            steps
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    textln!(
        "Plan {} (v{}, {}): {:.1}% done — {} completed, {} skipped, {} failed, {} in progress, {} ready, {} blocked of {}",
        report.plan_id,
        report.plan_version,
        report.plan_status,
        report.percentage,
        c.completed,
        c.skipped,
        c.failed,
        c.in_progress,
        c.ready,
        c.blocked,
        c.total
    );
    textln!("  ready: {}", list(&report.next_ready_steps));
    textln!("  current: {}", list(&report.current_steps));
    textln!("  blocked: {}", list(&report.blocked_steps));
}

fn read_input(path: &Path) -> anyhow::Result<String> {
    let limit = tollgate::input::Limit::fixed(tollgate::input::DEFAULT_MAX_INPUT_BYTES);
    let bytes = if path == Path::new("-") {
        tollgate::input::read_stream(std::io::stdin().lock(), "plan", "from stdin", limit)?
    } else {
        tollgate::input::read_file(path, "plan file", limit)?
    };
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8", path.display()))
}
