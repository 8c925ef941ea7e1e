//! The server itself: profiles, tool definitions and annotations, protocol negotiation, `get_workspace_info`, `tool_manifest`.

use crate::common::*;

#[tokio::test]
async fn profiles_choose_the_served_tools_and_utilities_are_always_there() {
    let review = connect("review", legacy()).await;
    assert_eq!(
        review.names(),
        [
            "check_invariants",
            "get_workspace_info",
            "review_auto",
            "review_changes",
            "review_diff",
            "review_git_diff",
            "run_static_analysis",
            "scrub_secrets",
            "tool_manifest",
            "validate_content"
        ]
    );
    let plan = connect("plan", legacy()).await;
    assert_eq!(
        plan.names(),
        [
            "compare_plan_versions",
            "complete_step",
            "create_plan",
            "delete_plan",
            "execute_plan",
            "fail_step",
            "get_workspace_info",
            "list_plans",
            "load_plan",
            "refine_plan",
            "request_approval",
            "respond_approval",
            "rollback_plan",
            "save_plan",
            "scrub_secrets",
            "start_step",
            "tool_manifest",
            "undo_step",
            "validate_content",
            "view_history",
            "view_progress",
            "visualize_plan"
        ]
    );
    let session = connect("session", legacy()).await;
    assert_eq!(
        session.names(),
        [
            "cancel_review",
            "get_review_status",
            "get_review_telemetry",
            "get_workspace_info",
            "pause_review",
            "reactive_review_pr",
            "resume_review",
            "scrub_secrets",
            "tool_manifest",
            "validate_content"
        ]
    );
    let context = connect("context", legacy()).await;
    assert_eq!(
        context.names(),
        [
            "codebase_retrieval",
            "get_context_for_prompt",
            "get_file",
            "get_workspace_info",
            "git_commit_retrieval",
            "index_status",
            "index_workspace",
            "regex_search",
            "scrub_secrets",
            "search_callers_for",
            "search_tests_for",
            "semantic_search",
            "symbol_graph",
            "tool_manifest",
            "validate_content"
        ]
    );
    let memory = connect("memory", legacy()).await;
    for tool in ["learn_accept", "learn_dismiss", "learn_list"] {
        assert!(memory.names().contains(&tool.to_string()), "{tool}");
    }
    // No ledger yet: an empty list, not an error.
    let listed = memory.ok("learn_list", json!({})).await;
    assert_eq!(listed["total"], 0, "{listed}");
    let all = connect("all", legacy()).await;
    let mut expected = review.names();
    expected.extend(memory.names());
    expected.extend(session.names());
    expected.extend(plan.names());
    expected.extend(context.names());
    expected.sort();
    expected.dedup();
    assert_eq!(all.names(), expected);

    // A tool the profile does not serve is unknown to the server: a protocol error.
    let err = plan
        .client
        .call_tool(
            CallToolRequestParams::new("review_diff").with_arguments(object(json!({"diff": DIFF}))),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown tool `review_diff`"),
        "{err}"
    );
}

/// The plan tools that change the store.
const PLAN_WRITES: [&str; 9] = [
    "save_plan",
    "delete_plan",
    "rollback_plan",
    "undo_step",
    "request_approval",
    "respond_approval",
    "start_step",
    "complete_step",
    "fail_step",
];

