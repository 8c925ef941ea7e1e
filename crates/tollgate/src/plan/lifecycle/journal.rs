//! The apply journal: a step run that may write files either finishes or is rolled back, even
//! when its process is killed.
//!
//! `execute_plan` opens an entry in the transaction that starts the step ([`begin`]),
//! [`apply::apply_journaled`](crate::plan::lifecycle::apply) records every operation with its backup and the
//! temporary files it may leave before the first write, and the transaction that completes or
//! fails the step closes the entry ([`OpenJournal::close`]). An entry is therefore open exactly
//! while its step runs — or after its process died.
//!
//! Liveness is a lock, not a pid: the owner holds an exclusive `flock` on
//! `.tollgate/journal/<batch>.lock` for the entry's life, and the kernel drops it when the
//! process dies, however it dies. [`recover_interrupted`] takes each open entry's lock without
//! waiting; an entry whose lock it gets is an orphan, and it is rolled back: files restored
//! from their backups (a file edited since the crash is left alone and named), files the run
//! created removed, temporary files removed, the batch marked undone, the step put back in the
//! queue (`fail_step` with retry: failed after the third attempt) with the reason, all recorded
//! in one transaction. Rolling back rather than finishing is deliberate: finishing would need
//! the model's answer, which the store does not keep, and a half-written step was never checked
//! as a whole; the backups make the way back certain. On a platform without `flock` no entry is
//! ever taken for an orphan.

use std::fs::File;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::lifecycle::apply::{self, ApplyError, RollBackMode};
use crate::plan::lifecycle::progress::{FailOption, PlanState, step_status};
use crate::store::apply_journal::{JournalRow, state};
use crate::store::{Store, StoreError, WriteTx};
use crate::workspace::Workspace;

/// Where the lock files live, relative to the workspace.
pub const JOURNAL_DIR: &str = ".tollgate/journal";

/// One interrupted step run that [`recover_interrupted`] rolled back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecoveredApply {
    pub plan_id: String,
    pub step_number: u32,
    /// The interrupted run's change batch.
    pub batch_id: String,
    /// Workspace-relative paths put back as they were before the run.
    pub files_restored: Vec<String>,
    /// Temporary files the run left, removed.
    pub temp_files_removed: Vec<String>,
    /// Files left as they are (edited after the crash, or not restorable), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// The step's status afterwards (`pending`, or `failed` after its last attempt or with
    /// conflicts); `None` when the step was no longer in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_status: Option<String>,
    pub message: String,
}

/// An entry this process opened, and the lock that says it is alive.
#[derive(Debug)]
pub(crate) struct OpenJournal {
    batch_id: String,
    plan_id: String,
    step_number: u32,
    lock: JournalLock,
}

impl OpenJournal {
    pub(crate) fn batch_id(&self) -> &str {
        &self.batch_id
    }

    pub(crate) fn plan_id(&self) -> &str {
        &self.plan_id
    }

    pub(crate) fn step_number(&self) -> u32 {
        self.step_number
    }

    /// Closes the entry inside the caller's transaction (the one recording the step's outcome).
    pub(crate) fn close(
        &self,
        tx: &dyn WriteTx,
        new_state: &str,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        tx.journal_close(&self.batch_id, new_state, reason)
            .map(|_| ())
    }

    /// Unlocks and removes the lock file, once the entry is closed. Dropping the journal
    /// without this leaves the entry to [`recover_interrupted`].
    pub(crate) fn release(self) {
        self.lock.remove();
    }
}

/// Opens a journal entry for step `step_number` of `plan_id`, running `also` in the same
/// transaction (`execute_plan` starts the step there). The lock is taken before the entry
/// exists, so no one ever sees the entry open and unlocked while this process lives.
pub(crate) fn begin<E: From<StoreError>>(
    store: &Store,
    workspace: &Path,
    plan_id: &str,
    step_number: u32,
    also: impl FnOnce(&dyn WriteTx) -> Result<(), E>,
) -> Result<OpenJournal, E> {
    let batch_id = crate::ids::new_id("batch");
    let lock = JournalLock::acquire(workspace, &batch_id)?;
    let opened = store.transact(|tx| {
        also(tx)?;
        tx.journal_open(&batch_id, plan_id, step_number, std::process::id())?;
        Ok(())
    });
    match opened {
        Ok(()) => Ok(OpenJournal {
            batch_id,
            plan_id: plan_id.to_string(),
            step_number,
            lock,
        }),
        Err(err) => {
            lock.remove();
            Err(err)
        }
    }
}

