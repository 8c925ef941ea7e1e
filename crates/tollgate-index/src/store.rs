//! The on-disk layout under the index directory (`.tollgate/index/` by default):
//!
//! - `meta.json`: header (format version, embedder id and dimension, counts, last indexed
//!   time); small, read by status calls.
//! - `files.bin`: per file its size, mtime, content hash, language, chunk ids, symbols and
//!   imports (change detection, filters, the symbol graph), postcard-encoded: it is read by
//!   every update and filtered search, and JSON took tens of milliseconds to parse.
//! - `paths.txt`: per file its language, whether it is a test, and its path, for filters: a
//!   filtered search reads it in well under a millisecond (the file table took several, the
//!   lexical index's path terms a few). Written with the file table, after the lexical commit.
//! - `stamps.bin`: per file the key of its path, its size and mtime, fixed-width records sorted
//!   by key, for a search to tell which of its hits' files changed since they were indexed,
//!   looked up in place (the file table holds the same, but decoding it takes milliseconds).
//!   Written with the file table.
//! - `skipped.bin`: files left out as binary or minified, with their size and mtime then, so
//!   that an unchanged tree reads none of its files again.
//! - `lexical/`, `history/`: tantivy indexes (chunks; commits).
//! - `vectors.bin`, `tombstones.bin`: the vector store.
//! - `next_id`: the first chunk id never handed out, in indexes written before it moved into
//!   the lexical commit's payload (read, no longer written).
//! - `write.lock`: held by the one process updating the index.
//!
//! Files are replaced atomically (write to a temporary file, fsync, rename; the tables and the
//! header of one run are all synced before any is renamed, the header last), and tantivy
//! commits are atomic, so a run killed at any point leaves an index that serves queries.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::IndexError;
use crate::walk::is_test_path;

/// 2: the file table moved from `files.json` to `files.bin`; 3: outlines kept as bytes;
/// 4: chunks carry their file's key as a fast field (filters without the file table); 5:
/// generated files are indexed, marked on their chunks, and import-only chunks have a kind.
pub(crate) const FORMAT_VERSION: u32 = 5;

/// The stable key of a path (FNV-1a), in the vector store and the lexical index: filters
/// compare keys, not strings.
pub(crate) fn file_key(path: &str) -> u64 {
    crate::hash::fnv1a(path.as_bytes())
}

pub(crate) const FILES_TABLE: &str = "files.bin";
pub(crate) const PATHS_LIST: &str = "paths.txt";
pub(crate) const STAMPS: &str = "stamps.bin";
const SKIPPED: &str = "skipped.bin";
/// A stamp: file key, size, mtime in nanoseconds (u64 little-endian each).
const STAMP_BYTES: usize = 24;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub version: u32,
    pub embedder: String,
    pub dim: usize,
    pub files: usize,
    pub chunks: usize,
    /// Seconds since the epoch of the last completed run.
    pub indexed_at: i64,
    pub source_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    pub size: u64,
    pub mtime_ns: u128,
    pub hash: String,
    pub language: String,
    pub chunks: Vec<u64>,
    /// The file's [`Outline`], postcard-encoded: most readers of the table (every update and
    /// filtered search) never look at outlines, so they stay bytes until asked for.
    #[serde(with = "serde_bytes")]
    outline: Vec<u8>,
}

impl FileEntry {
    pub(crate) fn new(
        size: u64,
        mtime_ns: u128,
        hash: String,
        language: String,
        outline: &Outline,
    ) -> FileEntry {
        FileEntry {
            size,
            mtime_ns,
            hash,
            language,
            chunks: Vec::new(),
            // Encoding plain structs and strings into a Vec cannot fail.
            outline: postcard::to_stdvec(outline).unwrap_or_default(),
        }
    }

    /// The decoded outline (empty when it cannot be decoded).
    pub(crate) fn outline(&self) -> Outline {
        postcard::from_bytes(&self.outline).unwrap_or_default()
    }
}

/// A file's definitions and imports.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Outline {
    pub symbols: Vec<SymbolEntry>,
    pub imports: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SymbolEntry {
    pub name: String,
    pub kind: String,
    pub line: usize,
    /// 0 in indexes built before end lines were recorded.
    pub end_line: usize,
    pub parent: Option<String>,
}

pub(crate) type Files = BTreeMap<String, FileEntry>;

/// Files left out as binary or minified, with the size and mtime they had then: not read
/// again until those move.
pub(crate) type Skipped = BTreeMap<String, (u64, u128)>;

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(
    path: &Path,
) -> Result<Option<T>, IndexError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(IndexError::io(path, err)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| IndexError::Corrupt {
            dir: path.parent().unwrap_or(path).to_path_buf(),
            detail: format!("{}: {err}", path.display()),
        })
}

