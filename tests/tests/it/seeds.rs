//! The seed dialects through the real binary over MCP stdio: `tollgate mcp --tools ck` answers
//! every tool of seed 003 (read from the seed at test time) called with the seed's own example
//! arguments, its paths moved into a test repository, with the result fields the seed
//! documents; `--tools context-engine` answers seed 000's `repo_search` examples; a server asked
//! for two profiles that share a tool name refuses to start.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::mcp::{StdioClient, lines_of, spawn_mcp};
use crate::util::{TestRepo, tollgate_bin};

/// The seed document whose name starts with `prefix` (`shared/reference/seeds` beside the
/// clone: the nearest ancestor holding one).
fn seed(prefix: &str) -> String {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest
        .ancestors()
        .map(|dir| dir.join("shared/reference/seeds"))
        .find(|dir| dir.is_dir())
        .expect("shared/reference/seeds beside the clone");
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
        .expect("the seed exists");
    std::fs::read_to_string(entry.path()).unwrap()
}

/// A repository like the seed's `/home/user/myapp`: a database pool, async handlers, timeouts.
fn myapp() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/db/pool.rs",
        "/// A database connection pool: connections are reused, not opened per query.\npub struct ConnectionPool {\n    connections: Vec<Connection>,\n    max_connections: usize,\n}\n\nimpl ConnectionPool {\n    /// Takes a pooled database connection, opening one when the pool is empty.\n    pub fn acquire_connection(&mut self) -> Connection {\n        self.connections.pop().unwrap_or_else(Connection::open)\n    }\n}\n\n/// Opens a pool of database connections to `database_url`.\npub fn create_pool(database_url: &str, size: usize) -> ConnectionPool {\n    ConnectionPool::connect(database_url, size)\n}\n",
    )
    .write(
        "src/handlers.rs",
        "pub async fn login_handler(request: Request) -> Response {\n    authenticate(&request).await\n}\n\npub async fn logout_handler(request: Request) -> Response {\n    end_session(&request).await\n}\n",
    )
    .write(
        "src/net.rs",
        "/// How long a request may wait before the timeout fires.\npub const REQUEST_TIMEOUT_SECS: u64 = 30;\n\n/// Fails the call after the timeout.\npub fn with_timeout(call: Call) -> Result<Reply, Timeout> {\n    call.deadline(REQUEST_TIMEOUT_SECS)\n}\n",
    )
    .write("README.md", "# myapp\n\nA small service with a database pool.\n");
    repo.commit("Initial import");
    repo
}

/// The `{"name": …, "arguments": …}` examples of seed 003's tool sections.
fn ck_examples(text: &str) -> Vec<Value> {
    let mut examples = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "**Example:**" {
            continue;
        }
        let block: Vec<&str> = lines
            .by_ref()
            .skip_while(|l| l.trim() != "```json")
            .skip(1)
            .take_while(|l| l.trim() != "```")
            .collect();
        examples.push(serde_json::from_str(&block.join("\n")).expect("a JSON example"));
    }
    examples
}

/// The seed's `/home/user/myapp…` paths, moved into `repo`.
fn into_repo(mut arguments: Value, repo: &TestRepo) -> Value {
    if let Some(path) = arguments["path"].as_str() {
        let rest = path.trim_start_matches("/home/user/myapp");
        arguments["path"] = json!(format!("{}{rest}", repo.path().display()));
    }
    arguments
}

fn connect(repo: &TestRepo, tools: &str) -> (crate::mcp::McpProcess, StdioClient) {
    let mut process = spawn_mcp(repo, &["--tools", tools]);
    let mut client = StdioClient {
        stdin: process.child.stdin.take().unwrap(),
        stdout: lines_of(process.child.stdout.take().unwrap()),
    };
    // ck speaks protocol 2024-11-05 (the seed's handshake).
    let init = client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {},
               "clientInfo": {"name": "client-name", "version": "1.0.0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05", "{init}");
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (process, client)
}

