//! The streamable HTTP transport on a loopback port: health, MCP requests in both protocol
//! eras, and the guards (Host, Origin, bearer token, body size, loopback-only binding), spoken
//! as raw HTTP/1.1 so the tests see exactly what a client sends and gets.

use std::net::SocketAddr;

use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tollgate_mcp::{
    BearerToken, HttpError, HttpOptions, HttpServer, Profiles, Server, ServerOptions,
};

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    _workspace: TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn server(workspace: &TempDir) -> Server {
    server_of(workspace, Profiles::default())
}

fn server_of(workspace: &TempDir, profiles: Profiles) -> Server {
    Server::new(ServerOptions {
        workspace: workspace.path().to_path_buf(),
        workspace_named: true,
        profiles,
        env: Vec::new(),
        call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
    })
    .unwrap()
}

async fn start(configure: impl FnOnce(&mut HttpOptions)) -> Running {
    start_serving(Profiles::default(), configure).await
}

async fn start_serving(profiles: Profiles, configure: impl FnOnce(&mut HttpOptions)) -> Running {
    let workspace = tempfile::tempdir().unwrap();
    let mut options = HttpOptions::new("127.0.0.1:0".parse().unwrap());
    configure(&mut options);
    let http = HttpServer::bind(server_of(&workspace, profiles), options)
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(http.run(async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        stop: Some(stop),
        _workspace: workspace,
    }
}

/// A response: status, lower-cased headers, body (de-chunked).
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The JSON-RPC message in the body (plain JSON, or the first `data:` line of an SSE body).
    fn json(&self) -> Value {
        let text = if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .find_map(|line| line.strip_prefix("data:").map(str::trim))
                .filter(|data| !data.is_empty())
                .unwrap_or_else(|| panic!("no data in SSE body: {}", self.body))
        } else {
            self.body.as_str()
        };
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(key, value)| key == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        headers,
        body,
    }
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

/// A token of the shortest accepted length.
const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const AUTHORIZATION: &str = "Bearer 0123456789abcdef0123456789abcdef";

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

#[tokio::test]
async fn health_answers_without_credentials() {
    let running = start(|options| options.bearer_token = BearerToken::new(TOKEN).ok()).await;
    let response = request(running.addr, "GET", "/health", &[], "").await;
    assert_eq!(response.status, 200);
    let body: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["name"], "tollgate");
}

#[tokio::test]
async fn handshake_era_clients_are_served_statelessly() {
    let running = start(|_| {}).await;
    let response = request(running.addr, "POST", "/mcp", &[ACCEPT, JSON], &initialize()).await;
    assert_eq!(response.status, 200, "{}", response.body);
    assert!(response.header("mcp-session-id").is_none(), "no sessions");
    let result = &response.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "tollgate");

    // No session: the next request stands alone.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let response = request(
        running.addr,
        "POST",
        "/mcp",
        &[ACCEPT, JSON, ("MCP-Protocol-Version", "2025-11-25")],
        &list,
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body);
    let tools = response.json()["result"]["tools"].as_array().unwrap().len();
    assert_eq!(tools, 10, "the review profile's 10 tools");
}

#[tokio::test]
async fn stateless_clients_call_tools_with_per_request_metadata() {
    let running = start(|_| {}).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "scrub_secrets", "arguments": {"content": "plain"}, "_meta": meta}})
    .to_string();
    let response = request(
        running.addr,
        "POST",
        "/mcp",
        &[
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "scrub_secrets"),
        ],
        &call,
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body);
    let result = &response.json()["result"];
    assert_eq!(
        result["structuredContent"]["scrubbed_content"], "plain",
        "{result}"
    );
    assert_eq!(result["resultType"], "complete");
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let running = start(|options| {
        options.allowed_origins = vec!["https://app.example.com:443".to_string()];
    })
    .await;
    let post = |headers: Vec<(&'static str, &'static str)>| {
        let mut all = vec![ACCEPT, JSON];
        all.extend(headers);
        async move { request(running.addr, "POST", "/mcp", &all, &initialize()).await }
    };
    let rebinding = post(vec![("Host", "evil.example")]).await;
    assert_eq!(rebinding.status, 403, "{}", rebinding.body);
    let page = post(vec![("Origin", "http://evil.example")]).await;
    assert_eq!(page.status, 403, "{}", page.body);
    let lookalike = post(vec![("Origin", "https://app.example.com.evil.example")]).await;
    assert_eq!(lookalike.status, 403, "{}", lookalike.body);
    for (host, origin) in [
        ("localhost", "http://localhost:6274"),
        ("127.0.0.1", "http://127.0.0.1:3000"),
        ("localhost", "https://app.example.com"),
    ] {
        let allowed = post(vec![("Host", host), ("Origin", origin)]).await;
        assert_eq!(allowed.status, 200, "{origin}: {}", allowed.body);
    }
}

