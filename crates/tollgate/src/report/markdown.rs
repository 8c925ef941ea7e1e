//! The Markdown report: one PR comment (or job summary) in GitHub-flavoured Markdown.
//!
//! It opens with a hidden marker so the Action can find and update its sticky comment, then the
//! verdict, the summary, the risk score with the factors behind it, the gate's reasons, the
//! findings grouped by severity (the first [`ReportConfig::markdown_max_findings`] in full, the
//! rest folded into `<details>`), a stats line and the run's warnings.
//!
//! Titles, messages, paths and reasons may come from models or from the code under review, so
//! every such text is escaped: HTML metacharacters become entities, Markdown punctuation is
//! backslash-escaped, line breaks become `<br>`, code spans get a fence longer than any backtick
//! run inside them, and `@mentions` are defused. The comment stays within
//! [`ReportConfig::markdown_max_chars`]: long texts are shortened and findings that do not fit
//! are left out with a note saying how many.

use std::fmt::Write as _;
use std::io;

use super::{Format, ReportConfig, ReportError, encode_relative_path};
use crate::findings::{Finding, LearningStatus, ReviewResult, Severity};

/// The first line of every Tollgate summary comment.
pub const SUMMARY_MARKER: &str = "<!-- tollgate:summary:v1 -->";

// Caps on untrusted texts, in characters, so one runaway message cannot crowd out the rest.
const MAX_SUMMARY_CHARS: usize = 4_000;
const MAX_TITLE_CHARS: usize = 300;
const MAX_MESSAGE_CHARS: usize = 2_000;
const MAX_RECOMMENDATION_CHARS: usize = 1_000;
const MAX_FIX_CHARS: usize = 2_000;
const MAX_LINE_CHARS: usize = 500;
const MAX_LISTED_REASONS: usize = 20;
const MAX_LISTED_WARNINGS: usize = 20;
const MAX_LISTED_FACTORS: usize = 20;
/// Room kept for the closing `</details>` and the "left out" note.
const RESERVED_CHARS: usize = 400;

pub(super) fn render(
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    let mut markdown = render_markdown(result, config);
    // Text files (and terminals) end with a newline.
    if !markdown.ends_with('\n') {
        markdown.push('\n');
    }
    out.write_all(markdown.as_bytes())
        .map_err(ReportError::io(Format::Markdown))
}

/// The severity table of this format: heading text and a marker that reads without color.
fn severity_heading(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "🛑 Critical",
        Severity::High => "🔴 High",
        Severity::Medium => "🟠 Medium",
        Severity::Low => "🟡 Low",
        Severity::Info => "🔵 Info",
    }
}

fn render_markdown(result: &ReviewResult, config: &ReportConfig) -> String {
    let header = render_header(result);
    let footer = render_footer(result);

    let mut findings: Vec<&Finding> = result.findings.iter().collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.location.file.cmp(&b.location.file))
            .then_with(|| a.location.start_line.cmp(&b.location.start_line))
            .then_with(|| a.rule_id.cmp(&b.rule_id))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });

    let mut body = String::new();
    if !findings.is_empty() {
        let budget = config
            .markdown_max_chars
            .saturating_sub(char_len(&header) + char_len(&footer) + RESERVED_CHARS);
        body = render_findings(&findings, config, budget);
    }

    let mut markdown = header + &body + &footer;
    if char_len(&markdown) > config.markdown_max_chars {
        // Only reachable with a tiny limit: the header and footer alone do not fit.
        let note = "\n\n_… cut here: the comment reached its size limit._\n";
        let keep = config.markdown_max_chars.saturating_sub(char_len(note));
        markdown = markdown.chars().take(keep).collect::<String>() + note;
    }
    markdown
}

