//! The detector table and the scan behind [`crate::secrets::find_secrets`].
//!
//! Every detector is one regex plus a rule saying how to judge what it captured, and the
//! literals any match of it must contain. One Aho-Corasick pass over the text finds which
//! literals occur, so which detectors can match at all; only those then run their own regex,
//! compiled on first use. Most text holds no secret and most detectors never run, so a review
//! pays for almost no regex compilation (a `RegexSet` of every pattern cost more to build than
//! scanning a 20,000-line diff). The `regex` crate guarantees time linear in the text, and word
//! boundaries are ASCII (`(?-u:\b)`) so the fast DFA engines stay usable on non-ASCII text.
//!
//! Candidates from all detectors are then resolved into non-overlapping matches, the most
//! confident first.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::Regex;

use crate::secrets::examples::is_documentation_host;
use crate::secrets::heuristics::{
    CharClasses, is_code_reference, is_indirection, is_placeholder, shannon_entropy,
};
use crate::secrets::{SecretKind, SecretMatch, known_example};

/// Finds all secrets in `text`, resolved into sorted, non-overlapping matches.
pub(crate) fn find(text: &str) -> Vec<SecretMatch> {
    find_each(&[text]).pop().unwrap_or_default()
}

/// [`find`] on each of `texts`, with one prefilter pass over all of them: a review scans tens
/// of thousands of short added lines, and a prefilter call per line cost more than the
/// search itself.
pub(crate) fn find_each(texts: &[&str]) -> Vec<Vec<SecretMatch>> {
    let possible = COMPILED.possible_detectors_each(texts);
    texts
        .iter()
        .zip(possible)
        .map(|(text, possible)| {
            if possible.is_empty() {
                Vec::new()
            } else {
                scan(text, |idx| possible.contains(&idx))
            }
        })
        .collect()
}

/// Every detector run on `text`, prefilter or not: what [`find`] must always equal.
#[cfg(test)]
pub(crate) fn find_unfiltered(text: &str) -> Vec<SecretMatch> {
    scan(text, |_| true)
}

/// Runs the detectors `run` selects over `text` and resolves their candidates.
fn scan(text: &str, run: impl Fn(usize) -> bool) -> Vec<SecretMatch> {
    let compiled = &*COMPILED;
    let mut candidates = Vec::new();
    for (idx, (detector, slot)) in DETECTORS.iter().zip(&compiled.regexes).enumerate() {
        if !run(idx) {
            continue;
        }
        let regex = slot.get_or_init(|| {
            Regex::new(detector.pattern).expect("secret detector pattern compiles")
        });
        match detector.rule {
            Rule::Token {
                kind,
                confidence,
                min_alnum_classes,
            } => scan_tokens(
                regex,
                text,
                kind,
                confidence,
                min_alnum_classes,
                &mut candidates,
            ),
            Rule::AwsSecretAccessKey => scan_aws_secret_keys(regex, text, &mut candidates),
            Rule::PrivateKey => scan_private_keys(regex, text, &mut candidates),
            Rule::UrlCredentials => scan_url_credentials(regex, text, &mut candidates),
            Rule::Assignment => scan_assignments(regex, text, &mut candidates),
            Rule::CurlUser => scan_curl_users(regex, text, &mut candidates),
            Rule::SqlInsert => scan_sql_inserts(regex, text, &mut candidates),
        }
    }
    resolve_overlaps(candidates)
}

struct Detector {
    /// A regex whose group `secret` (or, for assignments, one of the value groups) is the value.
    pattern: &'static str,
    /// Every match of `pattern` contains one of these (compared as `case` says): the prefilter.
    literals: &'static [&'static str],
    case: Case,
    rule: Rule,
}

/// How a detector's literals compare.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Sensitive,
    /// ASCII case-insensitive, for patterns under `(?i:…)`.
    Insensitive,
}

#[derive(Clone, Copy)]
enum Rule {
    /// A provider format: the shape is evidence enough, so only placeholders are rejected.
    Token {
        kind: SecretKind,
        confidence: f64,
        /// How many of lowercase, uppercase and digits the whole value must use; raised where a
        /// prefix is short enough that ordinary words could follow it.
        min_alnum_classes: usize,
    },
    /// A 40-character AWS secret access key, only in an assignment to an AWS-like name: the
    /// value alone is indistinguishable from any base64 string.
    AwsSecretAccessKey,
    /// `-----BEGIN … PRIVATE KEY-----`, extended to its `-----END …-----` footer when present.
    PrivateKey,
    /// `scheme://user:password@host`; the password is the secret.
    UrlCredentials,
    /// `name = value` where the name sounds secret; the value must look random.
    Assignment,
    /// `curl -u user:password`; the password is the secret.
    CurlUser,
    /// A value in an SQL `INSERT` whose column sounds secret, judged like an assignment.
    SqlInsert,
}

