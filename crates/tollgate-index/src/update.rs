//! Building and updating an index: walk, detect changes (size + mtime, then content hash),
//! chunk and embed changed files in parallel (each handed to the lexical writer in path order
//! as it is done) while another thread reads and stages the commits since the last `HEAD`, then
//! commit it all (both channels, the commit index, the file table) and refresh the vector graph.
//! Only one process updates an index at a time; readers are never blocked.
//!
//! Every phase hears the progress callback and stops when it answers
//! [`ControlFlow::Break`]: the walk, each changed file, each commit, and the write. Nothing is
//! written before the write, so a stopped update leaves the previous index as it was. Once the
//! write has begun it finishes (a half-written index would serve stale chunks); only the graph
//! refresh after it, a cache, is skipped.

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use sha2::{Digest, Sha256};
use tantivy::IndexWriter;

use crate::chunk::chunk_file;
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::lexical::{Fields, Lexical, StoredChunk, document, path_term};
use crate::store::{
    self, FORMAT_VERSION, FileEntry, Files, Meta, Outline, Skipped, SymbolEntry, WriteLock,
    file_key,
};
use crate::vectors::{self, VectorStore};
use crate::walk::{self, WalkedFile};
use crate::{IndexConfig, history};

/// Progress of an update, for progress bars, in the order the phases run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The walk found `files` files, `changed` of which will be read, and `commits` commits
    /// will be indexed.
    Walked {
        files: usize,
        changed: usize,
        commits: usize,
    },
    /// Changed files processed so far, out of the changed total.
    Processed { done: usize, total: usize },
    /// Commits indexed so far, out of the total (none when history is off or up to date).
    History { done: usize, total: usize },
    /// About to write the index: the last point at which stopping leaves the previous index.
    Committing,
    /// Written; about to refresh the vector graph, and again after each batch of points added
    /// to it: stopping skips or abandons the graph (a cache), the update stands.
    Graph,
}

/// What an update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateReport {
    pub files_total: usize,
    pub files_changed: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    /// Files skipped as binary or minified.
    pub files_skipped: usize,
    /// Files whose bytes were read: those whose size or mtime moved since the last run (or
    /// that are new). An unchanged tree reads none.
    pub files_read: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub commits_added: usize,
    /// Why everything was rebuilt, when it was (a new embedder, a new format).
    pub rebuilt: Option<String>,
    pub source_bytes: u64,
    pub walk_ms: u64,
    /// Everything after the walk (the history included, which runs beside the files).
    pub index_ms: u64,
    /// The history thread: reading the commits and indexing them, beside the files.
    pub history_ms: u64,
}

/// A file's size and mtime (nanoseconds).
type Stamp = (u64, u128);

/// One changed file, processed.
struct Prepared {
    path: String,
    entry: FileEntry,
    chunks: Vec<(StoredChunk, String)>,
    vectors: Vec<Vec<f32>>,
}

