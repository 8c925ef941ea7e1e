//! `tollgate mcp` as an agent runs it: the real binary over stdio (newline-delimited JSON-RPC)
//! and over streamable HTTP on a port it picks, reviewing a real `git diff`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{TestRepo, tollgate_bin};

/// How long any one answer may take; generous for a loaded CI machine, finite so a hang fails.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

const INVARIANTS: &str = r#"security:
  - id: no-eval
    rule: Never call eval() in application code
    paths: ["src/**/*.js"]
    severity: HIGH
    category: security
    action: deny
    deny: { regex: { pattern: "\\beval\\(" } }
"#;

/// A repository with an invariants file and an uncommitted change that calls `eval`, and the
/// `git diff` of that change.
fn repo_with_change() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write(".review-invariants.yml", INVARIANTS)
        .write("src/app.js", "const a = 1;\nmodule.exports = { a };\n");
    repo.commit("base");
    repo.write(
        "src/app.js",
        "const a = 1;\nconst b = eval(input);\nmodule.exports = { a, b };\n",
    );
    let output = Command::new("git")
        .args(["diff", "--no-color", "--no-ext-diff"])
        .current_dir(repo.path())
        .output()
        .expect("git runs");
    assert!(output.status.success());
    let diff = String::from_utf8(output.stdout).unwrap();
    assert!(diff.contains("+const b = eval(input);"), "{diff}");
    (repo, diff)
}

/// A `tollgate mcp` child, killed when dropped so a failing test leaves nothing running.
pub(crate) struct McpProcess {
    pub(crate) child: Child,
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn spawn_mcp(repo: &TestRepo, extra: &[&str]) -> McpProcess {
    let mut command = Command::new(tollgate_bin());
    command
        .arg("mcp")
        .arg("--repo")
        .arg(repo.path())
        .args(extra)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("TOLLGATE_") {
            command.env_remove(key);
        }
    }
    McpProcess {
        child: command.spawn().expect("tollgate mcp starts"),
    }
}

/// Lines a child writes, read on a thread so a silent child times out instead of hanging.
pub(crate) fn lines_of(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (send, receive) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

pub(crate) struct StdioClient {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: Receiver<String>,
}

impl StdioClient {
    pub(crate) fn send(&mut self, message: Value) {
        // One write: the pipe is unbuffered, and formatting straight into it costs a system
        // call per fragment (minutes for a large message).
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its response; every line on stdout must be JSON-RPC.
    pub(crate) fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .stdout
                .recv_timeout(ANSWER_TIMEOUT)
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a non-protocol line ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == id {
                return message;
            }
        }
    }
}

/// A stdio client of `process` past the MCP handshake (protocol 2025-11-25).
pub(crate) fn initialized_client(process: &mut McpProcess) -> StdioClient {
    let mut client = StdioClient {
        stdin: process.child.stdin.take().unwrap(),
        stdout: lines_of(process.child.stdout.take().unwrap()),
    };
    client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "e2e", "version": "1"}}),
    );
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    client
}

fn check_review(result: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    let review = &result["structuredContent"];
    let finding = review["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "no-eval")
        .unwrap_or_else(|| panic!("no invariant finding: {review}"));
    assert_eq!(finding["location"]["file"], "src/app.js");
    assert_eq!(finding["location"]["start_line"], 2);
    assert_eq!(review["should_fail"], true);
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, review, "the text copy is the structured result");
}

#[test]
fn stdio_initialize_list_and_review_a_real_diff() {
    let (repo, diff) = repo_with_change();
    let mut process = spawn_mcp(&repo, &[]);
    let mut client = StdioClient {
        stdin: process.child.stdin.take().unwrap(),
        stdout: lines_of(process.child.stdout.take().unwrap()),
    };
    let stderr = lines_of(process.child.stderr.take().unwrap());

    let init = client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "e2e", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "tollgate");
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = client.request(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"review_diff"), "{names:?}");
    assert!(names.contains(&"tool_manifest"), "{names:?}");

    let call = client.request(
        3,
        "tools/call",
        json!({"name": "review_diff",
               "arguments": {"diff": diff, "options": {"fail_on_severity": "HIGH"}}}),
    );
    check_review(&call["result"]);

    let hostile = client.request(
        4,
        "tools/call",
        json!({"name": "check_invariants",
               "arguments": {"diff": diff, "invariants_path": "../../etc/passwd"}}),
    );
    assert_eq!(hostile["result"]["isError"], true, "{hostile}");
    assert!(
        hostile["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("PATH_OUTSIDE_WORKSPACE")
    );

    // Closing stdin ends the server cleanly.
    drop(client);
    let status = process.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let logs: Vec<String> = stderr.try_iter().collect();
    assert!(!logs.iter().any(|line| line.contains("ERROR")), "{logs:?}");
}