/// Rolls back every open entry whose process is gone (see the module docs) and returns what
/// it did; an entry whose owner still runs is left alone. Cheap when nothing is open: one query.
pub fn recover_interrupted(
    store: &Store,
    workspace: &Path,
) -> Result<Vec<RecoveredApply>, ApplyError> {
    let entries = store.snapshot(|tx| tx.journal_open_entries())?;
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let root = crate::plan::lifecycle::apply::canonical_root(workspace)?;
    let mut recovered = Vec::new();
    for entry in &entries {
        if !is_batch_id(&entry.batch_id) {
            tracing::warn!(batch = %entry.batch_id, "journal entry with a malformed id skipped");
            continue;
        }
        let Some(lock) = JournalLock::try_acquire(&root, &entry.batch_id)? else {
            continue;
        };
        // The owner may have closed it between the listing and the lock.
        let current = store.snapshot(|tx| tx.journal_entry(&entry.batch_id))?;
        if current.is_none_or(|row| row.state != state::OPEN) {
            lock.remove();
            continue;
        }
        let others_open = entries.iter().any(|other| {
            other.batch_id != entry.batch_id
                && other.plan_id == entry.plan_id
                && other.step_number == entry.step_number
        });
        recovered.push(roll_back_entry(store, &root, entry, others_open)?);
        lock.remove();
    }
    Ok(recovered)
}

fn roll_back_entry(
    store: &Store,
    root: &Path,
    entry: &JournalRow,
    others_open: bool,
) -> Result<RecoveredApply, ApplyError> {
    let rows = store.snapshot(|tx| tx.applied_changes_of_batch(&entry.batch_id))?;
    let rolled = apply::roll_back_rows(root, &rows, RollBackMode::BestEffort);
    let mut temp_files_removed = apply::remove_temp_files(root, &entry.temp_files);
    temp_files_removed.extend(remove_backup_temps(root, &entry.batch_id));
    let number = entry.step_number;
    let mut message = format!(
        "The run of step {number} (process {}, batch {}) stopped before it finished; rolled back: \
         {} file(s) restored, {} temporary file(s) removed",
        entry.owner_pid,
        entry.batch_id,
        rolled.restored.len(),
        temp_files_removed.len()
    );
    let mut conflicts = rolled.conflicts;
    conflicts.extend(rolled.unusable);
    conflicts.extend(rolled.failed);
    if !conflicts.is_empty() {
        message.push_str(&format!("; left as they are: {}", conflicts.join("; ")));
    }
    let step_status = store.transact(|tx| {
        if !tx.journal_close(&entry.batch_id, state::ROLLED_BACK, Some(&message))? {
            return Ok(None);
        }
        // A batch with files left half way stays on record as not undone, for `plan undo`.
        if conflicts.is_empty() {
            tx.mark_batch_undone(&entry.batch_id)?;
        }
        let Ok(mut plan) = PlanState::load(tx, &entry.plan_id) else {
            return Ok(None);
        };
        let in_progress = plan
            .states
            .get(&number)
            .is_some_and(|s| s.status == step_status::IN_PROGRESS);
        if !in_progress || others_open {
            tx.log_event(
                &entry.plan_id,
                Some(number),
                "apply_rolled_back",
                &message,
                "tollgate",
            )?;
            return Ok(None);
        }
        // Retry unless files were left half way: then a person looks first.
        let option = if conflicts.is_empty() {
            FailOption::Retry
        } else {
            FailOption::None
        };
        plan.fail(tx, number, &message, option, "tollgate")
            .map_err(|err| ApplyError::Undo {
                batch_id: entry.batch_id.clone(),
                reason: err.to_string(),
            })?;
        Ok::<_, ApplyError>(plan.states.get(&number).map(|s| s.status.clone()))
    })?;
    Ok(RecoveredApply {
        plan_id: entry.plan_id.clone(),
        step_number: number,
        batch_id: entry.batch_id.clone(),
        files_restored: rolled.restored,
        temp_files_removed,
        conflicts,
        step_status,
        message,
    })
}

