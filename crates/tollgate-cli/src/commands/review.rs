//! `tollgate review`: one call into the core's review pipeline, reports, exit status.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tollgate::config::{self, RawAnalyzers, RawConfig, RawReview};
use tollgate::diff::DiffSpec;
use tollgate::input::{self, Limit};
use tollgate::report::{Format, ReportConfig};
use tollgate::review::{self, DiffInput, ReviewRequest};

use super::ExitStatus;
use crate::args::ReviewArgs;

/// One `--format` argument.
#[derive(Debug)]
struct Output {
    format: Format,
    path: Option<PathBuf>,
}

pub fn run(args: ReviewArgs) -> anyhow::Result<ExitStatus> {
    let terminal = std::io::stdout().is_terminal();
    let outputs = parse_outputs(
        &args.formats,
        args.output.as_deref(),
        args.write_baseline.is_some(),
        terminal,
    )?;
    let config = load_config(&args)?;
    let diff = diff_input(&args, config.max_input_bytes)?;
    let workspace = args.repo.clone();

    let analyzers: Vec<&str> = config
        .analyzers
        .enabled
        .iter()
        .map(|k| k.as_str())
        .collect();
    let outcome = std::thread::scope(|scope| {
        // Analyzers can take half a minute (tsc on a real project): say so on stderr meanwhile.
        let (finished, ticks) = std::sync::mpsc::channel::<()>();
        if !args.quiet && !analyzers.is_empty() {
            let analyzers = &analyzers;
            scope.spawn(move || report_slow_analysis(analyzers, &ticks));
        }
        let outcome = review::run(ReviewRequest {
            workspace: &workspace,
            diff,
            config: &config,
            changed_files: args.changed_files.clone(),
        });
        drop(finished);
        outcome
    })?;
    let result = &outcome.result;

    if let Some(path) = &args.write_baseline {
        review::write_baseline(path, &outcome.accepted)?;
        if !args.quiet {
            eprintln!(
                "wrote baseline of {} finding(s) to {}",
                outcome.accepted.len(),
                path.display()
            );
        }
    }

    let mut report_config = ReportConfig::new(Some(workspace.clone()), args.link_base.clone());
    report_config.color = wants_color(terminal, std::env::var_os("NO_COLOR"));
    // The text report on the terminal ends with the verdict: stderr need not repeat it.
    let verdict_shown = outputs
        .iter()
        .any(|o| o.format == Format::Text && o.path.is_none() && terminal);
    for output in &outputs {
        match &output.path {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                }
                let file = std::fs::File::create(path)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let mut writer = std::io::BufWriter::new(file);
                tollgate::report::render(output.format, result, &report_config, &mut writer)?;
                writer
                    .flush()
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            None => {
                let stdout = std::io::stdout();
                let mut writer = std::io::BufWriter::new(stdout.lock());
                tollgate::report::render(output.format, result, &report_config, &mut writer)?;
                writer.flush()?;
            }
        }
    }

    if !args.quiet {
        for warning in &result.metadata.warnings {
            eprintln!("warning: {warning}");
        }
        if !verdict_shown {
            eprintln!("tollgate: {}", result.summary);
        }
        for reason in &result.fail_reasons {
            eprintln!("  - {reason}");
        }
    }
    // Writing a baseline accepts today's findings: the job that records it succeeds.
    Ok(if result.should_fail && args.write_baseline.is_none() {
        ExitStatus::GateFailed
    } else {
        ExitStatus::Pass
    })
}

/// Prints a line on stderr after the first second of a review with analyzers, then every five
/// seconds, until the review is done (the sender of `finished` is dropped).
fn report_slow_analysis(analyzers: &[&str], finished: &std::sync::mpsc::Receiver<()>) {
    let started = std::time::Instant::now();
    let mut wait = std::time::Duration::from_secs(1);
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(wait) {
        eprintln!(
            "tollgate: static analysis ({}) still running, {} s",
            analyzers.join(", "),
            started.elapsed().as_secs()
        );
        wait = std::time::Duration::from_secs(5);
    }
}

/// The `--format` arguments, `--output` given to the one that writes to stdout. Without any,
/// the report on stdout ([`default_format`]), except on a run that writes a baseline (its
/// output is the file).
fn parse_outputs(
    formats: &[String],
    output: Option<&Path>,
    writes_baseline: bool,
    terminal: bool,
) -> anyhow::Result<Vec<Output>> {
    let mut outputs = Vec::new();
    for spec in formats {
        let (name, path) = match spec.split_once('=') {
            Some((name, path)) if !path.is_empty() => (name, Some(PathBuf::from(path))),
            Some((name, _)) => bail!("--format {spec}: missing path after `{name}=`"),
            None => (spec.as_str(), None),
        };
        let format: Format = name.parse().with_context(|| format!("--format {spec}"))?;
        outputs.push(Output { format, path });
    }
    if outputs.iter().filter(|o| o.path.is_none()).count() > 1 {
        bail!("only one --format may write to stdout; give the others a path (FORMAT=PATH)");
    }
    if outputs.is_empty() && (output.is_some() || !writes_baseline) {
        outputs.push(Output {
            format: default_format(terminal && output.is_none()),
            path: None,
        });
    }
    if let Some(file) = output {
        let Some(to_stdout) = outputs.iter_mut().find(|o| o.path.is_none()) else {
            bail!(
                "--output {}: every --format already writes to its own file; give one --format without `=PATH` for --output to take",
                file.display()
            );
        };
        to_stdout.path = Some(file.to_path_buf());
    }
    Ok(outputs)
}

