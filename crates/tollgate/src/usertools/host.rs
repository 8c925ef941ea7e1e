//! The `tollgate` table a script calls: each function one core operation through the same
//! `api` function the built-in tools call, so path confinement and secret masking are theirs.
//! A refusal or failure is a Lua error naming the function (`tollgate.get_file: …`).

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use mlua::{Lua, LuaSerdeExt, MultiValue, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::config::{self, ConfigFile, RawConfig, ToolAccess};

/// What a call's host functions may reach.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    pub(crate) root: PathBuf,
    pub(crate) env: Arc<Vec<(String, String)>>,
    /// The tool's name (for the log).
    pub(crate) tool: String,
    pub(crate) access: ToolAccess,
    /// When the call's time is up: an HTTP request gets what is left.
    pub(crate) deadline: Instant,
}

/// Installs the `tollgate` table.
pub(crate) fn install(lua: &Lua, host: Host) -> mlua::Result<()> {
    let host = Rc::new(host);
    let tollgate = lua.create_table()?;
    {
        let host = Rc::clone(&host);
        tollgate.set(
            "search",
            lua.create_function(move |lua, request: Value| {
                operation(lua, "tollgate.search", request, |request| {
                    host.search(&request)
                })
            })?,
        )?;
    }
    {
        let host = Rc::clone(&host);
        tollgate.set(
            "get_file",
            lua.create_function(move |lua, path: String| {
                let file = host
                    .get_file(&path)
                    .map_err(|message| fail("tollgate.get_file", message))?;
                to_lua(lua, &file)
            })?,
        )?;
    }
    {
        let host = Rc::clone(&host);
        tollgate.set(
            "review_diff",
            lua.create_function(move |lua, request: Value| {
                operation(lua, "tollgate.review_diff", request, |request| {
                    host.review_diff(&request)
                })
            })?,
        )?;
    }
    let memory = lua.create_table()?;
    {
        let host = Rc::clone(&host);
        memory.set(
            "store",
            lua.create_function(move |lua, request: Value| {
                operation(lua, "tollgate.memory.store", request, |request| {
                    host.with_memory(|memory| crate::api::notes::memory_store(memory, &request))
                })
            })?,
        )?;
    }
    {
        let host = Rc::clone(&host);
        memory.set(
            "find",
            lua.create_function(move |lua, request: Value| {
                operation(lua, "tollgate.memory.find", request, |request| {
                    host.with_memory(|memory| crate::api::notes::memory_find(memory, &request))
                })
            })?,
        )?;
    }
    tollgate.set("memory", memory)?;
    let json = lua.create_table()?;
    json.set(
        "encode",
        lua.create_function(|lua, value: Value| {
            let value: serde_json::Value = lua
                .from_value(value)
                .map_err(|err| fail("tollgate.json.encode", err.to_string()))?;
            Ok(value.to_string())
        })?,
    )?;
    json.set(
        "decode",
        lua.create_function(|lua, text: String| {
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|err| fail("tollgate.json.decode", err.to_string()))?;
            to_lua(lua, &value)
        })?,
    )?;
    tollgate.set("json", json)?;
    {
        let host = Rc::clone(&host);
        tollgate.set(
            "log",
            lua.create_function(move |_, values: MultiValue| {
                tracing::info!(target: "tollgate::usertools", tool = %host.tool, "{}", joined(&values));
                Ok(())
            })?,
        )?;
    }
    let http = lua.create_table()?;
    {
        let host = Rc::clone(&host);
        http.set(
            "request",
            lua.create_function(move |lua, request: Value| {
                operation(lua, "tollgate.http.request", request, |request| {
                    let left = host.deadline.saturating_duration_since(Instant::now());
                    super::http::request(&host.access, &host.env, request, left)
                })
            })?,
        )?;
    }
    tollgate.set("http", http)?;
    lua.globals().set("tollgate", tollgate)?;
    Ok(())
}

/// Log text of `tollgate.log`/`print` arguments, tab-separated like Lua's `print`, with secrets
/// masked: a log is as far as a secret may never go.
pub(crate) fn joined(values: &MultiValue) -> String {
    let text = values
        .iter()
        .map(|value| match value {
            Value::String(text) => text.to_string_lossy(),
            Value::Nil => "nil".to_string(),
            Value::Boolean(flag) => flag.to_string(),
            Value::Integer(number) => number.to_string(),
            Value::Number(number) => number.to_string(),
            other => other.type_name().to_string(),
        })
        .collect::<Vec<_>>()
        .join("\t");
    crate::secrets::scrub(&text, 0, 0).text
}

/// Converts for a script: `null` and `None` become `nil` (a script tests fields with `if`),
/// arrays keep their array mark so `tollgate.json.encode` writes them back as arrays.
pub(crate) fn to_lua<T: Serialize + ?Sized>(lua: &Lua, value: &T) -> mlua::Result<Value> {
    lua.to_value_with(
        value,
        mlua::serde::SerializeOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false),
    )
}

fn fail(what: &str, message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::RuntimeError(format!("{what}: {message}"))
}

/// A host function over a request table: parsed into the operation's request type (unknown
/// fields refused like on the wire), run, answered as a table.
fn operation<Request: DeserializeOwned, Response: Serialize>(
    lua: &Lua,
    what: &str,
    request: Value,
    run: impl FnOnce(Request) -> Result<Response, String>,
) -> mlua::Result<Value> {
    if !matches!(request, Value::Table(_)) {
        return Err(fail(what, "takes one table of arguments: {…}"));
    }
    let request: Request = lua
        .from_value(request)
        .map_err(|err| fail(what, super::sandbox::message_of(&err)))?;
    let response = run(request).map_err(|message| fail(what, message))?;
    to_lua(lua, &response)
}

impl Host {
    fn search(
        &self,
        request: &crate::api::knowledge::ToolsSearchRequest,
    ) -> Result<crate::api::knowledge::ToolsSearchResponse, String> {
        let workspace = self.workspace()?;
        self.with_memory(|memory| crate::api::knowledge::tools_search(&workspace, memory, request))
    }

    fn get_file(&self, path: &str) -> Result<crate::api::context::request::FileContent, String> {
        let workspace = self.workspace()?;
        crate::api::context::get_file(
            &workspace,
            &crate::api::context::request::GetFileRequest {
                path: path.to_string(),
                include_metadata: false,
            },
        )
        .map_err(|err| err.to_string())
    }

    fn review_diff(
        &self,
        request: &crate::api::review::ReviewDiffRequest,
    ) -> Result<crate::api::review::ReviewDiffResponse, String> {
        let settings = config::load(
            ConfigFile::Discover(&self.root),
            self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            RawConfig::default(),
        )
        .map_err(|err| err.to_string())?;
        crate::api::review::review_diff_request(&self.root, settings, request)
            .map_err(|err| err.to_string())
    }

    fn workspace(&self) -> Result<crate::workspace::IndexedWorkspace, String> {
        crate::workspace::IndexedWorkspace::open(&self.root).map_err(|err| err.to_string())
    }

    fn with_memory<T>(
        &self,
        run: impl FnOnce(&crate::memory::Memory<'_>) -> Result<T, crate::api::ApiError>,
    ) -> Result<T, String> {
        let store =
            crate::store::Store::open_in_workspace(&self.root).map_err(|err| err.to_string())?;
        let embedder = crate::workspace::HashedEmbedder;
        let memory = crate::memory::Memory::new(&store, &embedder);
        run(&memory).map_err(|err| err.to_string())
    }
}
