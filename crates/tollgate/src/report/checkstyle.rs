//! Checkstyle XML: `<checkstyle><file name><error …/></file></checkstyle>`, read by reviewdog
//! (`-f=checkstyle`), cs2pr and Jenkins Warnings NG.
//!
//! One `<file>` per path (sorted), its errors by line and column; `source` is the rule id
//! prefixed with `tollgate.` so tools that group by source show where it came from. Columns
//! are [`Location`](crate::findings::Location)'s characters. Every value is escaped (see
//! `xml.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use super::{Format, ReportError, finding_text, xml};
use crate::findings::{Finding, ReviewResult, Severity};

/// The Checkstyle format version reviewdog and cs2pr expect.
const CHECKSTYLE_VERSION: &str = "4.3";

pub(super) fn render(result: &ReviewResult, out: &mut dyn io::Write) -> Result<(), ReportError> {
    let mut by_file: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for finding in &result.findings {
        by_file
            .entry(finding.location.file.replace('\\', "/"))
            .or_default()
            .push(finding);
    }
    let mut doc = String::new();
    doc.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(doc, "<checkstyle version=\"{CHECKSTYLE_VERSION}\">");
    for (path, mut findings) in by_file {
        findings.sort_by(|a, b| {
            (a.location.start_line, a.location.start_column)
                .cmp(&(b.location.start_line, b.location.start_column))
                .then_with(|| a.rule_id.cmp(&b.rule_id))
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
        let _ = writeln!(doc, "  <file name=\"{}\">", xml::attribute(&path));
        for finding in findings {
            let _ = write!(
                doc,
                "    <error line=\"{}\"",
                finding.location.start_line.max(1)
            );
            if let Some(column) = finding.location.start_column {
                let _ = write!(doc, " column=\"{column}\"");
            }
            let _ = writeln!(
                doc,
                " severity=\"{}\" message=\"{}\" source=\"{}\"/>",
                severity(finding.severity),
                xml::attribute(&finding_text(finding)),
                xml::attribute(&format!("tollgate.{}", finding.rule_id)),
            );
        }
        doc.push_str("  </file>\n");
    }
    doc.push_str("</checkstyle>\n");
    out.write_all(doc.as_bytes())
        .map_err(ReportError::io(Format::Checkstyle))
}

/// The severity table of this format.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "info",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Location;
    use crate::report::testutil::{render_to_string, sample_result};

    #[test]
    fn renders_the_sample_result() {
        insta::assert_snapshot!(render_to_string(Format::Checkstyle, &sample_result()));
    }

    #[test]
    fn untrusted_text_is_escaped() {
        let mut result = sample_result();
        let mut finding = result.findings[0].clone();
        finding.title = "\"/><error line=\"1\" message=\"injected".into();
        finding.message = "a & b\nc <d>\u{1b}[31m".into();
        finding.rule_id = "r'<x>".into();
        finding.location = Location::line("src/<evil>&\".rs", 3);
        result.findings = vec![finding];
        let xml = render_to_string(Format::Checkstyle, &result);
        assert_eq!(xml.matches("<error ").count(), 1, "{xml}");
        assert!(
            xml.contains("<file name=\"src/&lt;evil&gt;&amp;&quot;.rs\">"),
            "{xml}"
        );
        assert!(
            xml.contains(
                "message=\"&quot;/&gt;&lt;error line=&quot;1&quot; message=&quot;injected. a &amp; b&#10;c &lt;d&gt;\u{FFFD}[31m\""
            ),
            "{xml}"
        );
        assert!(
            xml.contains("source=\"tollgate.r&apos;&lt;x&gt;\""),
            "{xml}"
        );
    }
}
