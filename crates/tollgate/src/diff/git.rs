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
}

/// A diff read from a repository, with the commits it is between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDiff {
    pub diff: Diff,
    /// The commit on the old side: the merge base for [`DiffSpec::Range`], `HEAD` for
    /// [`DiffSpec::Staged`] and [`DiffSpec::WorkingTree`]; `None` when the old side is the
    /// index or there is no commit yet.
    pub base_sha: Option<String>,
    /// The commit on the new side: `head` for [`DiffSpec::Range`], otherwise `None` (the
    /// index or the working tree).
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
