//! `tollgate mcp`: the MCP server, on stdio or streamable HTTP. Everything but reading the
//! environment and announcing the HTTP address happens in the `tollgate-mcp` library.

use anyhow::Context;
use tollgate_mcp::{BearerToken, HttpOptions, Server, ServerOptions};

use super::ExitStatus;
use crate::args::McpArgs;

/// The bearer token for `--http`, from the environment (never a flag: flags show up in `ps`).
const TOKEN_VAR: &str = "TOLLGATE_MCP_TOKEN";

pub fn run(args: McpArgs) -> anyhow::Result<ExitStatus> {
    let server = Server::new(ServerOptions {
        workspace: args.repo.clone().unwrap_or_else(|| ".".into()),
        workspace_named: args.repo.is_some(),
        profiles: args.tools.clone(),
        env: super::store::env(),
        call_timeout: std::time::Duration::from_secs(args.call_timeout_secs),
    })?;
    tracing::info!(
        workspace = %server.workspace().display(),
        tools = %server.tool_names().join(","),
        "starting the MCP server"
    );
    match args.http {
        None => tollgate_mcp::run_stdio(server).context("the MCP server stopped")?,
        Some(bind) => {
            // A token that is set is used or refused, never ignored.
            let bearer_token = match std::env::var(TOKEN_VAR) {
                Ok(token) => Some(
                    BearerToken::new(token).with_context(|| format!("{TOKEN_VAR} is refused"))?,
                ),
                Err(_) => None,
            };
            let options = HttpOptions {
                allow_remote: args.allow_remote,
                bearer_token,
                allowed_hosts: args.allowed_hosts,
                allowed_origins: args.allowed_origins,
                ..HttpOptions::new(bind)
            };
            tollgate_mcp::run_http(server, options, |addr| {
                // stderr: stdout stays free for data, and scripts read the chosen port here.
                eprintln!(
                    "tollgate mcp: listening on http://{addr}/mcp (health: http://{addr}/health)"
                );
            })
            .context("the MCP server stopped")?;
        }
    }
    Ok(ExitStatus::Pass)
}
