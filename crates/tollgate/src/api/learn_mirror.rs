//! The learnings ledger mirrored into the knowledge store, so an agent's searches find the
//! team's decisions: one entry per record in the `learnings` thread, its text the decision in
//! words, its metadata the record's fields and a key (a hash of the record's line). A sync adds
//! the records the thread lacks and deletes the entries whose record left the ledger, so
//! syncing twice changes nothing and no record is mirrored twice. The ledger stays the source
//! of truth (reviewed and merged like code); the thread is a search index of it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ApiError;
use crate::learnings::{self, Disposition, Record};
use crate::memory::{DeleteCriteria, Filter, MAX_DELETE_IDS, Memory, NewEntry, Page, Source};

/// The thread the ledger is mirrored into.
pub const LEARNINGS_THREAD: &str = "learnings";
/// The metadata key holding a record's hash.
const KEY: &str = "ledger_key";
/// More entries than a ledger within its size bound can hold.
const MAX_MIRRORED: usize = 1_000_000;

/// What a sync changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LearnSyncReport {
    pub added: usize,
    pub removed: usize,
    pub unchanged: usize,
}

/// [`learn_sync`] as every front end runs it when it opens the knowledge store: the ledger may
/// have changed under the store (a pull, a merge, the Action's run), and a search must see the
/// team's decisions as committed. A failure does not stop the caller's operation: it is returned
/// as the warning to show (the ledger itself is intact).
///
/// Only when the ledger changed since the last sync: its modification time and size are
/// compared with the store's mark first (no read), then the hash of its text (a touched but
/// unchanged file), so a large ledger costs a `stat` per call, not a re-sync.
pub fn sync_on_open(workspace: &Path, memory: &Memory<'_>) -> Option<String> {
    sync_if_changed(workspace, memory)
        .err()
        .map(|err| format!("the learnings ledger was not mirrored into the knowledge store: {err}"))
}

/// The store's mark of the ledger it last mirrored: `mtime_ns:size:sha256`.
const MARK: &str = "learnings_ledger";

fn sync_if_changed(workspace: &Path, memory: &Memory<'_>) -> Result<(), ApiError> {
    // Taken before the ledger is read: a change after it gives a later stamp, so the next
    // open looks again.
    let stamp = file_stamp(workspace);
    let mark = memory.mark(MARK)?;
    let marked = |prefix: &str| mark.as_deref().is_some_and(|m| m.starts_with(prefix));
    if marked(&stamp) {
        return Ok(());
    }
    let text = learnings::read_text(workspace)
        .map_err(|err| ApiError::new(err.code(), err.to_string()))?
        .unwrap_or_default();
    let hash: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let unchanged = mark
        .as_deref()
        .and_then(|m| m.rsplit(':').next())
        .is_some_and(|marked_hash| marked_hash == hash);
    if !unchanged {
        learn_sync(workspace, memory)?;
    }
    memory.set_mark(MARK, &format!("{stamp}{hash}"))?;
    Ok(())
}

/// `mtime_ns:size:` of the ledger, or `absent::` (a ledger that cannot be stat'ed is read and
/// hashed every time, which is what its load would do anyway).
fn file_stamp(workspace: &Path) -> String {
    match std::fs::symlink_metadata(workspace.join(learnings::LEDGER_FILE)) {
        Ok(meta) => {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_nanos());
            format!("{mtime}:{}:", meta.len())
        }
        Err(_) => "absent::".to_string(),
    }
}

/// Brings the `learnings` thread in line with the workspace's ledger (one transaction for the
/// additions; secrets in reasons are masked like in every entry).
pub fn learn_sync(workspace: &Path, memory: &Memory<'_>) -> Result<LearnSyncReport, ApiError> {
    // One sync at a time per workspace, across processes: the read of the thread and the
    // writes that follow are separate transactions, and two syncs between them would both add.
    let _lock = learnings::LedgerLock::of_workspace(workspace)
        .map_err(|err| ApiError::new(err.code(), err.to_string()))?;
    let ledger =
        learnings::load(workspace).map_err(|err| ApiError::new(err.code(), err.to_string()))?;
    let mut wanted: Vec<(String, &Record)> = Vec::new();
    let mut seen = HashSet::new();
    for record in ledger.records() {
        let key = key_of(record);
        if seen.insert(key.clone()) {
            wanted.push((key, record));
        }
    }
    let filter = Filter {
        thread_id: Some(LEARNINGS_THREAD.to_string()),
        ..Filter::default()
    };
    let page = Page {
        limit: MAX_MIRRORED,
        offset: 0,
    };
    let mut present: HashMap<String, i64> = HashMap::new();
    let mut stale = Vec::new();
    for entry in memory.list(&filter, page, false)? {
        match entry.metadata.get(KEY).and_then(Value::as_str) {
            Some(key) if seen.contains(key) && !present.contains_key(key) => {
                present.insert(key.to_string(), entry.id);
            }
            _ => stale.push(entry.id),
        }
    }
    let mut new_entries = Vec::new();
    for (key, record) in &wanted {
        if !present.contains_key(key) {
            new_entries.push(entry_of(key, record)?);
        }
    }
    if !new_entries.is_empty() {
        for outcome in memory.store_entries(&new_entries, true)? {
            outcome?;
        }
    }
    let mut removed = 0;
    for chunk in stale.chunks(MAX_DELETE_IDS) {
        removed += memory.delete(&DeleteCriteria {
            ids: chunk.to_vec(),
            ..DeleteCriteria::default()
        })?;
    }
    Ok(LearnSyncReport {
        added: new_entries.len(),
        removed,
        unchanged: present.len(),
    })
}