impl Rule {
    /// Texts one of which every match has after the literal that selected it: a second, cheap
    /// prefilter. Without it, the word `API` in a finding's title ("Public API changed") compiled
    /// the assignment detector's regex, the costliest to build, on every review.
    fn needs_after_literal(self) -> &'static [&'static str] {
        match self {
            Rule::Assignment => &["=", ":"],
            Rule::CurlUser => &["-u"],
            Rule::UrlCredentials => &["@"],
            Rule::Token { .. } | Rule::AwsSecretAccessKey | Rule::PrivateKey | Rule::SqlInsert => {
                &[]
            }
        }
    }
}

/// Names that make the value assigned to them suspect (the assignment and SQL detectors share
/// them). Password labels in a few other languages sit with `pass…`; each has a literal in the
/// assignment detector's prefilter (or contains `pass`).
macro_rules! secret_names {
    () => {
        concat!(
            r"pass(?:word|wort|wd|phrase)|kennwort|contrase(?:ñ|n)a|senha|wachtwoord",
            r"|mot[ _.\-]?de[ _.\-]?passe|l(?:ö|o)senord|salasana",
            r"|secret(?:[_.\-]?key)?|token|api[_.\-]?key",
            r"|access[_.\-]?key|auth(?:orization)?|credentials?",
            r"|(?:private|signing|encryption|master)[_.\-]?key",
        )
    };
}

/// Words in [`secret_names`] that name a password rather than a token or key.
const PASSWORD_NAME_PREFIXES: &[&str] = &[
    "pass",
    "kennwort",
    "contrase",
    "senha",
    "wachtwoord",
    "mot",
    "lösenord",
    "losenord",
    "salasana",
];

