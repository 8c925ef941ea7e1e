//! `tollgate session start|status|pause|resume|cancel|telemetry`: reactive PR review sessions.
//!
//! `start` runs the session in this process with a progress bar unless `--detach`, which hands
//! it to a background `tollgate session run` process. Every other subcommand acts through the
//! store, so it works while another process (this CLI, the MCP server) runs the session: that
//! process polls the session's state between steps.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use tollgate::api::session::{ChangedFilesArg, ReactiveReviewPrRequest, reactive_review_pr};
use tollgate::config::{self, ConfigFile, RawConfig, ReviewConfig};
use tollgate::diff::{self, DiffSpec};
use tollgate::session::{self, GateState, Resumed, SessionSettings, SessionState, SessionStatus};
use tollgate::store::Store;

use super::ExitStatus;
use crate::args::{SessionCommand, SessionStartArgs};

pub fn run(command: SessionCommand) -> anyhow::Result<ExitStatus> {
    let settings = SessionSettings::default();
    match command {
        SessionCommand::Start(args) => start(args, &settings),
        SessionCommand::Status { target, findings } => {
            let store = open(&target.repo)?;
            print_json(serde_json::to_value(&session::status(
                &store, &target.id, findings, &settings,
            )?)?)?;
            Ok(ExitStatus::Pass)
        }
        SessionCommand::Pause(target) => {
            print_json(serde_json::to_value(&session::pause(
                &open(&target.repo)?,
                &target.id,
            )?)?)?;
            Ok(ExitStatus::Pass)
        }
        SessionCommand::Cancel(target) => {
            print_json(serde_json::to_value(&session::cancel(
                &open(&target.repo)?,
                &target.id,
            )?)?)?;
            Ok(ExitStatus::Pass)
        }
        SessionCommand::Resume { target, detach } => {
            let store = open(&target.repo)?;
            // Read the configuration before taking the lease: a broken file must not leave a
            // claimed session behind.
            let config = load_config(&target.repo)?;
            if detach {
                // The background process resumes it; only a paused session can be.
                let state = session::status(&store, &target.id, false, &settings)?.status;
                if state != SessionState::Paused {
                    anyhow::bail!(
                        "cannot resume review session `{}`: it is {state}",
                        target.id
                    );
                }
                spawn_background(&target.repo, &target.id)?;
                eprintln!("resuming in the background");
                return Ok(ExitStatus::Pass);
            }
            match session::resume(&store, &target.id, &settings)? {
                Resumed::ByOwner { pid } => {
                    eprintln!("resumed; process {pid}, which was running it, carries on");
                    print_json(serde_json::to_value(&session::status(
                        &store, &target.id, false, &settings,
                    )?)?)?;
                    Ok(ExitStatus::Pass)
                }
                Resumed::Claimed(claimed) => {
                    foreground(&store, &target.repo, &config, claimed, &settings)
                }
            }
        }
        SessionCommand::Telemetry(target) => {
            print_json(serde_json::to_value(&session::telemetry(
                &open(&target.repo)?,
                &target.id,
                &settings,
            )?)?)?;
            Ok(ExitStatus::Pass)
        }
        SessionCommand::Run(target) => {
            let store = open(&target.repo)?;
            let config = load_config(&target.repo)?;
            let claimed = match session::claim(&store, &target.id, &settings) {
                Ok(claimed) => claimed,
                // A detached resume hands over a paused session.
                Err(err) if err.code() == tollgate::ErrorCode::InvalidStateTransition => {
                    match session::resume(&store, &target.id, &settings)? {
                        Resumed::Claimed(claimed) => claimed,
                        Resumed::ByOwner { .. } => return Ok(ExitStatus::Pass),
                    }
                }
                Err(err) => return Err(err.into()),
            };
            let status =
                session::drive(&store, &target.repo, &config, claimed, &settings, &|_| {})?;
            Ok(exit_for(&status))
        }
    }
}

