//! Reactive pull-request review sessions: a whole PR reviewed in steps on a bounded worker pool,
//! stored as it goes, so a caller can start it, go on with other work, poll, pause, resume or
//! cancel it, from this process or another.
//!
//! - [`create`] pins the PR's commits (the merge base of `base_ref` and `commit_hash`, and the
//!   head), splits its changed files into steps balanced by changed lines, stores the session
//!   (`queued`) and returns its id at once.
//! - [`claim`] (or [`resume`]) takes the session's lease and [`drive`] runs it: each step is the
//!   real review pipeline on its part of the diff; its findings are stored with the step,
//!   deduplicated across steps by fingerprint. A failed step is retried with exponential backoff
//!   up to a limit; then the session fails with the step's reason.
//! - [`status`], [`telemetry`], [`pause`], [`cancel`] act through the store, so another process
//!   can act on a session: the one running it polls the session's state between steps.
//!
//! A session survives its process: steps are recorded as they finish, and a session whose
//! owner stopped heartbeating (or whose pid is gone) is marked `paused` with the reason by the
//! next [`status`], [`resume`] or [`create`]; resuming runs only its unfinished steps.
//! Finished sessions are deleted after [`SessionSettings::retention`].

mod executor;
mod lease;
pub(crate) mod record;
mod runner;
mod split;
mod status;

pub use record::{
    Claim, FindingRow, Lease, LeaseRecord, NewSession, NewStep, SessionRecord, SessionState,
    StepRecord, StepState, StepUsage, StoredFinding, Transition,
};
pub use runner::{ClaimedSession, Resumed, StepEvent, drive};
pub use split::StepLimits;
pub use status::{
    FindingCounts, GateState, GateVerdict, MAX_GATE_REASONS, Progress, SessionStatus,
    SessionTelemetry, StepTelemetry, TelemetryTotals, WorkerInfo,
};

use crate::ErrorCode;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

use crate::diff::{self, DiffSpec, GitError};
use crate::store::{Store, StoreError};

/// Tunables of sessions. [`SessionSettings::default`] holds the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSettings {
    /// How big a step may get.
    pub step_limits: StepLimits,
    /// Workers when the request names none (upstream's default, 3).
    pub default_max_workers: u32,
    /// Attempts per step before the session fails.
    pub max_attempts: u32,
    /// Wait before the second attempt; doubled for each further one, up to `retry_max_delay`.
    pub retry_base_delay: Duration,
    pub retry_max_delay: Duration,
    /// An owner whose heartbeat is older than this is dead.
    pub lease: Duration,
    /// How often the running process renews its lease.
    pub heartbeat: Duration,
    /// How often the running process looks for pause/cancel requests and finished steps.
    pub poll: Duration,
    /// A running session with no activity for this long `appears_stalled` (upstream: 2 min).
    pub stall_after: Duration,
    /// Finished sessions (and their findings) are deleted this long after they ended.
    pub retention: Duration,
}

impl Default for SessionSettings {
    fn default() -> SessionSettings {
        SessionSettings {
            step_limits: StepLimits {
                max_files: 10,
                max_lines: 400,
            },
            default_max_workers: 3,
            max_attempts: 3,
            retry_base_delay: Duration::from_millis(500),
            retry_max_delay: Duration::from_secs(30),
            lease: Duration::from_secs(15),
            heartbeat: Duration::from_secs(2),
            poll: Duration::from_millis(100),
            stall_after: Duration::from_secs(120),
            retention: Duration::from_secs(3600),
        }
    }
}

/// Why a session operation could not be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error("No review session `{id}` (finished sessions are deleted after their retention time)")]
    NotFound { id: String },
    #[error("Cannot {action} review session `{id}`: it is {state}{hint}")]
    InvalidTransition {
        id: String,
        action: &'static str,
        state: SessionState,
        hint: &'static str,
    },
    #[error("Review session `{id}` is already being run by process {pid}")]
    Busy { id: String, pid: u32 },
    #[error("Invalid `{field}`: {message}")]
    InvalidInput {
        field: &'static str,
        message: String,
    },
    #[error("Cannot read the pull request's diff: {0}")]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("This process lost the lease of review session `{id}` (another process took it over)")]
    LeaseLost { id: String },
}

impl SessionError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            SessionError::NotFound { .. } => ErrorCode::SessionNotFound,
            SessionError::InvalidTransition { .. } => ErrorCode::InvalidStateTransition,
            SessionError::Busy { .. } => ErrorCode::SessionBusy,
            SessionError::InvalidInput { .. } => ErrorCode::InvalidInput,
            SessionError::Git(
                GitError::UnknownRevision { .. }
                | GitError::InvalidRevision { .. }
                | GitError::NoMergeBase { .. },
            ) => ErrorCode::InvalidInput,
            SessionError::Git(_) | SessionError::LeaseLost { .. } => ErrorCode::ExecutionFailed,
            SessionError::Store(err) => err.code(),
        }
    }

    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            SessionError::InvalidInput { field, .. } => Some(field),
            SessionError::NotFound { .. } => Some("session_id"),
            _ => None,
        }
    }
}