/// Updates the index of `config.root` (only `under` when given: files outside it are left
/// as they are). `progress` hears how far it is; answering [`ControlFlow::Break`] stops the
/// update before it commits anything ([`IndexError::Cancelled`]), the previous index intact.
/// `config.rebuild` rebuilds the whole index (`under` is then not read: a rebuild of part would
/// drop the rest).
pub fn update(
    config: &IndexConfig,
    under: Option<&str>,
    embedder: &dyn Embedder,
    progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<UpdateReport, IndexError> {
    let under = under.filter(|_| !config.rebuild);
    let dir = &config.dir;
    let _lock = WriteLock::acquire(dir)?;
    let mut report = UpdateReport::default();
    let started = Instant::now();
    let previous = Previous::open(dir, embedder, config.rebuild, &mut report)?;
    let mut files = previous.files;

    let walked = walk::walk(&config.root, under);
    report.walk_ms = started.elapsed().as_millis() as u64;
    report.files_total = walked.len();
    let Planned {
        candidates,
        mut removed,
        mut skipped_now,
    } = plan_reads(&walked, &files, &previous.skipped, under);
    report.files_unchanged = walked.len() - candidates.len() - skipped_now.len();
    report.files_skipped = skipped_now.len();
    // The commits to index, counted before any is read so that the history phase has a total.
    let history = if config.history {
        history::plan(&config.root, &dir.join("history"), config.max_commits)?
    } else {
        None
    };
    let walked_progress = Progress::Walked {
        files: walked.len(),
        changed: candidates.len(),
        commits: history.as_ref().map_or(0, history::Pending::len),
    };
    if progress(walked_progress).is_break() {
        return Err(IndexError::Cancelled);
    }

    let mut lexical = LexicalWrite {
        lexical: &previous.lexical,
        dir,
        bytes: candidates.iter().map(|f| f.size).sum(),
        rebuild: report.rebuilt.is_some(),
        open: None,
        vectors: Vec::new(),
    };
    let mut read = read_changed(
        Reading {
            candidates: &candidates,
            files: &files,
            embedder,
            history: history.as_ref(),
            history_dir: &dir.join("history"),
        },
        &mut lexical,
        progress,
    );
    let prepared = settle(
        &mut read,
        &mut files,
        &mut skipped_now,
        &mut removed,
        &mut report,
    )?;
    let skipped_moved = skipped_now != previous.skipped;
    if read.stopped {
        return Err(IndexError::Cancelled);
    }
    // Nothing to index: the chunks, vectors and commits stay as they are, unwritten (a tantivy
    // commit alone was a dozen fsyncs). Files only touched get their new mtime recorded, so
    // that the next run does not read them again.
    if prepared.is_empty() && removed.is_empty() && history.is_none() && report.rebuilt.is_none() {
        if progress(Progress::Committing).is_break() {
            return Err(IndexError::Cancelled);
        }
        let meta = header(embedder, &files, &mut report);
        // A lost paths list or stamps list (both drawn from the table) is written again.
        let lists_lost = [store::STAMPS, store::PATHS_LIST]
            .iter()
            .any(|name| !dir.join(name).is_file());
        if !read.mtime_only.is_empty() || skipped_moved || lists_lost {
            store::write_files(dir, &files, &skipped_now, &meta)?;
        } else {
            store::write_json(&dir.join("meta.json"), &meta)?;
        }
        report.index_ms = (started.elapsed().as_millis() as u64).saturating_sub(report.walk_ms);
        return Ok(report);
    }
    let changes = Changes {
        prepared,
        removed,
        history: read.history.take(),
    };
    write_changes(
        lexical,
        &previous.vectors,
        &mut files,
        changes,
        progress,
        &mut report,
    )?;
    store::write_files(
        dir,
        &files,
        &skipped_now,
        &header(embedder, &files, &mut report),
    )?;
    // The table of format 1, replaced by `files.bin`.
    let _ = std::fs::remove_file(dir.join("files.json"));
    // The graph is a cache (vectors added after its build are searched exactly): a stopped
    // update leaves it for the next one. A store too small for a graph, with none to remove,
    // is not loaded at all.
    if progress(Progress::Graph).is_continue()
        && (previous.vectors.stored_records()? >= config.hnsw_min_points
            || crate::graph::exists(dir))
        && let Some(loaded) = previous.vectors.load()?
    {
        crate::graph::refresh(dir, &loaded, config.hnsw_min_points, &mut || {
            progress(Progress::Graph).is_continue()
        })?;
    }
    report.index_ms = (started.elapsed().as_millis() as u64).saturating_sub(report.walk_ms);
    Ok(report)
}

/// What the last run left: its file table and skipped files (empty when the index is rebuilt),
/// and the lexical and vector stores.
struct Previous {
    files: Files,
    skipped: Skipped,
    lexical: Lexical,
    vectors: VectorStore,
}

impl Previous {
    /// Opens the index in `dir`; another format or another embedder is rebuilt in full, and
    /// `report.rebuilt` says why.
    fn open(
        dir: &Path,
        embedder: &dyn Embedder,
        forced: bool,
        report: &mut UpdateReport,
    ) -> Result<Previous, IndexError> {
        let meta: Option<Meta> = store::read_json(&dir.join("meta.json"))?;
        // A table of another format is not read: the format check below rebuilds.
        let (mut files, mut skipped): (Files, Skipped) = match &meta {
            Some(meta) if meta.version == FORMAT_VERSION => (
                store::read_files(dir)?.unwrap_or_default(),
                store::read_skipped(dir),
            ),
            _ => Default::default(),
        };
        let rebuild_reason = match &meta {
            Some(meta) if meta.version != FORMAT_VERSION => {
                Some(format!("index format {} → {FORMAT_VERSION}", meta.version))
            }
            Some(meta) if meta.embedder != embedder.id() => Some(format!(
                "embedder changed from {} to {}",
                meta.embedder,
                embedder.id()
            )),
            None if dir.join(store::FILES_TABLE).exists() => {
                Some("the index header was missing".to_string())
            }
            _ if forced => Some("a rebuild was asked for".to_string()),
            _ => None,
        };
        let lexical_dir = dir.join("lexical");
        if meta.as_ref().is_some_and(|m| m.version != FORMAT_VERSION) && lexical_dir.exists() {
            // Another format's schema cannot be opened with this one; it is rebuilt in full.
            std::fs::remove_dir_all(&lexical_dir)
                .map_err(|err| IndexError::io(&lexical_dir, err))?;
        }
        let lexical = Lexical::open_or_create(&lexical_dir)?;
        let vectors = VectorStore::new(dir, &embedder.id(), embedder.dim());
        if let Some(reason) = rebuild_reason {
            vectors.clear()?;
            files.clear();
            skipped.clear();
            report.rebuilt = Some(reason);
        }
        Ok(Previous {
            files,
            skipped,
            lexical,
            vectors,
        })
    }
}

/// Which walked files to read, which indexed ones are gone, and the skipped files that stay
/// skipped.
struct Planned<'w> {
    candidates: Vec<&'w WalkedFile>,
    removed: Vec<String>,
    skipped_now: Skipped,
}

