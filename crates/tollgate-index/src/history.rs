//! The history channel: one tantivy document per commit (message and touched paths), built with
//! a git2 revwalk over the commits reachable from `HEAD` and updated incrementally (only the
//! commits since the last indexed head). It answers `git_commit_retrieval` and, mapped to the
//! files each commit touched (max over commits), is one input of file ranking.

use std::collections::HashMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use git2::{ObjectType, Oid, Repository, Sort, Tree, TreeEntry};
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::{Index, ReloadPolicy, TantivyDocument, Term};

use crate::error::IndexError;
use crate::tokenize::{CODE_TOKENIZER, CodeTokenizer, tokens};

/// Commits touching more files than this are bulk changes (reformatting, vendoring): they are
/// kept for `git_commit_retrieval` but say nothing about which file a query is about.
const MAX_FILES_FOR_RANKING: usize = 30;
/// Paths stored per commit.
const MAX_FILES_STORED: usize = 200;

#[derive(Debug, Clone, Copy)]
struct Fields {
    sha: Field,
    message: Field,
    paths_text: Field,
    author: Field,
    time: Field,
    files: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(CODE_TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let fields = Fields {
        sha: b.add_text_field("sha", STRING | STORED),
        message: b.add_text_field(
            "message",
            TextOptions::default()
                .set_indexing_options(indexing.clone())
                .set_stored(),
        ),
        paths_text: b.add_text_field(
            "paths_text",
            TextOptions::default().set_indexing_options(indexing),
        ),
        author: b.add_text_field("author", STORED),
        time: b.add_i64_field(
            "time",
            NumericOptions::default()
                .set_indexed()
                .set_stored()
                .set_fast(),
        ),
        files: b.add_text_field("files", STORED),
    };
    (b.build(), fields)
}

/// A commit as `git_commit_retrieval` returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitHit {
    pub sha: String,
    pub message: String,
    /// `Name <email>`.
    pub author: String,
    /// Seconds since the epoch.
    pub time: i64,
    pub files: Vec<String>,
    /// BM25 score relative to the best hit (0–1].
    pub score: f32,
}

/// Filters of a commit search, applied before the cut.
#[derive(Debug, Clone, Default)]
pub struct CommitFilter {
    /// Only commits at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Case-insensitive substring of the author's name or email.
    pub author: Option<String>,
}

fn open(dir: &Path, create: bool) -> Result<Option<(Index, Fields)>, IndexError> {
    let (schema, fields) = schema();
    let index = if create {
        std::fs::create_dir_all(dir).map_err(|err| IndexError::io(dir, err))?;
        let directory =
            MmapDirectory::open(dir).map_err(|err| IndexError::Engine(err.to_string()))?;
        Index::open_or_create(directory, schema)?
    } else {
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        Index::open_in_dir(dir)?
    };
    index.tokenizers().register(CODE_TOKENIZER, CodeTokenizer);
    Ok(Some((index, fields)))
}

/// The commits an update will index, found before any is read: their number is the history
/// phase's progress total.
pub(crate) struct Pending {
    /// The repository's git directory: each reading thread opens its own handle.
    git_dir: PathBuf,
    head: Oid,
    /// Newest first, at most `max_commits`.
    commits: Vec<Oid>,
    incremental: bool,
}

/// Plans bringing the commit index at `dir` up to `HEAD` of the repository containing `root`:
/// the commits since the last indexed head, or at most `max_commits` (newest first) on a
/// rebuild. `None` when there is nothing to do (no repository, no commit, already at `HEAD`).
/// Reads only.
pub(crate) fn plan(
    root: &Path,
    dir: &Path,
    max_commits: usize,
) -> Result<Option<Pending>, IndexError> {
    let Ok(repo) = Repository::discover(root) else {
        return Ok(None);
    };
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()).map(|c| c.id()) else {
        return Ok(None);
    };
    let previous = match open(dir, false)? {
        Some((index, _)) => index
            .load_metas()?
            .payload
            .and_then(|p| Oid::from_str(&p).ok()),
        None => None,
    };
    if previous == Some(head) {
        return Ok(None);
    }
    let incremental = previous.is_some_and(|old| {
        repo.find_commit(old).is_ok() && repo.graph_descendant_of(head, old).unwrap_or(false)
    });
    let commits = {
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        walk.push(head)?;
        if incremental && let Some(old) = previous {
            walk.hide(old)?;
        }
        walk.take(max_commits).collect::<Result<Vec<Oid>, _>>()?
    };
    Ok(Some(Pending {
        git_dir: repo.path().to_path_buf(),
        head,
        commits,
        incremental,
    }))
}

