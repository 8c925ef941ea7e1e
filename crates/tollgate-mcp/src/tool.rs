//! What a tool is: the [`Tool`] trait each `tools/<tool>.rs` implements, and [`Entry`], the
//! type-erased form the server keeps (its MCP definition plus a function from JSON arguments to
//! a JSON result).
//!
//! The trait gives every tool the same treatment: the input schema comes from the input type
//! (schemars: descriptions, bounds, `additionalProperties: false`), the output schema from the
//! output type, arguments are deserialised here so malformed ones become `INVALID_INPUT` tool
//! errors naming the field, and the hints become MCP annotations.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{JsonObject, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{INTERNAL_ERROR, INVALID_INPUT, ToolError};
use crate::profile::{Profile, Profiles};
use crate::schema;

/// One MCP tool: a thin adapter from JSON arguments to one core call.
pub(crate) trait Tool: Send + Sync + 'static {
    const NAME: &'static str;
    /// A short human-readable name.
    const TITLE: &'static str;
    /// What the tool does and when to use it; models choose tools by this text.
    const DESCRIPTION: &'static str;
    const GROUP: Group;
    /// The version of this tool's contract (its input and output shapes). Bumped on any change
    /// a caller could notice; listed by `tool_manifest`.
    const VERSION: &'static str;
    const HINTS: Hints;
    /// May run for minutes: a client that supports the Tasks extension gets a task handle at
    /// once and polls it, instead of holding the call open.
    const LONG_RUNNING: bool = false;
    /// Where it is offered: most tools everywhere.
    const SURFACE: Surface = Surface::Everywhere;

    type Input: DeserializeOwned + JsonSchema + 'static;
    type Output: Serialize + JsonSchema + 'static;

    /// Runs on a blocking thread: the core is synchronous, and a slow call must not stall the
    /// transport.
    fn call(ctx: &ToolContext, input: Self::Input) -> Result<Self::Output, ToolError>;
}

/// Which profile a tool belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// Served by every profile: small tools about the server and for safe handling of text.
    Utility,
    In(Profile),
}

impl Group {
    pub(crate) fn served_by(self, profiles: &Profiles) -> bool {
        match self {
            Group::Utility => true,
            Group::In(profile) => profiles.contains(profile),
        }
    }

    /// The profile name `tool_manifest` shows (`utility` for the always-served tools).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Group::Utility => "utility",
            Group::In(profile) => profile.as_str(),
        }
    }
}

/// MCP tool annotations: hints clients use to decide whether to ask before calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hints {
    /// Changes nothing anywhere.
    pub(crate) read_only: bool,
    /// May delete or overwrite something (meaningful only when not read-only).
    pub(crate) destructive: bool,
    /// Calling twice with the same arguments has no further effect.
    pub(crate) idempotent: bool,
    /// Reaches beyond the workspace (network, external services).
    pub(crate) open_world: bool,
}

impl Hints {
    /// Changes nothing a user can see: a computation over its arguments and the workspace, or
    /// a search or read. A search may build the workspace's index under `.tollgate/` on first
    /// use; that is Tollgate's own cache, rebuilt from the files at will, so it does not count
    /// (clients then stop asking approval for every search).
    pub(crate) const READ_ONLY: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// The hints as MCP annotations, each only where it differs from the protocol's default
    /// (not read-only, destructive, not idempotent, open world) and means something: a
    /// read-only tool's destructive and idempotent hints are ignored by the protocol. The
    /// title is the tool's own, not repeated here. Every byte is paid in every agent session.
    pub(crate) fn annotations(self) -> ToolAnnotations {
        let mut annotations = ToolAnnotations::default();
        if self.read_only {
            annotations.read_only_hint = Some(true);
        } else {
            annotations.destructive_hint = (!self.destructive).then_some(false);
            annotations.idempotent_hint = self.idempotent.then_some(true);
        }
        annotations.open_world_hint = (!self.open_world).then_some(false);
        annotations
    }
}

/// What a tool call can reach besides its arguments.
#[derive(Debug, Clone)]
pub(crate) struct ToolContext {
    inner: Arc<ContextInner>,
    /// This call's progress and stop request (each call gets its own, see [`Self::for_call`]).
    control: tollgate::control::Control,
}

#[derive(Debug)]
struct ContextInner {
    workspace: PathBuf,
    env: Vec<(String, String)>,
    catalog: Catalog,
}

impl ToolContext {
    pub(crate) fn new(
        workspace: PathBuf,
        env: Vec<(String, String)>,
        catalog: Catalog,
    ) -> ToolContext {
        ToolContext {
            inner: Arc::new(ContextInner {
                workspace,
                env,
                catalog,
            }),
            control: tollgate::control::Control::new(),
        }
    }

    /// The workspace root, canonical: every path argument resolves inside it.
    pub(crate) fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// The environment the server was started with (configuration layers read it).
    pub(crate) fn env(&self) -> &[(String, String)] {
        &self.inner.env
    }

    pub(crate) fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// A context for one call, with its own [`Control`](tollgate::control::Control): the server
    /// watches it for progress and cancels it when the client cancels or the call times out.
    pub(crate) fn for_call(&self, control: tollgate::control::Control) -> ToolContext {
        ToolContext {
            inner: Arc::clone(&self.inner),
            control,
        }
    }

    /// This call's control: long core operations take it, report progress through it and stop
    /// at their next safe point once it is cancelled.
    pub(crate) fn control(&self) -> &tollgate::control::Control {
        &self.control
    }

