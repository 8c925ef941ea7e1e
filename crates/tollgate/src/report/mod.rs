//! Reports: turns a [`ReviewResult`] into JSON, SARIF 2.1.0, a Markdown PR comment, or one of
//! the CI formats (reviewdog rdjson/rdjsonl, GitLab Code Quality, Checkstyle XML, JUnit XML,
//! GitHub workflow commands), or plain text for a terminal.
//!
//! [`render`] dispatches on [`Format`] to one file per format (`json.rs`, `sarif.rs`,
//! `markdown.rs`, `rdjson.rs`, `gitlab.rs`, `checkstyle.rs`, `junit.rs`, `github.rs`, `text.rs`); each
//! renderer owns its own severity table. Renderers show what they are given:
//! they never filter, dedupe or decide the gate (that is `review`'s job), and they sort so that
//! the same result always renders to the same bytes. [`ReportConfig`] carries what a renderer
//! cannot know from the result itself: where the checkout is and how long a comment may be.
//!
//! [`line_hashes`] computes GitHub's `primaryLocationLineHash` for SARIF; [`review_result_schema`]
//! is the JSON Schema committed as `schemas/review-result.schema.json`.

mod checkstyle;
mod github;
mod gitlab;
mod json;
mod junit;
mod line_hash;
mod markdown;
mod rdjson;
mod sarif;
mod source;
mod text;
mod xml;

#[cfg(test)]
pub(crate) mod testutil;

pub use github::{escape_data, escape_property};
pub use json::review_result_schema;
pub use line_hash::line_hashes;
pub use markdown::{SUMMARY_MARKER, escape_inline, render_comment};

use crate::ErrorCode;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;

use crate::findings::{ReviewResult, UnknownValue};

/// An output format of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The [`ReviewResult`] as pretty JSON (see `schemas/review-result.schema.json`).
    Json,
    /// SARIF 2.1.0 for GitHub code scanning: one run per finding source.
    Sarif,
    /// A PR comment in GitHub-flavoured Markdown, with a hidden marker for sticky comments.
    Markdown,
    /// reviewdog's Diagnostic Format as one JSON object (`reviewdog -f=rdjson`).
    Rdjson,
    /// reviewdog's Diagnostic Format as JSON Lines, one diagnostic a line (`reviewdog -f=rdjsonl`).
    Rdjsonl,
    /// GitLab Code Quality (`artifacts:reports:codequality`).
    Gitlab,
    /// Checkstyle XML (reviewdog, cs2pr, Jenkins Warnings NG).
    Checkstyle,
    /// JUnit XML (GitLab `artifacts:reports:junit`, Jenkins, Azure DevOps, CircleCI).
    Junit,
    /// GitHub Actions workflow commands (`::error file=…,line=…::message`).
    Github,
    /// Plain text for a terminal: findings grouped by file, then the verdict.
    Text,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::Json,
        Format::Sarif,
        Format::Markdown,
        Format::Rdjson,
        Format::Rdjsonl,
        Format::Gitlab,
        Format::Checkstyle,
        Format::Junit,
        Format::Github,
        Format::Text,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Markdown => "markdown",
            Format::Rdjson => "rdjson",
            Format::Rdjsonl => "rdjsonl",
            Format::Gitlab => "gitlab",
            Format::Checkstyle => "checkstyle",
            Format::Junit => "junit",
            Format::Github => "github",
            Format::Text => "text",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json | Format::Rdjson | Format::Gitlab => "json",
            Format::Sarif => "sarif",
            Format::Markdown => "md",
            Format::Rdjsonl => "jsonl",
            Format::Checkstyle | Format::Junit => "xml",
            Format::Github | Format::Text => "txt",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = UnknownValue;

    /// Case-insensitive; `md` is accepted for `markdown`, `codequality` for `gitlab`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            "markdown" | "md" => Ok(Format::Markdown),
            "rdjson" => Ok(Format::Rdjson),
            "rdjsonl" => Ok(Format::Rdjsonl),
            "gitlab" | "codequality" => Ok(Format::Gitlab),
            "checkstyle" => Ok(Format::Checkstyle),
            "junit" => Ok(Format::Junit),
            "github" => Ok(Format::Github),
            "text" => Ok(Format::Text),
            _ => Err(UnknownValue {
                what: "report format",
                given: s.to_string(),
                expected: "json, sarif, markdown (md), rdjson, rdjsonl, gitlab (codequality), checkstyle, junit, github, text",
            }),
        }
    }
}

