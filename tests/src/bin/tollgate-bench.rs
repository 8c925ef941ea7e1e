//! `tollgate-bench`: times the release `tollgate` binary end to end on a generated workload and
//! prints a Markdown report (see BENCHMARKS.md at the repository root).
//!
//! ```text
//! cargo build --release -p tollgate-cli
//! cargo run --release -p tollgate-tests --bin tollgate-bench -- [--runs N] [--big-mb 100]
//!     [--tollgate PATH] [--out-dir DIR] [--skip-big]
//! ```
//!
//! Every figure is a median over runs made in this one invocation, next to baselines timed in the
//! same loop (`tollgate --version` for the process-start floor, `git apply --numstat` for a C tool
//! reading the same diff), so machine noise shows up in the baselines too. Nothing here asserts a
//! wall time except the big-diff growth check, which compares this run's sizes with each other.
//!
//! Exit status: 0 when every check passed, 1 when the memory or linearity check failed, 2 when
//! the bench itself could not run (a missing binary, a crash, exit 2 from `tollgate`, a missing
//! report).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a bench command reports on stdout"
)]

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use tollgate_tests::workload::{self, Workload, WorkloadSpec};

/// The stated target for the standard workload's median wall time.
const TARGET_MEDIAN: Duration = Duration::from_millis(30);
/// Peak RSS of a big-diff review must stay under this multiple of the diff size.
const MAX_RSS_RATIO: f64 = 4.0;
/// Time per MB may grow at most this much from the smallest big diff to the largest.
const MAX_GROWTH: f64 = 2.0;
/// Marks a directory as made by this command, so `--out-dir` may clear it on the next run.
const MARKER_FILE: &str = ".tollgate-bench";
/// The hidden first argument that turns this binary into the peak-memory probe.
const MEASURE_MODE: &str = "__measure";

const USAGE: &str = "\
usage: tollgate-bench [OPTIONS]

  --runs N          timed runs per command, after 3 warm-ups [default: 30]
  --big-mb MB       largest big diff; 1/4 and 1/2 of it are measured too [default: 100]
  --big-runs N      runs per big diff [default: 3]
  --skip-big        skip the big-diff memory and linearity check
  --tollgate PATH   the binary to time [default: <workspace>/target/release/tollgate]
  --out-dir DIR     keep the workload and reports in DIR [default: a temporary directory]
  --files N         source files in the workload [default: 200]
  --lines N         changed lines in the workload [default: 20000]
  --seed N          generator seed [default: the standard workload's]
";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|arg| arg == MEASURE_MODE) {
        return measure_mode(&args[1..]);
    }
    let args = match BenchArgs::parse(&args) {
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
        Ok(Verdict::Pass) => ExitCode::SUCCESS,
        Ok(Verdict::ChecksFailed) => ExitCode::from(1),
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}

/// Parsed command line.
#[derive(Debug)]
struct BenchArgs {
    runs: usize,
    big_mb: usize,
    big_runs: usize,
    skip_big: bool,
    tollgate: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    spec: WorkloadSpec,
    /// The arguments as given, for the "command" line of the report.
    raw: Vec<String>,
}

impl BenchArgs {
    /// `None` when help was asked for.
    fn parse(args: &[OsString]) -> anyhow::Result<Option<BenchArgs>> {
        let mut parsed = BenchArgs {
            runs: 30,
            big_mb: 100,
            big_runs: 3,
            skip_big: false,
            tollgate: None,
            out_dir: None,
            spec: WorkloadSpec::STANDARD,
            raw: args
                .iter()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let arg = arg.to_str().context("arguments must be UTF-8")?;
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(OsString::from(value))),
                None => (arg, None),
            };
            let mut value = || -> anyhow::Result<OsString> {
                inline
                    .clone()
                    .or_else(|| args.next().cloned())
                    .with_context(|| format!("{name} needs a value"))
            };
            match name {
                "--runs" => parsed.runs = positive(name, &value()?)?,
                "--big-mb" => parsed.big_mb = positive(name, &value()?)?,
                "--big-runs" => parsed.big_runs = positive(name, &value()?)?,
                "--skip-big" => parsed.skip_big = true,
                "--tollgate" => parsed.tollgate = Some(PathBuf::from(value()?)),
                "--out-dir" => parsed.out_dir = Some(PathBuf::from(value()?)),
                "--files" => parsed.spec.files = positive(name, &value()?)?,
                "--lines" => parsed.spec.changed_lines = positive(name, &value()?)?,
                "--seed" => parsed.spec.seed = positive(name, &value()?)? as u64,
                "-h" | "--help" => return Ok(None),
                _ => bail!("unknown argument `{arg}`"),
            }
        }
        Ok(Some(parsed))
    }
}