/// A pull request to review in a session: `api::session::ReactiveReviewPrRequest` validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub commit_hash: String,
    pub base_ref: String,
    pub changed_files: Vec<String>,
    pub title: Option<String>,
    pub author: Option<String>,
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
    pub max_workers: u32,
}

/// Output of `reactive_review_pr`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReactiveReviewPrResponse {
    pub session_id: String,
    pub status: SessionState,
    /// Steps planned: one whole-PR step plus the file groups.
    pub total_steps: usize,
    pub max_workers: u32,
    /// The merge base the review starts from.
    pub base_sha: String,
    /// The head commit reviewed.
    pub head_sha: String,
    pub warnings: Vec<String>,
}

/// Output of `pause_review`, `resume_review` and `cancel_review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TransitionResponse {
    pub session_id: String,
    pub status: SessionState,
    pub message: String,
}

/// Creates a session for the pull request `valid` describes in the repository at
/// `workspace` and returns at once; the session is `queued` until [`claim`] + [`drive`] run it.
pub fn create(
    store: &Store,
    workspace: &Path,
    valid: PullRequest,
    settings: &SessionSettings,
) -> Result<ReactiveReviewPrResponse, SessionError> {
    let now = now_ms();
    housekeeping(store, settings, now)?;
    let git = diff::diff_from_repo(
        workspace,
        &DiffSpec::Range {
            base: valid.base_ref.clone(),
            head: valid.commit_hash.clone(),
        },
    )?;
    let (Some(base_sha), Some(head_sha)) = (git.base_sha, git.head_sha) else {
        return Err(SessionError::InvalidInput {
            field: "commit_hash",
            message: "git gave no commits for the range".to_string(),
        });
    };
    let mut warnings = Vec::new();
    let mut files = Vec::new();
    for path in &valid.changed_files {
        let found = git.diff.files().iter().find(|file| {
            file.new_path.as_deref() == Some(path.as_str())
                || file.old_path.as_deref() == Some(path.as_str())
        });
        match found {
            Some(file) => {
                let (added, removed) = file.line_counts();
                files.push((path.clone(), (added + removed) as u64));
            }
            None => warnings.push(format!(
                "`{path}` is not changed between {} and {}; it was left out",
                valid.base_ref, valid.commit_hash
            )),
        }
    }
    if files.is_empty() {
        return Err(SessionError::InvalidInput {
            field: "changed_files",
            message: format!(
                "none of the {} changed_files is changed between `{}` (merge base {}) and `{}`",
                valid.changed_files.len(),
                valid.base_ref,
                short(&base_sha),
                valid.commit_hash
            ),
        });
    }
    let total_lines: u64 = files.iter().map(|(_, n)| n).sum();
    let mut steps = vec![NewStep {
        kind: executor::KIND_PR.to_string(),
        files: files.iter().map(|(p, _)| p.clone()).collect(),
        changed_lines: total_lines,
    }];
    steps.extend(
        split::split(&files, settings.step_limits)
            .into_iter()
            .map(|group| NewStep {
                kind: executor::KIND_FILES.to_string(),
                files: group.files,
                changed_lines: group.changed_lines,
            }),
    );
    let id = format!("rs_{now}_{}", &crate::ids::random_hex()[..8]);
    let total_steps = steps.len();
    store.transact(|tx| {
        tx.session_insert(&NewSession {
            id: id.clone(),
            commit_hash: valid.commit_hash,
            base_ref: valid.base_ref,
            base_sha: base_sha.clone(),
            head_sha: head_sha.clone(),
            title: valid.title,
            author: valid.author,
            additions: valid.additions,
            deletions: valid.deletions,
            changed_files: files.iter().map(|(p, _)| p.clone()).collect(),
            max_workers: valid.max_workers,
            max_attempts: settings.max_attempts,
            warnings: warnings.clone(),
            steps,
            now,
        })
    })?;
    Ok(ReactiveReviewPrResponse {
        session_id: id,
        status: SessionState::Queued,
        total_steps,
        max_workers: valid.max_workers,
        base_sha,
        head_sha,
        warnings,
    })
}

/// Takes the lease of a `queued` session (or of one whose owner died) to run it with [`drive`].
pub fn claim(
    store: &Store,
    id: &str,
    settings: &SessionSettings,
) -> Result<ClaimedSession, SessionError> {
    let now = now_ms();
    let lease = lease::new_lease();
    let lease_ms = ms(settings.lease);
    let dead = |owner: &LeaseRecord| lease::is_dead(owner, now, lease_ms);
    match store.transact(|tx| tx.session_claim(id, &lease, now, &dead))? {
        Claim::Claimed(_) => Ok(ClaimedSession::new(id, lease)),
        Claim::Owned { pid } => Err(SessionError::Busy {
            id: id.to_string(),
            pid,
        }),
        Claim::NotFound => Err(not_found(id)),
        Claim::Refused(state) => Err(refused(id, "start", state)),
    }
}

