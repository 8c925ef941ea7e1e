//! The knowledge store through the real binary (`tollgate mcp --tools memory`): every memory
//! tool of seeds 002 and 000 over MCP stdio and over HTTP `POST /tools/{name}`, seed 004's HTTP
//! built-ins (`/tools/search`, `/tools/get`, `/tools/sources`) over the code index and the
//! store, and `tollgate memory …`.

use serde_json::{Value, json};

use std::net::SocketAddr;

use crate::mcp::{StdioClient, lines_of, post, serve_http, spawn_mcp};
use crate::util::{TestRepo, tollgate};

struct Session {
    client: StdioClient,
    next_id: u64,
}

impl Caller for Session {
    /// Calls `tool` and returns its structured result, or the error text when `isError`.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        self.next_id += 1;
        let answer = self.client.request(
            self.next_id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let result = &answer["result"];
        if result["isError"] == true {
            return Err(result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string());
        }
        Ok(result["structuredContent"].clone())
    }
}

fn ids(result: &Value) -> Vec<i64> {
    result["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn every_context_tool_answers_over_mcp_stdio() {
    let repo = TestRepo::new();
    repo.write("README.md", "memory\n");
    repo.commit("base");
    let mut process = spawn_mcp(&repo, &["--tools", "memory"]);
    let client = StdioClient {
        stdin: process.child.stdin.take().unwrap(),
        stdout: lines_of(process.child.stdout.take().unwrap()),
    };
    let mut session = Session { client, next_id: 1 };
    session.client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "e2e", "version": "1"}}),
    );
    session
        .client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    session.next_id += 1;
    let list = session
        .client
        .request(session.next_id, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for tool in [
        "store_context",
        "search_context",
        "get_context_by_ids",
        "delete_context",
        "update_context",
        "list_threads",
        "get_statistics",
        "semantic_search_context",
        "fts_search_context",
        "hybrid_search_context",
        "store_context_batch",
        "update_context_batch",
        "delete_context_batch",
        "memory_store",
        "memory_find",
        "context_answer",
    ] {
        assert!(names.contains(&tool), "{tool} not served: {names:?}");
    }
    assert!(!names.contains(&"review_diff"), "{names:?}");

    every_memory_tool(&mut session);
}

