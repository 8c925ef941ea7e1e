//! Review learnings from the command line: `tollgate learn dismiss` keeps a finding out of the
//! gate while its code is unchanged; editing the line brings it back, marked returning.

use crate::util::{TestRepo, tollgate};

const KEY_LINE: &str = "AWS_ACCESS_KEY_ID = \"AKIAQWERTYUIOPASDFGH\"\n";

fn review(repo: &TestRepo) -> crate::util::Run {
    tollgate(&["review", "--working-tree", "--format", "json"])
        .current_dir(repo.path())
        .run()
}

#[test]
fn a_dismissed_finding_stays_out_of_the_gate_until_its_line_changes() {
    let repo = TestRepo::new();
    repo.write("settings.py", "DEBUG = False\n");
    repo.commit("base");
    repo.write("settings.py", &format!("DEBUG = False\n{KEY_LINE}"));

    let first = review(&repo);
    first.assert_code(1);
    let json = first.json();
    let secret = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .expect("the key is found")
        .clone();
    // The report lives outside the repository, so it is not part of the reviewed change.
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("tollgate.json");
    std::fs::write(&report, &first.stdout).unwrap();
    let report = report.to_str().unwrap();

    // No reason: refused, nothing written.
    tollgate(&[
        "learn",
        "dismiss",
        secret["id"].as_str().unwrap(),
        "--report",
        report,
    ])
    .current_dir(repo.path())
    .run()
    .assert_code(2);
    assert!(!repo.path().join(".review-learnings.jsonl").exists());
    tollgate(&[
        "learn",
        "dismiss",
        secret["id"].as_str().unwrap(),
        "--report",
        report,
        "--reason",
        "documented test key",
        "--by",
        "alice",
    ])
    .current_dir(repo.path())
    .run()
    .assert_code(0);

    let second = review(&repo);
    second.assert_code(0);
    let json = second.json();
    assert!(
        !json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "TG008"),
        "{json:#}"
    );
    assert_eq!(json["dismissed"][0]["fingerprint"], secret["fingerprint"]);
    assert_eq!(json["dismissed"][0]["learning"]["by"], "alice");
    assert_eq!(json["stats"]["findings_dismissed"], 1);

    let listed = tollgate(&["learn", "list", "--disposition", "dismissed"])
        .current_dir(repo.path())
        .run();
    listed.assert_code(0);
    assert_eq!(listed.json()["total"], 1);

    // The key on that line changes: the finding is back, marked returning.
    repo.write(
        "settings.py",
        "DEBUG = False\nAWS_ACCESS_KEY_ID = \"AKIAPOIUYTREWQLKJHGF\"\n",
    );
    let third = review(&repo);
    third.assert_code(1);
    let json = third.json();
    let back = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .expect("back in the gate");
    assert_eq!(back["learning"]["status"], "returning", "{json:#}");

    // A broken ledger is an error naming the file and line, not an empty ledger.
    let ledger = repo.path().join(".review-learnings.jsonl");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, format!("{text}{{oops\n")).unwrap();
    let broken = review(&repo);
    broken.assert_code(2);
    assert!(
        broken.stderr.contains(".review-learnings.jsonl line 2"),
        "{}",
        broken.stderr
    );
}

