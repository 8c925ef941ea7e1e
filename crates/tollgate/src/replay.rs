//! `tollgate replay`: what the gate would have said about the repository's recent history.
//!
//! Each selected commit is reviewed against its first parent (a merge: the pull request it
//! merged) with the gate files (`tollgate.toml`, nested ones included, invariants, baseline,
//! learnings ledger) of that *parent*, as `tollgate-action` reads them from a pull request's
//! base, so a commit cannot loosen the gate that judges it; static analyzers and model passes
//! stay off: they would need a checkout of every commit, and replay reads history only through git.
//! Commits are reviewed in parallel; each result is appended to a JSON-lines state file as it
//! arrives, so an interrupted replay picks up where it stopped. The summary is what a team
//! needs before turning the gate on: how often it would have failed and why, which rules and
//! paths are noisy, and a starting configuration.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{RawConfig, ReviewConfig};
use crate::control::Control;
use crate::diff::{self, DiffSpec, GitError, HistoryCommit};
use crate::findings::Severity;
use crate::review::{self, DiffInput, GateFiles, ReviewRequest};

/// Which commits of the first-parent history to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// Merges when at least half of the last commits are merges (a branch that merges pull
    /// requests), otherwise every commit (squash or rebase merging).
    Auto,
    /// Only merge commits, each against its first parent: one per merged pull request.
    Merges,
    /// Every commit of the first-parent history except the root.
    Commits,
}

/// What to replay.
#[derive(Debug)]
pub struct ReplayRequest<'a> {
    /// The repository's working tree root.
    pub workspace: &'a Path,
    /// How many commits to review.
    pub count: usize,
    pub selection: Selection,
    /// Reviews run at once (at least 1).
    pub jobs: usize,
    /// The environment layer of every commit's configuration (`TOLLGATE_*`).
    pub env: Vec<(String, String)>,
    /// Where results are kept between runs (JSON lines); `None`: nothing is kept.
    pub state_file: Option<PathBuf>,
}

/// A finding of a replayed commit, reduced to what the summary needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayFinding {
    pub rule_id: String,
    pub severity: Severity,
    pub path: String,
    pub line: u32,
    pub title: String,
}

/// The review of one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommitReplay {
    pub sha: String,
    pub subject: String,
    /// The Tollgate version that reviewed it: a state file from another version is not reused.
    pub tool_version: String,
    pub files_changed: usize,
    pub lines_changed: usize,
    pub should_fail: bool,
    pub fail_reasons: Vec<String>,
    /// Every finding that passed the commit's filters (no `max_findings` cut).
    pub findings: Vec<ReplayFinding>,
    /// Why the commit could not be reviewed (an invalid configuration at its base, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: f64,
}

/// Findings of one rule across the replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleTally {
    pub rule_id: String,
    pub findings: usize,
    /// Commits with at least one finding of the rule.
    pub commits: usize,
    pub max_severity: Severity,
}

/// Findings under one directory across the replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathTally {
    /// A directory (its first two levels) or a top-level file.
    pub path: String,
    pub findings: usize,
}

/// A commit the gate would have failed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateFailure {
    pub sha: String,
    pub subject: String,
    pub reasons: Vec<String>,
}

/// What the replay found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplaySummary {
    pub commits_reviewed: usize,
    /// Commits that could not be reviewed (see each one's `error`).
    pub commits_with_errors: usize,
    /// Results taken from the state file of an earlier run.
    pub commits_resumed: usize,
    pub gate_failures: Vec<GateFailure>,
    pub findings: usize,
    /// Findings at HIGH or CRITICAL, and their number per reviewed commit.
    pub high_or_worse: usize,
    pub high_or_worse_per_commit: f64,
    /// Noisiest first.
    pub rules: Vec<RuleTally>,
    /// Noisiest first, at most ten.
    pub paths: Vec<PathTally>,
    /// A `tollgate.toml` fragment to start from, with a comment on each line's reason.
    pub suggested_config: String,
    pub duration_ms: f64,
}

/// The replay's result: every commit, newest first, and the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayReport {
    pub selection: Selection,
    pub commits: Vec<CommitReplay>,
    pub summary: ReplaySummary,
}

