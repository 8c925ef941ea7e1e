//! `tollgate index [PATH] [--status]`: build or update the code index, with a progress bar.

use std::io::IsTerminal;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use tollgate::api::context;
use tollgate::api::context::request::IndexWorkspaceRequest;
use tollgate::workspace::{HttpEmbedder, IndexedWorkspace, Progress};

use std::io::Write;

use super::ExitStatus;
use crate::args::{IndexArgs, IndexLocationArgs};

/// The workspace with the index location and embedder the flags ask for.
pub(super) fn workspace(location: &IndexLocationArgs) -> anyhow::Result<IndexedWorkspace> {
    let settings = tollgate::config::load(
        tollgate::config::ConfigFile::Discover(&location.repo),
        super::store::env(),
        tollgate::config::RawConfig::default(),
    )?;
    let mut ws = IndexedWorkspace::open(&location.repo)
        .with_context(|| format!("cannot open the workspace {}", location.repo.display()))?
        .with_configured_embedder(&settings.index)?;
    if let Some(dir) = &location.index_dir {
        ws = ws.with_index_dir(dir.clone());
    }
    if let Some(depth) = location.history_depth {
        ws = ws.with_history_depth(depth as usize);
    }
    if let (Some(url), Some(model)) = (&location.embed_url, &location.embed_model) {
        let embedder = HttpEmbedder::connect(url, model, location.embed_api_key.clone())?;
        ws = ws.with_embedder(Box::new(embedder));
    }
    Ok(ws)
}

pub fn run(args: IndexArgs) -> anyhow::Result<ExitStatus> {
    let ws = workspace(&args.location)?;
    let mut out = std::io::stdout().lock();
    if args.status {
        let status = context::index_status(&ws)?;
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
        } else if !status.exists {
            writeln!(
                out,
                "no index at {} (run `tollgate index`)",
                status.index_dir
            )?;
        } else {
            writeln!(out, "index:    {}", status.index_dir)?;
            writeln!(
                out,
                "health:   {}",
                if status.healthy { "ok" } else { "problems" }
            )?;
            for problem in &status.problems {
                writeln!(out, "  - {problem}")?;
            }
            writeln!(
                out,
                "files:    {} ({} bytes of source)",
                status.files, status.source_size
            )?;
            writeln!(
                out,
                "chunks:   {} ({} vectors{})",
                status.chunks,
                status.vectors,
                if status.hnsw_graph {
                    ", HNSW graph"
                } else {
                    ""
                }
            )?;
            writeln!(out, "commits:  {}", status.commits)?;
            writeln!(
                out,
                "embedder: {}",
                status.embedder.as_deref().unwrap_or("-")
            )?;
            writeln!(
                out,
                "indexed:  {}",
                status.last_indexed.as_deref().unwrap_or("-")
            )?;
            writeln!(out, "size:     {} bytes", status.index_size)?;
            let langs: Vec<String> = status
                .languages
                .iter()
                .map(|(l, n)| format!("{l} {n}"))
                .collect();
            writeln!(out, "languages: {}", langs.join(", "))?;
        }
        return Ok(if status.exists && status.healthy {
            ExitStatus::Pass
        } else {
            ExitStatus::Error
        });
    }
    let bar = progress_bar(args.quiet);
    let mut on_progress = |p: Progress| {
        show_progress(&bar, p);
        std::ops::ControlFlow::Continue(())
    };
    let report = context::index_workspace(
        &ws,
        &IndexWorkspaceRequest {
            path: args.path.clone(),
        },
        &mut on_progress,
    )?;
    bar.finish_and_clear();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        if let Some(reason) = &report.rebuilt {
            eprintln!("rebuilt the index: {reason}");
        }
        eprintln!(
            "indexed {} files ({} read): {} changed, {} unchanged, {} removed, {} skipped; {} chunks added, {} removed; {} commits added ({} ms)",
            report.files_total,
            report.files_read,
            report.files_changed,
            report.files_unchanged,
            report.files_removed,
            report.files_skipped,
            report.chunks_added,
            report.chunks_removed,
            report.commits_added,
            report.elapsed_ms
        );
    }
    Ok(ExitStatus::Pass)
}

/// The indexing progress bar on stderr; hidden when `quiet` or stderr is not a terminal.
pub(super) fn progress_bar(quiet: bool) -> ProgressBar {
    let bar = if !quiet && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    set_total(&bar, 0);
    bar
}

/// The bar's look for a step of `total` units: a bar once there is a total, a spinner before
/// (a bar of 0/0 is drawn full, as if the work were done).
fn template(total: u64) -> &'static str {
    if total == 0 {
        "{msg} {spinner} ({elapsed})"
    } else {
        "{msg} [{bar:30}] {pos}/{len} ({elapsed})"
    }
}

fn set_total(bar: &ProgressBar, total: u64) {
    let was = bar.length().unwrap_or(0);
    if total == was && total != 0 {
        return;
    }
    if let Ok(style) = ProgressStyle::with_template(template(total)) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_length(total);
}

/// Shows an indexing step on the progress bar.
pub(super) fn show_progress(bar: &ProgressBar, progress: Progress) {
    match progress {
        Progress::Walked { files, .. } => {
            bar.set_message(format!("found {files} files; indexing changed files"))
        }
        Progress::Processed { done, total } => {
            set_total(bar, total as u64);
            bar.set_position(done as u64);
        }
        Progress::History { done, total } => {
            bar.set_message("indexing commits");
            set_total(bar, total as u64);
            bar.set_position(done as u64);
        }
        Progress::Committing => bar.set_message("writing the index"),
        Progress::Graph => bar.set_message("refreshing the vector graph"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 28: no full bar before anything is counted.
    #[test]
    fn the_bar_is_a_spinner_until_there_is_a_total() {
        assert!(!template(0).contains("{bar"), "{}", template(0));
        assert!(template(12).contains("{bar"));
        let bar = ProgressBar::hidden();
        set_total(&bar, 0);
        set_total(&bar, 12);
        assert_eq!(bar.length(), Some(12));
    }
}
