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

/// Files ranked by their best commit for `query` (max aggregation), best first.
pub(crate) fn rank_files(
    dir: &Path,
    query: &str,
    commits: usize,
) -> Result<Vec<(String, f32)>, IndexError> {
    let hits = search(dir, query, commits, &CommitFilter::default())?;
    let mut best: HashMap<String, f32> = HashMap::new();
    for hit in hits {
        if hit.files.len() > MAX_FILES_FOR_RANKING {
            continue;
        }
        for file in hit.files {
            let entry = best.entry(file).or_insert(0.0);
            *entry = entry.max(hit.score);
        }
    }
    let mut ranked: Vec<(String, f32)> = best.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(ranked)
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