/// Resumes a paused session. When the process that ran it is still winding down it carries on
/// ([`Resumed::ByOwner`]); otherwise the caller holds the lease and must [`drive`] it.
pub fn resume(
    store: &Store,
    id: &str,
    settings: &SessionSettings,
) -> Result<Resumed, SessionError> {
    let now = now_ms();
    housekeeping(store, settings, now)?;
    let lease = lease::new_lease();
    let lease_ms = ms(settings.lease);
    let dead = |owner: &LeaseRecord| lease::is_dead(owner, now, lease_ms);
    match store.transact(|tx| tx.session_resume(id, &lease, now, &dead))? {
        Claim::Claimed(_) => Ok(Resumed::Claimed(ClaimedSession::new(id, lease))),
        Claim::Owned { pid } => Ok(Resumed::ByOwner { pid }),
        Claim::NotFound => Err(not_found(id)),
        Claim::Refused(state) => Err(refused(id, "resume", state)),
    }
}

/// Pauses a queued or running session: running steps finish, no new step starts.
pub fn pause(store: &Store, id: &str) -> Result<TransitionResponse, SessionError> {
    transition(
        store,
        id,
        "pause",
        &[SessionState::Queued, SessionState::Running],
        SessionState::Paused,
        Some("paused on request"),
    )
}

/// Cancels a session that has not ended: no new step starts; steps already running finish and
/// their findings are kept.
pub fn cancel(store: &Store, id: &str) -> Result<TransitionResponse, SessionError> {
    transition(
        store,
        id,
        "cancel",
        &[
            SessionState::Queued,
            SessionState::Running,
            SessionState::Paused,
        ],
        SessionState::Cancelled,
        Some("cancelled on request"),
    )
}

/// The session's state, progress, findings so far and liveness.
pub fn status(
    store: &Store,
    id: &str,
    include_findings: bool,
    settings: &SessionSettings,
) -> Result<SessionStatus, SessionError> {
    let now = now_ms();
    housekeeping(store, settings, now)?;
    status::status(store, id, include_findings, settings, now)
}

/// Per-step timings, model usage, retries and worker utilisation.
pub fn telemetry(
    store: &Store,
    id: &str,
    settings: &SessionSettings,
) -> Result<SessionTelemetry, SessionError> {
    let now = now_ms();
    housekeeping(store, settings, now)?;
    status::telemetry(store, id, now)
}

/// Marks sessions whose owner died, and deletes finished sessions past their retention.
fn housekeeping(store: &Store, settings: &SessionSettings, now: i64) -> Result<(), StoreError> {
    let lease_ms = ms(settings.lease);
    let dead = |owner: &LeaseRecord| lease::is_dead(owner, now, lease_ms);
    let reaped = store.transact(|tx| tx.session_reap(now, lease_ms, &dead))?;
    for id in reaped {
        tracing::warn!(session = %id, "review session's worker died; the session is paused");
    }
    store.transact(|tx| tx.session_expire(now - ms(settings.retention)))?;
    Ok(())
}

fn transition(
    store: &Store,
    id: &str,
    action: &'static str,
    from: &[SessionState],
    to: SessionState,
    reason: Option<&str>,
) -> Result<TransitionResponse, SessionError> {
    match store.transact(|tx| tx.session_transition(id, from, to, reason, now_ms()))? {
        Transition::Done(session) => Ok(TransitionResponse {
            session_id: session.id,
            status: session.state,
            message: match to {
                SessionState::Paused => {
                    "paused: steps already running finish, no new step starts".to_string()
                }
                SessionState::Cancelled => {
                    "cancelled: no new step starts; findings so far are kept".to_string()
                }
                _ => to.to_string(),
            },
        }),
        Transition::NotFound => Err(not_found(id)),
        Transition::Refused(state) => Err(refused(id, action, state)),
    }
}

fn not_found(id: &str) -> SessionError {
    SessionError::NotFound { id: id.to_string() }
}

fn refused(id: &str, action: &'static str, state: SessionState) -> SessionError {
    let hint = match (action, state) {
        (_, SessionState::Completed | SessionState::Failed | SessionState::Cancelled) => {
            " (a session that ended cannot change state; start a new session)"
        }
        ("pause", SessionState::Paused) => " already",
        ("resume", SessionState::Running) => " already",
        ("resume", SessionState::Queued) => " (it has not started yet; it starts by itself)",
        ("start", SessionState::Paused) => " (resume it instead)",
        _ => "",
    };
    SessionError::InvalidTransition {
        id: id.to_string(),
        action,
        state,
        hint,
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

pub(crate) fn now_ms() -> i64 {
    i64::try_from(time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000)
        .unwrap_or(i64::MAX)
}

pub(crate) fn ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
