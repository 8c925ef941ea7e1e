//! The team's Lua tools as registry entries. `tollgate::usertools` loads, validates and runs
//! them; this only turns each loaded tool into an [`Entry`] and its errors into tool errors.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::Value;
use tollgate::usertools::{UserTool, UserTools};

use crate::error::ToolError;
use crate::registry::UserEntries;
use crate::tool::{Entry, ToolContext, ToolHandler};

/// A workspace's user tools, as the registry asks for them.
pub(crate) struct UserSource(pub(crate) Arc<UserTools>);

impl UserEntries for UserSource {
    fn entries(&self) -> Vec<Entry> {
        self.0
            .loaded()
            .tools
            .iter()
            .map(|tool| entry(tool, &self.0))
            .collect()
    }
}

fn entry(tool: &UserTool, tools: &Arc<UserTools>) -> Entry {
    let schema: JsonObject = tool.parameters.as_object().cloned().unwrap_or_default();
    let definition = rmcp::model::Tool::new(
        tool.name.clone(),
        tool.description.clone(),
        Arc::new(schema),
    );
    Entry::user(
        definition,
        Arc::new(Script {
            tools: Arc::clone(tools),
            name: tool.name.clone(),
        }),
    )
}

struct Script {
    tools: Arc<UserTools>,
    name: String,
}

impl ToolHandler for Script {
    fn call(&self, _ctx: &ToolContext, arguments: JsonObject) -> Result<Value, ToolError> {
        self.tools
            .call(&self.name, Value::Object(arguments))
            .map_err(|err| ToolError::new(err.code(), err.to_string()).with_field(err.field()))
    }
}
