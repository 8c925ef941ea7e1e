//! The `plan` profile: the lifecycle tools, authoring and history, `execute_plan`.

use crate::common::*;

#[tokio::test]
async fn plan_lifecycle_tools_keep_state_in_the_workspace_store() {
    let session = connect("plan", legacy()).await;
    let plan = json!({
        "goal": "Add a cache",
        "steps": [
            {"step_number": 1, "title": "Design"},
            {"step_number": 2, "title": "Build", "depends_on": [1]},
            {"step_number": 3, "title": "Docs", "depends_on": [1]}
        ]
    });
    // Upstream passes the plan as JSON text.
    let saved = session
        .ok(
            "save_plan",
            json!({"plan": plan.to_string(), "name": "cache", "tags": ["infra"]}),
        )
        .await;
    let id = saved["plan"]["id"].as_str().unwrap().to_string();
    assert_eq!(saved["plan"]["version"], 1);
    let conflict = session
        .err("save_plan", json!({"plan": plan, "name": "cache"}))
        .await;
    assert_eq!(conflict["code"], "CONFLICT");

    let err = session
        .err("start_step", json!({"plan_id": id, "step_number": 2}))
        .await;
    assert_eq!(err["code"], "CONFLICT");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("waiting on step(s) 1"),
        "{err}"
    );
    session
        .ok("start_step", json!({"plan_id": id, "step_number": 1}))
        .await;
    let done = session
        .ok(
            "complete_step",
            json!({"plan_id": id, "step_number": 1, "notes": "designed", "files_modified": ["docs/cache.md"]}),
        )
        .await;
    assert_eq!(done["progress"]["next_ready_steps"], json!([2, 3]));
    let failed = session
        .ok(
            "fail_step",
            json!({"plan_id": id, "step_number": 3, "error": "no writer", "skip": true}),
        )
        .await;
    assert_eq!(failed["step"]["status"], "skipped");

    let approval = session
        .ok(
            "request_approval",
            json!({"plan_id": id, "step_numbers": [2]}),
        )
        .await;
    let answered = session
        .ok(
            "respond_approval",
            json!({"request_id": approval["approval"]["id"], "action": "approve", "comment": "ok"}),
        )
        .await;
    assert_eq!(answered["approval"]["status"], "approved");
    assert_eq!(answered["approval"]["responded_by"], "mcp");

    let progress = session.ok("view_progress", json!({"plan_id": id})).await;
    assert_eq!(progress["percentage"], 66.7);
    let history = session.ok("view_history", json!({"plan_id": id})).await;
    assert_eq!(history["versions"][0]["author"], "mcp");
    let listed = session.ok("list_plans", json!({"tags": ["infra"]})).await;
    assert_eq!(listed["plans"][0]["status"], "executing");
    let loaded = session.ok("load_plan", json!({"name": "cache"})).await;
    assert_eq!(loaded["plan"]["steps"][0]["blocks"], json!([2, 3]));
    // The store is the workspace's, where the CLI finds it too.
    assert!(session.path().join(".tollgate/tollgate.db").is_file());
    let missing = session
        .err("view_progress", json!({"plan_id": "plan_nope"}))
        .await;
    assert_eq!(missing["code"], "PLAN_NOT_FOUND");
}