/// Every tool's annotations, by name: (name, readOnly, destructive, idempotent, openWorld).
/// Searches, reads, status and view tools are read-only, so clients stop asking approval for
/// each one (building the index on first use writes only Tollgate's cache). Starting or steering
/// a session, indexing and the plan writes change state; cancelling, deleting, rolling back,
/// undoing and executing (which may overwrite files) are destructive. Model calls are open-world
/// and answer differently each time.
const HINTS: [(&str, bool, bool, bool, bool); 64] = [
    ("cancel_review", false, true, false, false),
    ("check_invariants", true, false, true, false),
    ("codebase_retrieval", true, false, true, false),
    ("compare_plan_versions", true, false, true, false),
    ("complete_step", false, false, false, false),
    ("create_plan", false, false, false, true),
    ("delete_plan", false, true, false, false),
    ("execute_plan", false, true, false, true),
    ("fail_step", false, false, false, false),
    ("get_context_for_prompt", true, false, true, false),
    ("get_file", true, false, true, false),
    ("get_review_status", true, false, true, false),
    ("get_review_telemetry", true, false, true, false),
    ("get_workspace_info", true, false, true, false),
    ("git_commit_retrieval", true, false, true, false),
    ("index_status", true, false, true, false),
    ("index_workspace", false, false, true, false),
    ("learn_accept", false, false, false, false),
    ("learn_dismiss", false, false, false, false),
    ("learn_list", true, false, true, false),
    ("list_plans", true, false, true, false),
    ("load_plan", true, false, true, false),
    ("pause_review", false, false, false, false),
    ("reactive_review_pr", false, false, false, false),
    ("refine_plan", true, false, false, true),
    ("regex_search", true, false, true, false),
    ("request_approval", false, false, false, false),
    ("respond_approval", false, false, false, false),
    ("resume_review", false, false, false, false),
    ("review_auto", true, false, false, true),
    ("review_changes", true, false, false, true),
    ("review_diff", true, false, true, false),
    ("review_git_diff", true, false, false, true),
    ("rollback_plan", false, true, false, false),
    ("run_static_analysis", true, false, true, false),
    ("save_plan", false, false, false, false),
    ("scrub_secrets", true, false, true, false),
    ("search_callers_for", true, false, true, false),
    ("search_tests_for", true, false, true, false),
    ("semantic_search", true, false, true, false),
    ("start_step", false, false, false, false),
    ("symbol_graph", true, false, true, false),
    ("tool_manifest", true, false, true, false),
    ("undo_step", false, true, false, false),
    ("validate_content", true, false, true, false),
    ("view_history", true, false, true, false),
    ("view_progress", true, false, true, false),
    ("visualize_plan", true, false, true, false),
    ("store_context", false, false, false, false),
    ("search_context", true, false, true, false),
    ("get_context_by_ids", true, false, true, false),
    ("delete_context", false, true, true, false),
    ("update_context", false, true, true, false),
    ("list_threads", true, false, true, false),
    ("get_statistics", true, false, true, false),
    ("semantic_search_context", true, false, true, false),
    ("fts_search_context", true, false, true, false),
    ("hybrid_search_context", true, false, true, false),
    ("store_context_batch", false, false, false, false),
    ("update_context_batch", false, true, true, false),
    ("delete_context_batch", false, true, true, false),
    ("memory_store", false, false, false, false),
    ("memory_find", true, false, true, false),
    ("context_answer", true, false, false, true),
];

#[tokio::test]
async fn every_tool_declares_schemas_with_descriptions_and_annotations() {
    let session = connect("all", legacy()).await;
    for tool in &session.tools {
        let name = &tool.name;
        assert!(
            tool.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{name}: title"
        );
        assert!(
            tool.description.as_deref().is_some_and(|d| d.len() > 40),
            "{name}: description"
        );
        let input = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(input["type"], "object", "{name}");
        assert_eq!(
            input["additionalProperties"], false,
            "{name}: unknown arguments are refused"
        );
        for (field, schema) in input["properties"].as_object().unwrap() {
            assert!(
                schema["description"].is_string(),
                "{name}.{field} has no description"
            );
        }
        assert!(tool.output_schema.is_some(), "{name}: output schema");
        let hints = tool.annotations.as_ref().expect("annotations");
        let Some((_, read_only, destructive, idempotent, open_world)) =
            HINTS.iter().find(|(listed, ..)| *listed == name.as_ref())
        else {
            panic!("{name}: not in HINTS");
        };
        // Absent hints take the protocol's defaults; destructive and idempotent mean
        // something only for a tool that is not read-only.
        let declared_read_only = hints.read_only_hint.unwrap_or(false);
        assert_eq!(
            (declared_read_only, hints.open_world_hint.unwrap_or(true)),
            (*read_only, *open_world),
            "{name}: (readOnly, openWorld)"
        );
        if !declared_read_only {
            assert_eq!(
                (
                    hints.destructive_hint.unwrap_or(true),
                    hints.idempotent_hint.unwrap_or(false)
                ),
                (*destructive, *idempotent),
                "{name}: (destructive, idempotent)"
            );
        }
    }
    assert_eq!(
        session.tools.len(),
        HINTS.len(),
        "a tool in HINTS is not served"
    );
    let review = Value::Object(session.tool("review_diff").input_schema.as_ref().clone());
    assert_eq!(review["required"], json!(["diff"]));
    let options = &review["$defs"]["ReviewDiffOptions"]["properties"];
    assert_eq!(options["confidence_threshold"]["maximum"], 1.0);
    assert_eq!(options["max_context_files"]["maximum"], 20);
    let scrub = Value::Object(session.tool("scrub_secrets").input_schema.as_ref().clone());
    assert_eq!(scrub["properties"]["content"]["maxLength"], 1_000_000);
    assert_eq!(scrub["properties"]["show_end"]["maximum"], 8);
}

