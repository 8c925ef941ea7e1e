use serde_json::json;

use super::*;

/// A workspace holding `files` (path, text), with its user tools opened.
fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, UserTools) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let root = dir.path().canonicalize().unwrap();
    let tools = UserTools::open(&root, Vec::new(), vec!["review_diff".to_string()]);
    (dir, tools)
}

const ECHO: &str = r#"
tool = {
  name = "echo",
  description = "Echoes the message",
  parameters = {
    type = "object",
    properties = { message = { type = "string" }, times = { type = "integer", minimum = 1 } },
    required = { "message" },
  },
}
function tool.execute(args)
  return { echoed = string.rep(args.message, args.times or 1), encoded = tollgate.json.encode({ a = { 1, 2 } }) }
end
"#;

fn tool_file(name: &str, body: &str) -> String {
    format!(
        "tool = {{ name = \"{name}\", description = \"test\", parameters = {{ type = \"object\", properties = {{}} }} }}\nfunction tool.execute(args)\n{body}\nend\n"
    )
}

#[test]
fn a_tool_loads_validates_its_arguments_and_runs() {
    let (_dir, tools) = workspace(&[(".tollgate/tools/echo.lua", ECHO)]);
    let loaded = tools.loaded();
    assert_eq!(loaded.tools.len(), 1, "{:?}", loaded.broken);
    assert_eq!(loaded.tools[0].script, ".tollgate/tools/echo.lua");
    assert_eq!(loaded.tools[0].parameters["required"], json!(["message"]));
    let result = tools
        .call("echo", json!({"message": "hi", "times": 2}))
        .unwrap();
    assert_eq!(result["echoed"], "hihi");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(result["encoded"].as_str().unwrap()).unwrap(),
        json!({"a": [1, 2]})
    );
    for (arguments, field) in [
        (json!({}), "message"),
        (json!({"message": 3}), "message"),
        (json!({"message": "x", "times": 0}), "times"),
    ] {
        let err = tools.call("echo", arguments.clone()).unwrap_err();
        assert_eq!(
            err.code(),
            crate::ErrorCode::InvalidInput,
            "{arguments}: {err}"
        );
        assert_eq!(err.field(), Some(field), "{arguments}: {err}");
    }
    let err = tools.call("nope", json!({})).unwrap_err();
    assert_eq!(err.code(), crate::ErrorCode::ToolNotFound);
}

#[test]
fn broken_duplicate_and_reserved_files_are_listed_and_the_others_served() {
    let (_dir, tools) = workspace(&[
        (".tollgate/tools/a_good.lua", &tool_file("good", "return 1")),
        (".tollgate/tools/b_syntax.lua", "tool = {\n  name = \n"),
        (
            ".tollgate/tools/c_reserved.lua",
            &tool_file("review_diff", "return 1"),
        ),
        (
            ".tollgate/tools/d_duplicate.lua",
            &tool_file("good", "return 2"),
        ),
        (
            ".tollgate/tools/e_no_execute.lua",
            "return { name = \"lazy\", description = \"x\" }",
        ),
        (".tollgate/tools/notes.txt", "not a tool"),
    ]);
    let loaded = tools.loaded();
    let names: Vec<&str> = loaded.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let broken: Vec<(&str, &str)> = loaded
        .broken
        .iter()
        .map(|broken| (broken.script.as_str(), broken.error.as_str()))
        .collect();
    assert_eq!(broken.len(), 4, "{broken:?}");
    assert!(
        broken[0].0.ends_with("b_syntax.lua") && broken[0].1.contains(":3:"),
        "{broken:?}"
    );
    assert!(broken[1].1.contains("built-in"), "{broken:?}");
    assert!(
        broken[2]
            .1
            .contains("already defined by .tollgate/tools/a_good.lua"),
        "{broken:?}"
    );
    assert!(broken[3].1.contains("tool.execute"), "{broken:?}");
    assert_eq!(tools.call("good", json!({})).unwrap(), json!(1));
}

#[test]
fn an_edited_or_new_script_is_served_without_a_restart() {
    let (dir, tools) = workspace(&[(".tollgate/tools/v.lua", &tool_file("v", "return 1"))]);
    assert_eq!(tools.call("v", json!({})).unwrap(), json!(1));
    std::fs::write(
        dir.path().join(".tollgate/tools/v.lua"),
        tool_file("v", "return 'two'"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".tollgate/tools/w.lua"),
        tool_file("w", "return 3"),
    )
    .unwrap();
    std::thread::sleep(RECHECK + Duration::from_millis(100));
    assert_eq!(tools.call("v", json!({})).unwrap(), json!("two"));
    assert_eq!(tools.call("w", json!({})).unwrap(), json!(3));
}

