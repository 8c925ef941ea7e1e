//! Diffs straight from a git repository, through git2.
//!
//! git2 prints the diff as patch text and [`parse`] reads it, so a diff from a repository and a
//! diff from a file go through one code path and give identical models. Renames are detected
//! as `git diff -M` does by default (no copies, git's rename limit), untracked files are left
//! out (as `git diff` does), and binary files show as `Binary files … differ`.
//!
//! A commit the diff needs may be missing (a typo, a branch never fetched, a shallow CI clone):
//! the error says which and how to get it, so every front end shows the same fix.

use std::ops::Range;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, Oid, Repository};

use crate::diff::model::Diff;
use crate::diff::parse::{DiffError, parse};

/// Which two states of a repository to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffSpec {
    /// `git diff base...head`: from the merge base of `base` and `head` to `head`, so changes
    /// made on `base` after the branch point do not show up (what a pull request shows).
    Range { base: String, head: String },
    /// `git diff --cached`: the `HEAD` commit (nothing, before the first commit) to the index.
    Staged,
    /// `git diff`: the index to the working tree, untracked files excluded.
    Unstaged,
    /// `git diff HEAD`: the `HEAD` commit to the working tree, through the index.
    WorkingTree,
    /// `git show <rev>`: a commit against its first parent (against nothing for a root commit).
    Commit { rev: String },
}

/// A diff read from a repository, with the commits it is between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDiff {
    pub diff: Diff,
    /// The commit on the old side: the merge base for [`DiffSpec::Range`], `HEAD` for
    /// [`DiffSpec::Staged`] and [`DiffSpec::WorkingTree`]; `None` when the old side is the
    /// index or there is no commit yet.
    pub base_sha: Option<String>,
    /// The commit on the new side: `head` for [`DiffSpec::Range`], the commit for
    /// [`DiffSpec::Commit`], otherwise `None` (the index or the working tree).
    pub head_sha: Option<String>,
}

/// Why a diff could not be read from a repository.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// Said once, in words: libgit2's message (`could not find repository at …; class=…;
    /// code=…`) is kept only when it says more than that.
    #[error("not a git repository: {} ({reason})", path.display())]
    RepoNotFound { path: PathBuf, reason: String },
    #[error("the repository at {} is bare; it has no working tree to diff", path.display())]
    Bare { path: PathBuf },
    /// No commit has that name here. libgit2's own message (`class=Reference (4);
    /// code=NotFound (-3)`) says nothing more, so it is not kept.
    #[error("unknown revision `{rev}`: {}", missing_commit_fix(rev, *shallow))]
    UnknownRevision {
        rev: String,
        /// The clone is shallow, so the commit may exist but lie beyond its history.
        shallow: bool,
    },
    /// The name is malformed, ambiguous or names something other than a commit.
    #[error("invalid revision `{rev}`: {source}")]
    InvalidRevision {
        rev: String,
        #[source]
        source: git2::Error,
    },
    #[error("no merge base between `{base}` and `{head}`: {}", no_merge_base_reason(*shallow))]
    NoMergeBase {
        base: String,
        head: String,
        /// The clone is shallow: the merge base is most likely cut off, not absent.
        shallow: bool,
    },
    #[error("git failed while {action}: {source}")]
    Git {
        action: &'static str,
        #[source]
        source: git2::Error,
    },
    #[error("cannot parse the diff git produced: {0}")]
    Parse(#[from] DiffError),
}

impl GitError {
    /// `path` could not be opened as a repository.
    pub(crate) fn repo_not_found(path: &Path, source: &git2::Error) -> GitError {
        let reason = if source.code() == ErrorCode::NotFound {
            "no .git directory there; run inside a repository or name its root".to_string()
        } else {
            source.message().to_string()
        };
        GitError::RepoNotFound {
            path: path.to_path_buf(),
            reason,
        }
    }
}