    /// The workspace for the context operations, with this call's control: the index build a
    /// search starts when there is no index reports progress and stops when the call does.
    pub(crate) fn open_workspace(
        &self,
    ) -> Result<tollgate::workspace::IndexedWorkspace, ToolError> {
        let settings = crate::tools::workspace_settings(self)?;
        Ok(
            tollgate::workspace::IndexedWorkspace::open(self.workspace())
                .map_err(tollgate::api::context::ContextError::unreadable)?
                .with_configured_embedder(&settings.index)
                .map_err(tollgate::api::context::ContextError::from)?
                .with_control(self.control.clone()),
        )
    }
}

/// What the server serves: its profiles and its registry (built-in and user tools).
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    pub(crate) profiles: Profiles,
    pub(crate) registry: crate::registry::Registry,
}

/// Where a tool is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    /// Over MCP and the plain HTTP API (`POST /tools/{name}`, answered `{"result": …}`).
    Everywhere,
    /// Only on the plain HTTP API, answered with the bare result: seed 004's `search`, `get`
    /// and `sources`, whose MCP counterparts are the context and memory tools. `get` says the
    /// tool also answers `GET /tools/{name}` (it takes no arguments).
    HttpApi { get: bool },
}

/// Runs one tool: a compiled one ([`Entry::of`]) or a user's script.
pub(crate) trait ToolHandler: Send + Sync + 'static {
    fn call(&self, ctx: &ToolContext, arguments: JsonObject) -> Result<Value, ToolError>;
}

/// One registry entry: everything the server needs to list and call a tool, owned, so a tool
/// loaded at run time (a user's Lua script) stands beside a compiled one.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) name: Arc<str>,
    pub(crate) group: Group,
    pub(crate) version: Arc<str>,
    pub(crate) hints: Hints,
    pub(crate) long_running: bool,
    /// Compiled into Tollgate (`false`: a user's tool).
    pub(crate) builtin: bool,
    pub(crate) surface: Surface,
    definition: Arc<rmcp::model::Tool>,
    handler: Arc<dyn ToolHandler>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("group", &self.group)
            .field("builtin", &self.builtin)
            .finish_non_exhaustive()
    }
}

/// A compiled tool's handler: deserialises the arguments into its input type.
struct Compiled<T>(std::marker::PhantomData<fn() -> T>);

impl<T: Tool> ToolHandler for Compiled<T> {
    fn call(&self, ctx: &ToolContext, arguments: JsonObject) -> Result<Value, ToolError> {
        call::<T>(ctx, arguments)
    }
}

impl Entry {
    /// A compiled tool's entry; an error names a schema that is not a valid input schema,
    /// which is a bug in the tool's input type.
    pub(crate) fn of<T: Tool>() -> Result<Entry, String> {
        Ok(Entry {
            name: T::NAME.into(),
            group: T::GROUP,
            version: T::VERSION.into(),
            hints: T::HINTS,
            long_running: T::LONG_RUNNING,
            builtin: true,
            surface: T::SURFACE,
            definition: Arc::new(definition::<T>()?),
            handler: Arc::new(Compiled::<T>(std::marker::PhantomData)),
        })
    }

    /// A tool defined at run time (a user's script): its definition as MCP lists it and the
    /// handler that runs it.
    pub(crate) fn user(definition: rmcp::model::Tool, handler: Arc<dyn ToolHandler>) -> Entry {
        Entry {
            name: definition.name.as_ref().into(),
            group: Group::In(Profile::User),
            version: "user".into(),
            hints: Hints {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: true,
            },
            long_running: false,
            builtin: false,
            surface: Surface::Everywhere,
            definition: Arc::new(definition),
            handler,
        }
    }

    /// The MCP definition (schemas, annotations).
    pub(crate) fn definition(&self) -> &rmcp::model::Tool {
        &self.definition
    }

    /// Whether MCP's `tools/list` lists it (the HTTP API lists every entry).
    pub(crate) fn over_mcp(&self) -> bool {
        self.surface == Surface::Everywhere
    }

    pub(crate) fn call(
        &self,
        ctx: &ToolContext,
        arguments: JsonObject,
    ) -> Result<Value, ToolError> {
        self.handler.call(ctx, arguments)
    }
}

fn definition<T: Tool>() -> Result<rmcp::model::Tool, String> {
    let input_schema = schema_for_input::<T::Input>()
        .map_err(|err| format!("input schema of `{}`: {err}", T::NAME))?;
    let hints = T::HINTS;
    Ok(rmcp::model::Tool::new(
        T::NAME,
        T::DESCRIPTION,
        Arc::new(schema::lean_input(input_schema.as_ref().clone())),
    )
    .with_title(T::TITLE)
    .with_raw_output_schema(Arc::new(schema::lean_output(
        schema_for_output::<T::Output>().as_ref().clone(),
    )))
    .with_annotations(hints.annotations()))
}

fn call<T: Tool>(ctx: &ToolContext, arguments: JsonObject) -> Result<Value, ToolError> {
    let input: T::Input = serde_json::from_value(Value::Object(arguments)).map_err(|err| {
        ToolError::new(
            INVALID_INPUT,
            format!(
                "Invalid arguments for `{}`: {err}. The tool's input schema lists every argument.",
                T::NAME
            ),
        )
    })?;
    let output = T::call(ctx, input)?;
    serde_json::to_value(output).map_err(|err| {
        ToolError::new(
            INTERNAL_ERROR,
            format!(
                "`{}` produced a result that cannot be serialised: {err}",
                T::NAME
            ),
        )
    })
}

/// The input of a tool that takes no arguments: an empty object, and nothing else. The schema
/// spells out the empty `properties`, which some clients require of every input schema.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("properties" = {}))]
pub(crate) struct NoInput {}
