//! Streamable HTTP: the MCP endpoint on `/mcp`, a plain JSON API for scripts and agents that do
//! not speak MCP (seed 004's contract: `GET /tools/list` lists every registry entry, built-in or
//! not, and `POST /tools/{name}` calls any of them; seed 004's own built-ins `search`, `get` and
//! `sources` are registry entries like the others, answered with their bare result), and a
//! health check on `/health`.
//!
//! Safe by default for a server on a developer's machine: it binds loopback only (another
//! address needs both [`HttpOptions::allow_remote`] and a bearer token), checks `Host` against
//! loopback names and `Origin` against loopback origins plus an allowlist (a web page elsewhere
//! cannot reach it through DNS rebinding), and bounds request bodies. It is stateless: no session ids, every
//! request stands alone, which is what protocol 2026-07-28 requires and serves handshake-era
//! clients just as well.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::JsonObject;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use serde_json::{Value, json};

use tollgate::ErrorCode;

use crate::error::{INVALID_INPUT, ToolError};
use crate::server::Server;
use crate::tool::Surface;

/// The request lacks the bearer token, or carries another.
const UNAUTHORIZED: ErrorCode = ErrorCode::Unauthorized;
/// The request's `Host` or `Origin` is not served.
const FORBIDDEN: ErrorCode = ErrorCode::Forbidden;
/// The request body is over the limit.
const PAYLOAD_TOO_LARGE: ErrorCode = ErrorCode::PayloadTooLarge;
/// No served tool has the name in the path.
const TOOL_NOT_FOUND: ErrorCode = ErrorCode::ToolNotFound;
/// The tool exists but does not answer this HTTP method.
const METHOD_NOT_ALLOWED: ErrorCode = ErrorCode::MethodNotAllowed;
/// No route at the path.
const ROUTE_NOT_FOUND: ErrorCode = ErrorCode::NotFound;

/// Host names always accepted in the `Host` header.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser origins always accepted: pages served from this machine (a rebinding attack comes
/// from some other origin that resolves to a loopback address).
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on; port 0 picks a free port (see [`HttpServer::local_addr`]).
    pub bind: SocketAddr,
    /// Permit a non-loopback `bind`. Such a server also requires `bearer_token`.
    pub allow_remote: bool,
    /// When set, `/mcp` requires `Authorization: Bearer <token>`.
    pub bearer_token: Option<BearerToken>,
    /// `Host` values accepted besides the loopback names (for a remote bind: the names clients
    /// use to reach it).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call besides loopback ones, with scheme and port
    /// (`https://app.example.com:443`). Requests carrying any other `Origin` are refused;
    /// requests without one are not.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long a connection may take to send a request's headers, and stay idle between
    /// requests; then it is closed.
    pub header_read_timeout: Duration,
    /// Open connections from one peer address; one more is answered 503 and closed.
    pub max_connections_per_peer: usize,
    /// Open connections in all; one more is answered 503 and closed.
    pub max_connections: usize,
}

impl HttpOptions {
    /// Room for large diffs (upstream's CI reads up to tens of MiB) and for `scrub_secrets`'
    /// 1,000,000 characters in any encoding.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
    /// Ample for any client on a network, short enough that stalled connections do not pile up.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// Well under a process's usual 1,024 descriptors.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
    /// A quarter of the whole: one peer cannot take every connection.
    pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 128;

    /// What is risky but allowed in these options, one sentence each, for the front end to
    /// show at start-up.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.allow_remote && self.allowed_hosts.is_empty() {
            warnings.push(format!(
                "--allow-remote without --allowed-host: only requests whose Host is a loopback name or {} are served; pass --allowed-host with the name clients use",
                self.bind.ip()
            ));
        }
        warnings
    }

    /// Loopback-style defaults for `bind`: no token, no extra hosts or origins.
    pub fn new(bind: SocketAddr) -> HttpOptions {
        HttpOptions {
            bind,
            allow_remote: false,
            bearer_token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            max_connections_per_peer: Self::DEFAULT_MAX_CONNECTIONS_PER_PEER,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// A bearer token; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

/// A token too short to resist guessing: refused when the server starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the bearer token is {len} bytes; at least {min} are required. Generate one with `openssl rand -hex 32`",
    min = BearerToken::MIN_BYTES
)]
pub struct WeakToken {
    /// The length of the refused token (never the token).
    pub len: usize,
}