fn render_header(result: &ReviewResult) -> String {
    let mut md = String::new();
    let verdict = if result.should_fail {
        "❌ Tollgate review failed"
    } else {
        "✅ Tollgate review passed"
    };
    let _ = writeln!(md, "{SUMMARY_MARKER}");
    let _ = writeln!(md, "## {verdict}\n");
    if !result.summary.trim().is_empty() {
        let _ = writeln!(
            md,
            "{}\n",
            escape_block(&truncate(&result.summary, MAX_SUMMARY_CHARS))
        );
    }

    let _ = writeln!(
        md,
        "**Risk:** {}/5 · **Classification:** {} · **Findings:** {}\n",
        result.risk_score,
        result.classification.as_str(),
        finding_counts(&result.findings)
    );

    if !result.risk_factors.is_empty() {
        let _ = writeln!(
            md,
            "**Why risk {}/5:** a base score of 1, plus:\n",
            result.risk_score
        );
        md.push_str("| Signal | Points | Detail |\n| --- | ---: | --- |\n");
        for factor in result.risk_factors.iter().take(MAX_LISTED_FACTORS) {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                code_span(&truncate(&factor.signal, MAX_LINE_CHARS), true),
                format_points(factor.points),
                escape_inline(&truncate(&factor.detail, MAX_LINE_CHARS)),
            );
        }
        if result.risk_factors.len() > MAX_LISTED_FACTORS {
            let _ = writeln!(
                md,
                "| … | | {} more factors not shown |",
                result.risk_factors.len() - MAX_LISTED_FACTORS
            );
        }
        md.push('\n');
    }

    if result.should_fail {
        md.push_str("### Gate: ❌ failed\n\n");
        for reason in result.fail_reasons.iter().take(MAX_LISTED_REASONS) {
            let _ = writeln!(md, "- {}", escape_inline(&truncate(reason, MAX_LINE_CHARS)));
        }
        if result.fail_reasons.len() > MAX_LISTED_REASONS {
            let _ = writeln!(
                md,
                "- … and {} more reasons",
                result.fail_reasons.len() - MAX_LISTED_REASONS
            );
        }
        if result.fail_reasons.is_empty() {
            md.push_str("- The gate failed without giving a reason.\n");
        }
        md.push('\n');
    } else {
        md.push_str("### Gate: ✅ passed\n\n");
    }
    md
}

fn finding_counts(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "none".to_string();
    }
    let counts: Vec<String> = Severity::ALL
        .into_iter()
        .filter_map(|severity| {
            let n_findings = findings.iter().filter(|f| f.severity == severity).count();
            (n_findings > 0).then(|| format!("{n_findings} {}", severity.as_str().to_lowercase()))
        })
        .collect();
    format!("{} ({})", findings.len(), counts.join(", "))
}

/// The findings section within `budget` characters: the first `markdown_max_findings` in full,
/// the rest in `<details>`, and a note for any that did not fit.
fn render_findings(findings: &[&Finding], config: &ReportConfig, budget: usize) -> String {
    let n_shown = config.markdown_max_findings.min(findings.len());
    let (shown, folded) = findings.split_at(n_shown);

    let mut md = String::from("### Findings\n\n");
    let mut used = char_len(&md);
    let mut n_rendered = 0;
    let mut current: Option<Severity> = None;
    let mut out_of_room = false;

    for finding in shown {
        let block = finding_block(finding, &mut current, config);
        if used + char_len(&block) > budget {
            out_of_room = true;
            break;
        }
        used += char_len(&block);
        md.push_str(&block);
        n_rendered += 1;
    }

    if !out_of_room && !folded.is_empty() {
        let open = format!(
            "<details><summary>{} more finding{}</summary>\n\n",
            folded.len(),
            if folded.len() == 1 { "" } else { "s" }
        );
        let close = "</details>\n\n";
        if used + char_len(&open) + char_len(close) <= budget {
            md.push_str(&open);
            used += char_len(&open) + char_len(close);
            current = None;
            for finding in folded {
                let block = finding_block(finding, &mut current, config);
                if used + char_len(&block) > budget {
                    break;
                }
                used += char_len(&block);
                md.push_str(&block);
                n_rendered += 1;
            }
            md.push_str(close);
        }
    }

    let n_left_out = findings.len() - n_rendered;
    if n_left_out > 0 {
        let _ = writeln!(
            md,
            "_{n_left_out} more finding{} not shown: this comment reached its size limit \
             ({} characters). The SARIF and JSON reports have them all._\n",
            if n_left_out == 1 { " is" } else { "s are" },
            config.markdown_max_chars
        );
    }
    md
}

