//! `scrub_secrets` as a request: upstream's input and output shape around [`scrub`], with the
//! size limit enforced before any scanning starts.

use crate::ErrorCode;
use std::collections::BTreeSet;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secrets::{
    self, ContentType, MAX_SCRUB_CHARS, SecretKind, SecretMatch, ValidateContent,
    ValidateContentResult, ValidateError, scrub,
};

/// The most characters of a secret a caller may ask to keep visible at either end.
pub const MAX_VISIBLE_CHARS: usize = 8;

/// Input of `scrub_secrets`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrubSecretsRequest {
    /// The text to scrub, at most 1,000,000 characters.
    #[schemars(length(max = MAX_SCRUB_CHARS))]
    pub content: String,
    /// Characters of each secret left visible at its start (0–8; never more than half the
    /// secret). Default 0.
    #[serde(default)]
    #[schemars(range(max = MAX_VISIBLE_CHARS))]
    pub show_start: usize,
    /// Characters of each secret left visible at its end (0–8; never more than half the
    /// secret). Default 0.
    #[serde(default)]
    #[schemars(range(max = MAX_VISIBLE_CHARS))]
    pub show_end: usize,
}

/// Output of `scrub_secrets` (upstream's shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScrubSecretsResult {
    /// The input with every detected secret masked as `****`; every other byte unchanged.
    pub scrubbed_content: String,
    pub secrets_found: bool,
    pub secrets_count: usize,
    /// The kinds found, each once, sorted.
    pub detected_types: Vec<SecretKind>,
    /// Where each secret was, in order (Tollgate extension); never the secret itself.
    pub secrets: Vec<SecretLocation>,
    pub processing_time_ms: f64,
}

/// What kind of secret was found where. Lines and columns are 1-based; columns count characters
/// (not bytes), so they match what an editor shows for the text that was sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SecretLocation {
    pub kind: SecretKind,
    pub line: usize,
    pub column: usize,
    /// Where the secret ends (inclusive); differs from `line` only for multi-line private keys.
    pub end_line: usize,
    pub end_column: usize,
    /// The detector's confidence, 0–1.
    pub confidence: f64,
}

/// The request is outside the limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScrubError {
    #[error(
        "`content` has {chars} characters; the limit is {MAX_SCRUB_CHARS}: split the text and scrub each part"
    )]
    TooLarge { chars: usize },
    #[error("`{field}` is {value}; at most {MAX_VISIBLE_CHARS} characters may stay visible")]
    TooManyVisible { field: &'static str, value: usize },
}

impl ScrubError {
    /// Stable machine code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ScrubError::TooLarge { .. } | ScrubError::TooManyVisible { .. } => {
                ErrorCode::InvalidInput
            }
        }
    }

    /// The request field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            ScrubError::TooLarge { .. } => "content",
            ScrubError::TooManyVisible { field, .. } => field,
        }
    }
}

/// Scrubs `request.content`, keeping `show_start` / `show_end` characters of each secret.
pub fn scrub_secrets(request: &ScrubSecretsRequest) -> Result<ScrubSecretsResult, ScrubError> {
    let started = Instant::now();
    for (field, value) in [
        ("show_start", request.show_start),
        ("show_end", request.show_end),
    ] {
        if value > MAX_VISIBLE_CHARS {
            return Err(ScrubError::TooManyVisible { field, value });
        }
    }
    // Bytes bound characters from above, so most texts skip the count.
    if request.content.len() > MAX_SCRUB_CHARS {
        let chars = request.content.chars().count();
        if chars > MAX_SCRUB_CHARS {
            return Err(ScrubError::TooLarge { chars });
        }
    }
    let scrubbed = scrub(&request.content, request.show_start, request.show_end);
    let secrets = locate(&request.content, &scrubbed.secrets);
    let detected_types: BTreeSet<SecretKind> =
        scrubbed.secrets.iter().map(|secret| secret.kind).collect();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(ScrubSecretsResult {
        secrets_found: !scrubbed.secrets.is_empty(),
        secrets_count: scrubbed.secrets.len(),
        detected_types: detected_types.into_iter().collect(),
        scrubbed_content: scrubbed.text,
        secrets,
        processing_time_ms: (elapsed_ms * 1000.0).round() / 1000.0,
    })
}

/// Line and column of each match in `text`, in one pass over it (matches are sorted by start and
/// do not overlap, as [`scrub`] returns them).
fn locate(text: &str, matches: &[SecretMatch]) -> Vec<SecretLocation> {
    let mut cursor = Cursor::default();
    matches
        .iter()
        .map(|found| {
            let (line, column) = cursor.advance(text, found.range.start);
            // The last character of the secret, not the one after it.
            let last = text[..found.range.end]
                .char_indices()
                .next_back()
                .map_or(found.range.start, |(at, _)| at.max(found.range.start));
            let (end_line, end_column) = cursor.advance(text, last);
            SecretLocation {
                kind: found.kind,
                line,
                column,
                end_line,
                end_column,
                confidence: found.confidence,
            }
        })
        .collect()
}

