//! The MCP server: which tools are served, and the one place a tool call is run (on the
//! blocking pool, with panics and cancellation turned into tool errors).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestMethod, CompleteRequestParams, CompleteResult, CreateTaskResult, GetTaskParams,
    GetTaskResult, Implementation, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig, SetLevelRequestMethod, UpdateTaskParams,
};
// MCP deprecated logging (SEP-2577), but handshake-era clients still set a level.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::error::{CANCELLED, INTERNAL_ERROR, TIMEOUT, ToolError};
use crate::log::{ClientLog, Level, LogLevels};
use crate::profile::{Profile, Profiles};
use crate::registry::{Registry, UserEntries};
use crate::tool::{Catalog, Entry, Group, ToolContext};
use crate::tools;
use crate::user_tools::UserSource;

/// How to start a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The workspace (repository root) every path argument resolves in.
    pub workspace: PathBuf,
    /// The user named `workspace` (`--repo`) rather than taking the directory the server was
    /// started in. Only then is a file-system root or a directory holding the home directory
    /// served: clients often start stdio servers in `/` or `$HOME`.
    pub workspace_named: bool,
    /// Which tool profiles to serve; the utilities are always served.
    pub profiles: Profiles,
    /// The environment the front end was started with: `TOLLGATE_*` variables configure reviews
    /// as they do for `tollgate review`. The server never reads the process environment itself.
    pub env: Vec<(String, String)>,
    /// The longest a tool call may take before it is answered with `TIMEOUT`.
    pub call_timeout: Duration,
}

impl ServerOptions {
    /// Ten minutes: well above the analyzers' own budget (one minute each by default), so only
    /// a call that is stuck reaches it.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);
}

/// The server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    #[error("cannot use the workspace {}: {source}", path.display())]
    Workspace {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the workspace {} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error(
        "refusing to serve {}: it is {what}, so clients could read every file under it. Start the server with --repo naming the project (in client configuration: `--repo ${{workspaceFolder}}`), or pass --repo {} to serve it anyway",
        path.display(),
        path.display()
    )]
    TooBroad { path: PathBuf, what: &'static str },
    /// A tool's input type does not make a valid MCP input schema (a bug in Tollgate).
    #[error("invalid tool definition: {0}")]
    Definition(String),
    /// Two of the profiles asked for have a tool of one name (a seed dialect's and Tollgate's
    /// own): one server serves one meaning of a name.
    #[error(
        "the tool profiles `{first}` and `{second}` cannot be served together: both have a tool named `{name}`, with other inputs. Start one server per profile (e.g. `--tools all` and `--tools {second}`)"
    )]
    NameClash {
        name: String,
        first: &'static str,
        second: &'static str,
    },
    #[error("the MCP stdio transport failed: {0}")]
    Stdio(String),
}

/// Tollgate's MCP server over one workspace. Cheap to clone: the HTTP transport makes one per
/// request.
#[derive(Debug, Clone)]
pub struct Server {
    ctx: ToolContext,
    /// How often a running call reports progress, when its caller asked for progress.
    heartbeat: Duration,
    call_timeout: Duration,
    /// What the server tells a client about itself: every profile, with its tools.
    instructions: Arc<str>,
    /// The long-running calls started as tasks (Tasks extension), shared by every clone: over
    /// HTTP each request gets a clone, and the task it started is polled by later requests.
    tasks: Tasks,
    /// The log level a handshake-era client chose with `logging/setLevel`.
    log_levels: LogLevels,
}

/// rmcp's task store, which has no `Debug`.
#[derive(Clone, Default)]
struct Tasks(TaskManager);

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tasks")
    }
}

/// Often enough to keep a client's idle timeout from firing during a long analyzer run, rarely
/// enough to cost nothing.
const HEARTBEAT: Duration = Duration::from_secs(5);

impl Server {
    /// Checks the workspace and builds the served tools' definitions.
    pub fn new(options: ServerOptions) -> Result<Server, ServerError> {
        Server::with_entries(options, tools::builtins().map_err(ServerError::Definition)?)
    }

    fn with_entries(options: ServerOptions, registry: Vec<Entry>) -> Result<Server, ServerError> {
        let workspace =
            options
                .workspace
                .canonicalize()
                .map_err(|source| ServerError::Workspace {
                    path: options.workspace.clone(),
                    source,
                })?;
        if !workspace.is_dir() {
            return Err(ServerError::NotADirectory { path: workspace });
        }
        if !options.workspace_named
            && let Some(what) = too_broad(&workspace, &options.env)
        {
            return Err(ServerError::TooBroad {
                path: workspace,
                what,
            });
        }
        let instructions = instructions(&registry, &options.profiles).into();
        // The team's tools, when their profile is served; no built-in's name is theirs.
        let user: Option<Arc<dyn UserEntries>> =
            options.profiles.contains(Profile::User).then(|| {
                let mut reserved: Vec<String> = registry
                    .iter()
                    .map(|entry| entry.name.to_string())
                    .collect();
                reserved.extend(tools::RESERVED_NAMES.iter().map(|name| name.to_string()));
                let user_tools = tollgate::api::usertools::UserTools::open(
                    &workspace,
                    options.env.clone(),
                    reserved,
                );
                let loaded = user_tools.loaded();
                if !loaded.tools.is_empty() {
                    let listed: Vec<String> = loaded
                        .tools
                        .iter()
                        .map(|tool| format!("POST /tools/{} — {}", tool.name, tool.description))
                        .collect();
                    tracing::info!("loaded {} Lua tool(s): {}", listed.len(), listed.join("; "));
                }
                Arc::new(UserSource(Arc::new(user_tools))) as Arc<dyn UserEntries>
            });
        let served: Vec<Entry> = registry
            .into_iter()
            .filter(|entry| entry.group.served_by(&options.profiles))
            .collect();
        if let Some(clash) = name_clash(&served) {
            return Err(clash);
        }
        let catalog = Catalog {
            profiles: options.profiles,
            registry: Registry::new(served, user),
        };
        Ok(Server {
            instructions,
            tasks: Tasks::default(),
            log_levels: LogLevels::default(),
            ctx: ToolContext::new(workspace, options.env, catalog),
            heartbeat: HEARTBEAT,
            call_timeout: options.call_timeout,
        })
    }

