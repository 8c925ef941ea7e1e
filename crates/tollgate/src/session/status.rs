//! What a session looks like from outside: status (progress, ETA, findings by severity,
//! liveness) and telemetry (per-step timings, model usage, retries, worker utilisation).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::findings::{Finding, Severity};
use crate::session::record::{SessionRecord, StepRecord};
use crate::session::{SessionError, SessionSettings, SessionState, StepState, lease, ms};
use crate::store::Store;

/// Output of `get_review_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionStatus {
    pub session_id: String,
    pub status: SessionState,
    /// Why the session failed, was cancelled or paused (including a worker that died).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub commit_hash: String,
    pub base_ref: String,
    pub base_sha: String,
    pub head_sha: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub progress: Progress,
    pub findings: FindingCounts,
    /// The gate's verdict on what was reviewed so far.
    pub gate: GateVerdict,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub last_activity_at: String,
    /// Milliseconds since the last activity (a step starting or ending, a state change).
    pub idle_ms: u64,
    /// A running session that has shown no activity for the stall time (2 min by default), or
    /// whose worker stopped renewing its lease.
    pub appears_stalled: bool,
    /// The process running the session, if one holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerInfo>,
    pub warnings: Vec<String>,
    /// The findings so far, when asked for (`include_findings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding_list: Option<Vec<Finding>>,
}

/// How far a session is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Progress {
    pub completed: usize,
    pub total: usize,
    pub running: usize,
    /// Steps waiting for another attempt after a failure.
    pub retrying: usize,
    pub failed: usize,
    /// `completed / total`, 0–100.
    pub percentage: f64,
    /// Estimated time left, from the measured time per changed line of the finished steps and
    /// the session's workers; absent before the first step ends and once the session ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_ms: Option<u64>,
}

/// Findings so far (deduplicated by fingerprint across steps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingCounts {
    pub total: usize,
    /// Every severity, CRITICAL to INFO, with its count.
    pub by_severity: BTreeMap<String, usize>,
}

/// The gate's verdict on a session: `failed` as soon as a completed step failed it (no later
/// step can undo that), `passed` once every step completed without, `pending` until then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateVerdict {
    pub verdict: GateState,
    /// The fail reasons of every step that failed the gate (at most [`MAX_GATE_REASONS`]).
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateState {
    Pending,
    Passed,
    Failed,
}

/// Reasons listed in a [`GateVerdict`]; the rest are counted in a last one.
pub const MAX_GATE_REASONS: usize = 20;

fn gate_verdict(steps: &[StepRecord], all_completed: bool) -> GateVerdict {
    let mut reasons: Vec<String> = Vec::new();
    for reason in steps
        .iter()
        .filter_map(|s| s.gate_reasons.as_ref())
        .flatten()
    {
        if !reasons.contains(reason) {
            reasons.push(reason.clone());
        }
    }
    let verdict = if !reasons.is_empty() {
        GateState::Failed
    } else if all_completed {
        GateState::Passed
    } else {
        GateState::Pending
    };
    if reasons.len() > MAX_GATE_REASONS {
        let rest = reasons.len() - MAX_GATE_REASONS;
        reasons.truncate(MAX_GATE_REASONS);
        reasons.push(format!("… and {rest} more"));
    }
    GateVerdict { verdict, reasons }
}

/// The process holding a session's lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerInfo {
    pub pid: u32,
    pub heartbeat_age_ms: u64,
    pub alive: bool,
}

/// Output of `get_review_telemetry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionTelemetry {
    pub session_id: String,
    pub status: SessionState,
    /// From creation to the end (or now).
    pub elapsed_ms: u64,
    /// Time a process spent running the session (summed over runs, excluding time paused or
    /// waiting for a process).
    pub active_ms: u64,
    pub max_workers: u32,
    /// Step time over `max_workers × active_ms`, 0–1.
    pub worker_utilisation: f64,
    pub totals: TelemetryTotals,
    pub steps: Vec<StepTelemetry>,
}

