//! Running the analyzers together and settling their findings.
//!
//! Every analyzer gets its own thread (they wait on processes, so threads cost nothing and no
//! async runtime is needed) and a deadline: its own timeout, cut short by the total budget all
//! of them share. Their findings are then settled in one place: anchored to the source line (for
//! the fingerprint), marked `on_changed_line` against the diff, scoped, and capped at
//! `max_findings_per_analyzer`, worst first. Every count of what was left out goes into the
//! analyzer's report.

use crate::control::Control;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use super::discover::Tool;
use super::sarif_import::ImportedSarif;
use super::workspace::SourceFiles;
use super::{semgrep, tsc};
use crate::config::AnalyzersConfig;
use crate::diff::ChangedLines;
use crate::findings::{
    AnalysisScope, AnalyzerKind, AnalyzerReport, AnalyzerStatus, Finding, StaticAnalysisSummary,
};
use crate::process::{self, Exit, ProcessOutput, ToolCommand};
use crate::workspace::{RepoPath, STATE_DIR, Workspace};

/// stderr lines turned into warnings per process, and the characters kept of each.
const MAX_STDERR_LINES: usize = 20;
const MAX_WARNING_CHARS: usize = 300;

/// What to analyse and how.
#[derive(Debug)]
pub(crate) struct AnalysisPlan<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) config: &'a AnalyzersConfig,
    pub(crate) analyzers: &'a [AnalyzerKind],
    /// Changed files that passed [`check_changed_file`](super::workspace::check_changed_file), repository-relative.
    pub(crate) files: Vec<String>,
    /// No changed files were named at all: analyse the whole project.
    pub(crate) whole_workspace: bool,
    /// The diff's changed lines; `None` when only file names are known.
    pub(crate) changed_lines: Option<&'a ChangedLines>,
    /// Already resolved: `changed_lines` needs `changed_lines` to be `Some`.
    pub(crate) scope: AnalysisScope,
    pub(crate) imports: Vec<ImportedSarif>,
    pub(crate) warnings: Vec<String>,
    pub(crate) stop: &'a Control,
}

/// Findings ready for the review, and the summary of how they came about.
#[derive(Debug)]
pub(crate) struct AnalysisOutput {
    pub(crate) findings: Vec<Finding>,
    pub(crate) summary: StaticAnalysisSummary,
}

/// What one analyzer needs while it runs.
#[derive(Debug)]
pub(crate) struct ToolContext<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) config: &'a AnalyzersConfig,
    pub(crate) files: &'a [String],
    pub(crate) whole_workspace: bool,
    pub(crate) deadline: Instant,
    /// The caller's stop request: a running tool is killed when it comes.
    pub(crate) stop: &'a Control,
}

/// One analyzer's raw outcome, before scoping.
#[derive(Debug)]
pub(crate) struct ToolRun {
    pub(crate) report: AnalyzerReport,
    pub(crate) findings: Vec<Finding>,
    /// Reported findings whose path lies outside the workspace (dropped).
    pub(crate) outside_workspace: usize,
}