/// Why a replay could not run at all (a commit that cannot be reviewed is a result instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot use the replay state file {path}: {source}")]
    State {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the replay was cancelled")]
    Cancelled,
}

/// Where a replay keeps its results unless told otherwise: `.tollgate/replay/results.jsonl`,
/// through the workspace's checks on Tollgate's own directories (no link, not `.git`).
pub fn default_state_file(workspace: &Path) -> Result<PathBuf, crate::workspace::PathError> {
    let workspace = crate::workspace::Workspace::new(workspace).map_err(|source| {
        crate::workspace::PathError::Io {
            path: workspace.display().to_string(),
            source,
        }
    })?;
    Ok(workspace.create_state_dir("replay")?.join("results.jsonl"))
}

/// Most commits one replay reviews: a bound on time and memory whatever is asked.
pub const MAX_COMMITS: usize = 10_000;

/// Reviews the selected commits; `on_commit` hears each result as it arrives (with the number
/// done and the total), for progress. Stops between commits once `control` is cancelled.
pub fn replay(
    request: &ReplayRequest<'_>,
    control: &Control,
    on_commit: &(dyn Fn(usize, usize, &CommitReplay) + Sync),
) -> Result<ReplayReport, ReplayError> {
    let started = Instant::now();
    let count = request.count.min(MAX_COMMITS);
    let (selection, selected) = select(request.workspace, count, request.selection)?;

    let mut done: HashMap<String, CommitReplay> = match &request.state_file {
        Some(path) => read_state(path)?,
        None => HashMap::new(),
    };
    done.retain(|sha, _| selected.iter().any(|c| &c.sha == sha));
    let n_resumed = done.len();
    let todo: Vec<&HistoryCommit> = selected
        .iter()
        .filter(|c| !done.contains_key(&c.sha))
        .collect();

    let mut state = match &request.state_file {
        Some(path) => Some(open_state(path)?),
        None => None,
    };
    let results = Mutex::new(Vec::with_capacity(todo.len()));
    let next = AtomicUsize::new(0);
    let n_done = AtomicUsize::new(n_resumed);
    let state_error = Mutex::new(None);
    let total = selected.len();
    let state_writer = Mutex::new(state.as_mut());
    std::thread::scope(|scope| {
        for _ in 0..request.jobs.clamp(1, 64) {
            scope.spawn(|| {
                loop {
                    if control.is_cancelled() {
                        return;
                    }
                    let idx = next.fetch_add(1, Ordering::SeqCst);
                    let Some(commit) = todo.get(idx) else {
                        return;
                    };
                    let result = review_commit(request.workspace, commit, &request.env);
                    if let Some(file) = lock(&state_writer).as_mut()
                        && let Err(err) = append_state(file, &result)
                    {
                        lock(&state_error).get_or_insert(err);
                        control.cancel();
                    }
                    let n = n_done.fetch_add(1, Ordering::SeqCst) + 1;
                    on_commit(n, total, &result);
                    lock(&results).push(result);
                }
            });
        }
    });
    if let Some(source) = lock(&state_error).take() {
        return Err(ReplayError::State {
            path: display_state(request),
            source,
        });
    }
    if control.is_cancelled() {
        return Err(ReplayError::Cancelled);
    }
    for result in results.into_inner().unwrap_or_else(|p| p.into_inner()) {
        done.insert(result.sha.clone(), result);
    }
    let commits: Vec<CommitReplay> = selected
        .iter()
        .filter_map(|c| done.remove(&c.sha))
        .collect();
    let summary = summarize(
        &commits,
        n_resumed,
        started.elapsed().as_secs_f64() * 1000.0,
    );
    Ok(ReplayReport {
        selection,
        commits,
        summary,
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn display_state(request: &ReplayRequest<'_>) -> String {
    request
        .state_file
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The commits to review, newest first, and the selection that chose them (`Auto` resolved).
fn select(
    workspace: &Path,
    count: usize,
    selection: Selection,
) -> Result<(Selection, Vec<HistoryCommit>), ReplayError> {
    let with_parent = |c: &HistoryCommit| c.n_parents > 0;
    let selection = match selection {
        Selection::Auto => {
            let recent = diff::first_parent_history(workspace, count.max(1))?;
            let merges = recent.iter().filter(|c| c.n_parents > 1).count();
            if merges * 2 >= recent.len() && merges > 0 {
                Selection::Merges
            } else {
                Selection::Commits
            }
        }
        other => other,
    };
    let commits = match selection {
        Selection::Merges => {
            // Merges are sparse on some branches: look far enough back, within the bound.
            let history = diff::first_parent_history(workspace, MAX_COMMITS * 4)?;
            history
                .into_iter()
                .filter(|c| c.n_parents > 1)
                .take(count)
                .collect()
        }
        _ => diff::first_parent_history(workspace, count + 1)?
            .into_iter()
            .filter(with_parent)
            .take(count)
            .collect(),
    };
    Ok((selection, commits))
}

/// Reviews `commit` against its first parent with the parent's gate files.
fn review_commit(
    workspace: &Path,
    commit: &HistoryCommit,
    env: &[(String, String)],
) -> CommitReplay {
    let started = Instant::now();
    let mut replay = CommitReplay {
        sha: commit.sha.clone(),
        subject: commit.subject.clone(),
        tool_version: crate::VERSION.to_string(),
        files_changed: 0,
        lines_changed: 0,
        should_fail: false,
        fail_reasons: Vec::new(),
        findings: Vec::new(),
        error: None,
        duration_ms: 0.0,
    };
    // The base's gate files, never the judged commit's own (selected commits have a parent).
    let base = commit
        .first_parent
        .clone()
        .unwrap_or_else(|| format!("{}^", commit.sha));
    let gate_files = GateFiles::Commit(base);
    let outcome = commit_config(workspace, &gate_files, env).and_then(|config| {
        review::run_with_gate_files(
            ReviewRequest {
                workspace,
                diff: DiffInput::Git(DiffSpec::Commit {
                    rev: commit.sha.clone(),
                }),
                config: &config,
                changed_files: None,
            },
            &gate_files,
        )
        .map_err(|err| err.to_string())
    });
    match outcome {
        Ok(outcome) => {
            let result = outcome.result;
            replay.files_changed = result.stats.files_changed;
            replay.lines_changed = result.stats.lines_added + result.stats.lines_removed;
            replay.should_fail = result.should_fail;
            replay.fail_reasons = result.fail_reasons;
            replay.findings = result
                .findings
                .into_iter()
                .map(|f| ReplayFinding {
                    rule_id: f.rule_id,
                    severity: f.severity,
                    path: f.location.file,
                    line: f.location.start_line,
                    title: f.title,
                })
                .collect();
        }
        Err(err) => replay.error = Some(err),
    }
    replay.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    replay
}

/// The base commit's `tollgate.toml`, then the environment; every finding kept (no `max_findings`
/// cut), analyzers and model passes off.
fn commit_config(
    workspace: &Path,
    gate_files: &GateFiles,
    env: &[(String, String)],
) -> Result<ReviewConfig, String> {
    let mut config = gate_files
        .load_config(workspace, env.iter().cloned(), RawConfig::default())
        .and_then(RawConfig::resolve)
        .map_err(|err| err.to_string())?;
    config.max_findings = usize::MAX;
    // Analyzers and imported SARIF files would read the working tree, not this commit.
    config.analyzers.enabled.clear();
    config.analyzers.import_sarif.clear();
    config.llm = Default::default();
    Ok(config)
}

fn read_state(path: &Path) -> Result<HashMap<String, CommitReplay>, ReplayError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(source) => {
            return Err(ReplayError::State {
                path: path.display().to_string(),
                source,
            });
        }
    };
    let mut done = HashMap::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|source| ReplayError::State {
            path: path.display().to_string(),
            source,
        })?;
        // A line cut short by a killed run, or from another version, is simply redone.
        if let Ok(result) = serde_json::from_str::<CommitReplay>(&line)
            && result.tool_version == crate::VERSION
        {
            done.insert(result.sha.clone(), result);
        }
    }
    Ok(done)
}