/// Sums over the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryTotals {
    pub steps_completed: usize,
    /// Failed attempts that were (or will be) retried, plus final failures.
    pub failed_attempts: u64,
    pub busy_ms: f64,
    pub mean_step_ms: Option<f64>,
    pub max_step_ms: Option<f64>,
    pub findings_reported: u64,
    /// Reported by a step but already found by another (same fingerprint).
    pub findings_deduplicated: u64,
    pub llm_passes: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub cache_hits: u64,
}

/// One step's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepTelemetry {
    pub index: u32,
    /// `pr` (whole-PR rules on the whole diff) or `files`.
    pub kind: String,
    pub files: Vec<String>,
    pub changed_lines: u64,
    pub state: StepState,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings_reported: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings_new: Option<u64>,
    pub llm_passes: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub cache_hits: u64,
}

pub(crate) fn status(
    store: &Store,
    id: &str,
    include_findings: bool,
    settings: &SessionSettings,
    now: i64,
) -> Result<SessionStatus, SessionError> {
    let session = load(store, id)?;
    let steps = store.snapshot(|tx| tx.session_steps(id))?;
    let stored = store.snapshot(|tx| tx.session_findings(id))?;
    let mut by_severity: BTreeMap<String, usize> = Severity::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), 0))
        .collect();
    for finding in &stored {
        *by_severity.entry(finding.severity.clone()).or_default() += 1;
    }
    let finding_list = include_findings.then(|| {
        stored
            .iter()
            .filter_map(|f| serde_json::from_str::<Finding>(&f.json).ok())
            .collect()
    });
    let count = |state: StepState| steps.iter().filter(|s| s.state == state).count();
    let completed = count(StepState::Completed);
    let total = steps.len();
    let retrying = steps
        .iter()
        .filter(|s| s.state == StepState::Pending && s.attempts > 0)
        .count();
    let lease_ms = ms(settings.lease);
    let worker = session.lease.as_ref().map(|owner| WorkerInfo {
        pid: owner.pid,
        heartbeat_age_ms: u64::try_from(now - owner.heartbeat_at).unwrap_or(0),
        alive: !lease::is_dead(owner, now, lease_ms),
    });
    let idle_ms = u64::try_from(now - session.last_activity_at).unwrap_or(0);
    let appears_stalled = session.state == SessionState::Running
        && (idle_ms > settings.stall_after.as_millis() as u64
            || worker.as_ref().is_none_or(|w| !w.alive));
    let gate = gate_verdict(&steps, total > 0 && completed == total);
    Ok(SessionStatus {
        gate,
        progress: Progress {
            completed,
            total,
            running: count(StepState::Running),
            retrying,
            failed: count(StepState::Failed),
            percentage: if total == 0 {
                100.0
            } else {
                (completed as f64 * 1000.0 / total as f64).round() / 10.0
            },
            eta_ms: if session.state.is_final() {
                None
            } else {
                eta_ms(&steps, session.max_workers)
            },
        },
        findings: FindingCounts {
            total: stored.len(),
            by_severity,
        },
        session_id: session.id,
        status: session.state,
        reason: session.reason,
        commit_hash: session.commit_hash,
        base_ref: session.base_ref,
        base_sha: session.base_sha,
        head_sha: session.head_sha,
        title: session.title,
        author: session.author,
        created_at: rfc3339(session.created_at),
        started_at: session.started_at.map(rfc3339),
        finished_at: session.finished_at.map(rfc3339),
        last_activity_at: rfc3339(session.last_activity_at),
        idle_ms,
        appears_stalled,
        worker,
        warnings: session.warnings,
        finding_list,
    })
}

