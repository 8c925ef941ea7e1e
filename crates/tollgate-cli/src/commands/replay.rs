//! `tollgate replay`: the core's replay of recent history, with a progress bar and a summary.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use tollgate::control::Control;
use tollgate::replay::{self, ReplayReport, ReplayRequest, Selection};

use super::ExitStatus;
use crate::args::ReplayArgs;

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitStatus> {
    let state_file = match &args.state {
        Some(path) => path.clone(),
        None => replay::default_state_file(&args.repo)?,
    };
    if args.fresh && state_file.exists() {
        std::fs::remove_file(&state_file)?;
    }
    let selection = if args.merges {
        Selection::Merges
    } else if args.commits {
        Selection::Commits
    } else {
        Selection::Auto
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let bar = if !args.quiet && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("replay [{bar:30}] {pos}/{len} {msg} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let on_commit = |done: usize, total: usize, commit: &replay::CommitReplay| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(commit.sha.get(..10).unwrap_or(&commit.sha).to_string());
    };
    let report = replay::replay(
        &ReplayRequest {
            workspace: &args.repo,
            count: args.count,
            selection,
            jobs,
            env: super::store::env(),
            state_file: Some(state_file),
        },
        &Control::new(),
        &on_commit,
    )?;
    bar.finish_and_clear();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_summary(&report);
    }
    Ok(ExitStatus::Pass)
}

fn print_summary(report: &ReplayReport) {
    let summary = &report.summary;
    let kind = match report.selection {
        Selection::Merges => "merges",
        _ => "commits",
    };
    outln!(
        "Replayed {} {kind} ({} resumed from an earlier run, {} could not be reviewed) in {:.1} s",
        summary.commits_reviewed + summary.commits_with_errors,
        summary.commits_resumed,
        summary.commits_with_errors,
        summary.duration_ms / 1000.0
    );
    outln!(
        "Gate: {} of {} would have failed",
        summary.gate_failures.len(),
        summary.commits_reviewed
    );
    for failure in summary.gate_failures.iter().take(20) {
        outln!(
            "  {} {}",
            failure.sha.get(..10).unwrap_or(&failure.sha),
            tollgate::ci_log::neutralize(&failure.subject)
        );
        for reason in failure.reasons.iter().take(3) {
            outln!("      {}", tollgate::ci_log::neutralize(reason));
        }
    }
    outln!(
        "Findings: {} ({} at HIGH or worse, {:.2} per {})",
        summary.findings,
        summary.high_or_worse,
        summary.high_or_worse_per_commit,
        kind.trim_end_matches('s')
    );
    if !summary.rules.is_empty() {
        outln!("Per rule (findings, {kind} with one, worst severity):");
        for rule in &summary.rules {
            outln!(
                "  {:<24} {:>6} {:>6}  {}",
                tollgate::ci_log::neutralize(&rule.rule_id),
                rule.findings,
                rule.commits,
                rule.max_severity
            );
        }
    }
    if !summary.paths.is_empty() {
        outln!("Noisiest paths:");
        for path in &summary.paths {
            outln!(
                "  {:<40} {:>6}",
                tollgate::ci_log::neutralize(&path.path),
                path.findings
            );
        }
    }
    for commit in report.commits.iter().filter(|c| c.error.is_some()).take(5) {
        outln!(
            "Not reviewed: {} {}",
            commit.sha.get(..10).unwrap_or(&commit.sha),
            tollgate::ci_log::neutralize(commit.error.as_deref().unwrap_or_default())
        );
    }
    if !summary.suggested_config.is_empty() {
        outln!("\nSuggested tollgate.toml to start from:\n");
        outln!(
            "{}",
            tollgate::ci_log::neutralize(summary.suggested_config.trim_end())
        );
    }
}