/// High-confidence provider formats, then the context-dependent detectors.
///
/// Trailing `(?-u:\b)` appears only where the format has a fixed length, so a longer run of
/// characters is rejected instead of being cut into a match.
const DETECTORS: &[Detector] = &[
    Detector {
        pattern: r"(?-u:\b)(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?-u:\b)",
        literals: &["AKIA", "ASIA", "ABIA", "ACCA"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::AwsAccessKeyId,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: concat!(
            r"(?i:aws[_.\-]?secret(?:[_.\-]?access)?[_.\-]?key|secret[_.\-]?access[_.\-]?key)",
            r#"["'`]?\]?[ \t]*(?:=>|:=|=|:)[ \t]*["'`]?"#,
            r"(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
        ),
        literals: &["secret"],
        case: Case::Insensitive,
        rule: Rule::AwsSecretAccessKey,
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>gh[pousr]_[A-Za-z0-9]{36,251})(?-u:\b)",
        literals: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GithubToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>github_pat_[A-Za-z0-9_]{50,255})(?-u:\b)",
        literals: &["github_pat_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GithubToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_\-]{20,255}(?:\.[A-Za-z0-9_\-]{1,64}){0,2})",
        literals: &["glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GitlabToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>xox[baprs]-[A-Za-z0-9\-]{10,250}|xapp-[0-9]-[A-Za-z0-9\-]{10,250})",
        literals: &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xapp-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::SlackToken,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?P<secret>https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]{6,20}/[A-Za-z0-9_]{6,20}/[A-Za-z0-9_/]{8,128})",
        literals: &["://"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::SlackWebhook,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>[sr]k_live_[A-Za-z0-9]{20,247})(?-u:\b)",
        literals: &["sk_live_", "rk_live_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::StripeKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    // Test-mode keys reach the account's test data and its settings; the suffix must mix
    // classes so that `sk_test_` + a lowercase test name is not taken for one.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>[sr]k_test_[A-Za-z0-9]{20,247})(?-u:\b)",
        literals: &["sk_test_", "rk_test_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::StripeKey,
            confidence: 0.9,
            min_alnum_classes: 2,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>AIza[A-Za-z0-9_\-]{35})",
        literals: &["AIza"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GoogleApiKey,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,250})",
        literals: &["sk-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::OpenaiApiKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    // Legacy user keys embed base64("OpenAI") at a fixed offset.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})(?-u:\b)",
        literals: &["sk-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::OpenaiApiKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    // Any other `sk-` plus a long alphanumeric run: OpenAI's shape, also used by many
    // OpenAI-compatible providers. Less specific, so less confident and it must look mixed.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>sk-[A-Za-z0-9]{32,100})(?-u:\b)",
        literals: &["sk-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::OpenaiApiKey,
            confidence: 0.8,
            min_alnum_classes: 2,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>sk-ant-[A-Za-z0-9_\-]{32,250})",
        literals: &["sk-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::AnthropicApiKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>npm_[A-Za-z0-9]{36})(?-u:\b)",
        literals: &["npm_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::NpmToken,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    // `AgEI` / `AgEN` start the base64 of a macaroon issued by pypi.org / test.pypi.org.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>pypi-AgE[IN][A-Za-z0-9_\-]{50,})",
        literals: &["pypi-AgE"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::PypiToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})",
        literals: &["SG."],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::SendgridApiKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    // `SK` + 32 hex is Twilio's API key SID; the shape is short and plain, hence the lower score.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>SK[0-9a-fA-F]{32})(?-u:\b)",
        literals: &["SK"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::TwilioApiKey,
            confidence: 0.75,
            min_alnum_classes: 1,
        },
    },
    // Azure storage (86 base64 + `==`) and Service Bus / Event Hubs (43 + `=`) keys inside their
    // connection strings; the bare value is any base64 string.
    Detector {
        pattern: r"(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{86}==|[A-Za-z0-9+/]{43}=)(?:[^A-Za-z0-9+/=]|$)",
        literals: &["AccountKey=", "SharedAccessKey="],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::AzureAccountKey,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?P<secret>https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_\-]{60,68})",
        literals: &["://"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::DiscordWebhook,
            confidence: 0.9,
            min_alnum_classes: 1,
        },
    },
    // A bot id, `:AA`, then 33 URL-safe characters (which may end in `-`, so no trailing `\b`).
    Detector {
        pattern: r"(?-u:\b)(?P<secret>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})(?:[^A-Za-z0-9_\-]|$)",
        literals: &[":AA"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::TelegramBotToken,
            confidence: 0.85,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?-u:\b)",
        literals: &["shpat_", "shpca_", "shppa_", "shpss_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::ShopifyToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    // `hf_` is short and common in code (`hf_model_name`), so the 34 letters must mix cases.
    Detector {
        pattern: r"(?-u:\b)(?P<secret>hf_[A-Za-z]{34})(?-u:\b)",
        literals: &["hf_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::HuggingfaceToken,
            confidence: 0.85,
            min_alnum_classes: 2,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>gsk_[A-Za-z0-9]{52})(?-u:\b)",
        literals: &["gsk_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GroqApiKey,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>GOCSPX-[A-Za-z0-9_\-]{28})",
        literals: &["GOCSPX-"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::GoogleOauthClientSecret,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>do[opr]_v1_[a-f0-9]{64})(?-u:\b)",
        literals: &["dop_v1_", "doo_v1_", "dor_v1_"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::DigitaloceanToken,
            confidence: 0.95,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        literals: &["-----BEGIN"],
        case: Case::Sensitive,
        rule: Rule::PrivateKey,
    },
    Detector {
        pattern: r"(?-u:\b)(?P<secret>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
        literals: &["eyJ"],
        case: Case::Sensitive,
        rule: Rule::Token {
            kind: SecretKind::Jwt,
            confidence: 0.85,
            min_alnum_classes: 1,
        },
    },
    Detector {
        pattern: concat!(
            r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://",
            r#"(?P<user>[^\s:/?#@"'`<>\[\]]*):(?P<secret>[^\s/?#@"'`<>]+)@"#,
            r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_~%]+)",
        ),
        literals: &["://"],
        case: Case::Sensitive,
        rule: Rule::UrlCredentials,
    },
    // The name must end right before the operator, so `token = …` matches but
    // `tokenizer_config_path = …` and `token_url = …` do not. Quoted values may carry a Python
    // string prefix (`b"…"`, `r'…'`); `Bearer`/`Basic`/`token` before the value are skipped. A
    // bare value stops at `&` so `?api_key=…&page=2` yields only the key.
    Detector {
        pattern: concat!(
            r"(?i:(?P<key>",
            secret_names!(),
            r"))",
            r#"["'`]?\]?[ \t]*(?:=>|:=|=|:)[ \t]*(?:(?i:bearer|basic|token)[ \t]+)?"#,
            r#"(?:[bBrRuUfF]{0,2}"(?P<dq>[^"\r\n]*)""#,
            r#"|[bBrRuUfF]{0,2}'(?P<sq>[^'\r\n]*)'"#,
            r"|`(?P<bq>[^`\r\n]*)`",
            r#"|(?P<bare>[^\s"'`,;()\[\]{}<>\\:=&][^\s"'`,;()\[\]{}<>\\&]*))"#,
        ),
        literals: &[
            "pass",
            "secret",
            "token",
            "api",
            "access",
            "auth",
            "credential",
            "private",
            "signing",
            "encryption",
            "master",
            "kennwort",
            "contrase",
            "senha",
            "wachtwoord",
            "senord",
            "salasana",
        ],
        case: Case::Insensitive,
        rule: Rule::Assignment,
    },
    // `curl -u user:password` / `--user user:password`: the part after the first `:` is the
    // password (curl asks for it when there is none).
    Detector {
        pattern: concat!(
            r"(?i-u:curl)(?-u:\b)[^\r\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)",
            r#"(?:"(?P<dq>[^"\r\n]*)"|'(?P<sq>[^'\r\n]*)'|(?P<bare>[^\s"'`;|&]+))"#,
        ),
        literals: &["curl"],
        case: Case::Insensitive,
        rule: Rule::CurlUser,
    },
    // `INSERT INTO t (…, client_secret, …) VALUES (…, '…', …)`: a value is judged like an
    // assignment to its column's name. The value tuples are read by hand after the header.
    Detector {
        // Unbounded classes, with the length limits checked in `scan_sql_inserts`: a counted
        // repetition of a Unicode class (`[^()]{1,2048}`) compiles to thousands of UTF-8 states,
        // which cost every review tens of milliseconds to build and search.
        pattern: r"(?i-u:insert)[ \t\r\n]+(?i-u:into)[ \t\r\n]+(?P<table>[^\s(]+)[ \t\r\n]*\((?P<columns>[^()]+)\)[ \t\r\n]*(?i-u:values)[ \t\r\n]*",
        literals: &["insert"],
        case: Case::Insensitive,
        rule: Rule::SqlInsert,
    },
];

struct Compiled {
    /// The distinct literals of every detector, case-sensitive and ASCII case-insensitive, each
    /// with the detectors it belongs to.
    sensitive: Literals,
    insensitive: Literals,
    /// One per entry of [`DETECTORS`], in the same order, each compiled on first use: compiling
    /// all of them costs more than scanning a typical diff, and most never match.
    regexes: Vec<OnceLock<Regex>>,
}

/// One automaton over distinct literals; `owners[i]` are the detectors of literal `i`.
/// Literals shorter than [`MIN_AUTOMATON_LITERAL`] are searched on their own with `memmem`: one
/// two-byte literal (`SK`) made the whole automaton's SIMD prefilter use its slowest variant.
struct Literals {
    automaton: AhoCorasick,
    owners: Vec<Vec<usize>>,
    short: Vec<(memchr::memmem::Finder<'static>, Vec<usize>)>,
}

const MIN_AUTOMATON_LITERAL: usize = 3;

impl Literals {
    fn new(case: Case) -> Literals {
        let mut literals: Vec<&'static str> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        for (idx, detector) in DETECTORS.iter().enumerate() {
            if detector.case != case {
                continue;
            }
            for literal in detector.literals {
                match literals.iter().position(|known| known == literal) {
                    Some(at) => owners[at].push(idx),
                    None => {
                        literals.push(literal);
                        owners.push(vec![idx]);
                    }
                }
            }
        }
        // Leftmost-longest keeps the prefilter (memchr/Teddy) usable; the scan below restarts
        // one byte after each hit's start, so hits that overlap are all seen. What it cannot
        // see is a literal that is a prefix of another at the same start: the table avoids
        // those (one `sk-` for every `sk-…` format, one `://` for URLs), and a test checks it.
        // The case-insensitive set is matched in lowercase against a lowercased text: an
        // ASCII-case-insensitive automaton has no prefilter and walks every byte, while a
        // case-sensitive one skips ahead with Teddy.
        let literals: Vec<String> = literals
            .iter()
            .map(|literal| match case {
                Case::Sensitive => literal.to_string(),
                Case::Insensitive => literal.to_ascii_lowercase(),
            })
            .collect();
        let (long, short): (Vec<_>, Vec<_>) = literals
            .into_iter()
            .zip(owners)
            .partition(|(literal, _)| literal.len() >= MIN_AUTOMATON_LITERAL);
        let (literals, owners): (Vec<String>, Vec<Vec<usize>>) = long.into_iter().unzip();
        let automaton = AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&literals)
            .expect("secret literals build an automaton");
        let short = short
            .into_iter()
            .map(|(literal, owners)| {
                (
                    memchr::memmem::Finder::new(literal.as_bytes()).into_owned(),
                    owners,
                )
            })
            .collect();
        Literals {
            automaton,
            owners,
            short,
        }
    }

    /// Marks in `found[i]` the detectors whose literals occur in `spans[i]` of `text`. The
    /// spans are sorted and separated by a byte no literal holds (`\n`), so no hit crosses two.
    fn mark(&self, text: &str, spans: &[Range<usize>], found: &mut [Vec<usize>]) {
        let mut hits = Hits::new(text, spans, found);
        let mut from = 0;
        while from < text.len() {
            let input = aho_corasick::Input::new(text).span(from..text.len());
            let Some(hit) = self.automaton.find(input) else {
                break;
            };
            hits.record(hit.end(), &self.owners[hit.pattern().as_usize()]);
            from = hit.start() + 1;
        }
        for (finder, owners) in &self.short {
            let mut hits = Hits::new(text, spans, hits.found);
            for start in finder.find_iter(text.as_bytes()) {
                hits.record(start + finder.needle().len(), owners);
            }
        }
    }
}

/// Hits of literals in a joined text, in order of their ends, credited to the span that holds
/// them.
struct Hits<'t, 'f> {
    text: &'t str,
    spans: &'t [Range<usize>],
    found: &'f mut [Vec<usize>],
    span_idx: usize,
    last: LastOccurrences,
}

impl<'t, 'f> Hits<'t, 'f> {
    fn new(text: &'t str, spans: &'t [Range<usize>], found: &'f mut [Vec<usize>]) -> Self {
        Hits {
            text,
            spans,
            found,
            span_idx: 0,
            last: LastOccurrences::default(),
        }
    }

    /// A literal of the detectors `owners` ended at `end`: each becomes possible for its span
    /// when the text it needs after the literal follows in that span.
    fn record(&mut self, end: usize, owners: &[usize]) {
        while self
            .spans
            .get(self.span_idx)
            .is_some_and(|span| span.end < end)
        {
            self.span_idx += 1;
            self.last = LastOccurrences::default();
        }
        let Some(span) = self.spans.get(self.span_idx) else {
            return;
        };
        for &idx in owners {
            let needs = DETECTORS[idx].rule.needs_after_literal();
            if needs.is_empty()
                || needs.iter().any(|needed| {
                    self.last
                        .starts_at(&self.text[span.clone()], needed)
                        .is_some_and(|at| span.start + at >= end)
                })
            {
                self.found[self.span_idx].push(idx);
            }
        }
    }
}

/// Where the last occurrence of each needed text starts, searched once per scanned text so that
/// many hits cost one backward search each, not a scan of the rest of the text per hit.
#[derive(Default)]
struct LastOccurrences(Vec<(&'static str, Option<usize>)>);

impl LastOccurrences {
    fn starts_at(&mut self, text: &str, needed: &'static str) -> Option<usize> {
        if let Some(&(_, at)) = self.0.iter().find(|(known, _)| *known == needed) {
            return at;
        }
        let at = text.rfind(needed);
        self.0.push((needed, at));
        at
    }
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    // The literals are constants covered by this module's tests: a failure here is a bug in this
    // file, never a reaction to input.
    Compiled {
        sensitive: Literals::new(Case::Sensitive),
        insensitive: Literals::new(Case::Insensitive),
        regexes: DETECTORS.iter().map(|_| OnceLock::new()).collect(),
    }
});

impl Compiled {
    /// Indexes of the detectors whose literals occur in `text`, sorted.
    #[cfg(test)]
    fn possible_detectors(&self, text: &str) -> Vec<usize> {
        self.possible_detectors_each(&[text])
            .pop()
            .unwrap_or_default()
    }

    /// For each of `texts`, the indexes of the detectors whose literals occur in it, sorted.
    fn possible_detectors_each(&self, texts: &[&str]) -> Vec<Vec<usize>> {
        let mut found = vec![Vec::new(); texts.len()];
        let mut joined = String::with_capacity(texts.iter().map(|t| t.len() + 1).sum());
        let mut spans = Vec::with_capacity(texts.len());
        for text in texts {
            let start = joined.len();
            joined.push_str(text);
            spans.push(start..joined.len());
            joined.push('\n');
        }
        self.sensitive.mark(&joined, &spans, &mut found);
        // Same length, same offsets: ASCII lowercasing changes no byte count.
        joined.make_ascii_lowercase();
        self.insensitive.mark(&joined, &spans, &mut found);
        for possible in &mut found {
            possible.sort_unstable();
            possible.dedup();
        }
        found
    }
}

/// Longest value the assignment detector judges; longer quoted strings are prose or data blobs,
/// and private keys have their own detector.
const MAX_ASSIGNED_CHARS: usize = 512;

/// Thresholds for a value assigned to a secret-like name. Random base62/base64 tokens of 16+
/// characters measure 3.7–4.5 bits/char, while words, slugs and identifiers stay below ~3.5.
const GENERIC_MIN_CHARS: usize = 16;
const GENERIC_MIN_ENTROPY: f64 = 3.5;

/// Hex caps entropy at 4 bits/char and a random 16-character hex string measures only ~3.3, so
/// hex gets its own, lower bar.
const HEX_MIN_ENTROPY: f64 = 3.0;

/// Passwords are shorter than tokens; a password-like name plus a value mixing three character
/// classes (`Tr0ub4dor&3`) is enough.
const PASSWORD_MIN_CHARS: usize = 8;
const PASSWORD_MIN_CLASSES: usize = 3;
const PASSWORD_MIN_ENTROPY: f64 = 2.5;

fn scan_tokens(
    regex: &Regex,
    text: &str,
    kind: SecretKind,
    confidence: f64,
    min_alnum_classes: usize,
    out: &mut Vec<SecretMatch>,
) {
    for caps in regex.captures_iter(text) {
        let Some(value) = caps.name("secret") else {
            continue;
        };
        // A published example (AWS's `…EXAMPLE` key) is found, masked and reported as one.
        if (is_placeholder(value.as_str()) && known_example(kind, value.as_str(), text).is_none())
            || CharClasses::of(value.as_str()).n_alnum() < min_alnum_classes
        {
            continue;
        }
        out.push(SecretMatch {
            kind,
            range: value.range(),
            confidence,
        });
    }
}

fn scan_aws_secret_keys(regex: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    for caps in regex.captures_iter(text) {
        let Some(value) = caps.name("secret") else {
            continue;
        };
        let candidate = value.as_str();
        if (is_placeholder(candidate)
            && known_example(SecretKind::AwsSecretAccessKey, candidate, text).is_none())
            || CharClasses::of(candidate).n_alnum() < 2
            || shannon_entropy(candidate) < HEX_MIN_ENTROPY
        {
            continue;
        }
        out.push(SecretMatch {
            kind: SecretKind::AwsSecretAccessKey,
            range: value.range(),
            confidence: 0.85,
        });
    }
}

fn scan_private_keys(header: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    const FOOTER: &str = "-----END";
    /// An 8192-bit RSA key in PEM is ~6.5 KB and armoured PGP keys can be a few times that; a
    /// footer further away belongs to something else.
    const MAX_BLOCK_BYTES: usize = 64 * 1024;

    // The first footer at or after the last place looked, so that a text full of headers without
    // footers is searched once, not once per header. `None` means not looked yet; `Some(None)`
    // means there is no footer after that point.
    let mut next_footer: Option<Option<usize>> = None;
    let mut search_from = 0;
    while let Some(found) = header.find_at(text, search_from) {
        let header_end = found.end();
        let footer = match next_footer {
            Some(Some(pos)) if pos >= header_end => Some(pos),
            Some(None) => None,
            _ => {
                let pos = text
                    .get(header_end..)
                    .and_then(|rest| rest.find(FOOTER))
                    .map(|offset| header_end + offset);
                next_footer = Some(pos);
                pos
            }
        };
        let block_end = footer
            .filter(|&pos| pos.saturating_sub(header_end) <= MAX_BLOCK_BYTES)
            .map(|pos| footer_end(text, pos + FOOTER.len()));
        let (range, confidence) = match block_end {
            Some(end) => (found.start()..end, 0.99),
            // A header alone (one line of a diff, a truncated paste) still means a key is
            // being added.
            None => (found.range(), 0.9),
        };
        search_from = range.end;
        out.push(SecretMatch {
            kind: SecretKind::PrivateKey,
            range,
            confidence,
        });
    }
}

/// End of a footer whose `-----END` ends at `after_end`: past the closing dashes that follow
/// its label, or right after `-----END` if they are missing.
fn footer_end(text: &str, after_end: usize) -> usize {
    const MAX_LABEL_BYTES: usize = 64;
    let rest = text.as_bytes().get(after_end..).unwrap_or_default();
    let window = rest.get(..MAX_LABEL_BYTES + 5).unwrap_or(rest);
    window
        .windows(5)
        .position(|bytes| bytes == b"-----")
        .map_or(after_end, |offset| after_end + offset + 5)
}

fn scan_url_credentials(regex: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    const MIN_PASSWORD_CHARS: usize = 3;
    for caps in regex.captures_iter(text) {
        let (Some(user), Some(password), Some(host)) =
            (caps.name("user"), caps.name("secret"), caps.name("host"))
        else {
            continue;
        };
        let password_text = password.as_str();
        let host_text = host.as_str().to_ascii_lowercase();
        // `postgres:postgres@`, `user:pass@` and `{user}:{password}@` are local defaults and
        // templates, not leaked credentials. A real-looking password on a documentation host
        // (example.com) is found, masked and reported as a published example.
        if password_text.chars().count() < MIN_PASSWORD_CHARS
            || password_text == user.as_str()
            || is_placeholder(password_text)
            || is_indirection(password_text)
            || (host_text.contains("example") && !is_documentation_host(&host_text))
        {
            continue;
        }
        let local = host_text == "localhost"
            || host_text.starts_with("127.")
            || host_text == "0.0.0.0"
            || host_text == "[::1]";
        out.push(SecretMatch {
            kind: SecretKind::UrlCredentials,
            range: password.range(),
            confidence: if local { 0.6 } else { 0.8 },
        });
    }
}

fn scan_assignments(regex: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    for caps in regex.captures_iter(text) {
        let Some(key) = caps.name("key") else {
            continue;
        };
        let quoted = caps
            .name("dq")
            .or_else(|| caps.name("sq"))
            .or_else(|| caps.name("bq"));
        let (value, is_quoted) = match (quoted, caps.name("bare")) {
            (Some(value), _) => (value, true),
            (None, Some(value)) => (value, false),
            (None, None) => continue,
        };
        let next = text.get(value.end()..).and_then(|rest| rest.chars().next());
        if let Some((kind, confidence)) =
            judge_assignment(key.as_str(), value.as_str(), is_quoted, next)
        {
            out.push(SecretMatch {
                kind,
                range: value.range(),
                confidence,
            });
        }
    }
}

fn scan_curl_users(regex: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    const MIN_PASSWORD_CHARS: usize = 6;
    for caps in regex.captures_iter(text) {
        let Some(credentials) = caps
            .name("dq")
            .or_else(|| caps.name("sq"))
            .or_else(|| caps.name("bare"))
        else {
            continue;
        };
        let Some((user, password)) = credentials.as_str().split_once(':') else {
            continue;
        };
        if password.chars().count() < MIN_PASSWORD_CHARS
            || password == user
            || password.chars().any(char::is_whitespace)
            || is_placeholder(password)
            || is_indirection(password)
            || CharClasses::of(password).n_all() < 2
        {
            continue;
        }
        let start = credentials.start() + user.len() + 1;
        out.push(SecretMatch {
            kind: SecretKind::Password,
            range: start..credentials.end(),
            confidence: 0.6,
        });
    }
}

/// Longest stretch after an `INSERT … VALUES` header that its value tuples are read from, so a
/// text of many headers is still scanned in linear time.
const MAX_SQL_VALUES_BYTES: usize = 64 * 1024;

fn scan_sql_inserts(regex: &Regex, text: &str, out: &mut Vec<SecretMatch>) {
    static SECRET_COLUMN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(r"(?i:", secret_names!(), r")$")).expect("column pattern compiles")
    });
    const MAX_TABLE_BYTES: usize = 128;
    const MAX_COLUMNS_BYTES: usize = 2048;
    let mut from = 0;
    while let Some(caps) = regex.captures_at(text, from) {
        let (Some(header), Some(table), Some(columns)) =
            (caps.get(0), caps.name("table"), caps.name("columns"))
        else {
            break;
        };
        if table.len() > MAX_TABLE_BYTES || columns.len() > MAX_COLUMNS_BYTES {
            from = header.end();
            continue;
        }
        // Which columns are secret-like, and the name part that says so.
        let names: Vec<Option<&str>> = columns
            .as_str()
            .split(',')
            .map(|column| {
                let column = column.trim().trim_matches(['`', '"', '[', ']']);
                SECRET_COLUMN.find(column).map(|m| m.as_str())
            })
            .collect();
        let end = header
            .end()
            .saturating_add(MAX_SQL_VALUES_BYTES)
            .min(text.len());
        let end = (end..=text.len())
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(text.len());
        let values = SqlValues::new(text, header.end(), end);
        let mut read_to = header.end();
        for (column_idx, range, is_quoted) in values {
            read_to = range.end;
            let (Some(Some(name)), Some(value)) = (names.get(column_idx), text.get(range.clone()))
            else {
                continue;
            };
            if let Some((kind, confidence)) = judge_assignment(name, value, is_quoted, None) {
                out.push(SecretMatch {
                    kind,
                    range,
                    confidence,
                });
            }
        }
        from = read_to.max(header.end()).max(from + 1);
        while from < text.len() && !text.is_char_boundary(from) {
            from += 1;
        }
        if from >= text.len() {
            break;
        }
    }
}

