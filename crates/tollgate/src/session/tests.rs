use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use git2::{Repository, Signature};

use super::executor::{StepExecutor, StepReport};
use super::runner::drive_with;
use super::*;
use crate::api::session::{ChangedFilesArg, ReactiveReviewPrRequest};
use crate::config::RawConfig;
use crate::session::record::{NewSession, NewStep, StepRecord, StepUsage};
use crate::store::Store;

fn fast() -> SessionSettings {
    SessionSettings {
        retry_base_delay: Duration::from_millis(1),
        retry_max_delay: Duration::from_millis(4),
        heartbeat: Duration::from_millis(10),
        poll: Duration::from_millis(2),
        ..SessionSettings::default()
    }
}

fn commit(repo: &Repository, files: &[(&str, &str)]) -> String {
    let workdir = repo.workdir().unwrap();
    for (path, content) in files {
        let full = workdir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, content).unwrap();
    }
    let mut index = repo.index().unwrap();
    for (path, _) in files {
        index.add_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = Signature::now("Test", "test@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &signature, &signature, "c", &tree, &parents)
        .unwrap()
        .to_string()
}

/// A repository whose `main` has a few files and whose HEAD commit changes five of them, one
/// with a GitHub token and one with new public API.
fn pr_repo() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let base = commit(
        &repo,
        &[
            ("src/a.rs", "fn a() {}\n"),
            ("src/b.rs", "fn b() {}\n"),
            ("src/c.rs", "fn c() {}\n"),
            ("docs/d.md", "# d\n"),
        ],
    );
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let head = commit(
        &repo,
        &[
            ("src/a.rs", "fn a() {}\nfn a2() { let x = 1; }\n"),
            ("src/b.rs", "fn b() {}\npub fn api() {}\n"),
            (
                "src/c.rs",
                &format!("fn c() {{}}\nconst T: &str = \"{token}\";\n"),
            ),
            ("docs/d.md", "# d\nmore\n"),
            ("src/e.rs", "fn e() {}\n"),
        ],
    );
    (dir, base, head)
}

fn config() -> crate::config::ReviewConfig {
    RawConfig::default().resolve().unwrap()
}

/// `reactive_review_pr` as the front ends call it: the request validated, then the session made.
fn create(
    store: &Store,
    workspace: &Path,
    request: &ReactiveReviewPrRequest,
    settings: &SessionSettings,
) -> Result<ReactiveReviewPrResponse, SessionError> {
    let pull_request = crate::api::session::validate(request, settings)?;
    super::create(store, workspace, pull_request, settings)
}

fn request(base: &str, head: &str, files: &str) -> ReactiveReviewPrRequest {
    ReactiveReviewPrRequest {
        commit_hash: head.into(),
        base_ref: base.into(),
        changed_files: ChangedFilesArg::Text(files.into()),
        max_workers: Some(2),
        ..ReactiveReviewPrRequest::default()
    }
}

