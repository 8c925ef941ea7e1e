//! Secret detection and scrubbing.
//!
//! [`find_secrets`] scans a line or a whole blob and returns the byte ranges of secret *values*
//! (never the surrounding `key =`), each tagged with a [`SecretKind`] and a confidence. Provider
//! formats with a fixed, documented shape (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI,
//! Anthropic, npm, PyPI, SendGrid, Twilio, private key blocks, JWTs) score high; values found only
//! because they are assigned to a name like `password` or `api_key` and look random enough score
//! lower.
//!
//! Three ways to hide what was found:
//!
//! - [`mask`] hides one value, optionally keeping a few leading and trailing characters.
//! - [`scrub`] masks every detected secret in a text, leaving every other byte untouched. Anything
//!   sent to a model goes through it first.
//! - [`redact_line`] masks every secret completely, keeping only well-known public prefixes such as
//!   `ghp_`, so a finding's evidence can show the line without showing the secret.
//!
//! [`scrub_secrets`] wraps [`scrub`] as the `scrub_secrets` request front ends receive (with its
//! size limit).
//!
//! [`SecretMatch`] holds only a kind, a range and a confidence, so printing or serialising it never
//! leaks the value; [`SecretMatch::value`] reads the value back deliberately.

#[cfg(test)]
mod corpus;
mod detect;
mod examples;
mod heuristics;
mod mask;
mod validate;

pub use examples::known_example;

/// The most characters `scrub_secrets` and `validate_content` accept (upstream's limit).
pub const MAX_SCRUB_CHARS: usize = 1_000_000;
pub use mask::{MASK, Scrubbed, mask, redact_line, scrub};
pub use validate::{
    ContentIssue, ContentType, IssueSeverity, MAX_LINE_CHARS, SchemaProblem, ValidateContent,
    ValidateContentResult, ValidateError, check_against_schema, validate_content,
};

use std::fmt;
use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What kind of secret a match is. [`SecretKind::as_str`] is the stable id (also the serde form).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    AwsAccessKeyId,
    AwsSecretAccessKey,
    GithubToken,
    GitlabToken,
    SlackToken,
    SlackWebhook,
    StripeKey,
    GoogleApiKey,
    OpenaiApiKey,
    AnthropicApiKey,
    NpmToken,
    PypiToken,
    SendgridApiKey,
    TwilioApiKey,
    AzureAccountKey,
    DiscordWebhook,
    TelegramBotToken,
    ShopifyToken,
    HuggingfaceToken,
    GroqApiKey,
    GoogleOauthClientSecret,
    DigitaloceanToken,
    PrivateKey,
    Jwt,
    /// The password part of `scheme://user:password@host`.
    UrlCredentials,
    /// A value assigned to a password-like name (`password`, `passwd`, `passphrase`).
    Password,
    /// A random-looking value assigned to a secret-like name (`token`, `api_key`, `secret`, …).
    GenericSecret,
}

impl SecretKind {
    pub const ALL: [SecretKind; 27] = [
        SecretKind::AwsAccessKeyId,
        SecretKind::AwsSecretAccessKey,
        SecretKind::GithubToken,
        SecretKind::GitlabToken,
        SecretKind::SlackToken,
        SecretKind::SlackWebhook,
        SecretKind::StripeKey,
        SecretKind::GoogleApiKey,
        SecretKind::OpenaiApiKey,
        SecretKind::AnthropicApiKey,
        SecretKind::NpmToken,
        SecretKind::PypiToken,
        SecretKind::SendgridApiKey,
        SecretKind::TwilioApiKey,
        SecretKind::AzureAccountKey,
        SecretKind::DiscordWebhook,
        SecretKind::TelegramBotToken,
        SecretKind::ShopifyToken,
        SecretKind::HuggingfaceToken,
        SecretKind::GroqApiKey,
        SecretKind::GoogleOauthClientSecret,
        SecretKind::DigitaloceanToken,
        SecretKind::PrivateKey,
        SecretKind::Jwt,
        SecretKind::UrlCredentials,
        SecretKind::Password,
        SecretKind::GenericSecret,
    ];

