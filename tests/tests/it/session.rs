//! `tollgate session …`: a pull request reviewed as a stored session, steered from other
//! processes, surviving the death of the process that ran it.

use serde_json::Value;
use tollgate::api::session::{ChangedFilesArg, ReactiveReviewPrRequest, reactive_review_pr};
use tollgate::session::{self, SessionSettings};
use tollgate::session::{Lease, StepUsage};
use tollgate::store::Store;

use crate::util::{TestRepo, tollgate};

/// `main` with three files; branch `feature` changes them and adds a secret and public API.
fn pr() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn a() {}\n")
        .write("src/b.rs", "fn b() {}\n")
        .write("README.md", "# r\n");
    repo.commit("base");
    repo.branch("feature");
    let token = format!("ghp_{}", "Zx9Q".repeat(9));
    repo.write("src/a.rs", "fn a() {}\npub fn exported() {}\n")
        .write(
            "src/b.rs",
            &format!("fn b() {{}}\nconst KEY: &str = \"{token}\";\n"),
        )
        .write("src/c.rs", "fn c() {}\n")
        .write("README.md", "# r\nmore\n");
    repo.commit("feature");
    repo
}

fn repo_arg(repo: &TestRepo) -> String {
    repo.path().display().to_string()
}

#[test]
fn start_runs_a_session_to_completion_and_the_other_commands_read_it() {
    let repo = pr();
    let dir = repo_arg(&repo);
    let run = tollgate(&[
        "session", "start", "--repo", &dir, "--base", "main", "--head", "feature",
    ])
    .run();
    // The secret fails the gate, so the command fails like `review` does (exit 1), which is
    // what a CI job wired to it relies on.
    run.assert_code(1);
    let status = run.json();
    assert_eq!(status["status"], "completed", "{status}");
    // One whole-PR step plus the four files in one group.
    assert_eq!(status["progress"]["total"], 2);
    // The secret (CRITICAL) and the public API the PR adds (INFO: additive).
    assert_eq!(status["findings"]["by_severity"]["CRITICAL"], 1, "{status}");
    // The secret fails the gate: the status states the verdict.
    assert_eq!(status["gate"]["verdict"], "failed", "{status}");
    assert!(
        status["findings"]["by_severity"]["INFO"].as_u64().unwrap() >= 1,
        "{status}"
    );
    assert!(
        !run.stdout.contains("Zx9QZx9Q"),
        "the secret never reaches the output"
    );
    let id = status["session_id"].as_str().unwrap().to_string();

    let listed = tollgate(&["session", "status", &id, "--repo", &dir, "--findings"]).run();
    listed.assert_code(0);
    let findings = listed.json()["finding_list"].as_array().unwrap().clone();
    let secret = findings
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .expect("the secret is found");
    assert_eq!(secret["location"]["file"], "src/b.rs");
    assert_eq!(secret["location"]["start_line"], 2);

    let telemetry = tollgate(&["session", "telemetry", &id, "--repo", &dir]).run();
    telemetry.assert_code(0);
    assert_eq!(telemetry.json()["totals"]["steps_completed"], 2);

    let refused = tollgate(&["session", "pause", &id, "--repo", &dir]).run();
    refused.assert_code(2);
    assert!(refused.stderr.contains("completed"), "{}", refused.stderr);
    let missing = tollgate(&["session", "status", "rs_0_nope", "--repo", &dir]).run();
    missing.assert_code(2);
    assert!(
        missing.stderr.contains("No review session"),
        "{}",
        missing.stderr
    );
}

#[test]
fn start_exits_0_when_the_sessions_gate_passes() {
    let repo = pr();
    let dir = repo_arg(&repo);
    let run = tollgate(&[
        "session",
        "start",
        "--repo",
        &dir,
        "--base",
        "main",
        "--head",
        "feature",
        "--files",
        "README.md",
    ])
    .run();
    run.assert_code(0);
    let status = run.json();
    assert_eq!(status["status"], "completed", "{status}");
    assert_eq!(status["gate"]["verdict"], "passed", "{status}");
}