pub(crate) fn telemetry(
    store: &Store,
    id: &str,
    now: i64,
) -> Result<SessionTelemetry, SessionError> {
    let session = load(store, id)?;
    let steps = store.snapshot(|tx| tx.session_steps(id))?;
    let durations: Vec<f64> = steps
        .iter()
        .filter(|s| s.state == StepState::Completed)
        .filter_map(|s| s.duration_ms)
        .collect();
    let busy_ms: f64 = durations.iter().sum();
    let reported: u64 = steps.iter().filter_map(|s| s.findings_reported).sum();
    let new: u64 = steps.iter().filter_map(|s| s.findings_new).sum();
    let sum = |f: fn(&StepRecord) -> u64| steps.iter().map(f).sum::<u64>();
    let failed_attempts: u64 = steps
        .iter()
        .map(|s| {
            let succeeded = u32::from(s.state == StepState::Completed);
            u64::from(s.attempts.saturating_sub(succeeded))
        })
        .sum();
    let end = session.finished_at.unwrap_or(now);
    let active_ms = session.active_ms.max(0) as u64;
    let capacity = f64::from(session.max_workers.max(1)) * active_ms as f64;
    Ok(SessionTelemetry {
        session_id: session.id.clone(),
        status: session.state,
        elapsed_ms: u64::try_from(end - session.created_at).unwrap_or(0),
        active_ms,
        max_workers: session.max_workers,
        worker_utilisation: if capacity > 0.0 {
            ((busy_ms / capacity).min(1.0) * 1000.0).round() / 1000.0
        } else {
            0.0
        },
        totals: TelemetryTotals {
            steps_completed: durations.len(),
            failed_attempts,
            busy_ms: (busy_ms * 1000.0).round() / 1000.0,
            mean_step_ms: (!durations.is_empty())
                .then(|| (busy_ms / durations.len() as f64 * 1000.0).round() / 1000.0),
            max_step_ms: durations.iter().copied().reduce(f64::max),
            findings_reported: reported,
            findings_deduplicated: reported.saturating_sub(new),
            llm_passes: sum(|s| s.usage.llm_passes),
            input_tokens: sum(|s| s.usage.input_tokens),
            output_tokens: sum(|s| s.usage.output_tokens),
            cost_usd: steps.iter().map(|s| s.usage.cost_usd).sum(),
            cache_hits: sum(|s| s.usage.cache_hits),
        },
        steps: steps
            .into_iter()
            .map(|s| StepTelemetry {
                index: s.idx,
                kind: s.kind,
                files: s.files,
                changed_lines: s.changed_lines,
                state: s.state,
                attempts: s.attempts,
                last_error: s.last_error,
                worker: s.worker,
                started_at: s.started_at.map(rfc3339),
                finished_at: s.finished_at.map(rfc3339),
                duration_ms: s.duration_ms,
                findings_reported: s.findings_reported,
                findings_new: s.findings_new,
                llm_passes: s.usage.llm_passes,
                input_tokens: s.usage.input_tokens,
                output_tokens: s.usage.output_tokens,
                cost_usd: s.usage.cost_usd,
                cache_hits: s.usage.cache_hits,
            })
            .collect(),
    })
}

/// Time per changed line of the finished file steps × the lines left, spread over the workers.
/// The `pr` step covers every line but runs only two cheap rules, so it is left out of the rate.
fn eta_ms(steps: &[StepRecord], max_workers: u32) -> Option<u64> {
    let files_steps = steps.iter().filter(|s| s.kind != "pr");
    let (done_ms, done_lines) = files_steps
        .clone()
        .filter(|s| s.state == StepState::Completed)
        .filter_map(|s| Some((s.duration_ms?, s.changed_lines + 1)))
        .fold((0.0, 0u64), |(t, l), (d, n)| (t + d, l + n));
    if done_lines == 0 {
        return None;
    }
    let left: Vec<&StepRecord> = files_steps
        .filter(|s| s.state != StepState::Completed)
        .collect();
    let left_lines: u64 = left.iter().map(|s| s.changed_lines + 1).sum();
    let parallel = (max_workers.max(1) as usize).min(left.len().max(1)) as f64;
    Some((done_ms / done_lines as f64 * left_lines as f64 / parallel).round() as u64)
}

fn load(store: &Store, id: &str) -> Result<SessionRecord, SessionError> {
    store
        .snapshot(|tx| tx.session(id))?
        .ok_or_else(|| SessionError::NotFound { id: id.to_string() })
}

fn rfc3339(unix_ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_ms) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
