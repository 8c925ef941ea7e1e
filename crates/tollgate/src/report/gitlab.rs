//! GitLab Code Quality: a JSON array of Code Climate issues, published with
//! `artifacts:reports:codequality` and shown in merge request widgets and diffs.
//!
//! GitLab compares the `fingerprint`s of the merge request's report with the target branch's to
//! tell new issues from fixed ones, and collapses issues that share one. So the fingerprint is the
//! finding's own (stable across runs), and when two issues would share one (a result holding
//! duplicates, or findings without a fingerprint) the later one is salted and rehashed until it
//! is unique, as ruff's GitLab renderer does. Findings are visited in display order, so the salts
//! are the same on every run.

use std::collections::HashSet;
use std::io;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Format, ReportError, finding_text, sorted_findings};
use crate::findings::{Finding, ReviewResult, Severity};

pub(super) fn render(result: &ReviewResult, out: &mut dyn io::Write) -> Result<(), ReportError> {
    let mut seen = HashSet::new();
    let issues: Vec<Issue> = sorted_findings(result)
        .into_iter()
        .map(|finding| {
            let start = finding.location.start_line.max(1);
            Issue {
                description: finding_text(finding),
                check_name: finding.rule_id.clone(),
                fingerprint: unique_fingerprint(finding, &mut seen),
                severity: severity(finding.severity),
                location: IssueLocation {
                    path: finding.location.file.replace('\\', "/"),
                    lines: Lines {
                        begin: start,
                        end: finding.location.end_line.max(start),
                    },
                },
            }
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &issues).map_err(ReportError::json(Format::Gitlab))?;
    out.write_all(b"\n")
        .map_err(ReportError::io(Format::Gitlab))
}

/// The severity table of this format: GitLab's five levels, one for each of ours.
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "blocker",
        Severity::High => "critical",
        Severity::Medium => "major",
        Severity::Low => "minor",
        Severity::Info => "info",
    }
}

#[derive(Serialize)]
struct Issue {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: IssueLocation,
}

#[derive(Serialize)]
struct IssueLocation {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
    end: u32,
}

/// The finding's fingerprint, or a salted hash of it (and of its rule and position) when that
/// is empty or already taken.
fn unique_fingerprint(finding: &Finding, seen: &mut HashSet<String>) -> String {
    let own = finding.fingerprint.trim();
    if !own.is_empty() && seen.insert(own.to_string()) {
        return own.to_string();
    }
    let location = &finding.location;
    let mut salt: u64 = 0;
    loop {
        let mut hasher = Sha256::new();
        for part in [
            own,
            finding.rule_id.as_str(),
            location.file.as_str(),
            &location.start_line.to_string(),
            &salt.to_string(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        let candidate: String = hasher
            .finalize()
            .iter()
            .take(16)
            .map(|byte| format!("{byte:02x}"))
            .collect();
        if seen.insert(candidate.clone()) {
            return candidate;
        }
        salt = salt.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::report::testutil::{render_to_string, sample_result};

    #[test]
    fn renders_the_sample_result() {
        insta::assert_snapshot!(render_to_string(Format::Gitlab, &sample_result()));
    }

    #[test]
    fn fingerprints_are_unique_and_stable() {
        let mut result = sample_result();
        // Duplicates and a finding without a fingerprint.
        let duplicate = result.findings[0].clone();
        result.findings.push(duplicate.clone());
        result.findings.push(duplicate);
        let mut blank = result.findings[1].clone();
        blank.fingerprint = String::new();
        result.findings.push(blank);

        let text = render_to_string(Format::Gitlab, &result);
        let issues: Value = serde_json::from_str(&text).unwrap();
        let fingerprints: Vec<&str> = issues
            .as_array()
            .unwrap()
            .iter()
            .map(|issue| issue["fingerprint"].as_str().unwrap())
            .collect();
        assert_eq!(fingerprints.len(), result.findings.len());
        let unique: HashSet<&&str> = fingerprints.iter().collect();
        assert_eq!(unique.len(), fingerprints.len(), "{fingerprints:?}");
        // The first occurrence keeps the finding's own fingerprint.
        assert!(fingerprints.contains(&result.findings[0].fingerprint.as_str()));
        // The same result always gets the same salts.
        assert_eq!(text, render_to_string(Format::Gitlab, &result));
    }

    #[test]
    fn severities_and_lines() {
        let issues: Value =
            serde_json::from_str(&render_to_string(Format::Gitlab, &sample_result())).unwrap();
        let issue = |rule: &str| {
            issues
                .as_array()
                .unwrap()
                .iter()
                .find(|issue| issue["check_name"] == rule)
                .unwrap()
                .clone()
        };
        assert_eq!(issue("TG001")["severity"], "blocker");
        assert_eq!(issue("TG005")["severity"], "info");
        assert_eq!(
            issue("no-unwrap-in-handlers")["location"],
            serde_json::json!({"path": "src/api/handlers v2/user handler.rs", "lines": {"begin": 4, "end": 6}})
        );
    }
}
