//! `tool_manifest`: every served tool with its version, annotations and schemas (upstream's
//! capability discovery, with the schemas upstream left to `tools/list`).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::server::protocol_versions;
use crate::tool::{Group, Hints, NoInput, Tool, ToolContext};

pub(crate) struct ToolManifest;

/// The server's tools.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Manifest {
    /// Tollgate's version.
    version: String,
    /// MCP protocol versions this server accepts.
    protocol_versions: Vec<String>,
    /// The tool profiles being served (utilities come with every profile).
    profiles: Vec<String>,
    /// Names of the served tools, sorted (upstream's `tools`).
    tools: Vec<String>,
    /// Each served tool in full.
    definitions: Vec<ToolDescription>,
}

/// One tool: what `tools/list` says about it, plus its profile and contract version.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ToolDescription {
    name: String,
    title: String,
    description: String,
    /// The profile that serves it: review, plan, context, session, memory, user, ck,
    /// context-engine, or utility (always served).
    profile: String,
    /// The version of its input/output contract.
    version: String,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    /// JSON Schema (2020-12) of its arguments.
    input_schema: Value,
    /// JSON Schema (2020-12) of its structured result.
    output_schema: Value,
}

impl Tool for ToolManifest {
    const NAME: &'static str = "tool_manifest";
    const TITLE: &'static str = "Tool manifest";
    const DESCRIPTION: &'static str = "List the served tools with profile, contract version, \
annotations and schemas, plus server and protocol versions.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = Manifest;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<Manifest, ToolError> {
        let catalog = ctx.catalog();
        let definitions = catalog
            .registry
            .over_mcp()
            .iter()
            .map(|served| {
                let tool = served.definition();
                ToolDescription {
                    name: tool.name.to_string(),
                    title: tool.title.clone().unwrap_or_default(),
                    description: tool.description.as_deref().unwrap_or_default().to_string(),
                    profile: served.group.as_str().to_string(),
                    version: served.version.to_string(),
                    read_only: served.hints.read_only,
                    destructive: served.hints.destructive,
                    idempotent: served.hints.idempotent,
                    open_world: served.hints.open_world,
                    input_schema: Value::Object(tool.input_schema.as_ref().clone()),
                    output_schema: tool
                        .output_schema
                        .as_ref()
                        .map_or(Value::Null, |schema| Value::Object(schema.as_ref().clone())),
                }
            })
            .collect::<Vec<_>>();
        Ok(Manifest {
            version: tollgate::VERSION.to_string(),
            protocol_versions: protocol_versions(),
            profiles: catalog.profiles.iter().map(|p| p.to_string()).collect(),
            tools: definitions.iter().map(|tool| tool.name.clone()).collect(),
            definitions,
        })
    }
}