/// What renderers need besides the result. Fields are plain settings; [`ReportConfig::new`] fills
/// the limits with GitHub's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportConfig {
    /// The checkout the finding paths are relative to. SARIF reads files under it for
    /// `primaryLocationLineHash` and names it in `originalUriBaseIds`, rdjson for converting
    /// columns to UTF-8 bytes; without it these are left out.
    pub repo_root: Option<PathBuf>,
    /// Markdown: findings shown in full before the rest collapse into a `<details>` block.
    pub markdown_max_findings: usize,
    /// Markdown: the most characters the comment may have; findings that do not fit are left out
    /// with a note. GitHub refuses comments over 65,536 characters.
    pub markdown_max_chars: usize,
    /// Markdown: a URL prefix that makes `path:line` a link, such as
    /// `https://github.com/o/r/blob/<sha>/`. A missing trailing `/` is added.
    pub link_base: Option<String>,
    /// Text: ANSI colours (a terminal that wants them).
    pub color: bool,
}

impl ReportConfig {
    /// GitHub's limit on an issue or PR comment body.
    pub const GITHUB_COMMENT_MAX_CHARS: usize = 65_536;

    /// Findings shown in full in a PR comment before the rest collapse.
    pub const DEFAULT_MARKDOWN_MAX_FINDINGS: usize = 25;

    /// A configuration for the given checkout and link base, with `markdown_max_findings` =
    /// [`Self::DEFAULT_MARKDOWN_MAX_FINDINGS`] and `markdown_max_chars` =
    /// [`Self::GITHUB_COMMENT_MAX_CHARS`].
    pub fn new(repo_root: Option<PathBuf>, link_base: Option<String>) -> ReportConfig {
        ReportConfig {
            repo_root,
            markdown_max_findings: Self::DEFAULT_MARKDOWN_MAX_FINDINGS,
            markdown_max_chars: Self::GITHUB_COMMENT_MAX_CHARS,
            link_base,
            color: false,
        }
    }
}

/// A report could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error("Cannot write the {format} report: {source}")]
    Io {
        format: Format,
        #[source]
        source: io::Error,
    },
    #[error("Cannot serialise the {format} report: {source}")]
    Serialize {
        format: Format,
        #[source]
        source: serde_json::Error,
    },
}

impl ReportError {
    /// A stable machine-readable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ReportError::Io { .. } => ErrorCode::IoError,
            ReportError::Serialize { .. } => ErrorCode::SerializationError,
        }
    }

    fn io(format: Format) -> impl FnOnce(io::Error) -> ReportError {
        move |source| ReportError::Io { format, source }
    }

    /// serde_json reports write failures as its own error; keep them I/O errors.
    fn json(format: Format) -> impl FnOnce(serde_json::Error) -> ReportError {
        move |source| match source.io_error_kind() {
            Some(_) => ReportError::Io {
                format,
                source: io::Error::from(source),
            },
            None => ReportError::Serialize { format, source },
        }
    }
}

/// Renders `result` as `format` into `out`.
pub fn render(
    format: Format,
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    match format {
        Format::Json => json::render(result, out),
        Format::Sarif => sarif::render(result, config, out),
        Format::Markdown => markdown::render(result, config, out),
        Format::Rdjson => rdjson::render(result, config, out),
        Format::Rdjsonl => rdjson::render_lines(result, config, out),
        Format::Gitlab => gitlab::render(result, out),
        Format::Checkstyle => checkstyle::render(result, out),
        Format::Junit => junit::render(result, out),
        Format::Github => github::render(result, out),
        Format::Text => text::render(result, config, out),
    }
}