#[test]
fn a_script_error_names_the_script_and_the_line() {
    let (_dir, tools) = workspace(&[(
        ".tollgate/tools/fails.lua",
        &tool_file("fails", "local x = 1\nerror('the ticket has no title')"),
    )]);
    let err = tools.call("fails", json!({})).unwrap_err();
    assert_eq!(err.code(), crate::ErrorCode::ScriptError);
    match &err {
        UserToolError::Script {
            script,
            line,
            message,
            ..
        } => {
            assert_eq!(script, ".tollgate/tools/fails.lua");
            assert_eq!(*line, Some(4), "{err}");
            assert_eq!(message, "the ticket has no title");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains(".tollgate/tools/fails.lua line 4: the ticket has no title"),
        "{err}"
    );
}

#[test]
fn runaway_scripts_stop_at_their_limits_and_cannot_catch_the_stop() {
    let (_dir, tools) = workspace(&[
        (
            "tollgate.toml",
            "[tools]\ntimeout_ms = 300\nmemory_mb = 8\n",
        ),
        (
            ".tollgate/tools/spin.lua",
            &tool_file("spin", "while true do end"),
        ),
        (
            ".tollgate/tools/stubborn.lua",
            &tool_file(
                "stubborn",
                "while true do pcall(function() while true do end end) end",
            ),
        ),
        (
            ".tollgate/tools/hungry.lua",
            &tool_file(
                "hungry",
                "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end",
            ),
        ),
        (
            ".tollgate/tools/greedy.lua",
            &tool_file(
                "greedy",
                "local ok = pcall(string.rep, 'x', 1e9)\nreturn ok",
            ),
        ),
    ]);
    for name in ["spin", "stubborn"] {
        let err = tools.call(name, json!({})).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::Timeout, "{name}: {err}");
        assert!(err.to_string().contains("300 ms"), "{err}");
    }
    for name in ["hungry", "greedy"] {
        let err = tools.call(name, json!({})).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::ScriptError, "{name}: {err}");
        assert!(
            err.to_string().contains("memory limit of 8 MiB"),
            "{name}: {err}"
        );
    }

    let (_dir, tools) = workspace(&[
        ("tollgate.toml", "[tools]\nmax_instructions = 100000\n"),
        (
            ".tollgate/tools/spin.lua",
            &tool_file("spin", "while true do end"),
        ),
    ]);
    let err = tools.call("spin", json!({})).unwrap_err();
    assert_eq!(err.code(), crate::ErrorCode::Timeout);
    assert!(err.to_string().contains("100000 Lua instructions"), "{err}");
}

#[test]
fn the_sandbox_refuses_files_processes_the_environment_modules_and_bytecode() {
    let attempts = [
        ("os.execute('touch /tmp/tollgate-pwned')", "os.execute"),
        ("return io.open('/etc/passwd'):read('a')", "io.open"),
        ("return os.getenv('HOME')", "os.getenv"),
        ("return require('socket')", "require"),
        ("return package.loadlib('x', 'y')", "package.loadlib"),
        ("return load(string.dump(function() end))", "string.dump"),
        ("return load('return 1')", "load"),
        ("return loadfile('/etc/passwd')", "loadfile"),
        ("return dofile('/etc/passwd')", "dofile"),
        ("debug.sethook(function() end, '', 1)", "debug.sethook"),
        ("return debug.getregistry()", "debug.getregistry"),
        ("collectgarbage('stop')", "collectgarbage(\"stop\")"),
        (
            "return coroutine.resume(coroutine.create(function() end))",
            "coroutine.resume",
        ),
        (
            "local ok, err = pcall(os.execute, 'true')\nerror(err, 0)",
            "os.execute",
        ),
    ];
    let files: Vec<(String, String)> = attempts
        .iter()
        .enumerate()
        .map(|(idx, (body, _))| {
            (
                format!(".tollgate/tools/t{idx}.lua"),
                tool_file(&format!("t{idx}"), body),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let (_dir, tools) = workspace(&borrowed);
    for (idx, (body, refused)) in attempts.iter().enumerate() {
        let err = tools.call(&format!("t{idx}"), json!({})).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::ScriptError, "{body}: {err}");
        assert!(
            err.to_string().contains(&format!("`{refused}` is refused")),
            "{body}: {err}"
        );
    }
    assert!(!std::path::Path::new("/tmp/tollgate-pwned").exists());
    // The count is still there for scripts that watch their memory.
    let (_dir, tools) = workspace(&[(
        ".tollgate/tools/count.lua",
        &tool_file("count", "return collectgarbage('count') > 0"),
    )]);
    assert_eq!(tools.call("count", json!({})).unwrap(), json!(true));
}

#[test]
fn a_bytecode_file_is_never_loaded() {
    let (_dir, tools) = workspace(&[(".tollgate/tools/binary.lua", "\x1bLuaT\x00\x19")]);
    let loaded = tools.loaded();
    assert!(loaded.tools.is_empty());
    assert!(
        loaded.broken[0].error.contains("binary"),
        "{:?}",
        loaded.broken
    );
}

#[test]
fn the_host_api_reads_files_through_the_workspace_rules() {
    let (_dir, tools) = workspace(&[
        ("src/lib.rs", "pub fn a() {}\n"),
        (
            ".tollgate/tools/read.lua",
            &tool_file("read", "return tollgate.get_file(args.path).content"),
        ),
    ]);
    let read = tools.loaded();
    let read = &read.tools[0];
    assert_eq!(read.name, "read");
    assert_eq!(
        tools.call("read", json!({"path": "src/lib.rs"})).unwrap(),
        json!("pub fn a() {}\n")
    );
    let err = tools
        .call("read", json!({"path": "../../etc/passwd"}))
        .unwrap_err();
    assert_eq!(err.code(), crate::ErrorCode::ScriptError);
    assert!(err.to_string().contains("tollgate.get_file:"), "{err}");
    assert!(err.to_string().contains("line 3"), "{err}");
}
