//! Stable identities for findings.
//!
//! A fingerprint hashes the rule id, the path, the normalised content of the anchored line and an
//! occurrence index (the rank of this position among positions with the same rule, path and
//! content). Line numbers themselves are left out, so an edit above a finding does not change it;
//! two identical lines in one file stay distinct through the occurrence index.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::findings::Finding;
use crate::findings::redact::redact_secrets;

/// Collapses runs of whitespace and trims, so re-indentation keeps a finding's identity.
pub fn normalize_anchor(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Fills `fingerprint` and `id` of every finding, then masks every secret in its texts
/// ([`redact_secrets`]): every producer passes here, so this is where secrets are hidden. Findings
/// reported twice at the same position (by two passes, say) get the same fingerprint and can be
/// merged by [`dedupe_by_fingerprint`].
pub fn assign_identities(findings: &mut [Finding]) {
    // (rule, path, normalised anchor) -> distinct positions, ranked in line order.
    type Key = (String, String, String);
    let normalized: Vec<String> = findings
        .iter()
        .map(|f| normalize_anchor(&f.anchor_text))
        .collect();
    let mut positions: HashMap<Key, Vec<(u32, u32)>> = HashMap::new();
    for (finding, anchor) in findings.iter().zip(&normalized) {
        let key = (
            finding.rule_id.clone(),
            finding.location.file.clone(),
            anchor.clone(),
        );
        positions.entry(key).or_default().push(position_of(finding));
    }
    for list in positions.values_mut() {
        list.sort_unstable();
        list.dedup();
    }
    for (finding, anchor) in findings.iter_mut().zip(normalized) {
        let key = (
            finding.rule_id.clone(),
            finding.location.file.clone(),
            anchor,
        );
        let ranks = &positions[&key];
        let occurrence = ranks
            .binary_search(&position_of(finding))
            .expect("every position was recorded above");
        let fingerprint = compute(&key.0, &key.1, &key.2, occurrence);
        finding.id = format!("{}@{}", finding.rule_id, &fingerprint[..12]);
        finding.fingerprint = fingerprint;
        redact_secrets(finding);
    }
}

/// Keeps the first finding of each fingerprint, in order; when a later duplicate is more severe
/// or more confident, the kept one takes its severity and confidence.
pub fn dedupe_by_fingerprint(findings: Vec<Finding>) -> Vec<Finding> {
    let mut index_of: HashMap<String, usize> = HashMap::with_capacity(findings.len());
    let mut kept: Vec<Finding> = Vec::with_capacity(findings.len());
    for finding in findings {
        match index_of.get(&finding.fingerprint) {
            Some(&idx) => {
                let existing = &mut kept[idx];
                existing.severity = existing.severity.max(finding.severity);
                existing.confidence = existing.confidence.max(finding.confidence);
                let known: HashSet<String> = existing.evidence.iter().cloned().collect();
                existing
                    .evidence
                    .extend(finding.evidence.into_iter().filter(|e| !known.contains(e)));
            }
            None => {
                index_of.insert(finding.fingerprint.clone(), kept.len());
                kept.push(finding);
            }
        }
    }
    kept
}

fn position_of(finding: &Finding) -> (u32, u32) {
    (
        finding.location.start_line,
        finding.location.start_column.unwrap_or(0),
    )
}

fn compute(rule_id: &str, path: &str, anchor: &str, occurrence: usize) -> String {
    let mut hasher = Sha256::new();
    for part in [rule_id.as_bytes(), path.as_bytes(), anchor.as_bytes()] {
        hasher.update(part);
        hasher.update([0u8]);
    }
    hasher.update(occurrence.to_le_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(32);
    for byte in &digest[..16] {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Category, Location, Severity, Source};

    fn finding(rule: &str, file: &str, line: u32, anchor: &str) -> Finding {
        Finding::new(
            rule,
            Severity::High,
            Category::Security,
            Source::Invariants,
            "t",
            Location::line(file, line),
        )
        .with_anchor(anchor)
    }

    #[test]
    fn fingerprint_survives_line_shift_and_reindent() {
        let mut before = vec![finding("R1", "a.rs", 10, "let x = eval(y);")];
        let mut after = vec![finding("R1", "a.rs", 42, "    let x =  eval(y);")];
        assign_identities(&mut before);
        assign_identities(&mut after);
        assert_eq!(before[0].fingerprint, after[0].fingerprint);
        assert_eq!(before[0].fingerprint.len(), 32);
        assert!(before[0].id.starts_with("R1@"));
    }

    #[test]
    fn identical_lines_get_distinct_fingerprints_and_same_position_dedupes() {
        let mut findings = vec![
            finding("R1", "a.rs", 3, "eval(x)"),
            finding("R1", "a.rs", 9, "eval(x)"),
            finding("R1", "a.rs", 3, "eval(x)"),
            finding("R2", "a.rs", 3, "eval(x)"),
        ];
        findings[2].severity = Severity::Critical;
        assign_identities(&mut findings);
        assert_ne!(findings[0].fingerprint, findings[1].fingerprint);
        assert_eq!(findings[0].fingerprint, findings[2].fingerprint);
        assert_ne!(findings[0].fingerprint, findings[3].fingerprint);
        let kept = dedupe_by_fingerprint(findings);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[0].severity, Severity::Critical);
    }
}
