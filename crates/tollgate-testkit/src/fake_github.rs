//! A loopback server speaking the part of GitHub's REST API the Action uses, for tests.
//!
//! It keeps issue comments, review comments and check runs in memory the way GitHub does
//! (ids, authors, pagination with `Link` headers, annotations appended by updates), enforces
//! the rules that make real calls fail (at most 50 annotations a request; review comments only
//! on lines the test declares part of the diff, else the whole review is refused with 422; no
//! writes with a read-only token), records every request, and can be told to fail chosen
//! requests first (502, 429 with `Retry-After`, …). Replies to review comments
//! ([`State::add_review_reply`]), the GraphQL `reviewThreads` query (threads resolved with
//! [`State::resolve_thread`]) and collaborator permissions serve the Action's learnings. It listens on 127.0.0.1 only, serves one
//! connection at a time, and stops when dropped.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The login the fake's token posts as.
pub const BOT: &str = "github-actions[bot]";
/// The token the fake accepts.
pub const TOKEN: &str = "ghs_test_token_never_printed";

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, e.g. `/repos/o/r/issues/1/comments?per_page=100`.
    pub target: String,
    pub body: Value,
    pub authorization: Option<String>,
}

impl Recorded {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    pub fn is(&self, method: &str, path: &str) -> bool {
        self.method == method && self.path() == path
    }
}

/// A response to give instead of the normal one, to the first request that matches.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path: String,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
}

/// What the fake holds; tests read and seed it through [`FakeGitHub::state`].
#[derive(Debug, Default)]
pub struct State {
    pub requests: Vec<Recorded>,
    pub issue_comments: Vec<Value>,
    pub review_comments: Vec<Value>,
    pub reviews: Vec<Value>,
    pub check_runs: Vec<Value>,
    pub faults: Vec<Fault>,
    /// Lines that review comments may sit on, per path; `None` accepts any line.
    pub diff_lines: Option<BTreeMap<String, Vec<u32>>>,
    /// Refuse every write with 403, as a read-only token gets.
    pub read_only: bool,
    /// Pull requests by number: their head commit (`GET /repos/o/r/pulls/{n}`).
    pub pulls: BTreeMap<u64, String>,
    /// Resolved review threads: (id of the thread's first comment, who resolved it).
    pub resolved_threads: Vec<(u64, String)>,
    /// Repository permission per login (`GET /repos/o/r/collaborators/{login}/permission`);
    /// anyone else has `read`.
    pub permissions: BTreeMap<String, String>,
    next_id: u64,
}

/// A review comment's `created_at`: one second apart per id, so later comments are later.
fn created_at(id: u64) -> String {
    let seconds = id % 86_400;
    format!(
        "2026-01-01T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

impl State {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        1000 + self.next_id
    }

    /// Seeds a reply to review comment `to`, as GitHub lists it: same path and line, and the
    /// author's association with the repository (`OWNER`, `MEMBER`, `COLLABORATOR`,
    /// `CONTRIBUTOR`, `NONE`).
    pub fn add_review_reply(
        &mut self,
        to: u64,
        author: &str,
        association: &str,
        body: &str,
    ) -> u64 {
        let id = self.id();
        let parent = self
            .review_comments
            .iter()
            .find(|c| c["id"] == to)
            .cloned()
            .unwrap_or(Value::Null);
        self.review_comments.push(json!({
            "id": id,
            "in_reply_to_id": to,
            "user": {"login": author},
            "author_association": association,
            "path": parent["path"],
            "line": parent["line"],
            "commit_id": parent["commit_id"],
            "original_commit_id": parent["original_commit_id"],
            "original_line": parent["original_line"],
            "created_at": created_at(id),
            "body": body,
        }));
        id
    }

    /// Marks the thread that starts with review comment `first` resolved by `by`.
    pub fn resolve_thread(&mut self, first: u64, by: &str) {
        self.resolved_threads.push((first, by.to_string()));
    }

    /// Seeds a conversation comment, as if someone had posted it.
    pub fn add_issue_comment(&mut self, author: &str, body: &str) -> u64 {
        let id = self.id();
        self.issue_comments
            .push(json!({"id": id, "user": {"login": author}, "body": body}));
        id
    }
}

#[derive(Debug)]
pub struct FakeGitHub {
    url: String,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Items per page of a list, small so that pagination is exercised.
const PAGE_SIZE: usize = 2;
/// The server stops by itself after this long, whatever the test does.
const MAX_LIFETIME: Duration = Duration::from_secs(300);

impl FakeGitHub {
    /// Starts the server. Build the binary under test first: the lifetime clock starts here,
    /// and on a fresh checkout a build takes minutes.
    pub fn start() -> FakeGitHub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("non-blocking");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop, url) = (state.clone(), stop.clone(), url.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) && started.elapsed() < MAX_LIFETIME {
                    match listener.accept() {
                        Ok((stream, _)) => serve(stream, &state, &url),
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        FakeGitHub {
            url,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// The API base URL (`GITHUB_API_URL`).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>, base_url: &str) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let (status, headers, body) = {
        let mut state = state.lock().unwrap();
        state.requests.push(request.clone());
        respond(&mut state, &request, base_url)
    };
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut response = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    for (name, value) in headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(&body);
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.flush();
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut content_length = 0;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => content_length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body).ok()?;
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body).unwrap_or(Value::String("<not JSON>".into()))
    };
    Some(Recorded {
        method,
        target,
        body,
        authorization,
    })
}

