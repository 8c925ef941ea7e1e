//! Streamable HTTP: the MCP endpoint on `/mcp`, a plain JSON API for scripts and agents that do
//! not speak MCP (`GET /tools/list`, `POST /tools/{name}`), and a health check on `/health`.
//!
//! Safe by default for a server on a developer's machine: it binds loopback only (another
//! address needs both [`HttpOptions::allow_remote`] and a bearer token), checks `Host` against
//! loopback names and `Origin` against loopback origins plus an allowlist (a web page elsewhere
//! cannot reach it through DNS rebinding), and bounds request bodies. It is stateless: no session ids, every
//! request stands alone, which is what protocol 2026-07-28 requires and serves handshake-era
//! clients just as well.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::model::JsonObject;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use serde_json::{Value, json};

use crate::error::{INVALID_INPUT, ToolError};
use crate::server::Server;

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
}

impl HttpOptions {
    /// Room for large diffs (upstream's CI reads up to tens of MiB) and for `scrub_secrets`'
    /// 1,000,000 characters in any encoding.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

    /// Loopback-style defaults for `bind`: no token, no extra hosts or origins.
    pub fn new(bind: SocketAddr) -> HttpOptions {
        HttpOptions {
            bind,
            allow_remote: false,
            bearer_token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// A bearer token; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    /// `None` for an empty or blank token, which would protect nothing.
    pub fn new(token: impl Into<String>) -> Option<BearerToken> {
        let token = token.into();
        (!token.trim().is_empty()).then_some(BearerToken(token))
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
        let close_streams: Box<dyn FnOnce() + Send> = Box::new(move || cancel.cancel());
        let api = Router::new()
            .route("/tools/list", get(list_tools))
            .route("/tools/{name}", post(call_tool))
            .layer(DefaultBodyLimit::max(options.max_body_bytes))
            // rmcp guards `/mcp` itself; the JSON API gets the same Host and Origin checks.
            .layer(middleware::from_fn(move |request: Request, next: Next| {
                let guard = Arc::clone(&guard);
                async move { guard.check(request, next).await }
            }))
            .with_state(server.clone());
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let mut mcp = Router::new().nest_service("/mcp", service).merge(api);
        if let Some(token) = options.bearer_token {
            let token = Arc::new(token);
            mcp = mcp.layer(middleware::from_fn(move |request: Request, next: Next| {
                let token = Arc::clone(&token);
                async move { require_token(&token, request, next).await }
            }));
        }
        let router = Router::new().route("/health", get(health)).merge(mcp);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| HttpError::Bind { addr, source })?;
        Ok(HttpServer {
            listener,
            router,
            close_streams,
        })
    }

    /// The address actually bound (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> Result<SocketAddr, HttpError> {
        self.listener.local_addr().map_err(HttpError::Serve)
    }

    /// Serves until `shutdown` completes, then closes open response streams and returns.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HttpError> {
        let close_streams = self.close_streams;
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                close_streams();
            })
            .await
            .map_err(HttpError::Serve)
    }
}

/// `GET /health`: the server is up (no authentication: it reveals only the version).
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
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|given| token.matches(given.trim()));
    if authorized {
        return next.run(request).await;
    }
    let body = serde_json::json!({
        "error": {
            "code": "UNAUTHORIZED",
            "message": "this server requires `Authorization: Bearer <token>` (the value of TOLLGATE_MCP_TOKEN where it was started)",
        }
    });
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(header::WWW_AUTHENTICATE, "Bearer")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_else(|_| StatusCode::UNAUTHORIZED.into_response())
}

/// `GET /tools/list`: every served tool as `tools/list` describes it.
async fn list_tools(State(server): State<Server>) -> Response {
    let tools: Vec<Value> = server
        .definitions()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .collect();
    json_response(StatusCode::OK, &json!({ "tools": tools }))
}

/// `POST /tools/{name}`: the body is the tool's arguments; 200 with `{"result": …}`, or the
/// error shape with 400 (bad arguments), 404 (no such tool), 408 (timeout) or 500.
async fn call_tool(
    State(server): State<Server>,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let arguments = if body.iter().all(u8::is_ascii_whitespace) {
        JsonObject::new()
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(arguments)) => arguments,
            Ok(_) => {
                let err = ToolError::new(
                    INVALID_INPUT,
                    "the body must be a JSON object of the tool's arguments",
                );
                return json_response(StatusCode::BAD_REQUEST, &err.to_json());
            }
            Err(err) => {
                let err = ToolError::new(INVALID_INPUT, format!("the body is not JSON: {err}"));
                return json_response(StatusCode::BAD_REQUEST, &err.to_json());
            }
        }
    };
    match server.call_plain(&name, arguments).await {
        Some(Ok(result)) => json_response(StatusCode::OK, &json!({ "result": result })),
        Some(Err(err)) => json_response(status_for(err.code()), &err.to_json()),
        None => {
            let served: Vec<&str> = server
                .definitions()
                .map(|tool| tool.name.as_ref())
                .collect();
            let body = json!({ "error": {
                "code": "TOOL_NOT_FOUND",
                "message": format!("unknown tool `{name}`; this server serves: {}", served.join(", ")),
            }});
            json_response(StatusCode::NOT_FOUND, &body)
        }
    }
}

/// The HTTP status of a failed call, by its code.
fn status_for(code: &str) -> StatusCode {
    match code {
        "INVALID_INPUT" | "FILE_NOT_FOUND" | "PATH_OUTSIDE_WORKSPACE" => StatusCode::BAD_REQUEST,
        "TIMEOUT" => StatusCode::REQUEST_TIMEOUT,
        "SESSION_NOT_FOUND" => StatusCode::NOT_FOUND,
        "INVALID_STATE_TRANSITION" | "SESSION_BUSY" => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
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

impl Guard {
    async fn check(&self, request: Request, next: Next) -> Response {
        match self.refusal(request.headers()) {
            None => next.run(request).await,
            Some(message) => {
                let body = json!({ "error": { "code": "FORBIDDEN", "message": message } });
                json_response(StatusCode::FORBIDDEN, &body)
            }
        }
    }

    fn refusal(&self, headers: &HeaderMap) -> Option<String> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok());
        let Some(host) = host else {
            return Some("the request has no Host header".to_string());
        };
        let name = host_name(host);
        if !self
            .hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name) || allowed.eq_ignore_ascii_case(host))
        {
            return Some(format!("Host `{host}` is not served (see --allowed-host)"));
        }
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|value| value.to_str().ok());
        match origin {
            Some(origin) if !self.origin_allowed(origin) => Some(format!(
                "Origin `{origin}` is not allowed (see --allowed-origin)"
            )),
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
        let name = host_name(authority).to_ascii_lowercase();
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

/// The host name of an authority (`name`, `name:port`, `[v6]`, `[v6]:port`), without brackets.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => authority,
    }
}
