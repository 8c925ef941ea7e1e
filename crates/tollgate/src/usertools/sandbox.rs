//! The Lua state a user's script runs in, one per call (and one per load), so nothing a script
//! does outlives it or reaches another call.
//!
//! Only the `table`, `string`, `math` and `utf8` libraries are loaded. `os`, `io`, `debug`,
//! `package` and `coroutine` are tables that refuse every use by name, as are `require`,
//! `load`, `loadfile`, `dofile` and `string.dump` (no file, process, environment, native module
//! or bytecode is reachable); `collectgarbage` answers only `"count"`; `print` and `warn` go to
//! the log, never to stdout (the MCP stdio transport's). A heap limit makes an allocation past
//! it fail; an instruction hook stops the script at its time limit or instruction budget.
//! `pcall` and `xpcall` are replaced by versions that let those two stops through, so a script
//! cannot catch its own limit and go on.

use std::cell::Cell;
use std::time::{Duration, Instant};

use mlua::{
    Function, HookTriggers, Lua, LuaOptions, MultiValue, ObjectLike, StdLib, Table, Value, VmState,
};

/// The limits of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) max_instructions: u64,
    pub(crate) memory_bytes: usize,
}

/// A limit the script hit, raised from the instruction hook.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum LimitHit {
    #[error("it ran past its time limit of {} ms ([tools] timeout_ms)", .0.as_millis())]
    Time(Duration),
    #[error("it ran past its budget of {0} Lua instructions ([tools] max_instructions)")]
    Instructions(u64),
}

/// How often the hook looks at the clock and the count: cheap enough, and a fraction of a
/// millisecond between looks.
const HOOK_EVERY: u32 = 1_000;

/// A fresh sandboxed state whose limits start counting now.
pub(crate) fn new_state(limits: Limits) -> mlua::Result<Lua> {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8,
        LuaOptions::default(),
    )?;
    install_refusals(&lua)?;
    let started = Instant::now();
    let executed = Cell::new(0u64);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_lua, _debug| {
            let count = executed.get() + u64::from(HOOK_EVERY);
            executed.set(count);
            if count > limits.max_instructions {
                return Err(mlua::Error::external(LimitHit::Instructions(
                    limits.max_instructions,
                )));
            }
            if started.elapsed() > limits.timeout {
                return Err(mlua::Error::external(LimitHit::Time(limits.timeout)));
            }
            Ok(VmState::Continue)
        },
    )?;
    lua.set_memory_limit(limits.memory_bytes)?;
    Ok(lua)
}

/// The error of a refused capability, naming it.
pub(crate) fn refused(what: &str) -> mlua::Error {
    mlua::Error::RuntimeError(format!(
        "`{what}` is refused: Tollgate tools run in a sandbox without files, processes, the environment, native modules or bytecode; use the tollgate.* host API"
    ))
}

/// The limit an error stops the script for, if any: a time or instruction limit, or the
/// heap limit. A script never catches these.
pub(crate) fn stop_of(err: &mlua::Error) -> Option<Stop> {
    if let Some(hit) = err.downcast_ref::<LimitHit>() {
        return Some(Stop::Limit(hit.clone()));
    }
    matches!(root(err), mlua::Error::MemoryError(_)).then_some(Stop::Memory)
}

/// Why a script was stopped.
#[derive(Debug, Clone)]
pub(crate) enum Stop {
    Limit(LimitHit),
    Memory,
}

/// The error a callback chain wraps, innermost.
pub(crate) fn root(err: &mlua::Error) -> &mlua::Error {
    match err {
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            root(cause)
        }
        other => other,
    }
}

/// The message of an error as a script author reads it: Lua's own text (`file:line: what`),
/// without mlua's prefixes and tracebacks.
pub(crate) fn message_of(err: &mlua::Error) -> String {
    let message = match root(err) {
        mlua::Error::RuntimeError(message) | mlua::Error::MemoryError(message) => message.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::ExternalError(inner) => inner.to_string(),
        other => other.to_string(),
    };
    match message.split_once("\nstack traceback:") {
        Some((message, _traceback)) => message.to_string(),
        None => message,
    }
}