impl BearerToken {
    /// 32 bytes: 128 bits or more of entropy from any usual generator (hex, base64), out of
    /// reach of guessing over the network.
    pub const MIN_BYTES: usize = 32;

    /// Refuses a token shorter than [`Self::MIN_BYTES`] (blanks around it do not count).
    pub fn new(token: impl Into<String>) -> Result<BearerToken, WeakToken> {
        let token = token.into().trim().to_string();
        if token.len() < Self::MIN_BYTES {
            return Err(WeakToken { len: token.len() });
        }
        Ok(BearerToken(token))
    }

    /// Compares in time independent of where the first difference is.
    fn matches(&self, given: &str) -> bool {
        let (expected, given) = (self.0.as_bytes(), given.as_bytes());
        expected.len() == given.len()
            && expected
                .iter()
                .zip(given)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(****)")
    }
}

/// The HTTP server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    #[error(
        "refusing to listen on {addr}: it is not a loopback address. Pass --allow-remote (with a bearer token) to serve other machines"
    )]
    NotLoopback { addr: SocketAddr },
    #[error(
        "refusing to listen on {addr} without a bearer token: set TOLLGATE_MCP_TOKEN so that only clients holding it are served"
    )]
    TokenRequired { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the HTTP server failed: {0}")]
    Serve(#[source] std::io::Error),
}

/// An HTTP server bound to its address, not yet serving.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: Router,
    /// Ends the open response streams at shutdown (rmcp's cancellation token, kept as a closure
    /// so its type need not be named).
    close_streams: Box<dyn FnOnce() + Send>,
    limits: ConnectionLimits,
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Checks the options and binds the listener.
    pub async fn bind(server: Server, options: HttpOptions) -> Result<HttpServer, HttpError> {
        let addr = options.bind;
        for warning in options.warnings() {
            tracing::warn!("{warning}");
        }
        if !addr.ip().is_loopback() {
            if !options.allow_remote {
                return Err(HttpError::NotLoopback { addr });
            }
            if options.bearer_token.is_none() {
                return Err(HttpError::TokenRequired { addr });
            }
        }
        let mut allowed_hosts: Vec<String> =
            LOOPBACK_HOSTS.iter().map(|host| host.to_string()).collect();
        if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
            allowed_hosts.push(addr.ip().to_string());
        }
        allowed_hosts.extend(options.allowed_hosts.iter().cloned());
        let guard = Arc::new(Guard {
            hosts: allowed_hosts.clone(),
            origins: options.allowed_origins.clone(),
        });
        let guard_for_cors = Arc::clone(&guard);
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_allowed_hosts(allowed_hosts)
            .with_allowed_origins(
                LOOPBACK_ORIGINS
                    .iter()
                    .map(|origin| origin.to_string())
                    .chain(options.allowed_origins.iter().cloned()),
            )
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes);
        let cancel = config.cancellation_token.clone();
        let max_body_bytes = options.max_body_bytes;
        let close_streams: Box<dyn FnOnce() + Send> = Box::new(move || cancel.cancel());
        let api = Router::new()
            .route("/tools/list", get(list_tools).fallback(method_not_allowed))
            .route(
                "/tools/{name}",
                get(call_tool_get)
                    .post(move |server, name, body| call_tool(server, name, body, max_body_bytes))
                    .fallback(method_not_allowed),
            )
            .layer(DefaultBodyLimit::max(options.max_body_bytes))
            .with_state(server.clone());
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        // rmcp guards `/mcp` itself; ours, stricter (one Host, one Origin, each parsed as an
        // authority), runs first on `/mcp` and on the JSON API.
        let mut mcp = Router::new()
            .nest_service("/mcp", service)
            .merge(api)
            .layer(middleware::from_fn(move |request: Request, next: Next| {
                let guard = Arc::clone(&guard);
                async move { guard.check(request, next).await }
            }));
        if let Some(token) = options.bearer_token {
            let token = Arc::new(token);
            mcp = mcp.layer(middleware::from_fn(move |request: Request, next: Next| {
                let token = Arc::clone(&token);
                async move { require_token(&token, request, next).await }
            }));
        }
        let cors = Arc::clone(&guard_for_cors);
        let router = Router::new()
            .route("/health", get(health).fallback(method_not_allowed))
            .merge(mcp)
            .fallback(not_found)
            // Outermost: a browser's preflight carries no token, so it is answered before the
            // token is asked for, and only for origins the guard accepts.
            .layer(middleware::from_fn(move |request: Request, next: Next| {
                let guard = Arc::clone(&cors);
                async move { guard.cors(request, next).await }
            }));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| HttpError::Bind { addr, source })?;
        Ok(HttpServer {
            listener,
            router,
            close_streams,
            limits: ConnectionLimits {
                header_read_timeout: options.header_read_timeout,
                per_peer: options.max_connections_per_peer.max(1),
                total: options.max_connections.max(1),
            },
        })
    }

    /// The address actually bound (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> Result<SocketAddr, HttpError> {
        self.listener.local_addr().map_err(HttpError::Serve)
    }

    /// Serves until `shutdown` completes, then closes open response streams and returns. Each
    /// connection is bounded (see [`ConnectionLimits`]): headers and idle time by
    /// `header_read_timeout`, their number per peer and in all.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HttpError> {
        let HttpServer {
            listener,
            router,
            close_streams,
            limits,
        } = self;
        let open = Arc::new(OpenConnections::default());
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .keep_alive(true);
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(err) => {
                        // Out of descriptors, say: wait a little rather than spin.
                        tracing::warn!("accepting a connection failed: {err}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let Some(slot) = open.admit(peer.ip(), &limits) else {
                tokio::spawn(refuse_busy(stream));
                continue;
            };
            let _ = stream.set_nodelay(true);
            let service = hyper_util::service::TowerToHyperService::new(router.clone());
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                let _slot = slot;
                if let Err(err) = connection.await {
                    tracing::debug!("HTTP connection from {peer} ended: {err}");
                }
            });
        }
        close_streams();
        graceful.shutdown().await;
        Ok(())
    }
}

