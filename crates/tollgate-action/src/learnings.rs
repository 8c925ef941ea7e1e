//! Dismissals recorded on the pull request itself, read again at every run: a reply
//! `/tollgate dismiss <reason>` to one of our inline comments, or a resolved review thread that
//! starts with one. The Action cannot commit to the pull request, so these are applied on top
//! of the base commit's `.review-learnings.jsonl` at each run, and written to
//! `learnings.jsonl` in the output directory for the team to commit.
//!
//! Only people with write access decide, by one rule for replies and resolved threads: the
//! person's repository permission (`GET /repos/{o}/{r}/collaborators/{login}/permission`) is
//! write, maintain or admin. `author_association` is not asked: GitHub says COLLABORATOR or
//! MEMBER for read-only collaborators and organisation members too. The reason is untrusted
//! text: it goes into the ledger record only (control characters removed, length capped),
//! never into a shell or a workflow command.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use reqwest::Method;
use serde_json::{Value, json};
use tollgate::diff;
use tollgate::learnings::{Disposition, Learnings, MAX_REASON_CHARS, Record};
use tollgate::publish::marked_fingerprint;

use crate::github::{ApiError, GitHub};

/// The command a reply starts with.
pub const DISMISS_COMMAND: &str = "/tollgate dismiss";
/// Repository permissions that may dismiss a finding.
const TRUSTED_PERMISSIONS: [&str; 3] = ["admin", "maintain", "write"];
/// Review threads read at most (100 a page).
const MAX_THREAD_PAGES: usize = 20;

/// What was read: the records, and what was refused or could not be read (for warnings).
#[derive(Debug, Default)]
pub struct PrLearnings {
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
}

/// Reads the dismissals on pull request `number`. `workspace` is the checkout, for the code each
/// dismissed comment was made on (its evidence).
pub fn read(
    github: &GitHub,
    workspace: &Path,
    repository: &str,
    number: u64,
    bot_login: &str,
) -> Result<PrLearnings, ApiError> {
    let comments = github.list(&format!("/repos/{repository}/pulls/{number}/comments"))?;
    let ours: HashMap<u64, &Value> = comments
        .iter()
        .filter(|comment| {
            login(comment).eq_ignore_ascii_case(bot_login)
                && marked_fingerprint(text(comment, "body")).is_some()
        })
        .filter_map(|comment| Some((comment.get("id")?.as_u64()?, comment)))
        .collect();
    let mut out = PrLearnings::default();
    // Each person's permission is asked once a run.
    let mut permission: BTreeMap<String, bool> = BTreeMap::new();
    let mut may_dismiss = |login: &str| {
        *permission
            .entry(login.to_string())
            .or_insert_with(|| can_write(github, repository, login))
    };
    for reply in &comments {
        let Some(parent) = reply
            .get("in_reply_to_id")
            .and_then(Value::as_u64)
            .and_then(|id| ours.get(&id))
        else {
            continue;
        };
        let Some(reason) = dismiss_reason(text(reply, "body")) else {
            continue;
        };
        if !may_dismiss(login(reply)) {
            out.warnings.push(format!(
                "ignored `{DISMISS_COMMAND}` by {}: only people with write access may dismiss",
                login(reply)
            ));
            continue;
        }
        out.records.extend(record(
            workspace,
            parent,
            reason,
            login(reply),
            text(reply, "created_at"),
        ));
    }
    match resolved_threads(github, repository, number) {
        Ok(threads) => {
            for thread in threads {
                let Some(parent) = ours.get(&thread.first_comment) else {
                    continue;
                };
                if !may_dismiss(&thread.resolver) {
                    out.warnings.push(format!(
                        "ignored the thread {} resolved: only people with write access may dismiss",
                        thread.resolver
                    ));
                    continue;
                }
                out.records.extend(record(
                    workspace,
                    parent,
                    "resolved the review thread".to_string(),
                    &thread.resolver,
                    &thread.at,
                ));
            }
        }
        Err(err) => out.warnings.push(format!(
            "cannot read the review threads ({err}): resolved threads are not applied"
        )),
    }
    Ok(out)
}

/// The reason of a `/tollgate dismiss <reason>` body (its first line), cleaned
/// ([`tollgate::learnings::clean_text`]: control characters removed, secrets masked) and
/// capped; `None` when the body is not that command.
pub fn dismiss_reason(body: &str) -> Option<String> {
    let line = body.trim_start().lines().next()?.trim_end();
    let rest = line.strip_prefix(DISMISS_COMMAND)?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let reason: String = tollgate::learnings::clean_text(rest.trim())
        .chars()
        .take(MAX_REASON_CHARS)
        .collect();
    Some(if reason.trim().is_empty() {
        "dismissed on the pull request".to_string()
    } else {
        reason
    })
}