/// The values of `(…), (…)` tuples starting at `start`: column index, byte range of the value
/// (inside its quotes when quoted) and whether it was quoted. Stops at the first thing that is
/// not a tuple, or at `end`.
struct SqlValues<'t> {
    bytes: &'t [u8],
    at: usize,
    end: usize,
    column_idx: usize,
    in_tuple: bool,
    done: bool,
}

impl<'t> SqlValues<'t> {
    fn new(text: &'t str, start: usize, end: usize) -> SqlValues<'t> {
        SqlValues {
            bytes: text.as_bytes(),
            at: start,
            end,
            column_idx: 0,
            in_tuple: false,
            done: false,
        }
    }

    fn skip_whitespace(&mut self) {
        while self.at < self.end && self.bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        (self.at < self.end).then(|| self.bytes[self.at])
    }
}

impl Iterator for SqlValues<'_> {
    type Item = (usize, Range<usize>, bool);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.skip_whitespace();
        if !self.in_tuple {
            if self.peek() != Some(b'(') {
                self.done = true;
                return None;
            }
            self.at += 1;
            self.in_tuple = true;
            self.column_idx = 0;
            self.skip_whitespace();
        }
        let column_idx = self.column_idx;
        let (range, is_quoted) = if self.peek() == Some(b'\'') {
            // A quoted string; `''` is an escaped quote inside it.
            let start = self.at + 1;
            let mut pos = start;
            loop {
                if pos >= self.end {
                    self.done = true;
                    return None;
                }
                if self.bytes[pos] == b'\'' {
                    if self.bytes.get(pos + 1) == Some(&b'\'') && pos + 1 < self.end {
                        pos += 2;
                        continue;
                    }
                    break;
                }
                pos += 1;
            }
            self.at = pos + 1;
            (start..pos, true)
        } else {
            let start = self.at;
            while self.at < self.end && !matches!(self.bytes[self.at], b',' | b')' | b'(' | b';') {
                self.at += 1;
            }
            let mut stop = self.at;
            while stop > start && self.bytes[stop - 1].is_ascii_whitespace() {
                stop -= 1;
            }
            (start..stop, false)
        };
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                self.column_idx += 1;
            }
            Some(b')') => {
                self.at += 1;
                self.in_tuple = false;
                self.skip_whitespace();
                if self.peek() == Some(b',') {
                    self.at += 1;
                } else {
                    self.done = true;
                }
            }
            _ => self.done = true,
        }
        Some((column_idx, range, is_quoted))
    }
}

