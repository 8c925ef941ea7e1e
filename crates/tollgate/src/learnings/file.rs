//! The ledger in a working tree: read it, append to it, and the evidence of code in it. Every
//! path goes through [`Workspace`], so nothing outside the root is read or written.

use std::path::Path;

use crate::learnings::{LEDGER_FILE, Learnings, LearningsError, Ledger, MAX_LEDGER_BYTES, Record};
use crate::workspace::{PathError, RepoPath, Workspace};

/// Source files larger than this give no evidence (the anchored line stands in).
pub const MAX_CODE_BYTES: u64 = 4 * 1024 * 1024;

/// The workspace's ledger; empty when there is none.
pub fn load(workspace: &Path) -> Result<Ledger, LearningsError> {
    match read_text(workspace)? {
        Some(text) => Ledger::parse(&text, LEDGER_FILE),
        None => Ok(Ledger::default()),
    }
}

/// The text of the workspace's ledger, `None` when there is none.
pub fn read_text(workspace: &Path) -> Result<Option<String>, LearningsError> {
    let root = open(workspace)?;
    let path = ledger_path();
    match root.read(&path, MAX_LEDGER_BYTES) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| LearningsError::Parse {
                path: LEDGER_FILE.to_string(),
                line: 1,
                message: "the file is not valid UTF-8".to_string(),
            }),
        Err(PathError::NotFound { .. }) => Ok(None),
        Err(err) => Err(LearningsError::Read {
            path: LEDGER_FILE.to_string(),
            message: err.to_string(),
        }),
    }
}

/// Appends `record` to the workspace's ledger (validated first; the existing file must parse,
/// so a broken ledger is never extended) and returns how many records it now holds. The file
/// is replaced atomically, and the read-append-replace runs under an exclusive lock on
/// `.tollgate/learnings.lock`, so concurrent writers (threads or processes) each add their
/// record: every success is a record in the file.
pub fn append(workspace: &Path, record: Record) -> Result<usize, LearningsError> {
    record
        .validate()
        .map_err(|invalid| LearningsError::Invalid {
            message: invalid.to_string(),
        })?;
    let _lock = LedgerLock::acquire(&open(workspace)?)?;
    let mut ledger = load(workspace)?;
    ledger.push(record);
    open(workspace)?
        .write(&ledger_path(), ledger.to_text().as_bytes())
        .map_err(|err| LearningsError::Read {
            path: LEDGER_FILE.to_string(),
            message: err.to_string(),
        })?;
    Ok(ledger.len())
}

/// The evidence of lines `start..=end` of `path` in the working tree, `None` when the file or
/// the lines are not there.
pub fn evidence_in_workspace(workspace: &Path, path: &str, start: u32, end: u32) -> Option<String> {
    let root = Workspace::new(workspace).ok()?;
    let bytes = root.read(&RepoPath::new(path).ok()?, MAX_CODE_BYTES).ok()?;
    Learnings::evidence_of_text(&String::from_utf8_lossy(&bytes), start, end)
}

/// The writers' exclusive lock on the ledger, released on drop. It is a separate file: the
/// ledger itself is replaced by a rename, so a lock on it would guard a file that is gone.
/// [`append`] holds it, and so does the knowledge store's mirror of the ledger while it syncs
/// (so two first opens do not both add the records).
#[derive(Debug)]
pub struct LedgerLock {
    #[cfg(unix)]
    _flock: nix::fcntl::Flock<std::fs::File>,
}

impl LedgerLock {
    const FILE: &'static str = "learnings.lock";

    /// Waits for the lock of the ledger of `workspace`.
    pub fn of_workspace(workspace: &Path) -> Result<LedgerLock, LearningsError> {
        LedgerLock::acquire(&open(workspace)?)
    }

    fn acquire(root: &Workspace) -> Result<LedgerLock, LearningsError> {
        let failed = |message: String| LearningsError::Read {
            path: format!("{}/{}", crate::workspace::STATE_DIR, LedgerLock::FILE),
            message,
        };
        let dir = root
            .create_state_dir("")
            .map_err(|err| failed(err.to_string()))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LedgerLock::FILE))
            .map_err(|err| failed(err.to_string()))?;
        LedgerLock::lock(file).map_err(failed)
    }

    /// Blocks until no other writer holds the lock.
    #[cfg(unix)]
    fn lock(file: std::fs::File) -> Result<LedgerLock, String> {
        use nix::fcntl::{Flock, FlockArg};
        Flock::lock(file, FlockArg::LockExclusive)
            .map(|flock| LedgerLock { _flock: flock })
            .map_err(|(_, errno)| std::io::Error::from(errno).to_string())
    }

    /// Without `flock`, writers in other processes are not kept apart.
    #[cfg(not(unix))]
    fn lock(_file: std::fs::File) -> Result<LedgerLock, String> {
        Ok(LedgerLock {})
    }
}

fn open(workspace: &Path) -> Result<Workspace, LearningsError> {
    Workspace::new(workspace).map_err(|err| LearningsError::Read {
        path: workspace.display().to_string(),
        message: err.to_string(),
    })
}

fn ledger_path() -> RepoPath {
    RepoPath::new(LEDGER_FILE).expect("the ledger's name is a valid repository path")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learnings::Disposition;

    fn record(n: usize) -> Record {
        Record {
            fingerprint: format!("fp{n}"),
            rule_id: "TG003".to_string(),
            path: "src/a.rs".to_string(),
            scope: None,
            disposition: Disposition::Dismissed,
            reason: format!("reason {n}"),
            by: "alice".to_string(),
            at: "2026-01-01T00:00:00Z".to_string(),
            evidence: None,
        }
    }

    #[test]
    fn concurrent_appends_lose_no_record() {
        let dir = tempfile::tempdir().unwrap();
        const THREADS: usize = 16;
        const ROUNDS: usize = 10;
        let failures: Vec<String> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let root = dir.path();
                    scope.spawn(move || {
                        (0..ROUNDS)
                            .filter_map(|r| append(root, record(t * ROUNDS + r)).err())
                            .map(|err| err.to_string())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| worker.join().unwrap())
                .collect()
        });
        assert!(failures.is_empty(), "appends failed: {failures:?}");
        let ledger = load(dir.path()).unwrap();
        let mut kept: Vec<&str> = ledger
            .records()
            .iter()
            .map(|r| r.fingerprint.as_str())
            .collect();
        kept.sort_unstable();
        kept.dedup();
        assert_eq!(kept.len(), THREADS * ROUNDS, "every success is a record");
        assert_eq!(ledger.len(), THREADS * ROUNDS);
    }
}