/// Size + mtime first; the hash is only computed when they moved. Files skipped before
/// (binary, minified) are not read again either while their size and mtime stand.
fn plan_reads<'w>(
    walked: &'w [WalkedFile],
    files: &Files,
    skipped_before: &Skipped,
    under: Option<&str>,
) -> Planned<'w> {
    let scope = under
        .map(|u| u.trim_matches('/').to_string())
        .filter(|u| !u.is_empty() && u != ".");
    let in_scope = |path: &str| match &scope {
        Some(prefix) => path == prefix || path.starts_with(&format!("{prefix}/")),
        None => true,
    };
    let seen: HashSet<&str> = walked.iter().map(|f| f.path.as_str()).collect();
    let removed: Vec<String> = files
        .keys()
        .filter(|path| in_scope(path) && !seen.contains(path.as_str()))
        .cloned()
        .collect();
    let mut skipped_now = Skipped::new();
    let mut candidates: Vec<&WalkedFile> = Vec::new();
    for f in walked {
        let stamp = (f.size, f.mtime_ns);
        if skipped_before.get(&f.path) == Some(&stamp) {
            skipped_now.insert(f.path.clone(), stamp);
        } else if files
            .get(&f.path)
            .is_none_or(|e| (e.size, e.mtime_ns) != stamp)
        {
            candidates.push(f);
        }
    }
    // Skipped files outside the walked scope stay recorded.
    skipped_now.extend(
        skipped_before
            .iter()
            .filter(|(path, _)| !in_scope(path))
            .map(|(path, stamp)| (path.clone(), *stamp)),
    );
    Planned {
        candidates,
        removed,
        skipped_now,
    }
}

/// The history thread's result: the commits read and staged (`None`: stopped) with how long
/// that took (ms), or its panic.
type HistoryRead = std::thread::Result<(Result<Option<history::Staged>, IndexError>, u64)>;

/// What reading the changed files (and the commit history beside them) gave.
struct Read {
    prepared: Vec<Result<Prepared, IndexError>>,
    /// Each skipped file with its size and mtime (none when it was gone before it was read).
    skipped: Vec<(String, Option<Stamp>)>,
    /// Files whose content is the same with a new mtime.
    mtime_only: Vec<(String, u128)>,
    files_read: usize,
    history: Option<HistoryRead>,
    /// The caller asked to stop.
    stopped: bool,
}

/// Folds what was read into the run's state: the prepared files (sorted by path; the first
/// error fails the update), skipped files recorded with their stamps (and removed from the
/// index when they were in it), files whose content only got a new mtime. `read.mtime_only`
/// is left in place for the caller to see whether the table must be written.
fn settle(
    read: &mut Read,
    files: &mut Files,
    skipped_now: &mut Skipped,
    removed: &mut Vec<String>,
    report: &mut UpdateReport,
) -> Result<Vec<Prepared>, IndexError> {
    let mut prepared: Vec<Prepared> = Vec::new();
    for result in std::mem::take(&mut read.prepared) {
        prepared.push(result?);
    }
    prepared.sort_by(|a, b| a.path.cmp(&b.path));
    report.files_read = read.files_read;
    report.files_skipped += read.skipped.len();
    for (path, stamp) in &read.skipped {
        if let Some(stamp) = stamp {
            skipped_now.insert(path.clone(), *stamp);
        }
    }
    for (path, mtime) in &read.mtime_only {
        if let Some(entry) = files.get_mut(path) {
            entry.mtime_ns = *mtime;
            report.files_unchanged += 1;
        }
    }
    // Files indexed before that are now skipped (binary, generated) leave the index.
    removed.extend(
        std::mem::take(&mut read.skipped)
            .into_iter()
            .map(|(path, _)| path)
            .filter(|path| files.contains_key(path)),
    );
    Ok(prepared)
}

/// What [`read_changed`] reads: the changed files (in path order) against the previous table,
/// and the planned commits with where their index lives.
struct Reading<'a> {
    candidates: &'a [&'a WalkedFile],
    files: &'a Files,
    embedder: &'a dyn Embedder,
    history: Option<&'a history::Pending>,
    history_dir: &'a Path,
}