fn key_of(record: &Record) -> String {
    let digest = Sha256::digest(record.to_line().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn entry_of(key: &str, record: &Record) -> Result<NewEntry, ApiError> {
    let verb = match record.disposition {
        Disposition::Dismissed => "dismissed",
        Disposition::Accepted => "accepted",
        Disposition::Fixed => "fixed",
    };
    let place = record.scope.as_deref().unwrap_or(&record.path);
    let mut text = format!("{verb} {} in {place}", record.rule_id);
    if !record.reason.trim().is_empty() {
        text.push_str(&format!(": {}", record.reason.trim()));
    }
    if !record.by.trim().is_empty() {
        text.push_str(&format!(" (by {})", record.by.trim()));
    }
    let mut metadata = Map::new();
    metadata.insert(KEY.to_string(), Value::from(key));
    metadata.insert("disposition".to_string(), Value::from(verb));
    metadata.insert("rule_id".to_string(), Value::from(record.rule_id.as_str()));
    metadata.insert("path".to_string(), Value::from(record.path.as_str()));
    metadata.insert(
        "fingerprint".to_string(),
        Value::from(record.fingerprint.as_str()),
    );
    metadata.insert("by".to_string(), Value::from(record.by.as_str()));
    metadata.insert("at".to_string(), Value::from(record.at.as_str()));
    if let Some(scope) = &record.scope {
        metadata.insert("scope".to_string(), Value::from(scope.as_str()));
    }
    Ok(NewEntry::new(
        LEARNINGS_THREAD,
        Source::User,
        &text,
        metadata,
        &[verb.to_string()],
        Vec::new(),
    )?)
}

#[cfg(test)]
mod tests {
    use tollgate_index::HashedEmbedder;

    use super::*;
    use crate::learnings::LEDGER_FILE;
    use crate::store::Store;

    fn record(fingerprint: &str, reason: &str) -> Record {
        Record {
            fingerprint: fingerprint.to_string(),
            rule_id: "TG003".into(),
            path: "src/a.rs".into(),
            scope: None,
            disposition: Disposition::Dismissed,
            reason: reason.to_string(),
            by: "alice".into(),
            at: "2026-11-27T00:00:00Z".into(),
            evidence: None,
        }
    }

    fn write(dir: &Path, records: &[Record]) {
        let text: String = records.iter().map(|r| r.to_line() + "\n").collect();
        std::fs::write(dir.join(LEDGER_FILE), text).unwrap();
    }

    #[test]
    fn the_ledger_is_mirrored_once_and_kept_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let a = record("a".repeat(16).as_str(), "generated code, not ours");
        let b = record(
            "b".repeat(16).as_str(),
            &format!("test fixture key {token}"),
        );
        write(dir.path(), &[a.clone(), b.clone(), a.clone()]);
        let first = learn_sync(dir.path(), &memory).unwrap();
        assert_eq!(
            first,
            LearnSyncReport {
                added: 2,
                removed: 0,
                unchanged: 0
            }
        );
        // Again: nothing to do, no duplicates.
        let again = learn_sync(dir.path(), &memory).unwrap();
        assert_eq!(
            again,
            LearnSyncReport {
                added: 0,
                removed: 0,
                unchanged: 2
            }
        );
        let all = |memory: &Memory<'_>| {
            memory
                .list(
                    &Filter {
                        thread_id: Some(LEARNINGS_THREAD.to_string()),
                        ..Filter::default()
                    },
                    Page {
                        limit: 100,
                        offset: 0,
                    },
                    false,
                )
                .unwrap()
        };
        let entries = all(&memory);
        assert_eq!(entries.len(), 2);
        assert!(entries.iter().all(|e| !e.text.contains(&token)));
        assert!(
            entries
                .iter()
                .any(|e| e.text
                    == "dismissed TG003 in src/a.rs: generated code, not ours (by alice)")
        );
        // A record leaves the ledger (a merge dropped it): its entry goes; a new one comes.
        let c = record("c".repeat(16).as_str(), "vendored");
        write(dir.path(), &[b, c]);
        let changed = learn_sync(dir.path(), &memory).unwrap();
        assert_eq!(
            changed,
            LearnSyncReport {
                added: 1,
                removed: 1,
                unchanged: 1
            }
        );
        let texts: Vec<String> = all(&memory).into_iter().map(|e| e.text).collect();
        assert!(texts.iter().any(|t| t.contains("vendored")), "{texts:?}");
        assert!(
            !texts.iter().any(|t| t.contains("generated code")),
            "{texts:?}"
        );
    }

    /// Simultaneous first syncs (one store, each its own connection, as processes have) mirror
    /// each record once.
    #[test]
    fn concurrent_first_syncs_mirror_each_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let records: Vec<Record> = (0..40)
            .map(|n| record(&format!("{n:016}"), "fixture"))
            .collect();
        write(dir.path(), &records);
        let path = dir.path().join("tollgate.db");
        drop(Store::open(&path).unwrap());
        std::thread::scope(|scope| {
            for _ in 0..16 {
                scope.spawn(|| {
                    let db = Store::open(&path).unwrap();
                    learn_sync(dir.path(), &Memory::new(&db, &HashedEmbedder)).unwrap();
                });
            }
        });
        let db = Store::open(&path).unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let listed = memory
            .list(
                &Filter {
                    thread_id: Some(LEARNINGS_THREAD.to_string()),
                    ..Filter::default()
                },
                Page {
                    limit: 10_000,
                    offset: 0,
                },
                false,
            )
            .unwrap();
        assert_eq!(listed.len(), 40);
    }

    /// More stale entries than SQLite takes parameters in one statement are all cleaned up.
    #[test]
    fn a_mirror_with_very_many_stale_entries_is_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        const STALE: usize = 33_000;
        let stale: Vec<NewEntry> = (0..STALE)
            .map(|n| {
                let mut metadata = Map::new();
                metadata.insert(KEY.to_string(), Value::from(format!("gone{n}")));
                NewEntry::new(
                    LEARNINGS_THREAD,
                    Source::User,
                    "x",
                    metadata,
                    &[],
                    Vec::new(),
                )
                .unwrap()
            })
            .collect();
        for outcome in memory.store_entries(&stale, true).unwrap() {
            outcome.unwrap();
        }
        write(dir.path(), &[record("d".repeat(16).as_str(), "kept")]);
        let report = learn_sync(dir.path(), &memory).unwrap();
        assert_eq!((report.added, report.removed), (1, STALE), "{report:?}");
    }

    #[test]
    fn opening_the_store_mirrors_a_ledger_changed_behind_its_back_and_warns_on_a_broken_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        // A ledger that arrived by a pull: no learn command ran.
        write(
            dir.path(),
            &[record("c".repeat(16).as_str(), "vendored code")],
        );
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        let listed = memory
            .list(
                &Filter {
                    thread_id: Some(LEARNINGS_THREAD.to_string()),
                    ..Filter::default()
                },
                Page {
                    limit: 10,
                    offset: 0,
                },
                false,
            )
            .unwrap();
        assert_eq!(listed.len(), 1);
        assert!(
            listed[0].text.contains("vendored code"),
            "{:?}",
            listed[0].text
        );
        std::fs::write(dir.path().join(LEDGER_FILE), "{not json\n").unwrap();
        let warning = sync_on_open(dir.path(), &memory).expect("a warning");
        assert!(warning.contains("not mirrored"), "{warning}");
    }

    /// Opening syncs only when the ledger changed: an unchanged ledger (even rewritten with the
    /// same text, a new modification time) leaves the thread alone, so entries removed behind
    /// the mirror's back stay removed until the ledger changes; then every record is back.
    #[test]
    fn opening_the_store_syncs_only_when_the_ledger_changed() {
        let dir = tempfile::tempdir().unwrap();
        let db = Store::open_in_memory().unwrap();
        let memory = Memory::new(&db, &HashedEmbedder);
        let a = record("a".repeat(16).as_str(), "generated");
        let b = record("b".repeat(16).as_str(), "fixture");
        write(dir.path(), &[a.clone(), b.clone()]);
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        let thread = DeleteCriteria {
            thread_ids: vec![LEARNINGS_THREAD.to_string()],
            ..DeleteCriteria::default()
        };
        assert_eq!(memory.delete(&thread).unwrap(), 2);
        let mirrored = |memory: &Memory<'_>| {
            memory
                .list(
                    &Filter {
                        thread_id: Some(LEARNINGS_THREAD.to_string()),
                        ..Filter::default()
                    },
                    Page {
                        limit: 10,
                        offset: 0,
                    },
                    false,
                )
                .unwrap()
                .len()
        };
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        assert_eq!(mirrored(&memory), 0, "an unchanged ledger is not re-read");
        // The same text written again: a new modification time, the same hash.
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(dir.path(), &[a.clone(), b.clone()]);
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        assert_eq!(mirrored(&memory), 0, "a touched ledger with the same text");
        // A change: the mirror is brought in line, every record in it.
        write(
            dir.path(),
            &[a, b, record("c".repeat(16).as_str(), "vendored")],
        );
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        assert_eq!(mirrored(&memory), 3);
        // The ledger removed: the mirror empties.
        std::fs::remove_file(dir.path().join(LEDGER_FILE)).unwrap();
        assert_eq!(sync_on_open(dir.path(), &memory), None);
        assert_eq!(mirrored(&memory), 0);
    }
}