/// One finding as a list item, preceded by a severity heading when the severity changes.
fn finding_block(
    finding: &Finding,
    current: &mut Option<Severity>,
    config: &ReportConfig,
) -> String {
    let mut md = String::new();
    if *current != Some(finding.severity) {
        *current = Some(finding.severity);
        let _ = writeln!(md, "#### {}\n", severity_heading(finding.severity));
    }

    let title = if finding.title.trim().is_empty() {
        finding.rule_id.as_str()
    } else {
        finding.title.as_str()
    };
    let _ = write!(
        md,
        "- **{}** · {} · {}",
        escape_inline(&truncate(title, MAX_TITLE_CHARS)),
        code_span(&finding.rule_id, false),
        location_text(finding, config),
    );
    if !finding.on_changed_line {
        md.push_str(" · _not on a changed line_");
    }
    if let Some(note) = finding
        .learning
        .as_ref()
        .filter(|note| note.status == LearningStatus::Returning)
    {
        let _ = write!(
            md,
            " · _returning: set aside before by {} ({}), its code has changed_",
            escape_inline(&truncate(&note.by, MAX_TITLE_CHARS)),
            escape_inline(&truncate(&note.reason, MAX_LINE_CHARS)),
        );
    }
    if finding.confidence < 1.0 {
        let _ = write!(
            md,
            " · confidence {:.0}%",
            (finding.confidence * 100.0).clamp(0.0, 100.0)
        );
    }
    md.push_str("\n\n");

    if !finding.message.trim().is_empty() {
        let _ = writeln!(
            md,
            "  {}\n",
            escape_block(&truncate(&finding.message, MAX_MESSAGE_CHARS))
        );
    }
    if !finding.impact.trim().is_empty() {
        let _ = writeln!(
            md,
            "  **Impact:** {}\n",
            escape_inline(&truncate(&finding.impact, MAX_RECOMMENDATION_CHARS))
        );
    }
    if !finding.recommendation.trim().is_empty() {
        let _ = writeln!(
            md,
            "  **Recommendation:** {}\n",
            escape_inline(&truncate(&finding.recommendation, MAX_RECOMMENDATION_CHARS))
        );
    }
    if let Some(fix) = &finding.suggested_fix {
        let applicability = serde_json::to_value(fix.applicability)
            .ok()
            .and_then(|value| value.as_str().map(str::to_string))
            .unwrap_or_default()
            .replace('_', " ");
        let description = if fix.description.trim().is_empty() {
            "see below".to_string()
        } else {
            escape_inline(&truncate(&fix.description, MAX_LINE_CHARS))
        };
        let _ = writeln!(md, "  **Suggested fix** ({applicability}): {description}\n");
        if let Some(replacement) = &fix.replacement {
            md.push_str(&indent(
                &code_block(&truncate(replacement, MAX_FIX_CHARS)),
                "  ",
            ));
            md.push('\n');
        }
    }
    md
}

/// One finding as the body of an inline review comment on its own lines: severity, title and
/// rule, then its texts. With `suggestion`, a fix's replacement becomes a GitHub
/// ` ```suggestion ` block, which replaces the commented lines in one click; the caller decides
/// when that is safe. Without it the replacement is shown as a plain code block.
pub fn render_comment(finding: &Finding, suggestion: bool) -> String {
    let mut md = String::new();
    let title = if finding.title.trim().is_empty() {
        finding.rule_id.as_str()
    } else {
        finding.title.as_str()
    };
    let _ = writeln!(
        md,
        "**{}** · **{}** · {}\n",
        severity_heading(finding.severity),
        escape_inline(&truncate(title, MAX_TITLE_CHARS)),
        code_span(&finding.rule_id, false),
    );
    if !finding.message.trim().is_empty() {
        let _ = writeln!(
            md,
            "{}\n",
            escape_block(&truncate(&finding.message, MAX_MESSAGE_CHARS))
        );
    }
    if !finding.impact.trim().is_empty() {
        let _ = writeln!(
            md,
            "**Impact:** {}\n",
            escape_inline(&truncate(&finding.impact, MAX_RECOMMENDATION_CHARS))
        );
    }
    if !finding.recommendation.trim().is_empty() {
        let _ = writeln!(
            md,
            "**Recommendation:** {}\n",
            escape_inline(&truncate(&finding.recommendation, MAX_RECOMMENDATION_CHARS))
        );
    }
    if let Some(fix) = &finding.suggested_fix {
        if !fix.description.trim().is_empty() {
            let _ = writeln!(
                md,
                "**Suggested fix:** {}\n",
                escape_inline(&truncate(&fix.description, MAX_LINE_CHARS))
            );
        }
        match fix.replacement.as_deref() {
            // A suggestion is applied as written, so it is never shortened.
            Some(replacement) if suggestion => {
                md.push_str(&fenced_block(replacement, "suggestion"));
                md.push('\n');
            }
            Some(replacement) => {
                md.push_str(&code_block(&truncate(replacement, MAX_FIX_CHARS)));
                md.push('\n');
            }
            None => {}
        }
    }
    md
}