/// Reads, chunks and embeds the candidates on worker threads while one more thread reads and
/// stages the commit history. This thread takes each file's outcome in path order and hands
/// the changed ones to `lexical` at once, so tantivy indexes beside the readers (after them,
/// it was a third of a cold build's wall time). The caller's `progress` runs on this thread
/// only: files first, then the commits still being read (their count only grows).
fn read_changed(
    reading: Reading<'_>,
    lexical: &mut LexicalWrite<'_>,
    progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Read {
    let Reading {
        candidates,
        files,
        embedder,
        history,
        history_dir,
    } = reading;
    let total = candidates.len();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    // Each worker sends every file it finishes (and drops its sender when it ends, also by
    // panicking), so this thread hears of it at once: a 20 ms polling sleep here was a
    // quarter of a one-file re-index.
    let (finished, outcomes) = std::sync::mpsc::channel::<(usize, Result<Outcome, IndexError>)>();
    // One history reader, as libgit2 serialises reads of a pack behind its lock (on
    // rust-analyzer, two readers beside the file workers were no faster than reading after
    // them).
    let history_done = AtomicUsize::new(0);
    let n_history = history.map_or(0, history::Pending::len);
    let worker = Worker {
        candidates,
        files,
        embedder,
        stop: &stop,
        next: &next,
    };
    let mut read = Read {
        prepared: Vec::new(),
        skipped: Vec::new(),
        mtime_only: Vec::new(),
        files_read: 0,
        history: None,
        stopped: false,
    };
    let history_read = std::thread::scope(|s| {
        let history_reader = history.map(|pending| {
            s.spawn(|| {
                let started = Instant::now();
                let staged =
                    pending
                        .read(1, &history_done, &stop)
                        .and_then(|records| match records {
                            Some(records) => pending.stage(history_dir, records),
                            None => Ok(None),
                        });
                (staged, started.elapsed().as_millis() as u64)
            })
        });
        for _ in 0..threads {
            let finished = finished.clone();
            let worker = &worker;
            s.spawn(move || worker.run(&finished));
        }
        drop(finished);
        // Outcomes that arrived before an earlier file's, by candidate index.
        let mut waiting: BTreeMap<usize, Result<Outcome, IndexError>> = BTreeMap::new();
        let mut in_order = 0;
        let mut done = 0;
        let mut last = usize::MAX;
        loop {
            if done != last {
                if progress(Progress::Processed { done, total }).is_break() {
                    stop.store(true, Ordering::Relaxed);
                }
                last = done;
            }
            if done >= total || stop.load(Ordering::Relaxed) {
                break;
            }
            match outcomes.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok((i, outcome)) => {
                    done += 1;
                    waiting.insert(i, outcome);
                    while let Some(outcome) = waiting.remove(&in_order) {
                        take_outcome(candidates[in_order], outcome, files, lexical, &mut read);
                        in_order += 1;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                // Every worker has ended (a panicking one never sends its file).
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        // Those behind a file a panicking worker never sent.
        for (i, outcome) in std::mem::take(&mut waiting) {
            take_outcome(candidates[i], outcome, files, lexical, &mut read);
        }
        let history_reader = history_reader?;
        let mut last = usize::MAX;
        loop {
            let n = history_done.load(Ordering::Relaxed);
            if n != last && !stop.load(Ordering::Relaxed) {
                let commits = Progress::History {
                    done: n,
                    total: n_history,
                };
                if progress(commits).is_break() {
                    stop.store(true, Ordering::Relaxed);
                }
                last = n;
            }
            if history_reader.is_finished() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Some(history_reader.join())
    });
    read.history = history_read;
    read.stopped = stop.into_inner();
    read
}

/// Files one file's outcome into `read`; a changed file's chunks go to `lexical` (a failure
/// there fails the update like a failed read).
fn take_outcome(
    file: &WalkedFile,
    outcome: Result<Outcome, IndexError>,
    files: &Files,
    lexical: &mut LexicalWrite<'_>,
    read: &mut Read,
) {
    if !matches!(outcome, Ok(Outcome::Gone)) {
        read.files_read += 1;
    }
    match outcome {
        Ok(Outcome::Changed(mut prepared)) => {
            let added = lexical.add(files, &mut prepared).map(|()| *prepared);
            read.prepared.push(added);
        }
        Ok(Outcome::SameContent) => read.mtime_only.push((file.path.clone(), file.mtime_ns)),
        Ok(outcome @ (Outcome::Skipped | Outcome::Gone)) => {
            let stamp = matches!(outcome, Outcome::Skipped).then_some((file.size, file.mtime_ns));
            read.skipped.push((file.path.clone(), stamp));
        }
        Err(err) => read.prepared.push(Err(err)),
    }
}

/// What each file-reading thread shares: the work list and the next file to take.
struct Worker<'a> {
    candidates: &'a [&'a WalkedFile],
    files: &'a Files,
    embedder: &'a dyn Embedder,
    stop: &'a AtomicBool,
    next: &'a AtomicUsize,
}

impl Worker<'_> {
    /// Takes the next file until none is left or the update stops; `finished` hears of each
    /// with its index.
    fn run(&self, finished: &std::sync::mpsc::Sender<(usize, Result<Outcome, IndexError>)>) {
        while !self.stop.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = self.candidates.get(i) else {
                break;
            };
            let outcome = prepare(file, self.files.get(&file.path), self.embedder);
            if finished.send((i, outcome)).is_err() {
                break;
            }
        }
    }
}

/// The lexical writer of a run, opened at the first chunk to add (or path to delete) with the
/// first free chunk id. Files are added in path order as they are read, their vectors kept
/// for the vector write after the lexical commit.
struct LexicalWrite<'a> {
    lexical: &'a Lexical,
    dir: &'a Path,
    /// The changed files' source size (the writer's memory budget).
    bytes: u64,
    /// Everything is rebuilt: the writer starts by deleting every chunk.
    rebuild: bool,
    open: Option<OpenWriter>,
    /// The added chunks' vectors, encoded for the vector store ([`vectors::encode`]).
    vectors: Vec<u8>,
}

