//! Watching and stopping long work: the work reports progress and checks for a stop request at
//! points where stopping is safe; the caller (the MCP server, the CLI's progress bar) reads the
//! progress and may ask it to stop.
//!
//! Cancellation is cooperative: nothing is interrupted mid-write, so whatever the work stores
//! stays consistent; it returns at its next check.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A handle shared by the caller and the work. Cloning shares it; `Control::default()` is a
/// handle nobody watches, for callers that do not care.
#[derive(Debug, Clone, Default)]
pub struct Control {
    inner: Arc<Inner>,
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
        self.inner.cancelled.load(Ordering::SeqCst)
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
}
