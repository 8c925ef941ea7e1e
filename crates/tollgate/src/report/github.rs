//! GitHub Actions workflow commands: one `::error` / `::warning` / `::notice` annotation per
//! finding, then the summary as plain log text.
//!
//! The runner reads any log line starting with `::` as a command, and findings carry text from
//! models and from the code under review. So annotation values are escaped as the runner
//! requires ([`escape_data`], [`escape_property`]): no value can end its line or its property.
//! Control characters (ESC, BEL, the other C0 and C1 controls but LF and tab, which the escaping
//! encodes or keeps) become visible `\u{…}` escapes ([`visible_controls`], the rule of
//! `ci_log`), since the runner shows every line in a terminal too.
//! Text printed as plain lines (the summary, the gate's reasons, warnings) is wrapped in
//! `::stop-commands::<token>` … `::<token>::`, which turns command processing off in between.
//! The token is derived from a SHA-256 of the wrapped text itself: whoever wrote that text would
//! have to embed the hash of the text they are writing, which cannot be done, and the same result
//! still renders to the same bytes.
//!
//! Findings come worst first: the runner keeps only 10 errors and 10 warnings per step (50 per
//! job) and drops the rest silently. Columns are only given for single-line ranges, as the
//! runner wants.

use std::fmt::Write as _;
use std::io;

use sha2::{Digest, Sha256};

use super::{Format, ReportError, sorted_findings};
use crate::ci_log::visible_controls;
use crate::findings::{Finding, ReviewResult, Severity};

/// Annotation titles longer than this are cut (check-run annotations allow 255).
const MAX_TITLE_CHARS: usize = 255;

pub(super) fn render(result: &ReviewResult, out: &mut dyn io::Write) -> Result<(), ReportError> {
    let mut text = String::new();
    for finding in sorted_findings(result) {
        text.push_str(&annotation(finding));
        text.push('\n');
    }
    text.push_str(&wrap_untrusted(&visible_controls(&plain_summary(result))));
    out.write_all(text.as_bytes())
        .map_err(ReportError::io(Format::Github))
}

/// The severity table of this format.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "notice",
    }
}

/// Escapes the message of a workflow command: `%`, CR and LF, as the runner decodes them.
pub fn escape_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a property value of a workflow command: as [`escape_data`], plus `:` and `,`,
/// which would end the property list or the property.
pub fn escape_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// Wraps plain text so the runner runs no command inside it; empty text stays empty.
fn wrap_untrusted(text: &str) -> String {
    if text.trim().is_empty() {
        return String::new();
    }
    let token = stop_token(text);
    let mut body = text.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("::stop-commands::{token}\n{body}::{token}::\n")
}

fn stop_token(text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"tollgate stop-commands\0");
    hasher.update(text.as_bytes());
    let digest = hasher.finalize();
    let mut token = String::from("tollgate-");
    for byte in digest.iter().take(16) {
        let _ = write!(token, "{byte:02x}");
    }
    token
}

fn annotation(finding: &Finding) -> String {
    let location = &finding.location;
    let start_line = location.start_line.max(1);
    let end_line = location.end_line.max(start_line);
    let mut properties = vec![
        format!(
            "file={}",
            escape_property(&location.file.replace('\\', "/"))
        ),
        format!("line={start_line}"),
        format!("endLine={end_line}"),
    ];
    if start_line == end_line {
        if let Some(column) = location.start_column {
            properties.push(format!("col={column}"));
        }
        if let Some(column) = location.end_column {
            properties.push(format!("endColumn={column}"));
        }
    }
    let title = if finding.title.trim().is_empty() {
        finding.rule_id.clone()
    } else {
        format!("{}: {}", finding.rule_id, finding.title.trim())
    };
    properties.push(format!(
        "title={}",
        escape_property(&truncate(&title, MAX_TITLE_CHARS))
    ));
    // The runner prints the line to the terminal too: no raw ESC, BEL or other control.
    let line = format!(
        "::{} {}::{}",
        command(finding.severity),
        properties.join(","),
        escape_data(&message(finding))
    );
    visible_controls(&line).into_owned()
}

/// The message, then the recommendation; the title when there is no message.
fn message(finding: &Finding) -> String {
    let mut message = finding.message.trim().to_string();
    if message.is_empty() {
        message = finding.title.trim().to_string();
    }
    if message.is_empty() {
        message = finding.rule_id.clone();
    }
    let recommendation = finding.recommendation.trim();
    if !recommendation.is_empty() {
        let _ = write!(message, "\n\nRecommendation: {recommendation}");
    }
    message
}

fn plain_summary(result: &ReviewResult) -> String {
    let mut text = String::new();
    let verdict = if result.should_fail {
        "failed"
    } else {
        "passed"
    };
    let _ = writeln!(text, "Tollgate review {verdict}: {}", result.summary.trim());
    for reason in &result.fail_reasons {
        let _ = writeln!(text, "  - {}", reason.trim());
    }
    for warning in &result.metadata.warnings {
        let _ = writeln!(text, "warning: {}", warning.trim());
    }
    text
}

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
mod tests {
    use super::*;
    use crate::findings::Location;
    use crate::report::testutil::{render_to_string, sample_result};