/// Reads the diff `spec` describes from the repository at `repo_dir` (its working tree root
/// or its `.git` directory; parent directories are not searched).
pub fn diff_from_repo(repo_dir: &Path, spec: &DiffSpec) -> Result<GitDiff, GitError> {
    let repo =
        Repository::open(repo_dir).map_err(|source| GitError::repo_not_found(repo_dir, &source))?;
    let git = |action: &'static str| move |source| GitError::Git { action, source };
    let mut options = DiffOptions::new();
    options.include_untracked(false);

    let (mut diff, base_sha, head_sha) = match spec {
        DiffSpec::Range { base, head } => {
            let base_id = resolve_commit(&repo, base)?;
            let head_id = resolve_commit(&repo, head)?;
            let merge_base = match repo.merge_base(base_id, head_id) {
                Ok(id) => id,
                Err(err) if err.code() == ErrorCode::NotFound => {
                    return Err(GitError::NoMergeBase {
                        base: base.clone(),
                        head: head.clone(),
                        shallow: repo.is_shallow(),
                    });
                }
                Err(source) => return Err(git("finding the merge base")(source)),
            };
            let old_tree = repo
                .find_commit(merge_base)
                .and_then(|commit| commit.tree())
                .map_err(git("reading the merge base's tree"))?;
            let new_tree = repo
                .find_commit(head_id)
                .and_then(|commit| commit.tree())
                .map_err(git("reading the head commit's tree"))?;
            let diff = repo
                .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut options))
                .map_err(git("comparing the trees"))?;
            (
                diff,
                Some(merge_base.to_string()),
                Some(head_id.to_string()),
            )
        }
        DiffSpec::Staged => {
            let head = head_commit(&repo)?;
            let head_tree = head
                .as_ref()
                .map(|commit| commit.tree())
                .transpose()
                .map_err(git("reading HEAD's tree"))?;
            let diff = repo
                .diff_tree_to_index(head_tree.as_ref(), None, Some(&mut options))
                .map_err(git("comparing HEAD with the index"))?;
            (diff, head.map(|commit| commit.id().to_string()), None)
        }
        DiffSpec::Unstaged => {
            require_workdir(&repo, repo_dir)?;
            let diff = repo
                .diff_index_to_workdir(None, Some(&mut options))
                .map_err(git("comparing the index with the working tree"))?;
            (diff, None, None)
        }
        DiffSpec::Commit { rev } => {
            let commit_id = resolve_commit(&repo, rev)?;
            let commit = repo
                .find_commit(commit_id)
                .map_err(git("reading the commit"))?;
            let parent = match commit.parent_count() {
                0 => None,
                _ => Some(
                    commit
                        .parent(0)
                        .map_err(git("reading the commit's parent"))?,
                ),
            };
            let old_tree = parent
                .as_ref()
                .map(|parent| parent.tree())
                .transpose()
                .map_err(git("reading the parent's tree"))?;
            let new_tree = commit.tree().map_err(git("reading the commit's tree"))?;
            let diff = repo
                .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), Some(&mut options))
                .map_err(git("comparing the trees"))?;
            (
                diff,
                parent.map(|parent| parent.id().to_string()),
                Some(commit_id.to_string()),
            )
        }
        DiffSpec::WorkingTree => {
            require_workdir(&repo, repo_dir)?;
            let head = head_commit(&repo)?;
            let head_tree = head
                .as_ref()
                .map(|commit| commit.tree())
                .transpose()
                .map_err(git("reading HEAD's tree"))?;
            let diff = repo
                .diff_tree_to_workdir_with_index(head_tree.as_ref(), Some(&mut options))
                .map_err(git("comparing HEAD with the working tree"))?;
            (diff, head.map(|commit| commit.id().to_string()), None)
        }
    };

    diff.find_similar(Some(&mut rename_options(&diff)))
        .map_err(git("detecting renames"))?;

    let mut patch = Vec::new();
    // The last file header while no hunk has followed it yet.
    let mut hunkless_header: Option<Range<usize>> = None;
    diff.print(DiffFormat::Patch, |_delta, _hunk, line| {
        match line.origin() {
            'F' => {
                if let Some(header) = hunkless_header.take() {
                    drop_path_lines(&mut patch, header);
                }
                let start = patch.len();
                hunkless_header = Some(start..start + line.content().len());
            }
            'H' => hunkless_header = None,
            _ => {}
        }
        // File and hunk headers come complete; content lines come without their marker.
        if matches!(line.origin(), '+' | '-' | ' ') {
            patch.push(line.origin() as u8);
        }
        patch.extend_from_slice(line.content());
        true
    })
    .map_err(git("printing the diff"))?;
    if let Some(header) = hunkless_header {
        drop_path_lines(&mut patch, header);
    }

    Ok(GitDiff {
        diff: parse(patch)?,
        base_sha,
        head_sha,
    })
}

/// git's default `diff.renameLimit`: past `RENAME_LIMIT²` (deleted × added files) git looks for
/// exact renames only, which keeps a hostile change of 10,000 files × 10,000 files from costing
/// 10⁸ similarity comparisons.
const RENAME_LIMIT: usize = 1000;

/// Rename detection as `git diff -M` does it by default. Copies stay off: with them every
/// modified file becomes a candidate source, which is quadratic, and libgit2 then stops after
/// `rename_limit` sources per added file, so renames whose source sorts late went unpaired.
fn rename_options(diff: &git2::Diff<'_>) -> DiffFindOptions {
    let (mut n_sources, mut n_targets) = (0_usize, 0_usize);
    for delta in diff.deltas() {
        match delta.status() {
            Delta::Deleted => n_sources += 1,
            Delta::Added => n_targets += 1,
            _ => {}
        }
    }
    let mut find = DiffFindOptions::new();
    find.renames(true);
    if n_sources.saturating_mul(n_targets) > RENAME_LIMIT * RENAME_LIMIT {
        // libgit2 compares ids pair by pair here too, so its cap per added file still counts.
        find.exact_match_only(true).rename_limit(RENAME_LIMIT);
    } else {
        // libgit2's limit caps the sources tried per added file (200 by default) where git's
        // caps the whole matrix, checked above; inside it, every source is tried.
        find.rename_limit(n_sources.max(1));
    }
    find
}

