//! The check run: its conclusion, summary, and one annotation per finding in batches GitHub
//! accepts. Annotations have no diff restriction, so they also carry the findings that cannot
//! be commented inline.

use std::fmt;

use crate::findings::{Finding, ReviewResult, Severity};
use crate::report::{self, Format, ReportConfig};

/// GitHub takes at most 50 annotations per create or update request; more are sent with
/// further updates, which append.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;
/// GitHub's limit on an annotation title.
const MAX_TITLE_CHARS: usize = 255;
/// Annotation messages may be 64 KB; a few thousand characters is all anyone reads there.
const MAX_MESSAGE_CHARS: usize = 4_000;
/// GitHub's limit on a check run's `output.summary`.
const MAX_SUMMARY_CHARS: usize = 65_535;
const CHECK_NAME: &str = "Tollgate";

/// A check run to create on the head commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub name: &'static str,
    pub conclusion: Conclusion,
    /// `output.title`: the verdict and counts.
    pub title: String,
    /// `output.summary`: the Markdown report, within 65,535 characters.
    pub summary: String,
    /// One annotation per finding, worst first, at most [`ANNOTATIONS_PER_REQUEST`] a batch.
    pub annotation_batches: Vec<Vec<Annotation>>,
}

/// How the check run concludes: it follows the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    Success,
    Failure,
}

impl Conclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            Conclusion::Success => "success",
            Conclusion::Failure => "failure",
        }
    }
}

impl fmt::Display for Conclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An annotation's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotationLevel {
    Notice,
    Warning,
    Failure,
}

impl AnnotationLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationLevel::Notice => "notice",
            AnnotationLevel::Warning => "warning",
            AnnotationLevel::Failure => "failure",
        }
    }
}

impl fmt::Display for AnnotationLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check-run annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Only on single-line annotations, as GitHub requires.
    pub start_column: Option<u32>,
    pub end_column: Option<u32>,
    pub level: AnnotationLevel,
    /// At most 255 characters.
    pub title: String,
    pub message: String,
}

pub(super) fn check_run(result: &ReviewResult, findings: &[&Finding]) -> CheckRun {
    let annotations: Vec<Annotation> = findings.iter().map(|f| annotation(f)).collect();
    let mut report_config = ReportConfig::new(None, None);
    report_config.markdown_max_chars = MAX_SUMMARY_CHARS;
    let mut summary = Vec::new();
    // In-memory rendering has no I/O to fail.
    let _ = report::render(Format::Markdown, result, &report_config, &mut summary);
    let n_findings = result.findings.len() + result.stats.findings_truncated;
    CheckRun {
        name: CHECK_NAME,
        conclusion: if result.should_fail {
            Conclusion::Failure
        } else {
            Conclusion::Success
        },
        title: format!(
            "Gate {}: {n_findings} finding{}",
            if result.should_fail {
                "failed"
            } else {
                "passed"
            },
            if n_findings == 1 { "" } else { "s" }
        ),
        summary: String::from_utf8(summary).unwrap_or_default(),
        annotation_batches: annotations
            .chunks(ANNOTATIONS_PER_REQUEST)
            .map(<[Annotation]>::to_vec)
            .collect(),
    }
}

/// The severity table of check-run annotations.
fn level(severity: Severity) -> AnnotationLevel {
    match severity {
        Severity::Critical | Severity::High => AnnotationLevel::Failure,
        Severity::Medium => AnnotationLevel::Warning,
        Severity::Low | Severity::Info => AnnotationLevel::Notice,
    }
}

fn annotation(finding: &Finding) -> Annotation {
    let location = &finding.location;
    let start_line = location.start_line.max(1);
    let end_line = location.end_line.max(start_line);
    let single_line = start_line == end_line;
    let title = if finding.title.trim().is_empty() {
        finding.rule_id.clone()
    } else {
        format!("{}: {}", finding.rule_id, finding.title.trim())
    };
    let mut message = finding.message.trim().to_string();
    if message.is_empty() {
        message = finding.title.trim().to_string();
    }
    if message.is_empty() {
        message = finding.rule_id.clone();
    }
    let recommendation = finding.recommendation.trim();
    if !recommendation.is_empty() {
        message = format!("{message}\n\nRecommendation: {recommendation}");
    }
    Annotation {
        path: location.file.replace('\\', "/"),
        start_line,
        end_line,
        start_column: location.start_column.filter(|_| single_line),
        end_column: location.end_column.filter(|_| single_line),
        level: level(finding.severity),
        title: super::truncate(&title, MAX_TITLE_CHARS),
        message: super::truncate(&message, MAX_MESSAGE_CHARS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::testutil::{changed, finding, result_with};
    use crate::publish::{PublishConfig, plan};

    #[test]
    fn annotations_come_in_batches_of_fifty() {
        let findings: Vec<Finding> = (1..=121)
            .map(|line| finding("R1", "src/a.rs", line))
            .collect();
        let run = plan(
            &result_with(findings),
            &changed(""),
            &PublishConfig::new(None),
        )
        .check_run;
        let sizes: Vec<usize> = run.annotation_batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, [50, 50, 21]);
        assert_eq!(run.conclusion, Conclusion::Failure);
        assert_eq!(run.title, "Gate failed: 121 findings");
        assert!(run.summary.starts_with(report::SUMMARY_MARKER));

        let mut passing = result_with(Vec::new());
        passing.should_fail = false;
        let run = plan(&passing, &changed(""), &PublishConfig::new(None)).check_run;
        assert!(run.annotation_batches.is_empty());
        assert_eq!(run.conclusion.as_str(), "success");
        assert_eq!(run.title, "Gate passed: 0 findings");
    }

    #[test]
    fn levels_titles_and_columns() {
        let mut critical = finding("C", "src/a.rs", 3);
        critical.severity = Severity::Critical;
        critical.title = "x".repeat(400);
        critical.location.start_column = Some(5);
        critical.location.end_column = Some(9);
        let mut medium = finding("M", "src/a.rs", 4);
        medium.severity = Severity::Medium;
        medium.location.end_line = 6;
        medium.location.start_column = Some(5);
        medium.recommendation = "Do this.".into();
        let mut info = finding("I", "src/a.rs", 5);
        info.severity = Severity::Info;
        let run = plan(
            &result_with(vec![info, medium, critical]),
            &changed(""),
            &PublishConfig::new(None),
        )
        .check_run;
        let annotations = &run.annotation_batches[0];
        let levels: Vec<&str> = annotations.iter().map(|a| a.level.as_str()).collect();
        assert_eq!(levels, ["failure", "warning", "notice"]);
        assert_eq!(annotations[0].title.chars().count(), 255);
        assert_eq!(
            (annotations[0].start_column, annotations[0].end_column),
            (Some(5), Some(9))
        );
        // Columns only on single-line annotations.
        assert_eq!((annotations[1].start_line, annotations[1].end_line), (4, 6));
        assert_eq!(annotations[1].start_column, None);
        assert_eq!(
            annotations[1].message,
            "M message\n\nRecommendation: Do this."
        );
        assert_eq!(annotations[2].title, "I: I title");
    }
}