fn positive(name: &str, value: &OsString) -> anyhow::Result<usize> {
    let text = value.to_string_lossy();
    match text.replace('_', "").parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => bail!("{name} takes a positive integer, not `{text}`"),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    ChecksFailed,
}

fn run(args: &BenchArgs) -> anyhow::Result<Verdict> {
    let tollgate = tollgate_binary(args.tollgate.as_deref())?;
    let (_temp_guard, work_dir) = work_dir(args.out_dir.as_deref())?;

    eprintln!(
        "generating the workload ({} files, {} changed lines) in {}",
        args.spec.files,
        args.spec.changed_lines,
        work_dir.display()
    );
    let workload = workload::generate(&work_dir, &args.spec)?;
    let out_dir = work_dir.join("out");
    std::fs::create_dir_all(&out_dir)?;

    let review = ReviewJob::new(&tollgate, &workload, &out_dir);
    let version = Job {
        label: "`tollgate --version` (process start)".to_string(),
        program: tollgate.clone().into(),
        args: vec!["--version".into()],
        cwd: None,
    };
    let git_apply = Job {
        label: "`git apply --numstat` (C tool, same diff)".to_string(),
        program: "git".into(),
        args: vec![
            "apply".into(),
            "--numstat".into(),
            workload.diff_path.clone().into(),
        ],
        cwd: Some(workload.repo.clone()),
    };

    // The first warm-up doubles as the correctness check of the outputs.
    let first = review.job.run_checked()?;
    review.check_outputs()?;
    let n_findings = review.n_findings();
    for _ in 1..3 {
        review.job.run_checked()?;
        version.run_checked()?;
        git_apply.run_checked()?;
    }

    eprintln!("timing {} runs of each command, interleaved", args.runs);
    let mut review_runs = Vec::with_capacity(args.runs);
    let mut stages = Stages::default();
    let mut version_runs = Vec::with_capacity(args.runs);
    let mut git_runs = Vec::with_capacity(args.runs);
    for _ in 0..args.runs {
        review_runs.push(review.job.run_checked()?);
        stages.record(&review.outputs[0]);
        version_runs.push(version.run_checked()?);
        git_runs.push(git_apply.run_checked()?);
    }
    let rows = [
        Row::of(&review.job.label, &review_runs),
        Row::of(&version.label, &version_runs),
        Row::of(&git_apply.label, &git_runs),
    ];

    let big = if args.skip_big {
        None
    } else {
        Some(big_diffs(args, &tollgate, &workload, &work_dir)?)
    };

    let report = Report {
        args,
        tollgate: &tollgate,
        workload: &workload,
        review: &review,
        exit_code: first.code,
        n_findings,
        stages: &stages,
        rows: &rows,
        big: big.as_ref(),
    };
    print!("{}", report.render());
    let passed = big.as_ref().is_none_or(BigResults::passed);
    Ok(if passed {
        Verdict::Pass
    } else {
        Verdict::ChecksFailed
    })
}

