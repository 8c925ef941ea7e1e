//! The MCP server driven by rmcp's own client over an in-memory duplex pipe: tool lists per
//! profile, every tool with valid and invalid arguments, error codes, both protocol eras, and
//! every structured result checked against the output schema the tool declared.

use std::path::Path;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion, Tool};
use rmcp::service::RunningService;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tempfile::TempDir;
use tollgate_mcp::{Profiles, Server, ServerOptions};

/// The e2e tests' loopback model server (one implementation for every test target).
use tollgate_testkit::fake_llm;

use fake_llm::{FakeLlm, Reply};

const INVARIANTS: &str = r#"security:
  - id: no-eval
    rule: Never call eval() in application code
    paths: ["src/**/*.js"]
    severity: HIGH
    category: security
    action: deny
    deny: { regex: { pattern: "\\beval\\(" } }
"#;

const DIFF: &str = "diff --git a/src/app.js b/src/app.js
new file mode 100644
--- /dev/null
+++ b/src/app.js
@@ -0,0 +1,3 @@
+const a = 1;
+const b = eval(input);
+module.exports = { a, b };
";

/// A connected client plus the workspace it serves (kept alive for the test).
struct Session {
    client: RunningService<RoleClient, ()>,
    tools: Vec<Tool>,
    workspace: TempDir,
}

/// A workspace with an invariants file, on a git branch `main`.
fn workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".review-invariants.yml"), INVARIANTS).unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    dir
}

async fn connect(profiles: &str, lifecycle: ClientLifecycleMode) -> Session {
    connect_to(workspace(), profiles, lifecycle).await
}

async fn connect_to(workspace: TempDir, profiles: &str, lifecycle: ClientLifecycleMode) -> Session {
    connect_with_env(workspace, profiles, lifecycle, Vec::new()).await
}

/// As [`connect_to`], with the environment the server reads its configuration layers from.
async fn connect_with_env(
    workspace: TempDir,
    profiles: &str,
    lifecycle: ClientLifecycleMode,
    env: Vec<(String, String)>,
) -> Session {
    connect_with_options(
        workspace,
        profiles,
        lifecycle,
        env,
        ServerOptions::DEFAULT_CALL_TIMEOUT,
    )
    .await
}

/// As [`connect_with_env`], with the server's per-call time limit.
async fn connect_with_options(
    workspace: TempDir,
    profiles: &str,
    lifecycle: ClientLifecycleMode,
    env: Vec<(String, String)>,
    call_timeout: std::time::Duration,
) -> Session {
    let server = Server::new(ServerOptions {
        workspace: workspace.path().to_path_buf(),
        workspace_named: true,
        profiles: profiles.parse::<Profiles>().unwrap(),
        env,
        call_timeout,
    })
    .unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve_with_lifecycle(client_io, lifecycle).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    Session {
        client,
        tools,
        workspace,
    }
}

fn legacy() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

fn stateless() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

impl Session {
    async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(
                CallToolRequestParams::new(name.to_string()).with_arguments(object(arguments)),
            )
            .await
            .unwrap_or_else(|err| panic!("calling {name}: {err}"))
    }

    /// Calls a tool that must succeed; checks the structured result against the declared output
    /// schema and against its text copy, and returns it.
    async fn ok(&self, name: &str, arguments: Value) -> Value {
        let result = self.call(name, arguments).await;
        assert_eq!(
            result.is_error,
            Some(false),
            "{name} failed: {:?}",
            result.content
        );
        let structured = result
            .structured_content
            .clone()
            .expect("structured content");
        let tool = self.tool(name);
        let schema = Value::Object(
            tool.output_schema
                .as_ref()
                .expect("output schema")
                .as_ref()
                .clone(),
        );
        let validator = jsonschema::validator_for(&schema).expect("the output schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: output does not match its schema: {errors:?}"
        );
        let text = result.content[0]
            .as_text()
            .expect("a text copy")
            .text
            .clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
        structured
    }

    /// Calls a tool that must fail; returns the error object (`{code, message, details?}`).
    async fn err(&self, name: &str, arguments: Value) -> Value {
        let result = self.call(name, arguments).await;
        assert_eq!(
            result.is_error,
            Some(true),
            "{name} should fail: {:?}",
            result.structured_content
        );
        assert!(result.structured_content.is_none());
        let text = &result.content[0].as_text().expect("error text").text;
        let body: Value = serde_json::from_str(text).expect("the error text is JSON");
        body["error"].clone()
    }

    fn tool(&self, name: &str) -> &Tool {
        self.tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap_or_else(|| panic!("`{name}` is not served"))
    }

    fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    fn path(&self) -> &Path {
        self.workspace.path()
    }
}

