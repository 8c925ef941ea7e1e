//! The session operations on the wire (upstream's names: `reactive_review_pr`,
//! `get_review_status`, …); `reactive_review_pr`'s request is validated once into a
//! [`PullRequest`] before the domain sees it.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ApiError;
use crate::session::{self, PullRequest, ReactiveReviewPrResponse, SessionError, SessionSettings};
use crate::store::Store;

/// The most workers a session may use.
pub const MAX_WORKERS_LIMIT: u32 = 16;
/// The most changed files one session reviews.
const MAX_FILES: usize = 10_000;
const MAX_TEXT_CHARS: usize = 1_000;

/// Input of `reactive_review_pr`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReactiveReviewPrRequest {
    /// The pull request's head commit (any revision git resolves in the workspace).
    pub commit_hash: String,
    /// The branch or commit the pull request merges into; the review covers
    /// `merge-base(base_ref, commit_hash)..commit_hash`.
    pub base_ref: String,
    /// The files to review: a list, a comma-separated string or a JSON array string.
    pub changed_files: ChangedFilesArg,
    /// The pull request's title (informational, at most 1,000 characters).
    #[serde(default)]
    pub title: Option<String>,
    /// The pull request's author (informational, at most 1,000 characters).
    #[serde(default)]
    pub author: Option<String>,
    /// Lines added, as the caller's platform counts them (informational).
    #[serde(default)]
    pub additions: Option<u64>,
    /// Lines deleted, as the caller's platform counts them (informational).
    #[serde(default)]
    pub deletions: Option<u64>,
    /// Run steps in parallel (default true); false means one worker.
    #[serde(default)]
    pub parallel: Option<bool>,
    /// Workers when parallel (default 3, 1–16).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_WORKERS_LIMIT))]
    pub max_workers: Option<u32>,
}

/// `changed_files` as upstream sends it (a string) or as a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ChangedFilesArg {
    List(Vec<String>),
    /// Comma-separated paths, or a JSON array of paths, in a string.
    Text(String),
}

impl Default for ChangedFilesArg {
    fn default() -> ChangedFilesArg {
        ChangedFilesArg::List(Vec::new())
    }
}

/// Input of `pause_review`, `resume_review`, `cancel_review` and `get_review_telemetry`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionIdRequest {
    /// The id `reactive_review_pr` returned.
    pub session_id: String,
}

/// Input of `get_review_status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStatusRequest {
    /// The id `reactive_review_pr` returned.
    pub session_id: String,
    /// Also return the findings so far (deduplicated, in the order found). Default false.
    #[serde(default)]
    pub include_findings: bool,
}

/// A session error as the wire shows it.
pub fn session_error(err: SessionError) -> ApiError {
    let error = ApiError::new(err.code(), err.to_string());
    match err.field() {
        Some(field) => error.at(field),
        None => error,
    }
}

/// `reactive_review_pr`: validates the request and creates the session (queued; it runs when
/// a worker claims it).
pub fn reactive_review_pr(
    store: &Store,
    workspace: &Path,
    request: &ReactiveReviewPrRequest,
    settings: &SessionSettings,
) -> Result<ReactiveReviewPrResponse, ApiError> {
    let pull_request = validate(request, settings).map_err(session_error)?;
    session::create(store, workspace, pull_request, settings).map_err(session_error)
}

/// The request checked and normalised (revisions, paths, workers, text lengths).
pub fn validate(
    request: &ReactiveReviewPrRequest,
    settings: &SessionSettings,
) -> Result<PullRequest, SessionError> {
    let invalid =
        |field: &'static str, message: String| SessionError::InvalidInput { field, message };
    let revision = |field: &'static str, value: &str| -> Result<String, SessionError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(invalid(field, "must not be empty".into()));
        }
        // Revisions go to git2 as data, never to a command line, but a leading `-` or control
        // characters are never a revision anyone meant.
        if value.starts_with('-') || value.chars().any(char::is_control) || value.len() > 256 {
            return Err(invalid(
                field,
                format!("`{}` is not a revision", value.escape_debug()),
            ));
        }
        Ok(value.to_string())
    };
    let commit_hash = revision("commit_hash", &request.commit_hash)?;
    let base_ref = revision("base_ref", &request.base_ref)?;
    let mut changed_files = parse_changed_files(&request.changed_files)?;
    for path in &changed_files {
        if let Some(reason) = refuse_path(path) {
            return Err(invalid(
                "changed_files",
                format!("`{}`: {reason}", path.escape_debug()),
            ));
        }
    }
    changed_files.sort();
    changed_files.dedup();
    if changed_files.is_empty() {
        return Err(invalid("changed_files", "no paths given".into()));
    }
    if changed_files.len() > MAX_FILES {
        return Err(invalid(
            "changed_files",
            format!("{} paths; at most {MAX_FILES}", changed_files.len()),
        ));
    }
    let max_workers = match (request.parallel, request.max_workers) {
        (Some(false), _) => 1,
        (_, Some(n)) if n == 0 || n > MAX_WORKERS_LIMIT => {
            return Err(invalid(
                "max_workers",
                format!("{n}; must be 1–{MAX_WORKERS_LIMIT}"),
            ));
        }
        (_, Some(n)) => n,
        (_, None) => settings.default_max_workers.clamp(1, MAX_WORKERS_LIMIT),
    };
    let text =
        |field: &'static str, value: &Option<String>| -> Result<Option<String>, SessionError> {
            match value {
                Some(v) if v.chars().count() > MAX_TEXT_CHARS => Err(invalid(
                    field,
                    format!("longer than {MAX_TEXT_CHARS} characters"),
                )),
                Some(v) => Ok(Some(v.clone())),
                None => Ok(None),
            }
        };
    Ok(PullRequest {
        commit_hash,
        base_ref,
        changed_files,
        title: text("title", &request.title)?,
        author: text("author", &request.author)?,
        additions: request.additions,
        deletions: request.deletions,
        max_workers,
    })
}

