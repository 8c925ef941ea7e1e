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
//! - `lexical/`, `history/`: tantivy indexes (chunks; commits).
//! - `vectors.bin`, `tombstones.bin`: the vector store.
//! - `next_id`: the first chunk id never handed out (ids are reserved here before use, so a
//!   killed run never leads to an id being reused).
//! - `write.lock`: held by the one process updating the index.
//!
//! JSON files are replaced atomically (write to a temporary file, fsync, rename), and tantivy
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

/// Writes the file table and the paths list drawn from it.
pub(crate) fn write_files(dir: &Path, files: &Files) -> Result<(), IndexError> {
    let bytes = postcard::to_stdvec(files).map_err(|err| IndexError::Engine(err.to_string()))?;
    write_atomic(&dir.join(FILES_TABLE), &bytes)?;
    // Records end in NUL, the one byte a path cannot hold (a newline or tab can).
    let mut list = String::new();
    for (path, entry) in files {
        let test = if is_test_path(path) { 'T' } else { '-' };
        list.push_str(&format!("{}\t{test}\t{path}\0", entry.language));
    }
    // Most updates edit files without adding or removing any: spare them a write and an fsync.
    if read_paths(dir)?.is_some_and(|old| old == list) {
        return Ok(());
    }
    write_atomic(&dir.join(PATHS_LIST), list.as_bytes())
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
    let bytes = serde_json::to_vec(value).map_err(|err| IndexError::Engine(err.to_string()))?;
    write_atomic(path, &bytes)
}

pub(crate) fn read_next_id(dir: &Path) -> Result<u64, IndexError> {
    let path = dir.join("next_id");
    match fs::read_to_string(&path) {
        Ok(text) => Ok(text.trim().parse().unwrap_or(0)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(err) => Err(IndexError::io(&path, err)),
    }
}

pub(crate) fn write_next_id(dir: &Path, next: u64) -> Result<(), IndexError> {
    write_atomic(&dir.join("next_id"), next.to_string().as_bytes())
}

/// The single-writer lock: a file holding the owner's pid, removed on drop. A lock left by a
/// process that no longer runs (killed) is taken over.
#[derive(Debug)]
pub(crate) struct WriteLock {
    path: PathBuf,
}

impl WriteLock {
    pub(crate) fn acquire(dir: &Path) -> Result<WriteLock, IndexError> {
        fs::create_dir_all(dir).map_err(|err| IndexError::io(dir, err))?;
        let path = dir.join("write.lock");
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let _ = write!(file, "{}", std::process::id());
                    let _ = file.sync_all();
                    return Ok(WriteLock { path });
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid = fs::read_to_string(&path)
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    if owner_is_gone(&pid) {
                        let _ = fs::remove_file(&path);
                        continue;
                    }
                    return Err(IndexError::Busy {
                        pid,
                        dir: dir.to_path_buf(),
                        lock: path,
                    });
                }
                Err(err) => return Err(IndexError::io(&path, err)),
            }
        }
        Err(IndexError::Busy {
            pid: String::new(),
            dir: dir.to_path_buf(),
            lock: path,
        })
    }
}

/// True when the pid in a lock file names no running process (Linux: `/proc/<pid>`); elsewhere
/// a lock is only taken over when it names no pid at all.
fn owner_is_gone(pid: &str) -> bool {
    let Ok(pid) = pid.parse::<u32>() else {
        return true;
    };
    if Path::new("/proc/self").exists() {
        return !Path::new("/proc").join(pid.to_string()).exists();
    }
    false
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
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