/// The release binary: `--tollgate`, else `$CARGO_TARGET_DIR/release/tollgate`, else the
/// workspace's `target/release/tollgate`.
fn tollgate_binary(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace_root().join("target"));
            target.join("release").join("tollgate")
        }
    };
    if !path.is_file() {
        bail!(
            "no tollgate binary at {}\nhint: build it first with `cargo build --release -p tollgate-cli`, or pass --tollgate PATH",
            path.display()
        );
    }
    path.canonicalize()
        .with_context(|| format!("cannot resolve {}", path.display()))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The directory to work in: a fresh temporary one (removed on drop), or `--out-dir`, which must
/// be empty, new, or left by an earlier run of this command (then it is cleared).
fn work_dir(out_dir: Option<&Path>) -> anyhow::Result<(Option<tempfile::TempDir>, PathBuf)> {
    let Some(dir) = out_dir else {
        let temp = tempfile::Builder::new()
            .prefix("tollgate-bench-")
            .tempdir()?;
        let path = temp.path().to_path_buf();
        return Ok((Some(temp), path));
    };
    if dir.exists() {
        let is_ours = dir.join(MARKER_FILE).is_file();
        let is_empty = std::fs::read_dir(dir)?.next().is_none();
        if is_ours {
            for name in ["repo", "out", "change.diff", "big"] {
                let path = dir.join(name);
                if path.is_dir() {
                    std::fs::remove_dir_all(&path)?;
                } else if path.exists() {
                    std::fs::remove_file(&path)?;
                }
            }
        } else if !is_empty {
            bail!(
                "--out-dir {} is not empty and was not made by tollgate-bench",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(
        dir.join(MARKER_FILE),
        "made by tollgate-bench; cleared on its next run\n",
    )?;
    let dir = dir.canonicalize()?;
    Ok((None, dir))
}

/// One command to time.
#[derive(Debug)]
struct Job {
    label: String,
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
}

/// How one run ended.
#[derive(Debug, Clone, Copy)]
struct RunOutcome {
    wall: Duration,
    /// User plus system CPU time of the child (`None` where rusage is unavailable).
    cpu: Option<Duration>,
    code: i32,
}

/// One line of the timing table.
#[derive(Debug)]
struct Row<'a> {
    label: &'a str,
    wall: Stats,
    /// Median CPU time: unlike wall time, it barely moves when other work competes for the cores.
    cpu_median: Option<Duration>,
}

impl Row<'_> {
    fn of<'a>(label: &'a str, runs: &[RunOutcome]) -> Row<'a> {
        let walls: Vec<Duration> = runs.iter().map(|run| run.wall).collect();
        let cpus: Option<Vec<Duration>> = runs.iter().map(|run| run.cpu).collect();
        Row {
            label,
            wall: Stats::of(&walls),
            cpu_median: cpus.map(|cpus| Stats::of(&cpus).median),
        }
    }
}

