//! The `session` profile: a reactive review session steered by its tools.

use crate::common::*;

#[tokio::test]
async fn a_review_session_runs_in_the_server_and_is_steered_by_the_session_tools() {
    let session = connect("session", stateless()).await;
    let base = commit_files(session.path(), &[("src/lib.js", "const x = 1;\n")]);
    let head = commit_files(
        session.path(),
        &[
            ("src/app.js", "const a = 1;\nconst b = eval(input);\n"),
            ("src/lib.js", "const x = 2;\n"),
        ],
    );
    let started = session
        .ok(
            "reactive_review_pr",
            json!({
                "commit_hash": head,
                "base_ref": base,
                "changed_files": "src/app.js,src/lib.js,src/missing.js",
                "title": "Add app",
                "max_workers": 2
            }),
        )
        .await;
    let id = started["session_id"].as_str().unwrap().to_string();
    assert_eq!(started["total_steps"], 2, "{started}");
    assert!(
        started["warnings"][0]
            .as_str()
            .unwrap()
            .contains("src/missing.js")
    );

    // Poll until it ends (nextest's terminate-after bounds a hang).
    let status = loop {
        let status = session
            .ok(
                "get_review_status",
                json!({"session_id": id, "include_findings": true}),
            )
            .await;
        if status["status"] != "running" {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(status["status"], "completed", "{status}");
    assert_eq!(status["progress"]["completed"], 2);
    assert_eq!(status["progress"]["percentage"], 100.0);
    // The invariants file of the base commit has no rule yet (it is not committed), but the
    // built-in checks ran on the real diff: a finding list with exact anchors.
    let findings = status["finding_list"].as_array().unwrap();
    assert!(!findings.is_empty(), "{status}");
    assert_eq!(
        status["findings"]["total"].as_u64().unwrap() as usize,
        findings.len()
    );

    let telemetry = session
        .ok("get_review_telemetry", json!({"session_id": id}))
        .await;
    assert_eq!(telemetry["totals"]["steps_completed"], 2);
    assert_eq!(telemetry["steps"].as_array().unwrap().len(), 2);

    let err = session
        .err("resume_review", json!({"session_id": id}))
        .await;
    assert_code(&err, "INVALID_STATE_TRANSITION");
    assert!(
        err["message"].as_str().unwrap().contains("completed"),
        "{err}"
    );
    // Cancelling an ended session is refused the same way.
    let err = session
        .err("cancel_review", json!({"session_id": id}))
        .await;
    assert_code(&err, "INVALID_STATE_TRANSITION");
    let err = session
        .err("pause_review", json!({"session_id": "rs_nope"}))
        .await;
    assert_code(&err, "SESSION_NOT_FOUND");
    let err = session
        .err(
            "reactive_review_pr",
            json!({"commit_hash": head, "base_ref": "no-such-ref", "changed_files": ["src/app.js"]}),
        )
        .await;
    assert_code(&err, "INVALID_INPUT");

    let checked = session
        .ok(
            "validate_content",
            json!({"content": "fn x() {\n", "content_type": "generated_code", "file_path": "a.rs"}),
        )
        .await;
    assert_eq!(checked["passed"], false);
    assert_eq!(checked["findings"][0]["rule"], "unbalanced_bracket");
    assert_eq!(checked["findings"][0]["line"], 1);
}