fn open_state(path: &Path) -> Result<std::fs::File, ReplayError> {
    let state_error = |source| ReplayError::State {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(state_error)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(state_error)
}

fn append_state(file: &mut std::fs::File, result: &CommitReplay) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(result).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // One write per line: a killed run leaves at most one partial line, which is redone.
    file.write_all(&line)?;
    file.flush()
}

/// Rules quieted in the suggested configuration fire on more than this share of the commits
/// without ever reaching HIGH.
const NOISY_RULE_SHARE: f64 = 0.25;

fn summarize(commits: &[CommitReplay], n_resumed: usize, duration_ms: f64) -> ReplaySummary {
    let reviewed: Vec<&CommitReplay> = commits.iter().filter(|c| c.error.is_none()).collect();
    let n_reviewed = reviewed.len();
    let mut rules: BTreeMap<&str, RuleTally> = BTreeMap::new();
    let mut paths: BTreeMap<String, usize> = BTreeMap::new();
    let mut n_findings = 0;
    let mut high_or_worse = 0;
    for commit in &reviewed {
        let mut seen_rules = std::collections::BTreeSet::new();
        for finding in &commit.findings {
            n_findings += 1;
            if finding.severity >= Severity::High {
                high_or_worse += 1;
            }
            let tally = rules
                .entry(finding.rule_id.as_str())
                .or_insert_with(|| RuleTally {
                    rule_id: finding.rule_id.clone(),
                    findings: 0,
                    commits: 0,
                    max_severity: finding.severity,
                });
            tally.findings += 1;
            tally.max_severity = tally.max_severity.max(finding.severity);
            if seen_rules.insert(finding.rule_id.as_str()) {
                tally.commits += 1;
            }
            *paths.entry(directory_of(&finding.path)).or_default() += 1;
        }
    }
    let mut rules: Vec<RuleTally> = rules.into_values().collect();
    rules.sort_by(|a, b| b.findings.cmp(&a.findings).then(a.rule_id.cmp(&b.rule_id)));
    let mut path_list: Vec<(String, usize)> = paths.into_iter().collect();
    path_list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));

    let gate_failures: Vec<GateFailure> = reviewed
        .iter()
        .filter(|c| c.should_fail)
        .map(|c| GateFailure {
            sha: c.sha.clone(),
            subject: c.subject.clone(),
            reasons: c.fail_reasons.clone(),
        })
        .collect();
    let suggested_config = suggest_config(&rules, n_reviewed, &gate_failures);
    ReplaySummary {
        commits_reviewed: n_reviewed,
        commits_with_errors: commits.len() - n_reviewed,
        commits_resumed: n_resumed,
        gate_failures,
        findings: n_findings,
        high_or_worse,
        high_or_worse_per_commit: if n_reviewed == 0 {
            0.0
        } else {
            high_or_worse as f64 / n_reviewed as f64
        },
        rules,
        paths: path_list
            .into_iter()
            .take(10)
            .map(|(path, findings)| PathTally { path, findings })
            .collect(),
        suggested_config,
        duration_ms,
    }
}