type Response = (u16, Vec<(&'static str, String)>, Value);

fn error(status: u16, message: &str) -> Response {
    (status, Vec::new(), json!({ "message": message }))
}

fn respond(state: &mut State, request: &Recorded, base_url: &str) -> Response {
    if let Some(idx) = state
        .faults
        .iter()
        .position(|fault| request.is(fault.method, &fault.path))
    {
        let fault = state.faults.remove(idx);
        return (
            fault.status,
            fault.headers,
            json!({"message": "injected fault"}),
        );
    }
    if request.authorization.as_deref() != Some(&format!("Bearer {TOKEN}")) {
        return error(401, "Bad credentials");
    }
    if state.read_only && request.method != "GET" {
        return error(403, "Resource not accessible by integration");
    }
    let segments: Vec<&str> = request.path().trim_matches('/').split('/').collect();
    let page = query_page(&request.target);
    match (request.method.as_str(), segments.as_slice()) {
        ("GET", ["repos", _, _, "issues", _, "comments"]) => {
            paginate(&state.issue_comments, page, base_url, request.path())
        }
        ("POST", ["repos", _, _, "issues", _, "comments"]) => {
            let id = state.id();
            let comment = json!({"id": id, "user": {"login": BOT}, "body": request.body["body"]});
            state.issue_comments.push(comment.clone());
            (201, Vec::new(), comment)
        }
        ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            match state.issue_comments.iter_mut().find(|c| c["id"] == id) {
                Some(comment) => {
                    comment["body"] = request.body["body"].clone();
                    (200, Vec::new(), comment.clone())
                }
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", _, _, "pulls", number]) => {
            let number: u64 = number.parse().unwrap_or(0);
            match state.pulls.get(&number) {
                Some(sha) => (
                    200,
                    Vec::new(),
                    json!({"number": number, "head": {"sha": sha}}),
                ),
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", _, _, "pulls", _, "comments"]) => {
            paginate(&state.review_comments, page, base_url, request.path())
        }
        ("DELETE", ["repos", _, _, "pulls", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let before = state.review_comments.len();
            state.review_comments.retain(|c| c["id"] != id);
            if state.review_comments.len() < before {
                (204, Vec::new(), Value::Null)
            } else {
                error(404, "Not Found")
            }
        }
        ("PATCH", ["repos", _, _, "pulls", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            match state.review_comments.iter_mut().find(|c| c["id"] == id) {
                Some(comment) => {
                    comment["body"] = request.body["body"].clone();
                    (200, Vec::new(), comment.clone())
                }
                None => error(404, "Not Found"),
            }
        }
        ("POST", ["repos", _, _, "pulls", _, "reviews"]) => create_review(state, &request.body),
        ("GET", ["repos", _, _, "collaborators", login, "permission"]) => {
            let permission = state
                .permissions
                .get(*login)
                .cloned()
                .unwrap_or_else(|| "read".to_string());
            (200, Vec::new(), json!({"permission": permission}))
        }
        // The one GraphQL query the Action sends: a pull request's review threads.
        ("POST", ["graphql"]) => {
            if !request.body["query"]
                .as_str()
                .is_some_and(|query| query.contains("reviewThreads"))
            {
                return (
                    200,
                    Vec::new(),
                    json!({"errors": [{"message": "unknown query"}]}),
                );
            }
            let nodes: Vec<Value> = state
                .review_comments
                .iter()
                .filter(|c| c["in_reply_to_id"].is_null())
                .map(|c| {
                    let resolver = state
                        .resolved_threads
                        .iter()
                        .find(|(first, _)| c["id"] == *first)
                        .map(|(_, by)| by.clone());
                    // `latest:comments(last:1)`: the thread's newest comment.
                    let latest = state
                        .review_comments
                        .iter()
                        .filter(|r| r["id"] == c["id"] || r["in_reply_to_id"] == c["id"])
                        .filter_map(|r| r["created_at"].as_str())
                        .max()
                        .unwrap_or_default();
                    json!({
                        "isResolved": resolver.is_some(),
                        "resolvedBy": resolver.map(|login| json!({"login": login})),
                        "comments": {"nodes": [{"databaseId": c["id"]}]},
                        "latest": {"nodes": [{"createdAt": latest}]},
                    })
                })
                .collect();
            (
                200,
                Vec::new(),
                json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
                    "pageInfo": {"hasNextPage": false, "endCursor": null},
                    "nodes": nodes,
                }}}}}),
            )
        }
        ("POST", ["repos", _, _, "check-runs"]) => {
            let annotations = request.body["output"]["annotations"].clone();
            if annotations.as_array().map_or(0, Vec::len) > 50 {
                return error(422, "Only 50 annotations are allowed per request");
            }
            let id = state.id();
            let mut run = request.body.clone();
            run["id"] = json!(id);
            state.check_runs.push(run.clone());
            (201, Vec::new(), run)
        }
        ("PATCH", ["repos", _, _, "check-runs", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let added = request.body["output"]["annotations"].clone();
            if added.as_array().map_or(0, Vec::len) > 50 {
                return error(422, "Only 50 annotations are allowed per request");
            }
            match state.check_runs.iter_mut().find(|run| run["id"] == id) {
                Some(run) => {
                    if let (Some(list), Some(added)) = (
                        run["output"]["annotations"].as_array_mut(),
                        added.as_array(),
                    ) {
                        list.extend(added.iter().cloned());
                    }
                    (200, Vec::new(), run.clone())
                }
                None => error(404, "Not Found"),
            }
        }
        _ => error(404, "Not Found"),
    }
}