struct OpenWriter {
    writer: IndexWriter,
    fields: Fields,
    next_id: u64,
    /// No chunk was committed before (or all are deleted): nothing to delete per file.
    starts_empty: bool,
}

impl LexicalWrite<'_> {
    fn writer(&mut self, files: &Files) -> Result<&mut OpenWriter, IndexError> {
        if let Some(open) = self.open.take() {
            return Ok(self.open.insert(open));
        }
        let writer = self.lexical.writer(self.bytes)?;
        // With no chunks committed before, there is nothing to delete per file: skipping those
        // deletes saves the commit from resolving a term query per file.
        let starts_empty = self.rebuild || self.lexical.committed_docs()? == 0;
        if self.rebuild {
            writer.delete_all_documents()?;
        }
        // Chunk ids are never reused: the first free one is recorded in the lexical commit that
        // adds chunks (vectors are written after it), so no chunk or vector outlives its
        // record. Indexes written before kept it in a file of its own, `next_id`.
        let next_id = self
            .lexical
            .committed_next_id()?
            .max(store::read_next_id(self.dir)?)
            .max(
                files
                    .values()
                    .flat_map(|f| f.chunks.iter().copied())
                    .max()
                    .map_or(0, |m| m + 1),
            );
        Ok(self.open.insert(OpenWriter {
            writer,
            fields: self.lexical.fields(),
            next_id,
            starts_empty,
        }))
    }

    /// Adds a read file's chunks under fresh ids (recorded in its entry); its chunk texts are
    /// dropped and its vectors encoded for the vector write.
    fn add(&mut self, files: &Files, p: &mut Prepared) -> Result<(), IndexError> {
        // Out of `self` while the writer is borrowed (an error fails the whole update).
        let mut encoded = std::mem::take(&mut self.vectors);
        let open = self.writer(files)?;
        if !open.starts_empty {
            open.writer.delete_term(path_term(&open.fields, &p.path));
        }
        let key = file_key(&p.path);
        for ((chunk, text), vector) in p.chunks.iter_mut().zip(std::mem::take(&mut p.vectors)) {
            chunk.chunk_id = open.next_id;
            open.next_id += 1;
            p.entry.chunks.push(chunk.chunk_id);
            open.writer
                .add_document(document(&open.fields, &p.path, chunk, text))?;
            vectors::encode(chunk.chunk_id, key, &vector, &mut encoded);
        }
        p.chunks = Vec::new();
        self.vectors = encoded;
        Ok(())
    }
}

/// What an update changes: the files read (their chunks already given to the lexical
/// writer), the files gone, and what the history thread gave.
struct Changes {
    prepared: Vec<Prepared>,
    removed: Vec<String>,
    history: Option<HistoryRead>,
}

/// Writes `changes`: the removed files' deletes and one lexical commit (that records the next
/// free chunk id), then vectors, then the commit history staged beside the files; `files` is
/// updated to match.
fn write_changes(
    mut lexical: LexicalWrite<'_>,
    vectors: &VectorStore,
    files: &mut Files,
    changes: Changes,
    progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    report: &mut UpdateReport,
) -> Result<(), IndexError> {
    let mut dead: Vec<u64> = Vec::new();
    if !changes.removed.is_empty() {
        let open = lexical.writer(files)?;
        for path in &changes.removed {
            open.writer.delete_term(path_term(&open.fields, path));
        }
    }
    for path in &changes.removed {
        if let Some(entry) = files.remove(path) {
            report.chunks_removed += entry.chunks.len();
            dead.extend(entry.chunks);
        }
    }
    report.files_removed = changes.removed.len();
    for p in changes.prepared {
        if let Some(old) = files.get(&p.path) {
            report.chunks_removed += old.chunks.len();
            dead.extend(old.chunks.iter().copied());
        }
        report.chunks_added += p.entry.chunks.len();
        report.files_changed += 1;
        files.insert(p.path, p.entry);
    }
    // Commit history staged beside the files, dropped uncommitted when the update stops.
    let history = match changes.history {
        Some(read) => {
            let (staged, elapsed_ms) =
                read.map_err(|_| IndexError::Engine("the commit history reader panicked".into()))?;
            report.history_ms = elapsed_ms;
            Some(staged?.ok_or(IndexError::Cancelled)?)
        }
        None => None,
    };
    // The last point to stop: nothing is on disk yet (the writers are dropped uncommitted).
    if progress(Progress::Committing).is_break() {
        return Err(IndexError::Cancelled);
    }
    // The history index stands apart from the files' stores: its commit (a segment flush, a
    // tenth of a second for 3,000 commits) runs beside theirs instead of after them.
    std::thread::scope(|s| {
        let history = history.map(|staged| s.spawn(move || staged.commit()));
        let files_committed = commit_files(lexical, vectors, files, &dead, report);
        let history_committed = history.map(|writer| {
            writer
                .join()
                .map_err(|_| IndexError::Engine("the commit history writer panicked".into()))
        });
        files_committed?;
        if let Some(added) = history_committed {
            report.commits_added = added??;
        }
        Ok(())
    })
}

