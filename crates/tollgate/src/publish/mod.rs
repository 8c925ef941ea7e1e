//! What a pull-request bot posts, decided in the core so every front end agrees: the GitHub
//! Action makes the HTTP calls, and the CLI or MCP server can show the same plan.
//!
//! [`plan`] turns a [`ReviewResult`] and the diff's [`ChangedLines`] into a [`Publication`]:
//!
//! - the sticky summary comment (the Markdown report, starting with
//!   [`SUMMARY_MARKER`](crate::report::SUMMARY_MARKER), within GitHub's 65,536 characters);
//! - the job summary (the same report with more findings in full, within 1 MiB);
//! - a review whose inline comments sit only on lines inside the diff's hunks (new side), worst
//!   findings first, capped at [`PublishConfig::max_inline_comments`] with the rest listed in
//!   the review body; a ` ```suggestion ` block only for [`Applicability::Safe`] fixes that
//!   cover exactly the commented lines;
//! - a check run whose annotations (every finding, in or out of the diff) come in batches of
//!   [`ANNOTATIONS_PER_REQUEST`], titles within 255 characters.
//!
//! Each inline comment ends with a hidden marker holding the finding's fingerprint, so a later
//! run can tell its own comments apart and [`sync_comments`] decides which to keep, update,
//! delete (stale) or post. [`find_summary_comment`] finds the sticky comment to update.
//! Everything here is pure: no I/O, no clock, no randomness.
//!
//! [`Applicability::Safe`]: crate::findings::Applicability::Safe

mod checks;
mod comments;

pub use checks::{ANNOTATIONS_PER_REQUEST, Annotation, AnnotationLevel, CheckRun, Conclusion};
pub use comments::{
    CommentSync, InlineComment, PostedComment, ReviewPlan, find_summary_comment, finding_marker,
    marked_fingerprint, sync_comments,
};

use crate::diff::ChangedLines;
use crate::findings::{Finding, ReviewResult, Severity};
use crate::report::{self, Format, ReportConfig};

/// GitHub's limit on a job summary (`$GITHUB_STEP_SUMMARY`), in bytes.
pub const JOB_SUMMARY_MAX_BYTES: usize = 1024 * 1024;

/// What the bot would post. Build it with [`plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    /// The body of the sticky PR comment.
    pub summary_comment: String,
    /// The job summary (Markdown, at most [`JOB_SUMMARY_MAX_BYTES`]).
    pub job_summary: String,
    /// The review with inline comments (none when no finding lies in a hunk).
    pub review: ReviewPlan,
    pub check_run: CheckRun,
}

/// Settings of [`plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishConfig {
    /// Inline comments in one review; findings past it are listed in the review body.
    /// reviewdog posts 30 per review: larger reviews time out and bury each other.
    pub max_inline_comments: usize,
    /// Only findings at or above this severity are commented inline; the rest (the built-in
    /// notices among them: tests not touched, config or dependency files changed, …, all LOW or
    /// INFO) stay in the summary, so a pull request's conversation holds defects, not noise.
    pub min_inline_severity: Severity,
    /// URL prefix that makes `path:line` a link in the summaries, such as
    /// `https://github.com/o/r/blob/<sha>/`.
    pub link_base: Option<String>,
}

impl PublishConfig {
    pub const DEFAULT_MAX_INLINE_COMMENTS: usize = 30;
    /// What the gate blocks, plus MEDIUM defects.
    pub const DEFAULT_MIN_INLINE_SEVERITY: Severity = Severity::Medium;

    /// [`Self::DEFAULT_MAX_INLINE_COMMENTS`], [`Self::DEFAULT_MIN_INLINE_SEVERITY`] and the given
    /// link base.
    pub fn new(link_base: Option<String>) -> PublishConfig {
        PublishConfig {
            max_inline_comments: Self::DEFAULT_MAX_INLINE_COMMENTS,
            min_inline_severity: Self::DEFAULT_MIN_INLINE_SEVERITY,
            link_base,
        }
    }
}

/// Decides everything the bot posts for `result` on a diff whose lines are `changed`.
pub fn plan(result: &ReviewResult, changed: &ChangedLines, config: &PublishConfig) -> Publication {
    let findings = worst_first(result);
    Publication {
        summary_comment: summary_comment(result, config),
        job_summary: job_summary(result, config),
        review: comments::review(result, &findings, changed, config),
        check_run: checks::check_run(result, &findings),
    }
}

/// Findings in display order: severity, then path, line and rule.
fn worst_first(result: &ReviewResult) -> Vec<&Finding> {
    let mut findings: Vec<&Finding> = result.findings.iter().collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.location.file.cmp(&b.location.file))
            .then_with(|| a.location.start_line.cmp(&b.location.start_line))
            .then_with(|| a.rule_id.cmp(&b.rule_id))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
    findings
}