#[test]
fn a_stdio_request_over_the_limit_is_answered_with_the_limit_and_the_session_goes_on() {
    let (repo, _) = repo_with_change();
    let mut process = spawn_mcp(&repo, &[]);
    let mut client = initialized_client(&mut process);

    // 17 MiB of diff in one line: over the 16 MiB stdio limit.
    let huge = "+x\n".repeat(17 * 1024 * 1024 / 3);
    let answer = client.request(
        2,
        "tools/call",
        json!({"name": "review_diff", "arguments": {"diff": huge}}),
    );
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("limit of 16777216 bytes (16 MiB)"),
        "{message}"
    );

    // The connection is intact: the next request is served.
    let list = client.request(3, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    drop(client);
    assert!(process.child.wait().unwrap().success());
}

#[test]
fn unknown_profiles_are_a_usage_error() {
    let (repo, _) = repo_with_change();
    let output = Command::new(tollgate_bin())
        .args(["mcp", "--tools", "review,planning", "--repo"])
        .arg(repo.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown tool profile `planning`"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

/// One HTTP/1.1 exchange; returns the status and the JSON body.
pub(crate) fn post(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
    let method = if body.is_empty() { "GET" } else { "POST" };
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// Starts `tollgate mcp --http 127.0.0.1:0` (plus `extra`) on `repo` and reads the address it
/// announces on stderr.
pub(crate) fn serve_http(repo: &TestRepo, extra: &[&str]) -> (McpProcess, SocketAddr) {
    let mut args = vec!["--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut process = spawn_mcp(repo, &args);
    let addr = announced_address(&mut process);
    (process, addr)
}

/// The address an HTTP server announces on stderr once it listens.
fn announced_address(process: &mut McpProcess) -> SocketAddr {
    let stderr = lines_of(process.child.stderr.take().unwrap());
    let announced = std::iter::from_fn(|| stderr.recv_timeout(ANSWER_TIMEOUT).ok())
        .find(|line| line.contains("listening on"))
        .expect("the server announces its address");
    announced
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("no address in {announced:?}"))
}

/// One raw HTTP/1.1 exchange: the status and the head (lower-cased) and body of the answer.
fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n"
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Issue 29: CORS for the origins the server accepts (a preflight answered before the token is
/// asked for), none for others; unknown paths and methods answer the JSON error body.
#[test]
fn http_answers_cors_for_allowed_origins_only_and_errors_in_json() {
    let (repo, _) = repo_with_change();
    let (_server, addr) = serve_http(&repo, &["--allowed-origin", "https://app.example.com"]);
    let preflight = |origin: &str| {
        exchange(
            addr,
            "OPTIONS",
            "/tools/list",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "content-type, authorization",
                ),
            ],
        )
    };
    let (status, head, _) = preflight("https://app.example.com");
    assert_eq!(status, 204, "{head}");
    assert!(
        head.contains("access-control-allow-origin: https://app.example.com"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-methods: get, post, options"),
        "{head}"
    );
    assert!(head.contains("authorization"), "{head}");
    let (status, head, body) = preflight("https://evil.example");
    assert_eq!(status, 403, "{head}");
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    assert!(body.contains("FORBIDDEN"), "{body}");

    let (status, head, _) = exchange(
        addr,
        "GET",
        "/tools/list",
        &[("Origin", "https://app.example.com")],
    );
    assert_eq!(status, 200);
    assert!(
        head.contains("access-control-allow-origin: https://app.example.com"),
        "{head}"
    );
    assert!(head.contains("vary: origin"), "{head}");
    let (status, head, _) = exchange(addr, "GET", "/tools/list", &[]);
    assert_eq!(status, 200);
    assert!(!head.contains("access-control-allow-origin"), "{head}");

    let (status, _, body) = exchange(addr, "GET", "/nothing/here", &[]);
    assert_eq!(status, 404);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
    let (status, _, body) = exchange(addr, "DELETE", "/tools/list", &[]);
    assert_eq!(status, 405);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "METHOD_NOT_ALLOWED", "{body}");
}

/// Issue 29: `[server]` in the workspace's file gives the bind address of a bare `--http`; the
/// hosts and origins that widen who may call come only from the operator (`--config FILE`).
#[test]
fn server_settings_come_from_the_files_the_rule_allows() {
    let (repo, _) = repo_with_change();
    repo.write("tollgate.toml", "[server]\nbind = \"127.0.0.1:0\"\n");
    let operator = repo.path().join("operator.toml");
    std::fs::write(
        &operator,
        "[server]\nallowed_origins = [\"https://app.example.com\"]\n",
    )
    .unwrap();
    let mut process = spawn_mcp(&repo, &["--http", "--config", operator.to_str().unwrap()]);
    let addr = announced_address(&mut process);
    assert_ne!(addr.port(), 7331, "the workspace's bind was used");
    let (status, head, _) = exchange(
        addr,
        "GET",
        "/tools/list",
        &[("Origin", "https://app.example.com")],
    );
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("access-control-allow-origin: https://app.example.com"),
        "{head}"
    );
    drop(process);

    repo.write(
        "tollgate.toml",
        "[server]\nallowed_origins = [\"https://evil.example\"]\n",
    );
    let refused = Command::new(tollgate_bin())
        .args(["mcp", "--http", "127.0.0.1:0", "--repo"])
        .arg(repo.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("[server] allowed_origins"), "{stderr}");
    assert!(stderr.contains("--config FILE"), "{stderr}");
}

#[test]
fn http_on_a_picked_port_reviews_a_real_diff() {
    let (repo, diff) = repo_with_change();
    let (_process, addr) = serve_http(&repo, &[]);
    assert_ne!(addr.port(), 0);

    let (status, body) = post(addr, "/health", &[], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["status"],
        "ok"
    );

    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "e2e", "version": "1"}}});
    let (status, body) = post(addr, "/mcp", &headers, &init.to_string());
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["protocolVersion"],
        "2025-11-25"
    );

    let versioned = [
        headers[0],
        headers[1],
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, body) = post(addr, "/mcp", &versioned, &list.to_string());
    assert_eq!(status, 200, "{body}");
    let tools: Value = serde_json::from_str(&body).unwrap();
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "review_diff")
    );

    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "review_diff", "arguments": {"diff": diff, "options": {"fail_on_severity": "HIGH"}}}});
    let (status, body) = post(addr, "/mcp", &versioned, &call.to_string());
    assert_eq!(status, 200, "{body}");
    check_review(&serde_json::from_str::<Value>(&body).unwrap()["result"]);
}