/// The file table (`None` before the first run).
pub(crate) fn read_files(dir: &Path) -> Result<Option<Files>, IndexError> {
    let path = dir.join(FILES_TABLE);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(IndexError::io(&path, err)),
    };
    postcard::from_bytes(&bytes)
        .map(Some)
        .map_err(|err| IndexError::Corrupt {
            dir: dir.to_path_buf(),
            detail: format!("{}: {err}", path.display()),
        })
}

/// Writes the file table, the paths list and stamps drawn from it, then the header `meta`:
/// synced together, renamed in that order (a reader that sees the new header sees the new
/// tables).
pub(crate) fn write_files(
    dir: &Path,
    files: &Files,
    skipped: &Skipped,
    meta: &Meta,
) -> Result<(), IndexError> {
    let table = postcard::to_stdvec(files).map_err(|err| IndexError::Engine(err.to_string()))?;
    let mut writes = vec![(dir.join(FILES_TABLE), table)];
    // Records end in NUL, the one byte a path cannot hold (a newline or tab can).
    let mut list = String::new();
    for (path, entry) in files {
        let test = if is_test_path(path) { 'T' } else { '-' };
        list.push_str(&format!("{}\t{test}\t{path}\0", entry.language));
    }
    // Most updates edit files without adding or removing any: spare them a write.
    if read_paths(dir)?.is_none_or(|old| old != list) {
        writes.push((dir.join(PATHS_LIST), list.into_bytes()));
    }
    writes.push((dir.join(STAMPS), stamps(files)));
    if read_skipped(dir) != *skipped {
        let bytes =
            postcard::to_stdvec(skipped).map_err(|err| IndexError::Engine(err.to_string()))?;
        writes.push((dir.join(SKIPPED), bytes));
    }
    writes.push((dir.join("meta.json"), json(meta)?));
    write_atomic_all(&writes)
}

/// The skipped files (none when the list is missing or unreadable: they are read once more).
pub(crate) fn read_skipped(dir: &Path) -> Skipped {
    fs::read(dir.join(SKIPPED))
        .ok()
        .and_then(|bytes| postcard::from_bytes(&bytes).ok())
        .unwrap_or_default()
}

/// The stamps of `files`, sorted by key.
fn stamps(files: &Files) -> Vec<u8> {
    let mut stamps: Vec<(u64, u64, u64)> = files
        .iter()
        .map(|(path, entry)| (file_key(path), entry.size, entry.mtime_ns as u64))
        .collect();
    stamps.sort_unstable();
    stamps
        .iter()
        .flat_map(|(key, size, mtime)| [*key, *size, *mtime])
        .flat_map(u64::to_le_bytes)
        .collect()
}

/// The stamps list as written by [`write_files`]; `None` when the index has none (written
/// before it existed).
pub(crate) struct Stamps(Vec<u8>);

