//! `review_git_diff`: the diff of a target of the workspace's repository, through git2 (no git
//! command, so no shell and no option parsing), then `review_changes` on it.
//!
//! Refs come from callers (often a model), so they are checked before git sees them: no leading
//! `-`, no whitespace or control characters, no `..` ranges (`base` is the way to ask for one),
//! and each must resolve to a commit with `revparse_single`. Only the resolved commit ids reach
//! the diff.

use std::path::Path;

use git2::Repository;

use super::{GitInfo, MAX_REF_CHARS, Options, ReviewGitDiffRequest, ReviewGitDiffResponse};
use crate::api::review::RequestError;
use crate::config::RawConfig;
use crate::diff::{self, DiffSpec};
use crate::review::ReviewError;

/// Runs `review_git_diff` on the repository at `workspace`.
pub fn review_git_diff(
    workspace: &Path,
    settings: RawConfig,
    request: &ReviewGitDiffRequest,
) -> Result<ReviewGitDiffResponse, RequestError> {
    let target = request.target.as_deref();
    let base = request.base.as_deref();
    if let Some(target) = target {
        check_ref("target", target)?;
    }
    if let Some(base) = base {
        check_ref("base", base)?;
    }
    let options = Options::new(&request.options, "options.", &request.include_patterns)?;
    let config = settings.resolve()?;

    let (spec, compared) = match (target, base) {
        (None | Some("staged"), None) => (DiffSpec::Staged, "HEAD → index (staged changes)"),
        (Some("unstaged"), None) => (
            DiffSpec::Unstaged,
            "index → working tree (unstaged changes)",
        ),
        (Some("head"), None) => (
            DiffSpec::WorkingTree,
            "HEAD → working tree (every uncommitted change)",
        ),
        (Some(rev), None) => {
            let commit = resolve(workspace, "target", rev)?;
            (DiffSpec::Commit { rev: commit }, "first parent → commit")
        }
        (Some("staged" | "unstaged"), Some(_)) => {
            return Err(RequestError::invalid(
                "target",
                "with `base`, `target` must be a branch, a commit or `head`: base...target compares commits",
            ));
        }
        (target, Some(base)) => {
            let rev = match target {
                None | Some("head") => "HEAD",
                Some(rev) => rev,
            };
            let head = resolve(workspace, "target", rev)?;
            let base = resolve(workspace, "base", base)?;
            (DiffSpec::Range { base, head }, "merge base → target")
        }
    };
    let git = diff::diff_from_repo(workspace, &spec).map_err(ReviewError::from)?;
    let files_in_diff = git.diff.files().len();
    let files_changed = git
        .diff
        .files()
        .iter()
        .filter(|file| options.selects(file))
        .count();
    let review = super::review_parsed(&git.diff, &options, &config, workspace)?;
    Ok(ReviewGitDiffResponse {
        git_info: GitInfo {
            target: request
                .target
                .clone()
                .unwrap_or_else(|| if base.is_some() { "HEAD" } else { "staged" }.to_string()),
            base: request.base.clone(),
            compared: compared.to_string(),
            base_commit: git.base_sha,
            head_commit: git.head_sha,
            files_in_diff,
            files_changed,
            diff_bytes: git.diff.as_bytes().len(),
        },
        review,
    })
}

/// Refuses what could be read as an option or a range, or is not a plain ref.
fn check_ref(field: &str, rev: &str) -> Result<(), RequestError> {
    let problem = if rev.is_empty() {
        Some("is empty")
    } else if rev.chars().count() > MAX_REF_CHARS {
        Some("is too long")
    } else if rev.starts_with('-') {
        Some("starts with `-` (refs never do; it would read as an option)")
    } else if rev.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("contains whitespace or control characters")
    } else if rev.contains("..") {
        Some("is a range; pass the two ends as `base` and `target`")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RequestError::invalid(
            field,
            format!("`{}` {problem}", rev.escape_debug()),
        )),
        None => Ok(()),
    }
}

/// The commit `rev` names, as a full id.
fn resolve(workspace: &Path, field: &str, rev: &str) -> Result<String, RequestError> {
    let repo = Repository::open(workspace)
        .map_err(|source| ReviewError::Git(diff::GitError::repo_not_found(workspace, &source)))?;
    let commit = repo
        .revparse_single(rev)
        .and_then(|object| object.peel_to_commit())
        .map_err(|err| {
            RequestError::invalid(
                field,
                format!(
                    "`{rev}` does not name a commit of the repository: {}",
                    err.message()
                ),
            )
        })?;
    Ok(commit.id().to_string())
}
