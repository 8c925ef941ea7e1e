//! Hiding detected secrets: [`mask`] one value, [`scrub`] a whole text, [`redact_line`] for
//! evidence.
//!
//! Hidden characters are replaced by the fixed-width [`MASK`], not one `*` per character, so the
//! output reveals nothing about a secret's length and a multi-kilobyte private key shrinks to a
//! few characters. [`MASK`] itself is treated as a placeholder by the detectors, so scrubbing a
//! scrubbed text again finds nothing new, as long as the visible ends are too short to be a
//! secret on their own.

use crate::secrets::{SecretKind, SecretMatch, find_secrets};

/// What replaces the hidden part of a secret.
pub const MASK: &str = "****";

/// A text with every detected secret masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Scrubbed {
    /// The input with each secret replaced by [`mask`]; every other byte is unchanged.
    pub text: String,
    /// What was replaced. Ranges point into the *original* text, not into `text`.
    pub secrets: Vec<SecretMatch>,
}

/// Masks `secret`, keeping up to `show_start` leading and `show_end` trailing characters and
/// replacing everything between with [`MASK`].
///
/// Counts are in characters, never splitting a multibyte one. Together the kept characters never
/// exceed half of the secret (rounded down): `show_start` is honoured first, then `show_end` gets
/// what is left. A secret of one character is masked entirely.
///
/// ```
/// use tollgate::secrets::mask;
/// assert_eq!(mask("abcdefghij", 2, 2), "ab****ij");
/// assert_eq!(mask("abcdefghij", 4, 4), "abcd****j");
/// assert_eq!(mask("päßwörd€", 1, 1), "p****€");
/// ```
pub fn mask(secret: &str, show_start: usize, show_end: usize) -> String {
    let n_chars = secret.chars().count();
    let budget = n_chars / 2;
    let n_start = show_start.min(budget);
    let n_end = show_end.min(budget - n_start);
    let head_end = byte_offset_of_char(secret, n_start);
    let tail_start = byte_offset_of_char(secret, n_chars - n_end);
    let head = secret.get(..head_end).unwrap_or_default();
    let tail = secret.get(tail_start..).unwrap_or_default();
    format!("{head}{MASK}{tail}")
}

/// Finds every secret in `text` and replaces each with [`mask`]`(secret, show_start, show_end)`.
pub fn scrub(text: &str, show_start: usize, show_end: usize) -> Scrubbed {
    let secrets = find_secrets(text);
    let scrubbed = replace_secrets(text, &secrets, |_, value| mask(value, show_start, show_end));
    Scrubbed {
        text: scrubbed,
        secrets,
    }
}

/// `line` with every secret fully masked, for a finding's evidence.
///
/// Only a provider's published prefix survives (`ghp_`, `AKIA`, `sk-ant-`, `xoxb-`, the
/// `-----BEGIN … PRIVATE KEY-----` header of a full key block), and only when it is at most half
/// of the secret; nothing after it does. Values found by name and entropy are masked from their
/// first character.
///
/// ```
/// use tollgate::secrets::redact_line;
/// let line = format!("password = \"{}\"", "Zq8-rT3!wLx0");
/// assert_eq!(redact_line(&line), "password = \"****\"");
/// ```
pub fn redact_line(line: &str) -> String {
    let secrets = find_secrets(line);
    replace_secrets(line, &secrets, |secret, value| {
        let prefix = value
            .get(..public_prefix_len(secret.kind, value))
            .unwrap_or_default();
        format!("{prefix}{MASK}")
    })
}

/// Copies `text`, replacing each of the sorted, non-overlapping `secrets` with `replacement`.
fn replace_secrets(
    text: &str,
    secrets: &[SecretMatch],
    mut replacement: impl FnMut(&SecretMatch, &str) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied_to = 0;
    for secret in secrets {
        // Ranges come from `find_secrets` on this very text, so both lookups succeed; a range
        // that did not fit would be skipped rather than panic.
        let (Some(before), Some(value)) =
            (text.get(copied_to..secret.range.start), secret.value(text))
        else {
            continue;
        };
        out.push_str(before);
        out.push_str(&replacement(secret, value));
        copied_to = secret.range.end;
    }
    out.push_str(text.get(copied_to..).unwrap_or_default());
    out
}

/// Byte offset of the `n_chars`-th character of `text` (its length if there are fewer).
fn byte_offset_of_char(text: &str, n_chars: usize) -> usize {
    text.char_indices()
        .nth(n_chars)
        .map_or(text.len(), |(offset, _)| offset)
}