fn summary_comment(result: &ReviewResult, config: &PublishConfig) -> String {
    let mut report_config = ReportConfig::new(None, config.link_base.clone());
    report_config.markdown_max_chars = ReportConfig::GITHUB_COMMENT_MAX_CHARS;
    markdown(result, &report_config)
}

/// The job summary shows more findings in full than a comment does, and fits in
/// [`JOB_SUMMARY_MAX_BYTES`]: the renderer's limit counts characters, so a report that comes
/// out too many bytes long (non-ASCII text) is rendered again with a limit scaled down.
fn job_summary(result: &ReviewResult, config: &PublishConfig) -> String {
    let mut report_config = ReportConfig::new(None, config.link_base.clone());
    report_config.markdown_max_findings = 100;
    report_config.markdown_max_chars = JOB_SUMMARY_MAX_BYTES;
    for _ in 0..8 {
        let text = markdown(result, &report_config);
        if text.len() <= JOB_SUMMARY_MAX_BYTES {
            return text;
        }
        let scaled = report_config.markdown_max_chars as f64 * JOB_SUMMARY_MAX_BYTES as f64
            / text.len() as f64
            * 0.95;
        report_config.markdown_max_chars = scaled as usize;
    }
    // Four bytes per character at most: this limit always fits.
    report_config.markdown_max_chars = JOB_SUMMARY_MAX_BYTES / 4;
    markdown(result, &report_config)
}

fn markdown(result: &ReviewResult, config: &ReportConfig) -> String {
    let mut out = Vec::new();
    // Rendering into memory cannot fail for want of I/O, and the Markdown renderer has no other
    // error; an empty string would only mean an empty comment.
    let _ = report::render(Format::Markdown, result, config, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Cuts `text` to at most `max_chars` characters, ending with `…` when cut.
fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some(_) => {
            let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
            kept + "…"
        }
    }
}

#[cfg(test)]
mod testutil;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::testutil::{changed, finding, result_with};
    use crate::report::SUMMARY_MARKER;

    #[test]
    fn summaries_carry_the_marker_and_fit_their_limits() {
        let mut findings = Vec::new();
        for idx in 0..3_000 {
            let mut f = finding("R1", "src/a.rs", idx + 1);
            f.title = format!("日本語 {idx} {}", "ü".repeat(300));
            f.message = "ß".repeat(3_000);
            f.fingerprint = format!("fp{idx:05}");
            findings.push(f);
        }
        let result = result_with(findings);
        let publication = plan(&result, &changed(""), &PublishConfig::new(None));
        assert!(publication.summary_comment.starts_with(SUMMARY_MARKER));
        assert!(publication.summary_comment.chars().count() <= 65_536);
        assert!(publication.job_summary.len() <= JOB_SUMMARY_MAX_BYTES);
        assert!(
            publication.job_summary.len() > JOB_SUMMARY_MAX_BYTES / 2,
            "the job summary uses its room: {}",
            publication.job_summary.len()
        );
        assert!(publication.check_run.summary.chars().count() <= 65_535);
    }

    /// The plan for the report tests' sample on a diff touching some of its lines: what a
    /// pull request would show, in one reviewable snapshot.
    #[test]
    fn plans_the_sample_result() {
        let result = crate::report::testutil::sample_result();
        let diff = changed(
            "\
--- a/src/config/settings.rs
+++ b/src/config/settings.rs
@@ -1,3 +1,4 @@
 pub struct Settings {
     pub name: String,
 }
+pub const API_KEY: &str = \"sk_live_0123456789abcdef\";
--- a/src/api/handlers v2/user handler.rs
+++ b/src/api/handlers v2/user handler.rs
@@ -2,3 +2,7 @@
 
 pub fn load(settings: &Settings) -> String {
+    let raw = std::fs::read_to_string(&settings.name)
+        .ok()
+        .unwrap();
+    raw
 }
",
        );
        let publication = plan(
            &result,
            &diff,
            &PublishConfig::new(Some("https://github.com/o/r/blob/2222222/".into())),
        );
        let mut text = format!("# review body\n{}\n", publication.review.body);
        for comment in &publication.review.comments {
            text.push_str(&format!(
                "# comment {}:{:?}-{}\n{}\n",
                comment.path, comment.start_line, comment.line, comment.body
            ));
        }
        let run = &publication.check_run;
        text.push_str(&format!(
            "# check run: {} / {}\n",
            run.conclusion, run.title
        ));
        for annotation in run.annotation_batches.iter().flatten() {
            text.push_str(&format!(
                "{} {}:{}-{} {:?}-{:?} {}\n",
                annotation.level,
                annotation.path,
                annotation.start_line,
                annotation.end_line,
                annotation.start_column,
                annotation.end_column,
                annotation.title
            ));
        }
        insta::assert_snapshot!(text);
    }

    #[test]
    fn truncate_marks_cuts() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
