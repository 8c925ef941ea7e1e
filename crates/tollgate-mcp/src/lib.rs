//! Tollgate's MCP server: the core's operations as MCP tools, for coding agents.
//!
//! [`Server`] is an rmcp `ServerHandler` over one workspace. It serves the tools of the
//! [`Profiles`] it was started with, plus the utilities every profile gets (`tool_manifest`,
//! `get_workspace_info`, `scrub_secrets`). Each tool lives in its own file under `tools/`, turns
//! its JSON arguments into a core request, calls one core function and returns the core's
//! result: the structured content (matching the declared output schema) and a JSON text copy.
//!
//! Failures are tool results with `isError: true` whose text is upstream's error shape,
//! `{"error": {"code", "message", "details"}}`, with a stable code (`INVALID_INPUT`,
//! `FILE_NOT_FOUND`, `PATH_OUTSIDE_WORKSPACE`, `INTERNAL_ERROR`, …). Tools run on tokio's
//! blocking pool, so a panic inside one becomes an `INTERNAL_ERROR` result and the server
//! carries on.
//!
//! Front ends call [`run_stdio`] or [`run_http`], which own the runtime. Two transports:
//! [`serve_stdio`] (stdout carries only protocol messages; logs go to stderr
//! through `tracing`) and [`HttpServer`] (streamable HTTP on `/mcp`, stateless, with `/health`,
//! loopback by default, Host and Origin checked against DNS rebinding, bodies bounded, an
//! optional bearer token). Clients of protocol 2026-07-28 (stateless, no `initialize`) and of
//! the handshake era (2025-11-25 and earlier) are both served; the server keeps no state
//! between requests.

mod error;
mod http;
mod log;
mod profile;
mod registry;
mod run;
mod schema;
mod server;
mod stdio;
mod tool;
mod tools;
mod user_tools;

pub use http::{BearerToken, HttpError, HttpOptions, HttpServer};
pub use profile::{Profile, Profiles, UnknownProfile};
pub use run::{run_http, run_stdio};
pub use server::{Server, ServerError, ServerOptions, serve_stdio};

/// The names no user tool may take: every built-in tool's, and the HTTP API's `list`.
pub fn reserved_tool_names() -> Vec<String> {
    let mut names: Vec<String> = tools::builtins()
        .map(|entries| entries.iter().map(|entry| entry.name.to_string()).collect())
        .unwrap_or_default();
    names.extend(tools::RESERVED_NAMES.iter().map(|name| name.to_string()));
    names
}