#[tokio::test]
async fn a_bearer_token_guards_the_mcp_endpoint() {
    let running = start(|options| options.bearer_token = BearerToken::new(TOKEN).ok()).await;
    let anonymous = request(running.addr, "POST", "/mcp", &[ACCEPT, JSON], &initialize()).await;
    assert_eq!(anonymous.status, 401);
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    let body: Value = serde_json::from_str(&anonymous.body).unwrap();
    assert_eq!(body["error"]["code"], "UNAUTHORIZED");
    let wrong = request(
        running.addr,
        "POST",
        "/mcp",
        &[
            ACCEPT,
            JSON,
            ("Authorization", "Bearer 0123456789abcdef0123456789abcdeF"),
        ],
        &initialize(),
    )
    .await;
    assert_eq!(wrong.status, 401);
    let right = request(
        running.addr,
        "POST",
        "/mcp",
        &[ACCEPT, JSON, ("Authorization", AUTHORIZATION)],
        &initialize(),
    )
    .await;
    assert_eq!(right.status, 200, "{}", right.body);
    // The scheme's name is case-insensitive; the token is not, and another scheme is refused.
    for (authorization, status) in [
        ("bearer 0123456789abcdef0123456789abcdef", 200),
        ("BEARER  0123456789abcdef0123456789abcdef", 200),
        ("Basic 0123456789abcdef0123456789abcdef", 401),
        ("Bearer", 401),
        ("Bearer ", 401),
        ("0123456789abcdef0123456789abcdef", 401),
    ] {
        let response = request(
            running.addr,
            "POST",
            "/mcp",
            &[ACCEPT, JSON, ("Authorization", authorization)],
            &initialize(),
        )
        .await;
        assert_eq!(
            response.status, status,
            "{authorization}: {}",
            response.body
        );
    }
}

#[test]
fn short_tokens_are_refused_and_remote_serving_without_a_host_warns() {
    let err = BearerToken::new("s3c").unwrap_err();
    assert_eq!(err.len, 3);
    assert!(err.to_string().contains("at least 32"), "{err}");
    assert!(
        BearerToken::new("  ").is_err(),
        "a blank token protects nothing"
    );
    assert!(BearerToken::new(&TOKEN[1..]).is_err());
    assert!(BearerToken::new(TOKEN).is_ok());
    // Blanks around a token are not part of it.
    assert_eq!(
        BearerToken::new(format!(" {TOKEN}\n")).unwrap(),
        BearerToken::new(TOKEN).unwrap()
    );

    let mut options = HttpOptions::new("0.0.0.0:8011".parse().unwrap());
    assert!(options.warnings().is_empty(), "loopback-only until allowed");
    options.allow_remote = true;
    let warnings = options.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("--allowed-host"), "{warnings:?}");
    options.allowed_hosts = vec!["tollgate.internal".to_string()];
    assert!(options.warnings().is_empty());
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let running = start(|options| options.max_body_bytes = 1024).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "scrub_secrets", "arguments": {"content": "x".repeat(4096)}}})
    .to_string();
    let response = request(
        running.addr,
        "POST",
        "/mcp",
        &[ACCEPT, JSON, ("MCP-Protocol-Version", "2025-11-25")],
        &call,
    )
    .await;
    assert_eq!(response.status, 413, "{}", response.body);

    // The plain API answers in its JSON error shape.
    let body = json!({"content": "x".repeat(4096)}).to_string();
    let response = request(running.addr, "POST", "/tools/scrub_secrets", &[JSON], &body).await;
    assert_eq!(response.status, 413, "{}", response.body);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let error: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(error["error"]["code"], "PAYLOAD_TOO_LARGE");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024 bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn the_plain_json_api_maps_not_found_and_not_configured_to_client_errors() {
    let running = start_serving(Profiles::all(), |_| {}).await;
    let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n";
    let cases = [
        (
            "/tools/load_plan",
            json!({"plan_id": "plan_missing"}),
            404,
            "PLAN_NOT_FOUND",
        ),
        (
            "/tools/get_review_status",
            json!({"session_id": "missing"}),
            404,
            "SESSION_NOT_FOUND",
        ),
        ("/tools/no_such_tool", json!({}), 404, "TOOL_NOT_FOUND"),
        (
            "/tools/review_changes",
            json!({"diff": diff}),
            409,
            "LLM_NOT_CONFIGURED",
        ),
    ];
    for (path, body, status, code) in cases {
        let response = request(running.addr, "POST", path, &[JSON], &body.to_string()).await;
        assert_eq!(response.status, status, "{path}: {}", response.body);
        assert_eq!(response.header("content-type"), Some("application/json"));
        let error: Value = serde_json::from_str(&response.body).unwrap();
        assert_eq!(error["error"]["code"], code, "{path}: {error}");
        if code == "LLM_NOT_CONFIGURED" {
            let message = error["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("TOLLGATE_LLM_PROVIDER"),
                "the fix: {message}"
            );
        }
    }
}