pub(crate) fn analyze(plan: AnalysisPlan<'_>) -> AnalysisOutput {
    let started = Instant::now();
    let config = plan.config;
    let budget = config.total_budget(plan.analyzers.len());
    let deadline = started + config.timeout.min(budget);
    let ctx = ToolContext {
        workspace: plan.workspace,
        config,
        files: &plan.files,
        whole_workspace: plan.whole_workspace,
        deadline,
        stop: plan.stop,
    };

    let runs: Vec<ToolRun> = thread::scope(|scope| {
        let handles: Vec<_> = plan
            .analyzers
            .iter()
            .map(|&kind| {
                let ctx = &ctx;
                let handle = thread::Builder::new()
                    .name(format!("tollgate-{kind}"))
                    .spawn_scoped(scope, move || timed(kind, ctx));
                (kind, handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(kind, handle)| {
                let joined = handle
                    .map_err(|err| format!("cannot start a thread for {kind}: {err}"))
                    .and_then(|handle| {
                        handle
                            .join()
                            .map_err(|_| format!("internal error: the {kind} analyzer panicked"))
                    });
                joined.unwrap_or_else(|reason| {
                    ToolRun::new(kind.as_str()).with_status(AnalyzerStatus::Failed, reason)
                })
            })
            .collect()
    });

    let file_set: BTreeSet<&str> = plan.files.iter().map(String::as_str).collect();
    let mut sources = SourceFiles::new(plan.workspace);
    let settle = Settle {
        scope: plan.scope,
        changed_lines: plan.changed_lines,
        files: &file_set,
        max_findings: config.max_findings_per_analyzer,
    };
    let mut findings = Vec::new();
    let mut results = Vec::new();
    for run in runs {
        let (report, kept) = settle.apply(run, &mut sources);
        findings.extend(kept);
        results.push(report);
    }
    for import in plan.imports {
        let (report, kept) = settle.apply(import.into_run(), &mut sources);
        findings.extend(kept);
        results.push(report);
    }

    let mut warnings = plan.warnings;
    for report in &results {
        if let Some(reason) = &report.skipped_reason {
            warnings.push(format!("{} {}: {reason}", report.analyzer, report.status));
        }
        warnings.extend(report.warnings.iter().cloned());
    }
    let analyzers_executed = plan
        .analyzers
        .iter()
        .copied()
        .filter(|kind| {
            results
                .iter()
                .any(|r| r.analyzer == kind.as_str() && r.status == AnalyzerStatus::Executed)
        })
        .collect();
    let summary = StaticAnalysisSummary {
        analyzers_requested: plan.analyzers.to_vec(),
        analyzers_executed,
        scope: plan.scope,
        duration_ms: millis(started.elapsed()),
        budget_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
        findings_out_of_scope: results.iter().map(|r| r.findings_out_of_scope).sum(),
        findings_over_limit: results.iter().map(|r| r.findings_over_limit).sum(),
        warnings,
        results,
    };
    AnalysisOutput { findings, summary }
}

fn timed(kind: AnalyzerKind, ctx: &ToolContext<'_>) -> ToolRun {
    let started = Instant::now();
    let mut run = match kind {
        AnalyzerKind::Tsc => tsc::run(ctx),
        AnalyzerKind::Semgrep => semgrep::run(ctx),
    };
    run.report.duration_ms = millis(started.elapsed());
    tracing::debug!(
        analyzer = kind.as_str(),
        status = run.report.status.as_str(),
        duration_ms = run.report.duration_ms,
        "analyzer finished"
    );
    run
}

impl ToolRun {
    pub(crate) fn new(analyzer: &str) -> ToolRun {
        ToolRun {
            report: AnalyzerReport::new(analyzer, AnalyzerStatus::Executed),
            findings: Vec::new(),
            outside_workspace: 0,
        }
    }

    pub(crate) fn with_status(mut self, status: AnalyzerStatus, reason: String) -> ToolRun {
        self.set_status(status, reason);
        self
    }

    /// Records a worse outcome: the most serious status wins, and reasons of equally serious
    /// problems (two failed projects) are joined.
    pub(crate) fn set_status(&mut self, status: AnalyzerStatus, reason: String) {
        let current = rank(self.report.status);
        if rank(status) > current {
            self.report.status = status;
            self.report.skipped_reason = Some(reason);
        } else if rank(status) == current && status != AnalyzerStatus::Executed {
            let joined = match self.report.skipped_reason.take() {
                Some(previous) => format!("{previous}; {reason}"),
                None => reason,
            };
            self.report.skipped_reason = Some(joined);
        }
    }

    /// Records which executable runs.
    pub(crate) fn found(&mut self, tool: &Tool) {
        self.report.executable = Some(tool.path.display().to_string());
        self.report.discovered_via = Some(tool.origin);
    }
}

fn rank(status: AnalyzerStatus) -> u8 {
    match status {
        AnalyzerStatus::Executed => 0,
        AnalyzerStatus::Skipped => 1,
        AnalyzerStatus::Unavailable => 2,
        AnalyzerStatus::Failed => 3,
        AnalyzerStatus::TimedOut => 4,
        AnalyzerStatus::Cancelled => 5,
    }
}

impl ToolContext<'_> {
    /// Runs one process of this analyzer within its deadline; `None` (with the status set) when
    /// it could not be started.
    pub(crate) fn execute(
        &self,
        command: &ToolCommand,
        run: &mut ToolRun,
    ) -> Option<ProcessOutput> {
        if self.stop.is_cancelled() {
            run.set_status(
                AnalyzerStatus::Cancelled,
                format!(
                    "{} was not started: the review was cancelled",
                    command.program.display()
                ),
            );
            return None;
        }
        run.report.invocations += 1;
        tracing::debug!(command = %command.display(), "running analyzer");
        match process::run(
            command,
            self.deadline,
            self.config.max_output_bytes,
            self.stop,
        ) {
            Ok(output) => {
                run.report.process_ms += millis(output.elapsed);
                if let Exit::Code(code) = output.exit {
                    run.report.exit_code = Some(code);
                }
                Some(output)
            }
            Err(err) => {
                run.set_status(
                    AnalyzerStatus::Failed,
                    format!("cannot start {}: {err}", command.program.display()),
                );
                None
            }
        }
    }

    /// `<cache dir>/<name>`, created, with a `.gitignore` that keeps the cache out of git (and
    /// so out of the next review's diff). The cache directory is one of Tollgate's own: a
    /// symbolic link on the way to it (a committed `.tollgate` link, say) is refused, so a pull
    /// request cannot make the review write elsewhere.
    pub(crate) fn cache_subdir(&self, name: &str) -> std::io::Result<PathBuf> {
        let Some(cache_dir) = self.config.cache_dir.as_ref() else {
            return Err(std::io::Error::other("caching is off"));
        };
        let sub = RepoPath::new(name).map_err(std::io::Error::other)?;
        let dir = self
            .workspace
            .own_dir(&cache_dir.join(&sub))
            .map_err(std::io::Error::other)?;
        let root = self
            .workspace
            .own_dir(cache_dir)
            .map_err(std::io::Error::other)?;
        // Only a directory made here or Tollgate's own gets the ignore-all file:
        // `cache_dir = "src"` must not hide the sources from git.
        let ours = !root.exists() || cache_dir.starts_with_dir(STATE_DIR);
        std::fs::create_dir_all(&dir)?;
        let ignore = root.join(".gitignore");
        if ours && !ignore.exists() {
            std::fs::write(&ignore, "# Written by Tollgate: analyzer caches.\n*\n")?;
        }
        Ok(dir)
    }
}

/// How an exit reads in a message.
pub(crate) fn describe_exit(exit: Exit) -> String {
    match exit {
        Exit::Code(code) => format!("exited with code {code}"),
        Exit::Signal(signal) => format!("was killed by signal {signal}"),
        Exit::TimedOut => "ran past its time limit".to_string(),
        Exit::Cancelled => "was stopped: the review was cancelled".to_string(),
    }
}

/// A tool's stderr as warnings: non-empty lines, at most [`MAX_STDERR_LINES`], each shortened.
pub(crate) fn stderr_warnings(tool: &str, stderr: &[u8], truncated: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty())
        .collect();
    let mut warnings: Vec<String> = lines
        .iter()
        .take(MAX_STDERR_LINES)
        .map(|line| {
            let mut short: String = line.chars().take(MAX_WARNING_CHARS).collect();
            if line.chars().nth(MAX_WARNING_CHARS).is_some() {
                short.push('…');
            }
            format!("{tool}: {short}")
        })
        .collect();
    if lines.len() > MAX_STDERR_LINES {
        warnings.push(format!(
            "{tool}: … {} more stderr line(s)",
            lines.len() - MAX_STDERR_LINES
        ));
    }
    if truncated {
        warnings.push(format!("{tool}: stderr was cut at the output limit"));
    }
    warnings
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// Scoping and capping rules shared by every analyzer.
struct Settle<'a> {
    scope: AnalysisScope,
    changed_lines: Option<&'a ChangedLines>,
    files: &'a BTreeSet<&'a str>,
    max_findings: usize,
}