impl Stamps {
    pub(crate) fn read(dir: &Path) -> Result<Option<Stamps>, IndexError> {
        let path = dir.join(STAMPS);
        match fs::read(&path) {
            Ok(bytes) if bytes.len() % STAMP_BYTES == 0 => Ok(Some(Stamps(bytes))),
            Ok(_) => Err(IndexError::Corrupt {
                dir: dir.to_path_buf(),
                detail: format!("{STAMPS} is truncated: run `tollgate index`"),
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(IndexError::io(&path, err)),
        }
    }

    /// The size and mtime (nanoseconds, as u64) recorded for `path`.
    pub(crate) fn get(&self, path: &str) -> Option<(u64, u64)> {
        let key = file_key(path);
        let field = |record: usize, i: usize| {
            let at = record * STAMP_BYTES + i * 8;
            let mut word = [0u8; 8];
            word.copy_from_slice(&self.0[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let (mut low, mut high) = (0, self.0.len() / STAMP_BYTES);
        while low < high {
            let mid = low + (high - low) / 2;
            match field(mid, 0).cmp(&key) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some((field(mid, 1), field(mid, 2))),
            }
        }
        None
    }
}

/// An indexed file as the paths list has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListedFile<'a> {
    pub path: &'a str,
    pub language: &'a str,
    pub test: bool,
}

/// The paths list's text; `None` when there is none.
pub(crate) fn read_paths(dir: &Path) -> Result<Option<String>, IndexError> {
    let path = dir.join(PATHS_LIST);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(IndexError::io(&path, err)),
    }
}

/// The files of a paths list; a malformed record is an error naming it (skipping it would
/// silently leave its file out of every filtered search).
pub(crate) fn listed_files(text: &str) -> Result<Vec<ListedFile<'_>>, String> {
    text.split_terminator('\0')
        .enumerate()
        .map(|(n, record)| {
            let malformed = || format!("{PATHS_LIST}: record {} is malformed", n + 1);
            let (language, rest) = record.split_once('\t').ok_or_else(malformed)?;
            let (test, path) = rest.split_once('\t').ok_or_else(malformed)?;
            if path.is_empty() || !matches!(test, "T" | "-") {
                return Err(malformed());
            }
            Ok(ListedFile {
                path,
                language,
                test: test == "T",
            })
        })
        .collect()
}

/// Replaces each path atomically: every temporary file is written and synced, then all are
/// renamed in order (a reader that sees the last sees the others).
pub(crate) fn write_atomic_all(writes: &[(PathBuf, Vec<u8>)]) -> Result<(), IndexError> {
    let tmps: Vec<PathBuf> = writes
        .iter()
        .map(|(path, _)| path.with_extension("tmp"))
        .collect();
    for ((_, bytes), tmp) in writes.iter().zip(&tmps) {
        let mut file = File::create(tmp).map_err(|err| IndexError::io(tmp, err))?;
        file.write_all(bytes)
            .map_err(|err| IndexError::io(tmp, err))?;
        file.sync_all().map_err(|err| IndexError::io(tmp, err))?;
    }
    for ((path, _), tmp) in writes.iter().zip(&tmps) {
        fs::rename(tmp, path).map_err(|err| IndexError::io(path, err))?;
    }
    Ok(())
}

/// Replaces `path` atomically.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = File::create(&tmp).map_err(|err| IndexError::io(&tmp, err))?;
        file.write_all(bytes)
            .map_err(|err| IndexError::io(&tmp, err))?;
        file.sync_all().map_err(|err| IndexError::io(&tmp, err))?;
    }
    fs::rename(&tmp, path).map_err(|err| IndexError::io(path, err))
}

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), IndexError> {
    write_atomic(path, &json(value)?)
}

fn json<T: Serialize>(value: &T) -> Result<Vec<u8>, IndexError> {
    serde_json::to_vec(value).map_err(|err| IndexError::Engine(err.to_string()))
}

pub(crate) fn read_next_id(dir: &Path) -> Result<u64, IndexError> {
    let path = dir.join("next_id");
    match fs::read_to_string(&path) {
        Ok(text) => Ok(text.trim().parse().unwrap_or(0)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(err) => Err(IndexError::io(&path, err)),
    }
}

/// The single-writer lock: an exclusive advisory lock (`flock`) on `write.lock`, which also
/// names the owner's pid for the busy message. The kernel releases it when its holder exits,
/// however it exits, so no lock outlives its process and none is ever taken over by guessing
/// (guessing from the pid raced: a second builder that read the file between its creation and
/// the pid being written took the lock too, and both builders broke each other's index). The
/// file is never removed: unlinking a locked file lets a third process lock a new one.
#[derive(Debug)]
pub(crate) struct WriteLock {
    file: fs::File,
}

impl WriteLock {
    pub(crate) fn acquire(dir: &Path) -> Result<WriteLock, IndexError> {
        fs::create_dir_all(dir).map_err(|err| IndexError::io(dir, err))?;
        let path = dir.join("write.lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|err| IndexError::io(&path, err))?;
        match file.try_lock() {
            Ok(()) => {
                // Not synced: other processes read it from the page cache.
                let _ = file.set_len(0);
                let _ = write!(file, "{}", std::process::id());
                Ok(WriteLock { file })
            }
            Err(fs::TryLockError::WouldBlock) => Err(IndexError::Busy {
                pid: fs::read_to_string(&path)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                dir: dir.to_path_buf(),
            }),
            Err(fs::TryLockError::Error(err)) => Err(IndexError::io(&path, err)),
        }
    }

    /// Whether a writer holds the lock of the index at `dir` now, for reports only: the pid
    /// the holder wrote (a holder empties the file as it lets go), if that process runs. It
    /// never takes the lock itself, so asking cannot turn a writer away.
    pub(crate) fn is_held(dir: &Path) -> bool {
        let pid = fs::read_to_string(dir.join("write.lock")).unwrap_or_default();
        let Ok(pid) = pid.trim().parse::<u32>() else {
            return false;
        };
        !Path::new("/proc/self").exists() || Path::new("/proc").join(pid.to_string()).exists()
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        // Emptied before the lock goes with the file: no owner is named once there is none.
        let _ = self.file.set_len(0);
    }
}

/// Total size of the files under `dir`.
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    for entry in entries.flatten() {
        match entry.file_type() {
            Ok(t) if t.is_dir() => total += dir_size(&entry.path()),
            Ok(_) => total += entry.metadata().map_or(0, |m| m.len()),
            Err(_) => {}
        }
    }
    total
}