/// `path:line` or `path:start-end`, linked when a link base is configured.
fn location_text(finding: &Finding, config: &ReportConfig) -> String {
    let location = &finding.location;
    let lines = if location.end_line > location.start_line {
        format!("{}-{}", location.start_line, location.end_line)
    } else {
        location.start_line.to_string()
    };
    let text = escape_inline(&format!("{}:{lines}", location.file));
    match config.link_base.as_deref().map(str::trim) {
        Some(base) if !base.is_empty() && !location.file.is_empty() => {
            let separator = if base.ends_with('/') { "" } else { "/" };
            let anchor = if location.end_line > location.start_line {
                format!("#L{}-L{}", location.start_line, location.end_line)
            } else {
                format!("#L{}", location.start_line)
            };
            format!(
                "[{text}]({}{separator}{}{anchor})",
                sanitize_url(base),
                encode_relative_path(&location.file)
            )
        }
        _ => text,
    }
}

fn render_footer(result: &ReviewResult) -> String {
    let stats = &result.stats;
    let mut md = String::new();
    if stats.findings_truncated > 0 {
        let per_rule: Vec<String> = stats
            .findings_truncated_by_rule
            .iter()
            .take(MAX_LISTED_FACTORS)
            .map(|(rule, n)| format!("{n} {}", code_span(rule, false)))
            .collect();
        let per_rule = if per_rule.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{})",
                per_rule.join(", "),
                if stats.findings_truncated_by_rule.len() > MAX_LISTED_FACTORS {
                    ", …"
                } else {
                    ""
                }
            )
        };
        let _ = writeln!(
            md,
            "_{} more finding{} left out of this result by `max_findings`{per_rule}; every rule keeps at least one above._\n",
            stats.findings_truncated,
            if stats.findings_truncated == 1 {
                " was"
            } else {
                "s were"
            }
        );
    }
    let mut parts = vec![
        format!(
            "{} file{} changed",
            stats.files_changed,
            if stats.files_changed == 1 { "" } else { "s" }
        ),
        format!("+{} −{}", stats.lines_added, stats.lines_removed),
        format_duration(stats.duration_ms),
    ];
    if let Some(head) = result.metadata.head_sha.as_deref() {
        parts.push(format!("head {}", code_span(short_sha(head), false)));
    }
    let version = result.metadata.tool_version.trim();
    parts.push(if version.is_empty() {
        "Tollgate".to_string()
    } else {
        format!("Tollgate {}", escape_inline(version))
    });
    if !result.dismissed.is_empty() {
        // Listed briefly, like the JSON `dismissed`: out of the gate, but never out of sight.
        let _ = writeln!(
            md,
            "<details><summary>{} finding{} dismissed by the team's learnings (code unchanged)</summary>\n",
            result.dismissed.len(),
            if result.dismissed.len() == 1 { "" } else { "s" }
        );
        for finding in result.dismissed.iter().take(MAX_LISTED_REASONS) {
            let why = finding
                .learning
                .as_ref()
                .map(|note| {
                    format!(
                        " — {}: {}",
                        escape_inline(&truncate(&note.by, MAX_TITLE_CHARS)),
                        escape_inline(&truncate(&note.reason, MAX_LINE_CHARS))
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "- {} · {}{why}",
                code_span(&finding.rule_id, false),
                escape_inline(&format!(
                    "{}:{}",
                    finding.location.file, finding.location.start_line
                )),
            );
        }
        if result.dismissed.len() > MAX_LISTED_REASONS {
            let _ = writeln!(
                md,
                "- … and {} more",
                result.dismissed.len() - MAX_LISTED_REASONS
            );
        }
        md.push_str("\n</details>\n\n");
    }
    let _ = writeln!(md, "<sub>{}</sub>", parts.join(" · "));

    let warnings: Vec<&String> = result
        .metadata
        .warnings
        .iter()
        .filter(|warning| !warning.trim().is_empty())
        .collect();
    if !warnings.is_empty() {
        md.push_str("\n### ⚠️ Warnings\n\n");
        for warning in warnings.iter().take(MAX_LISTED_WARNINGS) {
            let _ = writeln!(
                md,
                "- {}",
                escape_inline(&truncate(warning, MAX_LINE_CHARS))
            );
        }
        if warnings.len() > MAX_LISTED_WARNINGS {
            let _ = writeln!(
                md,
                "- … and {} more warnings",
                warnings.len() - MAX_LISTED_WARNINGS
            );
        }
    }
    md
}

/// Escapes untrusted text for use inside a line (a list item, a table cell, link text): HTML
/// metacharacters become entities, Markdown punctuation is backslash-escaped, line breaks become
/// `<br>` (so a text cannot end a table row or start a block) and `@mentions` are defused. A
/// code span (`` `TG001` ``) stays one: its content is shown literally, so it needs no escapes
/// (and gets none, which would show), unless it holds what could end it or a table cell.
pub fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`'
            && let Some(span) = span_in_text(chars.clone())
        {
            out.push('`');
            out.push_str(&span);
            out.push('`');
            for _ in 0..=span.chars().count() {
                chars.next();
            }
            continue;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' => out.push_str("<br>"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '@' if chars.peek().is_some_and(|next| next.is_alphanumeric()) => {
                out.push_str("@&#8203;");
            }
            c if c.is_control() && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The content of a code span whose opening backtick was just read, when `rest` closes it
