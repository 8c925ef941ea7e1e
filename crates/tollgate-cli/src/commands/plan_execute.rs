//! `tollgate plan execute`: carry out steps of a plan with the configured model. Prints each
//! step's diffs as Markdown (or `--json`); `--apply` writes them and records the steps.
//! Exit 0 when every step that ran succeeded, 1 when one failed, 2 on an error.
//! `tollgate plan undo` puts a step's files back from its backups; [`recover`] rolls back a
//! run a killed process left half done, before any plan command.

use std::path::Path;

use tollgate::api::plan::{ExecutePlanRequest, FrontEnd, execute_plan};
use tollgate::control::Control;
use tollgate::plan::lifecycle::execute::{ExecuteMode, StepRunStatus};
use tollgate::plan::lifecycle::journal::recover_interrupted;
use tollgate::plan::lifecycle::undo::{UndoStep, undo_step};
use tollgate::store::DEFAULT_STORE_PATH;

use super::ExitStatus;
use super::plan_authoring::{planning_model, read_json};

/// `plan execute`.
#[derive(Debug)]
pub struct ExecuteOptions {
    /// A plan file, `-` for stdin, or a saved plan's id.
    pub plan: String,
    pub mode: String,
    pub step: Option<u32>,
    pub apply: bool,
    pub max_steps: Option<usize>,
    pub continue_on_failure: bool,
    pub context: Option<String>,
    pub author: String,
}

pub fn run(repo: &Path, options: ExecuteOptions, json: bool) -> anyhow::Result<ExitStatus> {
    let (plan, plan_id) = if options.plan == "-" || Path::new(&options.plan).is_file() {
        (Some(read_json(&options.plan)?), None)
    } else {
        (None, Some(options.plan.clone()))
    };
    let mode = match options.mode.as_str() {
        "all_ready" => ExecuteMode::AllReady,
        "full_plan" => ExecuteMode::FullPlan,
        _ => ExecuteMode::SingleStep,
    };
    let request = ExecutePlanRequest {
        plan,
        plan_id,
        mode,
        step_number: options.step,
        apply_changes: options.apply,
        max_steps: options.max_steps,
        stop_on_failure: Some(!options.continue_on_failure),
        additional_context: options.context,
        author: Some(options.author),
    };
    let llm = planning_model(repo)?;
    let store = super::store::open(repo)?;
    let control = Control::new();
    let response = match execute_plan(&store, repo, llm.as_ref(), request, &control, FrontEnd::Cli)
    {
        Ok(response) => response,
        Err(err) => {
            eprintln!("error [{}]: {err}", err.code);
            return Ok(ExitStatus::Error);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&response)?);
    } else {
        print!("{}", response.markdown);
    }
    let failed = response
        .step_results
        .iter()
        .any(|result| result.status == StepRunStatus::Failed);
    Ok(if failed {
        ExitStatus::GateFailed
    } else {
        ExitStatus::Pass
    })
}

/// Rolls back interrupted step runs of the workspace's store, saying so on stderr. A workspace
/// without a store has none; a store that cannot be opened is the command's own error to report.
pub fn recover(repo: &Path) {
    if !super::store::configured(repo) && !repo.join(DEFAULT_STORE_PATH).is_file() {
        return;
    }
    let Ok(store) = super::store::open(repo) else {
        return;
    };
    match recover_interrupted(&store, repo) {
        Ok(recovered) => {
            for run in recovered {
                eprintln!("note: {}", run.message);
            }
        }
        Err(err) => eprintln!(
            "warning [{}]: an interrupted step run could not be rolled back: {err}",
            err.code()
        ),
    }
}

/// `plan undo`.
pub fn undo(
    repo: &Path,
    plan_id: String,
    step_number: Option<u32>,
    force: bool,
    author: String,
    json: bool,
) -> anyhow::Result<ExitStatus> {
    let store = super::store::open(repo)?;
    let request = UndoStep {
        plan_id,
        step_number,
        force,
        author: Some(author),
    };
    let response = match undo_step(&store, repo, &request) {
        Ok(response) => response,
        Err(err) => {
            eprintln!("error [{}]: {err}", err.code());
            return Ok(ExitStatus::Error);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&response)?);
    } else {
        println!("{}", response.message);
        for path in &response.files_restored {
            println!("  restored {path}");
        }
    }
    Ok(ExitStatus::Pass)
}