/// `GET /health`: the server is up (no authentication: it reveals only the version).
/// The bounds on connections (see [`HttpOptions`]).
#[derive(Debug, Clone, Copy)]
struct ConnectionLimits {
    header_read_timeout: Duration,
    per_peer: usize,
    total: usize,
}

/// Open connections, by peer and in all.
#[derive(Debug, Default)]
struct OpenConnections {
    counts: std::sync::Mutex<(usize, HashMap<IpAddr, usize>)>,
}

impl OpenConnections {
    /// A slot for a new connection from `peer`, `None` when a limit is reached.
    fn admit(self: &Arc<Self>, peer: IpAddr, limits: &ConnectionLimits) -> Option<ConnectionSlot> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *counts;
        let of_peer = by_peer.entry(peer).or_insert(0);
        if *total >= limits.total || *of_peer >= limits.per_peer {
            if *of_peer == 0 {
                by_peer.remove(&peer);
            }
            return None;
        }
        *of_peer += 1;
        *total += 1;
        Some(ConnectionSlot {
            open: Arc::clone(self),
            peer,
        })
    }
}

/// One admitted connection; its count is released on drop.
struct ConnectionSlot {
    open: Arc<OpenConnections>,
    peer: IpAddr,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut counts = self.open.counts.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *counts;
        *total = total.saturating_sub(1);
        if let Some(n) = by_peer.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
}