fn create_review(state: &mut State, body: &Value) -> Response {
    let comments = body["comments"].as_array().cloned().unwrap_or_default();
    // One bad anchor fails the whole review, as on GitHub.
    if let Some(lines) = &state.diff_lines {
        for comment in &comments {
            let path = comment["path"].as_str().unwrap_or_default();
            let on_diff = |key: &str| {
                comment[key].as_u64().is_none_or(|line| {
                    lines
                        .get(path)
                        .is_some_and(|allowed| allowed.contains(&(line as u32)))
                })
            };
            if !on_diff("line") || !on_diff("start_line") || comment["side"] != "RIGHT" {
                return error(
                    422,
                    "Unprocessable Entity: pull_request_review_thread.line must be part of the diff",
                );
            }
        }
    }
    let review_id = state.id();
    for comment in comments {
        let id = state.id();
        state.review_comments.push(json!({
            "id": id,
            "pull_request_review_id": review_id,
            "user": {"login": BOT},
            "author_association": "NONE",
            "path": comment["path"],
            "line": comment["line"],
            "start_line": comment["start_line"],
            "original_line": comment["line"],
            "original_start_line": comment["start_line"],
            "commit_id": body["commit_id"],
            "original_commit_id": body["commit_id"],
            "created_at": created_at(id),
            "body": comment["body"],
        }));
    }
    let review = json!({"id": review_id, "body": body["body"], "commit_id": body["commit_id"]});
    state.reviews.push(review.clone());
    (200, Vec::new(), review)
}

fn paginate(items: &[Value], page: usize, base_url: &str, path: &str) -> Response {
    let start = (page - 1) * PAGE_SIZE;
    let slice: Vec<Value> = items.iter().skip(start).take(PAGE_SIZE).cloned().collect();
    let mut headers = Vec::new();
    if start + PAGE_SIZE < items.len() {
        headers.push((
            "Link",
            format!(
                "<{base_url}{path}?per_page=100&page={}>; rel=\"next\"",
                page + 1
            ),
        ));
    }
    (200, headers, Value::Array(slice))
}

fn query_page(target: &str) -> usize {
    target
        .split_once('?')
        .and_then(|(_, query)| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("page="))
                .and_then(|page| page.parse().ok())
        })
        .filter(|page| *page >= 1)
        .unwrap_or(1)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}