/// Bytes at the start of `value` that are a provider's published prefix, which says what the
/// secret is without revealing any of it. Zero when the prefix would be more than half the value.
fn public_prefix_len(kind: SecretKind, value: &str) -> usize {
    let prefixes: &[&str] = match kind {
        SecretKind::AwsAccessKeyId => &["AKIA", "ASIA", "ABIA", "ACCA"],
        SecretKind::GithubToken => &["github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        SecretKind::GitlabToken => &["glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-"],
        SecretKind::SlackToken => &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xapp-"],
        SecretKind::SlackWebhook => &[
            "https://hooks.slack.com/services/",
            "https://hooks.slack.com/workflows/",
            "https://hooks.slack.com/triggers/",
            "http://hooks.slack.com/services/",
        ],
        SecretKind::StripeKey => &["sk_live_", "rk_live_", "sk_test_", "rk_test_"],
        SecretKind::GoogleApiKey => &["AIza"],
        SecretKind::OpenaiApiKey => &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"],
        SecretKind::AnthropicApiKey => &["sk-ant-"],
        SecretKind::NpmToken => &["npm_"],
        SecretKind::PypiToken => &["pypi-"],
        SecretKind::SendgridApiKey => &["SG."],
        SecretKind::TwilioApiKey => &["SK"],
        SecretKind::ShopifyToken => &["shpat_", "shpca_", "shppa_", "shpss_"],
        SecretKind::HuggingfaceToken => &["hf_"],
        SecretKind::GroqApiKey => &["gsk_"],
        SecretKind::GoogleOauthClientSecret => &["GOCSPX-"],
        SecretKind::DigitaloceanToken => &["dop_v1_", "doo_v1_", "dor_v1_"],
        SecretKind::DiscordWebhook => &[
            "https://discord.com/api/webhooks/",
            "https://discordapp.com/api/webhooks/",
        ],
        SecretKind::PrivateKey => &[],
        SecretKind::AwsSecretAccessKey
        | SecretKind::AzureAccountKey
        | SecretKind::TelegramBotToken
        | SecretKind::Jwt
        | SecretKind::UrlCredentials
        | SecretKind::Password
        | SecretKind::GenericSecret => &[],
    };
    let len = if kind == SecretKind::PrivateKey {
        private_key_header_len(value)
    } else {
        prefixes
            .iter()
            .filter(|prefix| value.starts_with(**prefix))
            .map(|prefix| prefix.len())
            .max()
            .unwrap_or(0)
    };
    if len * 2 <= value.len() && value.is_char_boundary(len) {
        len
    } else {
        0
    }
}

/// Length of the `-----BEGIN … PRIVATE KEY-----` header at the start of `value`, or 0.
fn private_key_header_len(value: &str) -> usize {
    const BEGIN: &str = "-----BEGIN";
    if !value.starts_with(BEGIN) {
        return 0;
    }
    value
        .get(BEGIN.len()..)
        .and_then(|rest| rest.find("-----"))
        .map_or(0, |offset| BEGIN.len() + offset + "-----".len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_keeps_requested_ends() {
        assert_eq!(mask("abcdefghij", 0, 0), "****");
        assert_eq!(mask("abcdefghij", 2, 0), "ab****");
        assert_eq!(mask("abcdefghij", 0, 3), "****hij");
        assert_eq!(mask("abcdefghij", 2, 3), "ab****hij");
    }

    #[test]
    fn mask_clamps_to_half() {
        // Ten characters: at most five shown, start first.
        assert_eq!(mask("abcdefghij", 4, 4), "abcd****j");
        assert_eq!(mask("abcdefghij", 10, 10), "abcde****");
        assert_eq!(mask("abcdefghij", usize::MAX, usize::MAX), "abcde****");
        // Odd length rounds down: seven characters show at most three.
        assert_eq!(mask("abcdefg", 0, 9), "****efg");
        assert_eq!(mask("a", 1, 1), "****");
        assert_eq!(mask("", 3, 3), "****");
    }

    #[test]
    fn mask_is_char_boundary_safe() {
        assert_eq!(mask("päßwörd€", 2, 2), "pä****d€");
        assert_eq!(mask("€€€€", 3, 3), "€€****");
        assert_eq!(mask("日本語の秘密", 1, 2), "日****秘密");
        assert_eq!(mask("🔑🔑🔑", 5, 0), "🔑****");
    }

    #[test]
    fn public_prefixes() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        assert_eq!(public_prefix_len(SecretKind::GithubToken, &token), 4);
        let token = format!("sk-proj-{}", "a1B2".repeat(10));
        assert_eq!(public_prefix_len(SecretKind::OpenaiApiKey, &token), 8);
        assert_eq!(public_prefix_len(SecretKind::GenericSecret, &token), 0);
        // A prefix longer than half the value is not shown.
        assert_eq!(public_prefix_len(SecretKind::GithubToken, "ghp_ab"), 0);
        let dashes = "-----";
        let header = format!("{dashes}BEGIN RSA PRIVATE KEY{dashes}");
        assert_eq!(public_prefix_len(SecretKind::PrivateKey, &header), 0);
        let body = "Q".repeat(64);
        let block = format!("{header}\n{body}\n{dashes}END RSA PRIVATE KEY{dashes}");
        assert_eq!(
            public_prefix_len(SecretKind::PrivateKey, &block),
            header.len()
        );
    }
}