/// Removes the `---`/`+++` lines from the file header at `header` in `patch`. libgit2 prints
/// them for a file with no hunks (an added or deleted empty file) where git prints none, and the
/// parser rightly refuses path lines that no hunk follows.
fn drop_path_lines(patch: &mut Vec<u8>, header: Range<usize>) {
    let kept: Vec<u8> = patch[header.clone()]
        .split_inclusive(|&byte| byte == b'\n')
        .filter(|line| !line.starts_with(b"--- ") && !line.starts_with(b"+++ "))
        .flatten()
        .copied()
        .collect();
    drop(patch.splice(header, kept));
}

/// What to do about a revision that is not in the clone.
fn missing_commit_fix(rev: &str, shallow: bool) -> String {
    if shallow {
        SHALLOW_FIX.to_owned()
    } else {
        // `origin/main` is fetched as `main` from `origin`.
        let remote_ref = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
        let fetched = remote_ref.strip_prefix("origin/").unwrap_or(rev);
        format!(
            "no branch, tag or commit has that name in this clone. If it exists on the remote, \
             fetch it (`git fetch origin {fetched}`; in CI, check out with `fetch-depth: 0`), \
             or review a diff file instead (`--diff`)"
        )
    }
}

fn no_merge_base_reason(shallow: bool) -> &'static str {
    if shallow {
        SHALLOW_FIX
    } else {
        "their histories are unrelated"
    }
}

const SHALLOW_FIX: &str = "the clone is shallow, so the base or the merge base is missing. \
    Fetch the full history (`git fetch --unshallow`; `fetch-depth: 0` with `actions/checkout`, \
    `GIT_DEPTH: 0` on GitLab CI), or review a diff file instead (`--diff`)";

/// Where a repository stands: its root, checked-out branch and `HEAD` commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadInfo {
    /// The working tree root (`None` for a bare repository).
    pub root: Option<PathBuf>,
    /// The checked-out branch, such as `main`; `None` when `HEAD` is detached.
    pub branch: Option<String>,
    /// The commit `HEAD` points at; `None` before the first commit.
    pub commit: Option<String>,
}

/// Describes the repository that contains `dir` (searching parent directories, as git does);
/// `Ok(None)` when `dir` is in no repository.
pub fn head_info(dir: &Path) -> Result<Option<HeadInfo>, GitError> {
    let repo = match Repository::discover(dir) {
        Ok(repo) => repo,
        Err(err) if err.code() == ErrorCode::NotFound => return Ok(None),
        Err(source) => return Err(GitError::repo_not_found(dir, &source)),
    };
    // `HEAD` is read as a reference rather than resolved, so an unborn branch still has a name.
    let branch = repo
        .find_reference("HEAD")
        .ok()
        .and_then(|head| head.symbolic_target().ok().flatten().map(str::to_owned))
        .map(|target| {
            target
                .strip_prefix("refs/heads/")
                .map_or(target.clone(), str::to_owned)
        });
    let commit = head_commit(&repo)?.map(|commit| commit.id().to_string());
    Ok(Some(HeadInfo {
        // Rebuilt from components: git2 ends the working directory with a `/`.
        root: repo.workdir().map(|root| root.components().collect()),
        branch,
        commit,
    }))
}

/// The commit `rev` names. Not finding it is [`GitError::UnknownRevision`], which says how to
/// fetch it; anything else wrong with the name is [`GitError::InvalidRevision`].
pub(crate) fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid, GitError> {
    let invalid = |source| GitError::InvalidRevision {
        rev: rev.to_owned(),
        source,
    };
    let object = match repo.revparse_single(rev) {
        Ok(object) => object,
        Err(err) if err.code() == ErrorCode::NotFound => {
            return Err(GitError::UnknownRevision {
                rev: rev.to_owned(),
                shallow: repo.is_shallow(),
            });
        }
        Err(source) => return Err(invalid(source)),
    };
    let commit = object.peel_to_commit().map_err(invalid)?;
    Ok(commit.id())
}

/// The `HEAD` commit, or `None` on an unborn branch (a repository without commits).
fn head_commit(repo: &Repository) -> Result<Option<git2::Commit<'_>>, GitError> {
    match repo.head() {
        Ok(head) => head
            .peel_to_commit()
            .map(Some)
            .map_err(|source| GitError::Git {
                action: "reading the HEAD commit",
                source,
            }),
        Err(err) if matches!(err.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
        Err(source) => Err(GitError::Git {
            action: "reading HEAD",
            source,
        }),
    }
}