    /// The canonical workspace root.
    pub fn workspace(&self) -> &Path {
        self.ctx.workspace()
    }

    /// The longest a call may take (`--call-timeout-secs`).
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Names of the tools served over MCP, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry()
            .over_mcp()
            .iter()
            .map(|entry| entry.name.to_string())
            .collect()
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.ctx.catalog().registry
    }

    async fn run_tool(
        &self,
        entry: Entry,
        arguments: rmcp::model::JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let name = Arc::clone(&entry.name);
        let log = ClientLog::for_request(&self.log_levels, context);
        log.send(Level::Info, format!("`{name}` started")).await;
        let started = Instant::now();
        let result = self.run_tool_inner(entry, arguments, context, &log).await;
        log.finished(&name, &result, started.elapsed()).await;
        result
    }

    async fn run_tool_inner(
        &self,
        entry: Entry,
        arguments: rmcp::model::JsonObject,
        context: &RequestContext<RoleServer>,
        log: &ClientLog,
    ) -> CallToolResult {
        let name = Arc::clone(&entry.name);
        let name = &*name;
        let control = tollgate::control::Control::new();
        let mut task = self.spawn(entry, arguments, control.clone());
        // Stops the core work at its next safe point however this call ends early.
        let _cancel_on_exit = CancelOnDrop(control.clone());
        // Progress only when asked for (the call behaves the same without): what the core work
        // reports (done of total), and a heartbeat between reports.
        let progress_token = context.meta.get_progress_token();
        let mut clock = ProgressClock::default();
        let mut last_report = 0u64;
        let mut last_message = String::new();
        let started = Instant::now();
        let mut ticker =
            tokio::time::interval_at(tokio::time::Instant::now() + self.heartbeat, self.heartbeat);
        let deadline = tokio::time::sleep(self.call_timeout);
        tokio::pin!(deadline);
        let joined = loop {
            tokio::select! {
                joined = &mut task => break joined,
                () = &mut deadline => return self.timed_out(name).into_result(),
                () = context.ct.cancelled() => {
                    // The core work stops at its next safe point (`_cancel_on_exit`); a call
                    // that never checks runs to its end and its result is dropped.
                    return ToolError::new(CANCELLED, format!("`{name}` was cancelled"))
                        .into_result();
                }
                _ = ticker.tick(), if progress_token.is_some() => {
                    let Some(token) = &progress_token else { continue };
                    let (value, message) = match control.latest() {
                        // A new report: what the work says.
                        Some((seq, report)) if seq != last_report => {
                            last_report = seq;
                            last_message = report.message.clone();
                            log.progress(name, report.done, report.total, &report.message).await;
                            (clock.report(report.done, report.total), report.message)
                        }
                        // A heartbeat: still working on what was last reported.
                        _ => {
                            let elapsed = started.elapsed().as_secs();
                            let message = if last_message.is_empty() {
                                format!("running for {elapsed} s")
                            } else {
                                format!("{last_message}, running for {elapsed} s")
                            };
                            (clock.heartbeat(), message)
                        }
                    };
                    // Past the total there is nothing honest to send until the result.
                    let Some(value) = value else { continue };
                    let mut progress = ProgressNotificationParam::new(token.clone(), value)
                        .with_message(format!("{name}: {message}"));
                    if let Some(total) = clock.total {
                        progress = progress.with_total(total as f64);
                    }
                    // A client that went away is noticed by the transport, not here.
                    let _ = context.peer.notify_progress(progress).await;
                }
            }
        };
        match settle(name, joined) {
            Ok(value) => CallToolResult::structured(value),
            Err(err) => err.into_result(),
        }
    }

    /// Runs a served tool for the plain JSON API: the same call as over MCP, without progress.
    /// `None` when no served tool has that name.
    pub(crate) async fn call_plain(
        &self,
        name: &str,
        arguments: rmcp::model::JsonObject,
    ) -> Option<Result<serde_json::Value, ToolError>> {
        let entry = self.registry().get(name)?;
        let name = Arc::clone(&entry.name);
        let control = tollgate::control::Control::new();
        let task = self.spawn(entry, arguments, control.clone());
        let _cancel_on_exit = CancelOnDrop(control);
        Some(match tokio::time::timeout(self.call_timeout, task).await {
            Ok(joined) => settle(&name, joined),
            Err(_) => Err(self.timed_out(&name)),
        })
    }

    /// Starts a long-running call as a task (Tasks extension) and returns at once; the client
    /// polls `tasks/get` for its status and inlined result, and may `tasks/cancel` it. The work
    /// runs as a plain call would (same time limit; a tool error is a completed task whose
    /// result has `isError`), but is bound to the task, not to the request that started it.
    fn start_task(&self, entry: Entry, arguments: rmcp::model::JsonObject) -> CreateTaskResult {
        let server = self.clone();
        let name = Arc::clone(&entry.name);
        let options = TaskOptions::new()
            // Alive through the call's time limit, then readable for as long again.
            .with_ttl_ms(u64::try_from(self.call_timeout.as_millis() * 2).unwrap_or(u64::MAX))
            .with_poll_interval_ms(1_000)
            .with_status_message(format!("`{name}` started"));
        let task = self.tasks.0.spawn(options, move |task| {
            Box::pin(async move {
                let control = tollgate::control::Control::new();
                let mut job = server.spawn(entry, arguments, control.clone());
                let _cancel_on_exit = CancelOnDrop(control.clone());
                let deadline = tokio::time::sleep(server.call_timeout);
                tokio::pin!(deadline);
                let mut ticker = tokio::time::interval(server.heartbeat);
                let mut last_report = 0u64;
                loop {
                    tokio::select! {
                        joined = &mut job => {
                            return Ok(match settle(&name, joined) {
                                Ok(value) => CallToolResult::structured(value),
                                Err(err) => err.into_result(),
                            });
                        }
                        () = &mut deadline => return Ok(server.timed_out(&name).into_result()),
                        // The core work stops at its next safe point (`_cancel_on_exit`).
                        () = task.cancelled() => return Err(TaskExit::Cancelled),
                        _ = ticker.tick() => {
                            if let Some((seq, report)) = control.latest()
                                && seq != last_report
                            {
                                last_report = seq;
                                let of = report.total.map(|total| format!(" of {total}")).unwrap_or_default();
                                task.set_status_message(format!(
                                    "{name}: {} ({}{of})",
                                    report.message, report.done
                                ));
                            }
                        }
                    }
                }
            })
        });
        CreateTaskResult::new(task)
    }

    /// The answer to a call that ran out of time. Its blocking work cannot be interrupted; it
    /// finishes in the background and its result is dropped.
    fn timed_out(&self, name: &str) -> ToolError {
        ToolError::new(
            TIMEOUT,
            format!(
                "`{name}` did not finish within {} s; narrow the request (fewer files, fewer analyzers, shorter analyzer timeouts) or raise --call-timeout-secs",
                self.call_timeout.as_secs()
            ),
        )
    }

    /// The definitions MCP's `tools/list` shows, sorted by name.
    pub(crate) fn definitions(&self) -> Vec<rmcp::model::Tool> {
        self.registry()
            .over_mcp()
            .iter()
            .map(|entry| entry.definition().clone())
            .collect()
    }

    /// Starts a call on the blocking pool: the core is synchronous, and a panic there stays in
    /// its task.
    fn spawn(
        &self,
        entry: Entry,
        arguments: rmcp::model::JsonObject,
        control: tollgate::control::Control,
    ) -> tokio::task::JoinHandle<Result<serde_json::Value, ToolError>> {
        let ctx = self.ctx.for_call(control);
        tokio::task::spawn_blocking(move || entry.call(&ctx, arguments))
    }
}