/// Decides whether `value`, assigned to the secret-like name `key`, is a secret.
fn judge_assignment(
    key: &str,
    value: &str,
    is_quoted: bool,
    next: Option<char>,
) -> Option<(SecretKind, f64)> {
    let n_chars = value.chars().count();
    if n_chars == 0
        || n_chars > MAX_ASSIGNED_CHARS
        || value.chars().any(char::is_whitespace)
        || is_placeholder(value)
        || is_indirection(value)
        || (!is_quoted && is_code_reference(value, next))
    {
        return None;
    }
    let classes = CharClasses::of(value);
    let entropy = shannon_entropy(value);
    let is_hex = value.chars().all(|ch| ch.is_ascii_hexdigit());
    let key = key.to_lowercase();
    let is_password = PASSWORD_NAME_PREFIXES
        .iter()
        .any(|prefix| key.starts_with(prefix));
    let kind = if is_password {
        SecretKind::Password
    } else {
        SecretKind::GenericSecret
    };

    let looks_random = n_chars >= GENERIC_MIN_CHARS
        && classes.n_alnum() >= 2
        && (entropy >= GENERIC_MIN_ENTROPY || (is_hex && entropy >= HEX_MIN_ENTROPY));
    if looks_random {
        // 0.35 at the threshold, rising with entropy, capped well below provider formats, and
        // rounded so reports and snapshots show 0.42 rather than 0.4183…
        let confidence = (0.35 + 0.1 * (entropy - GENERIC_MIN_ENTROPY)).clamp(0.35, 0.6);
        let confidence = (confidence * 100.0).round() / 100.0;
        return Some((kind, confidence));
    }
    let looks_like_password = is_password
        && n_chars >= PASSWORD_MIN_CHARS
        && classes.n_all() >= PASSWORD_MIN_CLASSES
        && entropy >= PASSWORD_MIN_ENTROPY;
    looks_like_password.then_some((SecretKind::Password, 0.45))
}