impl Job {
    /// Runs once; exit 0 or 1 is a result, anything else (2, a signal) an error with stderr.
    fn run_checked(&self) -> anyhow::Result<RunOutcome> {
        let mut command = self.command();
        command.stdout(Stdio::null()).stderr(Stdio::piped());
        let cpu_before = children_cpu();
        let start = Instant::now();
        let output = command
            .output()
            .with_context(|| format!("cannot run {}", self.display()))?;
        let wall = start.elapsed();
        // `output` has reaped the child, so the children's totals now include it.
        let cpu = cpu_before
            .zip(children_cpu())
            .and_then(|(before, after)| after.checked_sub(before));
        match output.status.code() {
            Some(code @ (0 | 1)) => Ok(RunOutcome { wall, cpu, code }),
            other => bail!(
                "{} exited with {}:\n{}",
                self.display(),
                other.map_or_else(|| "a signal".to_string(), |code| code.to_string()),
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command
    }

    /// The command as a shell line.
    fn display(&self) -> String {
        let mut line = String::new();
        if let Some(cwd) = &self.cwd {
            let _ = write!(line, "(cd {} && ", shell_quote(&cwd.to_string_lossy()));
        }
        line.push_str(&shell_quote(&self.program.to_string_lossy()));
        for arg in &self.args {
            line.push(' ');
            line.push_str(&shell_quote(&arg.to_string_lossy()));
        }
        if self.cwd.is_some() {
            line.push(')');
        }
        line
    }
}

/// The main job: the full review writing JSON, SARIF and Markdown.
#[derive(Debug)]
struct ReviewJob {
    job: Job,
    outputs: [PathBuf; 3],
}

impl ReviewJob {
    fn new(tollgate: &Path, workload: &Workload, out_dir: &Path) -> ReviewJob {
        let outputs = [
            out_dir.join("r.json"),
            out_dir.join("r.sarif"),
            out_dir.join("r.md"),
        ];
        let mut args: Vec<OsString> = vec![
            "review".into(),
            "--repo".into(),
            workload.repo.clone().into(),
            "--diff".into(),
            workload.diff_path.clone().into(),
        ];
        for (format, path) in ["json", "sarif", "markdown"].iter().zip(&outputs) {
            args.push("--format".into());
            let mut spec = OsString::from(format!("{format}="));
            spec.push(path);
            args.push(spec);
        }
        ReviewJob {
            job: Job {
                label: "**`tollgate review`** (JSON + SARIF + Markdown)".to_string(),
                program: tollgate.into(),
                args,
                cwd: None,
            },
            outputs,
        }
    }

    fn check_outputs(&self) -> anyhow::Result<()> {
        for path in &self.outputs {
            let n_bytes = std::fs::metadata(path)
                .with_context(|| format!("the review wrote no {}", path.display()))?
                .len();
            if n_bytes == 0 {
                bail!("the review wrote an empty {}", path.display());
            }
        }
        let json = std::fs::read(&self.outputs[0])?;
        serde_json::from_slice::<serde_json::Value>(&json)
            .with_context(|| format!("{} is not JSON", self.outputs[0].display()))?;
        let sarif = std::fs::read(&self.outputs[1])?;
        serde_json::from_slice::<serde_json::Value>(&sarif)
            .with_context(|| format!("{} is not JSON", self.outputs[1].display()))?;
        Ok(())
    }

    /// Findings in the JSON report, when it has a top-level `findings` list.
    fn n_findings(&self) -> Option<usize> {
        let json = std::fs::read(&self.outputs[0]).ok()?;
        let value: serde_json::Value = serde_json::from_slice(&json).ok()?;
        value.get("findings")?.as_array().map(Vec::len)
    }
}

/// The review's own per-stage timings (`stats.timings_ms` of its JSON report), collected over
/// the timed runs. Optional: when the report has no such object, nothing is shown.
#[derive(Debug, Default)]
struct Stages {
    /// Stage name → one value per run, in the report's order.
    ms: Vec<(String, Vec<f64>)>,
}

impl Stages {
    fn record(&mut self, json_path: &Path) {
        let Ok(bytes) = std::fs::read(json_path) else {
            return;
        };
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return;
        };
        let Some(timings) = value
            .pointer("/stats/timings_ms")
            .and_then(serde_json::Value::as_object)
        else {
            return;
        };
        for (name, ms) in timings {
            let Some(ms) = ms.as_f64() else { continue };
            match self.ms.iter_mut().find(|(known, _)| known == name) {
                Some((_, values)) => values.push(ms),
                None => self.ms.push((name.clone(), vec![ms])),
            }
        }
    }

    /// "Where the time goes (…): parse 2.1 ms, preflight 24.9 ms, …", in pipeline order,
    /// skipping stages that took no time.
    fn render(&self, wall_median: Duration) -> Option<String> {
        // The JSON object's keys come back sorted by name; show them in pipeline order.
        const PIPELINE: [&str; 6] = [
            "parse",
            "preflight",
            "invariants",
            "static_analysis",
            "llm",
            "gate",
        ];
        let rank = |name: &str| PIPELINE.iter().position(|&known| known == name);
        let mut stages: Vec<(&str, f64)> = self
            .ms
            .iter()
            .map(|(name, values)| {
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                (name.as_str(), sorted[sorted.len() / 2])
            })
            .filter(|&(_, median)| median > 0.0)
            .collect();
        if stages.is_empty() {
            return None;
        }
        stages.sort_by_key(|&(name, _)| rank(name).unwrap_or(PIPELINE.len()));
        let total: f64 = stages.iter().map(|&(_, median)| median).sum();
        let parts: Vec<String> = stages
            .iter()
            .map(|(name, median)| format!("{name} {median:.1} ms"))
            .collect();
        Some(format!(
            "Where the time goes (medians of the review's own `stats.timings_ms`): {}; together \
             {total:.1} ms of the {} median wall time, the rest being process start and the \
             reports.",
            parts.join(", "),
            millis(wall_median),
        ))
    }
}

/// min, median, p90 and max of a set of timings.
#[derive(Debug, Clone, Copy)]
struct Stats {
    n: usize,
    min: Duration,
    median: Duration,
    p90: Duration,
    max: Duration,
}

impl Stats {
    /// `times` must not be empty.
    fn of(times: &[Duration]) -> Stats {
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        };
        // Nearest rank: the smallest value with at least 90% of the runs at or below it.
        let p90 = sorted[(n * 9).div_ceil(10).max(1) - 1];
        Stats {
            n,
            min: sorted[0],
            median,
            p90,
            max: sorted[n - 1],
        }
    }
}

