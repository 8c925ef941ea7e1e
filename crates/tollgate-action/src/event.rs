//! The workflow's event: which commits to compare and where to post, from `GITHUB_EVENT_NAME`
//! and the payload at `GITHUB_EVENT_PATH`.
//!
//! | event | base | head | posts to |
//! |---|---|---|---|
//! | `pull_request`, `pull_request_target` | `pull_request.base.sha` | `pull_request.head.sha` | the PR and a check run on its head |
//! | `push` | `before` (the head's first parent for a new branch) | `after` | a check run |
//! | `workflow_dispatch` | input `base`, else the default branch | input `head`, else `GITHUB_SHA` | a check run |
//!
//! A `pull_request` from a fork runs with a read-only token (and no secrets), so it is marked
//! [`Event::read_only`] and nothing is posted through the API.

use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;

/// What the action needs to know about the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    /// The revision the diff starts from (`base...head`, so from their merge base).
    pub base: String,
    /// The revision under review; check runs and reviews are pinned to it.
    pub head: String,
    pub pull_request: Option<PullRequest>,
    /// The token cannot write (a pull request from a fork).
    pub read_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
}

/// The parts of the payloads that are read; everything else is ignored.
#[derive(Debug, Deserialize)]
struct Payload {
    pull_request: Option<PayloadPullRequest>,
    before: Option<String>,
    after: Option<String>,
    inputs: Option<DispatchInputs>,
    repository: Option<PayloadRepository>,
}

#[derive(Debug, Deserialize)]
struct PayloadPullRequest {
    number: u64,
    base: PayloadRef,
    head: PayloadRef,
}

#[derive(Debug, Deserialize)]
struct PayloadRef {
    sha: String,
    repo: Option<PayloadRepository>,
}

