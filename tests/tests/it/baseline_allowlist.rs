//! Baselines and allowlists: known findings stop failing new PRs.

use crate::util::{fixture, tollgate};

#[test]
fn written_baseline_silences_known_findings_only() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let diff = fixture("diffs/secret.diff");
    let diff = diff.to_str().unwrap();

    let first = tollgate(&[
        "review",
        "--diff",
        diff,
        "--write-baseline",
        baseline.to_str().unwrap(),
        "--format",
        "json",
    ])
    .run();
    // Writing the baseline accepts the findings it records: the run exits 0 although the gate
    // failed (the secret), and says so.
    first.assert_code(0);
    assert_eq!(first.json()["should_fail"], true);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    assert_eq!(written["version"], 1);
    assert!(!written["findings"].as_array().unwrap().is_empty());

    let second = tollgate(&[
        "review",
        "--diff",
        diff,
        "--baseline",
        baseline.to_str().unwrap(),
    ])
    .run();
    second.assert_code(0);
    let json = second.json();
    assert!(json["stats"]["findings_baselined"].as_u64().unwrap() >= 1);

    // A new secret on another line is not in the baseline and fails again.
    let text = std::fs::read_to_string(diff).unwrap();
    let token = format!("ghp_{}", "Zq7Xw2Lk9Pm4Rt8Vn3Bc6Hd1Jf5Gs0Ay2Eu7");
    let extended = text.replace("@@ -1,3 +1,5 @@", "@@ -1,3 +1,6 @@")
        + &format!("+GITHUB_TOKEN = \"{token}\"\n");
    let third = tollgate(&[
        "review",
        "--diff",
        "-",
        "--baseline",
        baseline.to_str().unwrap(),
    ])
    .stdin(extended)
    .run();
    third.assert_code(1);

    // A corrupt baseline is a clear error, not an empty baseline.
    std::fs::write(&baseline, "{ not json").unwrap();
    let broken = tollgate(&[
        "review",
        "--diff",
        diff,
        "--baseline",
        baseline.to_str().unwrap(),
    ])
    .run();
    broken.assert_code(2);
    assert!(broken.stderr.contains("baseline"), "{}", broken.stderr);
}

#[test]
fn allowlist_by_rule_fingerprint_and_upstream_alias() {
    let diff = fixture("diffs/sample.diff");
    let diff = diff.to_str().unwrap();
    let run = tollgate(&["review", "--diff", diff]).run();
    let json = run.json();
    let api = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG002")
        .unwrap()
        .clone();
    let fingerprint = api["fingerprint"].as_str().unwrap();

    for entry in ["TG002", fingerprint, "PRE002"] {
        let run = tollgate(&["review", "--diff", diff, "--allowlist", entry]).run();
        let json = run.json();
        assert!(
            json["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["rule_id"] != "TG002"),
            "allowlist {entry} did not drop TG002"
        );
        assert_eq!(json["stats"]["findings_allowlisted"], 1, "{entry}");
    }
}

#[test]
fn fail_on_rule_ids_forces_failure() {
    let diff = fixture("diffs/sample.diff");
    let run = tollgate(&[
        "review",
        "--diff",
        diff.to_str().unwrap(),
        "--fail-on-rule-ids",
        "TG005",
    ])
    .run();
    run.assert_code(1);
    let reasons = run.json()["fail_reasons"].to_string();
    assert!(reasons.contains("TG005"), "{reasons}");
}