#[tokio::test]
async fn only_loopback_binds_unless_allowed_and_guarded() {
    let workspace = tempfile::tempdir().unwrap();
    let everywhere: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let err = HttpServer::bind(server(&workspace), HttpOptions::new(everywhere))
        .await
        .unwrap_err();
    assert!(matches!(err, HttpError::NotLoopback { .. }), "{err}");
    assert!(err.to_string().contains("--allow-remote"), "{err}");

    let mut options = HttpOptions::new(everywhere);
    options.allow_remote = true;
    let err = HttpServer::bind(server(&workspace), options.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, HttpError::TokenRequired { .. }), "{err}");
    assert!(err.to_string().contains("TOLLGATE_MCP_TOKEN"), "{err}");

    assert_eq!(
        format!("{:?}", BearerToken::new(TOKEN).unwrap()),
        "BearerToken(****)"
    );
}

#[tokio::test]
async fn the_plain_json_api_lists_and_calls_tools() {
    let running = start(|_| {}).await;
    let list = request(running.addr, "GET", "/tools/list", &[], "").await;
    assert_eq!(list.status, 200, "{}", list.body);
    let tools: Value = serde_json::from_str(&list.body).unwrap();
    let review = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "review_diff")
        .expect("review_diff is listed");
    assert_eq!(review["parameters"]["required"], json!(["diff"]));
    assert_eq!(review["builtin"], true);

    let ok = request(
        running.addr,
        "POST",
        "/tools/scrub_secrets",
        &[JSON],
        r#"{"content": "plain"}"#,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let body: Value = serde_json::from_str(&ok.body).unwrap();
    assert_eq!(body["result"]["scrubbed_content"], "plain");

    let cases = [
        ("/tools/scrub_secrets", "{}", 400, "INVALID_INPUT"),
        ("/tools/scrub_secrets", "[1]", 400, "INVALID_INPUT"),
        ("/tools/scrub_secrets", "{not json", 400, "INVALID_INPUT"),
        (
            "/tools/check_invariants",
            r#"{"diff": "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n", "invariants_path": "../../etc/passwd"}"#,
            400,
            "PATH_OUTSIDE_WORKSPACE",
        ),
        ("/tools/create_plan", "{}", 404, "TOOL_NOT_FOUND"),
    ];
    for (path, body, status, code) in cases {
        let response = request(running.addr, "POST", path, &[JSON], body).await;
        assert_eq!(response.status, status, "{path} {body}: {}", response.body);
        let error: Value = serde_json::from_str(&response.body).unwrap();
        assert_eq!(error["error"]["code"], code, "{path} {body}");
    }
}