/// A tool call's result: the JSON the tool answered (its text content), and whether it is an
/// error.
fn call(client: &mut StdioClient, id: u64, name: &str, arguments: Value) -> (Value, bool) {
    let response = client.request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    let result = &response["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: no text content: {response}"));
    let value: Value = serde_json::from_str(text).unwrap_or_else(|_| json!(text));
    (value, result["isError"] == true)
}

#[test]
fn the_ck_profile_answers_every_seed_tool_with_the_seeds_examples() {
    let text = seed("003_");
    let repo = myapp();
    let (_process, mut client) = connect(&repo, "ck");
    let listed = client.request(2, "tools/list", json!({}));
    let mut names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    for tool in [
        "health_check",
        "hybrid_search",
        "index_status",
        "regex_search",
        "reindex",
        "semantic_search",
    ] {
        assert!(names.contains(&tool), "{tool}: {names:?}");
    }
    // Seed 001's tools of those names and the other context tools are not served.
    assert!(!names.contains(&"codebase_retrieval"), "{names:?}");

    let examples = ck_examples(&text);
    assert_eq!(examples.len(), 6, "one example per tool");
    let mut id = 10;
    for example in examples {
        let name = example["name"].as_str().unwrap();
        let arguments = into_repo(example["arguments"].clone(), &repo);
        id += 1;
        let (result, is_error) = call(&mut client, id, name, arguments.clone());
        assert!(!is_error, "{name} {arguments}: {result}");
        let fields: &[&str] = match name {
            "semantic_search" | "hybrid_search" | "regex_search" => {
                &["results", "text", "total", "has_more"]
            }
            "index_status" => &["indexed", "file_count", "chunk_count", "index_size_mb"],
            "reindex" => &["status", "files_indexed", "chunks_created", "time_seconds"],
            "health_check" => &["status", "version"],
            other => panic!("the seed has a tool {other} this test does not know"),
        };
        for field in fields {
            assert!(
                result.get(field).is_some(),
                "{name}: no `{field}`: {result}"
            );
        }
        match name {
            "regex_search" => {
                // `async fn \w+_handler` with 3 lines of context, under src/.
                let results = result["results"].as_array().unwrap();
                assert_eq!(results.len(), 2, "{result}");
                assert_eq!(results[0]["path"], "src/handlers.rs");
                assert!(
                    result["text"]
                        .as_str()
                        .unwrap()
                        .contains("src/handlers.rs:1:pub async fn login_handler"),
                    "{result}"
                );
            }
            "hybrid_search" => {
                // "timeout" over 0.7: the chunks holding the word, nothing else.
                let results = result["results"].as_array().unwrap();
                assert!(!results.is_empty(), "{result}");
                assert!(
                    results
                        .iter()
                        .all(|r| r["path"] == "src/net.rs" && r["score"].as_f64().unwrap() >= 0.7),
                    "{result}"
                );
            }
            "semantic_search" => {
                assert!(
                    result["results"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|r| r["score"].as_f64().unwrap() >= 0.75
                            && r["path"].as_str().unwrap().starts_with("src/")),
                    "{result}"
                );
            }
            "index_status" => assert_eq!(result["indexed"], true, "{result}"),
            "reindex" => {
                assert_eq!(result["status"], "success");
                // A forced reindex reads every file again.
                assert_eq!(result["files_indexed"], 4, "{result}");
            }
            "health_check" => assert_eq!(result["status"], "healthy"),
            _ => {}
        }
    }

    // Pages: `page_size` results, then the rest after `next_cursor`.
    let arguments = json!({"query": "connection", "path": repo.path(), "threshold": 0.0,
                           "page_size": 1});
    let (first, _) = call(&mut client, 50, "semantic_search", arguments.clone());
    assert_eq!(first["results"].as_array().unwrap().len(), 1, "{first}");
    assert!(first["total"].as_u64().unwrap() > 1, "{first}");
    assert_eq!(first["has_more"], true, "{first}");
    let mut next = arguments;
    next["cursor"] = first["next_cursor"].clone();
    let (second, _) = call(&mut client, 51, "semantic_search", next);
    assert_ne!(second["results"][0], first["results"][0], "{second}");

    // A path outside the workspace: INVALID_INPUT naming `path`.
    let (refused, is_error) = call(
        &mut client,
        52,
        "semantic_search",
        json!({"query": "error handling", "path": "/etc"}),
    );
    assert!(is_error, "{refused}");
    let refused = refused.to_string();
    assert!(refused.contains("INVALID_INPUT"), "{refused}");
    assert!(refused.contains("\"field\":\"path\""), "{refused}");
    assert!(refused.contains("outside the workspace"), "{refused}");
}