fn assert_code(error: &Value, code: &str) {
    assert_eq!(error["code"], code, "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{error}"
    );
}

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
async fn review_diff_reviews_a_real_diff_in_both_protocol_eras() {
    for lifecycle in [legacy(), stateless()] {
        let session = connect("review", lifecycle).await;
        let result = session
            .ok(
                "review_diff",
                json!({
                    "diff": DIFF,
                    "base_sha": "0123abcd",
                    "options": {"fail_on_severity": "HIGH", "include_sarif": true, "include_markdown": true},
                }),
            )
            .await;
        let eval = result["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule_id"] == "no-eval")
            .unwrap_or_else(|| panic!("no invariant finding in {result}"));
        assert_eq!(eval["location"]["file"], "src/app.js");
        assert_eq!(eval["location"]["start_line"], 2);
        assert_eq!(result["should_fail"], true);
        assert!(
            result["fail_reasons"][0]
                .as_str()
                .unwrap()
                .contains("no-eval"),
            "{result}"
        );
        assert_eq!(result["metadata"]["base_sha"], "0123abcd");
        assert_eq!(
            result["metadata"]["invariants_path"],
            ".review-invariants.yml"
        );
        let sarif: Value = serde_json::from_str(result["sarif"].as_str().unwrap()).unwrap();
        assert_eq!(sarif["version"], "2.1.0");
        assert!(result["markdown"].as_str().unwrap().contains("no-eval"));
        assert!(
            result["metadata"]["warnings"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
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
async fn review_diff_defaults_pass_and_unavailable_options_are_reported() {
    let session = connect("review", legacy()).await;
    let result = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"enable_llm": true, "two_pass": false, "semgrep_args": []}}),
        )
        .await;
    // A model's HIGH does not reach the default CRITICAL gate (only analyzer errors do).
    assert_eq!(result["should_fail"], false);
    assert!(result.get("sarif").is_none());
    let warnings: Vec<&str> = result["metadata"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("options.enable_llm:")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("options.two_pass:")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("options.semgrep_args:")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn review_diff_reads_the_workspace_configuration_under_the_options() {
    let workspace = workspace();
    std::fs::write(
        workspace.path().join("tollgate.toml"),
        "[review]\nfail_on_severity = \"HIGH\"\n",
    )
    .unwrap();
    let session = connect_to(workspace, "review", legacy()).await;
    let from_file = session.ok("review_diff", json!({"diff": DIFF})).await;
    assert_eq!(from_file["should_fail"], true);
    let overridden = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"fail_on_severity": "CRITICAL"}}),
        )
        .await;
    assert_eq!(overridden["should_fail"], false);
}

#[tokio::test]
async fn review_diff_refuses_bad_arguments_with_codes_and_fields() {
    let session = connect("review", stateless()).await;
    let cases = [
        (json!({}), "INVALID_INPUT", "missing field `diff`"),
        (
            json!({"diff": "  \n"}),
            "INVALID_INPUT",
            "the diff is empty",
        ),
        (
            json!({"diff": "hello"}),
            "INVALID_INPUT",
            "does not look like a diff",
        ),
        (
            json!({"diff": DIFF, "optoins": {}}),
            "INVALID_INPUT",
            "unknown field `optoins`",
        ),
        (
            json!({"diff": DIFF, "options": {"max_finding": 3}}),
            "INVALID_INPUT",
            "unknown field `max_finding`",
        ),
        (
            json!({"diff": DIFF, "options": {"confidence_threshold": 1.5}}),
            "INVALID_INPUT",
            "options.confidence_threshold",
        ),
        (
            json!({"diff": DIFF, "options": {"max_context_files": 21}}),
            "INVALID_INPUT",
            "options.max_context_files",
        ),
        (
            json!({"diff": DIFF, "options": {"fail_on_severity": "SEVERE"}}),
            "INVALID_INPUT",
            "unknown variant `SEVERE`",
        ),
        (
            json!({"diff": DIFF, "changed_files": ["../secrets.txt"]}),
            "INVALID_INPUT",
            "`..` segments",
        ),
        (
            json!({"diff": DIFF, "changed_files": ["/etc/passwd"]}),
            "INVALID_INPUT",
            "absolute paths",
        ),
        (
            json!({"diff": DIFF, "head_sha": "not-a-sha"}),
            "INVALID_INPUT",
            "head_sha",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "../../etc/passwd"}}),
            "PATH_OUTSIDE_WORKSPACE",
            "climbs out",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "/etc/passwd"}}),
            "PATH_OUTSIDE_WORKSPACE",
            "outside the workspace",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "nope.yml"}}),
            "FILE_NOT_FOUND",
            "nope.yml",
        ),
    ];
    for (arguments, code, needle) in cases {
        let error = session.err("review_diff", arguments.clone()).await;
        assert_code(&error, code);
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{arguments}: {error}"
        );
    }
    let error = session
        .err(
            "review_diff",
            json!({"diff": DIFF, "options": {"confidence_threshold": -1}}),
        )
        .await;
    assert_eq!(error["details"]["field"], "options.confidence_threshold");
}

