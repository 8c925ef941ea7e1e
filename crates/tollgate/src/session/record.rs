//! A review session as the store keeps it: its state, its steps and their states, the lease of
//! the worker running it, its findings. Plain values: the session repository
//! (`store::SessionWrites`) reads and writes them, the `session` module decides with them.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a session is in its life. `Completed`, `Failed` and `Cancelled` are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Created; no worker has started it yet.
    Queued,
    Running,
    /// No new steps start; a resume continues with the unfinished ones.
    Paused,
    Completed,
    Failed,
    Cancelled,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Queued => "queued",
            SessionState::Running => "running",
            SessionState::Paused => "paused",
            SessionState::Completed => "completed",
            SessionState::Failed => "failed",
            SessionState::Cancelled => "cancelled",
        }
    }

    /// No transition leaves this state.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            SessionState::Completed | SessionState::Failed | SessionState::Cancelled
        )
    }
}

impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SessionState {
    type Err = String;

    fn from_str(text: &str) -> Result<SessionState, String> {
        [
            SessionState::Queued,
            SessionState::Running,
            SessionState::Paused,
            SessionState::Completed,
            SessionState::Failed,
            SessionState::Cancelled,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
        .ok_or_else(|| format!("unknown session state `{text}`"))
    }
}

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    /// Not started, or waiting for a retry (`next_attempt_at`).
    Pending,
    Running,
    Completed,
    /// Failed on its last allowed attempt.
    Failed,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Pending => "pending",
            StepState::Running => "running",
            StepState::Completed => "completed",
            StepState::Failed => "failed",
        }
    }
}

impl FromStr for StepState {
    type Err = String;

    fn from_str(text: &str) -> Result<StepState, String> {
        [
            StepState::Pending,
            StepState::Running,
            StepState::Completed,
            StepState::Failed,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
        .ok_or_else(|| format!("unknown step state `{text}`"))
    }
}

/// A session to create, with its planned steps.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub commit_hash: String,
    pub base_ref: String,
    pub base_sha: String,
    pub head_sha: String,
    pub title: Option<String>,
    pub author: Option<String>,
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
    pub changed_files: Vec<String>,
    pub max_workers: u32,
    pub max_attempts: u32,
    pub warnings: Vec<String>,
    pub steps: Vec<NewStep>,
    pub now: i64,
}

/// A planned step: what it reviews.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewStep {
    /// `pr` (whole-PR checks) or `files` (the full pipeline on some files).
    pub kind: String,
    pub files: Vec<String>,
    pub changed_lines: u64,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub id: String,
    pub commit_hash: String,
    pub base_ref: String,
    pub base_sha: String,
    pub head_sha: String,
    pub title: Option<String>,
    pub author: Option<String>,
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
    pub changed_files: Vec<String>,
    pub max_workers: u32,
    pub max_attempts: u32,
    pub state: SessionState,
    /// Why the session failed, was paused by the system, or was cancelled.
    pub reason: Option<String>,
    pub warnings: Vec<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub last_activity_at: i64,
    /// Wall time some process spent running the session (summed over runs).
    pub active_ms: i64,
    pub lease: Option<LeaseRecord>,
}

/// Who runs a session, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRecord {
    pub token: String,
    pub pid: u32,
    /// The boot the owner runs in (Linux boot id), so a pid is only checked on the same machine.
    pub boot: Option<String>,
    pub heartbeat_at: i64,
}

/// A stored step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    pub idx: u32,
    pub kind: String,
    pub files: Vec<String>,
    pub changed_lines: u64,
    pub state: StepState,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub next_attempt_at: i64,
    pub worker: Option<u32>,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub duration_ms: Option<f64>,
    pub findings_reported: Option<u64>,
    pub findings_new: Option<u64>,
    pub usage: StepUsage,
    /// The gate's fail reasons for a completed step (empty: it passed); `None` before then.
    pub gate_reasons: Option<Vec<String>>,
}

/// What a step's model passes used (all zero when no model pass ran).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepUsage {
    pub llm_passes: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub cache_hits: u64,
}

/// A finding to store: its fingerprint, severity and JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingRow {
    pub fingerprint: String,
    pub severity: String,
    pub json: String,
}

/// A stored finding with the step that reported it first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFinding {
    pub step_idx: u32,
    pub fingerprint: String,
    pub severity: String,
    pub json: String,
}

/// The outcome of a checked state change.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    Done(Box<SessionRecord>),
    NotFound,
    /// The session is in a state the change cannot start from.
    Refused(SessionState),
}

/// The outcome of taking a session's lease.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// The caller now runs the session (its state is `running`).
    Claimed(Box<SessionRecord>),
    /// A live process already runs it; nothing changed (besides a resume's state).
    Owned {
        pid: u32,
    },
    NotFound,
    Refused(SessionState),
}

/// A lease the caller holds or wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub token: String,
    pub pid: u32,
    pub boot: Option<String>,
}
