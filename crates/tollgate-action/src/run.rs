//! One run of the action: event → diff → review → results on disk → posts → verdict.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use tollgate::config::{RawConfig, RawReview, ReviewConfig};
use tollgate::diff::{self, ChangedLines, DiffSpec};
use tollgate::findings::ReviewResult;
use tollgate::publish::{self, PublishConfig};
use tollgate::report::{self, Format, ReportConfig};
use tollgate::review::{self, DiffInput, GateFiles, ReviewRequest};

use crate::args::{Args, ConfigFrom, ReviewOptions};
use crate::artifact::{self, PublishInfo};
use crate::event::{self, Event};
use crate::github::GitHub;
use crate::learnings;
use crate::outputs;
use crate::post::{self, Parts, Target};
use crate::token::Token;

/// The exit contract: 0 pass, 1 gate failed, 2 usage or runtime error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    GateFailed,
    Error,
}

impl From<Verdict> for ExitCode {
    fn from(verdict: Verdict) -> ExitCode {
        match verdict {
            Verdict::Pass => ExitCode::SUCCESS,
            Verdict::GateFailed => ExitCode::from(1),
            Verdict::Error => ExitCode::from(2),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<Verdict> {
    validate_repository(&args.repository)?;
    let event = event::read(
        &args.event_name,
        &args.event_path,
        args.sha.as_deref(),
        args.base.as_deref(),
        args.head.as_deref(),
    )?;
    let workspace = args.workspace.as_path();
    let git = read_diff(workspace, &event)?;
    let Some(head_sha) = git.head_sha.clone() else {
        bail!("git did not resolve the head revision `{}`", event.head);
    };

    // The base commit's gate, unless the workflow asks for the head's.
    let gate_files = match args.config_from {
        ConfigFrom::Base => GateFiles::Commit(event.base.clone()),
        ConfigFrom::Head => GateFiles::Workspace,
    };
    let config = load_config(workspace, &gate_files, &args.review)?;
    let changed = ChangedLines::new(&git.diff);
    let token = Token::new(args.github_token.clone())
        .or_else(|| Token::new(std::env::var("GITHUB_TOKEN").ok()));
    // Dismissals made on the pull request since the last run: read with any token, a fork's
    // read-only one too, and applied on top of the base commit's ledger.
    let pr_learnings = match (&token, &event.pull_request) {
        (Some(token), Some(pr)) => {
            let github = GitHub::new(
                &args.api_url,
                token.clone(),
                Duration::from_millis(args.retry_base_ms),
            )?;
            match learnings::read(
                &github,
                workspace,
                &args.repository,
                pr.number,
                &args.bot_login,
            ) {
                Ok(read) => read,
                Err(err) => learnings::PrLearnings {
                    records: Vec::new(),
                    warnings: vec![format!(
                        "cannot read the pull request's dismissals ({err}): only the committed ledger applies"
                    )],
                },
            }
        }
        _ => learnings::PrLearnings::default(),
    };
    for warning in &pr_learnings.warnings {
        println!(
            "::warning title=Tollgate learnings::{}",
            report::escape_data(warning)
        );
    }
    let mut outcome = review::run_with_learnings(
        ReviewRequest {
            workspace,
            diff: DiffInput::Text(git.diff.as_bytes().to_vec()),
            config: &config,
            changed_files: None,
        },
        &gate_files,
        pr_learnings.records.clone(),
    )?;
    outcome.result.metadata.base_sha = git.base_sha.clone();
    outcome.result.metadata.head_sha = Some(head_sha.clone());
    let result = &outcome.result;

    let link_base = format!(
        "{}/{}/blob/{head_sha}/",
        args.server_url.trim_end_matches('/'),
        args.repository
    );
    let output_dir = if args.output_dir.is_absolute() {
        args.output_dir.clone()
    } else {
        workspace.join(&args.output_dir)
    };
    let sarif_path = write_results(result, workspace, &output_dir, &link_base)?;
    write_learnings(result, pr_learnings.records, &output_dir)?;
    // What a `workflow_run` stage needs to post this result without the diff (forks).
    artifact::write(
        &output_dir,
        &PublishInfo::new(
            &args.repository,
            event.pull_request.as_ref().map(|pr| pr.number),
            &head_sha,
            &changed,
        ),
    )?;

    let mut publish_config = PublishConfig::new(Some(link_base));
    publish_config.max_inline_comments = args.max_inline_comments;
    publish_config.min_inline_severity = args.inline_min_severity;
    let plan = publish::plan(result, &changed, &publish_config);

    outputs::write_summary(
        env_path("GITHUB_STEP_SUMMARY").as_deref(),
        &plan.job_summary,
    )?;
    let n_findings = result.findings.len() + result.stats.findings_truncated;
    outputs::write_outputs(
        env_path("GITHUB_OUTPUT").as_deref(),
        &[
            ("should-fail", result.should_fail.to_string()),
            ("findings", n_findings.to_string()),
            ("sarif-path", sarif_path.display().to_string()),
            (
                "pull-request",
                event
                    .pull_request
                    .as_ref()
                    .map_or_else(String::new, |pr| pr.number.to_string()),
            ),
        ],
    )?;

    let posted = match (&token, event.read_only) {
        (_, true) => {
            eprintln!(
                "tollgate-action: a pull request from a fork gets a read-only token: results are in the \
                 job summary, the SARIF file and the annotations below; upload `output-dir` as an \
                 artifact and post it from a `workflow_run` job with `mode: post` (see the README)"
            );
            false
        }
        (None, false) => {
            eprintln!("tollgate-action: no github-token: nothing is posted");
            false
        }
        (Some(token), false) => {
            let github = GitHub::new(
                &args.api_url,
                token.clone(),
                Duration::from_millis(args.retry_base_ms),
            )?;
            let target = Target {
                repository: &args.repository,
                pull_request: event.pull_request.as_ref().map(|pr| pr.number),
                head_sha: &head_sha,
            };
            let parts = Parts {
                comment: args.comment,
                inline_comments: args.inline_comments,
                check_run: args.check_run,
                bot_login: &args.bot_login,
            };
            let failures = post::publish(&github, &target, &parts, &plan);
            for failure in &failures {
                // A failure to post is reported, never turned into a verdict.
                println!(
                    "::warning title=Tollgate could not post::{}",
                    report::escape_data(&failure.to_string())
                );
            }
            if failures.iter().any(|failure| failure.is_forbidden()) {
                eprintln!(
                    "tollgate-action: the token may not post here; the job needs `pull-requests: write` \
                     and `checks: write` permissions"
                );
            }
            failures.is_empty()
        }
    };
    if !posted {
        // Without a check run, the findings still reach the pull request as annotations.
        let mut annotations = Vec::new();
        report::render(
            Format::Github,
            result,
            &ReportConfig::new(None, None),
            &mut annotations,
        )?;
        print!("{}", String::from_utf8_lossy(&annotations));
    }

    eprintln!(
        "tollgate-action: {}",
        result.summary.replace(['\r', '\n'], " ")
    );
    Ok(if result.should_fail {
        Verdict::GateFailed
    } else {
        Verdict::Pass
    })
}

/// The diff `base...head`; a missing commit (a shallow checkout, say) gets the core's message
/// saying how to fix the workflow.
fn read_diff(workspace: &Path, event: &Event) -> anyhow::Result<diff::GitDiff> {
    let spec = DiffSpec::Range {
        base: event.base.clone(),
        head: event.head.clone(),
    };
    diff::diff_from_repo(workspace, &spec)
        .with_context(|| format!("cannot diff {}...{}", event.base, event.head))
}

/// tollgate.toml from the gate's source, then `TOLLGATE_*`, then the action's inputs.
fn load_config(
    workspace: &Path,
    gate_files: &GateFiles,
    options: &ReviewOptions,
) -> anyhow::Result<ReviewConfig> {
    let blank_to_none =
        |value: &Option<String>| value.clone().filter(|text| !text.trim().is_empty());
    let list = |value: &Option<Vec<String>>| {
        value
            .clone()
            .map(|items| {
                items
                    .into_iter()
                    .map(|item| item.trim().to_string())
                    .filter(|item| !item.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|items| !items.is_empty())
    };
    let input_layer = RawConfig {
        review: RawReview {
            confidence_threshold: parse_option(
                "confidence-threshold",
                &blank_to_none(&options.confidence_threshold),
            )?,
            max_findings: parse_option("max-findings", &blank_to_none(&options.max_findings))?,
            categories: list(&options.categories),
            fail_on_severity: blank_to_none(&options.fail_on_severity),
            fail_on_rule_ids: list(&options.fail_on_rule_ids),
            allowlist: list(&options.allowlist),
            invariants: list(&options.invariants),
            baseline: blank_to_none(&options.baseline),
            // Limits and the time budget come from tollgate.toml or `TOLLGATE_*`.
            ..RawReview::default()
        },
        ..RawConfig::default()
    };
    Ok(gate_files
        .load_config(workspace, std::env::vars(), input_layer)?
        .resolve()?)
}

fn parse_option<T: std::str::FromStr>(
    name: &str,
    value: &Option<String>,
) -> anyhow::Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    value
        .as_deref()
        .map(|text| {
            text.trim()
                .parse::<T>()
                .map_err(|err| anyhow::anyhow!("input `{name}`: `{}` {err}", text.escape_debug()))
        })
        .transpose()
}

/// `tollgate.sarif` (one run per source tool, each its own code-scanning category) and
/// `tollgate.json` in `output_dir`; returns the SARIF path.
fn write_results(
    result: &ReviewResult,
    workspace: &Path,
    output_dir: &Path,
    link_base: &str,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(output_dir)
        .with_context(|| format!("cannot create {}", output_dir.display()))?;
    let config = ReportConfig::new(Some(workspace.to_path_buf()), Some(link_base.to_string()));
    let sarif_path = output_dir.join("tollgate.sarif");
    for (format, path) in [
        (Format::Sarif, sarif_path.clone()),
        (Format::Json, output_dir.join("tollgate.json")),
    ] {
        let mut bytes = Vec::new();
        report::render(format, result, &config, &mut bytes)?;
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(sarif_path)
}

/// `learnings.jsonl` in `output_dir`: the pull request's dismissals as ledger lines, for the
/// team to append to `.review-learnings.jsonl` (rule ids filled in from this review). No file
/// when there are none.
fn write_learnings(
    result: &ReviewResult,
    mut records: Vec<tollgate::learnings::Record>,
    output_dir: &Path,
) -> anyhow::Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    for record in &mut records {
        if record.rule_id.is_empty()
            && let Some(finding) = result
                .findings
                .iter()
                .chain(&result.dismissed)
                .find(|finding| finding.fingerprint == record.fingerprint)
        {
            record.rule_id = finding.rule_id.clone();
        }
    }
    let text: String = records
        .iter()
        .map(|record| record.to_line() + "\n")
        .collect();
    let path = output_dir.join("learnings.jsonl");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "tollgate-action: {} dismissal(s) made on the pull request are applied; append {} to .review-learnings.jsonl to keep them after it merges",
        records.len(),
        path.display()
    );
    Ok(())
}

/// `owner/name` with GitHub's characters only, since it becomes part of API paths.
pub(crate) fn validate_repository(repository: &str) -> anyhow::Result<()> {
    let valid_part = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repository.split_once('/') {
        Some((owner, name)) if valid_part(owner) && valid_part(name) => Ok(()),
        _ => bail!(
            "GITHUB_REPOSITORY `{}` is not `owner/name`",
            repository.escape_debug()
        ),
    }
}

pub(crate) fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_owner_slash_name() {
        assert!(validate_repository("octo-org/my.repo_1").is_ok());
        for bad in [
            "", "o", "o/", "/r", "o/r/x", "o/..", "o/r?x=1", "o/r#", "o /r",
        ] {
            assert!(validate_repository(bad).is_err(), "{bad}");
        }
    }
}