/// Why `workspace` is too broad to serve unless named: a file-system root, or the home
/// directory (`HOME`, or `USERPROFILE` on Windows, from `env`) or a directory above it.
fn too_broad(workspace: &Path, env: &[(String, String)]) -> Option<&'static str> {
    if workspace.parent().is_none() {
        return Some("a file-system root");
    }
    let homes = env
        .iter()
        .filter(|(key, value)| (key == "HOME" || key == "USERPROFILE") && !value.is_empty())
        .filter_map(|(_, value)| Path::new(value).canonicalize().ok());
    for home in homes {
        if home == workspace {
            return Some("the home directory");
        }
        if home.starts_with(workspace) {
            return Some("a directory holding the home directory");
        }
    }
    None
}

/// The progress values of one call, strictly increasing as MCP requires. A report's `done`
/// is sent as it is when it moved on; a heartbeat, or a report that did not move (a new phase
/// at the same count), is sent as a fraction of the way to the next unit (`done + n/(n+1)`
/// after `n` of them), which stays below anything the work reports next.
#[derive(Debug, Default)]
struct ProgressClock {
    /// The latest `done` the work reported.
    done: u64,
    /// The latest total the work reported.
    total: Option<u64>,
    /// Notifications sent since `done` last moved, or `None` before the first.
    since_moved: Option<u32>,
}

impl ProgressClock {
    /// The value for a report, which never goes back: a `done` below the last one counts as
    /// the last one.
    fn report(&mut self, done: u64, total: Option<u64>) -> Option<f64> {
        if total.is_some() {
            self.total = total;
        }
        if self.since_moved.is_none() || done > self.done {
            self.done = done;
            self.since_moved = Some(0);
            return Some(done as f64);
        }
        self.heartbeat()
    }

    /// The value for a heartbeat; `None` once the work has reported reaching its total.
    fn heartbeat(&mut self) -> Option<f64> {
        let Some(sent) = self.since_moved else {
            self.since_moved = Some(0);
            return Some(0.0);
        };
        if self.total.is_some_and(|total| self.done >= total) {
            return None;
        }
        let n = sent.saturating_add(1);
        self.since_moved = Some(n);
        Some(self.done as f64 + f64::from(n) / f64::from(n + 1))
    }
}

/// Cancels a call's core work when the call is over for the client (finished, timed out,
/// cancelled, or its connection dropped): work nobody waits for should not go on.
pub(crate) struct CancelOnDrop(pub(crate) tollgate::control::Control);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A finished call's outcome, with a panic (or an aborted task) turned into `INTERNAL_ERROR`.
fn settle(
    name: &str,
    joined: Result<Result<serde_json::Value, ToolError>, tokio::task::JoinError>,
) -> Result<serde_json::Value, ToolError> {
    match joined {
        Ok(outcome) => outcome,
        Err(join_error) => {
            let detail = if join_error.is_panic() {
                let payload = join_error.into_panic();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".to_string());
                format!("panicked: {message}")
            } else {
                "was stopped".to_string()
            };
            tracing::error!(tool = name, "tool call {detail}");
            Err(ToolError::new(
                INTERNAL_ERROR,
                format!(
                    "`{name}` {detail}. This is a bug in Tollgate; the server is still running, and other calls are unaffected."
                ),
            ))
        }
    }
}

/// Every version rmcp implements: 2026-07-28 (stateless, no `initialize`) and the handshake era
/// (2025-11-25 back to 2024-11-05; structured results exist from 2025-06-18, and older clients
/// read the JSON text copy). Nothing is kept between requests, so both eras are served alike.
const PROTOCOL_VERSIONS: &[ProtocolVersion] = ProtocolVersion::KNOWN_VERSIONS;

/// The protocol versions the server accepts, newest first.
pub(crate) fn protocol_versions() -> Vec<String> {
    PROTOCOL_VERSIONS
        .iter()
        .rev()
        .map(ToString::to_string)
        .collect()
}

impl ServerHandler for Server {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    // `logging` is deprecated (SEP-2577) and still what clients read.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("tollgate", tollgate::VERSION).with_title("Tollgate"))
        .with_instructions(self.instructions.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.definitions()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.registry()
            .get(name)
            .filter(Entry::over_mcp)
            .map(|entry| entry.definition().clone())
    }

