//! Watching and stopping long work: the work reports progress and checks for a stop request at
//! points where stopping is safe; the caller (the MCP server, the CLI's progress bar) reads the
//! progress and may ask it to stop.
//!
//! Cancellation is cooperative: nothing is interrupted mid-write, so whatever the work stores
//! stays consistent; it returns at its next check.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A handle shared by the caller and the work. Cloning shares it; `Control::default()` is a
/// handle nobody watches, for callers that do not care.
#[derive(Debug, Clone, Default)]
pub struct Control {
    inner: Arc<Inner>,
    deadline: Option<Arc<Deadline>>,
}

/// A time after which a [`Control`] counts as cancelled, and whether a check saw that happen.
#[derive(Debug)]
struct Deadline {
    at: Instant,
    hit: AtomicBool,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    /// Bumped on every report, so a watcher can tell a new report from the one it has seen.
    reports: AtomicU64,
    latest: Mutex<Option<Progress>>,
}

/// How far the work has come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    /// `None` while the total is not known yet.
    pub total: Option<u64>,
    pub message: String,
}

/// The work stopped because it was asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    /// Asks the work to stop at its next check.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        if self.inner.cancelled.load(Ordering::SeqCst) {
            return true;
        }
        match &self.deadline {
            Some(deadline) if Instant::now() >= deadline.at => {
                deadline.hit.store(true, Ordering::SeqCst);
                true
            }
            _ => false,
        }
    }

    /// A handle that shares this one's cancellation and progress, and also counts as cancelled
    /// from `at` on (a time budget). Cancelling it cancels this one too.
    pub fn with_deadline(&self, at: Instant) -> Control {
        Control {
            inner: Arc::clone(&self.inner),
            deadline: Some(Arc::new(Deadline {
                at,
                hit: AtomicBool::new(false),
            })),
        }
    }

    /// Whether a check found the deadline passed, so that some work was stopped or skipped
    /// for it (a deadline that passes after the last check stopped nothing).
    pub fn deadline_hit(&self) -> bool {
        self.deadline
            .as_ref()
            .is_some_and(|deadline| deadline.hit.load(Ordering::SeqCst))
    }

    /// `Err(Cancelled)` once a stop was asked for: `control.check()?` at safe points.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Records how far the work has come.
    pub fn report(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        let progress = Progress {
            done,
            total,
            message: message.into(),
        };
        *self
            .inner
            .latest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(progress);
        self.inner.reports.fetch_add(1, Ordering::SeqCst);
    }

    /// The latest report with its sequence number (which grows with every report), if any.
    pub fn latest(&self) -> Option<(u64, Progress)> {
        let seq = self.inner.reports.load(Ordering::SeqCst);
        let latest = self
            .inner
            .latest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()?;
        Some((seq, latest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_cancellation_and_progress() {
        let caller = Control::new();
        let work = caller.clone();
        assert_eq!(work.check(), Ok(()));
        assert_eq!(caller.latest(), None);
        work.report(3, Some(10), "indexing");
        let (first, progress) = caller.latest().unwrap();
        assert_eq!((progress.done, progress.total), (3, Some(10)));
        work.report(4, Some(10), "indexing");
        assert!(caller.latest().unwrap().0 > first);
        caller.cancel();
        assert_eq!(work.check(), Err(Cancelled));
    }

    #[test]
    fn a_deadline_cancels_once_passed_and_records_that_a_check_saw_it() {
        let caller = Control::new();
        let far = caller.with_deadline(Instant::now() + std::time::Duration::from_secs(3600));
        assert!(!far.is_cancelled() && !far.deadline_hit());
        let passed = caller.with_deadline(Instant::now());
        assert!(!passed.deadline_hit(), "nothing checked yet");
        assert_eq!(passed.check(), Err(Cancelled));
        assert!(passed.deadline_hit());
        // The deadline is the clone's own; the caller is not cancelled by it.
        assert!(!caller.is_cancelled());
        caller.cancel();
        assert!(far.is_cancelled() && !far.deadline_hit());
    }
}