/// What every memory tool answers, the same over MCP stdio and over HTTP `POST /tools/{name}`:
/// seed 002's context tools, then seed 000's `memory_store`, `memory_find` and `context_answer`
/// (no model configured), on one empty store.
fn every_memory_tool(session: &mut dyn Caller) {
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let stored = session.ok(
        "store_context",
        json!({"thread_id": "auth", "source": "agent",
               "text": format!("Rotate the session token {token} weekly"),
               "tags": ["Security"], "metadata": {"status": "open", "priority": 3}}),
    );
    assert_eq!(stored["secrets_scrubbed"], 1, "{stored}");
    let first = stored["context_id"].as_i64().unwrap();
    let batch = session.ok(
        "store_context_batch",
        json!({"entries": [
            {"thread_id": "auth", "source": "user", "text": "Login uses OAuth device flow",
             "metadata": {"status": "done", "priority": 8}},
            {"thread_id": "billing", "source": "user", "text": "Invoices are generated nightly"}
        ]}),
    );
    assert_eq!(batch["succeeded"], 2, "{batch}");
    let second = batch["results"][0]["context_id"].as_i64().unwrap();
    let third = batch["results"][1]["context_id"].as_i64().unwrap();

    let listed = session.ok("search_context", json!({"thread_id": "auth"}));
    assert_eq!(listed["count"], 2, "{listed}");
    let filtered = session.ok(
        "search_context",
        json!({"metadata_filters": [{"key": "priority", "operator": "gt", "value": 5}]}),
    );
    assert_eq!(ids(&filtered), [second]);

    let got = session.ok("get_context_by_ids", json!({"context_ids": [first]}));
    let text = got["results"][0]["text_content"].as_str().unwrap();
    assert!(text.contains("Rotate") && !text.contains(&token), "{text}");
    let missing = session
        .call("get_context_by_ids", json!({"context_ids": [first, 9999]}))
        .unwrap_err();
    assert!(
        missing.contains("MEMORY_NOT_FOUND") && missing.contains("context_ids"),
        "{missing}"
    );

    let fts = session.ok(
        "fts_search_context",
        json!({"query": "invoice", "highlight": true}),
    );
    assert_eq!(ids(&fts), [third]);
    assert!(
        fts["results"][0]["highlighted"]
            .as_str()
            .unwrap()
            .contains("<mark>")
    );
    let semantic = session.ok(
        "semantic_search_context",
        json!({"query": "OAuth login flow"}),
    );
    assert_eq!(ids(&semantic)[0], second, "{semantic}");
    let hybrid = session.ok(
        "hybrid_search_context",
        json!({"query": "session token", "thread_id": "auth"}),
    );
    assert_eq!(ids(&hybrid)[0], first, "{hybrid}");
    let bad = session
        .call(
            "fts_search_context",
            json!({"query": "x", "metadata_filters": [{"key": "k", "operator": "like"}]}),
        )
        .unwrap_err();
    assert!(bad.contains("metadata_filters[0].operator"), "{bad}");

    let updated = session.ok(
        "update_context",
        json!({"context_id": first, "metadata_patch": {"status": "closed"}}),
    );
    assert_eq!(updated["updated_fields"], json!(["metadata"]));
    let updated = session.ok(
        "update_context_batch",
        json!({"updates": [{"context_id": second, "tags": ["oauth"]}]}),
    );
    assert_eq!(updated["succeeded"], 1, "{updated}");

    let threads = session.ok("list_threads", json!({}));
    assert_eq!(threads["total_threads"], 2, "{threads}");
    let stats = session.ok("get_statistics", json!({}));
    assert_eq!(stats["total_entries"], 3, "{stats}");

    let deleted = session.ok("delete_context", json!({"context_ids": [third]}));
    assert_eq!(deleted["deleted_count"], 1);
    let deleted = session.ok("delete_context_batch", json!({"thread_ids": ["auth"]}));
    assert_eq!(deleted["deleted_count"], 2);
    let stats = session.ok("get_statistics", json!({}));
    assert_eq!(stats["total_entries"], 0, "{stats}");

    // Seed 000's memory tools, on the same store.
    let note = session.ok(
        "memory_store",
        json!({"information": format!("Pool database connections; the admin key is {token}"),
               "metadata": {"kind": "pattern", "language": "python", "path": "db/pool.py",
                            "tags": ["db"], "priority": 8, "topic": "performance"}}),
    );
    assert_eq!(
        (note["ok"].clone(), note["secrets_scrubbed"].clone()),
        (json!(true), json!(1)),
        "{note}"
    );
    session.ok(
        "memory_store",
        json!({"information": "Database migrations run at deploy time",
               "metadata": {"kind": "explanation", "language": "python", "priority": 2}}),
    );
    let found = session.ok(
        "memory_find",
        json!({"query": "database connections", "language": "python", "priority_min": 5}),
    );
    assert_eq!(found["total"], 1, "{found}");
    let hit = &found["results"][0];
    assert_eq!(hit["id"], note["id"]);
    assert_eq!(hit["metadata"]["path"], "db/pool.py");
    assert_eq!(hit["metadata"]["tags"], json!(["db"]));
    assert!(
        !hit["information"].as_str().unwrap().contains(&token),
        "{hit}"
    );
    assert!(
        hit["highlights"][0]
            .as_str()
            .unwrap()
            .contains("<<database>>"),
        "{hit}"
    );
    let bad = session
        .call("memory_find", json!({"query": "x", "kind": "recipe"}))
        .unwrap_err();
    assert!(bad.contains("kind") && bad.contains("snippet"), "{bad}");
    let threads = session.ok("list_threads", json!({}));
    assert_eq!(threads["threads"][0]["thread_id"], "memory", "{threads}");
    // No model is configured for this server.
    let no_model = session
        .call(
            "context_answer",
            json!({"query": "How are connections pooled?"}),
        )
        .unwrap_err();
    assert!(no_model.contains("LLM_NOT_CONFIGURED"), "{no_model}");
}

/// A way to call a tool: its structured result, or its error as text (code, message, field).
trait Caller {
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String>;

    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        self.call(tool, arguments)
            .unwrap_or_else(|err| panic!("{tool} failed: {err}"))
    }
}

