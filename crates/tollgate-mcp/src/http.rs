//! Streamable HTTP: the MCP endpoint on `/mcp` and a health check on `/health`.
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
use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;

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
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let mut mcp = Router::new().nest_service("/mcp", service);
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
