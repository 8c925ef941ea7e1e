//! The team's own tools: Lua scripts in `.tollgate/tools/*.lua` and the directories `[tools]
//! dirs` names, each a global `tool` table (or the chunk's return value) with `name`,
//! `description`, `parameters` (a JSON Schema table) and `function tool.execute(args)`.
//!
//! [`UserTools`] loads them at start and again when a file or `tollgate.toml` changed (looked
//! at no more than once a second, when someone asks), so an edit is served within seconds
//! without a restart. A broken file is listed with its error and never served; the others
//! still are; a name a built-in has is refused. [`UserTools::call`] validates the arguments
//! against the declared schema, then runs the script in a fresh sandboxed state
//! ([`sandbox`]) on a thread of its own under the call's time, instruction and memory limits,
//! with the host API ([`host`]) of core operations. Front ends (the MCP server, the CLI) only
//! adapt this.

mod error;
mod host;
mod http;
mod sandbox;

pub use error::UserToolError;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaSerdeExt, Table, Value};

use crate::config::{self, ConfigFile, RawConfig, ToolsConfig};
use crate::workspace::{RepoPath, Workspace};

/// Where a workspace's tools live, besides `[tools] dirs`.
pub const TOOLS_DIR: &str = ".tollgate/tools";
/// The largest script loaded.
const MAX_SCRIPT_BYTES: u64 = 1024 * 1024;
/// How often the files are looked at again, at most.
const RECHECK: Duration = Duration::from_secs(1);
/// How long past its limit a call's thread is waited for when the script is stuck where the
/// instruction hook cannot stop it (inside one long library call); the call is answered then,
/// and the thread finishes on its own.
const GRACE: Duration = Duration::from_secs(1);

/// One tool that loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct UserTool {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: serde_json::Value,
    /// The script, relative to the workspace.
    pub script: String,
    source: Arc<str>,
}

/// A script that did not load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenTool {
    pub script: String,
    pub error: String,
}

/// What is loaded now.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Sorted by name.
    pub tools: Vec<UserTool>,
    pub broken: Vec<BrokenTool>,
    config: Option<Arc<ToolsConfig>>,
}

/// A workspace's user tools, reloaded when their files change.
#[derive(Debug)]
pub struct UserTools {
    root: PathBuf,
    env: Arc<Vec<(String, String)>>,
    reserved: Vec<String>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    stamp: Vec<(PathBuf, Option<SystemTime>, u64)>,
    loaded: Arc<Loaded>,
    checked: Instant,
}

impl UserTools {
    /// Loads the tools of the workspace at `root` (canonical). `env` is the front end's
    /// environment (configuration layers, credentials); `reserved` the names no user tool may
    /// take (the built-ins'). Broken files are logged.
    pub fn open(root: &Path, env: Vec<(String, String)>, reserved: Vec<String>) -> UserTools {
        let tools = UserTools {
            root: root.to_path_buf(),
            env: Arc::new(env),
            reserved,
            state: Mutex::new(State {
                stamp: Vec::new(),
                loaded: Arc::new(Loaded {
                    tools: Vec::new(),
                    broken: Vec::new(),
                    config: None,
                }),
                checked: Instant::now(),
            }),
        };
        tools.refresh(true);
        tools
    }

    /// The tools loaded now, after reloading if a file changed since the last look.
    pub fn loaded(&self) -> Arc<Loaded> {
        self.refresh(false)
    }