#[test]
fn http_refuses_a_non_loopback_bind_without_the_flag_and_a_token() {
    let (repo, _) = repo_with_change();
    let output = Command::new(tollgate_bin())
        .args(["mcp", "--http", "0.0.0.0:0", "--repo"])
        .arg(repo.path())
        .env_remove("TOLLGATE_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");

    let output = Command::new(tollgate_bin())
        .args(["mcp", "--http", "0.0.0.0:0", "--allow-remote", "--repo"])
        .arg(repo.path())
        .env_remove("TOLLGATE_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TOLLGATE_MCP_TOKEN"), "{stderr}");
}

#[test]
fn a_server_started_in_a_root_or_home_directory_needs_it_named() {
    let home = tempfile::tempdir().unwrap();
    // Without --repo (served when named: see the server's unit tests).
    let run = |dir: &Path| {
        Command::new(tollgate_bin())
            .arg("mcp")
            .current_dir(dir)
            .env("HOME", home.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for (dir, what) in [
        (Path::new("/"), "a file-system root"),
        (home.path(), "the home directory"),
    ] {
        let output = run(dir);
        assert_eq!(output.status.code(), Some(2), "{}", dir.display());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(what), "{stderr}");
        assert!(stderr.contains("--repo"), "{stderr}");
    }
}

#[test]
fn http_refuses_a_short_token_and_warns_of_a_remote_bind_without_hosts() {
    let (repo, _) = repo_with_change();
    let output = Command::new(tollgate_bin())
        .args(["mcp", "--http", "127.0.0.1:0", "--repo"])
        .arg(repo.path())
        .env("TOLLGATE_MCP_TOKEN", "abc")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TOLLGATE_MCP_TOKEN"), "{stderr}");
    assert!(stderr.contains("at least 32"), "{stderr}");
    assert!(
        !stderr.contains("abc"),
        "the token is never shown: {stderr}"
    );

    let mut command = Command::new(tollgate_bin());
    command
        .args(["mcp", "--http", "0.0.0.0:0", "--allow-remote", "--repo"])
        .arg(repo.path())
        .env("TOLLGATE_MCP_TOKEN", "0123456789abcdef0123456789abcdef")
        .env("NO_COLOR", "1")
        .env_remove("TOLLGATE_LOG")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let mut process = McpProcess {
        child: command.spawn().unwrap(),
    };
    let stderr = lines_of(process.child.stderr.take().unwrap());
    let seen: Vec<String> = std::iter::from_fn(|| stderr.recv_timeout(ANSWER_TIMEOUT).ok())
        .take_while(|line| !line.contains("listening on"))
        .collect();
    assert!(
        seen.iter()
            .any(|line| line.contains("WARN") && line.contains("--allowed-host")),
        "{seen:?}"
    );
}

/// The Python interpreter with PyPI's `mcp` client: `.ci/run` installs it and sets
/// `TOLLGATE_MCP_PYTHON`. Without it the test says so and returns, except under CI, where a
/// missing client is a failure.
fn python_client() -> Option<PathBuf> {
    let python = std::env::var_os("TOLLGATE_MCP_PYTHON").map(PathBuf::from);
    if python.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the Python MCP client (.ci/run does)"
        );
        eprintln!("skipped: TOLLGATE_MCP_PYTHON is not set (bash .ci/run sets it)");
    }
    python
}