fn require_workdir(repo: &Repository, repo_dir: &Path) -> Result<(), GitError> {
    if repo.workdir().is_none() {
        return Err(GitError::Bare {
            path: repo_dir.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use git2::{Index, IndexEntry, IndexTime, Signature, Time};
    use tempfile::TempDir;

    use super::*;
    use crate::diff::model::{FileStatus, LineKind};

    const FILE: u32 = 0o100644;
    const EXECUTABLE: u32 = 0o100755;

    /// A temporary repository; commits are built from in-memory trees so branches can be made
    /// without touching the working tree.
    struct TestRepo {
        dir: TempDir,
        repo: Repository,
    }

    /// A change to apply in a commit: write (mode, content) or delete.
    type Change<'a> = (&'a str, Option<(u32, &'a [u8])>);

    impl TestRepo {
        fn new() -> TestRepo {
            let dir = TempDir::new().expect("temp dir");
            let repo = Repository::init(dir.path()).expect("git init");
            TestRepo { dir, repo }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        /// Commits `changes` on top of `parent` (or on nothing) and points `branch` at it.
        fn commit(&self, branch: &str, parent: Option<Oid>, changes: &[Change<'_>]) -> Oid {
            let mut index = Index::new().expect("in-memory index");
            let parent = parent.map(|id| self.repo.find_commit(id).expect("parent"));
            if let Some(parent) = &parent {
                index
                    .read_tree(&parent.tree().expect("tree"))
                    .expect("read tree");
            }
            for (path, change) in changes {
                match change {
                    Some((mode, content)) => {
                        let blob = self.repo.blob(content).expect("write blob");
                        let entry = IndexEntry {
                            ctime: IndexTime::new(0, 0),
                            mtime: IndexTime::new(0, 0),
                            dev: 0,
                            ino: 0,
                            mode: *mode,
                            uid: 0,
                            gid: 0,
                            file_size: u32::try_from(content.len()).expect("small file"),
                            id: blob,
                            flags: 0,
                            flags_extended: 0,
                            path: path.as_bytes().to_vec(),
                        };
                        index.add(&entry).expect("add");
                    }
                    None => index.remove_path(Path::new(path)).expect("remove"),
                }
            }
            let tree_id = index.write_tree_to(&self.repo).expect("write tree");
            let tree = self.repo.find_tree(tree_id).expect("tree");
            let signature =
                Signature::new("Test", "test@example.com", &Time::new(0, 0)).expect("signature");
            let parents: Vec<_> = parent.iter().collect();
            self.repo
                .commit(
                    Some(&format!("refs/heads/{branch}")),
                    &signature,
                    &signature,
                    "test",
                    &tree,
                    &parents,
                )
                .expect("commit")
        }

        /// Points HEAD at `branch` and makes the index and working tree match it.
        fn checkout(&self, branch: &str) {
            self.repo
                .set_head(&format!("refs/heads/{branch}"))
                .expect("set head");
            let mut options = git2::build::CheckoutBuilder::new();
            options.force();
            self.repo
                .checkout_head(Some(&mut options))
                .expect("checkout");
        }

        fn write(&self, path: &str, content: &[u8]) {
            fs::write(self.path().join(path), content).expect("write file");
        }

        fn stage(&self, path: &str) {
            let mut index = self.repo.index().expect("index");
            index.add_path(Path::new(path)).expect("stage");
            index.write().expect("write index");
        }

        fn diff(&self, spec: &DiffSpec) -> GitDiff {
            match diff_from_repo(self.path(), spec) {
                Ok(diff) => diff,
                Err(err) => panic!("diff_from_repo({spec:?}) failed: {err}"),
            }
        }
    }

    fn range(base: &str, head: &str) -> DiffSpec {
        DiffSpec::Range {
            base: base.to_owned(),
            head: head.to_owned(),
        }
    }

    fn paths(diff: &GitDiff) -> Vec<(FileStatus, Option<&str>, Option<&str>)> {
        diff.diff
            .files()
            .iter()
            .map(|f| (f.status, f.old_path.as_deref(), f.new_path.as_deref()))
            .collect()
    }

    #[test]
    fn range_diffs_from_the_merge_base() {
        let repo = TestRepo::new();
        let root = repo.commit(
            "main",
            None,
            &[
                ("a.txt", Some((FILE, b"one\ntwo\nthree\n"))),
                ("keep.txt", Some((FILE, b"keep\n"))),
            ],
        );
        let feature = repo.commit(
            "feature",
            Some(root),
            &[("a.txt", Some((FILE, b"one\n2\nthree\n")))],
        );
        // Work on main after the fork must not show up in the feature's diff.
        repo.commit(
            "main",
            Some(root),
            &[
                ("keep.txt", Some((FILE, b"changed on main\n"))),
                ("main_only.txt", Some((FILE, b"x\n"))),
            ],
        );

        let diff = repo.diff(&range("main", "feature"));
        assert_eq!(
            paths(&diff),
            [(FileStatus::Modified, Some("a.txt"), Some("a.txt"))]
        );
        assert_eq!(diff.base_sha, Some(root.to_string()));
        assert_eq!(diff.head_sha, Some(feature.to_string()));
        let file = &diff.diff.files()[0];
        let added: Vec<_> = file
            .added_lines()
            .map(|l| (l.new_line, diff.diff.line_text(l)))
            .collect();
        assert_eq!(added, [(Some(2), "2".into())]);

        let reverse = repo.diff(&range("feature", "main"));
        assert_eq!(
            paths(&reverse),
            [
                (FileStatus::Modified, Some("keep.txt"), Some("keep.txt")),
                (FileStatus::Added, None, Some("main_only.txt")),
            ]
        );
        // Full and abbreviated shas work as revisions too.
        let by_sha = repo.diff(&range(&root.to_string()[..10], &feature.to_string()));
        assert_eq!(paths(&by_sha), paths(&diff));
    }

    #[test]
    fn range_shows_renames_binaries_modes_and_awkward_paths() {
        let repo = TestRepo::new();
        let body: Vec<u8> = (0..40)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let root = repo.commit(
            "main",
            None,
            &[
                ("old.txt", Some((FILE, &body))),
                ("img.bin", Some((FILE, b"\x89PNG\0\0\x01"))),
                ("run.sh", Some((FILE, b"echo hi\n"))),
                ("gone.txt", Some((FILE, b"bye\n"))),
            ],
        );
        repo.commit(
            "feature",
            Some(root),
            &[
                ("old.txt", None),
                ("new.txt", Some((FILE, &body))),
                ("img.bin", Some((FILE, b"\x89PNG\0\0\x02"))),
                ("run.sh", Some((EXECUTABLE, b"echo hi\n"))),
                ("gone.txt", None),
                (
                    "dir with space/caf\u{e9} \"q\".txt",
                    Some((FILE, b"crlf\r\nno newline")),
                ),
            ],
        );
        let diff = repo.diff(&range("main", "feature"));
        let files = diff.diff.files();
        let find = |path: &str| {
            files
                .iter()
                .find(|f| f.path() == path)
                .unwrap_or_else(|| panic!("no {path} in {:?}", paths(&diff)))
        };

        let renamed = find("new.txt");
        assert_eq!(
            (renamed.status, renamed.old_path.as_deref()),
            (FileStatus::Renamed, Some("old.txt"))
        );
        assert_eq!(renamed.similarity, Some(100));
        assert!(renamed.hunks.is_empty());

        let binary = find("img.bin");
        assert!(binary.binary && binary.hunks.is_empty());
        assert_eq!(binary.status, FileStatus::Modified);

        let mode = find("run.sh");
        assert_eq!(
            (mode.old_mode, mode.new_mode),
            (Some(FILE), Some(EXECUTABLE))
        );
        assert!(mode.hunks.is_empty());

        assert_eq!(find("gone.txt").status, FileStatus::Deleted);

        let awkward = find("dir with space/caf\u{e9} \"q\".txt");
        assert_eq!(awkward.status, FileStatus::Added);
        let lines = &awkward.hunks[0].lines;
        assert_eq!(diff.diff.line_bytes(&lines[0]), b"crlf\r");
        assert_eq!(diff.diff.line_bytes(&lines[1]), b"no newline");
        assert!(lines[1].no_newline_at_eof && !lines[0].no_newline_at_eof);
        assert!(lines.iter().all(|l| l.kind == LineKind::Added));
    }

    #[test]
    fn unknown_revision_is_named_with_the_fix() {
        let repo = TestRepo::new();
        repo.commit("main", None, &[("a", Some((FILE, b"a\n")))]);
        let err =
            diff_from_repo(repo.path(), &range("main", "no-such-branch")).expect_err("unknown ref");
        assert!(
            matches!(&err, GitError::UnknownRevision { rev, shallow: false } if rev == "no-such-branch")
        );
        let message = err.to_string();
        assert!(
            message.starts_with("unknown revision `no-such-branch`: no branch, tag or commit"),
            "{message}"
        );
        for fix in [
            "`git fetch origin no-such-branch`",
            "`fetch-depth: 0`",
            "`--diff`",
        ] {
            assert!(message.contains(fix), "{fix} missing from: {message}");
        }
        // libgit2's own text (`class=Reference (4); code=NotFound (-3)`) adds nothing.
        assert!(!message.contains("class="), "{message}");
        assert!(std::error::Error::source(&err).is_none());

        // A malformed name is a different problem, with git's reason kept.
        let err = diff_from_repo(repo.path(), &range("main", "main@{")).expect_err("bad spec");
        assert!(
            matches!(&err, GitError::InvalidRevision { rev, .. } if rev == "main@{"),
            "{err}"
        );
        // A name that resolves to something other than a commit.
        let blob = repo.repo.blob(b"not a commit").expect("blob").to_string();
        let err = diff_from_repo(repo.path(), &range("main", &blob)).expect_err("a blob");
        assert!(matches!(err, GitError::InvalidRevision { .. }), "{err}");
    }

    #[test]
    fn empty_files_added_and_deleted_are_diffed_by_every_spec() {
        let repo = TestRepo::new();
        let root = repo.commit(
            "main",
            None,
            &[
                ("app.py", Some((FILE, b"x = 1\n"))),
                ("old/.gitkeep", Some((FILE, b""))),
            ],
        );
        repo.commit(
            "feature",
            Some(root),
            &[
                ("pkg/__init__.py", Some((FILE, b""))),
                ("pkg/mod.py", Some((FILE, b"y = 2\n"))),
                ("tests/__init__.py", Some((FILE, b""))),
                ("old/.gitkeep", None),
                ("app.py", Some((FILE, b"x = 2\n"))),
            ],
        );
        let diff = repo.diff(&range("main", "feature"));
        assert_eq!(
            paths(&diff),
            [
                (FileStatus::Modified, Some("app.py"), Some("app.py")),
                // Two empty files are identical, so git (`git diff -M`) pairs a deleted empty
                // file with an added one as an exact rename; so does libgit2.
                (
                    FileStatus::Renamed,
                    Some("old/.gitkeep"),
                    Some("pkg/__init__.py")
                ),
                (FileStatus::Added, None, Some("pkg/mod.py")),
                (FileStatus::Added, None, Some("tests/__init__.py")),
            ]
        );
        assert!(diff.diff.files()[1].hunks.is_empty() && diff.diff.files()[3].hunks.is_empty());
        assert_eq!(diff.diff.files()[2].hunks.len(), 1);
        // The model is the one git's own text gives: no `---`/`+++` lines without a hunk.
        let text = String::from_utf8_lossy(diff.diff.as_bytes()).into_owned();
        assert!(!text.contains("+++ b/pkg/__init__.py"), "{text}");
        assert!(!text.contains("+++ b/tests/__init__.py"), "{text}");
        assert!(!text.contains("--- a/old/.gitkeep"), "{text}");

        // The same change staged, then in the working tree, then unstaged.
        repo.checkout("main");
        fs::create_dir_all(repo.path().join("pkg")).expect("mkdir");
        repo.write("pkg/__init__.py", b"");
        repo.stage("pkg/__init__.py");
        let staged = repo.diff(&DiffSpec::Staged);
        assert_eq!(
            paths(&staged),
            [(FileStatus::Added, None, Some("pkg/__init__.py"))]
        );
        fs::remove_file(repo.path().join("old/.gitkeep")).expect("rm");
        let working_tree = repo.diff(&DiffSpec::WorkingTree);
        // As `git diff -M HEAD` says: the two empty files pair as an exact rename.
        assert_eq!(
            paths(&working_tree),
            [(
                FileStatus::Renamed,
                Some("old/.gitkeep"),
                Some("pkg/__init__.py")
            )]
        );
        let unstaged = repo.diff(&DiffSpec::Unstaged);
        assert_eq!(
            paths(&unstaged),
            [(FileStatus::Deleted, Some("old/.gitkeep"), None)]
        );
    }

    /// 2,000 modified files and 40 renames (97 % similar) spread among them: every rename is
    /// paired, as `git diff -M` pairs them. With copy detection every modified file was a
    /// candidate source and libgit2 tried only the first 200 per added file.
    #[test]
    fn renames_among_thousands_of_changed_files_are_all_paired() {
        const N_DIRS: usize = 40;
        const N_MODIFIED_PER_DIR: usize = 50;
        let repo = TestRepo::new();
        let mut before: Vec<(String, Vec<u8>)> = Vec::new();
        let mut after: Vec<(String, Option<Vec<u8>>)> = Vec::new();
        for dir in 0..N_DIRS {
            for n in 0..N_MODIFIED_PER_DIR {
                let path = format!("d{dir:02}/m{n:02}.txt");
                let body = |version: &str| -> Vec<u8> {
                    (0..8)
                        .map(|line| format!("{path} line {line} {version}\n"))
                        .collect::<String>()
                        .into_bytes()
                };
                let (old, new) = (body("v1"), body("v2"));
                before.push((path.clone(), old));
                after.push((path, Some(new)));
            }
            // 100 lines, 3 of them edited by the rename: 97 % similar.
            let lines: Vec<String> = (0..100)
                .map(|line| format!("renamed file {dir} line {line}\n"))
                .collect();
            let mut edited = lines.clone();
            for line in [10, 50, 90] {
                edited[line] = format!("edited in the rename {dir} {line}\n");
            }
            before.push((
                format!("d{dir:02}/old_name.txt"),
                lines.concat().into_bytes(),
            ));
            after.push((format!("d{dir:02}/old_name.txt"), None));
            after.push((
                format!("d{dir:02}/new_name.txt"),
                Some(edited.concat().into_bytes()),
            ));
        }
        let before_changes: Vec<Change<'_>> = before
            .iter()
            .map(|(path, body)| (path.as_str(), Some((FILE, body.as_slice()))))
            .collect();
        let root = repo.commit("main", None, &before_changes);
        let after_changes: Vec<Change<'_>> = after
            .iter()
            .map(|(path, body)| (path.as_str(), body.as_deref().map(|body| (FILE, body))))
            .collect();
        repo.commit("feature", Some(root), &after_changes);

        let diff = repo.diff(&range("main", "feature"));
        let files = diff.diff.files();
        let renames: Vec<_> = files
            .iter()
            .filter(|f| f.status == FileStatus::Renamed)
            .collect();
        assert_eq!(renames.len(), N_DIRS, "every rename is paired");
        for rename in &renames {
            let (old, new) = (rename.old_path.as_deref(), rename.new_path.as_deref());
            assert_eq!(
                old.map(|p| p.replace("old_name", "new_name")).as_deref(),
                new
            );
            assert_eq!(rename.similarity, Some(97), "{new:?}");
        }
        assert!(
            files
                .iter()
                .all(|f| matches!(f.status, FileStatus::Modified | FileStatus::Renamed)),
            "no phantom additions or deletions"
        );
        assert_eq!(files.len(), N_DIRS * (N_MODIFIED_PER_DIR + 1));
        // Only edited lines count: the 8 lines of each modified file, 3 per rename.
        assert_eq!(
            diff.diff.line_counts(),
            (
                N_DIRS * (N_MODIFIED_PER_DIR * 8 + 3),
                N_DIRS * (N_MODIFIED_PER_DIR * 8 + 3)
            )
        );

        // git itself agrees on every file's status and paths.
        let output = std::process::Command::new("git")
            .args([
                "diff",
                "-M",
                "--name-status",
                "--no-color",
                "main...feature",
            ])
            .current_dir(repo.path())
            .output()
            .expect("git runs");
        assert!(output.status.success(), "{output:?}");
        // Similarity scores are compared apart: libgit2 and git measure it differently (97
        // against 96 here), so the pairing must agree exactly and the score within a few points.
        let by_git: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| match line.strip_prefix('R') {
                Some(rest) => {
                    let (score, paths) = rest.split_once('\t').expect("a score, then paths");
                    let score: u32 = score.parse().expect("git's score is a number");
                    assert!(score >= 90, "git scores the rename {score}: {line}");
                    format!("R\t{paths}")
                }
                None => line.to_owned(),
            })
            .collect();
        let mut ours: Vec<String> = files
            .iter()
            .map(|f| match f.status {
                FileStatus::Renamed => {
                    let similarity = f.similarity.unwrap_or(0);
                    assert!(
                        similarity >= 90,
                        "a 97 % similar rename scored {similarity}"
                    );
                    format!("R\t{}\t{}", f.old_path.as_deref().unwrap_or(""), f.path())
                }
                _ => format!("M\t{}", f.path()),
            })
            .collect();
        ours.sort();
        let mut by_git_sorted = by_git;
        by_git_sorted.sort();
        assert_eq!(ours, by_git_sorted);
    }

    #[test]
    fn past_gits_rename_limit_only_exact_renames_are_detected() {
        // 1,001 × 1,001 candidates exceed git's limit of 1,000²: git (and now Tollgate) pairs
        // only identical files rather than compare a million pairs.
        let repo = TestRepo::new();
        let bodies: Vec<(String, Vec<u8>)> = (0..1001)
            .map(|n| {
                (
                    format!("old/{n:04}.txt"),
                    format!("file {n}\nsame\nsame\nsame\n").into_bytes(),
                )
            })
            .collect();
        let before: Vec<Change<'_>> = bodies
            .iter()
            .map(|(path, body)| (path.as_str(), Some((FILE, body.as_slice()))))
            .collect();
        let root = repo.commit("main", None, &before);
        let moved: Vec<(String, Vec<u8>)> = bodies
            .iter()
            .enumerate()
            .map(|(n, (_, body))| {
                let mut body = body.clone();
                // All but the first are edited slightly: similar, not identical.
                if n > 0 {
                    body.extend_from_slice(b"edited\n");
                }
                (format!("new/{n:04}.txt"), body)
            })
            .collect();
        let mut after: Vec<Change<'_>> = bodies
            .iter()
            .map(|(path, _)| (path.as_str(), None))
            .collect();
        after.extend(
            moved
                .iter()
                .map(|(path, body)| (path.as_str(), Some((FILE, body.as_slice())))),
        );
        repo.commit("feature", Some(root), &after);
        let diff = repo.diff(&range("main", "feature"));
        let renamed: Vec<_> = diff
            .diff
            .files()
            .iter()
            .filter(|f| f.status == FileStatus::Renamed)
            .map(|f| f.path())
            .collect();
        assert_eq!(renamed, ["new/0000.txt"]);
    }

    #[test]
    fn unrelated_histories_have_no_merge_base() {
        let repo = TestRepo::new();
        repo.commit("main", None, &[("a", Some((FILE, b"a\n")))]);
        repo.commit("orphan", None, &[("b", Some((FILE, b"b\n")))]);
        let err = diff_from_repo(repo.path(), &range("main", "orphan")).expect_err("no merge base");
        assert!(matches!(err, GitError::NoMergeBase { .. }));
        assert_eq!(
            err.to_string(),
            "no merge base between `main` and `orphan`: their histories are unrelated"
        );
    }

    #[test]
    fn missing_repository_names_the_path() {
        let dir = TempDir::new().expect("temp dir");
        let err = diff_from_repo(dir.path(), &DiffSpec::Staged).expect_err("no repo");
        assert!(matches!(err, GitError::RepoNotFound { .. }));
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("not a git repository: {}", dir.path().display())),
            "{message}"
        );
        // Said once, without libgit2's codes.
        assert!(!message.contains("class="), "{message}");
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn staged_on_an_unborn_head_diffs_against_nothing() {
        let repo = TestRepo::new();
        repo.write("first.txt", b"hello\n");
        repo.stage("first.txt");
        let diff = repo.diff(&DiffSpec::Staged);
        assert_eq!(paths(&diff), [(FileStatus::Added, None, Some("first.txt"))]);
        assert_eq!((diff.base_sha, diff.head_sha), (None, None));
        let working_tree = repo.diff(&DiffSpec::WorkingTree);
        assert_eq!(
            paths(&working_tree),
            [(FileStatus::Added, None, Some("first.txt"))]
        );
    }

    #[test]
    fn staged_unstaged_and_working_tree_see_different_changes() {
        let repo = TestRepo::new();
        let head = repo.commit(
            "main",
            None,
            &[
                ("staged.txt", Some((FILE, b"a\n"))),
                ("unstaged.txt", Some((FILE, b"b\n"))),
            ],
        );
        repo.checkout("main");
        repo.write("staged.txt", b"a changed\n");
        repo.stage("staged.txt");
        repo.write("unstaged.txt", b"b changed\n");
        repo.write("untracked.txt", b"never shown\n");

        let staged = repo.diff(&DiffSpec::Staged);
        assert_eq!(
            paths(&staged),
            [(FileStatus::Modified, Some("staged.txt"), Some("staged.txt"))]
        );
        assert_eq!(staged.base_sha, Some(head.to_string()));

        let unstaged = repo.diff(&DiffSpec::Unstaged);
        assert_eq!(
            paths(&unstaged),
            [(
                FileStatus::Modified,
                Some("unstaged.txt"),
                Some("unstaged.txt")
            )]
        );
        assert_eq!((unstaged.base_sha, unstaged.head_sha), (None, None));

        let working_tree = repo.diff(&DiffSpec::WorkingTree);
        assert_eq!(
            paths(&working_tree),
            [
                (FileStatus::Modified, Some("staged.txt"), Some("staged.txt")),
                (
                    FileStatus::Modified,
                    Some("unstaged.txt"),
                    Some("unstaged.txt")
                ),
            ]
        );
        assert_eq!(working_tree.base_sha, Some(head.to_string()));
    }

    #[test]
    fn bare_repositories_have_no_working_tree() {
        let dir = TempDir::new().expect("temp dir");
        Repository::init_bare(dir.path()).expect("init bare");
        let err = diff_from_repo(dir.path(), &DiffSpec::Unstaged).expect_err("bare");
        assert!(matches!(err, GitError::Bare { .. }), "{err}");
    }

    #[test]
    fn head_info_names_branch_and_commit_from_a_subdirectory() {
        let repo = TestRepo::new();
        repo.repo.set_head("refs/heads/trunk").expect("set head");
        let unborn = head_info(repo.path())
            .expect("head info")
            .expect("a repository");
        assert_eq!(unborn.branch.as_deref(), Some("trunk"));
        assert_eq!(unborn.commit, None);

        let head = repo.commit("trunk", None, &[("src/a.txt", Some((0o100644, b"a\n")))]);
        repo.checkout("trunk");
        let info = head_info(&repo.path().join("src"))
            .expect("head info")
            .expect("a repository");
        assert_eq!(info.branch.as_deref(), Some("trunk"));
        assert_eq!(info.commit, Some(head.to_string()));
        let root = info
            .root
            .expect("working tree")
            .canonicalize()
            .expect("root exists");
        assert_eq!(root, repo.path().canonicalize().expect("temp dir exists"));

        repo.repo.set_head_detached(head).expect("detach");
        let detached = head_info(repo.path())
            .expect("head info")
            .expect("a repository");
        assert_eq!(detached.branch, None);
        assert_eq!(detached.commit, Some(head.to_string()));

        let outside = TempDir::new().expect("temp dir");
        assert_eq!(head_info(outside.path()).expect("no error"), None);
    }
}