/// Commits the lexical index, then the vectors (a vector whose chunk the lexical index no
/// longer has is dropped at query time, so a kill between the two serves no stale chunk).
fn commit_files(
    mut lexical: LexicalWrite<'_>,
    vectors: &VectorStore,
    files: &Files,
    dead: &[u64],
    report: &UpdateReport,
) -> Result<(), IndexError> {
    // A run that only rebuilt an empty tree still commits (the deletes of everything).
    if report.rebuilt.is_some() {
        lexical.writer(files)?;
    }
    if let Some(mut open) = lexical.open.take() {
        let mut prepared_commit = open.writer.prepare_commit()?;
        prepared_commit.set_payload(&open.next_id.to_string());
        prepared_commit.commit()?;
        open.writer.wait_merging_threads()?;
    }
    vectors.append_encoded(&lexical.vectors)?;
    vectors.tombstone(dead)?;
    vectors.compact_if_stale()?;
    Ok(())
}

/// The index header a run ends with (its `indexed_at` is the run's time).
fn header(embedder: &dyn Embedder, files: &Files, report: &mut UpdateReport) -> Meta {
    report.source_bytes = files.values().map(|f| f.size).sum();
    Meta {
        version: FORMAT_VERSION,
        embedder: embedder.id(),
        dim: embedder.dim(),
        files: files.len(),
        chunks: files.values().map(|f| f.chunks.len()).sum(),
        indexed_at: time::OffsetDateTime::now_utc().unix_timestamp(),
        source_bytes: report.source_bytes,
    }
}

enum Outcome {
    Changed(Box<Prepared>),
    SameContent,
    /// Binary or minified: not indexed.
    Skipped,
    /// Deleted between the walk and the read: the next run removes it.
    Gone,
}

fn prepare(
    file: &WalkedFile,
    old: Option<&FileEntry>,
    embedder: &dyn Embedder,
) -> Result<Outcome, IndexError> {
    let bytes = match std::fs::read(&file.abs) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Gone),
        Err(err) => return Err(IndexError::io(&file.abs, err)),
    };
    let hash = content_hash(&bytes);
    if old.is_some_and(|old| old.hash == hash) {
        return Ok(Outcome::SameContent);
    }
    if walk::is_binary(&bytes) {
        return Ok(Outcome::Skipped);
    }
    let text = String::from_utf8_lossy(&bytes);
    // Generated code is indexed (a change to it must be findable) and ranked lower; minified
    // code is not readable as code at all.
    if walk::looks_minified(&text) {
        return Ok(Outcome::Skipped);
    }
    let generated = walk::looks_generated(&text);
    let chunked = chunk_file(file.language, &text);
    let texts: Vec<String> = chunked
        .chunks
        .iter()
        .map(|c| match &c.symbol {
            Some(symbol) => format!("{}\n{symbol}\n{}", file.path, c.text),
            None => format!("{}\n{}", file.path, c.text),
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs)?;
    let language = file.language.as_str().to_string();
    let chunks = chunked
        .chunks
        .into_iter()
        .map(|c| {
            (
                StoredChunk {
                    path: file.path.clone(),
                    chunk_id: 0,
                    start_line: c.start_line,
                    end_line: c.end_line,
                    language: language.clone(),
                    kind: c.kind.to_string(),
                    symbol: c.symbol,
                    generated,
                    address: None,
                },
                c.text,
            )
        })
        .collect();
    let outline = Outline {
        symbols: chunked
            .symbols
            .into_iter()
            .map(|s| SymbolEntry {
                name: s.name,
                kind: s.kind.to_string(),
                line: s.line,
                end_line: s.end_line,
                parent: s.parent,
            })
            .collect(),
        imports: chunked.imports,
    };
    let entry = FileEntry::new(file.size, file.mtime_ns, hash, language, &outline);
    Ok(Outcome::Changed(Box::new(Prepared {
        path: file.path.clone(),
        entry,
        chunks,
        vectors,
    })))
}

fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Reads the file table (`None` before the first run).
pub(crate) fn load_files(dir: &Path) -> Result<Option<Files>, IndexError> {
    store::read_files(dir)
}