/// The HTTP API's `POST /tools/{name}`.
struct HttpCaller {
    addr: SocketAddr,
}

impl Caller for HttpCaller {
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let (status, answer) = post(
            self.addr,
            &format!("/tools/{tool}"),
            &[("Content-Type", "application/json")],
            &arguments.to_string(),
        );
        let answer: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        if status == 200 {
            Ok(answer["result"].clone())
        } else {
            Err(format!("HTTP {status}: {answer}"))
        }
    }
}

#[test]
fn every_memory_tool_answers_over_http() {
    let repo = TestRepo::new();
    repo.write("README.md", "memory\n");
    repo.commit("base");
    let (_process, addr) = serve_http(&repo, &["--tools", "memory"]);
    every_memory_tool(&mut HttpCaller { addr });
}

#[test]
fn the_cli_stores_searches_and_deletes_in_the_workspace_store() {
    let repo = TestRepo::new();
    let dir = repo.path().to_str().unwrap().to_string();
    let memory = |args: &[&str]| {
        let mut all = vec!["memory", "--repo", dir.as_str(), "--json"];
        all.extend_from_slice(args);
        tollgate(&all).run()
    };
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let stored = tollgate(&[
        "memory",
        "--repo",
        &dir,
        "--json",
        "store",
        "--thread",
        "ops",
        "--tag",
        "deploy",
        "--metadata",
        r#"{"priority": 7}"#,
        "-",
    ])
    .stdin(format!("Deploys need the {token} token and a green canary"))
    .run();
    stored.assert_code(0);
    assert_eq!(stored.json()["secrets_scrubbed"], 1, "{}", stored.stdout);
    let id = stored.json()["context_id"].as_i64().unwrap();
    memory(&[
        "store",
        "--thread",
        "notes",
        "--source",
        "agent",
        "Canary dashboards live in Grafana",
    ])
    .assert_code(0);

    let found = memory(&[
        "search",
        "canary",
        "--mode",
        "fts",
        "--where",
        r#"{"key": "priority", "operator": "gte", "value": 5}"#,
    ]);
    found.assert_code(0);
    let results = found.json()["results"].clone();
    assert_eq!(results.as_array().unwrap().len(), 1, "{results}");
    assert_eq!(results[0]["id"], id);
    assert!(!found.stdout.contains(&token));
    let hybrid = memory(&["search", "grafana dashboards"]);
    assert_eq!(
        hybrid.json()["results"][0]["thread_id"],
        "notes",
        "{}",
        hybrid.stdout
    );
    let listed = memory(&["find", "--thread", "ops"]);
    assert_eq!(listed.json()["count"], 1);
    let got = memory(&["get", &id.to_string()]);
    assert_eq!(got.json()["results"][0]["tags"], json!(["deploy"]));
    let threads = memory(&["threads"]);
    assert_eq!(threads.json()["total_threads"], 2);

    // Bad input: exit 2 with the code and the field.
    let missing = memory(&["get", "999"]);
    missing.assert_code(2);
    assert!(
        missing.stderr.contains("MEMORY_NOT_FOUND")
            && missing.stderr.contains("IDS: no memory entry has id 999"),
        "{}",
        missing.stderr
    );
    let bad = memory(&[
        "search",
        "x",
        "--where",
        r#"{"key": "p", "operator": "like", "value": 1}"#,
    ]);
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("--where (#1, operator)"),
        "{}",
        bad.stderr
    );
    memory(&["delete", "--source", "user"]).assert_code(2);

    let deleted = memory(&["delete", "--thread", "ops", "--thread", "notes"]);
    assert_eq!(deleted.json()["deleted_count"], 2, "{}", deleted.stdout);
    assert_eq!(memory(&["stats"]).json()["total_entries"], 0);
    // Text output for people.
    let text = tollgate(&["memory", "--repo", &dir, "stats"]).run();
    text.assert_code(0);
    assert!(text.stdout.contains("entries: 0"), "{}", text.stdout);
}