/// Runs `tests/python/mcp_client_smoke.py` and returns the protocol version it negotiated.
fn python_smoke(python: &Path, mode: &str, server: &[&str], diff_file: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_client_smoke.py");
    let output = Command::new(python)
        .arg(&script)
        .arg(mode)
        .arg(server[0])
        .arg(diff_file)
        .args(&server[1..])
        .stdin(Stdio::null())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{mode} {server:?}: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let observed: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(
        observed["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("review_diff"))
    );
    observed["protocol_version"].as_str().unwrap().to_string()
}

#[test]
fn the_official_python_client_works_over_stdio_and_http_in_both_protocol_eras() {
    let Some(python) = python_client() else {
        return;
    };
    let (repo, diff) = repo_with_change();
    let scratch = tempfile::tempdir().unwrap();
    let diff_file = scratch.path().join("change.diff");
    std::fs::write(&diff_file, &diff).unwrap();
    let bin = tollgate_bin().to_str().unwrap().to_string();
    let repo_path = repo.path().to_str().unwrap().to_string();
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let stdio = ["stdio", bin.as_str(), repo_path.as_str()];
        assert_eq!(python_smoke(&python, mode, &stdio, &diff_file), version);
    }

    let mut process = spawn_mcp(&repo, &["--http", "127.0.0.1:0"]);
    let stderr = lines_of(process.child.stderr.take().unwrap());
    let url = std::iter::from_fn(|| stderr.recv_timeout(ANSWER_TIMEOUT).ok())
        .find_map(|line| {
            line.split_whitespace()
                .find(|word| word.starts_with("http://") && word.ends_with("/mcp"))
                .map(str::to_string)
        })
        .expect("the server announces its address");
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        assert_eq!(
            python_smoke(&python, mode, &[url.as_str()], &diff_file),
            version
        );
    }
}

