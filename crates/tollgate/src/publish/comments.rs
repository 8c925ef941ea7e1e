//! Inline review comments: which findings get one and where, the review body that lists the
//! rest, and how a new run's comments reconcile with those already on the pull request.

use std::fmt::Write as _;

use super::PublishConfig;
use crate::diff::ChangedLines;
use crate::findings::{Applicability, Finding, LearningStatus, ReviewResult};
use crate::report::{self, SUMMARY_MARKER};

/// Findings over the cap listed one per line in the review body; the rest are counted.
const MAX_LISTED_IN_BODY: usize = 50;
const FINDING_MARKER_PREFIX: &str = "<!-- tollgate:finding:v1 ";
const MARKER_SUFFIX: &str = " -->";
/// The first line of every review body, so people and tools can tell Tollgate's reviews apart.
const REVIEW_MARKER: &str = "<!-- tollgate:review:v1 -->";

/// The review to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewPlan {
    /// Markdown; lists the findings in hunks that the cap kept out of `comments`.
    pub body: String,
    /// Worst first; every anchor lies inside one hunk of the diff's new side.
    pub comments: Vec<InlineComment>,
    /// Findings inside hunks that the cap kept out of `comments`.
    pub n_over_cap: usize,
    /// Fingerprints (as in markers) of the findings the learnings ledger dismissed, and the
    /// earlier ones of returning findings: their comments stay, since the thread holds the
    /// dismissal that later runs read again.
    pub dismissed: Vec<String>,
}

/// One inline comment, anchored on the new side (GitHub's `side: RIGHT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineComment {
    pub path: String,
    /// The first line of a multi-line comment; `None` for a single line.
    pub start_line: Option<u32>,
    /// The commented line (the last one of a range).
    pub line: u32,
    /// Markdown, ending with the hidden marker of [`finding_marker`].
    pub body: String,
    /// The finding's identity, as in the marker.
    pub fingerprint: String,
}

/// A comment already on the pull request, as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedComment {
    pub id: u64,
    /// The author's login, such as `github-actions[bot]`.
    pub author: String,
    pub body: String,
    /// Review comments: the file; `None` for conversation comments.
    pub path: Option<String>,
    /// Review comments: the line on the new side; `None` once the comment is outdated (its
    /// line is gone from the diff) and for conversation comments.
    pub line: Option<u32>,
}

/// What to do with inline comments so the pull request shows this run's findings once each.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommentSync {
    /// New comments, for one review.
    pub to_post: Vec<InlineComment>,
    /// Our comments that stay where they are but whose text changed: (id, new body).
    pub to_update: Vec<(u64, String)>,
    /// Our comments whose finding is gone, has moved or is outdated; sorted.
    pub to_delete: Vec<u64>,
    /// Our comments left exactly as they are.
    pub n_kept: usize,
}

/// The hidden marker that ends an inline comment: `<!-- tollgate:finding:v1 <fingerprint> -->`.
/// Characters other than ASCII letters, digits, `-`, `_`, `.`, `:` and `@` are dropped from the
/// fingerprint, so it can never close the HTML comment early.
pub fn finding_marker(fingerprint: &str) -> String {
    format!(
        "{FINDING_MARKER_PREFIX}{}{MARKER_SUFFIX}",
        sanitize_fingerprint(fingerprint)
    )
}

/// The fingerprint in a comment's [`finding_marker`], if it has one.
pub fn marked_fingerprint(body: &str) -> Option<&str> {
    let start = body.rfind(FINDING_MARKER_PREFIX)? + FINDING_MARKER_PREFIX.len();
    let rest = &body[start..];
    let end = rest.find(MARKER_SUFFIX)?;
    let fingerprint = &rest[..end];
    (!fingerprint.is_empty() && sanitize_fingerprint(fingerprint) == fingerprint)
        .then_some(fingerprint)
}

/// The sticky summary comment to update: the first comment by `bot_login` (case-insensitive)
/// that carries [`SUMMARY_MARKER`]. Someone else quoting the marker does not count.
pub fn find_summary_comment(comments: &[PostedComment], bot_login: &str) -> Option<u64> {
    comments
        .iter()
        .filter(|comment| comment.author.eq_ignore_ascii_case(bot_login))
        .filter(|comment| comment.body.contains(SUMMARY_MARKER))
        .map(|comment| comment.id)
        .min()
}