#[tokio::test]
async fn execute_plan_previews_applies_and_continues_with_the_configured_model() {
    let without_model = connect("plan", legacy()).await;
    let err = without_model
        .err(
            "execute_plan",
            json!({"plan": {"goal": "g", "steps": [{"step_number": 1, "title": "a"}]}}),
        )
        .await;
    assert_code(&err, "LLM_NOT_CONFIGURED");

    let llm = fake_llm::FakeLlm::start();
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    let env = [
        ("TOLLGATE_LLM_PROVIDER", "openai".to_string()),
        ("TOLLGATE_LLM_BASE_URL", llm.openai_base_url()),
        ("TOLLGATE_LLM_MODEL", "coder-1".to_string()),
        ("TOLLGATE_LLM_API_KEY_ENV", "TEST_KEY".to_string()),
        ("TEST_KEY", "sk-test-0123456789abcdef".to_string()),
        ("TOLLGATE_LLM_RETRIES", "0".to_string()),
        ("TOLLGATE_LLM_CACHE", "false".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let session = connect_with_env(dir, "plan", legacy(), env).await;
    let plan = json!({"goal": "Grow", "steps": [
        {"step_number": 1, "title": "Add b", "files_to_modify": [{"path": "src/lib.rs"}]},
        {"step_number": 2, "title": "Add c", "depends_on": [1]}
    ]});
    let saved = session.ok("save_plan", json!({"plan": plan})).await;
    let id = saved["plan"]["id"].as_str().unwrap().to_string();
    let change = json!({"summary": "b added", "operations": [
        {"operation": "modify", "path": "src/lib.rs", "content": "pub fn a() {}\npub fn b() {}\n"}
    ]});
    llm.push(fake_llm::Reply::json(change.clone()));
    // Upstream passes the plan id where the plan goes.
    let preview = session.ok("execute_plan", json!({"plan": id})).await;
    assert_eq!(preview["step_results"][0]["status"], "previewed");
    assert!(
        preview["step_results"][0]["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+pub fn b() {}")
    );
    assert_eq!(
        std::fs::read_to_string(session.path().join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );

    let blocked = session
        .err("execute_plan", json!({"plan_id": id, "step_number": 2}))
        .await;
    assert_code(&blocked, "CONFLICT");
    assert!(
        blocked["message"]
            .as_str()
            .unwrap()
            .contains("waiting on step(s) 1"),
        "{blocked}"
    );

    llm.push(fake_llm::Reply::json(change));
    let applied = session
        .ok(
            "execute_plan",
            json!({"plan_id": id, "apply_changes": true}),
        )
        .await;
    assert_eq!(applied["step_results"][0]["status"], "applied");
    assert_eq!(applied["files_applied"], json!(["src/lib.rs"]));
    assert_eq!(applied["next_ready_steps"], json!([2]));
    assert_eq!(
        std::fs::read_to_string(session.path().join("src/lib.rs")).unwrap(),
        "pub fn a() {}\npub fn b() {}\n"
    );
    let progress = session.ok("view_progress", json!({"plan_id": id})).await;
    assert_eq!(progress["steps"][0]["status"], "completed");
    let history = session.ok("view_history", json!({"plan_id": id})).await;
    assert!(history.to_string().contains("\"mcp\""), "{history}");
}

/// The plan authoring and history tools through the server: create, refine, visualize, compare,
/// roll back, delete.
#[tokio::test]
async fn plan_authoring_and_history_tools_work_through_the_server() {
    let session = connect("plan", legacy()).await;
    commit_files(
        session.path(),
        &[("src/retry.rs", "pub struct Policy; // retry backoff\n")],
    );
    let created = session
        .ok("create_plan", json!({"task": "Add retry backoff"}))
        .await;
    let plan = &created["plan"];
    assert_eq!(plan["generated_by"]["method"], "deterministic", "{created}");
    let id = plan["id"].as_str().unwrap().to_string();

    let refined = session
        .ok(
            "refine_plan",
            json!({"current_plan": plan.to_string(), "feedback": "Cap the delay at 30 s"}),
        )
        .await;
    assert_eq!(refined["plan"]["version"], 2, "{refined}");

    let diagram = session
        .ok(
            "visualize_plan",
            json!({"plan": plan.to_string(), "diagram_type": "gantt"}),
        )
        .await;
    assert!(
        diagram["mermaid"].as_str().unwrap().starts_with("gantt"),
        "{diagram}"
    );

    // A saved plan with two versions: compare, roll back, delete.
    let saved = session.ok("save_plan", json!({"plan": plan})).await;
    let id = saved["plan"]["id"].as_str().unwrap_or(&id).to_string();
    let mut second = refined["plan"].clone();
    second["id"] = json!(id);
    session
        .ok("save_plan", json!({"plan": second, "overwrite": true}))
        .await;
    let compared = session
        .ok(
            "compare_plan_versions",
            json!({"plan_id": id, "from_version": 1, "to_version": 2}),
        )
        .await;
    assert!(compared.is_object(), "{compared}");
    let rolled = session
        .ok(
            "rollback_plan",
            json!({"plan_id": id, "target_version": 1, "reason": "too strict"}),
        )
        .await;
    assert_eq!(rolled["plan"]["version"], 3, "{rolled}");
    session.ok("delete_plan", json!({"plan_id": id})).await;
    let gone = session.err("load_plan", json!({"plan_id": id})).await;
    assert_eq!(gone["code"], "PLAN_NOT_FOUND", "{gone}");
}
