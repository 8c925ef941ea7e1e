//! `tollgate tool list|run`: the team's Lua tools, loaded and run by the core exactly as the
//! MCP server and the HTTP API do (same names refused, same sandbox and limits).

use anyhow::{Context, anyhow};
use serde_json::{Value, json};
use tollgate::usertools::UserTools;

use super::ExitStatus;
use crate::args::{ToolArgs, ToolCommand};

pub fn run(args: ToolArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .repo
        .canonicalize()
        .with_context(|| format!("cannot use the workspace {}", args.repo.display()))?;
    let tools = UserTools::open(
        &root,
        std::env::vars().collect(),
        tollgate_mcp::reserved_tool_names(),
    );
    match args.command {
        ToolCommand::List { json } => {
            let loaded = tools.loaded();
            if json {
                let listing = json!({
                    "tools": loaded.tools.iter().map(|tool| json!({
                        "name": tool.name,
                        "description": tool.description,
                        "script": tool.script,
                        "parameters": tool.parameters,
                    })).collect::<Vec<_>>(),
                    "broken": loaded.broken.iter().map(|broken| json!({
                        "script": broken.script,
                        "error": broken.error,
                    })).collect::<Vec<_>>(),
                });
                outln!("{}", serde_json::to_string_pretty(&listing)?);
            } else {
                if loaded.tools.is_empty() && loaded.broken.is_empty() {
                    eprintln!("no tools (write one in {})", tollgate::usertools::TOOLS_DIR);
                }
                for tool in &loaded.tools {
                    outln!("{}  {}  ({})", tool.name, tool.description, tool.script);
                }
                for broken in &loaded.broken {
                    outln!("broken  {}: {}", broken.script, broken.error);
                }
            }
            Ok(ExitStatus::Pass)
        }
        ToolCommand::Run { name, arguments } => {
            let arguments: Value = serde_json::from_str(&arguments)
                .map_err(|err| anyhow!("[INVALID_INPUT] --args is not JSON: {err}"))?;
            if !arguments.is_object() {
                return Err(anyhow!("[INVALID_INPUT] --args must be a JSON object"));
            }
            let result = tools
                .call(&name, arguments)
                .map_err(|err| anyhow!("[{}] {err}", err.code()))?;
            outln!("{}", serde_json::to_string_pretty(&result)?);
            Ok(ExitStatus::Pass)
        }
    }
}