/// Reconciles the planned comments with the review comments already on the pull request.
///
/// Only comments by `bot_login` that carry a finding marker are ours. One of ours with the same
/// fingerprint, path and line as a planned comment stands for it (updated when its text
/// changed); every other one of ours is stale and deleted, including outdated ones (no line),
/// whose finding is posted again where it now is. One of ours about a dismissed finding
/// (`dismissed`, from [`ReviewPlan::dismissed`]) is kept as it is. Comments by anyone else are
/// never touched.
pub fn sync_comments(
    planned: &[InlineComment],
    dismissed: &[String],
    posted: &[PostedComment],
    bot_login: &str,
) -> CommentSync {
    let ours: Vec<(&PostedComment, &str)> = posted
        .iter()
        .filter(|comment| comment.author.eq_ignore_ascii_case(bot_login))
        .filter_map(|comment| marked_fingerprint(&comment.body).map(|fp| (comment, fp)))
        .collect();
    let mut used = vec![false; ours.len()];
    let mut sync = CommentSync::default();
    for comment in planned {
        let existing = ours.iter().enumerate().position(|(idx, (posted, fp))| {
            !used[idx]
                && *fp == sanitize_fingerprint(&comment.fingerprint)
                && posted.path.as_deref() == Some(comment.path.as_str())
                && posted.line == Some(comment.line)
        });
        match existing {
            Some(idx) => {
                used[idx] = true;
                let posted = ours[idx].0;
                if posted.body.trim_end() == comment.body.trim_end() {
                    sync.n_kept += 1;
                } else {
                    sync.to_update.push((posted.id, comment.body.clone()));
                }
            }
            None => sync.to_post.push(comment.clone()),
        }
    }
    for (idx, (_, fp)) in ours.iter().enumerate() {
        if !used[idx] && dismissed.iter().any(|d| d.as_str() == *fp) {
            used[idx] = true;
            sync.n_kept += 1;
        }
    }
    sync.to_delete = ours
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|((posted, _), _)| posted.id)
        .collect();
    sync.to_delete.sort_unstable();
    sync
}

pub(super) fn review(
    result: &ReviewResult,
    findings: &[&Finding],
    changed: &ChangedLines,
    config: &PublishConfig,
) -> ReviewPlan {
    let mut comments = Vec::new();
    let mut over_cap: Vec<&Finding> = Vec::new();
    for &finding in findings {
        // The built-in notices (tests not touched, config files changed, …) are LOW or INFO,
        // so the default threshold keeps them in the summary.
        if finding.severity < config.min_inline_severity {
            continue;
        }
        let Some(anchor) = anchor(finding, changed) else {
            continue;
        };
        if comments.len() >= config.max_inline_comments {
            over_cap.push(finding);
            continue;
        }
        // A suggestion replaces exactly the commented lines, so it is offered only when the
        // comment covers the finding's whole range and the producer called the fix safe.
        let suggestion = anchor.covers_finding
            && finding.suggested_fix.as_ref().is_some_and(|fix| {
                fix.applicability == Applicability::Safe && fix.replacement.is_some()
            });
        let body = format!(
            "{}\n{}",
            report::render_comment(finding, suggestion).trim_end(),
            finding_marker(&finding.fingerprint)
        );
        comments.push(InlineComment {
            path: finding.location.file.clone(),
            start_line: anchor.start_line,
            line: anchor.line,
            body,
            fingerprint: sanitize_fingerprint(&finding.fingerprint),
        });
    }
    ReviewPlan {
        body: review_body(result, comments.len(), &over_cap),
        n_over_cap: over_cap.len(),
        comments,
        dismissed: result
            .dismissed
            .iter()
            .map(|finding| sanitize_fingerprint(&finding.fingerprint))
            .chain(result.findings.iter().filter_map(|finding| {
                let note = finding.learning.as_ref()?;
                (note.status == LearningStatus::Returning && !note.fingerprint.is_empty())
                    .then(|| sanitize_fingerprint(&note.fingerprint))
            }))
            .collect(),
    }
}

/// Where a finding can be commented on.
struct Anchor {
    start_line: Option<u32>,
    line: u32,
    /// Whether the comment spans exactly the finding's lines.
    covers_finding: bool,
}

/// The whole range when it lies inside one hunk; else the first line alone when that lies in
/// a hunk; else nothing (GitHub refuses the whole review over one anchor outside the diff).
fn anchor(finding: &Finding, changed: &ChangedLines) -> Option<Anchor> {
    let location = &finding.location;
    let start = location.start_line.max(1);
    let end = location.end_line.max(start);
    let hunk = changed
        .hunk_ranges(&location.file)
        .iter()
        .find(|range| range.contains(&start))?;
    if end < hunk.end {
        Some(Anchor {
            start_line: (end > start).then_some(start),
            line: end,
            covers_finding: true,
        })
    } else {
        Some(Anchor {
            start_line: None,
            line: start,
            covers_finding: false,
        })
    }
}