/// Answers a connection over the limits with 503 and closes it, without reading its request.
async fn refuse_busy(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = ToolError::new(
        ErrorCode::TooManyConnections,
        "too many open connections (from this address or in all); retry later",
    )
    .to_json()
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// Names `origin` as allowed on a response (and says the answer depends on it, for caches).
fn allow_origin(headers: &mut HeaderMap, origin: &str) {
    if let Ok(value) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-session-id, www-authenticate"),
        );
    }
}

/// A path this server has no route for, in the JSON error shape of every other answer.
async fn not_found(request: Request) -> Response {
    error_response(&ToolError::new(
        ROUTE_NOT_FOUND,
        format!(
            "no route `{}`: this server answers /mcp, /health, GET /tools/list and /tools/{{name}}",
            request.uri().path().escape_debug()
        ),
    ))
}

/// A route asked with a method it does not answer.
async fn method_not_allowed(request: Request) -> Response {
    error_response(&ToolError::new(
        METHOD_NOT_ALLOWED,
        format!(
            "{} is not answered on `{}` (GET /tools/list, GET or POST /tools/{{name}}, GET /health)",
            request.method(),
            request.uri().path().escape_debug()
        ),
    ))
}

async fn health() -> Response {
    let body = serde_json::json!({
        "status": "ok",
        "name": "tollgate",
        "version": tollgate::VERSION,
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn require_token(token: &BearerToken, request: Request, next: Next) -> Response {
    let authorized = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_credentials)
        .is_some_and(|given| token.matches(given));
    if authorized {
        return next.run(request).await;
    }
    let err = ToolError::new(
        UNAUTHORIZED,
        "this server requires `Authorization: Bearer <token>` (the value of TOLLGATE_MCP_TOKEN where it was started)",
    );
    let mut response = error_response(&err);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The credentials of an `Authorization` header using the Bearer scheme, whose name is
/// case-insensitive (RFC 9110, 11.1).
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim().split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
        .filter(|credentials| !credentials.is_empty())
}

/// `GET /tools/list`: every registry entry in seed 004's shape: name, description, `builtin`,
/// and its parameters as JSON Schema (plus the profile that serves it).
async fn list_tools(State(server): State<Server>) -> Response {
    let tools: Vec<Value> = server
        .registry()
        .served()
        .iter()
        .map(|entry| {
            let definition = entry.definition();
            json!({
                "name": &*entry.name,
                "description": definition.description.as_deref().unwrap_or_default(),
                "builtin": entry.builtin,
                "profile": entry.group.as_str(),
                "parameters": Value::Object(definition.input_schema.as_ref().clone()),
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({ "tools": tools }))
}

/// A JSON API body: a JSON object (an empty body is `{}`).
fn read_arguments(
    body: Result<Bytes, BytesRejection>,
    max_body_bytes: usize,
) -> Result<JsonObject, ToolError> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ToolError::new(
                PAYLOAD_TOO_LARGE,
                format!(
                    "the request body is over this server's limit of {max_body_bytes} bytes; send less (a smaller diff, fewer files)"
                ),
            )
        } else {
            ToolError::new(
                INVALID_INPUT,
                format!("the request body could not be read: {rejection}"),
            )
        }
    })?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(JsonObject::new());
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(arguments)) => Ok(arguments),
        Ok(_) => Err(ToolError::new(
            INVALID_INPUT,
            "the body must be a JSON object of the tool's arguments",
        )),
        Err(err) => Err(ToolError::new(
            INVALID_INPUT,
            format!("the body is not JSON: {err}"),
        )),
    }
}

/// `POST /tools/{name}`: the body is the tool's arguments; 200 with `{"result": …}` (seed
/// 004's own built-ins: the bare result), or the error shape with the status [`status_for`]
/// gives its code.
async fn call_tool(
    State(server): State<Server>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
    max_body_bytes: usize,
) -> Response {
    let arguments = match read_arguments(body, max_body_bytes) {
        Ok(arguments) => arguments,
        Err(err) => return error_response(&err),
    };
    answer(&server, &name, arguments).await
}