crate::backend_tests! {
fn a_session_reviews_the_pr_in_steps_with_the_real_pipeline(store) {
    let (dir, base, head) = pr_repo();
    let settings = SessionSettings {
        step_limits: StepLimits {
            max_files: 2,
            max_lines: 400,
        },
        ..fast()
    };
    let created = create(
        &store,
        dir.path(),
        &request(
            &base,
            &head,
            "src/a.rs,src/b.rs,src/c.rs,docs/d.md,src/e.rs,src/zzz.rs",
        ),
        &settings,
    )
    .unwrap();
    assert_eq!(created.status, SessionState::Queued);
    // One whole-PR step plus five files in groups of at most two.
    assert_eq!(created.total_steps, 1 + 3);
    assert_eq!(created.head_sha, head);
    assert!(
        created.warnings[0].contains("src/zzz.rs"),
        "{:?}",
        created.warnings
    );

    let claimed = claim(&store, &created.session_id, &settings).unwrap();
    let events = Mutex::new(Vec::new());
    let done = drive(
        &store,
        dir.path(),
        &config(),
        claimed,
        &settings,
        &|event| events.lock().unwrap().push(event.clone()),
    )
    .unwrap();
    assert_eq!(done.status, SessionState::Completed, "{:?}", done.reason);
    assert_eq!((done.progress.completed, done.progress.total), (4, 4));
    assert_eq!(done.progress.percentage, 100.0);
    assert_eq!(events.lock().unwrap().len(), 4);

    let full = status(&store, &created.session_id, true, &settings).unwrap();
    let findings = full.finding_list.unwrap();
    let rules: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f.rule_id.as_str(), f.location.file.as_str()))
        .collect();
    assert!(rules.contains(&("TG008", "src/c.rs")), "{rules:?}");
    assert!(rules.contains(&("TG002", "src/b.rs")), "{rules:?}");
    // The whole-PR rule runs once, on the whole PR.
    assert_eq!(
        rules.iter().filter(|(r, _)| *r == "TG001").count(),
        1,
        "{rules:?}"
    );
    let secret = findings.iter().find(|f| f.rule_id == "TG008").unwrap();
    assert_eq!(secret.location.start_line, 2);
    assert!(!serde_json::to_string(secret).unwrap().contains("a1B2a1B2"));
    assert_eq!(full.findings.total, findings.len());
    let high_or_worse: usize = ["CRITICAL", "HIGH"]
        .iter()
        .map(|s| full.findings.by_severity[*s])
        .sum();
    // The secret; the public API the PR adds is a notice (INFO), not a defect.
    assert!(high_or_worse >= 1, "{:?}", full.findings.by_severity);
    // The secret fails the gate, and the status says so, naming it.
    assert_eq!(full.gate.verdict, crate::session::GateState::Failed);
    assert!(
        full.gate.reasons.iter().any(|r| r.contains("TG008")),
        "{:?}",
        full.gate.reasons
    );

    let telemetry = telemetry(&store, &created.session_id, &settings).unwrap();
    assert_eq!(telemetry.totals.steps_completed, 4);
    assert_eq!(telemetry.totals.failed_attempts, 0);
    assert!(telemetry.steps.iter().all(|s| s.duration_ms.is_some()));
    assert!(telemetry.worker_utilisation > 0.0 && telemetry.worker_utilisation <= 1.0);
    assert_eq!(telemetry.steps[0].kind, "pr");

    // Ended: no way back.
    let err = resume(&store, &created.session_id, &settings).unwrap_err();
    assert_eq!(err.code(), "INVALID_STATE_TRANSITION");
    assert!(err.to_string().contains("completed"), "{err}");
}
}