/// One big diff's measurements.
#[derive(Debug)]
struct BigRun {
    diff: workload::DiffStats,
    wall: Stats,
    /// The highest peak RSS over the runs, in bytes (`None` where rusage is unavailable).
    peak_rss: Option<u64>,
}

impl BigRun {
    fn megabytes(&self) -> f64 {
        self.diff.n_bytes as f64 / 1e6
    }

    fn ms_per_mb(&self) -> f64 {
        self.wall.median.as_secs_f64() * 1e3 / self.megabytes()
    }

    fn rss_ratio(&self) -> Option<f64> {
        self.peak_rss
            .map(|rss| rss as f64 / self.diff.n_bytes as f64)
    }
}

#[derive(Debug)]
struct BigResults {
    runs: Vec<BigRun>,
    command: String,
    /// Peak RSS of `tollgate --version`: what the process costs before reading anything.
    floor_rss: Option<u64>,
}

impl BigResults {
    /// Time per MB of the largest diff over that of the smallest.
    fn growth(&self) -> f64 {
        match (self.runs.first(), self.runs.last()) {
            (Some(small), Some(large)) => large.ms_per_mb() / small.ms_per_mb(),
            _ => 1.0,
        }
    }

    fn max_rss_ratio(&self) -> Option<f64> {
        self.runs
            .iter()
            .filter_map(BigRun::rss_ratio)
            .reduce(f64::max)
    }

    fn passed(&self) -> bool {
        self.growth() <= MAX_GROWTH
            && self
                .max_rss_ratio()
                .is_none_or(|ratio| ratio < MAX_RSS_RATIO)
    }
}

