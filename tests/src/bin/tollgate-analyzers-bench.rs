//! `tollgate-analyzers-bench`: what `tollgate review --analyzers tsc` costs on top of running tsc
//! itself, on the analyzer test fixture (`tests/fixtures/analyzers/ts-monorepo`, two projects).
//!
//! ```text
//! cargo build --release -p tollgate-cli
//! cargo run --release -p tollgate-tests --bin tollgate-analyzers-bench -- [--runs N]
//!     [--tollgate PATH] [--tsc PATH]
//! ```
//!
//! Each round runs, interleaved so machine noise hits all of them alike:
//!
//! - `tollgate review --working-tree --analyzers tsc` (incremental build info, the default);
//! - the same tsc command lines tollgate runs, one per project, started by this bench;
//! - both again without incremental build info (`[analyzers] cache = false` against plain
//!   `tsc --noEmit --pretty false -p <tsconfig>`);
//! - `tollgate review --working-tree` without analyzers, the floor of the review itself.
//!
//! The overhead is the median over rounds of (tollgate − tsc) in the same round, as a share of
//! tsc's median; wall and CPU time (user + system of all descendants) are both reported. On a
//! shared machine the between-run figure picks up other processes' load, so the bench also
//! measures within each run: tollgate's wall time minus the time its tsc processes ran (the
//! `process_ms` of its JSON report). That in-run figure decides: exit status 0 when it stays
//! under 5% in both modes, 1 when it does not, 2 when the bench could not run.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench command reports on stdout"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The budget the issue sets: orchestration may add at most this share of the tool's own time.
const MAX_OVERHEAD: f64 = 0.05;
const FIXTURE: &str = "fixtures/analyzers/ts-monorepo";
const WARMUPS: usize = 2;

const USAGE: &str = "\
usage: tollgate-analyzers-bench [OPTIONS]

  --runs N          timed rounds after 2 warm-ups [default: 20]
  --tollgate PATH   the binary to time [default: <workspace>/target/release/tollgate]
  --tsc PATH        the TypeScript compiler [default: tsc on PATH]
";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let args = match Args::parse(&args) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!("error: {err}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[derive(Debug)]
struct Args {
    runs: usize,
    tollgate: Option<PathBuf>,
    tsc: Option<PathBuf>,
}

impl Args {
    fn parse(args: &[OsString]) -> anyhow::Result<Option<Args>> {
        let mut parsed = Args {
            runs: 20,
            tollgate: None,
            tsc: None,
        };
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let arg = arg.to_str().context("arguments must be UTF-8")?;
            let mut value = || {
                iter.next()
                    .cloned()
                    .with_context(|| format!("{arg} needs a value"))
            };
            match arg {
                "--runs" => {
                    let text = value()?.to_string_lossy().into_owned();
                    parsed.runs = match text.parse::<usize>() {
                        Ok(n) if n > 0 => n,
                        _ => bail!("--runs takes a positive integer, not `{text}`"),
                    };
                }
                "--tollgate" => parsed.tollgate = Some(PathBuf::from(value()?)),
                "--tsc" => parsed.tsc = Some(PathBuf::from(value()?)),
                "-h" | "--help" => return Ok(None),
                _ => bail!("unknown argument `{arg}`"),
            }
        }
        Ok(Some(parsed))
    }
}

