//! `tollgate plan create|refine|show|visualize`: writing and reading plans. Each builds the
//! core request, calls one `tollgate::plan` operation and prints Markdown (or `--json`).

use std::path::Path;

use anyhow::Context;
use serde_json::Value;
use tollgate::plan::library::{FrontEnd, LoadPlanRequest, load_plan};
use tollgate::plan::{
    CreatePlanRequest, DiagramType, PlanError, PlanResponse, RefinePlanRequest,
    VisualizePlanRequest, create_plan, refine_plan, render_markdown, save_refined, visualize_plan,
};
use tollgate::store::Store;

use super::ExitStatus;

/// `plan create`.
#[derive(Debug)]
pub struct CreateOptions {
    pub task: String,
    pub max_context_files: Option<usize>,
    pub context_token_budget: Option<usize>,
    pub no_diagrams: bool,
    pub mvp_only: bool,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// An agent's plan to validate and enrich (file or `-`).
    pub from_plan: Option<String>,
    pub save: bool,
}

pub fn create(repo: &Path, options: CreateOptions, json: bool) -> anyhow::Result<ExitStatus> {
    let llm = planning_model(repo)?;
    let plan = match &options.from_plan {
        Some(source) => Some(read_json(source)?),
        None => None,
    };
    let request = CreatePlanRequest {
        task: options.task,
        max_context_files: options.max_context_files,
        context_token_budget: options.context_token_budget,
        generate_diagrams: Some(!options.no_diagrams),
        mvp_only: Some(options.mvp_only),
        include_paths: options.include,
        exclude_paths: options.exclude,
        plan,
        auto_save: Some(options.save),
    };
    finish(create_plan(repo, llm.as_ref(), &request), json)
}

/// `plan refine`.
#[derive(Debug)]
pub struct RefineOptions {
    /// A plan file, `-`, or a saved plan's id.
    pub plan: String,
    pub feedback: Option<String>,
    pub clarifications: Option<String>,
    pub focus_steps: Vec<u32>,
    /// Store the result as the plan's next version.
    pub save: bool,
    pub author: String,
}

pub fn refine(repo: &Path, options: RefineOptions, json: bool) -> anyhow::Result<ExitStatus> {
    let llm = planning_model(repo)?;
    let request = RefinePlanRequest {
        current_plan: plan_value(repo, &options.plan)?,
        feedback: options.feedback,
        clarifications: options.clarifications.map(Value::String),
        focus_steps: options.focus_steps,
        generate_diagrams: None,
    };
    let mut response = match refine_plan(llm.as_ref(), &request) {
        Ok(response) => response,
        Err(err) => return Ok(report(&err)),
    };
    if options.save {
        if let Err(err) = save_refined(repo, &mut response, &options.author) {
            return Ok(report(&err));
        }
    } else if !json {
        // The Markdown says "version N": say that nothing stored it.
        eprintln!(
            "not saved: version {} of plan `{}` exists only in this output (--save stores it)",
            response.plan.version, response.plan.id
        );
    }
    finish(Ok(response), json)
}

/// `plan show`: a plan (file, `-` or saved id) as Markdown or JSON.
pub fn show(repo: &Path, plan: &str, json: bool) -> anyhow::Result<ExitStatus> {
    let value = plan_value(repo, plan)?;
    let parsed: tollgate::plan::Plan =
        serde_json::from_value(value).context("the input is not a plan")?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&parsed)?);
    } else {
        print!("{}", render_markdown(&parsed, &[]));
    }
    Ok(ExitStatus::Pass)
}

/// `plan visualize`: the Mermaid source (or `--json`: upstream's response object).
pub fn visualize(
    repo: &Path,
    plan: &str,
    diagram_type: DiagramType,
    json: bool,
) -> anyhow::Result<ExitStatus> {
    let request = VisualizePlanRequest {
        plan: plan_value(repo, plan)?,
        diagram_type: Some(diagram_type),
    };
    match visualize_plan(&request) {
        Ok(response) if json => outln!("{}", serde_json::to_string_pretty(&response)?),
        Ok(response) => print!("{}", response.mermaid),
        Err(err) => return Ok(report(&err)),
    }
    Ok(ExitStatus::Pass)
}

fn finish(result: Result<PlanResponse, PlanError>, json: bool) -> anyhow::Result<ExitStatus> {
    match result {
        Ok(response) => {
            for warning in &response.warnings {
                eprintln!("warning: {warning}");
            }
            if json {
                outln!("{}", serde_json::to_string_pretty(&response)?);
            } else {
                print!("{}", response.markdown);
                if let Some(saved) = &response.saved {
                    eprintln!("{}", saved.message);
                }
            }
            Ok(ExitStatus::Pass)
        }
        Err(err) => Ok(report(&err)),
    }
}

fn report(err: &PlanError) -> ExitStatus {
    eprintln!("error [{}]: {}", err.code(), err.message(FrontEnd::Cli));
    ExitStatus::Error
}

/// The model `tollgate.toml` and `TOLLGATE_LLM_*` configure, or `None`.
pub(super) fn planning_model(repo: &Path) -> anyhow::Result<Option<tollgate::llm::LlmClient>> {
    Ok(tollgate::plan::planning_model(repo, std::env::vars())?)
}

/// A plan argument: `-` (stdin), a JSON file, else the id of a saved plan.
fn plan_value(repo: &Path, source: &str) -> anyhow::Result<Value> {
    if source == "-" || Path::new(source).is_file() {
        return read_json(source);
    }
    let store = Store::open_in_workspace(repo)
        .with_context(|| format!("opening the plan store of {}", repo.display()))?;
    let loaded = load_plan(
        &store,
        &LoadPlanRequest {
            plan_id: Some(source.to_string()),
            ..LoadPlanRequest::default()
        },
    )
    .map_err(|err| {
        anyhow::anyhow!(
            "{source} is neither a plan file nor a saved plan: {}",
            err.message(FrontEnd::Cli)
        )
    })?;
    Ok(serde_json::to_value(loaded.plan)?)
}

pub(super) fn read_json(source: &str) -> anyhow::Result<Value> {
    let limit = tollgate::input::Limit::fixed(tollgate::input::DEFAULT_MAX_INPUT_BYTES);
    let bytes = if source == "-" {
        tollgate::input::read_stream(std::io::stdin().lock(), "plan", "from stdin", limit)?
    } else {
        tollgate::input::read_file(std::path::Path::new(source), "plan file", limit)?
    };
    serde_json::from_slice(&bytes).with_context(|| format!("{source} is not JSON"))
}