#[tokio::test]
async fn check_invariants_reports_findings_and_file_problems() {
    let session = connect("review", legacy()).await;
    let result = session.ok("check_invariants", json!({"diff": DIFF})).await;
    assert_eq!(result["success"], true);
    assert_eq!(result["invariants_path"], ".review-invariants.yml");
    assert_eq!(result["checked_invariants"], 1);
    let findings = result["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{result}");
    assert_eq!(findings[0]["rule_id"], "no-eval");
    assert_eq!(findings[0]["location"]["start_line"], 2);
    assert!(
        findings[0]["fingerprint"]
            .as_str()
            .is_some_and(|f| !f.is_empty())
    );

    let other_file = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "changed_files": ["README.md"]}),
        )
        .await;
    assert_eq!(other_file["findings"], json!([]));

    let missing = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "rules/missing.yml"}),
        )
        .await;
    assert_eq!(missing["success"], false);
    assert_eq!(missing["error_code"], "FILE_NOT_FOUND");
    assert_eq!(missing["checked_invariants"], 0);

    std::fs::write(
        session.path().join("broken.yml"),
        "rules:\n  - id: x\n    severity: HUGE\n",
    )
    .unwrap();
    let broken = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "broken.yml"}),
        )
        .await;
    assert_eq!(broken["success"], false);
    assert_eq!(broken["error_code"], "INVALID_INPUT");
    assert!(
        broken["error"].as_str().unwrap().contains("broken.yml:3:"),
        "{broken}"
    );

    for hostile in ["../../etc/passwd", "/etc/passwd"] {
        let error = session
            .err(
                "check_invariants",
                json!({"diff": DIFF, "invariants_path": hostile}),
            )
            .await;
        assert_code(&error, "PATH_OUTSIDE_WORKSPACE");
        assert_eq!(error["details"]["field"], "invariants_path");
    }
    assert_code(
        &session
            .err("check_invariants", json!({"invariants_path": "x.yml"}))
            .await,
        "INVALID_INPUT",
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_workspace_is_refused() {
    let session = connect("review", legacy()).await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules.yml"), INVARIANTS).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("rules.yml"),
        session.path().join("link.yml"),
    )
    .unwrap();
    let error = session
        .err(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "link.yml"}),
        )
        .await;
    assert_code(&error, "PATH_OUTSIDE_WORKSPACE");
}

#[tokio::test]
async fn scrub_secrets_masks_and_enforces_its_limits() {
    let session = connect("plan", legacy()).await;
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let result = session
        .ok(
            "scrub_secrets",
            json!({"content": format!("GH={token}\n"), "show_start": 4}),
        )
        .await;
    assert_eq!(result["scrubbed_content"], "GH=ghp_****\n");
    assert_eq!(result["secrets_found"], true);
    assert_eq!(result["secrets_count"], 1);
    assert_eq!(result["detected_types"], json!(["github_token"]));

    let error = session
        .err("scrub_secrets", json!({"content": "a".repeat(1_000_001)}))
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "content");
    assert_code(
        &session
            .err("scrub_secrets", json!({"content": "x", "show_end": 9}))
            .await,
        "INVALID_INPUT",
    );
    assert_code(
        &session
            .err("scrub_secrets", json!({"content": "x", "show_start": -1}))
            .await,
        "INVALID_INPUT",
    );
    assert_code(
        &session.err("scrub_secrets", json!({})).await,
        "INVALID_INPUT",
    );
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
        json!(["review", "plan", "context", "session", "memory"])
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

