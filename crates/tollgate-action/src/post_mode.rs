//! `--mode post`: stage 2 of the fork pattern. Runs in a trusted `workflow_run` job with a
//! write token, reviews nothing and runs nothing from the pull request: it reads the artifact
//! stage 1 left in `output-dir`, refuses it unless [`artifact::read`] validates it and it is
//! about the commit the workflow run names, then posts the core's publish plan for it through
//! the same code as a normal run.
//!
//! Exit codes: 2 when the artifact (or the event) is refused, before any API call; otherwise 0.
//! Failures to post are warnings, and the gate's verdict was stage 1's to give.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use reqwest::Method;
use serde::Deserialize;
use tollgate::publish::{self, PublishConfig};
use tollgate::report;

use crate::args::Args;
use crate::artifact::{self, Artifact};
use crate::github::GitHub;
use crate::outputs;
use crate::post::{self, Parts, Target};
use crate::run::{Verdict, env_path, validate_repository};
use crate::token::Token;

/// The trusted facts: what GitHub says the finished run was about.
#[derive(Debug)]
struct Trusted {
    head_sha: String,
    /// The run's pull requests; empty for a fork's (GitHub leaves them out).
    pull_requests: Vec<u64>,
}

#[derive(Debug, Deserialize)]
struct Payload {
    workflow_run: Option<WorkflowRun>,
}

#[derive(Debug, Deserialize)]
struct WorkflowRun {
    head_sha: String,
    #[serde(default)]
    pull_requests: Vec<RunPullRequest>,
}

#[derive(Debug, Deserialize)]
struct RunPullRequest {
    number: u64,
}

pub fn run(args: &Args) -> anyhow::Result<Verdict> {
    validate_repository(&args.repository)?;
    let trusted = trusted(args)?;
    let dir = if args.output_dir.is_absolute() {
        args.output_dir.clone()
    } else {
        args.workspace.join(&args.output_dir)
    };
    let Artifact {
        info,
        result,
        changed,
    } = artifact::read(&dir).context("the stage-1 artifact is refused")?;
    artifact::check_against(
        &info,
        &args.repository,
        &trusted.head_sha,
        &trusted.pull_requests,
    )
    .context("the stage-1 artifact is refused")?;
    let head_sha = trusted.head_sha.as_str();

    let link_base = format!(
        "{}/{}/blob/{head_sha}/",
        args.server_url.trim_end_matches('/'),
        args.repository
    );
    let mut publish_config = PublishConfig::new(Some(link_base));
    publish_config.max_inline_comments = args.max_inline_comments;
    publish_config.min_inline_severity = args.inline_min_severity;
    let plan = publish::plan(&result, &changed, &publish_config);
    outputs::write_summary(
        env_path("GITHUB_STEP_SUMMARY").as_deref(),
        &plan.job_summary,
    )?;
    let sarif = dir.join("tollgate.sarif");
    let sarif_path = if is_regular_file(&sarif) {
        sarif.display().to_string()
    } else {
        String::new()
    };
    let write_outputs = |pull_request: Option<u64>| {
        outputs::write_outputs(
            env_path("GITHUB_OUTPUT").as_deref(),
            &[
                ("should-fail", result.should_fail.to_string()),
                (
                    "findings",
                    (result.findings.len() + result.stats.findings_truncated).to_string(),
                ),
                ("sarif-path", sarif_path.clone()),
                (
                    "pull-request",
                    pull_request.map_or_else(String::new, |number| number.to_string()),
                ),
            ],
        )
    };

    let token = Token::new(args.github_token.clone())
        .or_else(|| Token::new(std::env::var("GITHUB_TOKEN").ok()));
    let Some(token) = token else {
        eprintln!("tollgate-action: no github-token: nothing is posted");
        write_outputs(None)?;
        return Ok(Verdict::Pass);
    };
    let github = GitHub::new(
        &args.api_url,
        token,
        Duration::from_millis(args.retry_base_ms),
    )?;
    let mut warnings = Vec::new();
    // The number comes from the fork's artifact: post on that pull request only when GitHub
    // says its head is the commit this workflow run reviewed.
    let pull_request = match info.pull_request {
        None => None,
        Some(number) => {
            let path = format!("/repos/{}/pulls/{number}", args.repository);
            match github.call(Method::GET, &path, None) {
                Ok(pr) if pr.pointer("/head/sha").and_then(|v| v.as_str()) == Some(head_sha) => {
                    Some(number)
                }
                Ok(_) => {
                    warnings.push(format!(
                        "pull request #{number} is no longer at {head_sha}: its comment and review \
                         are left for the run on its new head"
                    ));
                    None
                }
                Err(err) => {
                    warnings.push(format!(
                        "cannot confirm pull request #{number} ({err}): its comment and review are \
                         not posted"
                    ));
                    None
                }
            }
        }
    };
    let target = Target {
        repository: &args.repository,
        pull_request,
        head_sha,
    };
    let parts = Parts {
        comment: args.comment,
        inline_comments: args.inline_comments,
        check_run: args.check_run,
        bot_login: &args.bot_login,
    };
    let failures = post::publish(&github, &target, &parts, &plan);
    write_outputs(pull_request)?;
    warnings.extend(failures.iter().map(ToString::to_string));
    for warning in &warnings {
        println!(
            "::warning title=Tollgate could not post::{}",
            report::escape_data(warning)
        );
    }
    eprintln!(
        "tollgate-action: posted the stage-1 result for {head_sha}: {} finding(s), gate {}",
        result.findings.len(),
        if result.should_fail {
            "failed"
        } else {
            "passed"
        }
    );
    Ok(Verdict::Pass)
}

/// The commit the artifact must be about: the `head` input, else `workflow_run.head_sha`.
fn trusted(args: &Args) -> anyhow::Result<Trusted> {
    let head_input = args
        .head
        .as_deref()
        .map(str::trim)
        .filter(|head| !head.is_empty());
    let payload: Option<Payload> = match crate::event::read_payload(&args.event_path) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "the event payload {} is not valid JSON",
                args.event_path.display()
            )
        })?),
        Err(_) if head_input.is_some() => None,
        Err(err) => {
            return Err(err).with_context(|| {
                format!(
                    "cannot read the event payload {}",
                    args.event_path.display()
                )
            });
        }
    };
    let run = payload.and_then(|payload| payload.workflow_run);
    let head_sha = match (head_input, &run) {
        (Some(head), _) => head.to_string(),
        (None, Some(run)) => run.head_sha.clone(),
        (None, None) => bail!(
            "mode `post` runs on a `workflow_run` event (this is `{}`) or with the `head` input \
             set to the reviewed commit",
            args.event_name.escape_debug()
        ),
    };
    if !artifact::is_commit_id(&head_sha) {
        bail!(
            "the head `{}` is not a full commit id",
            head_sha.escape_debug()
        );
    }
    Ok(Trusted {
        head_sha,
        pull_requests: run
            .map(|run| run.pull_requests.iter().map(|pr| pr.number).collect())
            .unwrap_or_default(),
    })
}

fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
}
