//! Files as they are in a commit, read through git2 without touching the working tree, and
//! whether a checkout has its history.
//!
//! A pull request's gate reads its configuration from the base commit, so the change under
//! review cannot rewrite the rules that judge it; [`read_file_at_commit`] is how. CI checkouts
//! are often shallow (one commit), and then the base or the merge base is simply missing:
//! the errors of revisions say so themselves, and [`is_shallow`] answers the question directly.

use std::path::{Component, Path};

use git2::{ErrorCode, ObjectType, Repository};

use crate::diff::git::{GitError, resolve_commit};

/// The content of `path` (repository-relative, `/`-separated) in the commit `rev` names;
/// `Ok(None)` when the commit has no such file (or `path` is absolute or climbs out with `..`).
pub fn read_file_at_commit(
    repo_dir: &Path,
    rev: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, GitError> {
    Ok(read_files_at_commit(repo_dir, rev, &[path])?
        .pop()
        .flatten())
}

/// [`read_file_at_commit`] for several paths, opening the repository once; one answer per
/// path, in order.
pub fn read_files_at_commit(
    repo_dir: &Path,
    rev: &str,
    paths: &[&str],
) -> Result<Vec<Option<Vec<u8>>>, GitError> {
    let repo = open(repo_dir)?;
    let commit = repo
        .find_commit(resolve_commit(&repo, rev)?)
        .map_err(|source| GitError::Git {
            action: "reading the commit",
            source,
        })?;
    let tree = commit.tree().map_err(|source| GitError::Git {
        action: "reading the commit's tree",
        source,
    })?;
    let mut found = Vec::with_capacity(paths.len());
    for path in paths {
        let relative = Path::new(path.strip_prefix("./").unwrap_or(path));
        if !relative
            .components()
            .all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
        {
            found.push(None);
            continue;
        }
        let entry = match tree.get_path(relative) {
            Ok(entry) => entry,
            Err(err) if err.code() == ErrorCode::NotFound => {
                found.push(None);
                continue;
            }
            Err(source) => {
                return Err(GitError::Git {
                    action: "looking up a path in the commit's tree",
                    source,
                });
            }
        };
        if entry.kind() != Some(ObjectType::Blob) {
            found.push(None);
            continue;
        }
        let blob = repo.find_blob(entry.id()).map_err(|source| GitError::Git {
            action: "reading a file from the commit",
            source,
        })?;
        found.push(Some(blob.content().to_vec()));
    }
    Ok(found)
}

/// Whether the repository at `repo_dir` is a shallow clone (`git clone --depth`, the default
/// of `actions/checkout`), whose history stops short.
pub fn is_shallow(repo_dir: &Path) -> Result<bool, GitError> {
    Ok(open(repo_dir)?.is_shallow())
}

/// Who git says the user is, for signing a decision when `$USER` is unset (a CI container):
/// `user.name`, else `user.email`, from the repository's, the global and the system config;
/// `None` when neither is set or `repo_dir` is no repository.
pub fn configured_user(repo_dir: &Path) -> Option<String> {
    let config = open(repo_dir).ok()?.config().ok()?.snapshot().ok()?;
    ["user.name", "user.email"].iter().find_map(|key| {
        config
            .get_str(key)
            .ok()
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_string)
    })
}

/// A commit of the first-parent history, as [`first_parent_history`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryCommit {
    pub sha: String,
    /// The first line of the message.
    pub subject: String,
    pub n_parents: usize,
    /// The first parent's sha (what the commit is judged against); `None` for a root commit.
    pub first_parent: Option<String>,
}

/// The last `max` commits of `HEAD`'s first-parent history, newest first: on a branch that
/// merges pull requests, its merges and the commits pushed to it directly.
pub fn first_parent_history(repo_dir: &Path, max: usize) -> Result<Vec<HistoryCommit>, GitError> {
    let repo = open(repo_dir)?;
    let git = |action: &'static str| move |source| GitError::Git { action, source };
    let mut walk = repo.revwalk().map_err(git("walking the history"))?;
    walk.push_head().map_err(git("reading HEAD"))?;
    walk.simplify_first_parent()
        .map_err(git("walking the history"))?;
    let mut commits = Vec::new();
    for oid in walk.take(max) {
        let oid = oid.map_err(git("walking the history"))?;
        let commit = repo.find_commit(oid).map_err(git("reading a commit"))?;
        commits.push(HistoryCommit {
            sha: oid.to_string(),
            subject: String::from_utf8_lossy(commit.message_bytes())
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
            n_parents: commit.parent_count(),
            first_parent: commit.parent_id(0).ok().map(|id| id.to_string()),
        });
    }
    Ok(commits)
}

fn open(repo_dir: &Path) -> Result<Repository, GitError> {
    Repository::open(repo_dir).map_err(|source| GitError::repo_not_found(repo_dir, &source))
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use git2::Signature;

    use super::*;

    fn commit_file(repo: &Repository, path: &str, content: &str) -> String {
        let workdir = repo.workdir().expect("a working tree");
        let full = workdir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(&full, content).expect("write");
        let mut index = repo.index().expect("index");
        index.add_path(Path::new(path)).expect("add");
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let signature = Signature::now("Test", "test@example.com").expect("signature");
        let parent = repo.head().ok().and_then(|head| head.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &signature, &signature, "c", &tree, &parents)
            .expect("commit")
            .to_string()
    }

    #[test]
    fn reads_files_as_they_were_in_a_commit() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init(dir.path()).expect("init");
        let first = commit_file(&repo, "conf/tollgate.toml", "old\n");
        let second = commit_file(&repo, "conf/tollgate.toml", "new\n");
        // The working tree says something else again: it is never read.
        std::fs::write(dir.path().join("conf/tollgate.toml"), "dirty\n").expect("write");

        let read =
            |rev: &str, path: &str| read_file_at_commit(dir.path(), rev, path).expect("reads");
        assert_eq!(
            read(&first, "conf/tollgate.toml").as_deref(),
            Some(&b"old\n"[..])
        );
        assert_eq!(
            read(&second, "./conf/tollgate.toml").as_deref(),
            Some(&b"new\n"[..])
        );
        assert_eq!(
            read("HEAD", "conf/tollgate.toml").as_deref(),
            Some(&b"new\n"[..])
        );
        assert_eq!(read(&first, "missing.toml"), None);
        assert_eq!(read(&first, "conf"), None, "a directory is not a file");
        assert_eq!(read(&first, "../conf/tollgate.toml"), None);
        assert_eq!(read(&first, "/etc/passwd"), None);

        let err = read_file_at_commit(dir.path(), "no-such-rev", "x").expect_err("unknown");
        assert!(matches!(err, GitError::UnknownRevision { .. }), "{err}");
        assert!(!is_shallow(dir.path()).expect("opens"));
    }

    #[test]
    fn shallow_clones_are_detected() {
        let origin = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init(origin.path()).expect("init");
        commit_file(&repo, "a.txt", "1\n");
        commit_file(&repo, "a.txt", "2\n");
        let clone = tempfile::tempdir().expect("temp dir");
        // libgit2 cannot make a shallow clone of a local path; git itself can.
        let status = Command::new("git")
            .args(["clone", "--quiet", "--depth", "1"])
            .arg(format!("file://{}", origin.path().display()))
            .arg(clone.path())
            .status()
            .expect("git runs");
        assert!(status.success());
        assert!(is_shallow(clone.path()).expect("opens"));
    }
}