fn review_body(result: &ReviewResult, n_inline: usize, over_cap: &[&Finding]) -> String {
    let mut body = String::new();
    let verdict = if result.should_fail {
        "❌ failed"
    } else {
        "✅ passed"
    };
    let _ = writeln!(body, "{REVIEW_MARKER}");
    let _ = writeln!(body, "**Tollgate review {verdict}.**\n");
    let _ = write!(
        body,
        "{n_inline} finding{} on the lines of this diff {} commented inline.",
        plural(n_inline),
        if n_inline == 1 { "is" } else { "are" }
    );
    if !over_cap.is_empty() {
        let _ = writeln!(
            body,
            " {} more {} not, to keep this review readable:\n",
            over_cap.len(),
            if over_cap.len() == 1 { "is" } else { "are" }
        );
        for finding in over_cap.iter().take(MAX_LISTED_IN_BODY) {
            let _ = writeln!(
                body,
                "- {} {}:{}: {} ({})",
                finding.severity,
                report::escape_inline(&finding.location.file),
                finding.location.start_line,
                report::escape_inline(&super::truncate(&finding.title, 200)),
                report::escape_inline(&finding.rule_id),
            );
        }
        if over_cap.len() > MAX_LISTED_IN_BODY {
            let _ = writeln!(body, "- … and {} more", over_cap.len() - MAX_LISTED_IN_BODY);
        }
    } else {
        body.push('\n');
    }
    body.push_str("\nThe summary comment lists every finding.\n");
    body
}

fn sanitize_fingerprint(fingerprint: &str) -> String {
    fingerprint
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@'))
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Location, Severity, SuggestedFix};
    use crate::publish::testutil::{changed, finding, result_with};
    use crate::publish::{PublishConfig, plan};

    /// One hunk on the new side of `src/a.rs` covering lines 10–14 (11 and 12 added), and a
    /// second from 40 to 41.
    const DIFF: &str = "\
diff --git a/src/a.rs b/src/a.rs
--- a/src/a.rs
+++ b/src/a.rs
@@ -10,3 +10,5 @@
 ten
+eleven
+twelve
 thirteen
 fourteen
@@ -38,2 +40,2 @@
-old
+forty
 forty-one
