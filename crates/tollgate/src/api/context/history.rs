//! A path's commits: the history of one file or directory, newest first, from git (not the
//! index's text search of commit messages, which `git_commit_retrieval` is).

use time::format_description::well_known::Rfc3339;

use super::ContextError;
use crate::secrets::scrub;
use crate::workspace::IndexedWorkspace;

/// The most commits walked looking for a path's (older ones are not read).
const MAX_WALKED: usize = 20_000;

/// One commit that changed the path.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PathCommit {
    pub sha: String,
    /// The message's first line (secrets masked).
    pub summary: String,
    pub author: String,
    /// RFC 3339.
    pub date: String,
    /// The files under the path it changed (the path itself for a file).
    pub files: Vec<String>,
}

/// The commits reachable from `HEAD` that changed `path` (a workspace-relative file or
/// directory; `""` for every commit), newest first, at most `limit`; each compared with its
/// first parent, so a merge counts when it brought the change to the branch. Empty outside a
/// repository or before the first commit.
pub fn path_commits(
    ws: &IndexedWorkspace,
    path: &str,
    limit: usize,
) -> Result<Vec<PathCommit>, ContextError> {
    let unreadable = |err: git2::Error| ContextError::Unreadable {
        path: ws.root().display().to_string(),
        message: err.message().to_string(),
    };
    let Ok(repo) = git2::Repository::discover(ws.root()) else {
        return Ok(Vec::new());
    };
    let Some(workdir) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return Ok(Vec::new());
    };
    // The workspace may be a directory inside the repository.
    let prefix = ws
        .root()
        .strip_prefix(&workdir)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let spec = [prefix.as_str(), path]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    let mut walk = repo.revwalk().map_err(unreadable)?;
    if walk.push_head().is_err() {
        return Ok(Vec::new());
    }
    walk.set_sorting(git2::Sort::TIME).map_err(unreadable)?;
    let mut out = Vec::new();
    for oid in walk.take(MAX_WALKED) {
        let commit = repo
            .find_commit(oid.map_err(unreadable)?)
            .map_err(unreadable)?;
        let tree = commit.tree().map_err(unreadable)?;
        let parent = match commit.parent(0) {
            Ok(parent) => Some(parent.tree().map_err(unreadable)?),
            Err(_) => None,
        };
        let mut options = git2::DiffOptions::new();
        if !spec.is_empty() {
            options.pathspec(spec.as_str());
        }
        let diff = repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut options))
            .map_err(unreadable)?;
        if diff.deltas().next().is_none() {
            continue;
        }
        let files = diff
            .deltas()
            .filter_map(|delta| delta.new_file().path().or(delta.old_file().path()))
            .map(|p| {
                let p = p.to_string_lossy().replace('\\', "/");
                p.strip_prefix(&format!("{prefix}/"))
                    .map(str::to_string)
                    .unwrap_or(p)
            })
            .collect();
        let author = commit.author();
        out.push(PathCommit {
            sha: commit.id().to_string(),
            summary: scrub(
                commit
                    .message()
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default(),
                0,
                0,
            )
            .text,
            author: author.name().unwrap_or_default().to_string(),
            date: time::OffsetDateTime::from_unix_timestamp(commit.time().seconds())
                .ok()
                .and_then(|t| t.format(&Rfc3339).ok())
                .unwrap_or_default(),
            files,
        });
        if out.len() == limit {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(repo: &git2::Repository, files: &[(&str, &str)], message: &str, when: i64) {
        let root = repo.workdir().unwrap();
        let mut index = repo.index().unwrap();
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            index.add_path(std::path::Path::new(name)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature =
            git2::Signature::new("T", "t@example.com", &git2::Time::new(when, 0)).unwrap();
        let parent = repo.head().ok().map(|h| h.peel_to_commit().unwrap());
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

    #[test]
    fn a_paths_commits_are_its_own_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        commit(
            &repo,
            &[("src/a.rs", "1"), ("b.rs", "1")],
            "add both",
            1_000,
        );
        commit(&repo, &[("b.rs", "2")], "touch b only", 2_000);
        commit(&repo, &[("src/a.rs", "3")], "touch a", 3_000);
        let ws = IndexedWorkspace::open(dir.path()).unwrap();
        let a = path_commits(&ws, "src/a.rs", 10).unwrap();
        let summaries: Vec<&str> = a.iter().map(|c| c.summary.as_str()).collect();
        assert_eq!(summaries, ["touch a", "add both"]);
        assert_eq!(a[0].files, ["src/a.rs"]);
        // A directory's: every commit touching a file under it.
        assert_eq!(path_commits(&ws, "src", 10).unwrap().len(), 2);
        assert_eq!(
            path_commits(&ws, "b.rs", 1).unwrap()[0].summary,
            "touch b only"
        );
    }
}