fn install_refusals(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    for name in ["load", "loadfile", "dofile", "require", "loadstring"] {
        globals.set(name, refusal(lua, name)?)?;
    }
    let string: Table = globals.get("string")?;
    string.set("dump", refusal(lua, "string.dump")?)?;
    for library in ["os", "io", "debug", "package", "coroutine"] {
        globals.set(library, refused_library(lua, library)?)?;
    }
    globals.set(
        "collectgarbage",
        lua.create_function(|lua, (option, _rest): (Option<String>, MultiValue)| {
            match option.as_deref() {
                Some("count") => Ok(lua.used_memory() as f64 / 1024.0),
                Some(other) => Err(refused(&format!("collectgarbage(\"{other}\")"))),
                None => Err(refused("collectgarbage()")),
            }
        })?,
    )?;
    let log = lua.create_function(|_, values: MultiValue| {
        tracing::info!(target: "tollgate::usertools", "{}", super::host::joined(&values));
        Ok(())
    })?;
    globals.set("print", log.clone())?;
    globals.set("warn", log)?;
    globals.set("pcall", lua.create_function(protected_call)?)?;
    globals.set("xpcall", lua.create_function(protected_call_with_handler)?)?;
    Ok(())
}

fn refusal(lua: &Lua, what: &'static str) -> mlua::Result<Function> {
    lua.create_function(move |_, _: MultiValue| -> mlua::Result<()> { Err(refused(what)) })
}

/// A table standing for a library that is not there: any field read or written is refused,
/// naming the field (`os.execute`), and its metatable is hidden.
fn refused_library(lua: &Lua, library: &'static str) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    let meta = lua.create_table()?;
    let name_of = move |key: &Value| match key {
        Value::String(text) => format!("{library}.{}", text.to_string_lossy()),
        _ => library.to_string(),
    };
    meta.set(
        "__index",
        lua.create_function(
            move |_, (_table, key): (Value, Value)| -> mlua::Result<()> {
                Err(refused(&name_of(&key)))
            },
        )?,
    )?;
    meta.set(
        "__newindex",
        lua.create_function(
            move |_, (_table, key, _value): (Value, Value, Value)| -> mlua::Result<()> {
                Err(refused(&match &key {
                    Value::String(text) => format!("{library}.{}", text.to_string_lossy()),
                    _ => library.to_string(),
                }))
            },
        )?,
    )?;
    meta.set("__metatable", false)?;
    table.set_metatable(Some(meta))?;
    Ok(table)
}

/// `pcall(f, ...)`: Lua's, except that a limit or heap stop is not caught.
fn protected_call(lua: &Lua, (callee, args): (Value, MultiValue)) -> mlua::Result<MultiValue> {
    match call_value(&callee, args) {
        Ok(mut values) => {
            values.push_front(Value::Boolean(true));
            Ok(values)
        }
        Err(err) if stop_of(&err).is_some() => Err(err),
        Err(err) => Ok(MultiValue::from_vec(vec![
            Value::Boolean(false),
            Value::String(lua.create_string(message_of(&err))?),
        ])),
    }
}

/// `xpcall(f, handler, ...)`: likewise; the handler sees the error's message.
fn protected_call_with_handler(
    lua: &Lua,
    (callee, handler, args): (Value, Function, MultiValue),
) -> mlua::Result<MultiValue> {
    match call_value(&callee, args) {
        Ok(mut values) => {
            values.push_front(Value::Boolean(true));
            Ok(values)
        }
        Err(err) if stop_of(&err).is_some() => Err(err),
        Err(err) => {
            let mut values: MultiValue = handler.call(lua.create_string(message_of(&err))?)?;
            values.push_front(Value::Boolean(false));
            Ok(values)
        }
    }
}

fn call_value(callee: &Value, args: MultiValue) -> mlua::Result<MultiValue> {
    match callee {
        Value::Function(function) => function.call(args),
        Value::Table(table) => table.call(args),
        other => Err(mlua::Error::RuntimeError(format!(
            "attempt to call a {} value",
            other.type_name()
        ))),
    }
}