crate::backend_tests! {
fn bad_refs_and_files_outside_the_diff_are_clear_errors(store) {
    let (dir, base, head) = pr_repo();
    let err = create(
        &store,
        dir.path(),
        &request(&base, "nope", "src/a.rs"),
        &fast(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("nope"), "{err}");
    let err = create(&store, dir.path(), &request(&base, &head, "x.rs"), &fast()).unwrap_err();
    assert_eq!(err.field(), Some("changed_files"));
    assert!(store.snapshot(|tx| tx.sessions()).unwrap().is_empty());
}
}

/// A session stored directly, with `n` one-file steps.
fn stored_session(store: &Store, id: &str, n: usize, workers: u32, attempts: u32) {
    store
        .transact(|tx| {
            tx.session_insert(&NewSession {
                id: id.into(),
                commit_hash: "h".into(),
                base_ref: "b".into(),
                base_sha: "b".into(),
                head_sha: "h".into(),
                title: None,
                author: None,
                additions: None,
                deletions: None,
                changed_files: (0..n).map(|i| format!("f{i}")).collect(),
                max_workers: workers,
                max_attempts: attempts,
                warnings: vec![],
                steps: (0..n)
                    .map(|i| NewStep {
                        kind: "files".into(),
                        files: vec![format!("f{i}")],
                        changed_lines: 10,
                    })
                    .collect(),
                now: now_ms(),
            })
        })
        .unwrap();
}

/// Counts runs per step; fails each step's first `fail_first` attempts.
struct Scripted {
    runs: Mutex<BTreeMap<u32, u32>>,
    fail_first: u32,
    /// While set, steps wait (to hold them "running").
    hold: AtomicBool,
}

impl Scripted {
    fn new(fail_first: u32) -> Scripted {
        Scripted {
            runs: Mutex::new(BTreeMap::new()),
            fail_first,
            hold: AtomicBool::new(false),
        }
    }

    fn runs(&self) -> BTreeMap<u32, u32> {
        self.runs.lock().unwrap().clone()
    }
}

impl StepExecutor for Scripted {
    fn run(&self, step: &StepRecord) -> Result<StepReport, String> {
        let n = {
            let mut runs = self.runs.lock().unwrap();
            let n = runs.entry(step.idx).or_default();
            *n += 1;
            *n
        };
        while self.hold.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        if n <= self.fail_first {
            return Err(format!("transient failure {n}"));
        }
        Ok(StepReport {
            findings: Vec::new(),
            usage: StepUsage::default(),
            gate_reasons: Vec::new(),
        })
    }
}

crate::backend_tests! {
fn failed_steps_retry_with_backoff_then_succeed(store) {
    stored_session(&store, "s", 3, 2, 3);
    let executor = Scripted::new(2);
    let claimed = claim(&store, "s", &fast()).unwrap();
    let end = drive_with(&store, &claimed, &executor, &fast(), &|_| {}).unwrap();
    assert_eq!(end, SessionState::Completed);
    assert!(executor.runs().values().all(|n| *n == 3));
    let telemetry = telemetry(&store, "s", &fast()).unwrap();
    assert_eq!(telemetry.totals.failed_attempts, 6);
    assert!(telemetry.steps.iter().all(|s| s.attempts == 3));
}
}

crate::backend_tests! {
fn a_step_that_keeps_failing_fails_the_session_with_its_reason(store) {
    stored_session(&store, "s", 2, 1, 2);
    let executor = Scripted::new(u32::MAX);
    let claimed = claim(&store, "s", &fast()).unwrap();
    let end = drive_with(&store, &claimed, &executor, &fast(), &|_| {}).unwrap();
    assert_eq!(end, SessionState::Failed);
    let status = status(&store, "s", false, &fast()).unwrap();
    let reason = status.reason.unwrap();
    assert!(reason.contains("failed after 2 attempt(s)"), "{reason}");
    assert!(reason.contains("transient failure 2"), "{reason}");
    // The failing step ran exactly its allowed attempts.
    assert_eq!(executor.runs()[&0], 2);
    assert_eq!(status.worker, None, "the lease is released");
}
}

crate::backend_tests! {
fn pause_lets_running_steps_finish_and_resume_runs_only_the_rest(store) {
    stored_session(&store, "s", 4, 2, 3);
    let executor = Scripted::new(0);
    executor.hold.store(true, Ordering::SeqCst);
    let settings = fast();
    let claimed = claim(&store, "s", &settings).unwrap();
    std::thread::scope(|scope| {
        let runner = scope.spawn(|| drive_with(&store, &claimed, &executor, &settings, &|_| {}));
        // Wait until both workers hold a step, then pause (as another process would).
        while executor.runs().len() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let paused = pause(&store, "s").unwrap();
        assert_eq!(paused.status, SessionState::Paused);
        let err = pause(&store, "s").unwrap_err();
        assert!(err.to_string().contains("paused already"), "{err}");
        executor.hold.store(false, Ordering::SeqCst);
        assert_eq!(runner.join().unwrap().unwrap(), SessionState::Paused);
    });
    let status_now = status(&store, "s", false, &settings).unwrap();
    assert_eq!(status_now.progress.completed, 2, "running steps finished");
    assert_eq!(executor.runs().len(), 2, "no new step started");

    let Resumed::Claimed(claimed) = resume(&store, "s", &settings).unwrap() else {
        panic!("nobody else runs it");
    };
    let end = drive_with(&store, &claimed, &executor, &settings, &|_| {}).unwrap();
    assert_eq!(end, SessionState::Completed);
    assert!(
        executor.runs().values().all(|n| *n == 1),
        "{:?}",
        executor.runs()
    );
}
}

crate::backend_tests! {
fn a_dead_worker_is_detected_and_its_unfinished_steps_rerun_on_resume(store) {
    stored_session(&store, "s", 3, 1, 3);
    let settings = SessionSettings {
        lease: Duration::from_millis(50),
        ..fast()
    };
    // A "process" that finished step 0, started step 1 and died.
    let claimed = claim(&store, "s", &settings).unwrap();
    let token = claimed.lease_token().to_string();
    assert!(
        store
            .transact(|tx| tx.session_step_begin("s", 0, &token, 0, now_ms()))
            .unwrap()
    );
    store
        .transact(|tx| {
            tx.session_step_complete(
                "s",
                0,
                &token,
                1.0,
                StepUsage::default(),
                &[],
                &[],
                now_ms(),
            )
        })
        .unwrap();
    assert!(
        store
            .transact(|tx| tx.session_step_begin("s", 1, &token, 0, now_ms()))
            .unwrap()
    );
    drop(claimed);
    let before = status(&store, "s", false, &settings).unwrap();
    assert_eq!(before.status, SessionState::Running);
    std::thread::sleep(Duration::from_millis(80));
    let after = status(&store, "s", false, &settings).unwrap();
    assert_eq!(after.status, SessionState::Paused);
    assert!(after.reason.unwrap().contains("stopped"));

    let executor = Scripted::new(0);
    let Resumed::Claimed(claimed) = resume(&store, "s", &settings).unwrap() else {
        panic!("the dead owner cannot carry on");
    };
    assert_eq!(
        drive_with(&store, &claimed, &executor, &settings, &|_| {}).unwrap(),
        SessionState::Completed
    );
    assert_eq!(executor.runs().keys().copied().collect::<Vec<_>>(), [1, 2]);
}
}

crate::backend_tests! {
fn transitions_are_checked_and_ended_sessions_expire(store) {
    stored_session(&store, "s", 1, 1, 1);
    let settings = fast();
    assert_eq!(
        resume(&store, "s", &settings).unwrap_err().code(),
        "INVALID_STATE_TRANSITION"
    );
    assert_eq!(cancel(&store, "s").unwrap().status, SessionState::Cancelled);
    for err in [
        cancel(&store, "s").unwrap_err(),
        pause(&store, "s").unwrap_err(),
        resume(&store, "s", &settings).unwrap_err(),
    ] {
        assert_eq!(err.code(), "INVALID_STATE_TRANSITION");
        assert!(err.to_string().contains("cancelled"), "{err}");
    }
    assert_eq!(
        claim(&store, "s", &settings).unwrap_err().code(),
        "INVALID_STATE_TRANSITION"
    );
    assert_eq!(
        pause(&store, "nope").unwrap_err().code(),
        "SESSION_NOT_FOUND"
    );
    // Findings and the session stay until the retention time has passed.
    assert!(status(&store, "s", false, &settings).is_ok());
    let expire_now = SessionSettings {
        retention: Duration::ZERO,
        ..fast()
    };
    std::thread::sleep(Duration::from_millis(2));
    assert_eq!(
        status(&store, "s", false, &expire_now).unwrap_err().code(),
        "SESSION_NOT_FOUND"
    );
}
}

crate::backend_tests! {
fn sessions_are_independent(store) {
    let (dir, base, head) = pr_repo();
    let repo = Repository::open(dir.path()).unwrap();
    // A second PR on top of the first, touching another file.
    let other = commit(&repo, &[("src/only_here.rs", "pub fn x() {}\n")]);
    let settings = fast();
    let first = create(
        &store,
        dir.path(),
        &request(&base, &head, "src/a.rs"),
        &settings,
    )
    .unwrap();
    let second = create(
        &store,
        dir.path(),
        &request(&head, &other, "src/only_here.rs"),
        &settings,
    )
    .unwrap();
    for id in [&second.session_id, &first.session_id] {
        let claimed = claim(&store, id, &settings).unwrap();
        drive(&store, dir.path(), &config(), claimed, &settings, &|_| {}).unwrap();
    }
    let files = |id: &str| -> Vec<String> {
        status(&store, id, true, &settings)
            .unwrap()
            .finding_list
            .unwrap()
            .into_iter()
            .map(|f| f.location.file)
            .collect()
    };
    assert!(files(&first.session_id).iter().all(|f| f == "src/a.rs"));
    assert!(
        files(&second.session_id)
            .iter()
            .all(|f| f == "src/only_here.rs")
    );
    assert!(!files(&second.session_id).is_empty());
}
}

crate::backend_tests! {
fn model_usage_of_each_step_reaches_the_telemetry(store) {
    use crate::llm::tests::fake_llm::{FakeLlm, Reply};

    let server = FakeLlm::start();
    server.respond_with(|_| Reply::json(serde_json::json!({"findings": []})).usage(1000, 200));
    let config = RawConfig::from_toml(
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\n\
             retry_backoff_ms = 1\nenable_llm = true\nllm_force = true\ncache = false\n\
             input_price_per_mtok = 3.0\noutput_price_per_mtok = 15.0\n",
            server.openai_base_url()
        ),
        "t",
    )
    .unwrap()
    .resolve()
    .unwrap();
    let (dir, base, head) = pr_repo();
    let settings = fast();
    let created = create(
        &store,
        dir.path(),
        &request(&base, &head, "src/a.rs,src/b.rs"),
        &settings,
    )
    .unwrap();
    let claimed = claim(&store, &created.session_id, &settings).unwrap();
    let done = drive(&store, dir.path(), &config, claimed, &settings, &|_| {}).unwrap();
    assert_eq!(done.status, SessionState::Completed, "{:?}", done.reason);

    let telemetry = telemetry(&store, &created.session_id, &settings).unwrap();
    let requests = server.requests().len() as u64;
    assert!(requests > 0, "the model passes ran");
    // Every request answered 1000 in / 200 out; the steps' sums are the server's count.
    assert_eq!(telemetry.totals.input_tokens, requests * 1000);
    assert_eq!(telemetry.totals.output_tokens, requests * 200);
    let expected_cost = requests as f64 * (1000.0 * 3.0 + 200.0 * 15.0) / 1e6;
    assert!(
        (telemetry.totals.cost_usd - expected_cost).abs() < 1e-9,
        "{} vs {expected_cost}",
        telemetry.totals.cost_usd
    );
    let per_step: u64 = telemetry.steps.iter().map(|s| s.input_tokens).sum();
    assert_eq!(per_step, telemetry.totals.input_tokens);
}
}