    /// Stable snake_case id, safe to use in rule ids, configs and fingerprints.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::AwsAccessKeyId => "aws_access_key_id",
            SecretKind::AwsSecretAccessKey => "aws_secret_access_key",
            SecretKind::GithubToken => "github_token",
            SecretKind::GitlabToken => "gitlab_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::SlackWebhook => "slack_webhook",
            SecretKind::StripeKey => "stripe_key",
            SecretKind::GoogleApiKey => "google_api_key",
            SecretKind::OpenaiApiKey => "openai_api_key",
            SecretKind::AnthropicApiKey => "anthropic_api_key",
            SecretKind::NpmToken => "npm_token",
            SecretKind::PypiToken => "pypi_token",
            SecretKind::SendgridApiKey => "sendgrid_api_key",
            SecretKind::TwilioApiKey => "twilio_api_key",
            SecretKind::AzureAccountKey => "azure_account_key",
            SecretKind::DiscordWebhook => "discord_webhook",
            SecretKind::TelegramBotToken => "telegram_bot_token",
            SecretKind::ShopifyToken => "shopify_token",
            SecretKind::HuggingfaceToken => "huggingface_token",
            SecretKind::GroqApiKey => "groq_api_key",
            SecretKind::GoogleOauthClientSecret => "google_oauth_client_secret",
            SecretKind::DigitaloceanToken => "digitalocean_token",
            SecretKind::PrivateKey => "private_key",
            SecretKind::Jwt => "jwt",
            SecretKind::UrlCredentials => "url_credentials",
            SecretKind::Password => "password",
            SecretKind::GenericSecret => "generic_secret",
        }
    }

    /// Human-readable name for finding titles and reports.
    pub fn label(self) -> &'static str {
        match self {
            SecretKind::AwsAccessKeyId => "AWS access key ID",
            SecretKind::AwsSecretAccessKey => "AWS secret access key",
            SecretKind::GithubToken => "GitHub token",
            SecretKind::GitlabToken => "GitLab token",
            SecretKind::SlackToken => "Slack token",
            SecretKind::SlackWebhook => "Slack webhook URL",
            SecretKind::StripeKey => "Stripe secret key",
            SecretKind::GoogleApiKey => "Google API key",
            SecretKind::OpenaiApiKey => "OpenAI API key",
            SecretKind::AnthropicApiKey => "Anthropic API key",
            SecretKind::NpmToken => "npm access token",
            SecretKind::PypiToken => "PyPI API token",
            SecretKind::SendgridApiKey => "SendGrid API key",
            SecretKind::TwilioApiKey => "Twilio API key",
            SecretKind::AzureAccountKey => "Azure storage or Service Bus key",
            SecretKind::DiscordWebhook => "Discord webhook URL",
            SecretKind::TelegramBotToken => "Telegram bot token",
            SecretKind::ShopifyToken => "Shopify access token",
            SecretKind::HuggingfaceToken => "Hugging Face token",
            SecretKind::GroqApiKey => "Groq API key",
            SecretKind::GoogleOauthClientSecret => "Google OAuth client secret",
            SecretKind::DigitaloceanToken => "DigitalOcean token",
            SecretKind::PrivateKey => "Private key",
            SecretKind::Jwt => "JSON Web Token",
            SecretKind::UrlCredentials => "Password in URL",
            SecretKind::Password => "Hardcoded password",
            SecretKind::GenericSecret => "Hardcoded secret",
        }
    }
}

impl SecretKind {
    /// The label as it reads after "adds": with its article (`an AWS access key ID`), and the
    /// generic kinds in lower case (`a private key`).
    pub fn in_sentence(self) -> String {
        let label = self.label();
        let generic = matches!(
            self,
            SecretKind::PrivateKey
                | SecretKind::UrlCredentials
                | SecretKind::Password
                | SecretKind::GenericSecret
        );
        let label = if generic {
            label.to_lowercase().replace("url", "URL")
        } else {
            label.to_string()
        };
        // By sound: a vowel, or an initialism spoken from a vowel sound (`npm`: "en-pee-em").
        let vowel_sound = label.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u'])
            || label.starts_with("npm");
        let article = if vowel_sound { "an" } else { "a" };
        format!("{article} {label}")
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One detected secret. Holds no copy of the value, so `Debug` and serde output are safe to log.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SecretMatch {
    pub kind: SecretKind,
    /// Byte range of the secret value itself in the scanned text, on char boundaries.
    pub range: Range<usize>,
    /// How sure the detector is, in `0.0..=1.0`: about 0.9 and up for provider formats, 0.3–0.6
    /// for values flagged only by their name and entropy.
    pub confidence: f64,
}

impl SecretMatch {
    /// The secret itself, read from the text that was scanned; `None` if `text` is not that text
    /// (the range does not fit it).
    pub fn value<'t>(&self, text: &'t str) -> Option<&'t str> {
        text.get(self.range.clone())
    }
}

/// Finds the secrets in `text`: non-overlapping matches, sorted by start.
///
/// Where detectors disagree about a stretch of text, the most confident match wins (then the
/// longest), so `api_key = "sk-ant-…"` is reported once, as an Anthropic key. Runs in time linear
/// in the length of `text`; never panics.
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    detect::find(text)
}