";

    fn anchors(publication_comments: &[InlineComment]) -> Vec<(Option<u32>, u32)> {
        publication_comments
            .iter()
            .map(|c| (c.start_line, c.line))
            .collect()
    }

    #[test]
    fn comments_only_on_lines_inside_hunks() {
        let findings = vec![
            finding("R1", "src/a.rs", 11),
            finding("R2", "src/a.rs", 13), // context line: inside the hunk
            finding("R3", "src/a.rs", 15), // just past the hunk
            finding("R4", "src/a.rs", 9),  // just before it
            finding("R5", "src/other.rs", 11),
            finding("R6", "src/a.rs", 40),
        ];
        let result = result_with(findings);
        let publication = plan(&result, &changed(DIFF), &PublishConfig::new(None));
        let commented: Vec<(&str, u32)> = publication
            .review
            .comments
            .iter()
            .map(|c| (c.path.as_str(), c.line))
            .collect();
        assert_eq!(
            commented,
            [("src/a.rs", 11), ("src/a.rs", 13), ("src/a.rs", 40)]
        );
        assert_eq!(publication.review.n_over_cap, 0);
        // Every finding is still annotated on the check run.
        assert_eq!(
            publication
                .check_run
                .annotation_batches
                .iter()
                .map(Vec::len)
                .sum::<usize>(),
            6
        );
    }

    #[test]
    fn ranges_inside_one_hunk_span_it_else_the_first_line() {
        let mut inside = finding("R1", "src/a.rs", 11);
        inside.location.end_line = 14;
        let mut crossing = finding("R2", "src/a.rs", 13);
        crossing.location.end_line = 20;
        let mut two_hunks = finding("R3", "src/a.rs", 12);
        two_hunks.location.end_line = 40;
        let result = result_with(vec![inside, crossing, two_hunks]);
        let publication = plan(&result, &changed(DIFF), &PublishConfig::new(None));
        assert_eq!(
            anchors(&publication.review.comments),
            [(Some(11), 14), (None, 12), (None, 13)]
        );
    }

    #[test]
    fn notices_and_findings_below_the_inline_severity_stay_in_the_summary() {
        let mut low = finding("semgrep/style", "src/a.rs", 11);
        low.severity = Severity::Low;
        low.fingerprint = "low".into();
        let mut notice = finding("TG003", "src/a.rs", 12);
        notice.severity = Severity::Low;
        notice.fingerprint = "notice".into();
        let mut defect = finding("tsc/TS2322", "src/a.rs", 11);
        defect.severity = Severity::Medium;
        defect.fingerprint = "defect".into();
        let result = result_with(vec![low, notice, defect]);
        let review = plan(&result, &changed(DIFF), &PublishConfig::new(None)).review;
        let inline: Vec<&str> = review
            .comments
            .iter()
            .map(|c| c.fingerprint.as_str())
            .collect();
        assert_eq!(inline, vec!["defect"]);
    }

    #[test]
    fn capped_worst_first_with_the_rest_listed_in_the_body() {
        let mut findings: Vec<Finding> = (0..5)
            .map(|idx| {
                let mut f = finding("LOW", "src/a.rs", 10 + idx);
                f.severity = Severity::Low;
                f.fingerprint = format!("low{idx}");
                f
            })
            .collect();
        let mut critical = finding("CRIT", "src/a.rs", 14);
        critical.severity = Severity::Critical;
        findings.push(critical);
        let result = result_with(findings);
        let mut config = PublishConfig::new(None);
        config.max_inline_comments = 2;
        config.min_inline_severity = Severity::Low;
        let review = plan(&result, &changed(DIFF), &config).review;
        assert_eq!(review.comments.len(), 2);
        assert!(review.comments[0].body.contains("`CRIT`"));
        assert_eq!(review.n_over_cap, 4);
        assert!(review.body.starts_with(REVIEW_MARKER));
        assert!(
            review.body.contains(
                "2 findings on the lines of this diff are commented inline. 4 more are not"
            ),
            "{}",
            review.body
        );
        assert_eq!(
            review.body.matches("\n- LOW src/a.rs:").count(),
            4,
            "{}",
            review.body
        );
    }

    #[test]
    fn suggestions_only_for_safe_fixes_covering_the_comment() {
        let fix = |applicability| SuggestedFix {
            description: "Rename".into(),
            replacement: Some("let y = 1;\n".into()),
            applicability,
        };
        let safe = finding("SAFE", "src/a.rs", 11).with_fix(fix(Applicability::Safe));
        let unsafe_fix = finding("UNSAFE", "src/a.rs", 12).with_fix(fix(Applicability::Unsafe));
        let mut partial = finding("PARTIAL", "src/a.rs", 13).with_fix(fix(Applicability::Safe));
        partial.location.end_line = 30; // the comment can only sit on line 13
        let result = result_with(vec![safe, unsafe_fix, partial]);
        let review = plan(&result, &changed(DIFF), &PublishConfig::new(None)).review;
        let body = |rule: &str| {
            review
                .comments
                .iter()
                .find(|c| c.body.contains(&format!("`{rule}`")))
                .unwrap()
                .body
                .clone()
        };
        assert!(
            body("SAFE").contains("```suggestion\nlet y = 1;\n```"),
            "{}",
            body("SAFE")
        );
        assert!(!body("UNSAFE").contains("suggestion"), "{}", body("UNSAFE"));
        assert!(
            !body("PARTIAL").contains("suggestion"),
            "{}",
            body("PARTIAL")
        );
    }

    #[test]
    fn markers_round_trip_and_cannot_be_broken() {
        let marker = finding_marker("abc123:1");
        assert_eq!(marker, "<!-- tollgate:finding:v1 abc123:1 -->");
        assert_eq!(
            marked_fingerprint(&format!("text\n{marker}")),
            Some("abc123:1")
        );
        assert_eq!(
            finding_marker("x --><script>"),
            "<!-- tollgate:finding:v1 x--script -->"
        );
        assert_eq!(marked_fingerprint("no marker"), None);
        assert_eq!(marked_fingerprint("<!-- tollgate:finding:v1  -->"), None);
    }

    fn posted(
        id: u64,
        author: &str,
        fingerprint: &str,
        path: &str,
        line: Option<u32>,
    ) -> PostedComment {
        PostedComment {
            id,
            author: author.into(),
            body: format!("old text\n{}", finding_marker(fingerprint)),
            path: Some(path.into()),
            line,
        }
    }

    fn planned(fingerprint: &str, path: &str, line: u32, body: &str) -> InlineComment {
        InlineComment {
            path: path.into(),
            start_line: None,
            line,
            body: format!("{body}\n{}", finding_marker(fingerprint)),
            fingerprint: fingerprint.into(),
        }
    }

    #[test]
    fn sync_keeps_updates_posts_and_deletes_only_our_comments() {
        let bot = "github-actions[bot]";
        let posted = vec![
            posted(1, bot, "same", "src/a.rs", Some(11)),
            posted(2, bot, "changed-text", "src/a.rs", Some(12)),
            posted(3, bot, "gone", "src/a.rs", Some(13)),
            posted(4, bot, "moved", "src/a.rs", Some(14)),
            posted(5, bot, "outdated", "src/a.rs", None),
            posted(6, "a-human", "human", "src/a.rs", Some(11)),
            posted(7, bot, "same", "src/a.rs", Some(11)), // a duplicate from an earlier run
            PostedComment {
                id: 8,
                author: bot.into(),
                body: "a bot comment without our marker".into(),
                path: Some("src/a.rs".into()),
                line: Some(11),
            },
        ];
        let planned = vec![
            planned("same", "src/a.rs", 11, "old text"),
            planned("changed-text", "src/a.rs", 12, "new text"),
            planned("moved", "src/a.rs", 40, "old text"),
            planned("outdated", "src/a.rs", 13, "old text"),
            planned("new", "src/a.rs", 10, "text"),
        ];
        let sync = sync_comments(&planned, &[], &posted, "GitHub-Actions[bot]");
        assert_eq!(sync.n_kept, 1);
        assert_eq!(sync.to_update.len(), 1);
        assert_eq!(sync.to_update[0].0, 2);
        assert!(sync.to_update[0].1.starts_with("new text"));
        let new: Vec<&str> = sync
            .to_post
            .iter()
            .map(|c| c.fingerprint.as_str())
            .collect();
        assert_eq!(new, ["moved", "outdated", "new"]);
        assert_eq!(sync.to_delete, [3, 4, 5, 7]);
    }

    /// Issue 28: a returning finding (its line edited) has a new fingerprint; the comment of
    /// its old one holds the dismissal reply that later runs read again, so it stays.
    #[test]
    fn the_comment_behind_a_returning_finding_is_kept() {
        use crate::findings::{LearningNote, LearningStatus};
        let mut back = finding("TG008", "src/a.rs", 11);
        back.learning = Some(LearningNote {
            status: LearningStatus::Returning,
            reason: "test key".into(),
            by: "maintainer".into(),
            at: "2026-01-01T00:00:00Z".into(),
            fingerprint: "old-fingerprint".into(),
        });
        let publication = plan(
            &result_with(vec![back]),
            &changed(DIFF),
            &PublishConfig::new(None),
        );
        let bot = "github-actions[bot]";
        let sync = sync_comments(
            &publication.review.comments,
            &publication.review.dismissed,
            &[posted(1, bot, "old-fingerprint", "src/a.rs", Some(11))],
            bot,
        );
        assert!(sync.to_delete.is_empty(), "{sync:?}");
        assert_eq!(sync.to_post.len(), 1, "the returning finding is posted");
    }

    #[test]
    fn the_summary_comment_is_ours_and_marked() {
        let comment = |id: u64, author: &str, body: &str| PostedComment {
            id,
            author: author.into(),
            body: body.into(),
            path: None,
            line: None,
        };
        let comments = vec![
            comment(10, "mallory", &format!("{SUMMARY_MARKER}\nfake")),
            comment(11, "github-actions[bot]", "unrelated"),
            comment(
                13,
                "github-actions[bot]",
                &format!("{SUMMARY_MARKER}\nnewer"),
            ),
            comment(
                12,
                "github-actions[bot]",
                &format!("{SUMMARY_MARKER}\nours"),
            ),
        ];
        assert_eq!(
            find_summary_comment(&comments, "github-actions[bot]"),
            Some(12)
        );
        assert_eq!(
            find_summary_comment(&comments[..2], "github-actions[bot]"),
            None
        );
    }

    #[test]
    fn comment_bodies_escape_untrusted_text() {
        let mut f = finding("R1", "src/a.rs", 11);
        f.title = "<img src=x onerror=alert(1)> @octocat".into();
        f.location = Location::line("src/a.rs", 11);
        let review = plan(
            &result_with(vec![f]),
            &changed(DIFF),
            &PublishConfig::new(None),
        )
        .review;
        let body = &review.comments[0].body;
        assert!(!body.contains("<img"), "{body}");
        assert!(!body.contains("@octocat"), "{body}");
        assert!(body.ends_with(&finding_marker("fp-R1-11")), "{body}");
    }
}