/// Commits indexed but not yet committed: [`Staged::commit`] makes them visible, dropping them
/// discards them.
pub(crate) struct Staged {
    writer: tantivy::IndexWriter,
    head: Oid,
    added: usize,
}

/// What one commit contributes: read from git by [`Pending::read`], written by
/// [`Pending::stage`].
pub(crate) struct CommitRecord {
    sha: String,
    message: String,
    author: String,
    time: i64,
    files: Vec<String>,
}

impl Pending {
    /// How many commits [`Pending::stage`] indexes.
    pub(crate) fn len(&self) -> usize {
        self.commits.len()
    }

    /// Reads the planned commits (message, author, the paths each changed) on `threads`
    /// threads, each with its own repository handle ([`changed_paths`] reads the trees that
    /// differ from the parent's). Counts each commit read in `done`; stops early (`Ok(None)`)
    /// once `stop` is set.
    pub(crate) fn read(
        &self,
        threads: usize,
        done: &AtomicUsize,
        stop: &AtomicBool,
    ) -> Result<Option<Vec<CommitRecord>>, IndexError> {
        // libgit2 re-hashes (SHA-1 with collision detection) every object it reads, a sixth of a
        // cold index's CPU on rust-analyzer; git itself trusts its object store on reads and
        // checks it in `fsck`. A process-wide libgit2 setting.
        git2::opts::strict_hash_verification(false);
        let slots: Vec<Mutex<Option<CommitRecord>>> =
            self.commits.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<IndexError>> = Mutex::new(None);
        std::thread::scope(|s| {
            for _ in 0..threads.max(1) {
                s.spawn(|| {
                    let repo = match Repository::open(&self.git_dir) {
                        Ok(repo) => repo,
                        Err(err) => {
                            *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(err.into());
                            stop.store(true, Ordering::Relaxed);
                            return;
                        }
                    };
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&oid) = self.commits.get(i) else {
                            break;
                        };
                        match read_commit(&repo, oid) {
                            Ok(record) => {
                                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(record);
                                done.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(err) => {
                                *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        if let Some(err) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(err);
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        Ok(Some(
            slots
                .into_iter()
                .filter_map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
                .collect(),
        ))
    }

    /// Writes `records` (from [`Pending::read`]) into an uncommitted writer.
    pub(crate) fn stage(
        self,
        dir: &Path,
        records: Vec<CommitRecord>,
    ) -> Result<Option<Staged>, IndexError> {
        let Some((index, f)) = open(dir, true)? else {
            return Ok(None);
        };
        let writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 30_000_000)?;
        if !self.incremental {
            writer.delete_all_documents()?;
        }
        let added = records.len();
        for record in records {
            let mut doc = TantivyDocument::default();
            let paths = record.files.join("\n");
            doc.add_text(f.sha, record.sha);
            doc.add_text(f.message, &record.message);
            doc.add_text(f.paths_text, &paths);
            doc.add_text(f.author, &record.author);
            doc.add_i64(f.time, record.time);
            doc.add_text(f.files, paths);
            writer.add_document(doc)?;
        }
        Ok(Some(Staged {
            writer,
            head: self.head,
            added,
        }))
    }
}

/// One commit's message, author, time and changed paths (against its first parent).
fn read_commit(repo: &Repository, oid: Oid) -> Result<CommitRecord, IndexError> {
    let commit = repo.find_commit(oid)?;
    let tree = commit.tree()?;
    let parent_tree = commit.parent(0).ok().map(|p| p.tree()).transpose()?;
    let mut files = Vec::new();
    changed_paths(repo, parent_tree.as_ref(), Some(&tree), "", &mut files)?;
    files.truncate(MAX_FILES_STORED);
    let signature = commit.author();
    Ok(CommitRecord {
        sha: oid_string(commit.id()),
        message: String::from_utf8_lossy(commit.message_bytes())
            .trim()
            .to_string(),
        author: format!(
            "{} <{}>",
            String::from_utf8_lossy(signature.name_bytes()),
            String::from_utf8_lossy(signature.email_bytes())
        ),
        time: commit.time().seconds(),
        files,
    })
}

/// Appends to `out` the paths (under `prefix`) that differ between two trees, either of which
/// may be absent, in git's order: the deltas of libgit2's `diff_tree_to_tree` without rename
/// detection, paths that are not UTF-8 left out. Only subtrees whose ids differ are read; the
/// libgit2 diff read both trees whole, 2 ms a commit on rust-analyzer, most of a cold index.
fn changed_paths(
    repo: &Repository,
    old: Option<&Tree>,
    new: Option<&Tree>,
    prefix: &str,
    out: &mut Vec<String>,
) -> Result<(), git2::Error> {
    let mut old_entries = old.into_iter().flat_map(Tree::iter).peekable();
    let mut new_entries = new.into_iter().flat_map(Tree::iter).peekable();
    loop {
        // Git orders a tree's entries by name, a subtree's name as if it ended in '/'.
        let order = match (old_entries.peek(), new_entries.peek()) {
            (None, None) => return Ok(()),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(a), Some(b)) => git_order(a, b),
        };
        match order {
            std::cmp::Ordering::Less => {
                let entry = old_entries.next().expect("peeked");
                whole_entry(repo, &entry, prefix, out)?;
            }
            std::cmp::Ordering::Greater => {
                let entry = new_entries.next().expect("peeked");
                whole_entry(repo, &entry, prefix, out)?;
            }
            std::cmp::Ordering::Equal => {
                let (a, b) = (
                    old_entries.next().expect("peeked"),
                    new_entries.next().expect("peeked"),
                );
                if a.id() == b.id() && a.filemode() == b.filemode() {
                    continue;
                }
                let Some(path) = entry_path(prefix, &b) else {
                    continue;
                };
                if a.kind() == Some(ObjectType::Tree) {
                    let (a, b) = (repo.find_tree(a.id())?, repo.find_tree(b.id())?);
                    changed_paths(repo, Some(&a), Some(&b), &path, out)?;
                } else {
                    // A change of type (file, link, submodule) is a deletion and an addition.
                    if a.filemode() & 0o170000 != b.filemode() & 0o170000 {
                        out.push(path.clone());
                    }
                    out.push(path);
                }
            }
        }
    }
}

/// Every path an entry present on one side only stands for (a subtree's files, recursively).
fn whole_entry(
    repo: &Repository,
    entry: &TreeEntry,
    prefix: &str,
    out: &mut Vec<String>,
) -> Result<(), git2::Error> {
    let Some(path) = entry_path(prefix, entry) else {
        return Ok(());
    };
    if entry.kind() == Some(ObjectType::Tree) {
        let tree = repo.find_tree(entry.id())?;
        changed_paths(repo, None, Some(&tree), &path, out)
    } else {
        out.push(path);
        Ok(())
    }
}

/// Git's order of tree entries: by name, a subtree's name compared as if it ended in '/'.
fn git_order(a: &TreeEntry, b: &TreeEntry) -> std::cmp::Ordering {
    let (a_name, b_name) = (a.name_bytes(), b.name_bytes());
    let common = a_name.len().min(b_name.len());
    a_name[..common].cmp(&b_name[..common]).then_with(|| {
        let next = |name: &[u8], entry: &TreeEntry| {
            name.get(common)
                .copied()
                .unwrap_or(if entry.kind() == Some(ObjectType::Tree) {
                    b'/'
                } else {
                    0
                })
        };
        next(a_name, a).cmp(&next(b_name, b))
    })
}

fn entry_path(prefix: &str, entry: &TreeEntry) -> Option<String> {
    let name = entry.name().ok()?;
    Some(if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    })
}

impl Staged {
    /// Commits the staged commits with their head; returns how many were added.
    pub(crate) fn commit(mut self) -> Result<usize, IndexError> {
        let mut prepared = self.writer.prepare_commit()?;
        prepared.set_payload(&self.head.to_string());
        prepared.commit()?;
        self.writer.wait_merging_threads()?;
        Ok(self.added)
    }
}

fn oid_string(oid: Oid) -> String {
    oid.to_string()
}

/// Number of commits indexed, and the head they were indexed at.
pub(crate) fn status(dir: &Path) -> Result<Option<(u64, Option<String>)>, IndexError> {
    let Some((index, _)) = open(dir, false)? else {
        return Ok(None);
    };
    let reader: tantivy::IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok(Some((
        reader.searcher().num_docs(),
        index.load_metas()?.payload,
    )))
}

/// Commits matching `query` best first, filtered before the cut; empty when no history index.
pub(crate) fn search(
    dir: &Path,
    query: &str,
    limit: usize,
    filter: &CommitFilter,
) -> Result<Vec<CommitHit>, IndexError> {
    let Some((index, f)) = open(dir, false)? else {
        return Ok(Vec::new());
    };
    let mut words = tokens(query);
    words.sort();
    words.dedup();
    if words.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for word in &words {
        for (field, boost) in [(f.message, 1.0), (f.paths_text, 0.5)] {
            let term = TermQuery::new(
                Term::from_field_text(field, word),
                IndexRecordOption::WithFreqs,
            );
            should.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(term), boost)),
            ));
        }
    }
    let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(should));
    if let Some(since) = filter.since {
        let range = RangeQuery::new(
            Bound::Included(Term::from_field_i64(f.time, since)),
            Bound::Unbounded,
        );
        query = Box::new(BooleanQuery::new(vec![
            (Occur::Must, query),
            (Occur::Must, Box::new(range)),
        ]));
    }
    let reader: tantivy::IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let searcher = reader.searcher();
    // An author filter is a substring test on stored text: collect every match, then cut.
    let fetch = if filter.author.is_some() {
        (searcher.num_docs() as usize).max(1)
    } else {
        limit
    };
    let top = searcher.search(&query, &TopDocs::with_limit(fetch).order_by_score())?;
    let author = filter.author.as_ref().map(|a| a.to_lowercase());
    let mut out = Vec::new();
    let mut best = None;
    for (score, address) in top {
        let doc: TantivyDocument = searcher.doc(address)?;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let who = text(f.author);
        if author
            .as_ref()
            .is_some_and(|a| !who.to_lowercase().contains(a.as_str()))
        {
            continue;
        }
        let best = *best.get_or_insert(score);
        let files = text(f.files);
        out.push(CommitHit {
            sha: text(f.sha),
            message: text(f.message),
            author: who,
            time: doc.get_first(f.time).and_then(|v| v.as_i64()).unwrap_or(0),
            files: files
                .lines()
                .map(str::to_string)
                .filter(|l| !l.is_empty())
                .collect(),
            score: if best > 0.0 { score / best } else { 0.0 },
        });
        if out.len() == limit {
            break;
        }
    }
    Ok(out)
}