#[tokio::test]
async fn the_negotiated_protocol_is_the_one_asked_for() {
    let legacy_session = connect("review", legacy()).await;
    let info = legacy_session.client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("tollgate")
    );
    let stateless_session = connect("review", stateless()).await;
    let info = stateless_session.client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
}

#[tokio::test]
async fn workspace_info_describes_the_repository_and_the_server() {
    let session = connect("review", stateless()).await;
    let info = session.ok("get_workspace_info", json!({})).await;
    let root = session.path().canonicalize().unwrap();
    assert_eq!(info["workspace_path"], root.display().to_string());
    assert_eq!(info["branch"], "main");
    assert!(info.get("head_sha").is_none(), "no commit yet: {info}");
    assert_eq!(info["invariants_file"], ".review-invariants.yml");
    assert!(info.get("config_file").is_none());
    assert_eq!(info["profiles"], json!(["review"]));
    assert_eq!(info["tools"], json!(session.names()));
    assert_eq!(info["protocol_versions"][0], "2026-07-28");
    assert!(
        info["protocol_versions"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );
    assert_code(
        &session
            .err("get_workspace_info", json!({"verbose": true}))
            .await,
        "INVALID_INPUT",
    );
}

#[tokio::test]
async fn tool_manifest_matches_tools_list() {
    let session = connect("all", legacy()).await;
    let manifest = session.ok("tool_manifest", json!({})).await;
    assert_eq!(manifest["tools"], json!(session.names()));
    assert_eq!(
        manifest["profiles"],
        json!(["review", "plan", "context", "session", "memory", "user"])
    );
    for (described, listed) in manifest["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&session.tools)
    {
        assert_eq!(described["name"], listed.name.as_ref());
        // get_workspace_info gained index health (1.1.0); every other tool is at its first contract.
        let version = if listed.name == "get_workspace_info" {
            "1.1.0"
        } else {
            "1.0.0"
        };
        assert_eq!(described["version"], version, "{}", listed.name);
        assert_eq!(
            described["input_schema"],
            Value::Object(listed.input_schema.as_ref().clone())
        );
        assert_eq!(
            described["output_schema"],
            Value::Object(listed.output_schema.as_ref().unwrap().as_ref().clone())
        );
        let name = described["name"].as_str().unwrap();
        let profile = if [
            "review_diff",
            "check_invariants",
            "run_static_analysis",
            "review_changes",
            "review_git_diff",
            "review_auto",
        ]
        .contains(&name)
        {
            "review"
        } else if [
            "create_plan",
            "refine_plan",
            "visualize_plan",
            "execute_plan",
        ]
        .contains(&name)
            || PLAN_WRITES.contains(&name)
            || [
                "load_plan",
                "list_plans",
                "view_history",
                "compare_plan_versions",
                "view_progress",
            ]
            .contains(&name)
        {
            "plan"
        } else if name.ends_with("_review")
            || name.starts_with("get_review")
            || name == "reactive_review_pr"
        {
            "session"
        } else if [
            "semantic_search",
            "codebase_retrieval",
            "get_context_for_prompt",
            "get_file",
            "git_commit_retrieval",
            "regex_search",
            "symbol_graph",
            "search_tests_for",
            "search_callers_for",
            "index_workspace",
            "index_status",
        ]
        .contains(&name)
        {
            "context"
        } else if name.starts_with("learn_")
            || name.starts_with("memory_")
            || name.contains("context")
            || ["list_threads", "get_statistics"].contains(&name)
        {
            "memory"
        } else {
            "utility"
        };
        assert_eq!(described["profile"], profile);
    }
}