    /// Runs tool `name` with `arguments`: validated against its schema, then run sandboxed.
    pub fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<serde_json::Value, UserToolError> {
        let loaded = self.loaded();
        let Some(tool) = loaded.tools.iter().find(|tool| tool.name == name).cloned() else {
            return Err(UserToolError::NotFound {
                name: name.to_string(),
                available: loaded
                    .tools
                    .iter()
                    .map(|tool| tool.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let config = loaded
            .config
            .clone()
            .expect("a loaded tool comes with its configuration");
        if let Some(problem) = crate::secrets::check_against_schema(&arguments, &tool.parameters)
            .into_iter()
            .next()
        {
            let field = problem.field.trim_start_matches('/').replace('/', ".");
            return Err(UserToolError::Invalid {
                tool: tool.name.clone(),
                field: if field.is_empty() {
                    "arguments".to_string()
                } else {
                    field
                },
                message: problem.message,
            });
        }
        let limits = sandbox::Limits {
            timeout: config.timeout,
            max_instructions: config.max_instructions,
            memory_bytes: config.memory_bytes,
        };
        let host = host::Host {
            root: self.root.clone(),
            env: Arc::clone(&self.env),
            tool: tool.name.clone(),
            access: config.access.get(&tool.name).cloned().unwrap_or_default(),
            deadline: Instant::now() + config.timeout,
        };
        let running = tool.clone();
        on_thread(&tool, config.timeout, move || {
            run(&running, arguments, limits, host)
        })
    }

    fn refresh(&self, force: bool) -> Arc<Loaded> {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !force && state.checked.elapsed() < RECHECK {
            return Arc::clone(&state.loaded);
        }
        state.checked = Instant::now();
        let (config, dirs) = self.config_and_dirs();
        let stamp = stamp_of(&self.root, &dirs);
        if !force && stamp == state.stamp {
            return Arc::clone(&state.loaded);
        }
        let loaded = Arc::new(self.load(config, &dirs));
        for broken in &loaded.broken {
            tracing::warn!(script = %broken.script, "a user tool is not served: {}", broken.error);
        }
        state.stamp = stamp;
        state.loaded = Arc::clone(&loaded);
        loaded
    }

    fn config_and_dirs(&self) -> (Result<ToolsConfig, String>, Vec<String>) {
        let config = config::load(
            ConfigFile::Discover(&self.root),
            self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            RawConfig::default(),
        )
        .and_then(|raw| raw.tools.resolve())
        .map_err(|err| err.to_string());
        let mut dirs = vec![TOOLS_DIR.to_string()];
        if let Ok(config) = &config {
            dirs.extend(config.dirs.iter().cloned());
        }
        (config, dirs)
    }

    fn load(&self, config: Result<ToolsConfig, String>, dirs: &[String]) -> Loaded {
        let config = match config {
            Ok(config) => Arc::new(config),
            // Without its configuration no tool is served: its limits and hosts are unknown.
            Err(error) => {
                return Loaded {
                    tools: Vec::new(),
                    broken: vec![BrokenTool {
                        script: config::CONFIG_FILE_NAME.to_string(),
                        error,
                    }],
                    config: None,
                };
            }
        };
        let mut tools: Vec<UserTool> = Vec::new();
        let mut broken = Vec::new();
        for (script, path) in scripts(&self.root, dirs, &mut broken) {
            match load_script(&path, &script, &config) {
                Ok(tool) if self.reserved.contains(&tool.name) => broken.push(BrokenTool {
                    script,
                    error: format!(
                        "`{}` is the name of a built-in tool; a user tool cannot replace it",
                        tool.name
                    ),
                }),
                Ok(tool) => match tools.iter().find(|other| other.name == tool.name) {
                    Some(other) => broken.push(BrokenTool {
                        error: format!("`{}` is already defined by {}", tool.name, other.script),
                        script,
                    }),
                    None => tools.push(tool),
                },
                Err(error) => broken.push(BrokenTool { script, error }),
            }
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Loaded {
            tools,
            broken,
            config: Some(config),
        }
    }
}

/// Every `*.lua` file of the tool directories, as (workspace-relative name, path), sorted. A
/// directory outside the workspace is reported broken; a missing one is skipped.
fn scripts(root: &Path, dirs: &[String], broken: &mut Vec<BrokenTool>) -> Vec<(String, PathBuf)> {
    let Ok(workspace) = Workspace::new(root) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for dir in dirs {
        let relative = match RepoPath::new(dir) {
            Ok(relative) => relative,
            Err(err) => {
                broken.push(BrokenTool {
                    script: dir.clone(),
                    error: format!("[tools] dirs: {}", err.reason()),
                });
                continue;
            }
        };
        if !workspace.join(&relative).exists() {
            continue;
        }
        let resolved = match workspace.resolve(&relative) {
            Ok(resolved) => resolved,
            Err(err) => {
                broken.push(BrokenTool {
                    script: dir.clone(),
                    error: format!("[tools] dirs: {}", err.reason()),
                });
                continue;
            }
        };
        let Ok(entries) = std::fs::read_dir(&resolved) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| name.ends_with(".lua"))
            .collect();
        names.sort();
        for name in names {
            found.push((
                format!("{}/{name}", relative.as_str()),
                resolved.join(&name),
            ));
        }
    }
    found
}

/// What changes when a tool file or the configuration changes: each directory and file with
/// its modification time and size.
fn stamp_of(root: &Path, dirs: &[String]) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
    let mut stamp = Vec::new();
    let mut look = |path: PathBuf| {
        if let Ok(meta) = std::fs::metadata(&path) {
            stamp.push((path, meta.modified().ok(), meta.len()));
        }
    };
    look(root.join(config::CONFIG_FILE_NAME));
    for dir in dirs {
        let dir = root.join(dir);
        look(dir.clone());
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths {
                look(path);
            }
        }
    }
    stamp
}

/// Runs `work` on a thread of its own and waits for it at most `timeout` and a grace period:
/// a script stuck where the hook cannot stop it is answered as past its limit, and its thread
/// finishes on its own.
fn on_thread<T: Send + 'static>(
    tool: &UserTool,
    timeout: Duration,
    work: impl FnOnce() -> Result<T, UserToolError> + Send + 'static,
) -> Result<T, UserToolError> {
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(format!("tool {}", tool.name))
        .spawn(move || {
            let _ = sender.send(work());
        });
    if let Err(err) = spawned {
        return Err(script_error(
            tool,
            None,
            format!("cannot start its thread: {err}"),
        ));
    }
    match receiver.recv_timeout(timeout + GRACE) {
        Ok(outcome) => outcome,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(UserToolError::Limit {
            tool: tool.name.clone(),
            script: tool.script.clone(),
            limit: sandbox::LimitHit::Time(timeout).to_string(),
        }),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(script_error(
            tool,
            None,
            "its run ended without an answer (a bug in Tollgate)".to_string(),
        )),
    }
}

/// Runs a script source's `source.fetch(since)` in the user tools' sandbox, under `[tools]`
/// limits and with their host API (its HTTP requests reaching what `access` allows, the
/// source's `allowed_hosts` and `credentials`), and returns what it returned.
/// `script` is the file relative to the workspace at `root`; errors name the source as
/// `source:<name>`.
pub(crate) fn fetch_source(
    root: &Path,
    env: Vec<(String, String)>,
    name: &str,
    script: &RepoPath,
    access: config::ToolAccess,
    since: Option<String>,
) -> Result<serde_json::Value, UserToolError> {
    let pseudo = UserTool {
        name: format!("source:{name}"),
        description: String::new(),
        parameters: serde_json::Value::Null,
        script: script.as_str().to_string(),
        source: Arc::from(""),
    };
    let failed = |message: String| script_error(&pseudo, None, message);
    let env = Arc::new(env);
    let config = config::load(
        ConfigFile::Discover(root),
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        RawConfig::default(),
    )
    .and_then(|raw| raw.tools.resolve())
    .map_err(|err| failed(err.to_string()))?;
    let workspace = Workspace::new(root).map_err(|err| failed(err.to_string()))?;
    let path = workspace
        .resolve(script)
        .map_err(|err| failed(format!("the script {script}: {}", err.reason())))?;
    let bytes = crate::input::read_file(
        &path,
        "source script",
        crate::input::Limit::fixed(MAX_SCRIPT_BYTES),
    )
    .map_err(|err| failed(err.to_string()))?;
    let text: Arc<str> = String::from_utf8(bytes)
        .map_err(|_| failed("the file is not valid UTF-8".to_string()))?
        .into();
    let tool = UserTool {
        source: text,
        ..pseudo
    };
    let limits = sandbox::Limits {
        timeout: config.timeout,
        max_instructions: config.max_instructions,
        memory_bytes: config.memory_bytes,
    };
    let host = host::Host {
        root: root.to_path_buf(),
        env,
        tool: tool.name.clone(),
        access,
        deadline: Instant::now() + config.timeout,
    };
    let running = tool.clone();
    on_thread(&tool, config.timeout, move || {
        let outcome = (|| -> mlua::Result<serde_json::Value> {
            let lua = sandbox::new_state(limits)?;
            host::install(&lua, host)?;
            let table = declared_as(&lua, &running.script, &running.source, "source", "fetch")?;
            let fetch: Function = table.get("fetch")?;
            let result: Value = fetch.call(since)?;
            lua.from_value(result)
        })();
        outcome.map_err(|err| describe_run(&running, &err, limits))
    })
}

fn load_script(path: &Path, script: &str, config: &ToolsConfig) -> Result<UserTool, String> {
    let bytes = crate::input::read_file(
        path,
        "tool script",
        crate::input::Limit::fixed(MAX_SCRIPT_BYTES),
    )
    .map_err(|err| err.to_string())?;
    let source: Arc<str> = String::from_utf8(bytes)
        .map_err(|_| "the file is not valid UTF-8".to_string())?
        .into();
    let limits = sandbox::Limits {
        timeout: config.timeout,
        max_instructions: config.max_instructions,
        memory_bytes: config.memory_bytes,
    };
    let lua = sandbox::new_state(limits).map_err(|err| sandbox::message_of(&err))?;
    let table = declared(&lua, script, &source).map_err(|err| describe_load(&err))?;
    let text = |key: &str| -> Result<String, String> {
        match table.get::<Value>(key) {
            Ok(Value::String(text)) if !text.to_string_lossy().trim().is_empty() => {
                Ok(text.to_string_lossy())
            }
            _ => Err(format!("`tool.{key}` must be a non-empty string")),
        }
    };
    let name = text("name")?;
    let valid_name = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid_name {
        return Err(format!(
            "`tool.name` `{name}` must be lower-case letters, digits and `_`, starting with a letter (at most 64)"
        ));
    }
    let description = text("description")?;
    let parameters = match table.get::<Value>("parameters") {
        Ok(Value::Nil) => serde_json::json!({"type": "object", "properties": {}}),
        Ok(value @ Value::Table(_)) => lua
            .from_value::<serde_json::Value>(value)
            .map_err(|err| format!("`tool.parameters` is not a JSON Schema table: {err}"))?,
        _ => return Err("`tool.parameters` must be a table (a JSON Schema)".to_string()),
    };
    if parameters.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err("`tool.parameters` must be an object schema: type = \"object\"".to_string());
    }
    if !matches!(table.get::<Value>("execute"), Ok(Value::Function(_))) {
        return Err(
            "`tool.execute` must be a function: function tool.execute(args) … end".to_string(),
        );
    }
    Ok(UserTool {
        name,
        description,
        parameters,
        script: script.to_string(),
        source,
    })
}