/// The pid of a process that has exited (and been reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_session_whose_process_died_is_marked_and_resume_runs_only_the_unfinished_steps() {
    let repo = pr();
    let dir = repo_arg(&repo);
    let store = Store::open_in_workspace(repo.path()).unwrap();
    let settings = SessionSettings {
        step_limits: session::StepLimits {
            max_files: 1,
            max_lines: 400,
        },
        ..SessionSettings::default()
    };
    let created = reactive_review_pr(
        &store,
        repo.path(),
        &ReactiveReviewPrRequest {
            commit_hash: "feature".into(),
            base_ref: "main".into(),
            changed_files: ChangedFilesArg::Text("src/a.rs,src/b.rs,src/c.rs".into()),
            ..ReactiveReviewPrRequest::default()
        },
        &settings,
    )
    .unwrap();
    assert_eq!(created.total_steps, 4);
    let id = created.session_id;

    // What a process leaves when it dies after finishing step 0 and starting step 1: its
    // lease (a pid that no longer exists, on this boot) and a step marked running.
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|b| b.trim().to_string());
    let lease = Lease {
        token: "dead-process".into(),
        pid: dead_pid(),
        boot: boot.clone(),
    };
    let now = time_ms();
    store
        .transact(|tx| tx.session_claim(&id, &lease, now, &|_| false))
        .unwrap();
    assert!(
        store
            .transact(|tx| tx.session_step_begin(&id, 0, "dead-process", 0, now))
            .unwrap()
    );
    store
        .transact(|tx| {
            tx.session_step_complete(
                &id,
                0,
                "dead-process",
                7.5,
                StepUsage::default(),
                &[],
                &[],
                now,
            )
        })
        .unwrap();
    assert!(
        store
            .transact(|tx| tx.session_step_begin(&id, 1, "dead-process", 1, now))
            .unwrap()
    );
    drop(store);

    if boot.is_some() {
        let status = tollgate(&["session", "status", &id, "--repo", &dir]).run();
        status.assert_code(0);
        let status = status.json();
        assert_eq!(status["status"], "paused", "{status}");
        assert!(
            status["reason"].as_str().unwrap().contains("stopped"),
            "{status}"
        );
    }
    // Without a boot id (not Linux) the lease expires instead; resume takes over either way
    // once the owner is known dead, which on Linux is now.
    let resumed = tollgate(&["session", "resume", &id, "--repo", &dir]).run();
    // The PR's secret fails the gate: a foreground resume exits like `review`.
    resumed.assert_code(1);
    assert_eq!(resumed.json()["status"], "completed");

    let telemetry = tollgate(&["session", "telemetry", &id, "--repo", &dir]).run();
    let telemetry = telemetry.json();
    let steps = telemetry["steps"].as_array().unwrap();
    // Step 0 kept the dead process's result; the others ran once each.
    assert_eq!(steps[0]["duration_ms"], 7.5);
    assert!(
        steps
            .iter()
            .all(|s| s["attempts"] == 1 && s["state"] == "completed"),
        "{telemetry}"
    );
    let findings: Vec<Value> = tollgate(&["session", "status", &id, "--repo", &dir, "--findings"])
        .run()
        .json()["finding_list"]
        .as_array()
        .unwrap()
        .clone();
    assert!(findings.iter().any(|f| f["rule_id"] == "TG008"));
}

#[test]
fn a_detached_session_is_paused_and_cancelled_from_other_processes() {
    let repo = pr();
    let dir = repo_arg(&repo);
    let started = tollgate(&[
        "session",
        "start",
        "--repo",
        &dir,
        "--base",
        "main",
        "--head",
        "feature",
        "--files",
        "src/a.rs,src/b.rs",
        "--detach",
    ])
    .run();
    started.assert_code(0);
    // What the README shows: the id alone, so `id=$(tollgate session start … --detach)` works.
    let id = started.stdout.trim().to_string();
    assert!(
        !id.is_empty() && !id.contains(char::is_whitespace) && !id.contains('{'),
        "{}",
        started.stdout
    );
    // The background process runs it; wait for it to end (nextest bounds a hang).
    let status = loop {
        let status = tollgate(&["session", "status", &id, "--repo", &dir])
            .run()
            .json();
        if !["queued", "running"].contains(&status["status"].as_str().unwrap()) {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status["status"], "completed", "{status}");
    // An ended session cannot be cancelled or resumed in the background either.
    let cancel = tollgate(&["session", "cancel", &id, "--repo", &dir]).run();
    cancel.assert_code(2);
    let resume = tollgate(&["session", "resume", &id, "--repo", &dir, "--detach"]).run();
    resume.assert_code(2);
    assert!(resume.stderr.contains("completed"), "{}", resume.stderr);
}

#[test]
fn a_detached_start_prints_the_creation_json_with_json() {
    let repo = pr();
    let dir = repo_arg(&repo);
    let started = tollgate(&[
        "session", "start", "--repo", &dir, "--base", "main", "--head", "feature", "--files",
        "src/a.rs", "--detach", "--json",
    ])
    .run();
    started.assert_code(0);
    let created = started.json();
    let id = created["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        created["total_steps"].as_u64().map(|n| n > 0),
        Some(true),
        "{created}"
    );
    // Let the background run end before the repository goes away.
    while ["queued", "running"].contains(
        &tollgate(&["session", "status", &id, "--repo", &dir])
            .run()
            .json()["status"]
            .as_str()
            .unwrap(),
    ) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Without --detach the final status is JSON already: --json asks for nothing else.
    let refused = tollgate(&[
        "session", "start", "--repo", &dir, "--base", "main", "--json",
    ])
    .run();
    refused.assert_code(2);
}

fn time_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