/// Reviews diffs of 1/4, 1/2 and all of `--big-mb`, each `--big-runs` times, through the
/// peak-memory probe.
fn big_diffs(
    args: &BenchArgs,
    tollgate: &Path,
    workload: &Workload,
    work_dir: &Path,
) -> anyhow::Result<BigResults> {
    let big_dir = work_dir.join("big");
    std::fs::create_dir_all(&big_dir)?;
    let mut sizes = vec![
        args.big_mb.div_ceil(4),
        args.big_mb.div_ceil(2),
        args.big_mb,
    ];
    sizes.dedup();
    let floor = Job {
        label: "--version".to_string(),
        program: tollgate.into(),
        args: vec!["--version".into()],
        cwd: None,
    };
    let floor_rss = probe(&floor)?.peak_rss;
    let mut runs = Vec::new();
    let mut command = String::new();
    for size_mb in sizes {
        let diff_path = big_dir.join(format!("big-{size_mb}mb.diff"));
        eprintln!("writing a {size_mb} MB diff");
        let big = workload::generate_big_diff(&diff_path, size_mb * 1_000_000, args.spec.seed)?;
        let json_path = big_dir.join(format!("big-{size_mb}mb.json"));
        let mut json_spec = OsString::from("json=");
        json_spec.push(&json_path);
        let job = Job {
            label: format!("{size_mb} MB"),
            program: tollgate.into(),
            args: vec![
                "review".into(),
                "--repo".into(),
                workload.repo.clone().into(),
                "--diff".into(),
                diff_path.clone().into(),
                "--format".into(),
                json_spec,
            ],
            cwd: None,
        };
        command = job.display();
        eprintln!("reviewing it {} time(s)", args.big_runs);
        let mut walls = Vec::new();
        let mut peak_rss: Option<u64> = None;
        for _ in 0..args.big_runs {
            let probe = probe(&job)?;
            walls.push(probe.wall);
            if let Some(rss) = probe.peak_rss {
                peak_rss = Some(peak_rss.map_or(rss, |peak| peak.max(rss)));
            }
        }
        if std::fs::metadata(&json_path).map_or(0, |meta| meta.len()) == 0 {
            bail!("the review of {} wrote no JSON", diff_path.display());
        }
        runs.push(BigRun {
            diff: big.diff,
            wall: Stats::of(&walls),
            peak_rss,
        });
        // A 100 MB diff need not outlive its measurement.
        std::fs::remove_file(&diff_path)?;
    }
    Ok(BigResults {
        runs,
        command,
        floor_rss,
    })
}

/// A probed run: wall time and peak RSS of the child.
#[derive(Debug)]
struct Probe {
    wall: Duration,
    peak_rss: Option<u64>,
}

/// Runs `job` under this binary's measure mode, a fresh process whose only child is the job, so
/// the `RUSAGE_CHILDREN` peak it reads is exactly the job's peak RSS.
fn probe(job: &Job) -> anyhow::Result<Probe> {
    let mut command = Command::new(std::env::current_exe()?);
    command.arg(MEASURE_MODE).arg(&job.program).args(&job.args);
    if let Some(cwd) = &job.cwd {
        command.current_dir(cwd);
    }
    let output = command
        .output()
        .with_context(|| format!("cannot run the probe for {}", job.display()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| -> Option<&str> {
        stdout
            .split_whitespace()
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    };
    match field("code") {
        Some("0" | "1") => {}
        code => bail!(
            "{} exited with {}:\n{stderr}",
            job.display(),
            code.unwrap_or("a signal")
        ),
    }
    let wall_ns: u64 = field("wall_ns")
        .and_then(|text| text.parse().ok())
        .with_context(|| format!("the probe printed no timing: {stdout}{stderr}"))?;
    let peak_rss = field("maxrss_kib")
        .and_then(|text| text.parse::<u64>().ok())
        .map(|kib| kib * 1024);
    Ok(Probe {
        wall: Duration::from_nanos(wall_ns),
        peak_rss,
    })
}

/// `tollgate-bench __measure PROGRAM ARGS…`: runs the program with stdout discarded and stderr
/// passed through, then prints `code=… wall_ns=… maxrss_kib=…`.
fn measure_mode(args: &[OsString]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("error: {MEASURE_MODE} needs a program");
        return ExitCode::from(2);
    };
    let start = Instant::now();
    let status = match Command::new(program)
        .args(rest)
        .stdout(Stdio::null())
        .status()
    {
        Ok(status) => status,
        Err(err) => {
            eprintln!("error: cannot run {}: {err}", program.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let wall = start.elapsed();
    let code = status
        .code()
        .map_or_else(|| "signal".to_string(), |code| code.to_string());
    let mut line = format!("code={code} wall_ns={}", wall.as_nanos());
    if let Some(kib) = children_max_rss_kib() {
        let _ = write!(line, " maxrss_kib={kib}");
    }
    println!("{line}");
    ExitCode::SUCCESS
}

/// User plus system CPU time of all waited-for children so far.
#[cfg(unix)]
fn children_cpu() -> Option<Duration> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    let duration = |time: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(time.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(time.tv_usec()).unwrap_or(0))
    };
    Some(duration(usage.user_time()) + duration(usage.system_time()))
}

#[cfg(not(unix))]
fn children_cpu() -> Option<Duration> {
    None
}

/// Peak RSS of the largest waited-for child, in KiB (Linux reports `ru_maxrss` in KiB).
#[cfg(target_os = "linux")]
fn children_max_rss_kib() -> Option<u64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    u64::try_from(usage.max_rss()).ok()
}

/// Elsewhere the unit of `ru_maxrss` differs (bytes on macOS); report nothing rather than guess.
#[cfg(not(target_os = "linux"))]
fn children_max_rss_kib() -> Option<u64> {
    None
}

/// Everything the Markdown report shows.
#[derive(Debug)]
struct Report<'a> {
    args: &'a BenchArgs,
    tollgate: &'a Path,
    workload: &'a Workload,
    review: &'a ReviewJob,
    exit_code: i32,
    n_findings: Option<usize>,
    stages: &'a Stages,
    rows: &'a [Row<'a>; 3],
    big: Option<&'a BigResults>,
}

