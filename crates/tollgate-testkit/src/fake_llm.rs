//! A loopback model server for tests: real HTTP on 127.0.0.1 speaking OpenAI chat completions
//! (`POST …/chat/completions`) and Anthropic Messages (`POST …/v1/messages`), with scripted
//! answers and a record of every request.
//!
//! ```ignore
//! let server = FakeLlm::start();
//! server.push(Reply::json(json!({"findings": []})));           // next answer, either protocol
//! server.push(Reply::status(429).header("retry-after", "0"));   // then a rate limit
//! // point the client at server.openai_base_url() or server.anthropic_base_url()
//! let sent = server.requests();                                 // what the client sent
//! assert!(sent[0].user_text().contains("<<<UNTRUSTED"));
//! ```
//!
//! Answers are taken in order from the queue [`FakeLlm::push`] fills; when it is empty the
//! [`FakeLlm::respond_with`] function answers (for concurrent callers whose order is unknown),
//! else a 500 says the script ran out. A [`Reply::json`] becomes the protocol's success shape:
//! an OpenAI `choices[0].message.content` string, or an Anthropic `tool_use` block (`input` =
//! the value) when the request offered a tool, else a text block. [`Reply::text`] sends raw
//! assistant text (malformed JSON, prose). Usage counts are estimated from the text (4 bytes a
//! token) unless [`Reply::usage`] sets them.
//!
//! Each connection is served on its own thread (so concurrency and timeouts are real) and
//! closed after one answer. The server stops when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    kind: ReplyKind,
    status: u16,
    headers: Vec<(String, String)>,
    delay: Duration,
    usage: Option<(u64, u64)>,
    model: Option<String>,
}

#[derive(Debug, Clone)]
enum ReplyKind {
    /// The assistant answers with this JSON.
    Json(Value),
    /// The assistant answers with this text.
    Text(String),
    /// A raw HTTP body (errors).
    Raw(String),
}

impl Reply {
    /// A successful answer whose content is `value`.
    pub fn json(value: Value) -> Reply {
        Reply::new(ReplyKind::Json(value), 200)
    }

    /// A successful answer whose content is `text` verbatim.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::new(ReplyKind::Text(text.into()), 200)
    }

    /// An error status with a JSON error body.
    pub fn status(status: u16) -> Reply {
        let body =
            json!({"error": {"type": "fake_error", "message": format!("fake status {status}")}});
        Reply::new(ReplyKind::Raw(body.to_string()), status)
    }

    /// An answer with this exact body (a broken protocol message).
    pub fn raw(status: u16, body: impl Into<String>) -> Reply {
        Reply::new(ReplyKind::Raw(body.into()), status)
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits this long before answering (to trip a client's timeout).
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Reported input and output tokens.
    pub fn usage(mut self, input: u64, output: u64) -> Reply {
        self.usage = Some((input, output));
        self
    }

    /// The model name the answer reports (default: the one requested).
    pub fn model(mut self, model: &str) -> Reply {
        self.model = Some(model.to_string());
        self
    }

    fn new(kind: ReplyKind, status: u16) -> Reply {
        Reply {
            kind,
            status,
            headers: Vec::new(),
            delay: Duration::ZERO,
            usage: None,
            model: None,
        }
    }
}

/// Which protocol a request used, by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Anthropic,
    Unknown,
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub protocol: Protocol,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The system prompt (OpenAI: the system message; Anthropic: `system`).
    pub fn system_text(&self) -> String {
        match self.protocol {
            Protocol::Anthropic => text_of(&self.body["system"]),
            _ => self
                .messages()
                .iter()
                .filter(|m| m["role"] == "system")
                .map(|m| text_of(&m["content"]))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Every user message's text, joined.
    pub fn user_text(&self) -> String {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"]))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Everything sent as text: system and every message.
    pub fn all_text(&self) -> String {
        let mut all = self.system_text();
        for message in self.messages() {
            all.push('\n');
            all.push_str(&text_of(&message["content"]));
        }
        all
    }

    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The model requested.
    pub fn model(&self) -> Option<&str> {
        self.body["model"].as_str()
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

type Responder = Box<dyn Fn(&Recorded) -> Reply + Send>;

#[derive(Default)]
struct State {
    queue: VecDeque<Reply>,
    requests: Vec<Recorded>,
    responder: Option<Responder>,
}

/// The server. Dropping it stops it.
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLlm").field("addr", &self.addr).finish()
    }
}

impl FakeLlm {
    pub fn start() -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || serve(stream, &state));
                }
            })
        };
        FakeLlm {
            addr,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL for an OpenAI-compatible client (`…/v1`; it appends `/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The base URL for an Anthropic client (it appends `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// Queues the next answer.
    pub fn push(&self, reply: Reply) -> &FakeLlm {
        self.lock().queue.push_back(reply);
        self
    }

    /// Answers requests once the queue is empty.
    pub fn respond_with(&self, responder: impl Fn(&Recorded) -> Reply + Send + 'static) {
        self.lock().responder = Some(Box::new(responder));
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.lock().requests.len()
    }

    /// Scripted answers not used yet.
    pub fn pending(&self) -> usize {
        self.lock().queue.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().to_string();
            if name == "content-length" {
                content_length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    let mut body = vec![0u8; content_length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let path = target.split('?').next().unwrap_or_default();
    let protocol = if path.ends_with("/chat/completions") {
        Protocol::OpenAi
    } else if path.ends_with("/v1/messages") {
        Protocol::Anthropic
    } else {
        Protocol::Unknown
    };
    let recorded = Recorded {
        method,
        target,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        protocol,
    };
    let reply = {
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        state.requests.push(recorded.clone());
        match state.queue.pop_front() {
            Some(reply) => reply,
            None => match &state.responder {
                Some(responder) => responder(&recorded),
                None => Reply::raw(
                    500,
                    "{\"error\": {\"message\": \"the fake model's script ran out\"}}",
                ),
            },
        }
    };
    if !reply.delay.is_zero() {
        std::thread::sleep(reply.delay);
    }
    let (status, body) = render(&recorded, &reply);
    let mut response = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reason(status),
        body.len()
    );
    for (name, value) in &reply.headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    response.push_str("\r\n");
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

fn render(request: &Recorded, reply: &Reply) -> (u16, String) {
    let content = match &reply.kind {
        ReplyKind::Raw(body) => return (reply.status, body.clone()),
        ReplyKind::Json(value) => Err(value),
        ReplyKind::Text(text) => Ok(text.clone()),
    };
    let model = reply
        .model
        .clone()
        .or_else(|| request.model().map(str::to_string))
        .unwrap_or_else(|| "fake-model".to_string());
    let content_text = match &content {
        Ok(text) => text.clone(),
        Err(value) => value.to_string(),
    };
    let (input, output) = reply.usage.unwrap_or_else(|| {
        (
            (request.all_text().len() as u64 / 4).max(1),
            (content_text.len() as u64 / 4).max(1),
        )
    });
    let body = match request.protocol {
        Protocol::Anthropic => {
            let tool = request.body["tools"][0]["name"].as_str();
            let block = match (&content, tool) {
                (Err(value), Some(tool)) => {
                    json!({"type": "tool_use", "id": "toolu_fake", "name": tool, "input": value})
                }
                _ => json!({"type": "text", "text": content_text}),
            };
            json!({
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": if tool.is_some() { "tool_use" } else { "end_turn" },
                "usage": {"input_tokens": input, "output_tokens": output},
            })
        }
        _ => json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content_text},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
        }),
    };
    (reply.status, body.to_string())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