/// How the commits matching a query speak for the files they changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FileVote {
    /// A file scores its best commit's score.
    Best,
    /// Every matching commit votes for its files: its score to the power `sharpness`, halved
    /// for each `half_life` seconds it is older than the newest commit indexed, and split over
    /// its files (divided by their number to the power `spread`). A file changed by several
    /// commits that match, recent ones most, outranks one a single old commit touched.
    Sum {
        sharpness: f32,
        half_life: f32,
        spread: f32,
    },
}

/// Files ranked by the commits matching `query` (the top `commits` of them), best first, with
/// scores relative to the best file (0..=1].
pub(crate) fn rank_files(
    dir: &Path,
    query: &str,
    commits: usize,
    vote: FileVote,
) -> Result<Vec<(String, f32)>, IndexError> {
    let hits = search(dir, query, commits, &CommitFilter::default())?;
    let newest = match vote {
        FileVote::Best => 0,
        FileVote::Sum { .. } => newest_time(dir)?.unwrap_or(0),
    };
    let mut scores: HashMap<String, f32> = HashMap::new();
    for hit in hits {
        if hit.files.len() > MAX_FILES_FOR_RANKING {
            continue;
        }
        let n_files = hit.files.len().max(1) as f32;
        for file in hit.files {
            let entry = scores.entry(file).or_insert(0.0);
            match vote {
                FileVote::Best => *entry = entry.max(hit.score),
                FileVote::Sum {
                    sharpness,
                    half_life,
                    spread,
                } => {
                    let age = (newest - hit.time).max(0) as f32;
                    let recency = if half_life > 0.0 {
                        0.5f32.powf(age / half_life)
                    } else {
                        1.0
                    };
                    *entry += hit.score.powf(sharpness) * recency / n_files.powf(spread);
                }
            }
        }
    }
    let best = scores.values().copied().fold(0.0f32, f32::max);
    let mut ranked: Vec<(String, f32)> = scores
        .into_iter()
        .map(|(path, score)| (path, if best > 0.0 { score / best } else { 0.0 }))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(ranked)
}