/// The MCP server and the CLI, two processes, record step progress in one plan store at the same
/// time: every write of both lands, none is lost to the other's transaction.
#[test]
fn the_mcp_server_and_the_cli_share_one_plan_store_and_lose_nothing() {
    const STEPS: u32 = 24;
    let repo = TestRepo::new();
    repo.write("README.md", "# x\n");
    repo.commit("init");
    let dir = repo.path().to_str().unwrap();
    let steps: Vec<Value> = (1..=STEPS)
        .map(|n| json!({"step_number": n, "title": format!("Step {n}")}))
        .collect();
    let plan_file = repo.path().join("plan.json");
    std::fs::write(
        &plan_file,
        json!({"goal": "Shared store", "steps": steps}).to_string(),
    )
    .unwrap();
    let saved = crate::util::tollgate(&[
        "plan",
        "save",
        "--repo",
        dir,
        "--json",
        plan_file.to_str().unwrap(),
    ])
    .run();
    saved.assert_code(0);
    let plan_id = saved.json()["plan"]["id"].as_str().unwrap().to_string();

    let mut process = spawn_mcp(&repo, &["--tools", "plan"]);
    let mut client = initialized_client(&mut process);

    // The CLI takes the odd steps on a thread while the server takes the even ones.
    let cli = {
        let dir = dir.to_string();
        let plan_id = plan_id.clone();
        std::thread::spawn(move || {
            for n in (1..=STEPS).step_by(2) {
                let n = n.to_string();
                for action in ["start", "complete"] {
                    crate::util::tollgate(&["plan", "step", action, "--repo", &dir, &plan_id, &n])
                        .run()
                        .assert_code(0);
                }
            }
        })
    };
    let mut id = 2;
    for n in (2..=STEPS).step_by(2) {
        for tool in ["start_step", "complete_step"] {
            id += 1;
            let answer = client.request(
                id,
                "tools/call",
                json!({"name": tool, "arguments": {"plan_id": plan_id, "step_number": n}}),
            );
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
    }
    cli.join().expect("the CLI writer finished");

    // Both sides see all of it, through either front end.
    let progress = client.request(
        id + 1,
        "tools/call",
        json!({"name": "view_progress", "arguments": {"plan_id": plan_id}}),
    );
    let report = &progress["result"]["structuredContent"];
    assert_eq!(report["counts"]["completed"], STEPS, "{report}");
    assert_eq!(report["percentage"], 100.0);
    let from_cli =
        crate::util::tollgate(&["plan", "progress", "--repo", dir, "--json", &plan_id]).run();
    from_cli.assert_code(0);
    assert_eq!(from_cli.json()["counts"]["completed"], STEPS);
    drop(client);
    assert!(process.child.wait().unwrap().success());
}

/// `review_diff` and `check_invariants` quote the matched line; the secret on it is masked.
#[test]
fn review_diff_and_check_invariants_never_return_a_secret() {
    let (repo, _) = repo_with_change();
    let hidden = "Rk4uW8".repeat(6);
    let token = format!("gh{}_{hidden}", "p");
    repo.write(
        "src/app.js",
        &format!("const a = 1;\nconst b = eval(\"{token}\");\nmodule.exports = {{ a, b }};\n"),
    );
    let output = Command::new("git")
        .args(["diff", "--no-color", "--no-ext-diff"])
        .current_dir(repo.path())
        .output()
        .expect("git runs");
    let diff = String::from_utf8(output.stdout).unwrap();
    assert!(diff.contains(&token));

    let mut process = spawn_mcp(&repo, &[]);
    let mut client = initialized_client(&mut process);
    for (id, tool) in [(2, "review_diff"), (3, "check_invariants")] {
        let call = client.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": {"diff": diff}}),
        );
        let result = &call["result"];
        assert_eq!(result["isError"], false, "{tool}: {result}");
        let text = result.to_string();
        assert!(text.contains("no-eval"), "{tool}: {text}");
        assert!(text.contains("ghp_****"), "{tool}: {text}");
        assert!(!text.contains(&hidden), "{tool} leaks the secret: {text}");
    }
}