fn run(args: &Args) -> anyhow::Result<bool> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the tests crate sits in the workspace")?;
    let tollgate = match &args.tollgate {
        Some(path) => path.clone(),
        None => workspace.join("target/release/tollgate"),
    };
    if !tollgate.is_file() {
        bail!(
            "no tollgate binary at {}\nhint: cargo build --release -p tollgate-cli, or pass --tollgate PATH",
            tollgate.display()
        );
    }
    let tsc = match &args.tsc {
        Some(path) => path.clone(),
        None => find_on_path("tsc").context("tsc is not on PATH (npm install -g typescript)")?,
    };

    let temp = tempfile::Builder::new()
        .prefix("tollgate-analyzers-bench-")
        .tempdir()?;
    let repo = temp.path().join("repo");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    make_repo(&repo, &fixture)?;
    let projects = tsconfigs(&repo)?;
    let no_cache = temp.path().join("no-cache.toml");
    std::fs::write(&no_cache, "[analyzers]\ncache = false\n")?;
    let bench_cache = temp.path().join("tsc-cache");
    std::fs::create_dir_all(&bench_cache)?;
    let out = temp.path().join("review.json");

    let review = |extra: &[&str]| {
        let mut command = Command::new(&tollgate);
        command
            .args(["review", "--repo"])
            .arg(&repo)
            .arg("--working-tree");
        command.args(extra);
        command
            .arg("--format")
            .arg(format!("json={}", out.display()));
        command
    };
    let tsc_runs = |incremental: bool| -> Vec<Command> {
        projects
            .iter()
            .map(|project| {
                let mut command = Command::new(&tsc);
                command
                    .current_dir(&repo)
                    .args(["--noEmit", "--pretty", "false", "-p", project]);
                if incremental {
                    command.args(["--incremental", "--tsBuildInfoFile"]).arg(
                        bench_cache.join(format!("{}.tsbuildinfo", project.replace('/', "_"))),
                    );
                }
                command
            })
            .collect()
    };
    let no_cache_flag = format!("--config={}", no_cache.display());
    let jobs: Vec<Job> = vec![
        Job::new(
            "`tollgate review --analyzers tsc` (incremental, default)",
            vec![review(&["--analyzers", "tsc"])],
        )
        .reading(&out),
        Job::new("the same tsc commands, incremental", tsc_runs(true)),
        Job::new(
            "`tollgate review --analyzers tsc` with `cache = false`",
            vec![review(&["--analyzers", "tsc", &no_cache_flag])],
        )
        .reading(&out),
        Job::new(
            "`tsc --noEmit --pretty false -p <tsconfig>` per project",
            tsc_runs(false),
        ),
        Job::new(
            "`tollgate review` without analyzers (floor)",
            vec![review(&[])],
        ),
    ];

    eprintln!(
        "fixture: {} ({} projects); tsc: {}; tollgate: {}",
        fixture.display(),
        projects.len(),
        tsc.display(),
        tollgate.display()
    );
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); jobs.len()];
    for round in 0..WARMUPS + args.runs {
        for (job, samples) in jobs.iter().zip(&mut samples) {
            let sample = job.run()?;
            if round >= WARMUPS {
                samples.push(sample);
            }
        }
        if round == 0 {
            check_review(&out, &jobs)?;
        }
    }

    let mut report = String::new();
    report.push_str(&format!(
        "## Static analysis overhead ({} rounds after {WARMUPS} warm-ups)\n\n",
        args.runs
    ));
    report.push_str(&format!(
        "- tsc: `{}` ({})\n",
        tsc.display(),
        version_of(&tsc)
    ));
    report.push_str(&format!(
        "- fixture: `tests/{FIXTURE}` ({} projects, {} tsc processes per review)\n\n",
        projects.len(),
        projects.len()
    ));
    report.push_str("| command | median wall | p90 wall | median CPU |\n|---|--:|--:|--:|\n");
    for (job, samples) in jobs.iter().zip(&samples) {
        let walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        let cpus: Option<Vec<Duration>> = samples.iter().map(|s| s.cpu).collect();
        report.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            job.label,
            ms(median(&walls)),
            ms(p90(&walls)),
            cpus.map_or_else(|| "n/a".to_string(), |c| ms(median(&c)))
        ));
    }
    report.push('\n');
    let mut passed = true;
    for (name, tool_idx, review_idx) in [("incremental", 1, 0), ("no cache", 3, 2)] {
        let wall = overhead(&samples[review_idx], &samples[tool_idx], |s| Some(s.wall));
        let cpu = overhead(&samples[review_idx], &samples[tool_idx], |s| s.cpu);
        let in_run = in_run_overhead(&samples[review_idx]);
        // The in-run figure is the verdict: it compares tollgate with its own tools in the same
        // run, so other processes' load cannot open a gap between two separate runs.
        let ok = in_run.share < MAX_OVERHEAD;
        passed &= ok;
        let cpu_text = if cpu.tool_ms > 0.0 {
            format!(
                "{} ms = {:.1}% of tsc's {} ms",
                signed_ms(cpu.delta_ms),
                cpu.share * 100.0,
                format_ms(cpu.tool_ms)
            )
        } else {
            "n/a".to_string()
        };
        report.push_str(&format!(
            "- {name}: tollgate's own time in the run {} ms = {:.1}% of the {} ms its tsc \
             processes ran ({}); between runs (load-sensitive) {} ms = {:.1}% of tsc's {} ms; \
             CPU {cpu_text}\n",
            signed_ms(in_run.delta_ms),
            in_run.share * 100.0,
            format_ms(in_run.tool_ms),
            if ok { "under 5%" } else { "OVER 5%" },
            signed_ms(wall.delta_ms),
            wall.share * 100.0,
            format_ms(wall.tool_ms),
        ));
    }
    report.push_str(&format!(
        "- load average at the end: {}\n",
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|text| text.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "n/a".to_string())
    ));
    print!("{report}");
    Ok(passed)
}