    #[test]
    fn renders_the_sample_result() {
        insta::assert_snapshot!(render_to_string(Format::Github, &sample_result()));
    }

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(
            escape_data("100% done\r\nnext: a,b"),
            "100%25 done%0D%0Anext: a,b"
        );
        assert_eq!(
            escape_property("100% done\r\nnext: a,b"),
            "100%25 done%0D%0Anext%3A a%2Cb"
        );
        // Already-escaped text is escaped again, so it decodes back to itself.
        assert_eq!(escape_data("%0A"), "%250A");
    }

    /// Every line the runner would read as a command is one we wrote.
    fn commands(text: &str) -> Vec<&str> {
        let mut stopped: Option<String> = None;
        let mut out = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if let Some(token) = &stopped {
                if trimmed == format!("::{token}::") {
                    stopped = None;
                }
                continue;
            }
            if let Some(token) = trimmed.strip_prefix("::stop-commands::") {
                stopped = Some(token.to_string());
                continue;
            }
            if trimmed.starts_with("::") {
                out.push(line);
            }
        }
        out
    }

    #[test]
    fn untrusted_text_cannot_inject_commands() {
        let mut result = sample_result();
        let mut finding = result.findings[0].clone();
        finding.title = "t\n::set-output name=x::y".into();
        finding.message = "line one\n::add-mask::secret\r\n%0A::error::forged".into();
        finding.location = Location::line("dir,x:y/evil\n::warning::.rs", 3);
        result.findings = vec![finding];
        result.summary = "ok\n::error file=a::forged summary".into();
        result.fail_reasons = vec!["::stop-commands::guess\n::error::forged reason".into()];
        result.metadata.warnings = vec!["::tollgate-00::".into()];
        let text = render_to_string(Format::Github, &result);

        let commands = commands(&text);
        assert_eq!(commands.len(), 1, "{text}");
        assert!(
            commands[0].starts_with(
                "::error file=dir%2Cx%3Ay/evil%0A%3A%3Awarning%3A%3A.rs,line=3,endLine=3,title=TG001%3A t%0A%3A%3Aset-output name=x%3A%3Ay::line one%0A::add-mask::secret%0D%0A%250A::error::forged"
            ),
            "{text}"
        );
        // The plain text is there, and fenced off.
        assert!(text.contains("\n::stop-commands::tollgate-"), "{text}");
        assert!(text.contains("::error file=a::forged summary"), "{text}");
        assert!(text.ends_with("::\n"), "{text}");
    }

    /// Issue 28: the runner prints each command line to the terminal, so a path's or a
    /// message's ESC, BEL and other control bytes arrive as visible escapes, never raw.
    #[test]
    fn control_characters_never_reach_the_log_raw() {
        let mut result = sample_result();
        let mut finding = result.findings[0].clone();
        finding.title = "bell\u{7} title".into();
        finding.message = "clear \u{1b}[2J screen\u{9b}31m\r\nnext".into();
        finding.recommendation = "fix \u{1b}]0;owned\u{7}".into();
        finding.location = Location::line("src/\u{1b}[31mred\u{7}.rs", 3);
        result.findings = vec![finding];
        result.summary = "sum\u{1b}[8m hidden".into();
        result.fail_reasons = vec!["reason \u{7f}\u{8}".into()];
        let text = render_to_string(Format::Github, &result);
        assert!(
            !text.chars().any(|c| c != '\n' && c.is_control()),
            "{text:?}"
        );
        assert!(
            text.starts_with("::error file=src/\\u{1b}[31mred\\u{7}.rs,line=3,"),
            "{text}"
        );
        assert!(
            text.contains("clear \\u{1b}[2J screen\\u{9b}31m%0D%0Anext"),
            "{text}"
        );
        assert!(text.contains("sum\\u{1b}[8m hidden"), "{text}");
    }

    #[test]
    fn columns_only_for_single_lines_and_levels_by_severity() {
        let text = render_to_string(Format::Github, &sample_result());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(
            "::error file=src/config/settings.rs,line=4,endLine=4,col=28,endColumn=53,title=TG001%3A Hardcoded secret in `API_KEY`::"
        ));
        let multi = lines
            .iter()
            .find(|line| line.contains("user handler.rs"))
            .unwrap();
        assert!(multi.contains("line=4,endLine=6,title="), "{multi}");
        assert!(text.contains("::warning file=src/lib.rs,line=1,"));
        assert!(text.contains("::notice file=src/removed.rs,line=10,"));
    }

    #[test]
    fn the_token_depends_on_the_text() {
        assert_ne!(stop_token("a"), stop_token("b"));
        assert_eq!(stop_token("a"), stop_token("a"));
        assert_eq!(wrap_untrusted("  \n"), "");
    }
}