/// Runs a script's chunk (text only, never bytecode) and returns its tool table: the chunk's
/// return value, or the global `tool`.
fn declared(lua: &Lua, script: &str, source: &str) -> mlua::Result<Table> {
    declared_as(lua, script, source, "tool", "execute")
}

/// The chunk's returned table or its global `global` (`tool`, `source`), which must hold the
/// function `function`.
fn declared_as(
    lua: &Lua,
    script: &str,
    source: &str,
    global: &str,
    function: &str,
) -> mlua::Result<Table> {
    let returned: Value = lua
        .load(source)
        .set_name(format!("@{script}"))
        .set_mode(ChunkMode::Text)
        .eval()?;
    let table = match returned {
        Value::Table(table) => table,
        _ => match lua.globals().get::<Value>(global)? {
            Value::Table(table) => table,
            _ => {
                return Err(mlua::Error::RuntimeError(format!(
                    "the script declares no `{global}` table (a global `{global} = {{…}}` or `return {global}`)"
                )));
            }
        },
    };
    if global != "tool" && !matches!(table.get::<Value>(function)?, Value::Function(_)) {
        return Err(mlua::Error::RuntimeError(format!(
            "`{global}.{function}` must be a function: function {global}.{function}(…) … end"
        )));
    }
    Ok(table)
}