#[test]
fn the_context_engine_profile_answers_repo_search_with_the_seeds_fields() {
    let repo = myapp();
    let (_process, mut client) = connect(&repo, "context-engine");
    let (result, is_error) = call(
        &mut client,
        2,
        "repo_search",
        json!({"query": ["database connection", "connection pool"], "path_glob": "src/**",
               "not_glob": ["**/handlers.rs"], "kind": "function", "limit": 5, "per_path": 3,
               "rerank_enabled": true}),
    );
    assert!(!is_error, "{result}");
    for field in [
        "ok",
        "results",
        "total",
        "used_rerank",
        "search_time_ms",
        "query",
    ] {
        assert!(result.get(field).is_some(), "no `{field}`: {result}");
    }
    let results = result["results"].as_array().unwrap();
    assert_eq!(results[0]["path"], "src/db/pool.rs", "{result}");
    assert_eq!(results[0]["symbol"], "create_pool", "{result}");
    for hit in results {
        for field in [
            "score",
            "path",
            "start_line",
            "end_line",
            "snippet",
            "highlights",
            "components",
            "metadata",
        ] {
            assert!(hit.get(field).is_some(), "no `{field}`: {hit}");
        }
        let kind = hit["metadata"]["kind"].as_str().unwrap();
        assert!(kind == "function" || kind == "method", "{hit}");
        assert_ne!(hit["path"], "src/handlers.rs", "{hit}");
    }
    assert!(
        results[0]["highlights"][0]
            .as_str()
            .unwrap()
            .contains("<<connection>>"),
        "{result}"
    );
    // The other tools, with arguments of the seed's forms.
    repo.write(
        "tests/pool_test.rs",
        "#[test]\nfn create_pool_opens_connections() {\n    let pool = create_pool(\"db://\", 2);\n}\n",
    )
    .write("config/database.yaml", "database:\n  pool_size: 10\n  timeout_secs: 30\n")
    .write("src/app.rs", "use crate::db::pool::create_pool;\n\npub fn start() {\n    let pool = create_pool(\"db://main\", 4);\n}\n");
    repo.commit("Tests, config and the app");
    repo.write(
        "src/db/pool.rs",
        "/// A database connection pool.\npub struct ConnectionPool;\n",
    );
    repo.commit("Shrink the pool");
    // Searches never re-index behind the caller's back: the seed's indexing tool does.
    let (indexed, _) = call(&mut client, 10, "qdrant_index", json!({"recreate": false}));
    assert_eq!(indexed["stats"]["files_processed"], 4, "{indexed}");
    let (status, _) = call(&mut client, 12, "qdrant_status", json!({}));
    assert_eq!(
        (status["exists"].clone(), status["status"].clone()),
        (json!(true), json!("healthy")),
        "{status}"
    );
    assert!(status["count"].as_u64().unwrap() >= 7, "{status}");
    assert!(
        status["last_ingested_at"]["unix"].as_i64().unwrap() > 0,
        "{status}"
    );
    let (tests, _) = call(
        &mut client,
        4,
        "search_tests_for",
        json!({"query": "create pool", "limit": 5}),
    );
    assert!(
        tests["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] == "tests/pool_test.rs")
            && tests["total"].as_u64() > Some(0),
        "{tests}"
    );
    let (config, _) = call(
        &mut client,
        5,
        "search_config_for",
        json!({"query": ["pool size"]}),
    );
    assert_eq!(
        config["results"][0]["path"], "config/database.yaml",
        "{config}"
    );
    let (callers, _) = call(
        &mut client,
        6,
        "search_callers_for",
        json!({"query": "create_pool"}),
    );
    let caller_paths: Vec<&str> = callers["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(caller_paths.contains(&"src/app.rs"), "{callers}");
    assert!(caller_paths.contains(&"tests/pool_test.rs"), "{callers}");
    let (importers, _) = call(
        &mut client,
        7,
        "search_importers_for",
        json!({"query": "pool"}),
    );
    assert_eq!(importers["results"][0]["path"], "src/app.rs", "{importers}");
    assert_eq!(importers["results"][0]["start_line"], 1, "{importers}");
    let (history, _) = call(
        &mut client,
        8,
        "change_history_for_path",
        json!({"path": "src/db/pool.rs"}),
    );
    let summaries: Vec<&str> = history["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["summary"].as_str().unwrap())
        .collect();
    // Newest first, and only the commits that changed the file.
    assert_eq!(
        summaries,
        ["Shrink the pool", "Initial import"],
        "{history}"
    );
    assert_eq!(history["summary"]["path"], "src/db/pool.rs");
    assert_eq!(
        history["summary"]["last_modified"],
        history["commits"][0]["date"]
    );
    let (expanded, _) = call(
        &mut client,
        9,
        "expand_query",
        json!({"query": "python asyncio subprocess", "max_new": 2}),
    );
    assert_eq!(expanded["original_query"], "python asyncio subprocess");
    assert_eq!(expanded["decoder_used"], "fallback");
    assert_eq!(
        expanded["alternates"],
        json!(["python_asyncio_subprocess pythonAsyncioSubprocess"])
    );

    let (info, _) = call(
        &mut client,
        11,
        "info_request",
        json!({"info_request": "database connection pool", "include_explanation": true,
               "include_relationships": true, "language": "rust", "limit": 5}),
    );
    assert_eq!(info["search_strategy"], "hybrid+lang:rust", "{info}");
    assert_eq!(info["results"][0]["path"], "src/db/pool.rs", "{info}");
    assert!(
        info["results"][0]["information"]
            .as_str()
            .unwrap()
            .starts_with("Found 'ConnectionPool' in pool.rs (lines 1-"),
        "{info}"
    );
    // src/app.rs imports the pool module: its results say so.
    let app = info["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "src/app.rs")
        .unwrap_or_else(|| panic!("{info}"));
    assert_eq!(
        app["relationships"]["imports_from"],
        json!(["crate::db::pool::create_pool"]),
        "{info}"
    );
    assert_eq!(
        app["relationships"]["related_paths"],
        json!(["src/db/pool.rs"]),
        "{info}"
    );
    assert_eq!(info["primary_locations"][0], "src/db/pool.rs", "{info}");
    assert_eq!(
        info["query_understanding"]["detected_language"], "rust",
        "{info}"
    );
    assert!(
        info["confidence"]["top_score"].as_f64().unwrap() > 0.5,
        "{info}"
    );

    // A repository this server does not index.
    let (refused, is_error) = call(
        &mut client,
        3,
        "code_search",
        json!({"query": "authentication middleware", "repo": ["frontend", "backend"]}),
    );
    assert!(is_error, "{refused}");
    assert!(
        refused.to_string().contains("\"field\":\"repo\""),
        "{refused}"
    );
}

#[test]
fn profiles_sharing_a_tool_name_are_refused_together() {
    let repo = TestRepo::new();
    let output = Command::new(tollgate_bin())
        .args(["mcp", "--tools", "all,ck", "--repo"])
        .arg(repo.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`context` and `ck` cannot be served together"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}