/// A list, a JSON array string or a comma-separated string; entries trimmed, `./` dropped.
fn parse_changed_files(arg: &ChangedFilesArg) -> Result<Vec<String>, SessionError> {
    let raw: Vec<String> = match arg {
        ChangedFilesArg::List(list) => list.clone(),
        ChangedFilesArg::Text(text) if text.trim_start().starts_with('[') => {
            serde_json::from_str(text).map_err(|err| SessionError::InvalidInput {
                field: "changed_files",
                message: format!("not a JSON array of strings: {err}"),
            })?
        }
        ChangedFilesArg::Text(text) => text.split(',').map(str::to_string).collect(),
    };
    Ok(raw
        .iter()
        .map(|p| p.trim())
        .map(|p| p.strip_prefix("./").unwrap_or(p).to_string())
        .filter(|p| !p.is_empty())
        .collect())
}

/// Why a path may not be reviewed (the same rules as `review_diff`'s `changed_files`:
/// [`crate::workspace::changed_file`]).
fn refuse_path(path: &str) -> Option<String> {
    crate::workspace::changed_file(path)
        .err()
        .map(|err| err.reason())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(files: ChangedFilesArg) -> ReactiveReviewPrRequest {
        ReactiveReviewPrRequest {
            commit_hash: "HEAD".into(),
            base_ref: "main".into(),
            changed_files: files,
            ..ReactiveReviewPrRequest::default()
        }
    }

    #[test]
    fn changed_files_come_as_csv_json_or_list() {
        let settings = SessionSettings::default();
        for arg in [
            ChangedFilesArg::Text(" a.rs, ./b.rs ,,a.rs".into()),
            ChangedFilesArg::Text(r#"["b.rs", "a.rs"]"#.into()),
            ChangedFilesArg::List(vec!["a.rs".into(), "b.rs".into()]),
        ] {
            let valid = validate(&request(arg), &settings).unwrap();
            assert_eq!(valid.changed_files, ["a.rs", "b.rs"]);
            assert_eq!(valid.max_workers, 3);
        }
    }

    #[test]
    fn bad_input_names_the_field() {
        let settings = SessionSettings::default();
        let cases = [
            (
                request(ChangedFilesArg::Text("../x".into())),
                "changed_files",
            ),
            (
                request(ChangedFilesArg::Text("[1]".into())),
                "changed_files",
            ),
            (
                request(ChangedFilesArg::Text(" , ".into())),
                "changed_files",
            ),
            (
                ReactiveReviewPrRequest {
                    base_ref: "--upload-pack=x".into(),
                    ..request(ChangedFilesArg::Text("a".into()))
                },
                "base_ref",
            ),
            (
                ReactiveReviewPrRequest {
                    max_workers: Some(99),
                    ..request(ChangedFilesArg::Text("a".into()))
                },
                "max_workers",
            ),
        ];
        for (req, field) in cases {
            let err = validate(&req, &settings).unwrap_err();
            assert_eq!(err.field(), Some(field), "{err}");
            assert_eq!(err.code(), "INVALID_INPUT");
        }
        let serial = ReactiveReviewPrRequest {
            parallel: Some(false),
            max_workers: Some(8),
            ..request(ChangedFilesArg::Text("a".into()))
        };
        assert_eq!(validate(&serial, &settings).unwrap().max_workers, 1);
    }
}