impl Settle<'_> {
    fn apply(&self, run: ToolRun, sources: &mut SourceFiles<'_>) -> (AnalyzerReport, Vec<Finding>) {
        let ToolRun {
            mut report,
            findings,
            outside_workspace,
        } = run;
        report.findings_out_of_scope += outside_workspace;
        let mut kept = Vec::with_capacity(findings.len());
        for mut finding in findings {
            let location = &finding.location;
            finding.on_changed_line = self.changed_lines.is_some_and(|changed| {
                touches_added_line(
                    changed,
                    &location.file,
                    location.start_line,
                    location.end_line,
                )
            });
            // The analysed files, not the whole diff: files a review leaves out (ignore globs,
            // `changed_files`) stay out even where the diff changed lines.
            let in_files = self.files.contains(location.file.as_str());
            let in_scope = match self.scope {
                AnalysisScope::All => true,
                AnalysisScope::ChangedFiles => in_files,
                AnalysisScope::ChangedLines => in_files && finding.on_changed_line,
            };
            if !in_scope {
                report.findings_out_of_scope += 1;
                continue;
            }
            if finding.anchor_text.is_empty()
                && let Some(line) = sources
                    .get(&finding.location.file)
                    .and_then(|text| text.line(finding.location.start_line))
            {
                finding.anchor_text = line;
            }
            kept.push(finding);
        }
        // Worst first, so the cap drops the least important findings.
        kept.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| b.on_changed_line.cmp(&a.on_changed_line))
                .then_with(|| a.location.file.cmp(&b.location.file))
                .then_with(|| a.location.start_line.cmp(&b.location.start_line))
                .then_with(|| a.location.start_column.cmp(&b.location.start_column))
                .then_with(|| a.rule_id.cmp(&b.rule_id))
        });
        if kept.len() > self.max_findings {
            report.findings_over_limit = kept.len() - self.max_findings;
            kept.truncate(self.max_findings);
        }
        report.findings_kept = kept.len();
        (report, kept)
    }
}