/// Keeps the most confident (then longest, then earliest) candidate wherever candidates overlap,
/// and returns the survivors sorted by start.
fn resolve_overlaps(mut candidates: Vec<SecretMatch>) -> Vec<SecretMatch> {
    candidates.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| b.range.len().cmp(&a.range.len()))
            .then_with(|| a.range.start.cmp(&b.range.start))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    // Accepted matches keyed by start. They never overlap, so the one starting last before a
    // candidate's end is the only one that can overlap it.
    let mut accepted: BTreeMap<usize, SecretMatch> = BTreeMap::new();
    for candidate in candidates {
        if candidate.range.is_empty() {
            continue;
        }
        let overlaps = accepted
            .range(..candidate.range.end)
            .next_back()
            .is_some_and(|(_, previous)| previous.range.end > candidate.range.start);
        if !overlaps {
            accepted.insert(candidate.range.start, candidate);
        }
    }
    accepted.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(COMPILED.regexes.len(), DETECTORS.len());
        // Detectors compile lazily in use; check every one here.
        for detector in DETECTORS {
            Regex::new(detector.pattern).expect(detector.pattern);
            assert!(!detector.literals.is_empty(), "{}", detector.pattern);
        }
        // No literal may be a prefix of another of the same case: leftmost-longest would report
        // only the longer at a shared start (see `Literals::new`).
        for case in [Case::Sensitive, Case::Insensitive] {
            let literals: Vec<String> = DETECTORS
                .iter()
                .filter(|detector| detector.case == case)
                .flat_map(|detector| detector.literals.iter())
                .map(|literal| match case {
                    Case::Sensitive => literal.to_string(),
                    Case::Insensitive => literal.to_ascii_lowercase(),
                })
                .collect();
            for a in &literals {
                for b in &literals {
                    assert!(
                        a == b || !b.starts_with(a.as_str()),
                        "{a} is a prefix of {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_secret_word_without_an_operator_after_it_runs_no_assignment_detector() {
        let assignment = DETECTORS
            .iter()
            .position(|d| matches!(d.rule, Rule::Assignment))
            .unwrap();
        let possible = |text: &str| COMPILED.possible_detectors(text).contains(&assignment);
        // A finding's title: `API` with nothing assigned after it.
        assert!(!possible("Public API changed in src/lib.rs"));
        assert!(
            !possible("a = 1; see the API docs"),
            "the operator must come after the name"
        );
        assert!(possible("api_key = abc"));
        assert!(possible("\"token\": \"abc\""));
    }

    #[test]
    fn overlaps_keep_the_most_confident() {
        let candidate = |kind, range, confidence| SecretMatch {
            kind,
            range,
            confidence,
        };
        let resolved = resolve_overlaps(vec![
            candidate(SecretKind::GenericSecret, 0..10, 0.4),
            candidate(SecretKind::GithubToken, 2..10, 0.95),
            candidate(SecretKind::Jwt, 9..12, 0.5),
            candidate(SecretKind::Password, 12..14, 0.4),
            candidate(SecretKind::Password, 20..20, 0.4),
        ]);
        let kinds: Vec<_> = resolved.iter().map(|m| (m.kind, m.range.clone())).collect();
        assert_eq!(
            kinds,
            vec![
                (SecretKind::GithubToken, 2..10),
                (SecretKind::Password, 12..14)
            ]
        );
    }

    #[test]
    fn footer_end_finds_closing_dashes() {
        let text = "-----END RSA PRIVATE KEY-----\nnext";
        assert_eq!(footer_end(text, 8), text.find('\n').unwrap_or(0));
        // Missing dashes: the footer ends right after `-----END`.
        assert_eq!(footer_end("-----END", 8), 8);
        assert_eq!(footer_end("-----END", 100), 100);
    }

    #[test]
    fn password_thresholds() {
        assert_eq!(
            judge_assignment("password", "Tr0ub4dor&3", true, None),
            Some((SecretKind::Password, 0.45))
        );
        assert_eq!(judge_assignment("password", "hunter22", true, None), None);
        assert_eq!(judge_assignment("token", "Tr0ub4dor&3", true, None), None);
    }
}