#[tokio::test]
async fn the_plain_json_api_has_the_same_guards() {
    let running = start(|options| options.bearer_token = BearerToken::new(TOKEN).ok()).await;
    let anonymous = request(running.addr, "GET", "/tools/list", &[], "").await;
    assert_eq!(anonymous.status, 401);
    let token = ("Authorization", AUTHORIZATION);
    let rebinding = request(
        running.addr,
        "GET",
        "/tools/list",
        &[token, ("Host", "evil.example")],
        "",
    )
    .await;
    assert_eq!(rebinding.status, 403, "{}", rebinding.body);
    let page = request(
        running.addr,
        "GET",
        "/tools/list",
        &[token, ("Origin", "http://evil.example")],
        "",
    )
    .await;
    assert_eq!(page.status, 403, "{}", page.body);
    let local_page = request(
        running.addr,
        "GET",
        "/tools/list",
        &[
            token,
            ("Host", "[::1]:8011"),
            ("Origin", "http://localhost:6274"),
        ],
        "",
    )
    .await;
    assert_eq!(local_page.status, 200, "{}", local_page.body);
}

/// `Host` and `Origin` are parsed strictly (an authority is a name or a bracketed IPv6 address
/// and an optional port, nothing after it), and a request with two of either is refused,
/// on the JSON API and on `/mcp`.
#[tokio::test]
async fn hosts_and_origins_are_parsed_strictly_and_duplicates_refused() {
    let running = start(|_| {}).await;
    let addr = running.addr.to_string();
    let refused: Vec<Vec<(&str, &str)>> = vec![
        vec![("Host", "[::1]evil.com")],
        vec![("Host", "[::1]evil.com:80")],
        vec![("Host", "localhost:80x")],
        vec![("Host", "localhost:")],
        vec![("Host", "evil.com@localhost")],
        vec![("Host", addr.as_str()), ("Host", "evil.example")],
        vec![("Host", "evil.example"), ("Host", addr.as_str())],
        vec![("Origin", "http://[::1]evil.com")],
        vec![("Origin", "http://localhost.evil.com")],
        vec![("Origin", "http://localhost/x")],
        vec![
            ("Origin", "http://localhost:6274"),
            ("Origin", "http://evil.example"),
        ],
    ];
    for headers in refused {
        let listed = request(running.addr, "GET", "/tools/list", &headers, "").await;
        assert_eq!(
            listed.status, 403,
            "/tools/list {headers:?}: {}",
            listed.body
        );
        let mut with_json = headers.clone();
        with_json.extend([ACCEPT, JSON]);
        let mcp = request(running.addr, "POST", "/mcp", &with_json, &initialize()).await;
        assert!(
            mcp.status == 403 || mcp.status == 400,
            "/mcp {headers:?}: {} {}",
            mcp.status,
            mcp.body
        );
    }
    for headers in [
        vec![("Host", "[::1]:8011")],
        vec![("Host", "localhost")],
        vec![("Origin", "http://[::1]:6274")],
        vec![("Origin", "http://127.0.0.1")],
    ] {
        let listed = request(running.addr, "GET", "/tools/list", &headers, "").await;
        assert_eq!(listed.status, 200, "{headers:?}: {}", listed.body);
    }
}

/// Reads until the server closes the connection; `None` when it has not within `secs`.
async fn until_closed(stream: &mut tokio::net::TcpStream, secs: u64) -> Option<Vec<u8>> {
    let mut raw = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(secs),
        stream.read_to_end(&mut raw),
    )
    .await
    .ok()
    .map(|_| raw)
}

/// A connection that never finishes its headers, or sends nothing at all, is closed after the
/// header read timeout instead of being held open.
#[tokio::test]
async fn connections_that_never_finish_their_headers_are_closed() {
    let running = start(|options| {
        options.header_read_timeout = std::time::Duration::from_secs(1);
    })
    .await;
    let mut partial = tokio::net::TcpStream::connect(running.addr).await.unwrap();
    partial
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .await
        .unwrap();
    let mut silent = tokio::net::TcpStream::connect(running.addr).await.unwrap();
    assert!(
        until_closed(&mut partial, 30).await.is_some(),
        "a connection stuck in its headers stayed open"
    );
    assert!(
        until_closed(&mut silent, 30).await.is_some(),
        "a silent connection stayed open"
    );
    // And a keep-alive connection idle after its request.
    let mut idle = tokio::net::TcpStream::connect(running.addr).await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let answered = until_closed(&mut idle, 30).await.expect("closed when idle");
    assert!(
        String::from_utf8_lossy(&answered).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answered)
    );
}