#[tokio::test]
async fn static_analysis_runs_in_review_diff_and_on_its_own() {
    // The server's environment has no PATH, so tsc cannot be found: a status, never a clean run.
    let session = connect("review", legacy()).await;
    let review = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"enable_static_analysis": true}}),
        )
        .await;
    let analysis = &review["static_analysis"];
    assert_eq!(analysis["analyzers_requested"], json!(["tsc"]), "{review}");
    assert_eq!(analysis["analyzers_executed"], json!([]));
    // tsc is not installed here, and the diff has no TypeScript project anyway: a status and a
    // reason either way.
    assert_ne!(analysis["results"][0]["status"], "executed", "{review}");
    assert!(
        analysis["results"][0]["skipped_reason"].is_string(),
        "{review}"
    );
    assert!(
        review["metadata"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("tsc")),
        "{review}"
    );

    // A TypeScript project whose tsc is missing: unavailable, and the run is not a success.
    std::fs::write(session.path().join("tsconfig.json"), "{}\n").unwrap();
    std::fs::create_dir_all(session.path().join("src")).unwrap();
    std::fs::write(
        session.path().join("src/app.ts"),
        "export const a: number = 1;\n",
    )
    .unwrap();
    let standalone = session
        .ok(
            "run_static_analysis",
            json!({"changed_files": ["src/app.ts"], "options": {"analyzers": ["tsc"]}}),
        )
        .await;
    assert_eq!(standalone["success"], false, "{standalone}");
    assert_eq!(standalone["analyzers"], json!(["tsc"]));
    assert_eq!(
        standalone["results"][0]["status"], "unavailable",
        "{standalone}"
    );

    let error = session
        .err(
            "run_static_analysis",
            json!({"changed_files": ["../../etc/passwd"]}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "changed_files");
    let error = session
        .err(
            "run_static_analysis",
            json!({"changed_files": ["src/app.js"], "options": {"import_sarif": ["../../etc/passwd"]}}),
        )
        .await;
    assert_eq!(error["details"]["field"], "options.import_sarif", "{error}");
    let error = session
        .err(
            "run_static_analysis",
            json!({"options": {"analyzers": ["eslint"]}}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
}

/// Commits `files` on the current branch of the workspace's repository; returns the commit id.
fn commit_files(dir: &Path, files: &[(&str, &str)]) -> String {
    commit_files_saying(dir, files, "c")
}

fn commit_files_saying(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    let repo = git2::Repository::open(dir).unwrap();
    let mut index = repo.index().unwrap();
    for (path, content) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, content).unwrap();
        index.add_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("Test", "test@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )
    .unwrap()
    .to_string()
}

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

/// A review workspace whose tollgate.toml points at the fake model server.
fn model_workspace(server: &FakeLlm) -> TempDir {
    let workspace = workspace();
    std::fs::write(
        workspace.path().join("tollgate.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\nretry_backoff_ms = 1\ncache = false\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    workspace
}

/// The model's answer: one finding on `src/app.js` line 2 (the `eval` line), and a verdict.
fn model_answer() -> Reply {
    Reply::json(json!({
        "findings": [{
            "title": "eval on user input", "body": "Arbitrary code execution.",
            "priority": 0, "category": "security", "confidence_score": 0.95,
            "file": "src/app.js", "start_line": 2, "is_on_changed_line": false
        }],
        "overall_correctness": "patch is incorrect",
        "overall_explanation": "eval on input.",
        "overall_confidence_score": 0.9
    }))
}

#[tokio::test]
async fn review_changes_returns_upstreams_review_result_and_needs_a_model() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", legacy()).await;
    let review = session
        .ok(
            "review_changes",
            json!({"diff": DIFF, "categories": "security", "file_contexts": "{}"}),
        )
        .await;
    assert_eq!(review["overall_correctness"], "patch is incorrect");
    let finding = &review["findings"][0];
    assert_eq!(finding["priority"], 0);
    assert_eq!(finding["is_on_changed_line"], true);
    assert_eq!(finding["code_location"]["file_path"], "src/app.js");
    assert_eq!(finding["code_location"]["line_range"]["start"], 2);
    assert!(finding["id"].as_str().unwrap().starts_with("llm/security@"));
    assert_eq!(review["metadata"]["model_used"], "fake");
    assert_eq!(
        review["metadata"]["categories_reviewed"],
        json!(["security"])
    );
    assert_eq!(server.request_count(), 1);

    let error = session
        .err(
            "review_changes",
            json!({"diff": DIFF, "categories": ["speed"]}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "categories");

    let no_model = connect("review", legacy()).await;
    let error = no_model.err("review_changes", json!({"diff": DIFF})).await;
    assert_code(&error, "LLM_NOT_CONFIGURED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("TOLLGATE_LLM_PROVIDER"),
        "{error}"
    );
}

/// Writes `files` into the workspace and stages them.
fn stage_files(dir: &Path, files: &[(&str, &str)]) {
    let repo = git2::Repository::open(dir).unwrap();
    let mut index = repo.index().unwrap();
    for (path, content) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
        index.add_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
}

#[tokio::test]
async fn review_git_diff_reviews_staged_changes_and_refuses_option_like_refs() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", stateless()).await;
    stage_files(
        session.path(),
        &[(
            "src/app.js",
            "const a = 1;\nconst b = eval(input);\nmodule.exports = { a, b };\n",
        )],
    );
    let output = session
        .ok("review_git_diff", json!({"include_patterns": ["src/**"]}))
        .await;
    assert_eq!(output["git_info"]["target"], "staged");
    assert_eq!(output["git_info"]["files_changed"], 1);
    assert_eq!(output["review"]["findings"][0]["priority"], 0);
    assert_eq!(output["review"]["changes_summary"]["lines_added"], 3);

    for (arguments, field) in [
        (json!({"target": "--output=/tmp/x"}), "target"),
        (json!({"target": "HEAD;rm -rf /"}), "target"),
        (json!({"target": "main", "base": "-h"}), "base"),
    ] {
        let error = session.err("review_git_diff", arguments).await;
        assert_code(&error, "INVALID_INPUT");
        assert_eq!(error["details"]["field"], field, "{error}");
    }
}

#[tokio::test]
async fn review_auto_runs_review_diff_for_a_diff_and_review_git_diff_without() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", legacy()).await;
    let with_diff = session.ok("review_auto", json!({"diff": DIFF})).await;
    assert_eq!(with_diff["selected_tool"], "review_diff");
    assert!(with_diff["output"]["risk_score"].is_u64(), "{with_diff}");
    assert_eq!(
        server.request_count(),
        0,
        "review_diff is deterministic here"
    );

    stage_files(session.path(), &[("src/app.js", "const a = 1;\n")]);
    let from_git = session.ok("review_auto", json!({})).await;
    assert_eq!(from_git["selected_tool"], "review_git_diff");
    assert_eq!(from_git["output"]["git_info"]["files_changed"], 1);
    assert_eq!(server.request_count(), 1);
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

/// A review whose call is stopped (here by the server's call time limit of 8 s, which cancels the
/// call's work as a client's cancellation does) kills the analyzer it started, child included,
/// instead of leaving it running unobserved.
#[tokio::test]
async fn a_stopped_review_call_kills_its_running_analyzer() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::write(
        root.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("src/a.ts"),
        "export const a = 1;\nexport const b = 2;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("tollgate.toml"),
        "[analyzers.tsc]\npath = \"tools/tsc\"\n",
    )
    .unwrap();
    let pid_file = root.join("child.pid");
    let tsc = root.join("tools/tsc");
    // Like npm's node wrapper: a parent waiting on a child that never ends by itself.
    std::fs::write(
        &tsc,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Version 5.4.0'; exit 0; fi\nsleep 100000 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tsc, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let diff = "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,2 @@\n export const a = 1;\n+export const b = 2;\n";
    let session = connect_with_options(
        dir,
        "review",
        legacy(),
        Vec::new(),
        // Long enough for the tool to start on a loaded machine; the tool itself never ends.
        std::time::Duration::from_secs(8),
    )
    .await;
    // The analyzer's own limit is far away: only the stopped call can end the tool.
    let err = session
        .err(
            "review_diff",
            json!({"diff": diff, "options": {"enable_static_analysis": true,
                   "static_analyzers": ["tsc"], "static_analysis_timeout_ms": 600000}}),
        )
        .await;
    assert_code(&err, "TIMEOUT");
    let child: i32 = std::fs::read_to_string(session.path().join("child.pid"))
        .expect("the fake tsc ran")
        .trim()
        .parse()
        .unwrap();
    // The kill follows the stop within the watchdog's poll; wait for the kernel to reap it.
    let mut alive = true;
    for _ in 0..200 {
        let state = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next().map(str::to_string))
            });
        if state.is_none() || matches!(state.as_deref(), Some("Z") | Some("X")) {
            alive = false;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        !alive,
        "the analyzer's child {child} survived the stopped call"
    );
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
