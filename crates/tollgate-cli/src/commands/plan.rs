//! `tollgate plan …`: writing plans (create, refine, show, visualize: `plan_authoring.rs`) and
//! the plan store (list, save, load, history, approvals, steps: `plan_store.rs`), and carrying
//! a plan out with the model (execute, undo: `plan_execute.rs`). Every plan command first rolls
//! back a step run a killed process left half done.
//! Each subcommand builds the core request, calls one `tollgate::plan` operation, and prints
//! the response as text or (`--json`) as JSON. Errors go to stderr with their code; exit 2.

use tollgate::plan::DiagramType;

use super::ExitStatus;
use super::plan_authoring::{self, CreateOptions, RefineOptions};
use super::plan_execute::{self, ExecuteOptions};
use super::plan_store;
use crate::args::{PlanArgs, PlanCommand};

pub fn run(args: PlanArgs) -> anyhow::Result<ExitStatus> {
    plan_execute::recover(&args.repo);
    if let PlanCommand::Undo {
        plan_id,
        step,
        force,
    } = args.command
    {
        let author = args.author.unwrap_or_else(plan_store::default_author);
        return plan_execute::undo(&args.repo, plan_id, step, force, author, args.json);
    }
    let authoring = matches!(
        args.command,
        PlanCommand::Create { .. }
            | PlanCommand::Refine { .. }
            | PlanCommand::Show { .. }
            | PlanCommand::Visualize { .. }
    );
    if let PlanCommand::Execute {
        plan,
        mode,
        step,
        apply,
        max_steps,
        continue_on_failure,
        context,
    } = args.command
    {
        let author = args.author.unwrap_or_else(plan_store::default_author);
        return plan_execute::run(
            &args.repo,
            ExecuteOptions {
                plan,
                mode,
                step,
                apply,
                max_steps,
                continue_on_failure,
                context,
                author,
            },
            args.json,
        );
    }
    if !authoring {
        return plan_store::run(args);
    }
    let repo = args.repo.as_path();
    let json = args.json;
    match args.command {
        PlanCommand::Create {
            task,
            max_context_files,
            context_token_budget,
            no_diagrams,
            mvp_only,
            include,
            exclude,
            from_plan,
            save,
        } => plan_authoring::create(
            repo,
            CreateOptions {
                task: task.join(" "),
                max_context_files,
                context_token_budget,
                no_diagrams,
                mvp_only,
                include,
                exclude,
                from_plan,
                save,
            },
            json,
        ),
        PlanCommand::Refine {
            plan,
            feedback,
            clarifications,
            focus_steps,
            save,
        } => plan_authoring::refine(
            repo,
            RefineOptions {
                plan,
                feedback,
                clarifications,
                focus_steps,
                save,
                author: args.author.unwrap_or_else(plan_store::default_author),
            },
            json,
        ),
        PlanCommand::Show { plan } => plan_authoring::show(repo, &plan, json),
        PlanCommand::Visualize { plan, diagram_type } => {
            let diagram_type = match diagram_type.as_str() {
                "architecture" => DiagramType::Architecture,
                "gantt" => DiagramType::Gantt,
                _ => DiagramType::Dependencies,
            };
            plan_authoring::visualize(repo, &plan, diagram_type, json)
        }
        _ => unreachable!("store commands returned above"),
    }
}