/// The first two directories of `path` (`crates/core/src/x.rs` → `crates/core/`), or the file
/// itself at the top level.
fn directory_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.len() {
        0 | 1 => path.to_string(),
        2 => format!("{}/", parts[0]),
        _ => format!("{}/{}/", parts[0], parts[1]),
    }
}

/// A starting `tollgate.toml`: noisy built-in notices turned off, and what to do about commits
/// that would have failed. Noisy paths are listed, never suggested for `preflight.ignore`: an
/// ignored path is not scanned for secrets either.
fn suggest_config(rules: &[RuleTally], n_commits: usize, failures: &[GateFailure]) -> String {
    let mut toml = String::new();
    if n_commits == 0 {
        return toml;
    }
    for rule in rules {
        let share = rule.commits as f64 / n_commits as f64;
        let built_in = crate::review::is_builtin_rule(&rule.rule_id);
        if built_in && share > NOISY_RULE_SHARE && rule.max_severity < Severity::High {
            toml.push_str(&format!(
                "# {} fired on {} of {} commits ({:.0} %), never at HIGH or worse\n[rules.{}]\nenabled = false\n\n",
                rule.rule_id,
                rule.commits,
                n_commits,
                share * 100.0,
                rule.rule_id
            ));
        }
    }
    if !failures.is_empty() {
        toml.push_str(&format!(
            "# {} of {} commits would have failed the gate (see gate_failures). If what they\n# added is accepted, record it: tollgate review --base <before> --head HEAD --write-baseline .tollgate-baseline.json\n# and set [review] baseline = \".tollgate-baseline.json\".\n",
            failures.len(),
            n_commits
        ));
    }
    toml
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &str, severity: Severity, path: &str) -> ReplayFinding {
        ReplayFinding {
            rule_id: rule.to_string(),
            severity,
            path: path.to_string(),
            line: 1,
            title: String::new(),
        }
    }

    fn commit(sha: &str, findings: Vec<ReplayFinding>, should_fail: bool) -> CommitReplay {
        CommitReplay {
            sha: sha.to_string(),
            subject: format!("commit {sha}"),
            tool_version: crate::VERSION.to_string(),
            files_changed: 1,
            lines_changed: 2,
            should_fail,
            fail_reasons: if should_fail {
                vec!["CRITICAL TG008".to_string()]
            } else {
                Vec::new()
            },
            findings,
            error: None,
            duration_ms: 1.0,
        }
    }

    #[test]
    fn the_summary_counts_rules_paths_and_failures_and_suggests_a_config() {
        let commits = vec![
            commit(
                "a",
                vec![
                    finding("TG003", Severity::Low, "web/app/vite.config.ts"),
                    finding("TG008", Severity::Critical, "src/keys.rs"),
                ],
                true,
            ),
            commit(
                "b",
                vec![finding("TG003", Severity::Low, "web/app/x.json")],
                false,
            ),
            commit("c", vec![], false),
            CommitReplay {
                error: Some("invalid tollgate.toml".to_string()),
                ..commit("d", vec![finding("TG001", Severity::Low, "x")], false)
            },
        ];
        let summary = summarize(&commits, 1, 5.0);
        assert_eq!(summary.commits_reviewed, 3);
        assert_eq!(summary.commits_with_errors, 1);
        assert_eq!(summary.commits_resumed, 1);
        assert_eq!(
            summary.findings, 3,
            "the failed commit's findings are not counted"
        );
        assert_eq!(summary.high_or_worse, 1);
        assert!((summary.high_or_worse_per_commit - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(summary.gate_failures.len(), 1);
        assert_eq!(summary.gate_failures[0].sha, "a");
        assert_eq!(summary.rules[0].rule_id, "TG003");
        assert_eq!(
            (summary.rules[0].findings, summary.rules[0].commits),
            (2, 2)
        );
        assert_eq!(summary.paths[0].path, "web/app/");
        let toml = &summary.suggested_config;
        assert!(toml.contains("[rules.TG003]\nenabled = false"), "{toml}");
        assert!(
            !toml.contains("[rules.TG008]"),
            "a rule at CRITICAL is never quieted: {toml}"
        );
        assert!(
            !toml.contains("ignore"),
            "paths are never suggested for ignoring: {toml}"
        );
        assert!(toml.contains("1 of 3 commits would have failed"), "{toml}");
        // The suggestion is a valid configuration.
        let parsed = RawConfig::from_toml(toml, "suggested").unwrap();
        parsed.resolve().unwrap();
    }

    #[test]
    fn a_state_file_keeps_whole_lines_of_this_version_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/replay.jsonl");
        let mut file = open_state(&path).unwrap();
        append_state(&mut file, &commit("a", vec![], false)).unwrap();
        let other = CommitReplay {
            tool_version: "0.0.0-other".to_string(),
            ..commit("b", vec![], false)
        };
        append_state(&mut file, &other).unwrap();
        // A line cut short by a killed run.
        file.write_all(b"{\"sha\":\"c\",\"sub").unwrap();
        let done = read_state(&path).unwrap();
        assert_eq!(done.keys().collect::<Vec<_>>(), vec!["a"]);
    }

    #[test]
    fn directories_are_cut_at_two_levels() {
        assert_eq!(directory_of("Cargo.lock"), "Cargo.lock");
        assert_eq!(directory_of("src/lib.rs"), "src/");
        assert_eq!(directory_of("crates/core/src/lib.rs"), "crates/core/");
    }
}
