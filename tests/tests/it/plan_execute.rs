//! `tollgate plan execute` end to end against the loopback model server: no model, preview,
//! apply and continue, a blocked step; an apply killed midway and rolled back; `plan undo`.

use serde_json::json;

use crate::fake_llm::{FakeLlm, Reply};
use crate::util::{TestRepo, tollgate};

const PLAN: &str = r#"{"goal": "Grow the library", "steps": [
  {"step_number": 1, "title": "Add b", "files_to_modify": [{"path": "src/lib.rs"}]},
  {"step_number": 2, "title": "Add a module", "depends_on": [1],
   "files_to_create": [{"path": "src/extra.rs", "change_type": "create"}]}
]}"#;

fn with_model(args: &[&str], server: &FakeLlm) -> crate::util::Tollgate {
    tollgate(args)
        .env("TOLLGATE_LLM_PROVIDER", "openai")
        .env("TOLLGATE_LLM_BASE_URL", &server.openai_base_url())
        .env("TOLLGATE_LLM_MODEL", "coder-1")
        .env("TOLLGATE_LLM_API_KEY_ENV", "TEST_KEY")
        .env("TEST_KEY", "sk-test-0123456789abcdef")
        .env("TOLLGATE_LLM_RETRIES", "0")
        .env("TOLLGATE_LLM_CACHE", "false")
}

#[test]
fn execute_previews_applies_and_continues_with_the_next_ready_step() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("init");
    let dir = repo.path().to_str().unwrap();
    let plan_file = repo.path().join("plan.json");
    std::fs::write(&plan_file, PLAN).unwrap();
    let plan_file = plan_file.to_str().unwrap();

    let no_model = tollgate(&["plan", "execute", "--repo", dir, plan_file]).run();
    no_model.assert_code(2);
    assert!(
        no_model.stderr.contains("LLM_NOT_CONFIGURED"),
        "{}",
        no_model.stderr
    );

    let saved = tollgate(&["plan", "save", "--repo", dir, "--json", plan_file]).run();
    saved.assert_code(0);
    let id = saved.json()["plan"]["id"].as_str().unwrap().to_string();

    let server = FakeLlm::start();
    let modify = json!({"summary": "b added", "operations": [
        {"operation": "modify", "path": "src/lib.rs", "content": "pub fn a() {}\npub fn b() {}\n"}
    ]});
    server.push(Reply::json(modify.clone()));
    let preview = with_model(&["plan", "execute", "--repo", dir, &id], &server).run();
    preview.assert_code(0);
    assert!(
        preview.stdout.contains("+pub fn b() {}"),
        "{}",
        preview.stdout
    );
    assert!(preview.stdout.contains("Step 1: Add b (previewed)"));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );

    let blocked = with_model(
        &["plan", "execute", "--repo", dir, "--step", "2", &id],
        &server,
    )
    .run();
    blocked.assert_code(2);
    assert!(
        blocked.stderr.contains("waiting on step(s) 1"),
        "{}",
        blocked.stderr
    );

    server.push(Reply::json(modify));
    let applied = with_model(
        &["plan", "execute", "--repo", dir, "--apply", "--json", &id],
        &server,
    )
    .run();
    applied.assert_code(0);
    let response = applied.json();
    assert_eq!(response["step_results"][0]["status"], "applied");
    assert_eq!(response["next_ready_steps"], json!([2]));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/lib.rs")).unwrap(),
        "pub fn a() {}\npub fn b() {}\n"
    );

    // The next run picks up step 2; a model that keeps answering badly fails it (exit 1).
    server.push(Reply::text("not JSON"));
    server.push(Reply::text("still not JSON"));
    let failed = with_model(
        &["plan", "execute", "--repo", dir, "--apply", "--json", &id],
        &server,
    )
    .run();
    failed.assert_code(1);
    let response = failed.json();
    assert_eq!(response["step_results"][0]["step_number"], 2);
    assert_eq!(response["step_results"][0]["status"], "failed");
    let progress = tollgate(&["plan", "progress", "--repo", dir, "--json", &id]).run();
    progress.assert_code(0);
    let progress = progress.json();
    assert_eq!(progress["steps"][0]["status"], "completed");
    assert_eq!(progress["steps"][1]["status"], "failed");
}

