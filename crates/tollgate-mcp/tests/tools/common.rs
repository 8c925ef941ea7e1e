//! What every tool test shares: a connected client per profile, argument helpers, fixtures.

pub(crate) use std::path::Path;

pub(crate) use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion, Tool,
};
pub(crate) use rmcp::service::RunningService;
pub(crate) use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
pub(crate) use serde_json::{Value, json};
pub(crate) use tempfile::TempDir;
pub(crate) use tollgate_mcp::{Profiles, Server, ServerOptions};

/// The e2e tests' loopback model server (one implementation for every test target).
pub(crate) use tollgate_testkit::fake_llm;

pub(crate) use fake_llm::{FakeLlm, Reply};

pub(crate) const INVARIANTS: &str = r#"security:
  - id: no-eval
    rule: Never call eval() in application code
    paths: ["src/**/*.js"]
    severity: HIGH
    category: security
    action: deny
    deny: { regex: { pattern: "\\beval\\(" } }
"#;

pub(crate) const DIFF: &str = "diff --git a/src/app.js b/src/app.js
new file mode 100644
--- /dev/null
+++ b/src/app.js
@@ -0,0 +1,3 @@
+const a = 1;
+const b = eval(input);
+module.exports = { a, b };
";

/// A connected client plus the workspace it serves (kept alive for the test).
pub(crate) struct Session {
    pub(crate) client: RunningService<RoleClient, ()>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) workspace: TempDir,
}

/// A workspace with an invariants file, on a git branch `main`.
pub(crate) fn workspace() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".review-invariants.yml"), INVARIANTS).unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    dir
}

pub(crate) async fn connect(profiles: &str, lifecycle: ClientLifecycleMode) -> Session {
    connect_to(workspace(), profiles, lifecycle).await
}

pub(crate) async fn connect_to(
    workspace: TempDir,
    profiles: &str,
    lifecycle: ClientLifecycleMode,
) -> Session {
    connect_with_env(workspace, profiles, lifecycle, Vec::new()).await
}

/// As [`connect_to`], with the environment the server reads its configuration layers from.
pub(crate) async fn connect_with_env(
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
pub(crate) async fn connect_with_options(
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

pub(crate) fn legacy() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

pub(crate) fn stateless() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

pub(crate) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

impl Session {
    pub(crate) async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(
                CallToolRequestParams::new(name.to_string()).with_arguments(object(arguments)),
            )
            .await
            .unwrap_or_else(|err| panic!("calling {name}: {err}"))
    }

    /// Calls a tool that must succeed; checks the structured result against the declared output
    /// schema and against its text copy, and returns it.
    pub(crate) async fn ok(&self, name: &str, arguments: Value) -> Value {
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
    pub(crate) async fn err(&self, name: &str, arguments: Value) -> Value {
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

    pub(crate) fn tool(&self, name: &str) -> &Tool {
        self.tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap_or_else(|| panic!("`{name}` is not served"))
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    pub(crate) fn path(&self) -> &Path {
        self.workspace.path()
    }
}

pub(crate) fn assert_code(error: &Value, code: &str) {
    assert_eq!(error["code"], code, "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{error}"
    );
}

/// Commits `files` on the current branch of the workspace's repository; returns the commit id.
pub(crate) fn commit_files(dir: &Path, files: &[(&str, &str)]) -> String {
    commit_files_saying(dir, files, "c")
}

pub(crate) fn commit_files_saying(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
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

/// A review workspace whose tollgate.toml points at the fake model server.
pub(crate) fn model_workspace(server: &FakeLlm) -> TempDir {
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
pub(crate) fn model_answer() -> Reply {
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

/// Writes `files` into the workspace and stages them.
pub(crate) fn stage_files(dir: &Path, files: &[(&str, &str)]) {
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