/// Like semgrep and ripgrep: text for a person at a terminal, JSON for a pipe, a file or CI
/// (where the default has always been JSON, so no pipeline changes).
fn default_format(to_terminal: bool) -> Format {
    if to_terminal {
        Format::Text
    } else {
        Format::Json
    }
}

/// Colours only on a terminal, and never with `NO_COLOR` set to anything but empty
/// (no-color.org).
fn wants_color(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|value| value.is_empty())
}

/// File, then environment, then flags.
fn load_config(args: &ReviewArgs) -> anyhow::Result<tollgate::config::ReviewConfig> {
    let flag_layer = RawConfig {
        review: RawReview {
            confidence_threshold: args.filters.confidence_threshold,
            max_findings: args.filters.max_findings,
            categories: args.filters.categories.clone(),
            fail_on_severity: args.fail_on_severity.clone(),
            fail_on_rule_ids: args.fail_on_rule_ids.clone(),
            allowlist: args.allowlist.clone(),
            invariants: args.invariants.clone(),
            baseline: args.baseline.clone(),
            max_input_bytes: args.max_input_bytes,
            time_budget_ms: args.time_budget_ms,
            // Set in `tollgate.toml` or `TOLLGATE_FAIL_ON_ANALYZER_ERRORS`.
            fail_on_analyzer_errors: None,
        },
        analyzers: RawAnalyzers {
            static_analyzers: args.analyzers.clone(),
            scope: args.analysis_scope.clone(),
            static_analysis_timeout_ms: args.analyzer_timeout_ms,
            import_sarif: import_sarif_paths(&args.import_sarif)?,
            ..RawAnalyzers::default()
        },
        llm: super::model_flags(&args.model, Some(&args.passes)),
        ..RawConfig::default()
    };
    Ok(config::load(
        super::config_file(args.config.as_deref(), &args.repo),
        super::store::env(),
        flag_layer,
    )?
    .resolve()?)
}

/// `--import-sarif` paths are relative to where the command runs, so they become absolute here
/// (the core resolves relative paths against the repository).
fn import_sarif_paths(paths: &[PathBuf]) -> anyhow::Result<Option<Vec<String>>> {
    if paths.is_empty() {
        return Ok(None);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let absolute = paths
        .iter()
        .map(|path| cwd.join(path).to_string_lossy().into_owned())
        .collect();
    Ok(Some(absolute))
}

fn diff_input(args: &ReviewArgs, max_bytes: u64) -> anyhow::Result<DiffInput> {
    let source = &args.source;
    if let Some(diff) = &source.diff {
        return Ok(DiffInput::Text(read_diff(diff, max_bytes)?));
    }
    if let Some(base) = &source.base {
        return Ok(DiffInput::Git(DiffSpec::Range {
            base: base.clone(),
            // As `session start` and `git diff BASE...` do.
            head: source.head.clone().unwrap_or_else(|| "HEAD".to_owned()),
        }));
    }
    if source.staged {
        return Ok(DiffInput::Git(DiffSpec::Staged));
    }
    if source.unstaged {
        return Ok(DiffInput::Git(DiffSpec::Unstaged));
    }
    if source.working_tree {
        return Ok(DiffInput::Git(DiffSpec::WorkingTree));
    }
    bail!(
        "no diff to review: pass --diff FILE, --diff - (stdin), --base REF [--head REF], --staged, --unstaged or --working-tree"
    )
}

/// The bytes of a diff file, or of stdin for `-`, at most `max_bytes`.
pub(super) fn read_diff(source: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    let limit = Limit::max_input(max_bytes);
    let bytes = if source == "-" {
        input::read_stream(std::io::stdin().lock(), "diff", "from stdin", limit)?
    } else {
        input::read_file(Path::new(source), "diff file", limit)?
    };
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 28: text on a terminal, JSON otherwise (pipes and CI unchanged), and `--output`
    /// (a file) is JSON too.
    #[test]
    fn the_default_report_is_text_on_a_terminal_only() {
        let chosen = |terminal, output: Option<&str>| {
            parse_outputs(&[], output.map(Path::new), false, terminal).unwrap()[0].format
        };
        assert_eq!(chosen(true, None), Format::Text);
        assert_eq!(chosen(false, None), Format::Json);
        assert_eq!(chosen(true, Some("r.json")), Format::Json);
        let explicit = parse_outputs(&["json".to_string()], None, false, true).unwrap();
        assert_eq!(explicit[0].format, Format::Json);
    }

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(wants_color(true, None));
        assert!(wants_color(true, Some("".into())));
        assert!(!wants_color(true, Some("1".into())));
        assert!(!wants_color(false, None));
    }
}