impl Report<'_> {
    fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) -> std::fmt::Result {
        let workload = self.workload;
        let diff = &workload.diff;
        let hits = &workload.hits;
        writeln!(out, "## Tollgate end-to-end benchmark\n")?;
        writeln!(out, "{}\n", machine_line(self.tollgate))?;
        writeln!(
            out,
            "Workload (seed {:#x}): {} files in the repository, {} changed lines \
             ({} added, {} removed) in {} files and {} hunks, diff {}; \
             3 invariants, {} hits on added lines (eval {}, debug output {}, TODO {}).",
            self.args.spec.seed,
            workload.n_repo_files,
            group(diff.n_changed()),
            group(diff.n_added),
            group(diff.n_removed),
            diff.n_files,
            group(diff.n_hunks),
            megabytes(diff.n_bytes as u64),
            hits.total(),
            hits.eval_call,
            hits.debug_output,
            hits.todo_marker,
        )?;
        let verdict = match self.exit_code {
            0 => "0 (gate passed)",
            _ => "1 (gate failed)",
        };
        let findings = self
            .n_findings
            .map_or_else(|| "?".to_string(), |n| n.to_string());
        writeln!(
            out,
            "Review exit status {verdict}; {findings} findings in the JSON report.\n"
        )?;
        if let Some(line) = self.stages.render(self.rows[0].wall.median) {
            writeln!(out, "{line}\n")?;
        }

        let review_median = self.rows[0].wall.median;
        writeln!(
            out,
            "| command | runs | min | median | p90 | max | median vs review | CPU median (user+sys) |"
        )?;
        writeln!(out, "|---|--:|--:|--:|--:|--:|--:|--:|")?;
        for row in self.rows {
            let stats = &row.wall;
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {:.2}× | {} |",
                row.label,
                stats.n,
                millis(stats.min),
                millis(stats.median),
                millis(stats.p90),
                millis(stats.max),
                stats.median.as_secs_f64() / review_median.as_secs_f64(),
                row.cpu_median.map_or_else(|| "n/a".to_string(), millis),
            )?;
        }
        let target = if review_median < TARGET_MEDIAN {
            "met"
        } else {
            "**missed**"
        };
        writeln!(
            out,
            "\nTarget: review median under {} — {target} ({}).\n",
            millis(TARGET_MEDIAN),
            millis(review_median)
        )?;

        if let Some(big) = self.big {
            writeln!(
                out,
                "### Big diffs (peak memory and linearity)\n\n\
                 | diff | files | changed lines | runs | median wall | MB/s | ms per MB | peak RSS | RSS / diff |\n\
                 |--:|--:|--:|--:|--:|--:|--:|--:|--:|"
            )?;
            for run in &big.runs {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:.1} | {:.2} | {} | {} |",
                    megabytes(run.diff.n_bytes as u64),
                    group(run.diff.n_files),
                    group(run.diff.n_changed()),
                    run.wall.n,
                    millis(run.wall.median),
                    run.megabytes() / run.wall.median.as_secs_f64(),
                    run.ms_per_mb(),
                    run.peak_rss.map_or_else(|| "n/a".to_string(), megabytes),
                    run.rss_ratio()
                        .map_or_else(|| "n/a".to_string(), |ratio| format!("{ratio:.2}×")),
                )?;
            }
            let growth = big.growth();
            writeln!(
                out,
                "\nLinearity: ms per MB grows {growth:.2}× from the smallest to the largest diff \
                 (limit {MAX_GROWTH:.0}×) — {}.",
                pass_fail(growth <= MAX_GROWTH)
            )?;
            match big.max_rss_ratio() {
                Some(ratio) => writeln!(
                    out,
                    "Memory: peak RSS is at most {ratio:.2}× the diff size (limit {MAX_RSS_RATIO:.0}×) — {}.",
                    pass_fail(ratio < MAX_RSS_RATIO)
                )?,
                None => writeln!(out, "Memory: peak RSS not available on this platform.")?,
            }
            if let Some(floor) = big.floor_rss {
                writeln!(
                    out,
                    "Process floor: `tollgate --version` peaks at {} RSS.",
                    megabytes(floor)
                )?;
            }
            writeln!(out, "\nBig-diff command (largest): `{}`", big.command)?;
        }

        writeln!(
            out,
            "\nCommand:\n\n```sh\n{}\n```\n",
            bench_command_line(&self.args.raw)
        )?;
        writeln!(
            out,
            "Timed review command:\n\n```sh\n{}\n```",
            self.review.job.display()
        )?;
        Ok(())
    }
}