/// Issue 15: `plan execute --apply` killed mid-step left 5–8 of 10 files written, stray
/// `*.tollgate-PID.tmp` files and the step stuck `in_progress`. Here the binary is SIGKILLed
/// after exactly five of ten writes: the sixth write's temporary file is a FIFO made in advance
/// (its name is known from the child's pid), so opening it blocks the writer until it is killed.
/// The next plan command must roll everything back; the step then runs again, and `plan undo`
/// puts the workspace back.
#[cfg(unix)]
#[test]
fn an_apply_killed_midway_is_rolled_back_by_the_next_command_and_undo_restores() {
    use std::sync::Mutex;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let repo = TestRepo::new();
    for n in [1, 2, 4, 5, 7, 9] {
        repo.write(&format!("src/f{n}.rs"), &format!("// file {n}\n"));
    }
    repo.commit("init");
    let dir = repo.path().to_str().unwrap().to_string();
    let plan = r#"{"goal": "Touch ten files", "steps": [
      {"step_number": 1, "title": "Ten changes", "files_to_modify": [{"path": "src/f1.rs"}]}
    ]}"#;
    let plan_file = repo.path().join("plan.json");
    std::fs::write(&plan_file, plan).unwrap();
    let saved = tollgate(&[
        "plan",
        "save",
        "--repo",
        &dir,
        "--json",
        plan_file.to_str().unwrap(),
    ])
    .run();
    saved.assert_code(0);
    let id = saved.json()["plan"]["id"].as_str().unwrap().to_string();
    std::fs::remove_file(&plan_file).unwrap();
    let original = workspace_files(repo.path());

    let answer = json!({"summary": "ten changes", "operations": [
        {"operation": "modify", "path": "src/f1.rs", "content": "// one\n"},
        {"operation": "modify", "path": "src/f2.rs", "content": "// two\n"},
        {"operation": "create", "path": "src/n3.rs", "content": "// three\n"},
        {"operation": "delete", "path": "src/f4.rs"},
        {"operation": "rename", "path": "src/f5.rs", "new_path": "src/r5.rs"},
        {"operation": "create", "path": "src/n6.rs", "content": "// six\n"},
        {"operation": "modify", "path": "src/f7.rs", "content": "// seven\n"},
        {"operation": "create", "path": "src/n8.rs", "content": "// eight\n"},
        {"operation": "modify", "path": "src/f9.rs", "content": "// nine\n"},
        {"operation": "create", "path": "src/n10.rs", "content": "// ten\n"}
    ]});
    let server = FakeLlm::start();
    let (pid_tx, pid_rx) = mpsc::channel::<u32>();
    let pid_rx = Mutex::new(pid_rx);
    let src = repo.path().join("src");
    let reply = answer.clone();
    server.respond_with(move |_| {
        // The sixth write goes through `src/.n6.rs.tollgate-<pid>.tmp`: make it a FIFO, so
        // the writer blocks opening it, after five writes.
        let pid = pid_rx.lock().unwrap().recv().unwrap();
        let fifo = src.join(format!(".n6.rs.tollgate-{pid}.tmp"));
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        Reply::json(reply.clone())
    });
    let mut child = with_model(
        &["plan", "execute", "--repo", &dir, "--apply", &id],
        &server,
    )
    .spawn();
    pid_tx.send(child.id()).unwrap();
    // Five writes done: the fifth is the rename. Wait for it (bounded), then kill.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !repo.path().join("src/r5.rs").exists() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the apply never reached its fifth write");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Half applied, as the issue found it.
    assert!(!repo.path().join("src/f4.rs").exists());
    assert!(!repo.path().join("src/n6.rs").exists());
    assert_eq!(temp_files(repo.path()).len(), 1);

    // The next plan command rolls the run back.
    let progress = tollgate(&["plan", "progress", "--repo", &dir, "--json", &id]).run();
    progress.assert_code(0);
    assert!(
        progress.stderr.contains("stopped before it finished"),
        "{}",
        progress.stderr
    );
    assert_eq!(workspace_files(repo.path()), original, "not rolled back");
    assert!(
        temp_files(repo.path()).is_empty(),
        "{:?}",
        temp_files(repo.path())
    );
    let report = progress.json();
    let step = &report["steps"][0];
    assert_eq!(step["status"], "ready", "{step}");
    assert!(
        step["error"].as_str().unwrap().contains("rolled back"),
        "{step}"
    );

    // The step runs again, to completion.
    server.push(Reply::json(answer));
    let applied = with_model(
        &["plan", "execute", "--repo", &dir, "--apply", "--json", &id],
        &server,
    )
    .run();
    applied.assert_code(0);
    assert_eq!(applied.json()["step_results"][0]["status"], "applied");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/n10.rs")).unwrap(),
        "// ten\n"
    );

    // `plan undo` restores the backups and reopens the step; a second undo has nothing left.
    let undone = tollgate(&["plan", "undo", "--repo", &dir, "--json", &id]).run();
    undone.assert_code(0);
    assert_eq!(
        undone.json()["files_restored"].as_array().unwrap().len(),
        11
    );
    assert_eq!(workspace_files(repo.path()), original);
    let progress = tollgate(&["plan", "progress", "--repo", &dir, "--json", &id]).run();
    assert_eq!(progress.json()["steps"][0]["status"], "ready");
    let again = tollgate(&["plan", "undo", "--repo", &dir, "--step", "1", &id]).run();
    again.assert_code(2);
    assert!(
        again.stderr.contains("no applied changes"),
        "{}",
        again.stderr
    );
}

