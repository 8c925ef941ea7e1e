//! reviewdog's Diagnostic Format: `rdjson` (one `DiagnosticResult` object) and `rdjsonl` (one
//! `Diagnostic` a line), which reviewdog turns into GitHub, GitLab, Gerrit, Bitbucket or Gitea
//! review comments.
//!
//! Lines and columns are 1-based and columns count **UTF-8 bytes** (end exclusive). A
//! [`Location`](crate::findings::Location) counts characters, so columns are converted through
//! the line's text read under [`ReportConfig::repo_root`]; when the file cannot be read the
//! columns are left out (a whole-line range) rather than guessed. Only fixes marked
//! [`Applicability::Safe`] with replacement text become `suggestions`, because reviewdog
//! offers every suggestion as a one-click change; they replace the finding's whole lines
//! (reviewdog's line-based form: no columns, end line inclusive).

use std::io;

use serde::Serialize;

use super::source::SourceFiles;
use super::{Format, ReportConfig, ReportError, finding_text, rule_help_uri, sorted_findings};
use crate::findings::{Applicability, Finding, ReviewResult, Severity};

const SOURCE_NAME: &str = "tollgate";
const SOURCE_URL: &str = env!("CARGO_PKG_REPOSITORY");

pub(super) fn render(
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    let document = DiagnosticResult {
        source: source(),
        diagnostics: diagnostics(result, config),
    };
    serde_json::to_writer_pretty(&mut *out, &document)
        .map_err(ReportError::json(Format::Rdjson))?;
    out.write_all(b"\n")
        .map_err(ReportError::io(Format::Rdjson))
}

pub(super) fn render_lines(
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    for diagnostic in diagnostics(result, config) {
        serde_json::to_writer(&mut *out, &diagnostic)
            .map_err(ReportError::json(Format::Rdjsonl))?;
        out.write_all(b"\n")
            .map_err(ReportError::io(Format::Rdjsonl))?;
    }
    Ok(())
}

/// The severity table of this format.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "ERROR",
        Severity::Medium => "WARNING",
        Severity::Low | Severity::Info => "INFO",
    }
}

#[derive(Serialize)]
struct DiagnosticResult {
    source: Source,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Serialize)]
struct Source {
    name: &'static str,
    /// The project's page, when the build names one (never a placeholder).
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'static str>,
}

#[derive(Serialize)]
struct Diagnostic {
    message: String,
    location: DiagnosticLocation,
    severity: &'static str,
    source: Source,
    code: Code,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suggestions: Vec<Suggestion>,
}