#[test]
fn http_search_get_and_sources_cover_code_and_memory() {
    let repo = TestRepo::new();
    repo.write(
        "src/billing.rs",
        "/// Computes the invoice total.\npub fn invoice_total(lines: &[u64]) -> u64 {\n    lines.iter().sum()\n}\n",
    );
    repo.commit("base");
    let dir = repo.path().to_str().unwrap().to_string();
    tollgate(&[
        "memory",
        "--repo",
        &dir,
        "store",
        "--thread",
        "billing",
        "Invoice totals exclude refunds since March",
    ])
    .run()
    .assert_code(0);
    tollgate(&["index", "--repo", &dir]).run().assert_code(0);

    let (_process, addr) = serve_http(&repo, &["--tools", "memory"]);
    let call = |path: &str, body: Value| -> (u16, Value) {
        let text = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let (status, answer) = post(addr, path, &[("Content-Type", "application/json")], &text);
        (status, serde_json::from_str(&answer).unwrap_or(Value::Null))
    };

    let (status, sources) = call("/tools/sources", Value::Null);
    assert_eq!(status, 200, "{sources}");
    let names: Vec<&str> = sources["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|source| source["source"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["code", "memory:billing"], "{sources}");
    assert_eq!(sources["sources"][1]["document_count"], 1);

    let (status, found) = call("/tools/search", json!({"query": "invoice total"}));
    assert_eq!(status, 200, "{found}");
    let kinds: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["source"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"code") && kinds.contains(&"memory:billing"),
        "{found}"
    );
    for hit in found["results"].as_array().unwrap() {
        for field in ["id", "source", "source_id", "title", "score", "snippet"] {
            assert!(!hit[field].is_null(), "{field} missing in {hit}");
        }
    }
    let (_, memory_only) = call(
        "/tools/search",
        json!({"query": "refunds", "mode": "hybrid", "source": "memory:billing", "limit": 3}),
    );
    let hit = &memory_only["results"][0];
    assert_eq!(hit["source"], "memory:billing", "{memory_only}");
    let (status, document) = call("/tools/get", json!({"id": hit["id"]}));
    assert_eq!(status, 200, "{document}");
    assert!(document["body"].as_str().unwrap().contains("refunds"));
    let (_, code_only) = call(
        "/tools/search",
        json!({"query": "invoice_total", "source": "code"}),
    );
    let code_id = code_only["results"][0]["id"].as_str().unwrap().to_string();
    let (status, document) = call("/tools/get", json!({"id": code_id}));
    assert_eq!(status, 200, "{document}");
    assert!(
        document["body"]
            .as_str()
            .unwrap()
            .contains("fn invoice_total"),
        "{document}"
    );

    let (status, error) = call("/tools/get", json!({"id": "memory:999"}));
    assert_eq!(status, 404, "{error}");
    let (status, error) = call("/tools/search", json!({"query": "x", "mode": "fuzzy"}));
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["code"], "INVALID_INPUT");
    // The other tools stay reachable by name.
    let (status, stats) = call("/tools/get_statistics", json!({}));
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["result"]["total_entries"], 1);
}

/// Stored text is anyone's: the CLI's human output shows its control characters escaped (as
/// stderr does), so an entry cannot clear the terminal or hide a line.
#[test]
fn human_output_shows_stored_control_characters_escaped() {
    let repo = TestRepo::new();
    repo.write("README.md", "memory\n");
    repo.commit("base");
    let dir = repo.path().to_str().unwrap().to_string();
    tollgate(&[
        "memory",
        "--repo",
        &dir,
        "store",
        "--thread",
        "ops",
        "deploy \u{1b}[2J notes\rhidden",
    ])
    .run()
    .assert_code(0);
    for args in [
        vec!["get", "1"],
        vec!["find"],
        vec!["search", "deploy", "--mode", "fts"],
    ] {
        let mut all = vec!["memory", "--repo", dir.as_str()];
        all.extend(args.iter().copied());
        let run = tollgate(&all).run();
        run.assert_code(0);
        assert!(
            !run.stdout.contains('\u{1b}') && !run.stdout.contains('\r'),
            "{args:?} printed a control character raw: {:?}",
            run.stdout
        );
        assert!(run.stdout.contains("\\u{1b}"), "{args:?}: {:?}", run.stdout);
    }
}