/// `plan undo` refuses, changing nothing, when a file was edited after the step wrote it;
/// `--force` restores the backup anyway.
#[test]
fn undo_refuses_a_file_edited_since_unless_forced() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("init");
    let dir = repo.path().to_str().unwrap();
    let plan_file = repo.path().join("plan.json");
    std::fs::write(&plan_file, PLAN).unwrap();
    let saved = tollgate(&[
        "plan",
        "save",
        "--repo",
        dir,
        "--json",
        plan_file.to_str().unwrap(),
    ])
    .run();
    let id = saved.json()["plan"]["id"].as_str().unwrap().to_string();
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"summary": "b", "operations": [
        {"operation": "modify", "path": "src/lib.rs", "content": "pub fn b() {}\n"}
    ]})));
    with_model(&["plan", "execute", "--repo", dir, "--apply", &id], &server)
        .run()
        .assert_code(0);
    repo.write("src/lib.rs", "pub fn mine() {}\n");

    let refused = tollgate(&["plan", "undo", "--repo", dir, &id]).run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("src/lib.rs") && refused.stderr.contains("--force"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/lib.rs")).unwrap(),
        "pub fn mine() {}\n"
    );
    tollgate(&["plan", "undo", "--repo", dir, "--force", &id])
        .run()
        .assert_code(0);
    assert_eq!(
        std::fs::read_to_string(repo.path().join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
}

/// Every file of the worktree outside `.git` and `.tollgate`, with its content.
fn workspace_files(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == ".git" || name == ".tollgate" {
                continue;
            }
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                files.push((rel, std::fs::read(&path).unwrap()));
            } else {
                files.push((path.display().to_string(), Vec::new()));
            }
        }
    }
    files.sort();
    files
}

/// `*.tmp` files anywhere under `root` (FIFOs too), `.git` aside.
fn temp_files(root: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path.display().to_string());
            }
        }
    }
    found
}