/// Whether any line of `start..=end` of `path` was added by the diff.
fn touches_added_line(changed: &ChangedLines, path: &str, start: u32, end: u32) -> bool {
    let added = changed.added_lines(path);
    let idx = added.partition_point(|line| *line < start);
    added.get(idx).is_some_and(|line| *line <= end.max(start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Category, Location, Severity, Source};

    fn changed() -> ChangedLines {
        let diff = crate::diff::parse(
            b"--- a/a.ts\n+++ b/a.ts\n@@ -1,2 +1,4 @@\n one\n+two\n three\n+four\n".to_vec(),
        )
        .unwrap();
        ChangedLines::new(&diff)
    }

    fn finding(file: &str, line: u32, severity: Severity) -> Finding {
        Finding::new(
            "tsc/TS2322",
            severity,
            Category::Correctness,
            Source::Tsc,
            "t",
            Location::line(file, line),
        )
    }

    #[test]
    fn scope_cap_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.ts"), "one\ntwo\nthree\nfour\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let changed = changed();
        let files: BTreeSet<&str> = ["a.ts"].into();
        let ignored =
            crate::diff::parse(b"--- a/dist/x.ts\n+++ b/dist/x.ts\n@@ -1 +1 @@\n-a\n+b\n".to_vec())
                .unwrap();
        let ignored = ChangedLines::new(&ignored);
        let (report, kept) = Settle {
            scope: AnalysisScope::ChangedLines,
            changed_lines: Some(&ignored),
            files: &files,
            max_findings: 10,
        }
        .apply(
            ToolRun {
                report: AnalyzerReport::new("tsc", AnalyzerStatus::Executed),
                findings: vec![finding("dist/x.ts", 1, Severity::High)],
                outside_workspace: 0,
            },
            &mut SourceFiles::new(&workspace),
        );
        assert!(
            kept.is_empty(),
            "a changed line of a file that was not analysed"
        );
        assert_eq!(report.findings_out_of_scope, 1);
        let mut run = ToolRun::new("tsc");
        run.findings = vec![
            finding("a.ts", 1, Severity::High),
            finding("a.ts", 2, Severity::Low),
            finding("a.ts", 4, Severity::High),
            finding("b.ts", 2, Severity::High),
        ];
        run.outside_workspace = 1;
        let mut sources = SourceFiles::new(&workspace);

        let settle = |scope, max_findings| Settle {
            scope,
            changed_lines: Some(&changed),
            files: &files,
            max_findings,
        };
        let (report, kept) = settle(AnalysisScope::ChangedLines, 1).apply(
            ToolRun {
                report: run.report.clone(),
                findings: run.findings.clone(),
                outside_workspace: 1,
            },
            &mut sources,
        );
        assert_eq!(report.findings_out_of_scope, 3, "line 1, b.ts, outside");
        assert_eq!(report.findings_over_limit, 1);
        assert_eq!(report.findings_kept, 1);
        assert_eq!(kept[0].location.start_line, 4, "the HIGH one is kept");
        assert!(kept[0].on_changed_line);
        assert_eq!(kept[0].anchor_text, "four");

        let (report, kept) = settle(AnalysisScope::ChangedFiles, 10).apply(
            ToolRun {
                report: run.report.clone(),
                findings: run.findings.clone(),
                outside_workspace: 0,
            },
            &mut sources,
        );
        assert_eq!(report.findings_out_of_scope, 1);
        assert_eq!(kept.len(), 3);
        assert!(
            !kept
                .iter()
                .find(|f| f.location.start_line == 1)
                .unwrap()
                .on_changed_line
        );

        let (report, kept) = settle(AnalysisScope::All, 10).apply(run, &mut sources);
        assert_eq!((report.findings_out_of_scope, kept.len()), (1, 4));
    }

    #[test]
    fn multi_line_findings_touch_added_lines_inside_them() {
        let changed = changed();
        assert!(touches_added_line(&changed, "a.ts", 1, 3));
        assert!(!touches_added_line(&changed, "a.ts", 3, 3));
        assert!(touches_added_line(&changed, "a.ts", 3, 9));
        assert!(!touches_added_line(&changed, "a.ts", 5, 9));
        assert!(!touches_added_line(&changed, "other.ts", 1, 9));
    }

    #[test]
    fn the_worst_status_wins_and_reasons_join() {
        let mut run = ToolRun::new("tsc");
        run.set_status(AnalyzerStatus::Failed, "project a".into());
        run.set_status(AnalyzerStatus::Failed, "project b".into());
        assert_eq!(
            run.report.skipped_reason.as_deref(),
            Some("project a; project b")
        );
        run.set_status(AnalyzerStatus::TimedOut, "project c".into());
        run.set_status(AnalyzerStatus::Failed, "project d".into());
        assert_eq!(run.report.status, AnalyzerStatus::TimedOut);
        assert_eq!(run.report.skipped_reason.as_deref(), Some("project c"));
    }

    #[test]
    fn stderr_becomes_bounded_warnings() {
        let mut stderr = String::new();
        for idx in 0..25 {
            stderr.push_str(&format!("line {idx}\n\n"));
        }
        stderr.push_str(&"x".repeat(1000));
        let warnings = stderr_warnings("semgrep", stderr.as_bytes(), true);
        assert_eq!(warnings.len(), MAX_STDERR_LINES + 2);
        assert_eq!(warnings[0], "semgrep: line 0");
        assert!(warnings[MAX_STDERR_LINES].contains("6 more"));
        assert!(warnings.last().unwrap().contains("cut"));
        assert!(stderr_warnings("tsc", b"", false).is_empty());
    }
}