pub(crate) fn languages(files: &Files) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for entry in files.values() {
        *out.entry(entry.language.clone()).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::HashedEmbedder;

    /// Commits to the repository at `root` (created when missing) one file `f{i}.rs` per `i`.
    fn commit_files(root: &Path, files: std::ops::Range<usize>) {
        let repo = git2::Repository::init(root).unwrap();
        let signature = git2::Signature::now("T", "t@example.com").unwrap();
        let mut parent = repo.head().ok().and_then(|head| head.target());
        for i in files {
            let name = format!("f{i}.rs");
            std::fs::write(root.join(&name), format!("pub fn f{i}() {{}}\n")).unwrap();
            let mut index = repo.index().unwrap();
            index.add_path(Path::new(&name)).unwrap();
            index.write().unwrap();
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let parents: Vec<git2::Commit> = parent
                .map(|oid| repo.find_commit(oid).unwrap())
                .into_iter()
                .collect();
            let parents: Vec<&git2::Commit> = parents.iter().collect();
            let message = format!("add {name}");
            parent = Some(
                repo.commit(
                    Some("HEAD"),
                    &signature,
                    &signature,
                    &message,
                    &tree,
                    &parents,
                )
                .unwrap(),
            );
        }
    }

    /// Runs an update that stops at the first report `stop_at` accepts; returns what it saw.
    fn update_until(
        config: &IndexConfig,
        mut stop_at: impl FnMut(&Progress) -> bool,
    ) -> (Result<UpdateReport, IndexError>, Vec<Progress>) {
        let mut seen = Vec::new();
        let result = update(config, None, &HashedEmbedder, &mut |progress| {
            seen.push(progress);
            if stop_at(&progress) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        (result, seen)
    }

    fn n_commits(config: &IndexConfig) -> u64 {
        history::status(&config.dir.join("history"))
            .unwrap()
            .map_or(0, |(n, _)| n)
    }

    /// Every file under `dir` but the header and the write lock (which every run takes) with
    /// its size and mtime: what a run rewrote.
    fn written(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(at) = stack.pop() {
            for entry in std::fs::read_dir(&at).unwrap().flatten() {
                let meta = entry.metadata().unwrap();
                if meta.is_dir() {
                    stack.push(entry.path());
                } else if at != dir
                    || !["meta.json", "write.lock"].contains(&&*entry.file_name().to_string_lossy())
                {
                    let path = entry
                        .path()
                        .strip_prefix(dir)
                        .unwrap()
                        .display()
                        .to_string();
                    out.insert(path, (meta.len(), meta.modified().unwrap()));
                }
            }
        }
        out
    }

    #[test]
    fn an_unchanged_tree_is_not_read_or_rewritten_and_an_edit_rereads_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        commit_files(root, 0..4);
        std::fs::write(root.join("blob.rs"), b"\0\x01binary\0").unwrap();
        let config = IndexConfig::new(root);
        let run = || update_until(&config, |_| false).0.unwrap();
        let first = run();
        assert_eq!(
            (first.files_read, first.files_skipped, first.commits_added),
            (5, 1, 4),
            "{first:?}"
        );
        let before = written(&config.dir);

        // Nothing changed: no file is read (the binary one neither), and only the header is
        // rewritten.
        let again = run();
        assert_eq!(
            (
                again.files_read,
                again.files_unchanged,
                again.files_skipped,
                again.chunks_added
            ),
            (0, 4, 1, 0),
            "{again:?}"
        );
        assert_eq!(written(&config.dir), before);

        // Touched, same bytes: read once to learn that, nothing re-indexed; then not again.
        let touched = root.join("f1.rs");
        std::fs::File::options()
            .write(true)
            .open(&touched)
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let report = run();
        assert_eq!(
            (report.files_read, report.files_changed, report.chunks_added),
            (1, 0, 0),
            "{report:?}"
        );
        let after_touch = written(&config.dir);
        // The chunks, vectors and commits stay; the file table and its stamps take the mtime.
        let lexical = |w: &BTreeMap<String, _>| {
            w.iter()
                .filter(|(path, _)| !["files.bin", "stamps.bin"].contains(&path.as_str()))
                .map(|(p, v)| (p.clone(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(lexical(&after_touch), lexical(&before));
        assert_eq!(run().files_read, 0);

        // One file edited: only it is read, chunked and embedded again.
        std::fs::write(
            root.join("f2.rs"),
            "pub fn f2() {}\n\npub fn g2() -> u32 {\n    2\n}\n",
        )
        .unwrap();
        let edited = run();
        assert_eq!(
            (
                edited.files_read,
                edited.files_changed,
                edited.files_unchanged
            ),
            (1, 1, 3),
            "{edited:?}"
        );
        assert!(
            edited.chunks_added >= 1 && edited.chunks_removed >= 1,
            "{edited:?}"
        );
        let status = crate::status(&config).unwrap();
        assert!(status.healthy, "{status:?}");
    }

    #[test]
    fn every_phase_stops_when_asked_and_history_counts_toward_a_total() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        commit_files(root, 0..6);
        let config = IndexConfig::new(root);

        // Stopped in the commit history: nothing is written, history included.
        let (result, seen) = update_until(&config, |p| matches!(p, Progress::History { .. }));
        assert_eq!(result.unwrap_err().code(), "CANCELLED");
        assert_eq!(
            seen[0],
            Progress::Walked {
                files: 6,
                changed: 6,
                commits: 6
            }
        );
        assert!(
            seen.iter()
                .any(|p| matches!(p, Progress::History { total: 6, .. })),
            "{seen:?}"
        );
        assert!(!seen.contains(&Progress::Committing), "{seen:?}");
        assert!(!crate::exists(&config));
        assert_eq!(n_commits(&config), 0);

        // Stopped just before the write: still nothing.
        let (result, _) = update_until(&config, |p| *p == Progress::Committing);
        assert_eq!(result.unwrap_err().code(), "CANCELLED");
        assert!(!crate::exists(&config));
        assert_eq!(n_commits(&config), 0);

        // Run through: the commits read (concurrently with the files) count up to the total.
        let (result, seen) = update_until(&config, |_| false);
        let report = result.unwrap();
        assert_eq!((report.files_changed, report.commits_added), (6, 6));
        let history: Vec<usize> = seen
            .iter()
            .filter_map(|p| match p {
                Progress::History { done, total: 6 } => Some(*done),
                _ => None,
            })
            .collect();
        assert!(history.windows(2).all(|w| w[0] < w[1]), "{history:?}");
        assert_eq!(history.last(), Some(&6), "{seen:?}");
        assert_eq!(n_commits(&config), 6);

        // Stopped after the write, at the graph (a cache): the update stands.
        commit_files(root, 6..7);
        let (result, seen) = update_until(&config, |p| *p == Progress::Graph);
        assert_eq!(result.unwrap().commits_added, 1);
        assert_eq!(seen.last(), Some(&Progress::Graph));
        assert_eq!(n_commits(&config), 7);
    }

    /// Issue 28: a cancel while the vector graph is built stops the build (the graph is a
    /// cache, the update stands and releases the index), not only a cancel before it.
    #[test]
    fn a_stop_during_the_graph_build_abandons_the_graph() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        commit_files(root, 0..8);
        let mut config = IndexConfig::new(root);
        config.hnsw_min_points = 2;
        let mut graph_calls = 0;
        let (result, seen) = update_until(&config, |p| {
            graph_calls += usize::from(*p == Progress::Graph);
            graph_calls == 2
        });
        assert_eq!(result.unwrap().files_changed, 8);
        assert_eq!(
            seen.iter().filter(|p| **p == Progress::Graph).count(),
            2,
            "{seen:?}"
        );
        assert!(
            !crate::graph::exists(&config.dir),
            "the graph was abandoned"
        );
        assert!(!crate::store::WriteLock::is_held(&config.dir));
        // Run through, the graph is built.
        commit_files(root, 8..9);
        let (result, _) = update_until(&config, |_| false);
        result.unwrap();
        assert!(crate::graph::exists(&config.dir));
    }

    #[test]
    fn chunks_get_ids_in_path_order_and_new_commits_alone_leave_the_chunks_unwritten() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        commit_files(root, 0..24);
        let config = IndexConfig::new(root);
        let first = update_until(&config, |_| false).0.unwrap();
        assert_eq!((first.files_changed, first.commits_added), (24, 24));
        // Files are handed to the lexical writer as the workers finish them, yet in path order:
        // the same ids as one thread would give.
        let files = store::read_files(&config.dir).unwrap().unwrap();
        let ids: Vec<u64> = files.values().flat_map(|f| f.chunks.clone()).collect();
        assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>());

        // A commit that changes no file: only the history is written.
        let repo = git2::Repository::open(root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let signature = git2::Signature::now("T", "t@example.com").unwrap();
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            "empty",
            &head.tree().unwrap(),
            &[&head],
        )
        .unwrap();
        let lexical = |dir: &Path| {
            written(dir)
                .into_iter()
                .filter(|(path, _)| !path.starts_with("history"))
                .collect::<Vec<_>>()
        };
        let before = lexical(&config.dir);
        let again = update_until(&config, |_| false).0.unwrap();
        assert_eq!((again.files_read, again.commits_added), (0, 1), "{again:?}");
        assert_eq!(n_commits(&config), 25);
        let after: Vec<_> = lexical(&config.dir)
            .into_iter()
            .filter(|(path, _)| !["files.bin", "stamps.bin"].contains(&path.as_str()))
            .collect();
        let before: Vec<_> = before
            .into_iter()
            .filter(|(path, _)| !["files.bin", "stamps.bin"].contains(&path.as_str()))
            .collect();
        assert_eq!(after, before);
    }
}