fn start(args: SessionStartArgs, settings: &SessionSettings) -> anyhow::Result<ExitStatus> {
    let store = open(&args.repo)?;
    let config = load_config(&args.repo)?;
    let files = match &args.files {
        Some(list) => ChangedFilesArg::Text(list.clone()),
        None => {
            let git = diff::diff_from_repo(
                &args.repo,
                &DiffSpec::Range {
                    base: args.base.clone(),
                    head: args.head.clone(),
                },
            )?;
            ChangedFilesArg::List(
                git.diff
                    .files()
                    .iter()
                    .map(|f| f.path().to_string())
                    .collect(),
            )
        }
    };
    let request = ReactiveReviewPrRequest {
        commit_hash: args.head.clone(),
        base_ref: args.base.clone(),
        changed_files: files,
        title: args.title.clone(),
        author: args.author.clone(),
        additions: None,
        deletions: None,
        parallel: Some(!args.serial),
        max_workers: args.max_workers,
    };
    let created = reactive_review_pr(&store, &args.repo, &request, settings)?;
    for warning in &created.warnings {
        eprintln!("warning: {warning}");
    }
    if args.detach {
        spawn_background(&args.repo, &created.session_id)?;
        if args.json {
            print_json(serde_json::to_value(&created)?)?;
        } else {
            // The id alone, for `id=$(tollgate session start … --detach)`.
            outln!("{}", created.session_id);
        }
        return Ok(ExitStatus::Pass);
    }
    eprintln!(
        "session {} ({} steps, {} workers)",
        created.session_id, created.total_steps, created.max_workers
    );
    let claimed = session::claim(&store, &created.session_id, settings)?;
    foreground(&store, &args.repo, &config, claimed, settings)
}

fn foreground(
    store: &Store,
    repo: &Path,
    config: &ReviewConfig,
    claimed: session::ClaimedSession,
    settings: &SessionSettings,
) -> anyhow::Result<ExitStatus> {
    let id = claimed.id().to_string();
    let total = store.snapshot(|tx| tx.session_steps(&id))?.len() as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} steps, {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let status = session::drive(store, repo, config, claimed, settings, &|event| {
        bar.set_position(event.completed_steps as u64);
        match &event.error {
            Some(error) if event.will_retry => bar.println(format!(
                "step {} failed, retrying: {error}",
                event.step_index
            )),
            Some(error) => bar.println(format!("step {} failed: {error}", event.step_index)),
            None => bar.set_message(format!("+{} finding(s)", event.findings_new)),
        }
    })?;
    bar.finish_and_clear();
    if let Some(reason) = &status.reason {
        eprintln!("session {}: {reason}", status.status);
    }
    print_json(serde_json::to_value(&status)?)?;
    Ok(exit_for(&status))
}

/// Starts `tollgate session run <id>` detached from this process (its output goes nowhere; the
/// store holds everything).
fn spawn_background(repo: &Path, id: &str) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot find the tollgate executable")?;
    let mut command = Command::new(exe);
    command.args(["session", "run", id, "--repo"]).arg(repo);
    // The same store as this process (the environment and tollgate.toml carry over by
    // themselves).
    if let Some(url) = super::store::flag() {
        command.arg("--store").arg(url);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the background session process")?;
    Ok(())
}

/// `review`'s exit codes: 2 when the session itself failed (it could not review everything), 1
/// when what it reviewed failed the gate, 0 otherwise.
fn exit_for(status: &SessionStatus) -> ExitStatus {
    match (status.status, status.gate.verdict) {
        (SessionState::Failed, _) => ExitStatus::Error,
        (_, GateState::Failed) => ExitStatus::GateFailed,
        _ => ExitStatus::Pass,
    }
}

fn open(repo: &Path) -> anyhow::Result<Store> {
    super::store::open(repo)
}

/// The workspace's `tollgate.toml` (when present), then the `TOLLGATE_*` environment.
fn load_config(repo: &Path) -> anyhow::Result<ReviewConfig> {
    Ok(config::load(
        ConfigFile::Discover(repo),
        super::store::env(),
        RawConfig::default(),
    )?
    .resolve()?)
}

fn print_json(value: serde_json::Value) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}