#[derive(Debug, Deserialize)]
struct PayloadRepository {
    full_name: Option<String>,
    default_branch: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DispatchInputs {
    base: Option<String>,
    head: Option<String>,
}

/// A push's `before` on a newly created branch.
const NULL_SHA: &str = "0000000000000000000000000000000000000000";

/// Reads the event. `base`/`head` override what the event says; `sha` is `GITHUB_SHA`.
pub fn read(
    name: &str,
    path: &Path,
    sha: Option<&str>,
    base: Option<&str>,
    head: Option<&str>,
) -> anyhow::Result<Event> {
    let bytes = read_payload(path)?;
    let payload: Payload = serde_json::from_slice(&bytes)
        .with_context(|| format!("the event payload {} is not valid JSON", path.display()))?;
    from_payload(name, payload, sha, base, head)
}

/// GitHub caps webhook payloads at 25 MB; the event file is one of them.
pub const MAX_EVENT_PAYLOAD_BYTES: u64 = 25 * 1024 * 1024;

/// The event payload file's bytes: a regular file of at most [`MAX_EVENT_PAYLOAD_BYTES`].
pub fn read_payload(path: &Path) -> Result<Vec<u8>, tollgate::input::InputError> {
    tollgate::input::read_file(
        path,
        "event payload",
        tollgate::input::Limit::fixed(MAX_EVENT_PAYLOAD_BYTES),
    )
}

fn from_payload(
    name: &str,
    payload: Payload,
    sha: Option<&str>,
    base: Option<&str>,
    head: Option<&str>,
) -> anyhow::Result<Event> {
    let non_blank = |value: Option<&str>| {
        value
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_string)
    };
    let (base_override, head_override) = (non_blank(base), non_blank(head));
    let (event_base, event_head, pull_request, read_only) = match name {
        "pull_request" | "pull_request_target" => {
            let Some(pr) = payload.pull_request else {
                bail!("the {name} event payload has no `pull_request`");
            };
            let full_name =
                |r: &PayloadRef| r.repo.as_ref().and_then(|repo| repo.full_name.clone());
            // `pull_request_target` runs in the base repository with its token, fork or not.
            let from_fork = name == "pull_request" && full_name(&pr.head) != full_name(&pr.base);
            (
                Some(pr.base.sha),
                Some(pr.head.sha),
                Some(PullRequest { number: pr.number }),
                from_fork,
            )
        }
        "push" => {
            let head = payload.after.or_else(|| sha.map(str::to_string));
            let base = match (payload.before, &head) {
                (Some(before), _) if before != NULL_SHA => Some(before),
                // A new branch: review its last commit.
                (_, Some(head)) => Some(format!("{head}~1")),
                _ => None,
            };
            (base, head, None, false)
        }
        "workflow_dispatch" => {
            let inputs = payload.inputs;
            let base = inputs
                .as_ref()
                .and_then(|inputs| non_blank(inputs.base.as_deref()))
                .or_else(|| {
                    payload
                        .repository
                        .and_then(|repo| repo.default_branch)
                        .map(|branch| format!("origin/{branch}"))
                });
            let head = inputs
                .as_ref()
                .and_then(|inputs| non_blank(inputs.head.as_deref()))
                .or_else(|| sha.map(str::to_string));
            (base, head, None, false)
        }
        _ => (None, sha.map(str::to_string), None, false),
    };
    let Some(base) = base_override.or(event_base) else {
        bail!("the {name} event does not say what to compare with; set the action's `base` input");
    };
    let Some(head) = head_override.or(event_head) else {
        bail!("the {name} event does not say what to review; set the action's `head` input");
    };
    Ok(Event {
        name: name.to_string(),
        base,
        head,
        pull_request,
        read_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str, json: &str) -> anyhow::Result<Event> {
        from_payload(
            name,
            serde_json::from_str(json).unwrap(),
            Some("g1"),
            None,
            None,
        )
    }

    const PR: &str = r#"{"pull_request": {"number": 7,
        "base": {"sha": "b1", "repo": {"full_name": "o/r"}},
        "head": {"sha": "h1", "repo": {"full_name": "FORK/r"}}}}"#;

    #[test]
    fn pull_requests_from_forks_are_read_only_unless_target() {
        let pr = event("pull_request", PR).unwrap();
        assert_eq!((pr.base.as_str(), pr.head.as_str()), ("b1", "h1"));
        assert_eq!(pr.pull_request, Some(PullRequest { number: 7 }));
        assert!(pr.read_only);
        assert!(!event("pull_request_target", PR).unwrap().read_only);
        let same = PR.replace("FORK/r", "o/r");
        assert!(!event("pull_request", &same).unwrap().read_only);
    }

    #[test]
    fn pushes_and_dispatches() {
        let push = event("push", r#"{"before": "a0", "after": "a1"}"#).unwrap();
        assert_eq!((push.base.as_str(), push.head.as_str()), ("a0", "a1"));
        let new_branch = event(
            "push",
            &format!(r#"{{"before": "{NULL_SHA}", "after": "a1"}}"#),
        )
        .unwrap();
        assert_eq!(new_branch.base, "a1~1");
        let dispatch = event(
            "workflow_dispatch",
            r#"{"inputs": {}, "repository": {"default_branch": "main"}}"#,
        )
        .unwrap();
        assert_eq!(
            (dispatch.base.as_str(), dispatch.head.as_str()),
            ("origin/main", "g1")
        );
        let with_inputs = event(
            "workflow_dispatch",
            r#"{"inputs": {"base": "v1", "head": "v2"}}"#,
        )
        .unwrap();
        assert_eq!(
            (with_inputs.base.as_str(), with_inputs.head.as_str()),
            ("v1", "v2")
        );
    }

    #[test]
    fn overrides_win_and_missing_parts_are_named() {
        let payload = serde_json::from_str(PR).unwrap();
        let pr = from_payload("pull_request", payload, None, Some("main"), Some(" ")).unwrap();
        assert_eq!((pr.base.as_str(), pr.head.as_str()), ("main", "h1"));
        let err = event("pull_request", "{}").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the pull_request event payload has no `pull_request`"
        );
        let err = event("schedule", "{}").unwrap_err();
        assert!(
            err.to_string().contains("set the action's `base` input"),
            "{err}"
        );
    }
}