#[derive(Serialize)]
struct DiagnosticLocation {
    path: String,
    range: Range,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

#[derive(Serialize)]
struct Position {
    line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
}

#[derive(Serialize)]
struct Code {
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

#[derive(Serialize)]
struct Suggestion {
    range: Range,
    text: String,
}

fn source() -> Source {
    Source {
        name: SOURCE_NAME,
        url: (!SOURCE_URL.is_empty()).then_some(SOURCE_URL),
    }
}

fn diagnostics(result: &ReviewResult, config: &ReportConfig) -> Vec<Diagnostic> {
    let mut files = SourceFiles::new(config.repo_root.as_deref());
    sorted_findings(result)
        .into_iter()
        .map(|finding| Diagnostic {
            message: finding_text(finding),
            location: DiagnosticLocation {
                path: finding.location.file.replace('\\', "/"),
                range: range(finding, &mut files),
            },
            severity: severity(finding.severity),
            source: source(),
            code: Code {
                value: finding.rule_id.clone(),
                url: rule_help_uri(result, &finding.rule_id).map(str::to_string),
            },
            suggestions: suggestion(finding).into_iter().collect(),
        })
        .collect()
}

/// The finding's range with byte columns when both columns convert, else whole lines.
fn range(finding: &Finding, files: &mut SourceFiles) -> Range {
    let location = &finding.location;
    let start_line = location.start_line.max(1);
    let end_line = location.end_line.max(start_line);
    let path = location.file.as_str();
    let columns = match (location.start_column, location.end_column) {
        (Some(start), end) => {
            let start = files.byte_column(path, start_line, start);
            let end = end.map(|end| files.byte_column(path, end_line, end));
            match (start, end) {
                (Some(start), None) => Some((start, None)),
                (Some(start), Some(Some(end))) => Some((start, Some(end))),
                _ => None,
            }
        }
        (None, _) => None,
    };
    Range {
        start: Position {
            line: start_line,
            column: columns.map(|(start, _)| start),
        },
        end: Position {
            line: end_line,
            column: columns.and_then(|(_, end)| end),
        },
    }
}

fn suggestion(finding: &Finding) -> Option<Suggestion> {
    let fix = finding.suggested_fix.as_ref()?;
    if fix.applicability != Applicability::Safe {
        return None;
    }
    let replacement = fix.replacement.as_deref()?;
    let text = replacement
        .strip_suffix('\n')
        .map(|text| text.strip_suffix('\r').unwrap_or(text))
        .unwrap_or(replacement);
    let start_line = finding.location.start_line.max(1);
    Some(Suggestion {
        range: Range {
            start: Position {
                line: start_line,
                column: None,
            },
            end: Position {
                line: finding.location.end_line.max(start_line),
                column: None,
            },
        },
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::findings::{Category, Location, Source as FindingSource, SuggestedFix};
    use crate::report::testutil::write_file;
    use crate::report::testutil::{render_to_string, render_with, sample_repo, sample_result};

    fn with_checkout(format: Format, result: &ReviewResult) -> String {
        let repo = sample_repo();
        render_with(
            format,
            result,
            &ReportConfig::new(Some(repo.path().to_path_buf()), None),
        )
    }

    #[test]
    fn renders_the_sample_result() {
        insta::assert_snapshot!(with_checkout(Format::Rdjson, &sample_result()));
    }

    #[test]
    fn renders_the_sample_result_as_json_lines() {
        let text = with_checkout(Format::Rdjsonl, &sample_result());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), sample_result().findings.len());
        let document: Value =
            serde_json::from_str(&with_checkout(Format::Rdjson, &sample_result())).unwrap();
        for (line, diagnostic) in lines
            .iter()
            .zip(document["diagnostics"].as_array().unwrap())
        {
            let parsed: Value = serde_json::from_str(line).unwrap();
            assert_eq!(&parsed, diagnostic, "each line is one diagnostic of rdjson");
        }
        insta::assert_snapshot!(text);
    }

    fn unicode_finding(path: &str) -> Finding {
        // `日本語 = x` : the match `x` is character 7, byte 13 (each of 日本語 is 3 bytes).
        Finding::new(
            "R1",
            Severity::Medium,
            Category::Style,
            FindingSource::Invariants,
            "X",
            Location {
                file: path.into(),
                start_line: 2,
                end_line: 2,
                start_column: Some(7),
                end_column: Some(8),
            },
        )
    }

    #[test]
    fn columns_become_utf8_bytes_or_are_left_out() {
        let repo = tempfile::tempdir().unwrap();
        write_file(repo.path(), "src/ü.rs", "first\n日本語 = x\n");
        let mut result = sample_result();
        result.findings = vec![unicode_finding("src/ü.rs"), unicode_finding("gone.rs")];
        let config = ReportConfig::new(Some(repo.path().to_path_buf()), None);
        let json: Value =
            serde_json::from_str(&render_with(Format::Rdjson, &result, &config)).unwrap();
        let ranges: Vec<&Value> = json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| &d["location"]["range"])
            .collect();
        let by_path = |path: &str| {
            json["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["location"]["path"] == path)
                .unwrap()["location"]["range"]
                .clone()
        };
        assert_eq!(ranges.len(), 2);
        assert_eq!(
            by_path("src/ü.rs"),
            serde_json::json!({"start": {"line": 2, "column": 13}, "end": {"line": 2, "column": 14}})
        );
        // The file is not there: no bytes to count, so whole lines.
        assert_eq!(
            by_path("gone.rs"),
            serde_json::json!({"start": {"line": 2}, "end": {"line": 2}})
        );
        // Without a checkout nothing is read at all.
        let plain: Value =
            serde_json::from_str(&render_to_string(Format::Rdjson, &result)).unwrap();
        for diagnostic in plain["diagnostics"].as_array().unwrap() {
            assert!(
                diagnostic["location"]["range"]["start"]
                    .get("column")
                    .is_none()
            );
        }
    }

    #[test]
    fn only_safe_fixes_become_suggestions() {
        let mut result = sample_result();
        let mut safe = result.findings[0].clone();
        safe.location = Location::line("src/lib.rs", 2);
        safe.suggested_fix = Some(SuggestedFix {
            description: "Sort".into(),
            replacement: Some("pub mod config;\r\n".into()),
            applicability: Applicability::Safe,
        });
        result.findings.push(safe);
        let json: Value = serde_json::from_str(&render_to_string(Format::Rdjson, &result)).unwrap();
        let with_suggestions: Vec<&Value> = json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d.get("suggestions").is_some())
            .collect();
        // The sample's unsafe and display-only fixes are not offered.
        assert_eq!(with_suggestions.len(), 1);
        assert_eq!(
            with_suggestions[0]["suggestions"],
            serde_json::json!([{"range": {"start": {"line": 2}, "end": {"line": 2}}, "text": "pub mod config;"}])
        );
    }

    #[test]
    fn severities_and_codes() {
        let json: Value =
            serde_json::from_str(&render_to_string(Format::Rdjson, &sample_result())).unwrap();
        // Issue 28: the tool's page only when the build names one, never a placeholder.
        match SOURCE_URL {
            "" => assert!(json["source"].get("url").is_none(), "{}", json["source"]),
            url => assert_eq!(json["source"]["url"], url),
        }
        assert_eq!(json["source"]["name"], "tollgate");
        let diagnostics = json["diagnostics"].as_array().unwrap();
        assert_eq!(diagnostics[0]["severity"], "ERROR");
        assert_eq!(diagnostics[0]["code"]["value"], "TG001");
        assert_eq!(
            diagnostics[0]["code"]["url"],
            "https://example.invalid/tollgate/rules/TG001"
        );
        let levels: Vec<&str> = diagnostics
            .iter()
            .map(|d| d["severity"].as_str().unwrap())
            .collect();
        assert_eq!(
            levels,
            [
                "ERROR", "ERROR", "ERROR", "ERROR", "WARNING", "INFO", "INFO"
            ]
        );
        assert_eq!(json["source"]["name"], "tollgate");
    }
}