/// Temporary files left in the batch's backup directory by a backup cut short.
fn remove_backup_temps(root: &Path, batch_id: &str) -> Vec<String> {
    let dir = root.join(apply::BACKUP_DIR).join(batch_id);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && name.ends_with(".tmp") && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(format!("{}/{batch_id}/{name}", apply::BACKUP_DIR));
        }
    }
    removed
}

/// Ids are `batch_<digits>_<hex>`; anything else from the store never becomes a file name.
fn is_batch_id(id: &str) -> bool {
    id.starts_with("batch_")
        && id.len() < 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The exclusive lock on an entry's lock file, held for the entry's life.
#[derive(Debug)]
struct JournalLock {
    path: PathBuf,
    #[cfg(unix)]
    _flock: nix::fcntl::Flock<File>,
}

impl JournalLock {
    /// The lock file's path; a committed `.tollgate` link must not move it out of the
    /// workspace, so the directory goes through the workspace's state-directory check.
    fn path_of(workspace: &Path, batch_id: &str) -> Result<PathBuf, StoreError> {
        let lock_err = |source| StoreError::Lock {
            path: workspace.join(JOURNAL_DIR),
            source,
        };
        let dir = Workspace::new(workspace)
            .map_err(lock_err)?
            .create_state_dir("journal")
            .map_err(StoreError::Location)?;
        Ok(dir.join(format!("{batch_id}.lock")))
    }

    fn open(path: &Path) -> Result<File, StoreError> {
        let lock_err = |source| StoreError::Lock {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(lock_err)?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(lock_err)
    }

    /// Takes the lock of a new entry (nobody else knows its id yet, so it is free).
    fn acquire(workspace: &Path, batch_id: &str) -> Result<JournalLock, StoreError> {
        let path = JournalLock::path_of(workspace, batch_id)?;
        match JournalLock::try_lock(JournalLock::open(&path)?, &path, true)? {
            Some(lock) => Ok(lock),
            None => Err(StoreError::Lock {
                path,
                source: std::io::Error::from(std::io::ErrorKind::WouldBlock),
            }),
        }
    }

    /// The lock when its owner is gone, `None` while the owner lives.
    fn try_acquire(workspace: &Path, batch_id: &str) -> Result<Option<JournalLock>, StoreError> {
        let path = JournalLock::path_of(workspace, batch_id)?;
        JournalLock::try_lock(JournalLock::open(&path)?, &path, false)
    }

    #[cfg(unix)]
    fn try_lock(
        file: File,
        path: &Path,
        _new_entry: bool,
    ) -> Result<Option<JournalLock>, StoreError> {
        use nix::errno::Errno;
        use nix::fcntl::{Flock, FlockArg};
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(flock) => Ok(Some(JournalLock {
                path: path.to_path_buf(),
                _flock: flock,
            })),
            Err((_, Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, errno)) => Err(StoreError::Lock {
                path: path.to_path_buf(),
                source: std::io::Error::from(errno),
            }),
        }
    }

    /// Without `flock` the owner cannot be told dead from alive: an existing entry is never
    /// taken for an orphan.
    #[cfg(not(unix))]
    fn try_lock(
        _file: File,
        path: &Path,
        new_entry: bool,
    ) -> Result<Option<JournalLock>, StoreError> {
        Ok(new_entry.then(|| JournalLock {
            path: path.to_path_buf(),
        }))
    }

    /// Removes the file, then unlocks (on drop). Whoever opens the path later gets a new file.
    fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::plan::lifecycle::apply::{CRASH_AT, FileOperation, apply_journaled};
    use crate::plan::lifecycle::library::tests::{sample_plan, save};
    use crate::plan::lifecycle::progress::{CompleteStep, complete_step_in};

    pub(crate) struct Fixture {
        pub(crate) dir: tempfile::TempDir,
        pub(crate) store: crate::store::testing::TestStore,
        pub(crate) plan_id: String,
    }

    impl Fixture {
        pub(crate) fn new() -> Fixture {
            Fixture::on(crate::store::testing::Backend::Sqlite).expect("SQLite is always there")
        }

        pub(crate) fn on(backend: crate::store::testing::Backend) -> Option<Fixture> {
            let dir = tempfile::tempdir().unwrap();
            for (path, content) in [
                ("src/a.txt", "a\n"),
                ("src/gone.txt", "gone\n"),
                ("src/old.txt", "old\n"),
            ] {
                let abs = dir.path().join(path);
                std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
                std::fs::write(abs, content).unwrap();
            }
            let store = crate::store::testing::store(backend)?;
            let plan_id = save(&store, sample_plan(), None).plan.id;
            Some(Fixture {
                dir,
                store,
                plan_id,
            })
        }

        pub(crate) fn ws(&self) -> &Path {
            self.dir.path()
        }

        /// Starts step 1 as `execute_plan` does: in the transaction that opens the entry.
        pub(crate) fn begin(&self) -> OpenJournal {
            begin(&self.store, self.ws(), &self.plan_id, 1, |tx| {
                PlanState::load(tx, &self.plan_id)?.start(tx, 1, "tester")
            })
            .unwrap()
        }

        /// Runs step 1 to completion, as `execute_plan` does.
        pub(crate) fn run_step(&self, ops: &[FileOperation]) -> String {
            let journal = self.begin();
            let batch = apply_journaled(&self.store, self.ws(), &journal, ops).unwrap();
            let request = CompleteStep {
                plan_id: self.plan_id.clone(),
                step_number: 1,
                notes: None,
                files_modified: batch.files_applied.clone(),
                author: None,
            };
            self.store
                .transact(|tx| {
                    complete_step_in(tx, &request)?;
                    journal.close(tx, state::COMPLETED, None)?;
                    Ok::<_, crate::plan::lifecycle::library::PlanStoreError>(())
                })
                .unwrap();
            journal.release();
            batch.batch_id
        }

        pub(crate) fn step_status(&self, number: u32) -> String {
            self.store
                .snapshot(|tx| tx.step_states(&self.plan_id))
                .unwrap()
                .into_iter()
                .find(|s| s.step_number == number)
                .map_or_else(|| "pending".to_string(), |s| s.status)
        }

        /// Every file outside `.tollgate`, with its content.
        pub(crate) fn files(&self) -> Vec<(String, String)> {
            let mut files = Vec::new();
            let mut stack = vec![self.ws().to_path_buf()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    let rel = path.strip_prefix(self.ws()).unwrap().display().to_string();
                    if rel == ".tollgate" {
                        continue;
                    }
                    if path.is_dir() {
                        stack.push(path);
                    } else {
                        files.push((rel, std::fs::read_to_string(&path).unwrap()));
                    }
                }
            }
            files.sort();
            files
        }
    }

    pub(crate) fn ops() -> Vec<FileOperation> {
        vec![
            FileOperation::Modify {
                path: "src/a.txt".into(),
                content: "A\n".into(),
            },
            FileOperation::Create {
                path: "src/new/b.txt".into(),
                content: "b\n".into(),
            },
            FileOperation::Delete {
                path: "src/gone.txt".into(),
            },
            FileOperation::Rename {
                path: "src/old.txt".into(),
                new_path: "src/moved.txt".into(),
                content: Some("moved\n".into()),
            },
            FileOperation::Create {
                path: "src/c.txt".into(),
                content: "c\n".into(),
            },
        ]
    }

    fn any_tmp(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.extend(any_tmp(&path));
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path);
            }
        }
        found
    }

    crate::backend_fixture_tests! {
    fn a_run_killed_midway_is_rolled_back_once_its_owner_is_gone(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let before = fx.files();
        let journal = fx.begin();
        let batch_id = journal.batch_id().to_string();
        CRASH_AT.with(|at| at.set(Some(3)));
        let crashed = apply_journaled(&fx.store, fx.ws(), &journal, &ops());
        CRASH_AT.with(|at| at.set(None));
        assert!(crashed.is_err());
        // Half applied, with a temporary file beside the fourth operation's target.
        assert_eq!(
            std::fs::read_to_string(fx.ws().join("src/a.txt")).unwrap(),
            "A\n"
        );
        assert!(!fx.ws().join("src/gone.txt").exists());
        assert_eq!(any_tmp(fx.ws()).len(), 1, "{:?}", any_tmp(fx.ws()));
        assert_eq!(fx.step_status(1), "in_progress");

        // While its owner holds the lock, the run is alive: nothing is touched.
        assert!(recover_interrupted(&fx.store, fx.ws()).unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(fx.ws().join("src/a.txt")).unwrap(),
            "A\n"
        );

        drop(journal); // the process dies: the kernel releases its lock
        let recovered = recover_interrupted(&fx.store, fx.ws()).unwrap();
        assert_eq!(recovered.len(), 1);
        let run = &recovered[0];
        assert_eq!(run.batch_id, batch_id);
        assert_eq!(run.step_status.as_deref(), Some("pending"));
        assert!(run.conflicts.is_empty(), "{:?}", run.conflicts);
        assert_eq!(run.temp_files_removed.len(), 1, "{run:?}");
        assert_eq!(fx.files(), before, "not rolled back");
        assert!(any_tmp(fx.ws()).is_empty(), "{:?}", any_tmp(fx.ws()));
        assert_eq!(fx.step_status(1), "pending");
        let entry = fx
            .store
            .snapshot(|tx| tx.journal_entry(&batch_id))
            .unwrap()
            .unwrap();
        assert_eq!(entry.state, state::ROLLED_BACK);
        assert!(entry.reason.unwrap().contains("stopped before it finished"));
        let rows = fx
            .store
            .snapshot(|tx| tx.applied_changes_of_batch(&batch_id))
            .unwrap();
        assert!(rows.iter().all(|row| row.undone_at.is_some()));
        assert!(
            !fx.ws()
                .join(JOURNAL_DIR)
                .join(format!("{batch_id}.lock"))
                .exists()
        );
        // Done once.
        assert!(recover_interrupted(&fx.store, fx.ws()).unwrap().is_empty());
    }
    }

    crate::backend_fixture_tests! {
    fn a_file_edited_after_the_crash_is_left_alone_and_the_step_fails(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let journal = fx.begin();
        CRASH_AT.with(|at| at.set(Some(2)));
        assert!(apply_journaled(&fx.store, fx.ws(), &journal, &ops()).is_err());
        CRASH_AT.with(|at| at.set(None));
        drop(journal);
        std::fs::write(fx.ws().join("src/a.txt"), "a person's edit\n").unwrap();
        let recovered = recover_interrupted(&fx.store, fx.ws()).unwrap();
        assert_eq!(recovered[0].conflicts.len(), 1, "{:?}", recovered[0]);
        assert!(recovered[0].conflicts[0].contains("src/a.txt"));
        assert_eq!(
            std::fs::read_to_string(fx.ws().join("src/a.txt")).unwrap(),
            "a person's edit\n"
        );
        // The rest is rolled back; the step waits for a person.
        assert!(!fx.ws().join("src/new/b.txt").exists());
        assert_eq!(fx.step_status(1), "failed");
    }
    }

    crate::backend_fixture_tests! {
    fn a_run_killed_before_writing_frees_its_step(backend) {
        let Some(fx) = Fixture::on(backend) else {
            return;
        };
        let before = fx.files();
        drop(fx.begin()); // killed while the model was thinking
        let recovered = recover_interrupted(&fx.store, fx.ws()).unwrap();
        assert_eq!(recovered.len(), 1);
        assert!(recovered[0].files_restored.is_empty());
        assert_eq!(fx.step_status(1), "pending");
        assert_eq!(fx.files(), before);
    }
    }
}