/// The one-line text of a finding for formats with a single message field: `title. message`,
/// never empty.
fn finding_text(finding: &crate::findings::Finding) -> String {
    let title = finding.title.trim();
    let message = finding.message.trim();
    match (title.is_empty(), message.is_empty()) {
        (false, false) if title.ends_with(['.', '!', '?', ':']) => format!("{title} {message}"),
        (false, false) => format!("{title}. {message}"),
        (false, true) => title.to_string(),
        (true, false) => message.to_string(),
        (true, true) => finding.rule_id.clone(),
    }
}

/// The help link of a finding's rule, if the result describes one.
fn rule_help_uri<'a>(result: &'a ReviewResult, rule_id: &str) -> Option<&'a str> {
    result
        .rules
        .iter()
        .find(|rule| rule.id == rule_id)
        .and_then(|rule| rule.help_uri.as_deref())
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
}

/// The findings in display order (worst first, then path, line, rule), whatever order the
/// result holds them in, so every format renders the same result to the same bytes.
fn sorted_findings(result: &ReviewResult) -> Vec<&crate::findings::Finding> {
    let mut findings: Vec<&crate::findings::Finding> = result.findings.iter().collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.location.file.cmp(&b.location.file))
            .then_with(|| a.location.start_line.cmp(&b.location.start_line))
            .then_with(|| a.location.start_column.cmp(&b.location.start_column))
            .then_with(|| a.rule_id.cmp(&b.rule_id))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
    findings
}

/// Percent-encodes a `/`-separated relative path for use in a URI: everything except RFC 3986
/// unreserved characters and `/` is encoded (UTF-8 bytes), so spaces, `%`, `#`, `?`, `:` and
/// non-ASCII text are all safe. Backslashes become `/` and leading `./` are dropped.
fn encode_relative_path(path: &str) -> String {
    let normalized = path.replace('\\', "/");
    let mut trimmed = normalized.as_str();
    while let Some(rest) = trimmed.strip_prefix("./") {
        trimmed = rest;
    }
    percent_encode(trimmed, b"/")
}

/// Percent-encodes every byte of `text` except RFC 3986 unreserved characters and `keep`.
fn percent_encode(text: &str, keep: &[u8]) -> String {
    let mut encoded = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) || keep.contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_parses_names_and_aliases() {
        for format in Format::ALL {
            assert_eq!(format.as_str().parse::<Format>().unwrap(), format);
        }
        assert_eq!("MD".parse::<Format>().unwrap(), Format::Markdown);
        assert_eq!("codequality".parse::<Format>().unwrap(), Format::Gitlab);
        let err = "html".parse::<Format>().unwrap_err();
        assert!(err.to_string().contains("`html`"), "{err}");
    }

    #[test]
    fn relative_paths_are_percent_encoded() {
        assert_eq!(encode_relative_path("src/main.rs"), "src/main.rs");
        assert_eq!(
            encode_relative_path(".\\docs\\my file#1.md"),
            "docs/my%20file%231.md"
        );
        assert_eq!(encode_relative_path("src/ünï.rs"), "src/%C3%BCn%C3%AF.rs");
        assert_eq!(encode_relative_path("a:b/100%.txt"), "a%3Ab/100%25.txt");
    }

    #[test]
    fn write_failures_are_io_errors() {
        struct Broken;
        impl io::Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let result = testutil::sample_result();
        let config = ReportConfig::new(None, None);
        for format in Format::ALL {
            let err = render(format, &result, &config, &mut Broken).unwrap_err();
            assert_eq!(err.code(), "IO_ERROR", "{format}: {err}");
            assert!(err.to_string().contains(format.as_str()), "{err}");
        }
    }
}