/// The dismissal of the finding behind our comment `parent`.
fn record(workspace: &Path, parent: &Value, reason: String, by: &str, at: &str) -> Option<Record> {
    let body = text(parent, "body");
    let fingerprint = marked_fingerprint(body)?.to_string();
    let path = text(parent, "path").to_string();
    let number = |key: &str| {
        parent
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let line = number("original_line").or_else(|| number("line"))?;
    let start = number("original_start_line")
        .or_else(|| number("start_line"))
        .unwrap_or(line);
    let commit = Some(text(parent, "original_commit_id"))
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| text(parent, "commit_id"));
    // The code the reviewer saw: the file at the commit the comment was made on.
    let evidence = diff::read_file_at_commit(workspace, commit, &path)
        .ok()
        .flatten()
        .and_then(|bytes| {
            Learnings::evidence_of_text(&String::from_utf8_lossy(&bytes), start, line)
        });
    Some(Record {
        fingerprint,
        rule_id: rule_of(body),
        path,
        scope: None,
        disposition: Disposition::Dismissed,
        reason,
        by: by.to_string(),
        at: at.to_string(),
        evidence,
    })
}

/// The rule id our comment shows at the end of its first line (`… · `TG003``); empty when it
/// cannot be read, and then the fingerprint alone identifies the finding.
fn rule_of(body: &str) -> String {
    let first = body.lines().next().unwrap_or_default().trim_end();
    first
        .rsplit_once(" · ")
        .map(|(_, code)| code.trim().trim_matches('`').trim().to_string())
        .filter(|rule| !rule.is_empty() && rule.len() <= 200 && !rule.contains(char::is_whitespace))
        .unwrap_or_default()
}

/// A resolved review thread.
struct ResolvedThread {
    /// The database id of its first comment.
    first_comment: u64,
    resolver: String,
    /// When, as near as GraphQL tells: a thread has no resolution time, so this is the time of
    /// its newest comment (RFC 3339), the latest moment before the resolution it knows.
    at: String,
}

/// Every resolved thread of the pull request.
fn resolved_threads(
    github: &GitHub,
    repository: &str,
    number: u64,
) -> Result<Vec<ResolvedThread>, ApiError> {
    const QUERY: &str = "query($owner:String!,$name:String!,$number:Int!,$cursor:String){repository(owner:$owner,name:$name){pullRequest(number:$number){reviewThreads(first:100,after:$cursor){pageInfo{hasNextPage endCursor}nodes{isResolved resolvedBy{login}comments(first:1){nodes{databaseId}}latest:comments(last:1){nodes{createdAt}}}}}}}";
    let (owner, name) = repository.split_once('/').unwrap_or((repository, ""));
    let mut cursor = Value::Null;
    let mut threads = Vec::new();
    for _ in 0..MAX_THREAD_PAGES {
        let data = github.graphql(
            QUERY,
            &json!({"owner": owner, "name": name, "number": number, "cursor": cursor}),
        )?;
        let page = &data["repository"]["pullRequest"]["reviewThreads"];
        for thread in page["nodes"].as_array().into_iter().flatten() {
            if thread["isResolved"] != Value::Bool(true) {
                continue;
            }
            let first = thread["comments"]["nodes"][0]["databaseId"].as_u64();
            let resolver = thread["resolvedBy"]["login"].as_str();
            if let (Some(first_comment), Some(resolver)) = (first, resolver) {
                threads.push(ResolvedThread {
                    first_comment,
                    resolver: resolver.to_string(),
                    at: thread["latest"]["nodes"][0]["createdAt"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                });
            }
        }
        if page["pageInfo"]["hasNextPage"] != Value::Bool(true) {
            break;
        }
        cursor = page["pageInfo"]["endCursor"].clone();
    }
    Ok(threads)
}

/// Whether `login` has write access (a failed check is a no).
fn can_write(github: &GitHub, repository: &str, login: &str) -> bool {
    if !login
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '[' | ']'))
    {
        return false;
    }
    let path = format!("/repos/{repository}/collaborators/{login}/permission");
    github.call(Method::GET, &path, None).is_ok_and(|answer| {
        TRUSTED_PERMISSIONS.contains(&answer["permission"].as_str().unwrap_or_default())
    })
}

fn login(comment: &Value) -> &str {
    comment
        .pointer("/user/login")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_dismiss_command_gives_a_reason() {
        assert_eq!(
            dismiss_reason("/tollgate dismiss test fixture\nmore").as_deref(),
            Some("test fixture")
        );
        assert_eq!(
            dismiss_reason("  /tollgate dismiss").as_deref(),
            Some("dismissed on the pull request")
        );
        assert_eq!(
            dismiss_reason("/tollgate dismiss a\u{1b}[31m::error::x").as_deref(),
            Some("a [31m::error::x")
        );
        assert_eq!(dismiss_reason("/tollgate dismissed it"), None);
        assert_eq!(dismiss_reason("please /tollgate dismiss x"), None);
    }

    #[test]
    fn the_rule_is_read_from_our_comment() {
        assert_eq!(
            rule_of("**🔴 HIGH** · **Title · with dots** · `TG003`\n\ntext"),
            "TG003"
        );
        assert_eq!(rule_of("no rule here"), "");
    }
}