    // rmcp answers these with empty lists by default; a server that declares only `tools`
    // must not answer them at all (clients would take the answer as a declaration).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListPromptsRequestMethod>())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListResourcesRequestMethod>())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            ListResourceTemplatesRequestMethod,
        >())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(ErrorData::method_not_found::<CompleteRequestMethod>())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(entry) = self
            .registry()
            .get(request.name.as_ref())
            .filter(Entry::over_mcp)
        else {
            // An unknown tool is a protocol error (the spec's -32602), not a tool result.
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; this server serves: {}",
                    request.name,
                    self.tool_names().join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        // A task only for a client that declared the Tasks extension (for this request or at
        // its handshake); every other client gets the call as it always did.
        if entry.long_running
            && context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks())
        {
            return Ok(CallToolResponse::Task(self.start_task(entry, arguments)));
        }
        Ok(self.run_tool(entry, arguments, &context).await.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.0.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // No Tollgate task asks its client for input; unknown ids are still an error.
        self.tasks
            .0
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.0.cancel_task(&request.task_id)
    }

    // The handshake era's way to choose a level (deprecated by SEP-2577).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // 2026-07-28 removed `logging/setLevel`: its clients send a level with each request.
        if context.meta.protocol_version().is_some() {
            return Err(ErrorData::method_not_found::<SetLevelRequestMethod>());
        }
        self.log_levels.set(request.level);
        Ok(())
    }
}

/// The first name two served entries share (seed 001's `semantic_search` and ck's, say).
fn name_clash(served: &[Entry]) -> Option<ServerError> {
    let mut seen: std::collections::HashMap<&str, Group> = std::collections::HashMap::new();
    for entry in served {
        if let Some(first) = seen.insert(&entry.name, entry.group) {
            return Some(ServerError::NameClash {
                name: entry.name.to_string(),
                first: first.as_str(),
                second: entry.group.as_str(),
            });
        }
    }
    None
}

/// The server's instructions: what Tollgate is, every profile with when to pick it and its
/// tools (so an agent knows what another `--tools` would give it), the utilities, and the
/// conventions every tool follows.
fn instructions(registry: &[Entry], served: &Profiles) -> String {
    let names = |group: Group| {
        let mut names: Vec<&str> = registry
            .iter()
            .filter(|entry| entry.group == group && entry.over_mcp())
            .map(|entry| &*entry.name)
            .collect();
        names.sort_unstable();
        names.join(", ")
    };
    let mut text = format!(
        "Tollgate reviews code changes and plans work in this workspace. Tools come in profiles; \
this server serves `{served}` (start it with `--tools` and a comma-separated list, or `all`, for \
more).\n"
    );
    for profile in Profile::every() {
        let mark = if served.contains(profile) {
            " (served)"
        } else {
            ""
        };
        text.push_str(&format!(
            "- `{profile}`{mark}: {}. Tools: {}.\n",
            profile.purpose(),
            names(Group::In(profile))
        ));
    }
    let mut long_running: Vec<&str> = registry
        .iter()
        .filter(|entry| entry.long_running)
        .map(|entry| &*entry.name)
        .collect();
    long_running.sort_unstable();
    text.push_str(&format!(
        "Every profile also serves {}. Paths are relative to the workspace root; results are \
JSON; errors carry a code and name the argument to fix. With the Tasks extension, {} return a \
task to poll (`tasks/get`) or cancel (`tasks/cancel`).",
        names(Group::Utility),
        long_running.join(", ")
    ));
    text
}