/// One thing to time: one or more processes run one after the other.
struct Job {
    label: &'static str,
    commands: Vec<Command>,
    /// The JSON report a review job writes, read for its tools' `process_ms`.
    report: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Option<Duration>,
    /// How long the review's tool processes ran, from its report.
    tool_ms: Option<f64>,
}

impl Job {
    fn new(label: &'static str, commands: Vec<Command>) -> Job {
        Job {
            label,
            commands,
            report: None,
        }
    }

    fn reading(mut self, report: &Path) -> Job {
        self.report = Some(report.to_path_buf());
        self
    }

    fn run(&self) -> anyhow::Result<Sample> {
        let cpu_before = children_cpu();
        let started = Instant::now();
        for command in &self.commands {
            // Rebuilt from its parts: a `Command` cannot be spawned through a shared reference.
            let mut fresh = Command::new(command.get_program());
            fresh.args(command.get_args());
            if let Some(dir) = command.get_current_dir() {
                fresh.current_dir(dir);
            }
            let output = fresh
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .with_context(|| format!("cannot run {}", self.label))?;
            // tsc exits 1 or 2 when it reports errors, tollgate 1 when the gate fails.
            if !matches!(output.status.code(), Some(0..=2)) {
                bail!(
                    "{} ended with {:?}: {}",
                    self.label,
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        let wall = started.elapsed();
        let cpu = cpu_before
            .zip(children_cpu())
            .map(|(before, after)| after.saturating_sub(before));
        let tool_ms = match &self.report {
            Some(path) => {
                let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
                let results = json["static_analysis"]["results"].as_array().cloned();
                let total: Option<f64> = results
                    .unwrap_or_default()
                    .iter()
                    .map(|r| r["process_ms"].as_f64())
                    .sum();
                Some(total.context("the report has no process_ms")?)
            }
            None => None,
        };
        Ok(Sample { wall, cpu, tool_ms })
    }
}

/// The review really ran tsc and found the fixture's errors: a bench of a no-op proves nothing.
fn check_review(out: &Path, jobs: &[Job]) -> anyhow::Result<()> {
    // The last job (no analyzers) wrote the file last; rerun the first to read its result.
    jobs[0].run()?;
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out)?)?;
    let tsc = &json["static_analysis"]["results"][0];
    if tsc["status"] != "executed" || tsc["findings_kept"] != 2 {
        bail!("the review did not run tsc as expected: {tsc:#}");
    }
    Ok(())
}

struct Overhead {
    delta_ms: f64,
    tool_ms: f64,
    share: f64,
}

/// Median over runs of (wall − tool processes' time) of one review, against the median tool time.
fn in_run_overhead(samples: &[Sample]) -> Overhead {
    let mut deltas = Vec::new();
    let mut tools = Vec::new();
    for sample in samples {
        if let Some(tool_ms) = sample.tool_ms {
            deltas.push(sample.wall.as_secs_f64() * 1e3 - tool_ms);
            tools.push(tool_ms);
        }
    }
    if tools.is_empty() {
        return Overhead {
            delta_ms: 0.0,
            tool_ms: 0.0,
            share: f64::INFINITY,
        };
    }
    let delta_ms = median_f64(&mut deltas);
    let tool_ms = median_f64(&mut tools);
    Overhead {
        delta_ms,
        tool_ms,
        share: delta_ms / tool_ms,
    }
}

/// Median of the per-round differences, against the tool's median.
fn overhead(
    review: &[Sample],
    tool: &[Sample],
    pick: impl Fn(&Sample) -> Option<Duration>,
) -> Overhead {
    let pairs: Option<Vec<(f64, f64)>> = review
        .iter()
        .zip(tool)
        .map(|(r, t)| Some((secs(pick(r)?), secs(pick(t)?))))
        .collect();
    let Some(pairs) = pairs else {
        return Overhead {
            delta_ms: 0.0,
            tool_ms: 0.0,
            share: 0.0,
        };
    };
    let mut deltas: Vec<f64> = pairs.iter().map(|(r, t)| r - t).collect();
    let mut tools: Vec<f64> = pairs.iter().map(|(_, t)| *t).collect();
    let delta = median_f64(&mut deltas) * 1e3;
    let tool_ms = median_f64(&mut tools) * 1e3;
    Overhead {
        delta_ms: delta,
        tool_ms,
        share: if tool_ms > 0.0 { delta / tool_ms } else { 0.0 },
    }
}

fn make_repo(repo: &Path, fixture: &Path) -> anyhow::Result<()> {
    copy_tree(&fixture.join("before"), repo)?;
    let git = git2::Repository::init(repo)?;
    let mut index = git.index()?;
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = git.find_tree(index.write_tree()?)?;
    let signature = git2::Signature::now("bench", "bench@example.invalid")?;
    git.commit(Some("HEAD"), &signature, &signature, "before", &tree, &[])?;
    copy_tree(&fixture.join("after"), repo)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The fixture's tsconfig files, repository-relative, sorted.
fn tsconfigs(repo: &Path) -> anyhow::Result<Vec<String>> {
    fn walk(dir: &Path, repo: &Path, out: &mut Vec<String>) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() && !path.ends_with(".git") {
                walk(&path, repo, out)?;
            } else if path.file_name().is_some_and(|n| n == "tsconfig.json") {
                out.push(
                    path.strip_prefix(repo)?
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(repo, repo, &mut found)?;
    found.sort();
    Ok(found)
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn version_of(tsc: &Path) -> String {
    Command::new(tsc)
        .arg("--version")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "version unknown".to_string())
}

#[cfg(unix)]
fn children_cpu() -> Option<Duration> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    let to_duration = |tv: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(tv.tv_sec()).ok()?)
            .checked_add(Duration::from_micros(u64::try_from(tv.tv_usec()).ok()?))
    };
    Some(to_duration(usage.user_time())? + to_duration(usage.system_time())?)
}

#[cfg(not(unix))]
fn children_cpu() -> Option<Duration> {
    None
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

fn p90(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    sorted[(sorted.len() * 9).div_ceil(10).max(1) - 1]
}

fn median_f64(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn ms(duration: Duration) -> String {
    format_ms(duration.as_secs_f64() * 1e3)
}

fn format_ms(millis: f64) -> String {
    format!("{millis:.1}")
}

fn signed_ms(millis: f64) -> String {
    format!("{millis:+.1}")
}