fn bench_command_line(raw: &[String]) -> String {
    let mut line = "cargo run --release -p tollgate-tests --bin tollgate-bench --".to_string();
    for arg in raw {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    line
}

fn pass_fail(passed: bool) -> &'static str {
    if passed { "pass" } else { "**FAIL**" }
}

/// Date (UTC), CPU, cores, kernel, and the binary's version and source commit.
fn machine_line(tollgate: &Path) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|text| format!("Linux {}", text.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_string());
    let version = capture(Command::new(tollgate).arg("--version"))
        .unwrap_or_else(|| "tollgate (version unknown)".to_string());
    let commit = source_commit().map_or_else(String::new, |commit| format!(" ({commit})"));
    format!(
        "{} UTC · {cpu}, {cores} cores available · {kernel} · {version}{commit}",
        utc_date(SystemTime::now())
    )
}

/// The workspace's commit, and whether tracked files differ from it. The binary may have been
/// built from another state: this only says what the source tree holds now.
fn source_commit() -> Option<String> {
    let git = || {
        let mut command = Command::new("git");
        command.arg("-C").arg(workspace_root());
        command
    };
    let commit = capture(git().args(["rev-parse", "--short", "HEAD"]))?;
    let status = capture(git().args(["status", "--porcelain", "--untracked-files=no"]))?;
    Some(if status.is_empty() {
        format!("source tree at {commit}")
    } else {
        format!("source tree at {commit} plus uncommitted changes")
    })
}

fn capture(command: &mut Command) -> Option<String> {
    let output = command.stderr(Stdio::null()).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    output.status.success().then(|| text.trim().to_string())
}

/// `YYYY-MM-DD` of a time (civil-from-days, after Howard Hinnant's algorithm).
fn utc_date(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn millis(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1_000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}

/// Decimal megabytes (as `ls` and diff sizes are usually quoted), two decimals below 10 MB.
fn megabytes(n_bytes: u64) -> String {
    let mb = n_bytes as f64 / 1e6;
    if mb < 10.0 {
        format!("{mb:.2} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

/// `20117` → `20,117`.
fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, digit) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Quotes an argument for a POSIX shell when it needs it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