/// Serves `server` on stdin/stdout until the client closes stdin. Nothing else may write to
/// stdout meanwhile: it carries only protocol messages. A request over
/// [`MAX_STDIO_REQUEST_BYTES`](crate::stdio::MAX_STDIO_REQUEST_BYTES) is answered with an error
/// naming the limit.
pub async fn serve_stdio(server: Server) -> Result<(), ServerError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let pipes = crate::stdio::bounded(stdin, stdout, crate::stdio::MAX_STDIO_REQUEST_BYTES);
    let running = server
        .serve((pipes.requests, pipes.responses))
        .await
        .map_err(|err| ServerError::Stdio(err.to_string()))?;
    let outcome = running
        .waiting()
        .await
        .map_err(|err| ServerError::Stdio(err.to_string()));
    // The SDK's end of the output pipe is closed now; the writer flushes what it holds.
    let _ = pipes.writer.await;
    outcome?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rmcp::model::CallToolRequestParams;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use super::*;
    use crate::profile::Profile;
    use crate::tool::{Group, Hints, Tool};

    /// A tool that panics, standing in for a bug in a core call.
    struct Boom;

    #[derive(Deserialize, JsonSchema)]
    struct BoomInput {
        /// What to panic with.
        message: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct BoomOutput {}

    impl Tool for Boom {
        const NAME: &'static str = "boom";
        const TITLE: &'static str = "Boom";
        const DESCRIPTION: &'static str = "Panics.";
        const GROUP: Group = Group::In(Profile::Review);
        const VERSION: &'static str = "0.0.0";
        const HINTS: Hints = Hints::READ_ONLY;
        type Input = BoomInput;
        type Output = BoomOutput;

        fn call(_ctx: &ToolContext, input: BoomInput) -> Result<BoomOutput, ToolError> {
            panic!("{}", input.message)
        }
    }

    /// A tool that takes a while, standing in for an analyzer run.
    struct Sleepy;

    #[derive(Deserialize, JsonSchema)]
    struct SleepyInput {
        /// How long to sleep.
        millis: u64,
    }

    impl Tool for Sleepy {
        const NAME: &'static str = "sleepy";
        const TITLE: &'static str = "Sleepy";
        const DESCRIPTION: &'static str = "Sleeps.";
        const GROUP: Group = Group::Utility;
        const VERSION: &'static str = "0.0.0";
        const HINTS: Hints = Hints::READ_ONLY;
        type Input = SleepyInput;
        type Output = BoomOutput;

        fn call(_ctx: &ToolContext, input: SleepyInput) -> Result<BoomOutput, ToolError> {
            std::thread::sleep(Duration::from_millis(input.millis));
            Ok(BoomOutput {})
        }
    }

    /// A tool that works in steps, reporting each and stopping when cancelled: stands in for
    /// indexing or plan execution. Records how it ended in [`STEPS_ENDED`].
    struct Steps;

    #[derive(Deserialize, JsonSchema)]
    struct StepsInput {
        /// How many steps.
        steps: u64,
        /// How long each step takes.
        millis: u64,
    }

    /// How the last `Steps` call ended: 0 running, 1 finished, 2 stopped by cancellation.
    static STEPS_ENDED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

    impl Tool for Steps {
        const NAME: &'static str = "steps";
        const TITLE: &'static str = "Steps";
        const DESCRIPTION: &'static str = "Works in steps.";
        const GROUP: Group = Group::Utility;
        const VERSION: &'static str = "0.0.0";
        const HINTS: Hints = Hints::READ_ONLY;
        type Input = StepsInput;
        type Output = BoomOutput;

        fn call(ctx: &ToolContext, input: StepsInput) -> Result<BoomOutput, ToolError> {
            use std::sync::atomic::Ordering;
            STEPS_ENDED.store(0, Ordering::SeqCst);
            for step in 0..input.steps {
                if ctx.control().check().is_err() {
                    STEPS_ENDED.store(2, Ordering::SeqCst);
                    return Err(ToolError::new(CANCELLED, "stopped"));
                }
                ctx.control()
                    .report(step + 1, Some(input.steps), format!("step {}", step + 1));
                std::thread::sleep(Duration::from_millis(input.millis));
            }
            STEPS_ENDED.store(1, Ordering::SeqCst);
            Ok(BoomOutput {})
        }
    }

    /// A long-running tool (indexing, a PR review, plan execution in miniature): works in steps,
    /// stops at the next one once cancelled, and records how it ended in [`JOB_ENDED`].
    struct Job;

    #[derive(Deserialize, JsonSchema)]
    struct JobInput {
        steps: u64,
        millis: u64,
    }

    #[derive(Serialize, JsonSchema)]
    struct JobOutput {
        steps_done: u64,
    }

    /// How the last `Job` call ended: 0 running, 1 finished, 2 stopped by cancellation.
    static JOB_ENDED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

    impl Tool for Job {
        const NAME: &'static str = "job";
        const TITLE: &'static str = "Job";
        const DESCRIPTION: &'static str = "Works in steps, for a while.";
        const GROUP: Group = Group::Utility;
        const VERSION: &'static str = "0.0.0";
        const HINTS: Hints = Hints::READ_ONLY;
        const LONG_RUNNING: bool = true;
        type Input = JobInput;
        type Output = JobOutput;

        fn call(ctx: &ToolContext, input: JobInput) -> Result<JobOutput, ToolError> {
            use std::sync::atomic::Ordering;
            JOB_ENDED.store(0, Ordering::SeqCst);
            for step in 0..input.steps {
                if ctx.control().check().is_err() {
                    JOB_ENDED.store(2, Ordering::SeqCst);
                    return Err(ToolError::new(CANCELLED, "stopped"));
                }
                ctx.control()
                    .report(step + 1, Some(input.steps), format!("step {}", step + 1));
                std::thread::sleep(Duration::from_millis(input.millis));
            }
            JOB_ENDED.store(1, Ordering::SeqCst);
            Ok(JobOutput {
                steps_done: input.steps,
            })
        }
    }

    fn job(steps: u64, millis: u64) -> CallToolRequestParams {
        let arguments = json!({"steps": steps, "millis": millis})
            .as_object()
            .cloned()
            .unwrap();
        CallToolRequestParams::new("job").with_arguments(arguments)
    }

    /// Polls a task until it reaches a terminal state (at most a few thousand polls).
    async fn settled(
        client: &rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig>,
        task_id: &str,
    ) -> rmcp::model::TaskPayload {
        for _ in 0..5_000 {
            let got = client
                .get_task(rmcp::model::GetTaskParams::new(task_id.to_string()))
                .await
                .unwrap();
            if got.task.task.status.is_terminal() {
                return got.task.payload;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("task {task_id} never settled");
    }

    #[tokio::test]
    async fn a_long_call_is_a_task_for_a_client_that_supports_tasks() {
        use rmcp::model::{
            CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
            TaskPayload,
        };
        use std::sync::atomic::Ordering;
        let (server, _workspace) =
            test_server(Entry::of::<Job>().unwrap(), Duration::from_millis(10));
        assert!(server.get_info().capabilities.supports_tasks());
        let tasks_client = |server: Server| async move {
            let (server_io, client_io) = tokio::io::duplex(1 << 16);
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            ClientConfig::new(
                ClientCapabilities::builder().enable_tasks().build(),
                Implementation::new("tasks-test", "0"),
            )
            .serve(client_io)
            .await
            .unwrap()
        };
        let client = tasks_client(server.clone()).await;

        // Created at once; polled until done; the tool's result is inlined.
        let CallToolResponse::Task(created) = client.call_tool_once(job(3, 5)).await.unwrap()
        else {
            panic!("a long-running call should be a task");
        };
        assert!(created.task.ttl_ms.is_some_and(|ttl| ttl >= 600_000));
        let payload = settled(&client, &created.task.task_id).await;
        let TaskPayload::Completed { result } = payload else {
            panic!("{payload:?}");
        };
        let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"steps_done": 3})));

        // A short tool is never a task.
        let plain = client
            .call_tool_once(
                CallToolRequestParams::new("scrub_secrets")
                    .with_arguments(json!({"content": "x"}).as_object().cloned().unwrap()),
            )
            .await
            .unwrap();
        assert!(matches!(plain, CallToolResponse::Complete(_)), "{plain:?}");

        // Cancelled: the task settles as cancelled and the work itself stops.
        let CallToolResponse::Task(created) =
            client.call_tool_once(job(1_000_000, 2)).await.unwrap()
        else {
            panic!("a long-running call should be a task");
        };
        while JOB_ENDED.load(Ordering::SeqCst) != 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        client
            .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap();
        let payload = settled(&client, &created.task.task_id).await;
        assert!(matches!(payload, TaskPayload::Cancelled), "{payload:?}");
        while JOB_ENDED.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(JOB_ENDED.load(Ordering::SeqCst), 2);

        // An id the server never gave out is an error, not a task.
        assert!(
            client
                .get_task(GetTaskParams::new("no-such-task".to_string()))
                .await
                .is_err()
        );

        // A client without the extension gets the call as before, and no task methods.
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let plain_client = ().serve(client_io).await.unwrap();
        let result = plain_client.call_tool(job(2, 1)).await.unwrap();
        assert_eq!(result.structured_content, Some(json!({"steps_done": 2})));
        match plain_client
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
        {
            Err(rmcp::ServiceError::McpError(error)) => {
                assert_eq!(error.code.0, -32021, "{error:?}");
            }
            other => panic!("tasks/get without the extension answered {other:?}"),
        }
    }

    /// A client that records the log messages it is sent.
    #[derive(Clone, Default)]
    struct LogRecorder(Arc<std::sync::Mutex<Vec<(String, String)>>>);

    impl rmcp::ClientHandler for LogRecorder {
        #[allow(deprecated)]
        async fn on_logging_message(
            &self,
            params: rmcp::model::LoggingMessageNotificationParam,
            _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            if let Ok(mut seen) = self.0.lock() {
                let level = serde_json::to_value(params.level).unwrap();
                seen.push((
                    level.as_str().unwrap_or_default().to_string(),
                    params.data.as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }

    #[tokio::test]
    #[allow(deprecated)]
    async fn log_messages_follow_the_level_the_client_chose() {
        use rmcp::model::{LoggingLevel, SetLevelRequestParams};
        let (server, _workspace) =
            test_server(Entry::of::<Job>().unwrap(), Duration::from_millis(5));
        assert!(server.get_info().capabilities.logging.is_some());
        let connect = |server: Server, lifecycle: rmcp::ClientLifecycleMode| async move {
            let (server_io, client_io) = tokio::io::duplex(1 << 16);
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            let recorder = LogRecorder::default();
            let client = rmcp::ClientServiceExt::serve_with_lifecycle(
                recorder.clone(),
                client_io,
                lifecycle,
            )
            .await
            .unwrap();
            (client, recorder)
        };
        let seen = |recorder: &LogRecorder| recorder.0.lock().unwrap().clone();

        // Handshake era: nothing until the client sets a level.
        let (client, recorder) =
            connect(server.clone(), rmcp::ClientLifecycleMode::Initialize).await;
        client.call_tool(job(2, 1)).await.unwrap();
        assert!(seen(&recorder).is_empty(), "{:?}", seen(&recorder));

        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
            .await
            .unwrap();
        client.call_tool(job(2, 1)).await.unwrap();
        let messages = seen(&recorder);
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert_eq!(
            messages[0],
            ("info".to_string(), "`job` started".to_string())
        );
        assert_eq!(messages[1].0, "info");
        assert!(
            messages[1].1.starts_with("`job` finished in "),
            "{messages:?}"
        );

        // Debug adds what the work reports; a failure is a warning with its code only.
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
            .await
            .unwrap();
        client.call_tool(job(20, 5)).await.unwrap();
        let messages = seen(&recorder);
        assert!(
            messages
                .iter()
                .any(|(level, text)| level == "debug" && text.starts_with("`job`: step ")),
            "{messages:?}"
        );
        let bad = json!({"steps": "many", "secret": "AKIAIOSFODNN7EXAMPLE"});
        client
            .call_tool(
                CallToolRequestParams::new("job").with_arguments(bad.as_object().cloned().unwrap()),
            )
            .await
            .unwrap();
        let last = seen(&recorder).last().cloned().unwrap();
        assert_eq!(last.0, "warning");
        assert!(
            last.1.starts_with("`job` failed with INVALID_INPUT after "),
            "{last:?}"
        );

        // 2026-07-28: no `logging/setLevel`; the level travels with each request.
        let (client, recorder) = connect(
            server,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await;
        assert!(
            client
                .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
                .await
                .is_err()
        );
        client.call_tool(job(1, 1)).await.unwrap();
        assert!(seen(&recorder).is_empty(), "{:?}", seen(&recorder));
        let mut params = job(1, 1);
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_log_level(LoggingLevel::Warning);
        params.meta = Some(meta);
        client.call_tool(params).await.unwrap();
        assert!(seen(&recorder).is_empty(), "{:?}", seen(&recorder));
        let mut params = job(1, 1);
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_log_level(LoggingLevel::Info);
        params.meta = Some(meta);
        client.call_tool(params).await.unwrap();
        assert_eq!(seen(&recorder).len(), 2, "{:?}", seen(&recorder));
    }

    #[tokio::test]
    async fn progress_carries_what_the_work_reports_and_a_timeout_stops_the_work() {
        use std::sync::atomic::Ordering;
        let (mut server, _workspace) =
            test_server(Entry::of::<Steps>().unwrap(), Duration::from_millis(10));
        server.call_timeout = Duration::from_secs(2);
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let recorder = Recorder::default();
        let client = recorder.clone().serve(client_io).await.unwrap();
        let call = |steps: u64| {
            let arguments = json!({"steps": steps, "millis": 20})
                .as_object()
                .cloned()
                .unwrap();
            let mut params = CallToolRequestParams::new("steps").with_arguments(arguments);
            params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
                rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(9)),
            ));
            client.call_tool(params)
        };

        let finished = call(10).await.unwrap();
        assert_eq!(finished.is_error, Some(false));
        assert_eq!(STEPS_ENDED.load(Ordering::SeqCst), 1);
        let seen = recorder.0.lock().unwrap().clone();
        // Whole values are the work's own reports; a heartbeat between them is a fraction on,
        // and every value is above the one before (MCP requires it).
        let reports: Vec<_> = seen
            .iter()
            .filter(|(done, _, _)| done.fract() == 0.0)
            .collect();
        assert!(!reports.is_empty(), "{seen:?}");
        assert!(
            reports
                .iter()
                .all(|(done, total, message)| *total == Some(10.0)
                    && (1.0..=10.0).contains(done)
                    && message == &format!("steps: step {done}")),
            "{seen:?}"
        );
        assert!(
            seen.windows(2).all(|pair| pair[0].0 < pair[1].0),
            "{seen:?}"
        );
        assert!(
            seen.iter()
                .all(|(done, total, _)| total.is_none_or(|total| *done <= total)),
            "{seen:?}"
        );

        // Far more steps than the call timeout allows: the call times out, and the work itself
        // stops at its next check instead of running on unobserved.
        let result = call(100_000).await.unwrap();
        assert_eq!(error_of(&result)["code"], TIMEOUT.as_str());
        while STEPS_ENDED.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(STEPS_ENDED.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn progress_values_only_grow_through_phases_and_heartbeats() {
        let mut clock = ProgressClock::default();
        // A call that reports nothing: heartbeats alone, growing from 0.
        let mut sent = vec![clock.heartbeat(), clock.heartbeat(), clock.heartbeat()];
        // Then a phase at 0 (as the index walk reports), files, a phase change at the same
        // count, a report that went back (a bug in the work, never a step back here), the end.
        sent.push(clock.report(0, Some(5)));
        sent.push(clock.report(2, Some(5)));
        sent.push(clock.heartbeat());
        sent.push(clock.report(2, Some(6)));
        sent.push(clock.report(1, Some(6)));
        sent.push(clock.report(6, Some(6)));
        let sent: Vec<f64> = sent.into_iter().map(Option::unwrap).collect();
        assert!(sent.windows(2).all(|pair| pair[0] < pair[1]), "{sent:?}");
        assert_eq!(sent[4], 2.0);
        assert_eq!(sent[8], 6.0);
        assert!(sent.iter().all(|value| *value <= 6.0), "{sent:?}");
        // At the total, a heartbeat has nothing to add.
        assert_eq!(clock.heartbeat(), None);
        // Many heartbeats on one count stay below the next count.
        let mut clock = ProgressClock::default();
        clock.report(1, None);
        let last = (0..10_000)
            .filter_map(|_| clock.heartbeat())
            .last()
            .unwrap();
        assert!(last > 1.999 && last < 2.0, "{last}");
    }

    /// A client that records the progress values it is sent.
    #[derive(Clone, Default)]
    struct Recorder(Arc<std::sync::Mutex<Vec<Seen>>>);

    /// One progress notification: progress, total, message.
    type Seen = (f64, Option<f64>, String);

    impl rmcp::ClientHandler for Recorder {
        async fn on_progress(
            &self,
            params: ProgressNotificationParam,
            _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            if let Ok(mut seen) = self.0.lock() {
                seen.push((
                    params.progress,
                    params.total,
                    params.message.unwrap_or_default(),
                ));
            }
        }
    }

    fn test_server(extra: Entry, heartbeat: Duration) -> (Server, tempfile::TempDir) {
        let workspace = tempfile::tempdir().unwrap();
        let mut registry = tools::builtins().unwrap();
        registry.push(extra);
        let mut server = Server::with_entries(
            ServerOptions {
                workspace: workspace.path().to_path_buf(),
                workspace_named: true,
                profiles: Profiles::default(),
                env: Vec::new(),
                call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
            },
            registry,
        )
        .unwrap();
        server.heartbeat = heartbeat;
        (server, workspace)
    }

    #[tokio::test]
    async fn a_long_call_reports_its_elapsed_time_as_progress() {
        let (server, _workspace) =
            test_server(Entry::of::<Sleepy>().unwrap(), Duration::from_millis(40));
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let recorder = Recorder::default();
        let client = recorder.clone().serve(client_io).await.unwrap();
        let arguments = json!({"millis": 300}).as_object().cloned().unwrap();

        // rmcp's client sends a progress token with every request anyway; this one is explicit.
        let mut params = CallToolRequestParams::new("sleepy").with_arguments(arguments);
        params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(7)),
        ));
        let reported = client.call_tool(params).await.unwrap();
        assert_eq!(reported.is_error, Some(false));
        let seen = recorder.0.lock().unwrap().clone();
        assert!(seen.len() >= 2, "{seen:?}");
        assert!(
            seen.windows(2).all(|pair| pair[0].0 < pair[1].0),
            "{seen:?}"
        );
        assert!(seen[0].2.starts_with("sleepy: running for"), "{seen:?}");
    }

    #[tokio::test]
    async fn a_call_that_overruns_the_limit_is_a_timeout_and_the_server_carries_on() {
        let (mut server, _workspace) = test_server(Entry::of::<Sleepy>().unwrap(), HEARTBEAT);
        server.call_timeout = Duration::from_millis(100);
        let slow = json!({"millis": 500}).as_object().cloned().unwrap();
        let plain = server.call_plain("sleepy", slow.clone()).await.unwrap();
        assert_eq!(plain.unwrap_err().code(), TIMEOUT);

        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let result = client
            .call_tool(CallToolRequestParams::new("sleepy").with_arguments(slow))
            .await
            .unwrap();
        let error = error_of(&result);
        assert_eq!(error["code"], TIMEOUT.as_str());
        assert!(
            error["message"].as_str().unwrap().contains("within 0 s"),
            "{error}"
        );
        let quick = json!({"millis": 1}).as_object().cloned().unwrap();
        let after = client
            .call_tool(CallToolRequestParams::new("sleepy").with_arguments(quick))
            .await
            .unwrap();
        assert_eq!(after.is_error, Some(false));
    }

    fn error_of(result: &CallToolResult) -> Value {
        assert_eq!(result.is_error, Some(true));
        let text = &result.content[0].as_text().expect("text").text;
        serde_json::from_str::<Value>(text).expect("JSON error")["error"].clone()
    }

    #[tokio::test]
    async fn a_panicking_tool_returns_an_internal_error_and_the_server_stays_up() {
        let workspace = tempfile::tempdir().unwrap();
        let mut registry = tools::builtins().unwrap();
        registry.push(Entry::of::<Boom>().unwrap());
        let server = Server::with_entries(
            ServerOptions {
                workspace: workspace.path().to_path_buf(),
                workspace_named: true,
                profiles: Profiles::default(),
                env: Vec::new(),
                call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
            },
            registry,
        )
        .unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let call = |name: &'static str, arguments: Value| {
            let Value::Object(arguments) = arguments else {
                unreachable!("arguments are objects")
            };
            client.call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
        };

        for _ in 0..2 {
            let result = call("boom", json!({"message": "kaboom"})).await.unwrap();
            let error = error_of(&result);
            assert_eq!(error["code"], INTERNAL_ERROR.as_str());
            let message = error["message"].as_str().unwrap();
            assert!(message.contains("`boom` panicked: kaboom"), "{message}");
            assert!(message.contains("still running"), "{message}");
        }
        let after = call("scrub_secrets", json!({"content": "fine"}))
            .await
            .unwrap();
        assert_eq!(after.is_error, Some(false));
        assert_eq!(
            after.structured_content.unwrap()["scrubbed_content"],
            "fine"
        );
    }

    #[tokio::test]
    async fn only_the_declared_tools_capability_is_served() {
        let (server, _workspace) = test_server(Entry::of::<Sleepy>().unwrap(), HEARTBEAT);
        let capabilities = server.get_info().capabilities;
        assert!(capabilities.tools.is_some());
        assert!(capabilities.prompts.is_none() && capabilities.resources.is_none());
        assert!(capabilities.completions.is_none());
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let not_found = |result: Result<(), rmcp::ServiceError>, method: &str| match result {
            Err(rmcp::ServiceError::McpError(error)) => {
                assert_eq!(
                    error.code,
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    "{method}"
                );
            }
            other => panic!("{method} answered: {other:?}"),
        };
        not_found(client.list_prompts(None).await.map(drop), "prompts/list");
        not_found(
            client.list_resources(None).await.map(drop),
            "resources/list",
        );
        not_found(
            client.list_resource_templates(None).await.map(drop),
            "resources/templates/list",
        );
        assert!(!client.list_all_tools().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_instructions_describe_every_profile_and_its_tools() {
        let (server, _workspace) = test_server(Entry::of::<Sleepy>().unwrap(), HEARTBEAT);
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let instructions = client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .expect("instructions");
        for profile in Profile::every() {
            let line = instructions
                .lines()
                .find(|line| line.starts_with(&format!("- `{profile}`")))
                .unwrap_or_else(|| panic!("{profile} is not described:\n{instructions}"));
            assert!(line.contains(profile.purpose()), "{line}");
            // Every tool of the profile is named on its line, served or not.
            for entry in tools::builtins()
                .unwrap()
                .iter()
                .filter(|entry| entry.group == Group::In(profile))
            {
                assert!(line.contains(&*entry.name), "{}: {line}", entry.name);
            }
        }
        assert!(
            instructions.contains("- `review` (served)"),
            "{instructions}"
        );
        assert!(
            !instructions.contains("- `plan` (served)"),
            "{instructions}"
        );
        for utility in [
            "get_workspace_info",
            "scrub_secrets",
            "tool_manifest",
            "validate_content",
        ] {
            assert!(instructions.contains(utility), "{utility}: {instructions}");
        }
        assert!(
            instructions.contains("With the Tasks extension, execute_plan, index_workspace, qdrant_index, reactive_review_pr, reindex return a task"),
            "{instructions}"
        );
    }

    #[test]
    fn a_workspace_that_is_not_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let options = |workspace: PathBuf| ServerOptions {
            workspace,
            workspace_named: true,
            profiles: Profiles::default(),
            env: Vec::new(),
            call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
        };
        assert!(matches!(
            Server::new(options(file)),
            Err(ServerError::NotADirectory { .. })
        ));
        assert!(matches!(
            Server::new(options(dir.path().join("missing"))),
            Err(ServerError::Workspace { .. })
        ));
    }

    /// ck's `semantic_search` and seed 001's share a name: one server serves one of them. The
    /// dialects alone, or beside profiles without those names, start.
    #[test]
    fn profiles_sharing_a_tool_name_are_not_served_together() {
        let dir = tempfile::tempdir().unwrap();
        let start = |profiles: &str| {
            Server::new(ServerOptions {
                workspace: dir.path().to_path_buf(),
                workspace_named: true,
                profiles: profiles.parse().unwrap(),
                env: Vec::new(),
                call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
            })
        };
        for (profiles, first, second) in [
            ("all,ck", "context", "ck"),
            ("context,ck", "context", "ck"),
            ("context,context-engine", "context", "context-engine"),
        ] {
            let err = start(profiles).unwrap_err();
            assert!(
                matches!(&err, ServerError::NameClash { first: f, second: s, .. }
                    if *f == first && *s == second),
                "{profiles}: {err}"
            );
            assert!(
                err.to_string().contains("Start one server per profile"),
                "{err}"
            );
        }
        for profiles in [
            "ck",
            "context-engine",
            "ck,context-engine",
            "review,memory,ck",
            "all",
        ] {
            let server = start(profiles).unwrap_or_else(|err| panic!("{profiles}: {err}"));
            let names = server.tool_names();
            assert_eq!(
                names.contains(&"hybrid_search".to_string()),
                profiles.contains("ck"),
                "{profiles}: {names:?}"
            );
        }
    }

    #[test]
    fn a_root_or_home_directory_is_served_only_when_named() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = home.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let env = vec![("HOME".to_string(), home.display().to_string())];
        let start = |workspace: &Path, workspace_named: bool| {
            Server::new(ServerOptions {
                workspace: workspace.to_path_buf(),
                workspace_named,
                profiles: Profiles::default(),
                env: env.clone(),
                call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
            })
        };
        for (workspace, what) in [
            (Path::new("/"), "a file-system root"),
            (home.as_path(), "the home directory"),
            (dir.path(), "a directory holding the home directory"),
        ] {
            let err = start(workspace, false).unwrap_err();
            assert!(
                matches!(&err, ServerError::TooBroad { what: found, .. } if *found == what),
                "{err}"
            );
            assert!(err.to_string().contains("--repo"), "{err}");
            assert!(start(workspace, true).is_ok(), "{}", workspace.display());
        }
        assert!(start(&project, false).is_ok());
    }

    #[test]
    fn errors_render_upstreams_shape() {
        let result = ToolError::new(tollgate::ErrorCode::FileNotFound, "no such file")
            .with_field(Some("invariants_path"))
            .into_result();
        assert_eq!(
            error_of(&result),
            json!({"code": "FILE_NOT_FOUND", "message": "no such file", "details": {"field": "invariants_path"}})
        );
        assert_eq!(ToolError::new(CANCELLED, "x").code(), "CANCELLED");
    }
}