/// The time of the newest commit indexed (seconds since the epoch), from the time column.
fn newest_time(dir: &Path) -> Result<Option<i64>, IndexError> {
    let Some((index, _)) = open(dir, false)? else {
        return Ok(None);
    };
    let reader: tantivy::IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let searcher = reader.searcher();
    let mut newest = None;
    for segment in searcher.segment_readers() {
        if segment.num_docs() == 0 {
            continue;
        }
        let column = segment.fast_fields().i64("time")?;
        newest = newest.max(Some(column.max_value()));
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Commits the work tree of `repo` as it is (additions, changes, deletions).
    fn commit_all(repo: &Repository, message: &str) -> Oid {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = git2::Signature::now("T", "t@example.com").unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            message,
            &tree,
            &parents,
        )
        .unwrap()
    }

    fn put(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The paths libgit2's tree-to-tree diff gives for a commit against its first parent.
    fn libgit2_paths(repo: &Repository, oid: Oid) -> Vec<String> {
        let commit = repo.find_commit(oid).unwrap();
        let parent = commit.parent(0).ok().map(|p| p.tree().unwrap());
        let diff = repo
            .diff_tree_to_tree(parent.as_ref(), Some(&commit.tree().unwrap()), None)
            .unwrap();
        diff.deltas()
            .filter_map(|d| {
                d.new_file()
                    .path()
                    .or_else(|| d.old_file().path())
                    .and_then(|p| p.to_str())
                    .map(str::to_string)
            })
            .collect()
    }

    /// Commits `files` (path, text) with `message` at `time` (seconds since the epoch).
    fn commit_at(repo: &Repository, files: &[(&str, &str)], message: &str, time: i64) {
        let root = repo.workdir().unwrap().to_path_buf();
        for (path, text) in files {
            put(&root, path, text);
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature =
            git2::Signature::new("T", "t@example.com", &git2::Time::new(time, 0)).unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            message,
            &tree,
            &parents,
        )
        .unwrap();
    }

    /// Indexes the history of the repository at `root` into `dir`.
    fn index_history(root: &Path, dir: &Path) {
        let pending = plan(root, dir, 1000).unwrap().unwrap();
        let records = pending
            .read(1, &AtomicUsize::new(0), &AtomicBool::new(false))
            .unwrap()
            .unwrap();
        pending.stage(dir, records).unwrap().unwrap().commit().unwrap();
    }

    fn ranked_paths(dir: &Path, query: &str, vote: FileVote) -> Vec<String> {
        rank_files(dir, query, 100, vote)
            .unwrap()
            .into_iter()
            .map(|(path, _)| path)
            .collect()
    }

    const VOTE: FileVote = FileVote::Sum {
        sharpness: 1.0,
        half_life: 180.0 * 86_400.0,
        spread: 0.5,
    };

    #[test]
    fn every_matching_commit_votes_for_its_files() {
        let repo_dir = tempfile::tempdir().unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(repo_dir.path()).unwrap();
        let day = 86_400;
        let t0 = 1_700_000_000;
        // `parser.rs` is what parse-error fixes keep changing; `lexer.rs` matched once, best.
        commit_at(&repo, &[("parser.rs", "1"), ("lexer.rs", "1"), ("other.rs", "1")], "initial import", t0);
        commit_at(&repo, &[("parser.rs", "2")], "recover from parse errors in match arms", t0 + day);
        commit_at(&repo, &[("parser.rs", "3")], "better parse errors after a missing brace", t0 + 2 * day);
        commit_at(&repo, &[("lexer.rs", "2")], "parse errors: report recover position of parse errors", t0 + 3 * day);
        commit_at(&repo, &[("other.rs", "2")], "unrelated cleanup", t0 + 4 * day);
        index_history(repo_dir.path(), index_dir.path());
        let query = "recover from parse errors";
        let best = ranked_paths(index_dir.path(), query, FileVote::Best);
        let vote = ranked_paths(index_dir.path(), query, VOTE);
        assert_eq!(best.first().map(String::as_str), Some("lexer.rs"), "{best:?}");
        assert_eq!(vote.first().map(String::as_str), Some("parser.rs"), "{vote:?}");
        assert!(!vote.contains(&"other.rs".to_string()), "{vote:?}");
    }

    #[test]
    fn recent_commits_vote_louder() {
        let repo_dir = tempfile::tempdir().unwrap();
        let index_dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(repo_dir.path()).unwrap();
        let year = 365 * 86_400;
        let t0 = 1_600_000_000;
        commit_at(&repo, &[("old.rs", "1"), ("new.rs", "1")], "initial import", t0);
        commit_at(&repo, &[("old.rs", "2")], "speed up the config reload", t0 + 1);
        commit_at(&repo, &[("new.rs", "2")], "speed up the config reload", t0 + 2 * year);
        index_history(repo_dir.path(), index_dir.path());
        let query = "config reload speed";
        let vote = ranked_paths(index_dir.path(), query, VOTE);
        assert_eq!(vote, ["new.rs", "old.rs"]);
        let scores = rank_files(index_dir.path(), query, 100, VOTE).unwrap();
        assert!(scores[1].1 < 0.2, "two half-lives older: {scores:?}");
        // Without a half-life the two are equal and the order is by name.
        let flat = FileVote::Sum {
            sharpness: 1.0,
            half_life: 0.0,
            spread: 0.5,
        };
        assert_eq!(ranked_paths(index_dir.path(), query, flat), ["new.rs", "old.rs"]);
        let flat_scores = rank_files(index_dir.path(), query, 100, flat).unwrap();
        assert_eq!(flat_scores[0].1, flat_scores[1].1);
    }

    #[test]
    fn changed_paths_are_libgit2s_diff_reading_only_the_subtrees_that_differ() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = Repository::init(root).unwrap();
        let mut commits = Vec::new();
        put(root, "a.rs", "a");
        put(root, "a-b/x.rs", "x");
        put(root, "a/deep/y.rs", "y");
        put(root, "a/deep/z.rs", "z");
        put(root, "b/c.rs", "c");
        put(root, "t", "file that becomes a directory");
        commits.push(commit_all(&repo, "root commit: everything added"));
        put(root, "a/deep/y.rs", "y2");
        put(root, "a0.rs", "new beside a/");
        commits.push(commit_all(&repo, "one deep change, one addition"));
        std::fs::remove_dir_all(root.join("b")).unwrap();
        std::fs::remove_file(root.join("t")).unwrap();
        put(root, "t/inner.rs", "now a directory");
        put(root, "b", "directory that became a file");
        commits.push(commit_all(&repo, "directory and file swap places"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(root.join("a.rs"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            std::fs::remove_file(root.join("a0.rs")).unwrap();
            std::os::unix::fs::symlink("a.rs", root.join("a0.rs")).unwrap();
            commits.push(commit_all(&repo, "mode change, file becomes a link"));
        }
        put(root, "a-b/x.rs", "x2");
        put(root, "a/deep/z.rs", "z2");
        commits.push(commit_all(
            &repo,
            "changes on both sides of a/ in git's order",
        ));

        for oid in commits {
            let commit = repo.find_commit(oid).unwrap();
            let parent = commit.parent(0).ok().map(|p| p.tree().unwrap());
            let mut ours = Vec::new();
            changed_paths(
                &repo,
                parent.as_ref(),
                Some(&commit.tree().unwrap()),
                "",
                &mut ours,
            )
            .unwrap();
            assert_eq!(ours, libgit2_paths(&repo, oid), "{:?}", commit.summary());
            assert!(!ours.is_empty());
        }
    }
}