fn describe_load(err: &mlua::Error) -> String {
    match sandbox::stop_of(err) {
        Some(sandbox::Stop::Limit(hit)) => format!("loading stopped: {hit}"),
        Some(sandbox::Stop::Memory) => "loading stopped: it reached its memory limit".to_string(),
        None => sandbox::message_of(err),
    }
}

/// One call, on its own thread and state.
fn run(
    tool: &UserTool,
    arguments: serde_json::Value,
    limits: sandbox::Limits,
    host: host::Host,
) -> Result<serde_json::Value, UserToolError> {
    let outcome = (|| -> mlua::Result<serde_json::Value> {
        let lua = sandbox::new_state(limits)?;
        host::install(&lua, host)?;
        let table = declared(&lua, &tool.script, &tool.source)?;
        let execute: Function = table.get("execute")?;
        let arguments = host::to_lua(&lua, &arguments)?;
        let result: Value = execute.call(arguments)?;
        lua.from_value(result)
    })();
    outcome.map_err(|err| describe_run(tool, &err, limits))
}

/// A run's failure as the contract says it: a limit, or a script error with its line.
fn describe_run(tool: &UserTool, err: &mlua::Error, limits: sandbox::Limits) -> UserToolError {
    match sandbox::stop_of(err) {
        Some(sandbox::Stop::Limit(hit)) => UserToolError::Limit {
            tool: tool.name.clone(),
            script: tool.script.clone(),
            limit: hit.to_string(),
        },
        Some(sandbox::Stop::Memory) => script_error(
            tool,
            line_of(err, &tool.script),
            format!(
                "it reached its memory limit of {} MiB ([tools] memory_mb)",
                limits.memory_bytes / (1024 * 1024)
            ),
        ),
        None => {
            let line = line_of(err, &tool.script);
            let message = sandbox::message_of(err);
            // Lua's own prefix (`script:line: `) is said by the error already.
            let message = strip_position(&message, &tool.script).to_string();
            script_error(tool, line, message)
        }
    }
}

fn script_error(tool: &UserTool, line: Option<u32>, message: String) -> UserToolError {
    UserToolError::Script {
        tool: tool.name.clone(),
        script: tool.script.clone(),
        line,
        message,
    }
}

/// The script line an error happened on: Lua's `script:line:` prefix, or the innermost frame
/// of the script in a callback's traceback (the host API and sandbox refusals).
fn line_of(err: &mlua::Error, script: &str) -> Option<u32> {
    let texts: Vec<String> = match err {
        mlua::Error::CallbackError { traceback, .. } => {
            vec![sandbox::message_of(err), traceback.clone()]
        }
        other => vec![sandbox::message_of(other), other.to_string()],
    };
    let needle = format!("{script}:");
    texts.iter().find_map(|text| {
        text.match_indices(&needle).find_map(|(at, _)| {
            let digits: String = text[at + needle.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
    })
}

fn strip_position<'a>(message: &'a str, script: &str) -> &'a str {
    let Some(rest) = message
        .strip_prefix(script)
        .and_then(|r| r.strip_prefix(':'))
    else {
        return message;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return message;
    }
    rest[digits..].strip_prefix(": ").unwrap_or(message)
}

#[cfg(test)]
mod tests;
