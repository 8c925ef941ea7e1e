//! Precision and recall of secret detection on the corpus in `tests/fixtures/secrets/`: known
//! secrets of every detected kind and look-alikes that are not secrets (environment lookups,
//! placeholders, hashes, public keys, prefixes in code).
//!
//! Measured per line as the gate reports: a secret line counts as found when a match of its kind
//! is on it; a look-alike line with any match that is not a published example (see
//! [`known_example`]: those are reported at LOW, as examples) is a false positive.

use std::path::Path;

use crate::secrets::{SecretMatch, find_secrets, known_example};

/// The matches the gate reports as real secrets: published examples set apart.
fn reported_as_real(text: &str) -> Vec<SecretMatch> {
    find_secrets(text)
        .into_iter()
        .filter(|m| {
            m.value(text)
                .is_none_or(|value| known_example(m.kind, value, text).is_none())
        })
        .collect()
}

struct Expanded {
    secret_kind: Option<String>,
    text: String,
}

fn corpus() -> Vec<Expanded> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/secrets/corpus.txt");
    let source = std::fs::read_to_string(&path).expect("the corpus file exists");
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    for line in source
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (head, template) = line
            .split_once(" | ")
            .expect("`S kind | text` or `N | text`");
        let secret_kind = head.strip_prefix("S ").map(|k| k.trim().to_string());
        let mut text = String::new();
        let mut rest = template;
        while let Some(start) = rest.find("{{") {
            text.push_str(&rest[..start]);
            let Some(end) = rest[start..].find("}}") else {
                break;
            };
            let inner = &rest[start + 2..start + end];
            let alphabet: Option<&[u8]> = match inner.split_once(':').map(|(k, _)| k) {
                Some("alnum") => {
                    Some(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                }
                Some("upper") => Some(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
                Some("alpha") => Some(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
                Some("hex") => Some(b"0123456789abcdef"),
                Some("b64") => {
                    Some(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                }
                _ => None,
            };
            let count = inner
                .split_once(':')
                .and_then(|(_, n)| n.parse::<usize>().ok());
            match (alphabet, count) {
                (Some(alphabet), Some(count)) => {
                    for _ in 0..count {
                        text.push(alphabet[(next() % alphabet.len() as u64) as usize] as char);
                    }
                }
                // `{{}}` splits a provider prefix in the file; anything else is literal text.
                _ if inner.is_empty() => {}
                _ => text.push_str(&rest[start..start + end + 2]),
            }
            rest = &rest[start + end + 2..];
        }
        text.push_str(rest);
        out.push(Expanded { secret_kind, text });
    }
    out
}

#[test]
fn detection_precision_and_recall_on_the_corpus() {
    let corpus = corpus();
    let (mut true_positives, mut false_negatives, mut false_positives, mut true_negatives) =
        (0usize, 0usize, 0usize, 0usize);
    let mut missed = Vec::new();
    let mut flagged = Vec::new();
    for line in &corpus {
        let found = reported_as_real(&line.text);
        match &line.secret_kind {
            Some(kind) => {
                if found.iter().any(|m| m.kind.as_str() == kind) {
                    true_positives += 1;
                } else {
                    false_negatives += 1;
                    let kinds: Vec<&str> = found.iter().map(|m| m.kind.as_str()).collect();
                    missed.push(format!("{kind} (found {kinds:?})"));
                }
            }
            None if found.is_empty() => true_negatives += 1,
            None => {
                false_positives += 1;
                flagged.push(line.text.clone());
            }
        }
    }
    let precision = true_positives as f64 / (true_positives + false_positives).max(1) as f64;
    let recall = true_positives as f64 / (true_positives + false_negatives).max(1) as f64;
    let report = format!(
        "precision {precision:.3}, recall {recall:.3} (TP {true_positives}, FN {false_negatives}, FP {false_positives}, TN {true_negatives}); missed: {missed:?}; false positives: {flagged:?}"
    );
    // Printed for the benchmark note (`cargo nextest run … --no-capture`).
    #[allow(
        clippy::print_stderr,
        reason = "the measured figures are the point of this test"
    )]
    {
        eprintln!("secret corpus: {report}");
    }
    assert!(true_positives + false_negatives >= 30, "{report}");
    assert!(false_positives + true_negatives >= 30, "{report}");
    assert!(precision >= 0.95, "{report}");
    assert!(recall >= 0.9, "{report}");
}
