//! Plain text for a person at a terminal, like semgrep's and ripgrep's: findings grouped by
//! file (worst file first), each on one line with its line, severity and rule, its message
//! below, then a one-line verdict. ANSI colours only when [`ReportConfig::color`] says so (the
//! CLI sets it for a terminal without `NO_COLOR`). Paths and messages come from the code under
//! review and from models: their control characters are made visible ([`visible_controls`],
//! the rule of `ci_log`), so a path cannot drive the terminal.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use super::{Format, ReportConfig, ReportError, sorted_findings};
use crate::ci_log::visible_controls;
use crate::findings::{Finding, ReviewResult, Severity};

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";

pub(super) fn render(
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    let paint = |style: &str, text: &str| {
        if config.color {
            format!("{style}{text}{RESET}")
        } else {
            text.to_string()
        }
    };
    // Files in the order of their worst finding (`sorted_findings` is worst first).
    let mut order: Vec<&str> = Vec::new();
    let mut by_file: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for finding in sorted_findings(result) {
        let file = finding.location.file.as_str();
        if !by_file.contains_key(file) {
            order.push(file);
        }
        by_file.entry(file).or_default().push(finding);
    }
    let mut text = String::new();
    for file in order {
        let _ = writeln!(text, "{}", paint(BOLD, &visible_controls(file)));
        let mut findings = by_file.remove(file).unwrap_or_default();
        findings.sort_by_key(|f| (f.location.start_line, f.location.start_column));
        for finding in findings {
            let line = match finding.location.start_column {
                Some(column) => format!("{}:{column}", finding.location.start_line.max(1)),
                None => finding.location.start_line.max(1).to_string(),
            };
            let title = if finding.title.trim().is_empty() {
                finding.rule_id.as_str()
            } else {
                finding.title.trim()
            };
            let _ = writeln!(
                text,
                "  {line:>7}  {}  {}  {}",
                paint(
                    severity_style(finding.severity),
                    &format!("{:<8}", finding.severity.as_str())
                ),
                paint(DIM, &visible_controls(&finding.rule_id)),
                visible_controls(title)
            );
            let message = finding.message.trim();
            if !message.is_empty() && message != title {
                for message_line in message.lines() {
                    let _ = writeln!(text, "           {}", visible_controls(message_line.trim()));
                }
            }
        }
        text.push('\n');
    }
    let verdict = if result.should_fail {
        paint("\x1b[1;31m", "FAILED")
    } else {
        paint("\x1b[1;32m", "passed")
    };
    let _ = writeln!(
        text,
        "Tollgate {verdict}: {}",
        visible_controls(result.summary.trim())
    );
    out.write_all(text.as_bytes())
        .map_err(ReportError::io(Format::Text))
}

fn severity_style(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "\x1b[31m",
        Severity::Medium => "\x1b[33m",
        Severity::Low | Severity::Info => "\x1b[36m",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::sample_result;

    fn text(result: &ReviewResult, color: bool) -> String {
        let mut config = ReportConfig::new(None, None);
        config.color = color;
        let mut out = Vec::new();
        render(result, &config, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Issue 28: what a person reads on a terminal: grouped by file, worst file first, each
    /// finding with its line, severity and rule, a one-line verdict; colour only when asked.
    #[test]
    fn findings_grouped_by_file_with_a_verdict() {
        let result = sample_result();
        let plain = text(&result, false);
        assert!(!plain.contains('\x1b'), "{plain}");
        let files: Vec<&str> = plain
            .lines()
            .filter(|line| !line.starts_with(' ') && !line.is_empty())
            .collect();
        let last = files.last().unwrap();
        assert!(last.starts_with("Tollgate "), "{plain}");
        assert_eq!(
            plain.lines().filter(|l| l.starts_with("Tollgate ")).count(),
            1
        );
        let first_file = &result
            .findings
            .iter()
            .max_by_key(|f| f.severity)
            .unwrap()
            .location
            .file;
        assert_eq!(files[0], first_file, "{plain}");
        for finding in &result.findings {
            assert!(
                plain.contains(&format!("{}  ", finding.severity.as_str())),
                "{plain}"
            );
            assert!(plain.contains(&finding.rule_id), "{plain}");
        }
        let coloured = text(&result, true);
        assert!(coloured.contains("\x1b[31m"), "{coloured}");
    }

    #[test]
    fn untrusted_text_cannot_drive_the_terminal() {
        let mut result = sample_result();
        result.findings[0].location.file = "src/\u{1b}[2Jx.rs".into();
        result.findings[0].message = "a\u{7}b".into();
        let plain = text(&result, false);
        assert!(
            !plain.contains('\u{1b}') && !plain.contains('\u{7}'),
            "{plain:?}"
        );
    }
}
