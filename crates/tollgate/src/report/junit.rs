//! JUnit XML, for CI systems that show test reports (GitLab `artifacts:reports:junit`, Jenkins,
//! Azure DevOps, CircleCI). There is no single JUnit spec; this writes the common subset.
//!
//! Each file with findings is a `<testsuite>` (named by its path), each finding a `<testcase>`
//! (class = the path, name = rule id and title, which stay the same when lines move, so CI
//! history can follow a case). A finding that fails the gate holds one `<failure>` with the
//! location, severity and texts; any other (a notice, a finding below the gate) is a passed case
//! with the same text in `<system-out>`, so a green gate shows no failed tests. A review without
//! findings is one passing `tollgate / review` case, so the report always says a review ran.
//! Every value is escaped (see `xml.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use super::{Format, ReportError, finding_text, xml};
use crate::findings::{Finding, ReviewResult};

const SUITES_NAME: &str = "tollgate";

pub(super) fn render(result: &ReviewResult, out: &mut dyn io::Write) -> Result<(), ReportError> {
    let mut by_file: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for finding in &result.findings {
        by_file
            .entry(finding.location.file.replace('\\', "/"))
            .or_default()
            .push(finding);
    }
    let n_findings = result.findings.len();
    let n_failures = result.findings.iter().filter(|f| f.fails_gate).count();
    let seconds = format_seconds(result.stats.duration_ms);

    let mut doc = String::new();
    doc.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        doc,
        "<testsuites name=\"{SUITES_NAME}\" tests=\"{}\" failures=\"{n_failures}\" errors=\"0\" skipped=\"0\" time=\"{seconds}\">",
        n_findings.max(1)
    );
    if by_file.is_empty() {
        let _ = writeln!(
            doc,
            "  <testsuite name=\"{SUITES_NAME}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"{seconds}\">"
        );
        let _ = writeln!(
            doc,
            "    <testcase classname=\"{SUITES_NAME}\" name=\"review\" time=\"{seconds}\"/>"
        );
        doc.push_str("  </testsuite>\n");
    }
    for (path, mut findings) in by_file {
        findings.sort_by(|a, b| {
            a.location
                .start_line
                .cmp(&b.location.start_line)
                .then_with(|| a.location.start_column.cmp(&b.location.start_column))
                .then_with(|| a.rule_id.cmp(&b.rule_id))
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
        let path = xml::attribute(&path);
        let _ = writeln!(
            doc,
            "  <testsuite name=\"{path}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"0\">",
            findings.len(),
            findings.iter().filter(|f| f.fails_gate).count()
        );
        for finding in findings {
            let name = if finding.title.trim().is_empty() {
                finding.rule_id.clone()
            } else {
                format!("{}: {}", finding.rule_id, finding.title.trim())
            };
            let _ = writeln!(
                doc,
                "    <testcase classname=\"{path}\" name=\"{}\" time=\"0\">",
                xml::attribute(&name)
            );
            if finding.fails_gate {
                let _ = writeln!(
                    doc,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    xml::attribute(&format!(
                        "line {}: {}",
                        finding.location.start_line.max(1),
                        finding_text(finding)
                    )),
                    finding.severity.as_str(),
                    xml::content(&failure_body(finding)),
                );
            } else {
                let _ = writeln!(
                    doc,
                    "      <system-out>{}</system-out>",
                    xml::content(&failure_body(finding)),
                );
            }
            doc.push_str("    </testcase>\n");
        }
        doc.push_str("  </testsuite>\n");
    }
    doc.push_str("</testsuites>\n");
    out.write_all(doc.as_bytes())
        .map_err(ReportError::io(Format::Junit))
}

/// `path:line[:column]: SEVERITY rule`, then the message, impact and recommendation.
fn failure_body(finding: &Finding) -> String {
    let location = &finding.location;
    let mut body = format!(
        "{}:{}",
        location.file.replace('\\', "/"),
        location.start_line.max(1)
    );
    if let Some(column) = location.start_column {
        let _ = write!(body, ":{column}");
    }
    let _ = write!(body, ": {} {}", finding.severity, finding.rule_id);
    for (label, text) in [
        ("", finding.message.trim()),
        ("Impact: ", finding.impact.trim()),
        ("Recommendation: ", finding.recommendation.trim()),
    ] {
        if !text.is_empty() {
            let _ = write!(body, "\n{label}{text}");
        }
    }
    body
}

/// Milliseconds as seconds with up to three decimals (`0.0125` s is written `0.013`).
fn format_seconds(duration_ms: f64) -> String {
    if !duration_ms.is_finite() || duration_ms <= 0.0 {
        return "0".to_string();
    }
    let text = format!("{:.3}", duration_ms / 1000.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Location;
    use crate::report::testutil::{render_to_string, sample_result};

    #[test]
    fn renders_the_sample_result() {
        insta::assert_snapshot!(render_to_string(Format::Junit, &sample_result()));
    }

    /// Issue 28: a LOW notice on a green gate is no failed test (GitLab's widget would show
    /// failed tests on a green pipeline): only what fails the gate is a `<failure>`; every
    /// other finding is a passed case carrying its text.
    #[test]
    fn only_gate_failing_findings_are_failures() {
        let result = sample_result();
        let n_failing = result.findings.iter().filter(|f| f.fails_gate).count();
        assert!(n_failing > 0 && n_failing < result.findings.len());
        let xml = render_to_string(Format::Junit, &result);
        assert_eq!(xml.matches("<failure ").count(), n_failing, "{xml}");
        assert!(
            xml.contains(&format!(
                "tests=\"{}\" failures=\"{n_failing}\"",
                result.findings.len()
            )),
            "{xml}"
        );
        let notice = result.findings.iter().find(|f| !f.fails_gate).unwrap();
        assert!(xml.contains("<system-out>"), "{xml}");
        assert!(xml.contains(notice.message.trim()), "{xml}");

        let mut green = result.clone();
        green.should_fail = false;
        for finding in &mut green.findings {
            finding.fails_gate = false;
        }
        let xml = render_to_string(Format::Junit, &green);
        assert!(!xml.contains("<failure"), "{xml}");
        assert!(xml.contains("failures=\"0\""), "{xml}");
    }

    #[test]
    fn a_clean_review_is_one_passing_case() {
        let mut result = sample_result();
        result.findings.clear();
        let xml = render_to_string(Format::Junit, &result);
        assert!(xml.contains("tests=\"1\" failures=\"0\""), "{xml}");
        assert!(
            xml.contains("<testcase classname=\"tollgate\" name=\"review\""),
            "{xml}"
        );
        assert!(!xml.contains("<failure"), "{xml}");
    }

    #[test]
    fn untrusted_text_is_escaped() {
        let mut result = sample_result();
        let mut finding = result.findings[0].clone();
        finding.title = "</failure></testcase><testcase name=\"x\">".into();
        finding.message = "]]> <![CDATA[ & \u{0}".into();
        finding.location = Location::line("a\"b.rs", 1);
        result.findings = vec![finding];
        let xml = render_to_string(Format::Junit, &result);
        assert_eq!(xml.matches("<testcase ").count(), 1, "{xml}");
        assert_eq!(xml.matches("</failure>").count(), 1, "{xml}");
        assert!(xml.contains("]]&gt; &lt;![CDATA[ &amp; \u{FFFD}"), "{xml}");
        assert!(xml.contains("classname=\"a&quot;b.rs\""), "{xml}");
    }

    #[test]
    fn seconds_are_short() {
        assert_eq!(format_seconds(12.5), "0.013");
        assert_eq!(format_seconds(2000.0), "2");
        assert_eq!(format_seconds(0.0), "0");
        assert_eq!(format_seconds(f64::NAN), "0");
    }
}