/// soon, on the same line, with nothing that could break out of it or of a table cell.
fn span_in_text(rest: impl Iterator<Item = char>) -> Option<String> {
    const MAX_CODE_SPAN: usize = 200;
    let mut content = String::new();
    for c in rest.take(MAX_CODE_SPAN + 1) {
        match c {
            '`' if !content.trim().is_empty() => return Some(content),
            '`' | '|' | '\\' => return None,
            c if c.is_control() => return None,
            c => content.push(c),
        }
    }
    None
}

/// Like [`escape_inline`], for text that starts a line: a leading list, heading or thematic-break
/// marker is escaped too.
fn escape_block(text: &str) -> String {
    let escaped = escape_inline(text);
    let first = escaped.chars().next();
    match first {
        Some('-' | '+' | '=') => format!("\\{escaped}"),
        Some(c) if c.is_ascii_digit() => {
            // `1. text` or `1) text` would start an ordered list.
            let digits = escaped.chars().take_while(char::is_ascii_digit).count();
            match escaped[digits..].chars().next() {
                Some(marker @ ('.' | ')')) => {
                    format!("{}\\{marker}{}", &escaped[..digits], &escaped[digits + 1..])
                }
                _ => escaped,
            }
        }
        _ => escaped,
    }
}

/// A code span around untrusted text: the fence is one backtick longer than the longest run
/// inside, line breaks become spaces, and inside a table `|` is escaped (GFM splits cells before
/// it parses code spans).
fn code_span(text: &str, in_table: bool) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let flat = if in_table {
        flat.replace('|', "\\|")
    } else {
        flat
    };
    if flat.trim().is_empty() {
        return "` `".to_string();
    }
    let fence = "`".repeat(longest_run(&flat, '`') + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

/// A fenced code block whose fence is longer than any backtick run in the text.
fn code_block(text: &str) -> String {
    fenced_block(text, "")
}

/// [`code_block`] with an info string (` ```suggestion `). One trailing line break of the text
/// is dropped: the closing fence supplies it.
fn fenced_block(text: &str, info: &str) -> String {
    let fence = "`".repeat((longest_run(text, '`') + 1).max(3));
    let body = text.strip_suffix('\n').unwrap_or(text);
    let body = body.strip_suffix('\r').unwrap_or(body);
    format!("{fence}{info}\n{body}\n{fence}\n")
}

fn longest_run(text: &str, needle: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == needle {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_string()
            } else {
                format!("{prefix}{line}\n")
            }
        })
        .collect()
}

