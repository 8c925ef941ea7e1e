//! Diffs straight from a git repository, through git2.
//!
//! git2 prints the diff as patch text and [`parse`] reads it, so a diff from a repository and a
//! diff from a file go through one code path and give identical models. Rename and copy
//! detection is on, untracked files are left out (as `git diff` does), and binary files show
//! as `Binary files … differ`.

use std::path::{Path, PathBuf};

use git2::{DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, Oid, Repository};

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
    #[error("no git repository at {}: {source}", path.display())]
    RepoNotFound {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("the repository at {} is bare; it has no working tree to diff", path.display())]
    Bare { path: PathBuf },
    #[error("unknown revision `{rev}`: {source}")]
    UnknownRevision {
        rev: String,
        #[source]
        source: git2::Error,
    },
    #[error("no merge base between `{base}` and `{head}`: their histories are unrelated")]
    NoMergeBase { base: String, head: String },
    #[error("git failed while {action}: {source}")]
    Git {
        action: &'static str,
        #[source]
        source: git2::Error,
    },
    #[error("cannot parse the diff git produced: {0}")]
    Parse(#[from] DiffError),
}

/// Reads the diff `spec` describes from the repository at `repo_dir` (its working tree root
/// or its `.git` directory; parent directories are not searched).
pub fn diff_from_repo(repo_dir: &Path, spec: &DiffSpec) -> Result<GitDiff, GitError> {
    let repo = Repository::open(repo_dir).map_err(|source| GitError::RepoNotFound {
        path: repo_dir.to_path_buf(),
        source,
    })?;
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

    let mut find = DiffFindOptions::new();
    find.renames(true).copies(true);
    diff.find_similar(Some(&mut find))
        .map_err(git("detecting renames and copies"))?;

    let mut patch = Vec::new();
    diff.print(DiffFormat::Patch, |_delta, _hunk, line| {
        // File and hunk headers come complete; content lines come without their marker.
        if matches!(line.origin(), '+' | '-' | ' ') {
            patch.push(line.origin() as u8);
        }
        patch.extend_from_slice(line.content());
        true
    })
    .map_err(git("printing the diff"))?;

    Ok(GitDiff {
        diff: parse(patch)?,
        base_sha,
        head_sha,
    })
}

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
        Err(source) => {
            return Err(GitError::RepoNotFound {
                path: dir.to_path_buf(),
                source,
            });
        }
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

fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid, GitError> {
    let unknown = |source| GitError::UnknownRevision {
        rev: rev.to_owned(),
        source,
    };
    let object = repo.revparse_single(rev).map_err(unknown)?;
    let commit = object.peel_to_commit().map_err(unknown)?;
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
    fn unknown_revision_is_named() {
        let repo = TestRepo::new();
        repo.commit("main", None, &[("a", Some((FILE, b"a\n")))]);
        let err =
            diff_from_repo(repo.path(), &range("main", "no-such-branch")).expect_err("unknown ref");
        assert!(matches!(&err, GitError::UnknownRevision { rev, .. } if rev == "no-such-branch"));
        assert!(
            err.to_string()
                .starts_with("unknown revision `no-such-branch`"),
            "{err}"
        );
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
            message.starts_with(&format!("no git repository at {}", dir.path().display())),
            "{message}"
        );
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