/// [`find_secrets`] on each of `texts`, in order: the same matches, found faster when the texts
/// are many and short (a diff's added lines).
pub fn find_secrets_each(texts: &[&str]) -> Vec<Vec<SecretMatch>> {
    detect::find_each(texts)
}

#[cfg(test)]
mod tests {
    //! Fake secrets are assembled from pieces at run time so that this file holds nothing shaped
    //! like a real token for other scanners to trip on.

    use proptest::prelude::*;

    use super::*;

    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const DIGITS: &str = "0123456789";
    const HEX: &str = "0123456789abcdef";
    const BASE64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL_SAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const PASSWORD_CHARS: &str =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%&+?";
    const DASHES: &str = "-----";

    /// Deterministic pseudo-random text over `alphabet` (xorshift), different for each `seed`.
    fn noise(alphabet: &str, len: usize, seed: u64) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chars[(state % chars.len() as u64) as usize]
            })
            .collect()
    }

    fn pem(label: &str, seed: u64) -> String {
        let body: Vec<String> = (0..4).map(|line| noise(BASE64, 64, seed + line)).collect();
        format!(
            "{DASHES}BEGIN {label}{DASHES}\n{}\n{DASHES}END {label}{DASHES}",
            body.join("\n")
        )
    }

    struct Case {
        line: String,
        kind: SecretKind,
        value: String,
    }

    /// One line (or block) per detector shape, with the exact value that must be reported.
    fn positive_cases() -> Vec<Case> {
        let mut cases = Vec::new();
        let mut add = |kind: SecretKind, value: String, line: &dyn Fn(&str) -> String| {
            cases.push(Case {
                line: line(&value),
                kind,
                value,
            });
        };
        use SecretKind as K;

        add(
            K::AwsAccessKeyId,
            format!("AKIA{}", noise(UPPER_DIGITS, 16, 1)),
            &|v| format!("aws_access_key_id = {v}"),
        );
        add(
            K::AwsAccessKeyId,
            format!("ASIA{}", noise(UPPER_DIGITS, 16, 2)),
            &|v| format!(r#"{{"AccessKeyId": "{v}"}}"#),
        );
        add(K::AwsSecretAccessKey, noise(BASE64, 40, 3), &|v| {
            format!("aws_secret_access_key = {v}")
        });
        add(K::AwsSecretAccessKey, noise(BASE64, 40, 4), &|v| {
            format!(r#"export AWS_SECRET_ACCESS_KEY="{v}""#)
        });
        add(K::GithubToken, format!("ghp_{}", "a1B2".repeat(9)), &|v| {
            format!("token: {v}")
        });
        for (seed, prefix) in (5..).zip(["gho_", "ghu_", "ghs_", "ghr_"]) {
            add(
                K::GithubToken,
                format!("{prefix}{}", noise(ALNUM, 36, seed)),
                &|v| format!("GH={v} # ci"),
            );
        }
        add(
            K::GithubToken,
            format!(
                "github_pat_{}_{}",
                noise(ALNUM, 22, 9),
                noise(ALNUM, 59, 10)
            ),
            &|v| format!("git clone https://x-access:{v}.invalid"),
        );
        add(
            K::GitlabToken,
            format!("glpat-{}", noise(URL_SAFE, 20, 11)),
            &|v| format!("GITLAB_TOKEN: \"{v}\""),
        );
        add(
            K::SlackToken,
            format!(
                "xoxb-{}-{}-{}",
                noise(DIGITS, 12, 12),
                noise(DIGITS, 13, 13),
                noise(ALNUM, 24, 14)
            ),
            &|v| format!("client = WebClient({v:?})"),
        );
        add(
            K::SlackWebhook,
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                noise(UPPER_DIGITS, 10, 15),
                noise(UPPER_DIGITS, 10, 16),
                noise(ALNUM, 24, 17)
            ),
            &|v| format!("webhook_url = \"{v}\""),
        );
        add(
            K::StripeKey,
            format!("sk_live_{}", noise(ALNUM, 24, 18)),
            &|v| format!("Stripe.api_key = '{v}'"),
        );
        add(
            K::StripeKey,
            format!("rk_live_{}", noise(ALNUM, 99, 19)),
            &|v| format!("STRIPE={v}"),
        );
        add(
            K::GoogleApiKey,
            format!("AIza{}", noise(URL_SAFE, 35, 20)),
            &|v| format!("<script src=\"https://maps.invalid/js?key={v}\"></script>"),
        );
        add(
            K::OpenaiApiKey,
            format!("sk-proj-{}", noise(URL_SAFE, 120, 21)),
            &|v| format!("OPENAI_API_KEY={v}"),
        );
        add(
            K::OpenaiApiKey,
            format!(
                "sk-{}T3BlbkFJ{}",
                noise(ALNUM, 20, 22),
                noise(ALNUM, 20, 23)
            ),
            &|v| format!("openai.api_key = \"{v}\""),
        );
        add(
            K::OpenaiApiKey,
            format!("sk-{}", noise(ALNUM, 48, 24)),
            &|v| format!("const client = new OpenAI({{ apiKey: '{v}' }});"),
        );
        add(
            K::AnthropicApiKey,
            format!("sk-ant-api03-{}AA", noise(URL_SAFE, 93, 25)),
            &|v| format!("ANTHROPIC_API_KEY=\"{v}\""),
        );
        add(K::NpmToken, format!("npm_{}", noise(ALNUM, 36, 26)), &|v| {
            format!("//registry.npmjs.org/:_authToken={v}")
        });
        add(
            K::PypiToken,
            format!("pypi-AgEIcHlwaS5vcmc{}", noise(URL_SAFE, 70, 27)),
            &|v| format!("password = {v}"),
        );
        add(
            K::SendgridApiKey,
            format!("SG.{}.{}", noise(URL_SAFE, 22, 28), noise(URL_SAFE, 43, 29)),
            &|v| format!("sg = SendGridAPIClient(\"{v}\")"),
        );
        add(K::TwilioApiKey, format!("SK{}", noise(HEX, 32, 30)), &|v| {
            format!("twilio_sid: {v}")
        });
        add(
            K::AzureAccountKey,
            format!("{}==", noise(BASE64, 86, 60)),
            &|v| {
                format!(
                    "DefaultEndpointsProtocol=https;AccountName=app;AccountKey={v};EndpointSuffix=core.windows.net"
                )
            },
        );
        add(
            K::AzureAccountKey,
            format!("{}=", noise(BASE64, 43, 61)),
            &|v| {
                format!(
                    "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={v}"
                )
            },
        );
        add(
            K::DiscordWebhook,
            format!(
                "https://discord.com/api/webhooks/{}/{}",
                noise(DIGITS, 18, 62),
                noise(URL_SAFE, 68, 63)
            ),
            &|v| format!("DISCORD_HOOK = \"{v}\""),
        );
        add(
            K::TelegramBotToken,
            format!("{}:AA{}", noise(DIGITS, 10, 64), noise(URL_SAFE, 33, 65)),
            &|v| format!("bot = Bot(\"{v}\")"),
        );
        add(
            K::ShopifyToken,
            format!("shpat_{}", noise(HEX, 32, 66)),
            &|v| format!("X-Shopify-Access-Token: {v}"),
        );
        add(
            K::HuggingfaceToken,
            format!("hf_{}", noise(&ALNUM[..52], 34, 67)),
            &|v| format!("login(\"{v}\")"),
        );
        add(
            K::GroqApiKey,
            format!("gsk_{}", noise(ALNUM, 52, 68)),
            &|v| format!("client = Groq(api_key=\"{v}\")"),
        );
        add(
            K::GoogleOauthClientSecret,
            format!("GOCSPX-{}", noise(URL_SAFE, 28, 69)),
            &|v| format!("\"client_secret\": \"{v}\","),
        );
        add(
            K::DigitaloceanToken,
            format!("dop_v1_{}", noise(HEX, 64, 70)),
            &|v| format!("DIGITALOCEAN_TOKEN={v}"),
        );
        for (seed, label) in (31..).zip([
            "RSA PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "EC PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ]) {
            add(K::PrivateKey, pem(label, seed * 10), &|v| {
                format!("key = <<EOF\n{v}\nEOF")
            });
        }
        // A service-account JSON keeps the key on one line with `\n` escapes.
        add(
            K::PrivateKey,
            pem("PRIVATE KEY", 400).replace('\n', "\\n"),
            &|v| format!(r#"  "private_key": "{v}\n","#),
        );
        // In a diff each line is scanned alone; the header is enough.
        add(
            K::PrivateKey,
            format!("{DASHES}BEGIN OPENSSH PRIVATE KEY{DASHES}"),
            &|v| format!("+{v}"),
        );
        add(
            K::Jwt,
            format!(
                "eyJ{}.eyJ{}.{}",
                noise(URL_SAFE, 30, 41),
                noise(URL_SAFE, 60, 42),
                noise(URL_SAFE, 43, 43)
            ),
            &|v| format!("curl -H 'X-Session: {v}' https://api.invalid"),
        );
        add(K::UrlCredentials, noise(ALNUM, 16, 44), &|v| {
            format!("DATABASE_URL=postgres://app:{v}@db.internal:5432/app")
        });
        add(K::UrlCredentials, noise(PASSWORD_CHARS, 12, 45), &|v| {
            format!("redis://:{v}@cache.prod.internal:6379/0")
        });
        add(K::GenericSecret, noise(ALNUM, 32, 46), &|v| {
            format!("api_key = \"{v}\"")
        });
        add(K::GenericSecret, noise(BASE64, 44, 47), &|v| {
            format!("client_secret: '{v}'")
        });
        add(
            K::GenericSecret,
            format!("{}9", noise(ALNUM, 23, 48)),
            &|v| format!("export SECRET_TOKEN={v}"),
        );
        add(K::GenericSecret, noise(BASE64, 24, 49), &|v| {
            format!(r#"{{"auths": {{"registry.invalid": {{"auth": "{v}"}}}}}}"#)
        });
        add(K::GenericSecret, noise(ALNUM, 40, 50), &|v| {
            format!("Authorization: Bearer {v}")
        });
        add(K::GenericSecret, noise(HEX, 32, 51), &|v| {
            format!("headers[\"X-Api-Key\"] = \"{v}\"")
        });
        add(K::GenericSecret, noise(ALNUM, 28, 58), &|v| {
            format!("GET https://api.invalid/v1/items?access_token={v}&page=2")
        });
        add(K::GenericSecret, noise(ALNUM, 32, 52), &|v| {
            format!("\ttoken := \"{v}\"")
        });
        add(K::GenericSecret, noise(URL_SAFE, 30, 53), &|v| {
            format!("SIGNING_KEY = b'{v}'")
        });
        add(K::Password, noise(PASSWORD_CHARS, 12, 54), &|v| {
            format!("password = \"{v}\"")
        });
        add(K::Password, noise(PASSWORD_CHARS, 10, 55), &|v| {
            format!("'db_password' => '{v}',")
        });
        add(K::Password, noise(ALNUM, 20, 56), &|v| {
            format!("  passwd: {v}")
        });
        add(K::Password, noise(PASSWORD_CHARS, 14, 57), &|v| {
            format!("🔑 Passwort, ключ: passphrase = \"{v}\" — ✓")
        });
        cases
    }

    #[test]
    fn detects_every_positive_sample() {
        for case in positive_cases() {
            let found = find_secrets(&case.line);
            let summary: Vec<_> = found
                .iter()
                .map(|m| (m.kind, m.value(&case.line).unwrap_or_default().to_owned()))
                .collect();
            assert_eq!(
                summary,
                vec![(case.kind, case.value.clone())],
                "in line: {}",
                case.line
            );
            assert!(found[0].confidence > 0.0 && found[0].confidence <= 1.0);
        }
    }

    #[test]
    fn provider_formats_are_more_confident_than_entropy() {
        for case in positive_cases() {
            let found = find_secrets(&case.line);
            let confidence = found.first().map_or(0.0, |m| m.confidence);
            // Two decimals at most, so rendered reports are stable.
            assert!(((confidence * 100.0).round() / 100.0 - confidence).abs() < 1e-12);
            match case.kind {
                SecretKind::Password | SecretKind::GenericSecret => {
                    assert!(confidence <= 0.6, "{}", case.line);
                }
                SecretKind::UrlCredentials => assert!(confidence >= 0.6, "{}", case.line),
                _ => assert!(confidence >= 0.75, "{}", case.line),
            }
        }
    }

    #[test]
    fn ignores_negative_samples() {
        let negatives = [
            // Placeholders.
            r#"password = "changeme""#.to_owned(),
            r#"secret = "${SECRET}""#.to_owned(),
            r#"token: "<your-token>""#.to_owned(),
            r#"password = "xxxxxxxxxxxxxxxxxxxx""#.to_owned(),
            r#"secret = "example""#.to_owned(),
            r#"api_key = "aaaaaaaaaaaaaaaaaaaaaaaa""#.to_owned(),
            r#""password": "********""#.to_owned(),
            r#"API_KEY = "your_api_key_here""#.to_owned(),
            r#"password: "{{ vault_db_password }}""#.to_owned(),
            r#"csrf_token = "{{ csrf_token() }}""#.to_owned(),
            r#"dsn = "%(user)s:%(password)s""#.to_owned(),
            // Environment lookups and variable references.
            "token = process.env.GITHUB_TOKEN".to_owned(),
            r#"api_key = os.environ["OPENAI_API_KEY"]"#.to_owned(),
            r#"password = os.getenv("DB_PASSWORD")"#.to_owned(),
            r#"token = ENV.fetch("TOKEN")"#.to_owned(),
            "export API_KEY=$API_KEY".to_owned(),
            "password: ${{ secrets.DB_PASSWORD }}".to_owned(),
            "let token = std::env::var(\"TOKEN\")?;".to_owned(),
            "token = access_token".to_owned(),
            "password=self.password".to_owned(),
            "api_key = settings.OPENAI_API_KEY".to_owned(),
            "token = getToken()".to_owned(),
            "secret: !vault |".to_owned(),
            "auth: *default_auth".to_owned(),
            // Types, comparisons and code identifiers.
            "password: str".to_owned(),
            "token: string;".to_owned(),
            "if token == \"abcdefABCDEF0123456789\" {".to_owned(),
            "tokenizer_config_path = \"models/tokenizer/config.json\"".to_owned(),
            "let tokenizer_config_path = resolve(&root);".to_owned(),
            "max_tokens = 4096".to_owned(),
            "author = \"Jane Doe\"".to_owned(),
            "auth_email: jane.doe@company.invalid".to_owned(),
            "secret: /var/run/secrets/kubernetes.io/serviceaccount/token".to_owned(),
            // Ordinary values that merely look random.
            "id = \"123e4567-e89b-12d3-a456-426614174000\"".to_owned(),
            "commit: da39a3ee5e6b4b0d3255bfef95601890afd80709".to_owned(),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709".to_owned(),
            "data = \"aGVsbG8gd29ybGQ=\"".to_owned(),
            "integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==".to_owned(),
            "secret = \"supercalifragilisticexpialidocious\"".to_owned(),
            "secret = \"my-application-secret-name\"".to_owned(),
            "password = \"test1234\"".to_owned(),
            // Documentation examples and local defaults. (Published example values, AWS's
            // `…EXAMPLE` keys and passwords on example.com, are found and reported as examples:
            // see `examples.rs`.)
            format!("token = ghp_{}", "x".repeat(36)),
            format!(
                "https://hooks.slack.com/services/T{0}/B{0}/{1}",
                "0".repeat(8),
                "X".repeat(24)
            ),
            format!("sk-{}", "abcdefghijklmnopqrstuvwxyzabcdefghij"),
            "postgres://user:password@localhost/db".to_owned(),
            "postgres://postgres:postgres@localhost:5432/app".to_owned(),
            "f\"postgresql://{user}:{password}@{host}/db\"".to_owned(),
            "mongodb://${DB_USER}:${DB_PASS}@mongo:27017".to_owned(),
            "https://github.com/owner/repo/blob/main/src/token.rs#L10".to_owned(),
            "http://[::1]:8080/path?token".to_owned(),
        ];
        for line in negatives {
            let found = find_secrets(&line);
            assert!(
                found.is_empty(),
                "flagged {:?} in line: {line}",
                found
                    .iter()
                    .map(|m| (m.kind, m.value(&line)))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn empty_and_whitespace_text() {
        assert!(find_secrets("").is_empty());
        assert!(find_secrets(" \n\t\r\n").is_empty());
        assert_eq!(scrub("", 2, 2).text, "");
        assert_eq!(redact_line(""), "");
    }

    /// All positive samples in one blob, one per line, with unicode and noise in between.
    fn blob() -> (String, Vec<(SecretKind, String)>) {
        let mut text = String::from("# config — ünïcödé ✓\n");
        let mut expected = Vec::new();
        for case in positive_cases() {
            text.push_str(&case.line);
            text.push_str("\nplain line with ümlauts, 日本語 and tokenizer_config_path\n");
            expected.push((case.kind, case.value));
        }
        (text, expected)
    }

    #[test]
    fn blob_ranges_are_exact_sorted_and_disjoint() {
        let (text, expected) = blob();
        let found = find_secrets(&text);
        assert_eq!(found, detect::find_unfiltered(&text));
        let summary: Vec<_> = found
            .iter()
            .map(|m| (m.kind, m.value(&text).unwrap_or_default().to_owned()))
            .collect();
        assert_eq!(summary, expected);
        for pair in found.windows(2) {
            assert!(pair[0].range.end <= pair[1].range.start);
        }
        for m in &found {
            assert!(text.is_char_boundary(m.range.start) && text.is_char_boundary(m.range.end));
        }
    }

    #[test]
    fn scrub_replaces_every_secret_and_keeps_the_rest() {
        let (text, expected) = blob();
        let scrubbed = scrub(&text, 0, 0);
        assert_eq!(scrubbed.secrets, find_secrets(&text));
        for (_, value) in &expected {
            assert!(!scrubbed.text.contains(value.as_str()));
        }
        // Rebuild the scrubbed text from the original: only the secret ranges may differ.
        let mut rebuilt = String::new();
        let mut copied_to = 0;
        for m in &scrubbed.secrets {
            rebuilt.push_str(&text[copied_to..m.range.start]);
            rebuilt.push_str(MASK);
            copied_to = m.range.end;
        }
        rebuilt.push_str(&text[copied_to..]);
        assert_eq!(scrubbed.text, rebuilt);
    }

    #[test]
    fn scrub_shows_requested_ends_and_is_idempotent() {
        let value = format!("ghp_{}", noise(ALNUM, 36, 60));
        let text = format!("a\nGITHUB_TOKEN={value}\nb");
        let scrubbed = scrub(&text, 4, 3);
        let tail = &value[value.len() - 3..];
        assert_eq!(
            scrubbed.text,
            format!("a\nGITHUB_TOKEN=ghp_{MASK}{tail}\nb")
        );
        let (blob_text, _) = blob();
        // Only for short visible ends: showing half of a long key can leave a fragment that is
        // itself key-shaped (`sk_live_` + 45 characters), and that is rightly found again.
        for (start, end) in [(0, 0), (2, 2), (4, 4), (8, 4)] {
            let once = scrub(&blob_text, start, end);
            let twice = scrub(&once.text, start, end);
            let kinds: Vec<_> = twice.secrets.iter().map(|m| m.kind).collect();
            assert!(twice.secrets.is_empty(), "show {start},{end}: {kinds:?}");
            assert_eq!(twice.text, once.text);
        }
    }

    #[test]
    fn redact_line_keeps_only_public_prefixes() {
        for case in positive_cases() {
            let redacted = redact_line(&case.line);
            let found = find_secrets(&case.line);
            let secret = &found[0];
            let prefix_len = redacted.len() + secret.range.len() - case.line.len() - MASK.len();
            assert!(prefix_len * 2 <= case.value.len(), "{redacted}");
            // Whatever was kept is a prefix, and the rest of the value is gone.
            let kept = &case.value[..prefix_len];
            assert!(redacted.contains(&format!("{kept}{MASK}")), "{redacted}");
            assert!(!redacted.contains(&case.value[prefix_len..]), "{redacted}");
            assert_eq!(
                redacted,
                format!(
                    "{}{kept}{MASK}{}",
                    &case.line[..secret.range.start],
                    &case.line[secret.range.end..]
                )
            );
        }
        let token = format!("ghp_{}", noise(ALNUM, 36, 61));
        assert_eq!(
            redact_line(&format!("t = {token}")),
            format!("t = ghp_{MASK}")
        );
        let key = format!("{DASHES}BEGIN RSA PRIVATE KEY{DASHES}");
        assert_eq!(redact_line(&format!("+{key}")), format!("+{MASK}"));
        let password = noise(PASSWORD_CHARS, 12, 62);
        assert_eq!(
            redact_line(&format!("password = \"{password}\"")),
            format!("password = \"{MASK}\"")
        );
        assert_eq!(redact_line("nothing to see"), "nothing to see");
    }

    /// Issue 28: "adds a AWS access key ID" read wrong.
    #[test]
    fn kinds_read_right_inside_a_sentence() {
        assert_eq!(
            SecretKind::AwsAccessKeyId.in_sentence(),
            "an AWS access key ID"
        );
        assert_eq!(SecretKind::OpenaiApiKey.in_sentence(), "an OpenAI API key");
        assert_eq!(SecretKind::NpmToken.in_sentence(), "an npm access token");
        assert_eq!(SecretKind::GithubToken.in_sentence(), "a GitHub token");
        assert_eq!(SecretKind::PrivateKey.in_sentence(), "a private key");
        assert_eq!(SecretKind::Password.in_sentence(), "a hardcoded password");
    }

    #[test]
    fn kind_ids_are_stable_and_match_serde() {
        let mut ids = std::collections::BTreeSet::new();
        for kind in SecretKind::ALL {
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(kind.to_string(), kind.as_str());
            assert!(!kind.label().is_empty());
            assert!(ids.insert(kind.as_str()));
        }
    }

    #[test]
    fn matches_never_print_the_secret() {
        let value = format!("sk_live_{}", noise(ALNUM, 24, 63));
        let text = format!("key = {value}");
        let found = find_secrets(&text);
        let debug = format!("{found:?}");
        let json = serde_json::to_string(&found).unwrap_or_default();
        assert!(!debug.contains(&value) && !json.contains(&value));
        assert!(json.contains(r#""range":{"start":6,"end":"#), "{json}");
        let schema = serde_json::to_string(&schemars::schema_for!(SecretMatch)).unwrap_or_default();
        assert!(schema.contains("confidence") && schema.contains("stripe_key"));
    }

    #[test]
    fn unterminated_and_repeated_key_headers() {
        let header = format!("{DASHES}BEGIN RSA PRIVATE KEY{DASHES}");
        let text =
            format!("{header}\n{header}\nABC\n{DASHES}END RSA PRIVATE KEY{DASHES}\n{header}");
        let found = find_secrets(&text);
        let ranges: Vec<_> = found.iter().map(|m| m.range.clone()).collect();
        let second_block_end = text.rfind('\n').unwrap_or(0);
        // The first header swallows the second up to the only footer; the last stands alone.
        assert_eq!(
            ranges,
            vec![0..second_block_end, second_block_end + 1..text.len()]
        );
    }

    /// Pieces that tend to form (or almost form) secrets when glued together.
    fn piece() -> impl Strategy<Value = String> {
        let fixed = vec![
            "ghp_",
            "github_pat_",
            "AKIA",
            "ASIA",
            "sk-",
            "sk-ant-",
            "sk-proj-",
            "sk_live_",
            "xoxb-",
            "glpat-",
            "npm_",
            "pypi-AgEI",
            "SG.",
            "SK",
            "AIza",
            "eyJ",
            "T3BlbkFJ",
            "https://hooks.slack.com/services/",
            "password = \"",
            "api_key: ",
            "token=",
            "Authorization: Bearer ",
            "aws_secret_access_key = ",
            "AWS_SECRET_KEY=",
            "PASSWORD: '",
            "Client-Credentials=",
            "MASTER_KEY = `",
            "postgres://",
            "://",
            ":",
            "@",
            "/",
            ".",
            "\"",
            "'",
            " ",
            "\n",
            "-",
            "_",
            "=",
            "${",
            "}",
            "é",
            "€",
            "🔑",
            "\\n",
        ]
        .into_iter()
        .map(str::to_owned)
        .chain([
            format!("{DASHES}BEGIN RSA PRIVATE KEY{DASHES}"),
            format!("{DASHES}END RSA PRIVATE KEY{DASHES}"),
            DASHES.to_owned(),
        ])
        .collect::<Vec<_>>();
        prop_oneof![
            3 => prop::sample::select(fixed),
            2 => "[A-Za-z0-9]{1,48}",
            1 => "[a-f0-9]{8,40}",
            1 => "[A-Za-z0-9+/=_-]{8,64}",
            1 => "\\PC{1,8}",
        ]
    }

    fn count_occurrences(haystack: &str, needle: &str) -> usize {
        (0..haystack.len())
            .filter(|&start| {
                haystack
                    .get(start..)
                    .is_some_and(|rest| rest.starts_with(needle))
            })
            .count()
    }

    fn check_invariants(text: &str) -> Result<(), TestCaseError> {
        let found = find_secrets(text);
        // The literal prefilter only skips detectors that could not have matched.
        prop_assert_eq!(&found, &detect::find_unfiltered(text));
        for pair in found.windows(2) {
            prop_assert!(pair[0].range.end <= pair[1].range.start);
        }
        for m in &found {
            prop_assert!(!m.range.is_empty());
            prop_assert!(m.value(text).is_some());
            prop_assert!(m.confidence > 0.0 && m.confidence <= 1.0);
        }
        let scrubbed = scrub(text, 2, 2);
        prop_assert_eq!(&scrubbed.secrets, &found);
        let redacted = redact_line(text);
        for m in &found {
            let value = m.value(text).unwrap_or_default();
            // A value that also occurs where it was not detected is rightly left there.
            let n_detected = found
                .iter()
                .filter(|o| o.value(text) == Some(value))
                .count();
            if count_occurrences(text, value) == n_detected {
                prop_assert!(!scrubbed.text.contains(value), "scrub leaked {:?}", value);
                prop_assert!(!redacted.contains(value), "redact leaked {:?}", value);
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            check_invariants(&text)?;
        }

        #[test]
        fn secret_shaped_soup_keeps_invariants(pieces in prop::collection::vec(piece(), 0..32)) {
            check_invariants(&pieces.concat())?;
        }

        #[test]
        fn a_batch_finds_what_each_text_alone_does(
            texts in prop::collection::vec(prop::collection::vec(piece(), 0..12), 0..8)
        ) {
            let texts: Vec<String> = texts.iter().map(|pieces| pieces.concat()).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let each: Vec<_> = texts.iter().map(|text| detect::find_unfiltered(text)).collect();
            prop_assert_eq!(find_secrets_each(&texts), each);
        }
    }
}
