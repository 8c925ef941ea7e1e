//! `tollgate plan execute` end to end against the loopback model server: no model, preview,
//! apply and continue, a blocked step.

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