/// A position moving forward through a text, counting lines as it goes.
#[derive(Default)]
struct Cursor {
    offset: usize,
    /// Lines before `offset`'s line.
    newlines: usize,
    line_start: usize,
}

impl Cursor {
    /// Moves to byte `to` (never backwards) and returns its 1-based line and character column.
    fn advance(&mut self, text: &str, to: usize) -> (usize, usize) {
        let to = to.max(self.offset);
        let skipped = &text.as_bytes()[self.offset..to];
        if let Some(last) = skipped.iter().rposition(|b| *b == b'\n') {
            self.newlines += skipped.iter().filter(|b| **b == b'\n').count();
            self.line_start = self.offset + last + 1;
        }
        self.offset = to;
        let column = text[self.line_start..to].chars().count() + 1;
        (self.newlines + 1, column)
    }
}

/// Input of `validate_content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateContentRequest {
    /// The text to check, at most 1,000,000 characters.
    #[schemars(length(max = MAX_SCRUB_CHARS))]
    pub content: String,
    /// Default `raw_text`.
    #[serde(default)]
    pub content_type: ContentType,
    /// Where the content is meant to go; its extension picks the language of code checks.
    #[serde(default)]
    pub file_path: Option<String>,
    /// Also return the content with every detected secret masked (`scrubbed_content`).
    #[serde(default)]
    pub scrub_secrets: bool,
}

impl From<ValidateContentRequest> for ValidateContent {
    fn from(request: ValidateContentRequest) -> ValidateContent {
        ValidateContent {
            content: request.content,
            content_type: request.content_type,
            file_path: request.file_path,
            scrub_secrets: request.scrub_secrets,
        }
    }
}

/// `validate_content`.
pub fn validate_content(
    request: ValidateContentRequest,
) -> Result<ValidateContentResult, ValidateError> {
    secrets::validate_content(&request.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GitHub token assembled at run time, so this file holds nothing token-shaped.
    fn github_token() -> String {
        format!("ghp_{}", "a1B2".repeat(9))
    }

    #[test]
    fn reports_count_and_kinds_and_masks_with_visible_ends() {
        let token = github_token();
        let content = format!("one = {token}\ntwo = {token}\n");
        let result = scrub_secrets(&ScrubSecretsRequest {
            content,
            show_start: 4,
            show_end: 2,
        })
        .unwrap();
        assert!(result.secrets_found);
        assert_eq!(result.secrets_count, 2);
        assert_eq!(result.detected_types, vec![SecretKind::GithubToken]);
        assert!(!result.scrubbed_content.contains(&token));
        assert_eq!(
            result.scrubbed_content,
            format!("one = ghp_****B2\ntwo = ghp_****B2\n")
        );
    }

    #[test]
    fn each_secret_is_located_by_line_and_character_column() {
        let token = github_token();
        let key = format!(
            "-----BEGIN PRIV{}ATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
            ""
        );
        let content = format!("héllo\n\n  ключ = {token}\n{key}\nx = {token}");
        let result = scrub_secrets(&ScrubSecretsRequest {
            content,
            ..ScrubSecretsRequest::default()
        })
        .unwrap();
        let spots: Vec<_> = result
            .secrets
            .iter()
            .map(|s| (s.kind, s.line, s.column, s.end_line, s.end_column))
            .collect();
        assert_eq!(
            spots,
            vec![
                (SecretKind::GithubToken, 3, 10, 3, 49),
                (SecretKind::PrivateKey, 4, 1, 6, 25),
                (SecretKind::GithubToken, 7, 5, 7, 44),
            ]
        );
        assert!(result.secrets.iter().all(|s| s.confidence > 0.5));
        let serialized = serde_json::to_string(&result.secrets).unwrap();
        assert!(!serialized.contains(&github_token()));
    }

    #[test]
    fn clean_text_is_returned_unchanged() {
        let result = scrub_secrets(&ScrubSecretsRequest {
            content: "nothing to see — ünïcode".into(),
            ..ScrubSecretsRequest::default()
        })
        .unwrap();
        assert!(!result.secrets_found);
        assert_eq!(result.secrets_count, 0);
        assert!(result.detected_types.is_empty());
        assert_eq!(result.scrubbed_content, "nothing to see — ünïcode");
    }

    #[test]
    fn the_limit_counts_characters_not_bytes() {
        // 600,000 two-byte characters: 1.2 MB but within the character limit.
        let wide = ScrubSecretsRequest {
            content: "é".repeat(600_000),
            ..ScrubSecretsRequest::default()
        };
        assert!(scrub_secrets(&wide).is_ok());

        let long = ScrubSecretsRequest {
            content: "a".repeat(MAX_SCRUB_CHARS + 1),
            ..ScrubSecretsRequest::default()
        };
        let err = scrub_secrets(&long).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert_eq!(err.field(), "content");
        assert!(err.to_string().contains("1000001"), "{err}");
    }

    #[test]
    fn visible_ends_are_bounded() {
        let err = scrub_secrets(&ScrubSecretsRequest {
            content: "x".into(),
            show_start: 0,
            show_end: 9,
        })
        .unwrap_err();
        assert_eq!(err.field(), "show_end");
    }
}
