//! `tollgate replay` on a real repository: each commit against its parent, with the gate files
//! of that parent (never the commit's own), resumable, and no secret in what it prints.

use crate::util::{TestRepo, tollgate};

/// A GitHub token shape, assembled at run time so this file holds none.
fn fake_token() -> String {
    format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap())
}

#[test]
fn replay_reviews_each_commit_with_its_bases_configuration_and_resumes() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn a() {}\n");
    repo.commit("initial import");
    repo.write(
        "src/keys.rs",
        &format!("const TOKEN: &str = \"{}\";\n", fake_token()),
    );
    let secret_commit = repo.commit("add the deploy token");
    // A commit's own tollgate.toml does not judge it: TG001 still fires on its source change.
    repo.write(
        "tollgate.toml",
        "[rules.TG001]\nenabled = false\n\n[analyzers]\nimport_sarif = [\"lint.sarif\"]\n",
    );
    // A SARIF import names a file of the working tree, not of the commit: replay leaves it out
    // (were it read, the file, gone from the working tree below, would make the commit an error).
    std::fs::write(
        repo.path().join("lint.sarif"),
        r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"lint"}},"results":[{"ruleId":"x","level":"error","message":{"text":"bad"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/more.rs"},"region":{"startLine":1}}}]}]}]}"#,
    )
    .unwrap();
    repo.write("src/more.rs", "fn more() {}\n");
    let config_commit = repo.commit("turn off TG001, add more");
    std::fs::remove_file(repo.path().join("lint.sarif")).ok();
    // The next commit is judged by it: no TG001.
    repo.write("src/next.rs", "fn next() {}\n");
    repo.write("tollgate.toml", "[review]\nmax_findngs = 3\n");
    let quiet_commit = repo.commit("add next, a typo in the configuration");
    // And the typo breaks the commit after it.
    repo.write("src/last.rs", "fn last() {}\n");
    let broken_commit = repo.commit("add last");

    let path = repo.path().to_str().unwrap();
    let run = tollgate(&[
        "replay",
        "--repo",
        path,
        "-n",
        "10",
        "--commits",
        "--json",
        "-j",
        "2",
    ])
    .run();
    run.assert_code(0);
    assert!(
        !run.stdout.contains(&fake_token()),
        "the secret leaked: {}",
        run.stdout
    );
    let report = run.json();
    let summary = &report["summary"];
    assert_eq!(report["selection"], "commits");
    assert_eq!(summary["commits_reviewed"], 3, "{summary}");
    assert_eq!(summary["commits_with_errors"], 1, "{summary}");
    assert_eq!(summary["commits_resumed"], 0);

    let commits = report["commits"].as_array().unwrap();
    let shas: Vec<&str> = commits.iter().map(|c| c["sha"].as_str().unwrap()).collect();
    assert_eq!(
        shas,
        vec![
            &broken_commit,
            &quiet_commit,
            &config_commit,
            &secret_commit
        ],
        "newest first, no root"
    );
    let error = commits[0]["error"].as_str().unwrap();
    assert!(error.contains("max_findngs"), "{error}");
    let rules_of = |commit: &serde_json::Value| -> Vec<String> {
        commit["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !rules_of(&commits[1]).contains(&"TG001".to_string()),
        "the base's tollgate.toml turned TG001 off: {}",
        commits[1]
    );
    assert!(
        rules_of(&commits[2]).contains(&"TG001".to_string()),
        "a commit's own tollgate.toml does not judge it: {}",
        commits[2]
    );
    assert!(rules_of(&commits[3]).contains(&"TG008".to_string()));
    assert_eq!(commits[3]["should_fail"], true);
    let failures = summary["gate_failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["sha"], secret_commit.as_str());

    // A second run takes every result from the state file.
    assert!(repo.path().join(".tollgate/replay/results.jsonl").is_file());
    let again = tollgate(&["replay", "--repo", path, "-n", "10", "--commits", "--json"]).run();
    again.assert_code(0);
    let again = again.json();
    assert_eq!(again["summary"]["commits_resumed"], 4);
    assert_eq!(
        again["summary"]["gate_failures"],
        report["summary"]["gate_failures"]
    );

    // The human summary names the failure and the rules.
    let human = tollgate(&["replay", "--repo", path, "-n", "10", "--commits"]).run();
    human.assert_code(0);
    assert!(
        human.stdout.contains("Gate: 1 of 3 would have failed"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("TG008"), "{}", human.stdout);
}

/// Each commit adds a token together with a file that would loosen its own gate: a nested
/// `tollgate.toml` disabling TG008, a ledger dismissal, a root override. Judged by its base's
/// gate files, every one fails.
#[test]
fn a_commit_cannot_loosen_its_own_gate() {
    let repo = TestRepo::new();
    repo.write("README.md", "x\n");
    repo.commit("initial import");
    let token = |dir: &str| {
        repo.write(
            &format!("{dir}/keys.rs"),
            &format!("const TOKEN: &str = \"{}\";\n", fake_token()),
        );
    };
    token("src");
    repo.write("src/tollgate.toml", "[rules.TG008]\nenabled = false\n");
    let nested = repo.commit("a token and a nested tollgate.toml that disables TG008");
    token("lib");
    repo.write(
        ".review-learnings.jsonl",
        r#"{"fingerprint":"","rule_id":"TG008","path":"lib","scope":"lib/**","disposition":"dismissed","reason":"fixture","by":"mallory","at":"2026-01-01T00:00:00Z"}
"#,
    );
    let ledger = repo.commit("a token and a ledger dismissal of it");
    token("app");
    repo.write(
        "tollgate.toml",
        "[[overrides]]\npaths = [\"app/**\"]\ndisable = [\"TG008\"]\n",
    );
    let root_override = repo.commit("a token and a root override that disables TG008");

    let run = tollgate(&[
        "replay",
        "--repo",
        repo.path().to_str().unwrap(),
        "-n",
        "3",
        "--commits",
        "--json",
        "--fresh",
    ])
    .run();
    run.assert_code(0);
    let report = run.json();
    let failed: Vec<&str> = report["summary"]["gate_failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha"].as_str().unwrap())
        .collect();
    for (what, sha) in [
        ("nested tollgate.toml", &nested),
        ("ledger dismissal", &ledger),
        ("root override", &root_override),
    ] {
        assert!(
            failed.contains(&sha.as_str()),
            "the commit with a {what} passed its own gate: {:#}",
            report["commits"]
        );
    }
}