/// Keeps a configured link base from ending the Markdown link early.
fn sanitize_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => {
            let kept = &text[..cut];
            let kept = kept
                .char_indices()
                .last()
                .map_or(kept, |(last, _)| &kept[..last]);
            format!("{kept}…")
        }
    }
}

fn char_len(text: &str) -> usize {
    text.chars().count()
}

fn short_sha(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// `+1.5`, `+1`.
fn format_points(points: f64) -> String {
    let sign = if points < 0.0 { "−" } else { "+" };
    format!("{sign}{}", format_number(points.abs()))
}

fn format_duration(duration_ms: f64) -> String {
    if duration_ms >= 1000.0 {
        format!("{} s", format_number(duration_ms / 1000.0))
    } else {
        format!("{} ms", format_number(duration_ms))
    }
}

/// One decimal at most, without a trailing `.0`.
fn format_number(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Category, Location, Source};
    use crate::report::testutil::{render_to_string, render_with, sample_result};

    fn config() -> ReportConfig {
        ReportConfig::new(None, None)
    }

    #[test]
    fn renders_the_sample_result() {
        let mut config = config();
        config.link_base = Some("https://github.com/o/r/blob/2222222/".into());
        config.markdown_max_findings = 4;
        insta::assert_snapshot!(render_with(Format::Markdown, &sample_result(), &config));
    }

    #[test]
    fn marks_returning_findings_and_lists_dismissed_ones() {
        use crate::findings::{LearningNote, LearningStatus};
        let note = |status| {
            Some(LearningNote {
                status,
                reason: "false positive <b>".into(),
                by: "alice".into(),
                at: "2026-11-27T00:00:00Z".into(),
                fingerprint: String::new(),
            })
        };
        let mut result = sample_result();
        let mut dismissed = result.findings.remove(0);
        dismissed.learning = note(LearningStatus::Dismissed);
        let dismissed_rule = dismissed.rule_id.clone();
        result.dismissed.push(dismissed);
        result.findings[0].learning = note(LearningStatus::Returning);
        let md = render_to_string(Format::Markdown, &result);
        assert_eq!(
            md.matches("_returning: set aside before by alice").count(),
            1,
            "{md}"
        );
        assert!(
            md.contains("1 finding dismissed by the team's learnings"),
            "{md}"
        );
        let listed = md
            .lines()
            .find(|line| line.starts_with("- `") && line.contains("— alice"))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(listed.contains(&dismissed_rule), "{listed}");
        // The reason is untrusted text: escaped, never raw HTML.
        assert!(!md.contains("<b>"), "{md}");
    }

    #[test]
    fn renders_a_passing_review_without_findings() {
        let mut result = sample_result();
        result.findings.clear();
        result.should_fail = false;
        result.fail_reasons.clear();
        result.risk_factors.clear();
        result.metadata.warnings.clear();
        result.summary = "Docs only.".into();
        insta::assert_snapshot!(render_to_string(Format::Markdown, &result));
    }

    #[test]
    fn starts_with_the_marker_and_shows_the_verdict() {
        let result = sample_result();
        let markdown = render_to_string(Format::Markdown, &result);
        assert!(markdown.starts_with("<!-- tollgate:summary:v1 -->\n"));
        assert!(markdown.contains("## ❌ Tollgate review failed"));
        let mut passed = result.clone();
        passed.should_fail = false;
        let markdown = render_to_string(Format::Markdown, &passed);
        assert!(markdown.contains("## ✅ Tollgate review passed"));
    }

    #[test]
    fn groups_by_severity_worst_first_and_folds_the_rest() {
        let mut config = config();
        config.markdown_max_findings = 2;
        let markdown = render_with(Format::Markdown, &sample_result(), &config);
        let position = |needle: &str| {
            markdown
                .find(needle)
                .unwrap_or_else(|| panic!("{needle:?} missing from:\n{markdown}"))
        };
        assert!(position("#### 🛑 Critical") < position("#### 🔴 High"));
        assert!(position("#### 🟠 Medium") < position("#### 🟡 Low"));
        assert!(position("#### 🟡 Low") < position("#### 🔵 Info"));
        // Two shown in full, the other five folded (with their own severity headings).
        let details = position("<details><summary>5 more findings</summary>");
        assert!(position("Hardcoded secret") < details);
        assert!(position("Public API changed") > details);
        assert!(position("</details>") > position("Hotspot file changed"));
        // Every finding is there: renderers never filter.
        for finding in &sample_result().findings {
            assert!(
                markdown.contains(&escape_inline(&finding.title)),
                "{}",
                finding.title
            );
        }
    }

    #[test]
    fn links_locations_when_a_link_base_is_set() {
        let mut config = config();
        config.link_base = Some("https://github.com/o/r/blob/abc".into());
        let markdown = render_with(Format::Markdown, &sample_result(), &config);
        assert!(markdown.contains(
            "[src/api/handlers v2/user handler.rs:4-6](https://github.com/o/r/blob/abc/src/api/handlers%20v2/user%20handler.rs#L4-L6)"
        ), "{markdown}");
        assert!(
            markdown.contains(
                "(https://github.com/o/r/blob/abc/src/%C3%BCn%C3%AFcode/na%C3%AFve.rs#L2)"
            )
        );
        let plain = render_to_string(Format::Markdown, &sample_result());
        assert!(plain.contains("src/config/settings.rs:4"));
        assert!(!plain.contains("](http"));
    }

    fn hostile_result() -> ReviewResult {
        let mut result = sample_result();
        let hostile =
            "</details><img src=x onerror=alert(1)> | `x` ``y`` @octocat [a](javascript:1)";
        let mut finding = Finding::new(
            "evil|`rule`",
            Severity::Critical,
            Category::Security,
            Source::Llm,
            hostile,
            Location::line("src/<b>bold</b>|x`.rs", 3),
        )
        .with_message(format!(
            "# Heading\n- item\n{hostile}\n\n---\n<script>alert(1)</script>"
        ))
        .with_recommendation("| a | b |\n| --- | --- |");
        finding.fingerprint = "fp".into();
        result.findings.insert(0, finding);
        result.summary = format!("1. {hostile}");
        result.fail_reasons = vec![hostile.to_string()];
        result.risk_factors[0].detail = format!("{hostile}\n| injected | row |");
        result.risk_factors[0].signal = "sig|nal`".into();
        result.metadata.warnings = vec![hostile.to_string()];
        result
    }

    #[test]
    fn untrusted_text_cannot_inject_html_or_break_the_layout() {
        let mut config = config();
        config.markdown_max_findings = 1;
        config.link_base = Some("https://github.com/o/r/blob/abc/".into());
        let markdown = render_with(Format::Markdown, &hostile_result(), &config);

        // Only our own tags survive.
        for tag in ["<img", "<script", "<b>"] {
            assert!(!markdown.contains(tag), "{tag} leaked:\n{markdown}");
        }
        assert_eq!(markdown.matches("<details>").count(), 1, "{markdown}");
        assert_eq!(markdown.matches("</details>").count(), 1, "{markdown}");
        assert!(markdown.contains("&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;"));
        assert!(!markdown.contains("@octocat"), "mentions are defused");
        assert!(
            !markdown.contains("[a](javascript"),
            "no links from untrusted text"
        );
        assert!(markdown.contains("\\[a\\](javascript:1)"));

        // Table rows keep three cells: `|` in untrusted text is escaped and line breaks are <br>.
        let table_rows: Vec<&str> = markdown
            .lines()
            .filter(|line| line.starts_with("| "))
            .collect();
        assert_eq!(table_rows.len(), 2 + 3, "{markdown}");
        for row in table_rows {
            let unescaped_pipes = row
                .match_indices('|')
                .filter(|(idx, _)| *idx == 0 || row.as_bytes()[idx - 1] != b'\\');
            assert_eq!(unescaped_pipes.count(), 4, "{row}");
        }
        assert!(markdown.contains("| `` sig\\|nal` `` |"), "{markdown}");

        // No untrusted line starts a block: headings, lists, rules and quotes are escaped.
        assert!(
            !markdown
                .lines()
                .any(|line| line.trim_start().starts_with("# Heading"))
        );
        assert!(!markdown.lines().any(|line| line.trim() == "---"));
        assert!(markdown.contains("\n1\\. &lt;/details&gt;"), "{markdown}");
        assert!(markdown.contains("\\# Heading<br>- item<br>"), "{markdown}");
        // Code spans survive backticks in the rule id.
        assert!(markdown.contains("`` evil|`rule` ``"), "{markdown}");
        insta::assert_snapshot!(markdown);
    }

    #[test]
    fn stays_within_the_size_limit() {
        let mut result = sample_result();
        let template = result.findings[0].clone();
        for idx in 0..2_000 {
            let mut finding = template.clone();
            finding.title = format!("Finding {idx} {}", "x".repeat(400));
            finding.message = "y".repeat(5_000);
            finding.fingerprint = format!("fp{idx:05}");
            result.findings.push(finding);
        }
        let markdown = render_to_string(Format::Markdown, &result);
        let n_chars = markdown.chars().count();
        assert!(
            n_chars <= ReportConfig::GITHUB_COMMENT_MAX_CHARS,
            "{n_chars}"
        );
        assert!(
            n_chars > ReportConfig::GITHUB_COMMENT_MAX_CHARS - 5_000,
            "{n_chars}"
        );
        assert!(markdown.contains("not shown: this comment reached its size limit"));
        assert_eq!(
            markdown.matches("<details>").count(),
            markdown.matches("</details>").count()
        );
        assert!(markdown.contains("### ⚠️ Warnings"), "the footer is kept");

        // A tiny limit still holds, cutting even the header.
        let mut config = config();
        config.markdown_max_chars = 300;
        let markdown = render_with(Format::Markdown, &result, &config);
        assert!(markdown.chars().count() <= 300);
        assert!(markdown.starts_with(SUMMARY_MARKER));
    }

    #[test]
    fn comments_escape_untrusted_text_and_fence_suggestions() {
        let mut finding = hostile_result().findings.remove(0);
        finding.suggested_fix = Some(crate::findings::SuggestedFix {
            description: "Use <b>this</b>".into(),
            replacement: Some("let x = \"```\";\n".into()),
            applicability: crate::findings::Applicability::Safe,
        });
        let comment = render_comment(&finding, true);
        assert!(
            comment.starts_with("**🛑 Critical** · **&lt;/details&gt;"),
            "{comment}"
        );
        for tag in ["<img", "<script", "<b>"] {
            assert!(!comment.contains(tag), "{tag} leaked:\n{comment}");
        }
        assert!(!comment.contains("@octocat"));
        assert!(
            comment.contains("````suggestion\nlet x = \"```\";\n````\n"),
            "{comment}"
        );
        let plain = render_comment(&finding, false);
        assert!(!plain.contains("suggestion"), "{plain}");
        assert!(plain.contains("````\nlet x = \"```\";\n````\n"), "{plain}");
    }

    #[test]
    fn escaping_helpers() {
        assert_eq!(escape_inline("a_b*c"), "a\\_b\\*c");
        // Issue 28: a code span stays one, shown literally; a lone backtick or a span that
        // could break a table cell is escaped.
        assert_eq!(
            escape_inline("allowlist the rule `TG001`."),
            "allowlist the rule `TG001`."
        );
        assert_eq!(escape_inline("`<b> & @x`"), "`<b> & @x`");
        assert_eq!(escape_inline("a ` b"), "a \\` b");
        assert_eq!(escape_inline("`a|b`"), "\\`a\\|b\\`");
        assert_eq!(escape_inline("`a\nb`"), "\\`a<br>b\\`");
        assert_eq!(escape_inline("`` x"), "\\`\\` x");
        assert_eq!(escape_inline("x\r\ny\rz"), "x<br>y<br>z");
        assert_eq!(
            escape_inline("mail me@x.org, @ alone"),
            "mail me@&#8203;x.org, @ alone"
        );
        assert_eq!(escape_block("- item"), "\\- item");
        assert_eq!(escape_block("12) item"), "12\\) item");
        assert_eq!(escape_block("2026 was fine"), "2026 was fine");
        assert_eq!(code_span("a`b", false), "``a`b``");
        assert_eq!(code_span("`x`", false), "`` `x` ``");
        assert_eq!(code_block("```\nx\n"), "````\n```\nx\n````\n");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("    indented", 20), "    indented");
        assert_eq!(format_points(1.0), "+1");
        assert_eq!(format_points(0.5), "+0.5");
        assert_eq!(format_duration(12.5), "12.5 ms");
        assert_eq!(format_duration(2_500.0), "2.5 s");
    }
}
