//! Posting the core's publish plan: the sticky summary comment, the review with inline
//! comments (after reconciling with ours already there), and the check run with its
//! annotation batches. Each part fails on its own: a failure is collected, logged by the
//! caller, and the remaining parts are still tried.

use reqwest::Method;
use serde_json::{Value, json};
use tollgate::publish::{
    Annotation, CommentSync, InlineComment, PostedComment, Publication, find_summary_comment,
    sync_comments,
};

use crate::github::{ApiError, GitHub};

/// Where to post.
#[derive(Debug)]
pub struct Target<'a> {
    /// `owner/name`, already validated.
    pub repository: &'a str,
    pub pull_request: Option<u64>,
    /// The full head commit id: reviews and check runs are pinned to it.
    pub head_sha: &'a str,
}

/// Which parts to post.
#[derive(Debug)]
pub struct Parts<'a> {
    pub comment: bool,
    pub inline_comments: bool,
    pub check_run: bool,
    pub bot_login: &'a str,
}

/// Posts what `plan` says; returns the calls that failed for good.
pub fn publish(
    github: &GitHub,
    target: &Target<'_>,
    parts: &Parts<'_>,
    plan: &Publication,
) -> Vec<ApiError> {
    let mut failures = Vec::new();
    if let Some(number) = target.pull_request {
        if parts.comment
            && let Err(err) = upsert_summary(
                github,
                target.repository,
                number,
                parts.bot_login,
                &plan.summary_comment,
            )
        {
            failures.push(err);
        }
        if parts.inline_comments {
            failures.extend(review(github, target, number, parts.bot_login, plan));
        }
    }
    if parts.check_run
        && let Err(err) = check_run(github, target, plan)
    {
        failures.push(err);
    }
    failures
}

fn upsert_summary(
    github: &GitHub,
    repository: &str,
    number: u64,
    bot_login: &str,
    body: &str,
) -> Result<(), ApiError> {
    let comments = github.list(&format!("/repos/{repository}/issues/{number}/comments"))?;
    let posted: Vec<PostedComment> = comments.iter().filter_map(posted_comment).collect();
    let payload = json!({ "body": body });
    match find_summary_comment(&posted, bot_login) {
        Some(id) => {
            github.call(
                Method::PATCH,
                &format!("/repos/{repository}/issues/comments/{id}"),
                Some(&payload),
            )?;
            tracing::info!("updated the summary comment {id}");
        }
        None => {
            github.call(
                Method::POST,
                &format!("/repos/{repository}/issues/{number}/comments"),
                Some(&payload),
            )?;
            tracing::info!("posted the summary comment");
        }
    }
    Ok(())
}

fn review(
    github: &GitHub,
    target: &Target<'_>,
    number: u64,
    bot_login: &str,
    plan: &Publication,
) -> Vec<ApiError> {
    let repository = target.repository;
    let existing = match github.list(&format!("/repos/{repository}/pulls/{number}/comments")) {
        Ok(existing) => existing,
        Err(err) => return vec![err],
    };
    let posted: Vec<PostedComment> = existing.iter().filter_map(posted_comment).collect();
    let CommentSync {
        to_post,
        to_update,
        to_delete,
        n_kept,
    } = sync_comments(
        &plan.review.comments,
        &plan.review.dismissed,
        &posted,
        bot_login,
    );
    let mut failures = Vec::new();
    for id in &to_delete {
        if let Err(err) = github.call(
            Method::DELETE,
            &format!("/repos/{repository}/pulls/comments/{id}"),
            None,
        ) {
            failures.push(err);
        }
    }
    for (id, body) in &to_update {
        let payload = json!({ "body": body });
        if let Err(err) = github.call(
            Method::PATCH,
            &format!("/repos/{repository}/pulls/comments/{id}"),
            Some(&payload),
        ) {
            failures.push(err);
        }
    }
    if !to_post.is_empty() {
        let payload = json!({
            "commit_id": target.head_sha,
            "event": "COMMENT",
            "body": plan.review.body,
            "comments": to_post.iter().map(inline_comment).collect::<Vec<_>>(),
        });
        let path = format!("/repos/{repository}/pulls/{number}/reviews");
        match github.call(Method::POST, &path, Some(&payload)) {
            Ok(_) => {}
            // Every anchor was checked against the local diff, so a 422 means GitHub's diff of
            // the pull request differs (its base moved on, say). The review still goes out,
            // with the findings listed in its body instead of inline.
            Err(err) if err.status == Some(422) => {
                tracing::warn!("{err}; posting the review without inline comments");
                let payload = json!({
                    "commit_id": target.head_sha,
                    "event": "COMMENT",
                    "body": unanchored_body(&plan.review.body, &to_post),
                });
                if let Err(err) = github.call(Method::POST, &path, Some(&payload)) {
                    failures.push(err);
                }
            }
            Err(err) => failures.push(err),
        }
    }
    tracing::info!(
        "inline comments: {} posted, {} updated, {} kept, {} stale removed",
        to_post.len(),
        to_update.len(),
        n_kept,
        to_delete.len()
    );
    failures
}

