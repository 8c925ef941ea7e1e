//! Running a claimed session: a coordinator loop on the calling thread and at most
//! `max_workers` step threads at a time.
//!
//! The coordinator renews the lease, reads the session's state (another process may have paused
//! or cancelled it), starts steps whose retry time has come while workers are free, and records
//! each finished step in one transaction. It never holds a step's result in memory past that
//! write, so killing the process loses at most the steps that were running.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::config::ReviewConfig;
use crate::diff::{self, DiffSpec};
use crate::findings::Finding;
use crate::session::executor::{PipelineExecutor, StepExecutor, StepReport};
use crate::session::record::{FindingRow, Lease, SessionRecord, StepRecord, StepState};
use crate::session::{SessionError, SessionSettings, SessionState, SessionStatus, ms, now_ms};
use crate::store::Store;

/// A session whose lease this process holds: hand it to [`drive`]. Dropping it without driving
/// leaves the lease to expire, after which the session is marked paused.
#[derive(Debug)]
pub struct ClaimedSession {
    id: String,
    lease: Lease,
}

impl ClaimedSession {
    pub(crate) fn new(id: &str, lease: Lease) -> ClaimedSession {
        ClaimedSession {
            id: id.to_string(),
            lease,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    #[cfg(test)]
    pub(crate) fn lease_token(&self) -> &str {
        &self.lease.token
    }
}

/// What [`crate::session::resume`] did.
#[derive(Debug)]
pub enum Resumed {
    /// The process still running the session carries on; nothing to drive here.
    ByOwner { pid: u32 },
    /// This process holds the lease now and must [`drive`] the session.
    Claimed(ClaimedSession),
}

/// A step ended (reported to the caller's observer, e.g. a progress bar).
#[derive(Debug, Clone, PartialEq)]
pub struct StepEvent {
    pub step_index: u32,
    pub completed_steps: usize,
    pub total_steps: usize,
    /// `None` when the step succeeded; the error of a failed attempt otherwise.
    pub error: Option<String>,
    pub will_retry: bool,
    pub findings_new: u64,
}

/// Runs a claimed session until it completes, fails, or is paused or cancelled (by anyone), and
/// returns its status. Each step runs the review pipeline with `config` on its part of the
/// session's pinned diff.
pub fn drive(
    store: &Store,
    workspace: &Path,
    config: &ReviewConfig,
    claimed: ClaimedSession,
    settings: &SessionSettings,
    observer: &(dyn Fn(&StepEvent) + Sync),
) -> Result<SessionStatus, SessionError> {
    let session = store
        .snapshot(|tx| tx.session(&claimed.id))?
        .ok_or_else(|| SessionError::NotFound {
            id: claimed.id.clone(),
        })?;
    let diff = diff::diff_from_repo(
        workspace,
        &DiffSpec::Range {
            base: session.base_sha.clone(),
            head: session.head_sha.clone(),
        },
    );
    let diff = match diff {
        Ok(git) => git.diff,
        Err(err) => {
            // The pinned commits are gone (a force-push and gc, another clone): nothing to
            // retry, the session fails with the reason.
            let reason = format!(
                "cannot read the diff {}..{}: {err}",
                session.base_sha, session.head_sha
            );
            store.transact(|tx| {
                tx.session_transition(
                    &claimed.id,
                    &[SessionState::Running, SessionState::Paused],
                    SessionState::Failed,
                    Some(&reason),
                    now_ms(),
                )
            })?;
            store.transact(|tx| {
                tx.session_release(&claimed.id, &claimed.lease.token, now_ms(), 0)
            })?;
            return crate::session::status::status(store, &claimed.id, false, settings, now_ms());
        }
    };
    let executor = PipelineExecutor::new(workspace, &session.base_sha, diff, config);
    drive_with(store, &claimed, &executor, settings, observer)?;
    crate::session::status::status(store, &claimed.id, false, settings, now_ms())
}

/// The coordinator loop over any executor.
pub(crate) fn drive_with(
    store: &Store,
    claimed: &ClaimedSession,
    executor: &dyn StepExecutor,
    settings: &SessionSettings,
    observer: &(dyn Fn(&StepEvent) + Sync),
) -> Result<SessionState, SessionError> {
    let id = claimed.id.as_str();
    let token = claimed.lease.token.as_str();
    let lost = || SessionError::LeaseLost { id: id.to_string() };
    let mut session = store
        .snapshot(|tx| tx.session(id))?
        .ok_or_else(|| SessionError::NotFound { id: id.to_string() })?;
    let max_workers = session.max_workers.max(1);
    let mut accounted = Instant::now();
    let mut last_heartbeat = Instant::now();
    let take_active = |accounted: &mut Instant| {
        let delta = ms(accounted.elapsed());
        *accounted = Instant::now();
        delta
    };

    std::thread::scope(|scope| -> Result<SessionState, SessionError> {
        let (done_tx, done_rx) =
            mpsc::channel::<(StepRecord, u32, Duration, Result<StepReport, String>)>();
        // step index → worker slot
        let mut in_flight: BTreeMap<u32, u32> = BTreeMap::new();
        let mut lease_lost = false;
        loop {
            if !lease_lost {
                if last_heartbeat.elapsed() >= settings.heartbeat {
                    last_heartbeat = Instant::now();
                    match store.transact(|tx| {
                        tx.session_heartbeat(id, token, now_ms(), take_active(&mut accounted))
                    })? {
                        Some(fresh) => session = fresh,
                        None => lease_lost = true,
                    }
                } else {
                    match store.snapshot(|tx| tx.session(id))? {
                        Some(fresh) if fresh.lease.as_ref().is_some_and(|l| l.token == token) => {
                            session = fresh
                        }
                        _ => lease_lost = true,
                    }
                }
            }
            if lease_lost {
                // Someone else runs the session now (we were thought dead): let our running
                // steps end (their results are refused) and leave.
                if in_flight.is_empty() {
                    return Err(lost());
                }
            } else if session.state == SessionState::Running {
                let steps = store.snapshot(|tx| tx.session_steps(id))?;
                if steps.iter().all(|s| s.state == StepState::Completed) && in_flight.is_empty() {
                    if store.transact(|tx| tx.session_complete(id, token, now_ms()))? {
                        store.transact(|tx| {
                            tx.session_release(id, token, now_ms(), take_active(&mut accounted))
                        })?;
                        return Ok(SessionState::Completed);
                    }
                    continue;
                }
                let now = now_ms();
                let ready: Vec<&StepRecord> = steps
                    .iter()
                    .filter(|s| {
                        s.state == StepState::Pending
                            && s.next_attempt_at <= now
                            && !in_flight.contains_key(&s.idx)
                    })
                    .collect();
                for step in ready {
                    if in_flight.len() >= max_workers as usize {
                        break;
                    }
                    let worker = (0..max_workers)
                        .find(|w| !in_flight.values().any(|busy| busy == w))
                        .unwrap_or(0);
                    if !store.transact(|tx| {
                        tx.session_step_begin(id, step.idx, token, worker, now_ms())
                    })? {
                        break;
                    }
                    in_flight.insert(step.idx, worker);
                    let done_tx = done_tx.clone();
                    let step = step.clone();
                    scope.spawn(move || {
                        let started = Instant::now();
                        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            executor.run(&step)
                        }))
                        .unwrap_or_else(|_| Err("the step panicked".to_string()));
                        let _ = done_tx.send((step, worker, started.elapsed(), result));
                    });
                }
            } else if in_flight.is_empty() {
                // Paused, cancelled or failed, and nothing left running: give the lease up,
                // unless a resume arrived meanwhile.
                if store.transact(|tx| {
                    tx.session_release(id, token, now_ms(), take_active(&mut accounted))
                })? {
                    return Ok(session.state);
                }
                continue;
            }

            match done_rx.recv_timeout(settings.poll) {
                Ok((step, _worker, elapsed, result)) => {
                    in_flight.remove(&step.idx);
                    let event =
                        record(store, id, token, &step, elapsed, result, &session, settings)?;
                    match event {
                        Some(mut event) => {
                            let steps = store.snapshot(|tx| tx.session_steps(id))?;
                            event.completed_steps = steps
                                .iter()
                                .filter(|s| s.state == StepState::Completed)
                                .count();
                            event.total_steps = steps.len();
                            observer(&event);
                        }
                        None => lease_lost = true,
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
        }
    })
}

/// Writes a step's result; `None` when the lease was lost (nothing written).
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one step's outcome"
)]
fn record(
    store: &Store,
    id: &str,
    token: &str,
    step: &StepRecord,
    elapsed: Duration,
    result: Result<StepReport, String>,
    session: &SessionRecord,
    settings: &SessionSettings,
) -> Result<Option<StepEvent>, SessionError> {
    let now = now_ms();
    match result {
        Ok(report) => {
            let rows: Vec<FindingRow> = report.findings.iter().map(finding_row).collect();
            let duration_ms = (elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0;
            let Some(n_new) = store.transact(|tx| {
                tx.session_step_complete(
                    id,
                    step.idx,
                    token,
                    duration_ms,
                    report.usage,
                    &rows,
                    &report.gate_reasons,
                    now,
                )
            })?
            else {
                return Ok(None);
            };
            Ok(Some(StepEvent {
                step_index: step.idx,
                completed_steps: 0,
                total_steps: 0,
                error: None,
                will_retry: false,
                findings_new: n_new,
            }))
        }
        Err(error) => {
            let attempt = step.attempts + 1;
            let will_retry = attempt < session.max_attempts.max(1);
            let retry_at = will_retry.then(|| {
                let factor = 1u32 << (attempt - 1).min(16);
                now + ms(settings
                    .retry_base_delay
                    .saturating_mul(factor)
                    .min(settings.retry_max_delay))
            });
            let reason = if will_retry {
                error.clone()
            } else {
                format!(
                    "step {} ({}) failed after {attempt} attempt(s): {error}",
                    step.idx,
                    preview(&step.files)
                )
            };
            if !store
                .transact(|tx| tx.session_step_fail(id, step.idx, token, &reason, retry_at, now))?
            {
                return Ok(None);
            }
            tracing::warn!(session = %id, step = step.idx, attempt, will_retry, "review step failed: {error}");
            Ok(Some(StepEvent {
                step_index: step.idx,
                completed_steps: 0,
                total_steps: 0,
                error: Some(error),
                will_retry,
                findings_new: 0,
            }))
        }
    }
}

fn finding_row(finding: &Finding) -> FindingRow {
    FindingRow {
        fingerprint: finding.fingerprint.clone(),
        severity: finding.severity.as_str().to_string(),
        json: serde_json::to_string(finding).unwrap_or_else(|_| "{}".to_string()),
    }
}

fn preview(files: &[String]) -> String {
    match files {
        [] => "no files".to_string(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} and {} more", rest.len()),
    }
}