/// `GET /tools/{name}`: only for a tool that takes no arguments and says so (`sources`).
async fn call_tool_get(State(server): State<Server>, Path(name): Path<String>) -> Response {
    match server.registry().get(&name).map(|entry| entry.surface) {
        Some(Surface::HttpApi { get: true }) => answer(&server, &name, JsonObject::new()).await,
        Some(_) => error_response(&ToolError::new(
            METHOD_NOT_ALLOWED,
            format!("`{name}` is called with POST /tools/{name} and its arguments as a JSON body"),
        )),
        None => error_response(&unknown_tool(&server, &name)),
    }
}

async fn answer(server: &Server, name: &str, arguments: JsonObject) -> Response {
    let Some(surface) = server.registry().get(name).map(|entry| entry.surface) else {
        return error_response(&unknown_tool(server, name));
    };
    match server.call_plain(name, arguments).await {
        Some(Ok(result)) if surface == Surface::Everywhere => {
            json_response(StatusCode::OK, &json!({ "result": result }))
        }
        Some(Ok(result)) => json_response(StatusCode::OK, &result),
        Some(Err(err)) => error_response(&err),
        // Removed between the two looks (a user's script deleted meanwhile).
        None => error_response(&unknown_tool(server, name)),
    }
}

fn unknown_tool(server: &Server, name: &str) -> ToolError {
    let served: Vec<String> = server
        .registry()
        .served()
        .iter()
        .map(|entry| entry.name.to_string())
        .collect();
    ToolError::new(
        TOOL_NOT_FOUND,
        format!(
            "unknown tool `{name}`; this server serves: {} (GET /tools/list describes them)",
            served.join(", ")
        ),
    )
}