fn check_run(github: &GitHub, target: &Target<'_>, plan: &Publication) -> Result<(), ApiError> {
    let run = &plan.check_run;
    let repository = target.repository;
    let output = |batch: Option<&Vec<Annotation>>| {
        json!({
            "title": run.title,
            "summary": run.summary,
            "annotations": batch.map_or_else(Vec::new, |batch| batch.iter().map(annotation).collect()),
        })
    };
    let mut batches = run.annotation_batches.iter();
    let created = github.call(
        Method::POST,
        &format!("/repos/{repository}/check-runs"),
        Some(&json!({
            "name": run.name,
            "head_sha": target.head_sha,
            "status": "completed",
            "conclusion": run.conclusion.as_str(),
            "output": output(batches.next()),
        })),
    )?;
    let Some(id) = created.get("id").and_then(Value::as_u64) else {
        return Err(ApiError {
            method: Method::POST,
            path: format!("/repos/{repository}/check-runs"),
            status: None,
            message: "the response has no check run id".to_string(),
        });
    };
    // Each update appends its annotations to the run's.
    for batch in batches {
        github.call(
            Method::PATCH,
            &format!("/repos/{repository}/check-runs/{id}"),
            Some(&json!({ "output": output(Some(batch)) })),
        )?;
    }
    tracing::info!("check run {id}: {}", run.title);
    Ok(())
}

/// The review body with the comments GitHub refused to anchor appended, each under its place.
fn unanchored_body(body: &str, comments: &[InlineComment]) -> String {
    let mut text = format!(
        "{body}\nGitHub did not accept these comments on the diff, so they are listed here:\n"
    );
    for comment in comments {
        text.push_str(&format!(
            "\n---\n\n`{}` line {}:\n\n{}\n",
            comment.path.replace('`', "'"),
            comment.line,
            comment.body
        ));
    }
    // GitHub refuses bodies over 65,536 characters; the summary comment has every finding.
    if text.chars().count() > 65_000 {
        text = text.chars().take(64_900).collect::<String>()
            + "\n\n… (cut: see the summary comment)\n";
    }
    text
}

fn inline_comment(comment: &InlineComment) -> Value {
    let mut value = json!({
        "path": comment.path,
        "line": comment.line,
        "side": "RIGHT",
        "body": comment.body,
    });
    if let Some(start_line) = comment.start_line {
        value["start_line"] = json!(start_line);
        value["start_side"] = json!("RIGHT");
    }
    value
}

fn annotation(annotation: &Annotation) -> Value {
    let mut value = json!({
        "path": annotation.path,
        "start_line": annotation.start_line,
        "end_line": annotation.end_line,
        "annotation_level": annotation.level.as_str(),
        "title": annotation.title,
        "message": annotation.message,
    });
    if let Some(column) = annotation.start_column {
        value["start_column"] = json!(column);
    }
    if let Some(column) = annotation.end_column {
        value["end_column"] = json!(column);
    }
    value
}

/// An issue or review comment as the API lists it; entries without an id are skipped.
fn posted_comment(value: &Value) -> Option<PostedComment> {
    Some(PostedComment {
        id: value.get("id")?.as_u64()?,
        author: value
            .pointer("/user/login")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        body: value
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        path: value
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_string),
        line: value
            .get("line")
            .and_then(Value::as_u64)
            .and_then(|line| u32::try_from(line).ok()),
    })
}
