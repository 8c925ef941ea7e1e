//! `tollgate plan execute`: carry out steps of a plan with the configured model. Prints each
//! step's diffs as Markdown (or `--json`); `--apply` writes them and records the steps.
//! Exit 0 when every step that ran succeeded, 1 when one failed, 2 on an error.

use std::path::Path;

use anyhow::Context;
use tollgate::control::Control;
use tollgate::plan::execute::{ExecuteMode, ExecutePlanRequest, StepRunStatus, execute_plan};
use tollgate::store::Store;

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
    let store = Store::open_in_workspace(repo)
        .with_context(|| format!("opening the plan store of {}", repo.display()))?;
    let response = match execute_plan(&store, repo, llm.as_ref(), &request, &Control::new()) {
        Ok(response) => response,
        Err(err) => {
            eprintln!("error [{}]: {err}", err.code());
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