/// The HTTP status of an error, by its code: the one mapping for every error this server
/// answers over HTTP, exhaustive so a new code must choose. `*_NOT_FOUND` is 404 and
/// `LLM_NOT_CONFIGURED` 409 (the server's configuration, not the request, is what to change).
fn status_for(code: ErrorCode) -> StatusCode {
    use ErrorCode::*;
    match code {
        InvalidInput | PathOutsideWorkspace | InputTooLarge => StatusCode::BAD_REQUEST,
        Unauthorized => StatusCode::UNAUTHORIZED,
        Forbidden => StatusCode::FORBIDDEN,
        PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        Timeout => StatusCode::REQUEST_TIMEOUT,
        InvalidStateTransition | SessionBusy | IndexBusy | Conflict | LlmNotConfigured => {
            StatusCode::CONFLICT
        }
        LlmUnavailable | LlmBadResponse | LlmInvalidOutput => StatusCode::BAD_GATEWAY,
        Cancelled | TooManyConnections => StatusCode::SERVICE_UNAVAILABLE,
        StoreFull => StatusCode::INSUFFICIENT_STORAGE,
        FileNotFound | PlanNotFound | SessionNotFound | MemoryNotFound | IndexNotFound
        | ToolNotFound | NotFound => StatusCode::NOT_FOUND,
        IoError | ExecutionFailed | GitError | SerializationError | StoreError
        | StoreUnavailable | StoreVersionMismatch | IndexCorrupt | IndexError | EmbedderError
        | ScriptError | InternalError => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An error in the JSON error shape, with its status from [`status_for`].
fn error_response(err: &ToolError) -> Response {
    json_response(status_for(err.code()), &err.to_json())
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `Host` and `Origin` checks for the JSON API, matching what rmcp applies to `/mcp`.
#[derive(Debug)]
struct Guard {
    /// Accepted `Host` values: bare names, or `name:port`.
    hosts: Vec<String>,
    /// Accepted non-loopback origins.
    origins: Vec<String>,
}

/// Methods and request headers a browser may use across origins.
const CORS_METHODS: &str = "GET, POST, OPTIONS";
const CORS_HEADERS: &str =
    "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id";

impl Guard {
    /// CORS for the origins this server accepts (loopback pages and `--allowed-origin`): a
    /// preflight is answered 204 with what may be sent, and responses name the origin so the
    /// browser hands them to the page. Any other origin gets no CORS headers at all (and its
    /// requests are refused by [`Guard::check`]).
    async fn cors(&self, request: Request, next: Next) -> Response {
        let origin = request
            .headers()
            .get(header::ORIGIN)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let Some(origin) = origin else {
            return next.run(request).await;
        };
        let allowed = self.refusal(request.headers()).is_none();
        let preflight = request.method() == axum::http::Method::OPTIONS
            && request
                .headers()
                .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
        if preflight {
            if !allowed {
                return error_response(&ToolError::new(
                    FORBIDDEN,
                    self.refusal(request.headers()).unwrap_or_default(),
                ));
            }
            let mut response = StatusCode::NO_CONTENT.into_response();
            let headers = response.headers_mut();
            allow_origin(headers, &origin);
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(CORS_METHODS),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(CORS_HEADERS),
            );
            headers.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
            return response;
        }
        let mut response = next.run(request).await;
        if allowed {
            allow_origin(response.headers_mut(), &origin);
        }
        response
    }

    async fn check(&self, request: Request, next: Next) -> Response {
        match self.refusal(request.headers()) {
            None => next.run(request).await,
            Some(message) => error_response(&ToolError::new(FORBIDDEN, message)),
        }
    }

    fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        for name in [header::HOST, header::ORIGIN] {
            if headers.get_all(&name).iter().nth(1).is_some() {
                return Some(format!("the request has more than one {name} header"));
            }
        }
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok());
        let Some(host) = host else {
            return Some("the request has no Host header".to_string());
        };
        let Some(name) = host_name(host) else {
            return Some(format!(
                "Host `{}` is not a host name with an optional port",
                host.escape_debug()
            ));
        };
        if !self
            .hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name) || allowed.eq_ignore_ascii_case(host))
        {
            return Some(format!(
                "Host `{}` is not served (see --allowed-host)",
                host.escape_debug()
            ));
        }
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|value| value.to_str().ok());
        match origin {
            Some(origin) if !self.origin_allowed(origin) => Some(format!(
                "Origin `{}` is not allowed (see --allowed-origin)",
                origin.escape_debug()
            )),
            None if headers.contains_key(header::ORIGIN) => {
                Some("the Origin header is not text".to_string())
            }
            _ => None,
        }
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(scheme.as_str(), "http" | "https") {
            return false;
        }
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        let Some(name) = host_name(authority) else {
            return false;
        };
        let name = name.to_ascii_lowercase();
        if LOOPBACK_HOSTS.contains(&name.as_str()) {
            return true;
        }
        let with_port = |text: &str| -> String {
            let text = text.trim_end_matches('/').to_ascii_lowercase();
            let has_port = text.rsplit_once(':').is_some_and(|(_, port)| {
                !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
            });
            if has_port {
                text
            } else if text.starts_with("https://") {
                format!("{text}:443")
            } else {
                format!("{text}:80")
            }
        };
        let origin = with_port(origin);
        self.origins
            .iter()
            .any(|allowed| with_port(allowed) == origin)
    }
}

/// The host name of an authority (`name`, `name:port`, `[v6]`, `[v6]:port`), without brackets;
/// `None` when it is anything else: text after `]` that is not a port (`[::1]evil.com`), an
/// empty or non-numeric port, user info, a path, or characters no host name has.
fn host_name(authority: &str) -> Option<&str> {
    let port_ok =
        |port: &str| (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = authority.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        let address_ok = !address.is_empty()
            && address
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        let after_ok = after.is_empty() || after.strip_prefix(':').is_some_and(port_ok);
        return (address_ok && after_ok).then_some(address);
    }
    let (name, port) = match authority.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (authority, None),
    };
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    (name_ok && port.is_none_or(port_ok)).then_some(name)
}
