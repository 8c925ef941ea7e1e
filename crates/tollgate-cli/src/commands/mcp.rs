//! `tollgate mcp`: the MCP server, on stdio or streamable HTTP. Everything but reading the
//! environment and announcing the HTTP address happens in the `tollgate-mcp` library.

use anyhow::Context;
use tollgate_mcp::{BearerToken, HttpOptions, Server, ServerOptions};

use tollgate::config::{CONFIG_FILE_NAME, RawConfig, RawServer};

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
        Some(flag) => {
            let settings = server_settings(&args)?;
            let bind = match flag {
                Some(bind) => bind,
                None => {
                    let text = settings.bind.as_deref().unwrap_or(RawServer::DEFAULT_BIND);
                    text.parse()
                        .with_context(|| format!("[server] bind `{text}` is not an ADDR:PORT"))?
                }
            };
            let mut allowed_hosts = args.allowed_hosts;
            allowed_hosts.extend(settings.allowed_hosts.unwrap_or_default());
            let mut allowed_origins = args.allowed_origins;
            allowed_origins.extend(settings.allowed_origins.unwrap_or_default());
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
                allowed_hosts,
                allowed_origins,
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

/// `[server]` of the workspace's `tollgate.toml` under that of `--config FILE`.
fn server_settings(args: &McpArgs) -> anyhow::Result<RawServer> {
    let root = args.repo.clone().unwrap_or_else(|| ".".into());
    let own = root.join(CONFIG_FILE_NAME);
    let repository = if own.is_file() {
        RawConfig::from_file(&own)?.server
    } else {
        RawServer::default()
    };
    let operator = match &args.config {
        Some(path) => RawConfig::from_file(path)?.server,
        None => RawServer::default(),
    };
    Ok(RawServer::under_operator(
        repository,
        &own.display().to_string(),
        operator,
    )?)
}
