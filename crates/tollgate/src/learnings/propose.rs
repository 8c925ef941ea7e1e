//! `tollgate learn export --invariants`: rules proposed from repeated decisions, as YAML for a
//! human to review and copy into `.review-invariants.yml`. Nothing is written.
//!
//! A rule (rule id) dismissed or accepted [`MIN_REPEATS`] times or more under one directory
//! becomes a guidance rule for that directory (the team's convention, which the model passes
//! read), and for a dismissal, a commented `tollgate.toml` override that turns the rule off
//! there deterministically. Reasons are untrusted text: they are written as escaped YAML
//! strings, never as comments or keys.

use std::collections::BTreeMap;

use crate::learnings::{Disposition, Ledger};

/// Decisions about one rule under one directory before a rule is proposed.
pub const MIN_REPEATS: usize = 3;
/// Reasons quoted per proposal.
const MAX_REASONS: usize = 3;
/// Characters kept of each quoted reason.
const MAX_REASON_CHARS: usize = 160;

/// The proposals for `ledger` as YAML (an `learned:` section), or a comment saying there are
/// none yet.
pub fn propose_invariants(ledger: &Ledger) -> String {
    // (rule, directory, disposition) -> reasons, in ledger order; the latest record per
    // fingerprint counts, once.
    let mut latest: BTreeMap<&str, usize> = BTreeMap::new();
    for (idx, record) in ledger.records().iter().enumerate() {
        latest.insert(record.fingerprint.as_str(), idx);
    }
    let mut groups: BTreeMap<(&str, String, Disposition), Vec<&str>> = BTreeMap::new();
    for (idx, record) in ledger.records().iter().enumerate() {
        if record.scope.is_some()
            || record.disposition == Disposition::Fixed
            || latest.get(record.fingerprint.as_str()) != Some(&idx)
        {
            continue;
        }
        let dir = match record.path.rsplit_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => String::new(),
        };
        groups
            .entry((record.rule_id.as_str(), dir, record.disposition))
            .or_default()
            .push(record.reason.as_str());
    }
    let mut out = String::from(
        "# Proposed by `tollgate learn export --invariants` from .review-learnings.jsonl.\n\
         # Review each rule before copying it into .review-invariants.yml; nothing was written.\n",
    );
    let mut n_proposed = 0;
    for ((rule, dir, disposition), reasons) in &groups {
        if reasons.len() < MIN_REPEATS {
            continue;
        }
        if n_proposed == 0 {
            out.push_str("learned:\n");
        }
        n_proposed += 1;
        let glob = if dir.is_empty() {
            "**".to_string()
        } else {
            format!("{dir}/**")
        };
        let place = if dir.is_empty() {
            "anywhere".to_string()
        } else {
            format!("under {dir}/")
        };
        let quoted: Vec<String> = reasons
            .iter()
            .filter(|reason| !reason.trim().is_empty())
            .take(MAX_REASONS)
            .map(|reason| {
                let flat: String = reason
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(MAX_REASON_CHARS)
                    .collect();
                format!("\"{}\"", flat.trim())
            })
            .collect();
        let why = if quoted.is_empty() {
            String::new()
        } else {
            format!(" Reasons given: {}.", quoted.join("; "))
        };
        let (text, severity) = match disposition {
            Disposition::Dismissed => (
                format!(
                    "Team convention: findings of {rule} {place} are not problems here (dismissed {} times).{why}",
                    reasons.len()
                ),
                "INFO",
            ),
            _ => (
                format!(
                    "Team convention: findings of {rule} {place} are real problems to flag (accepted {} times).{why}",
                    reasons.len()
                ),
                "MEDIUM",
            ),
        };
        if *disposition == Disposition::Dismissed {
            out.push_str(&format!(
                "  # Deterministic alternative, in tollgate.toml:\n  #   [[overrides]]\n  #   paths = [{}]\n  #   disable = [{}]\n",
                yaml_string(&glob),
                yaml_string(rule)
            ));
        }
        out.push_str(&format!(
            "  - id: {}\n    rule: {}\n    paths: [{}]\n    severity: {severity}\n    category: maintainability\n",
            yaml_string(&rule_id(rule, dir, *disposition)),
            yaml_string(&text),
            yaml_string(&glob),
        ));
    }
    if n_proposed == 0 {
        out.push_str(&format!(
            "# No rule yet: a proposal needs {MIN_REPEATS} decisions about one rule under one directory.\n"
        ));
    }
    out
}

/// `learned-<dismissed|accepted>-<rule>-<dir>`, kebab-case.
fn rule_id(rule: &str, dir: &str, disposition: Disposition) -> String {
    let mut id = format!("learned-{disposition}-");
    for c in format!("{rule}-{dir}").chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    id.trim_end_matches('-').to_string()
}

/// A YAML double-quoted scalar (JSON's escaping is valid YAML).
fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serialises")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::invariants::InvariantSet;
    use crate::learnings::Record;

    fn record(fp: &str, rule: &str, path: &str, disposition: Disposition, reason: &str) -> Record {
        Record {
            fingerprint: fp.into(),
            rule_id: rule.into(),
            path: path.into(),
            scope: None,
            disposition,
            reason: reason.into(),
            by: "a".into(),
            at: "t".into(),
            evidence: None,
        }
    }

    #[test]
    fn repeated_decisions_become_rules_that_load_and_reasons_stay_strings() {
        let mut ledger = Ledger::default();
        let hostile = "fixtures\"\n  - id: injected\n# ::error::x";
        for (idx, reason) in ["test data", hostile, "fake key"].iter().enumerate() {
            ledger.push(record(
                &format!("d{idx}"),
                "TG003",
                &format!("tests/fixtures/f{idx}.rs"),
                Disposition::Dismissed,
                reason,
            ));
        }
        for idx in 0..3 {
            ledger.push(record(
                &format!("a{idx}"),
                "llm/security",
                "src/api.rs",
                Disposition::Accepted,
                "",
            ));
        }
        // Two only, and one superseded by a later record: no proposal.
        ledger.push(record(
            "x0",
            "TG009",
            "src/x.rs",
            Disposition::Dismissed,
            "r",
        ));
        ledger.push(record(
            "x1",
            "TG009",
            "src/y.rs",
            Disposition::Dismissed,
            "r",
        ));
        ledger.push(record(
            "x2",
            "TG009",
            "src/z.rs",
            Disposition::Dismissed,
            "r",
        ));
        ledger.push(record(
            "x2",
            "TG009",
            "src/z.rs",
            Disposition::Accepted,
            "r",
        ));

        let yaml = propose_invariants(&ledger);
        let set = InvariantSet::from_yaml(Path::new("proposed.yml"), &yaml).expect(&yaml);
        let ids: Vec<&str> = set.rules().iter().map(|rule| rule.id()).collect();
        assert_eq!(
            ids,
            [
                "learned-dismissed-tg003-tests-fixtures",
                "learned-accepted-llm-security-src"
            ],
            "{yaml}"
        );
        assert!(!yaml.contains("\n  - id: injected"), "{yaml}");
        assert!(yaml.contains("disable = [\"TG003\"]"), "{yaml}");
        assert!(propose_invariants(&Ledger::default()).contains("No rule yet"));
    }
}
