//! The `context` profile: search, reads and indexing (also as a task).

use crate::common::*;

/// Every context tool through the server, on a small committed workspace: the first search
/// builds the index, the rest read it.
#[tokio::test]
async fn context_tools_search_read_and_index_the_workspace() {
    let session = connect("context", legacy()).await;
    commit_files_saying(
        session.path(),
        &[
            (
                "src/quota.rs",
                "/// Refills the token bucket.\npub fn refill_bucket(rate: u32) -> u32 {\n    rate * 2\n}\n",
            ),
            (
                "src/lib.rs",
                "mod quota;\nuse crate::quota::refill_bucket;\npub fn tick() -> u32 {\n    refill_bucket(3)\n}\n",
            ),
            (
                "tests/quota_test.rs",
                "#[test]\nfn refill_bucket_doubles() {\n    assert_eq!(tollgate_fixture::refill_bucket(1), 2);\n}\n",
            ),
        ],
        "Add token bucket refill for rate limiting",
    );

    let found = session
        .ok(
            "semantic_search",
            json!({"query": "refill token bucket", "top_k": 5}),
        )
        .await;
    assert_eq!(
        found["index_built"], true,
        "the first search builds the index"
    );
    assert_eq!(found["results"][0]["path"], "src/quota.rs", "{found}");
    let status = session.ok("index_status", json!({})).await;
    assert_eq!(
        (status["exists"].clone(), status["files"].clone()),
        (json!(true), json!(3))
    );

    let retrieved = session
        .ok("codebase_retrieval", json!({"query": "refill bucket rate"}))
        .await;
    assert_eq!(retrieved["index_built"], false);
    let paths: Vec<&str> = retrieved["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"src/quota.rs"), "{paths:?}");
    assert!(
        !paths.contains(&"tests/quota_test.rs"),
        "tests are out by default: {paths:?}"
    );

    let bundle = session
        .ok(
            "get_context_for_prompt",
            json!({"query": "refill bucket", "token_budget": 2000}),
        )
        .await;
    assert!(
        bundle["markdown"]
            .as_str()
            .unwrap()
            .contains("refill_bucket"),
        "{bundle}"
    );
    assert!(bundle["tokens_used"].as_u64().unwrap() <= 2000);

    let file = session
        .ok("get_file", json!({"path": "src/quota.rs"}))
        .await;
    assert_eq!(file["lines"], 4);
    let outside = session
        .err("get_file", json!({"path": "../etc/passwd"}))
        .await;
    assert_eq!(outside["code"], "PATH_OUTSIDE_WORKSPACE", "{outside}");

    let commits = session
        .ok(
            "git_commit_retrieval",
            json!({"query": "rate limiting bucket", "max_commits": 5}),
        )
        .await;
    assert_eq!(
        commits["commits"][0]["files_changed"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "{commits}"
    );

    let matches = session
        .ok("regex_search", json!({"pattern": r"refill_bucket\(\d\)"}))
        .await;
    assert_eq!(matches["total"], 2, "{matches}");
    let bad = session
        .err("regex_search", json!({"pattern": "(unclosed"}))
        .await;
    assert_eq!(bad["code"], "INVALID_INPUT");

    let definition = session
        .ok("symbol_graph", json!({"symbol": "refill_bucket"}))
        .await;
    assert_eq!(
        definition["results"][0]["path"], "src/quota.rs",
        "{definition}"
    );
    assert_eq!(definition["results"][0]["line"], 2);
    let callers = session
        .ok("search_callers_for", json!({"symbol": "refill_bucket"}))
        .await;
    let caller_paths: Vec<&str> = callers["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(caller_paths.contains(&"src/lib.rs"), "{callers}");
    let tests = session
        .ok("search_tests_for", json!({"query": "refill_bucket"}))
        .await;
    assert_eq!(
        tests["results"][0]["path"], "tests/quota_test.rs",
        "{tests}"
    );

    // A change is picked up by an explicit update.
    std::fs::write(
        session.path().join("src/extra.rs"),
        "pub fn drain_bucket() {}\n",
    )
    .unwrap();
    let report = session.ok("index_workspace", json!({})).await;
    assert_eq!(report["files_changed"], 1, "{report}");
}

/// `index_workspace` as a task (the MCP Tasks extension) for a client that declares it, in both
/// protocol eras: created at once, polled to completion, its report inlined and matching the
/// tool's output schema; a later update through a plain call sees the index the task built.
#[tokio::test]
async fn index_workspace_runs_as_a_task_for_a_client_with_the_tasks_extension() {
    use rmcp::model::{
        CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams, Implementation,
        TaskPayload,
    };
    for lifecycle in [legacy(), stateless()] {
        let dir = workspace();
        commit_files(dir.path(), &[("src/lib.rs", "pub fn refill_bucket() {}\n")]);
        let server = Server::new(ServerOptions {
            workspace: dir.path().to_path_buf(),
            workspace_named: true,
            profiles: "context".parse::<Profiles>().unwrap(),
            env: Vec::new(),
            call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
        })
        .unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("tasks-e2e", "0"),
        )
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let response = client
            .call_tool_once(CallToolRequestParams::new("index_workspace"))
            .await
            .unwrap();
        let CallToolResponse::Task(created) = response else {
            panic!("index_workspace should be a task: {response:?}");
        };
        let mut payload = None;
        for _ in 0..5_000 {
            let got = client
                .get_task(GetTaskParams::new(created.task.task_id.clone()))
                .await
                .unwrap();
            if got.task.task.status.is_terminal() {
                payload = Some(got.task.payload);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let Some(TaskPayload::Completed { result }) = payload else {
            panic!("{payload:?}");
        };
        let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
        assert_eq!(result.is_error, Some(false), "{:?}", result.content);
        let report = result.structured_content.unwrap();
        assert_eq!(report["files_changed"], 1, "{report}");
        let schema = tools
            .iter()
            .find(|tool| tool.name == "index_workspace")
            .and_then(|tool| tool.output_schema.clone())
            .unwrap();
        let schema = Value::Object(schema.as_ref().clone());
        assert!(jsonschema::is_valid(&schema, &report), "{report}");

        // A short tool on the same connection is a plain call; the search sees the index.
        let found = client
            .call_tool(
                CallToolRequestParams::new("semantic_search")
                    .with_arguments(object(json!({"query": "refill bucket"}))),
            )
            .await
            .unwrap();
        let found = found.structured_content.unwrap();
        assert_eq!(found["index_built"], false, "{found}");
    }
}
