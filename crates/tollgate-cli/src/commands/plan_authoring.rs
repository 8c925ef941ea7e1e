//! `tollgate plan create|refine|show|visualize`: writing and reading plans. Each reads its plan
//! once into a typed [`Plan`], calls one `tollgate::plan` operation (through `tollgate::api`
//! where the input is a request) and prints Markdown (or `--json`).

use std::path::Path;

use anyhow::Context;
use serde_json::Value;
use tollgate::api::ApiError;
use tollgate::api::plan::{
    CreatePlanRequest, FrontEnd, create_plan, parse_plan, plan_error, plan_store_error,
    refinement_of,
};
use tollgate::plan::lifecycle::library::{self, PlanRef};
use tollgate::plan::{DiagramType, Plan, PlanResponse, render_markdown};

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
    finish(
        create_plan(
            repo,
            llm.as_ref(),
            request,
            FrontEnd::Cli,
            &super::store::settings(repo)?,
        ),
        json,
    )
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
    let current = plan_source(repo, &options.plan)?;
    let clarifications = options.clarifications.map(Value::String);
    let refinement = refinement_of(
        options.feedback.as_deref(),
        clarifications.as_ref(),
        &options.focus_steps,
        None,
    );
    let refined = refinement.and_then(|refinement| {
        tollgate::plan::refine(llm.as_ref(), current, &refinement).map_err(plan_error)
    });
    let mut response = match refined {
        Ok(response) => response,
        Err(err) => return Ok(report(&err)),
    };
    if options.save {
        let store = super::store::open(repo)?;
        if let Err(err) =
            library::save_response(&store, &mut response, true, &options.author, "refined")
        {
            return Ok(report(&plan_store_error(err, FrontEnd::Cli)));
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
    let parsed = plan_source(repo, plan)?;
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
    let plan = plan_source(repo, plan)?;
    match tollgate::plan::visualize(plan, diagram_type) {
        Ok(response) if json => outln!("{}", serde_json::to_string_pretty(&response)?),
        Ok(response) => print!("{}", response.mermaid),
        Err(err) => return Ok(report(&plan_error(err))),
    }
    Ok(ExitStatus::Pass)
}

fn finish(result: Result<PlanResponse, ApiError>, json: bool) -> anyhow::Result<ExitStatus> {
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

fn report(err: &ApiError) -> ExitStatus {
    eprintln!("error [{}]: {}", err.code, err.message);
    ExitStatus::Error
}

/// The model `tollgate.toml` and `TOLLGATE_LLM_*` configure, or `None`.
pub(super) fn planning_model(repo: &Path) -> anyhow::Result<Option<tollgate::llm::LlmClient>> {
    Ok(tollgate::plan::planning_model(repo, super::store::env())?)
}

/// A plan argument: `-` (stdin), a JSON file, else the id of a saved plan.
fn plan_source(repo: &Path, source: &str) -> anyhow::Result<Plan> {
    if source == "-" || Path::new(source).is_file() {
        let value = read_json(source)?;
        return parse_plan(&value, "plan").map_err(|err| anyhow::anyhow!("{source}: {err}"));
    }
    let store = super::store::open(repo)?;
    let loaded = library::load(&store, &PlanRef::Id(source.to_string()), None).map_err(|err| {
        anyhow::anyhow!(
            "{source} is neither a plan file nor a saved plan: {}",
            plan_store_error(err, FrontEnd::Cli)
        )
    })?;
    Ok(loaded.plan)
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