/// Past the connections allowed per peer, a new one is answered 503 at once; when one closes,
/// the next is served again.
#[tokio::test]
async fn connections_past_the_per_peer_limit_are_answered_503() {
    let running = start(|options| options.max_connections_per_peer = 3).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tokio::net::TcpStream::connect(running.addr).await.unwrap());
    }
    // The server counts a connection once it has accepted it.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let refused = request(running.addr, "GET", "/health", &[], "").await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json()["error"]["code"], "TOO_MANY_CONNECTIONS");
    drop(held.pop());
    let mut status = 0;
    for _ in 0..50 {
        status = request(running.addr, "GET", "/health", &[], "")
            .await
            .status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "a freed slot serves again");
}

/// `POST /tools/search` obeys `--call-timeout-secs`: past it the answer is 408 `TIMEOUT`, and
/// the work it started (here the first index build of a workspace) is stopped, not left running.
#[tokio::test]
async fn builtins_time_out_and_stop_their_work() {
    let workspace = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(workspace.path()).unwrap();
    drop(repo);
    for n in 0..6000 {
        let dir = workspace.path().join(format!("src/m{}", n % 30));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{n}.rs")),
            format!("/// Item {n}.\npub fn item_{n}(x: u64) -> u64 {{\n    x * {n}\n}}\n"),
        )
        .unwrap();
    }
    let server = Server::new(ServerOptions {
        workspace: workspace.path().to_path_buf(),
        workspace_named: true,
        profiles: Profiles::default(),
        env: Vec::new(),
        call_timeout: std::time::Duration::from_millis(50),
    })
    .unwrap();
    let http = HttpServer::bind(server, HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(http.run(async move {
        let _ = stopped.await;
    }));
    let body = json!({"query": "item multiply", "source": "code"}).to_string();
    let answer = request(addr, "POST", "/tools/search", &[JSON], &body).await;
    assert_eq!(answer.status, 408, "{}", answer.body);
    assert_eq!(answer.json()["error"]["code"], "TIMEOUT", "{}", answer.body);
    // The build stops at its next check: no index is ever written (left running, the build
    // of these files writes one within seconds).
    let meta = workspace.path().join(".tollgate/index/meta.json");
    for _ in 0..100 {
        assert!(!meta.exists(), "the index build ran on after the timeout");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Seed 004: `GET /tools/list` lists every entry the server answers on `/tools/{name}`, with
/// `builtin` and its parameters as JSON Schema, including the three seed-004 built-ins served
/// under every profile (a new user found `search`, `get` and `sources` missing).
#[tokio::test]
async fn tools_list_names_every_entry_served_including_search_get_and_sources() {
    for profiles in ["review", "plan", "all"] {
        let running = start_serving(profiles.parse().unwrap(), |_| {}).await;
        let list = request(running.addr, "GET", "/tools/list", &[], "").await;
        assert_eq!(list.status, 200, "{}", list.body);
        let tools: Value = serde_json::from_str(&list.body).unwrap();
        let tools = tools["tools"].as_array().unwrap();
        for tool in tools {
            assert!(tool["name"].is_string(), "{tool}");
            assert!(tool["description"].is_string(), "{tool}");
            assert!(tool["builtin"].is_boolean(), "{tool}");
            assert_eq!(tool["parameters"]["type"], "object", "{tool}");
        }
        let named = |name: &str| {
            tools
                .iter()
                .find(|tool| tool["name"] == name)
                .unwrap_or_else(|| panic!("{profiles}: `{name}` is not listed: {tools:?}"))
        };
        let search = named("search");
        assert_eq!(search["builtin"], true);
        assert_eq!(search["parameters"]["required"], json!(["query"]));
        assert!(
            search["parameters"]["properties"]["mode"].is_object(),
            "{search}"
        );
        assert_eq!(named("get")["parameters"]["required"], json!(["id"]));
        assert!(named("sources")["parameters"]["properties"].is_object());
        // Every listed entry answers on its route (an empty body is `{}`): never 404 or 405.
        for tool in tools {
            let name = tool["name"].as_str().unwrap();
            if name != "sources" {
                continue;
            }
            let response = request(running.addr, "GET", &format!("/tools/{name}"), &[], "").await;
            assert_eq!(response.status, 200, "{name}: {}", response.body);
        }
    }
}