/// Issue 28: in a CI container `$USER` is often unset; the decision is then signed with git's
/// `user.name` (else `user.email`), and with neither it is refused, saying what to pass.
#[test]
fn without_user_the_decider_comes_from_git_config_or_the_command_refuses() {
    let repo = TestRepo::new();
    repo.write("settings.py", "DEBUG = False\n");
    repo.commit("base");
    repo.write("settings.py", &format!("DEBUG = False\n{KEY_LINE}"));
    let first = review(&repo);
    let secret_id = first.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .expect("the key is found")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("tollgate.json");
    std::fs::write(&report, &first.stdout).unwrap();
    // No global or system identity either.
    let home = tempfile::tempdir().unwrap();
    let dismiss = || {
        tollgate(&[
            "learn",
            "dismiss",
            &secret_id,
            "--report",
            report.to_str().unwrap(),
            "--reason",
            "test key",
        ])
        .current_dir(repo.path())
        .env_remove("USER")
        .env("HOME", home.path().to_str().unwrap())
        .env("XDG_CONFIG_HOME", home.path().to_str().unwrap())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .run()
    };
    let refused = dismiss();
    refused.assert_code(2);
    assert!(refused.stderr.contains("--by"), "{}", refused.stderr);
    assert!(!repo.path().join(".review-learnings.jsonl").exists());

    let config = repo.path().join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[user]\n\temail = ci@example.org\n");
    std::fs::write(&config, &text).unwrap();
    dismiss().assert_code(0);
    text.push_str("[user]\n\tname = Repo Author\n");
    std::fs::write(&config, &text).unwrap();
    dismiss().assert_code(0);
    let ledger = std::fs::read_to_string(repo.path().join(".review-learnings.jsonl")).unwrap();
    let by: Vec<String> = ledger
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["by"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(by, ["ci@example.org", "Repo Author"], "{ledger}");
}

/// A repository with one TG008 finding and its JSON report (outside the repository).
fn repo_with_a_finding() -> (TestRepo, tempfile::TempDir, String, String) {
    let repo = TestRepo::new();
    repo.write("settings.py", "DEBUG = False\n");
    repo.commit("base");
    repo.write("settings.py", &format!("DEBUG = False\n{KEY_LINE}"));
    let first = review(&repo);
    first.assert_code(1);
    let json = first.json();
    let id = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .expect("the key is found")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("tollgate.json");
    std::fs::write(&report, &first.stdout).unwrap();
    let report = report.to_str().unwrap().to_string();
    (repo, out, id, report)
}

#[test]
fn parallel_dismiss_processes_each_leave_their_record() {
    let (repo, _out, id, report) = repo_with_a_finding();
    const PROCESSES: usize = 8;
    const ROUNDS: usize = 5;
    let mut successes = 0;
    let root = repo.path().to_path_buf();
    for round in 0..ROUNDS {
        let runs: Vec<crate::util::Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..PROCESSES)
                .map(|n| {
                    let (root, id, report) = (&root, &id, &report);
                    scope.spawn(move || {
                        let reason = format!("reason {round}-{n}");
                        tollgate(&[
                            "learn", "dismiss", id, "--report", report, "--reason", &reason,
                        ])
                        .current_dir(root)
                        .run()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for run in &runs {
            run.assert_code(0);
            successes += 1;
        }
    }
    let ledger = std::fs::read_to_string(repo.path().join(".review-learnings.jsonl")).unwrap();
    let reasons: std::collections::BTreeSet<String> = ledger
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["reason"].to_string())
        .collect();
    assert_eq!(
        ledger.lines().count(),
        successes,
        "every success is a record"
    );
    assert_eq!(reasons.len(), PROCESSES * ROUNDS);
}

#[test]
fn a_dismissal_writes_no_secret_or_control_character_into_the_ledger() {
    let (repo, _out, id, report) = repo_with_a_finding();
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
    let reason = format!("ok \u{1b}[2J see {token}\r\nline two");
    let by = format!("bob\u{7}{token}");
    tollgate(&[
        "learn", "dismiss", &id, "--report", &report, "--reason", &reason, "--by", &by,
    ])
    .current_dir(repo.path())
    .run()
    .assert_code(0);
    let ledger = std::fs::read_to_string(repo.path().join(".review-learnings.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    for field in ["reason", "by"] {
        let text = record[field].as_str().unwrap();
        assert!(!text.contains(&token), "{field} keeps the token: {text:?}");
        assert!(
            !text.chars().any(char::is_control),
            "{field} keeps a control character: {text:?}"
        );
    }
    assert!(record["reason"].as_str().unwrap().contains("line two"));
}
