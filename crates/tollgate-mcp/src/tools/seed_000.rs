//! The memory tools against their normative seed (`../shared/reference/seeds/000_*.txt`,
//! beside the clone): every parameter the seed lists for `memory_store`, `memory_find` and
//! `context_answer` (nested metadata keys too), the defaults it states, and every field of the
//! results it shows. The few parameters left out are listed in [`LEFT_OUT`] with the reason.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::builtins;

/// The seed's tools this server implements.
const TOOLS: [&str; 3] = ["memory_store", "memory_find", "context_answer"];

/// Parameters of the seed deliberately not taken, and why.
const LEFT_OUT: [(&str, &str, &str); 2] = [
    (
        "context_answer",
        "temperature",
        "every model call is sent temperature 0, so answers are reproducible and cached",
    ),
    (
        "context_answer",
        "expand",
        "no query expansion: the code search fuses its lexical and vector channels already",
    ),
];

pub(super) fn seed_text() -> String {
    seed("000_")
}

/// The seed document whose name starts with `prefix`, from the `shared/reference/seeds` beside
/// the clone: the nearest ancestor of this crate holding one (a worktree sits deeper than a
/// clone).
pub(super) fn seed(prefix: &str) -> String {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest
        .ancestors()
        .map(|dir| dir.join("shared/reference/seeds"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| {
            panic!(
                "no shared/reference/seeds above {} (the seeds sit beside the clone)",
                manifest.display()
            )
        });
    let entry = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed {prefix}* in {}", dir.display()));
    std::fs::read_to_string(entry.path()).unwrap()
}

/// The lines of the section `name()` (up to the next `other()` or `… API` heading).
pub(super) fn section(text: &str, name: &str) -> Vec<String> {
    let heading = format!("{name}()");
    let is_heading = |line: &str| {
        line.ends_with("()")
            && line
                .trim_end_matches("()")
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_')
    };
    text.lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        // A server heading ("Indexer Server API"), not a bullet that ends so.
        .take_while(|line| {
            let server_heading = line.ends_with(" API") && !line.starts_with(' ');
            !is_heading(line) && !server_heading
        })
        .map(str::to_string)
        .collect()
}

/// A parameter bullet (`  • name (type, …): …`): its indent, name and parenthesis.
pub(super) fn parameter(line: &str) -> Option<(usize, String, String)> {
    let indent = line.len() - line.trim_start().len();
    let rest = line.trim_start().strip_prefix("• ")?;
    let (name, after) = rest.split_once(" (")?;
    if !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return None;
    }
    let spec = after.split_once(')').map_or(after, |(spec, _)| spec);
    Some((indent, name.to_string(), spec.to_string()))
}

/// The first JSON object after `marker` in the section.
pub(super) fn json_after(lines: &[String], marker: &str) -> Value {
    let start = lines
        .iter()
        .position(|line| line.trim() == marker)
        .unwrap_or_else(|| panic!("no `{marker}`"));
    let mut block = String::new();
    let mut depth = 0i32;
    for line in &lines[start + 1..] {
        if block.is_empty() && line.trim() != "{" {
            continue;
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        block.push_str(line);
        block.push('\n');
        if depth == 0 {
            break;
        }
    }
    // The seed elides some arrays as `[...]`.
    serde_json::from_str(&block.replace("[...]", "[]"))
        .unwrap_or_else(|err| panic!("{marker}: {err}\n{block}"))
}

fn definition(name: &str) -> rmcp::model::Tool {
    builtins()
        .unwrap()
        .into_iter()
        .find(|entry| &*entry.name == name)
        .unwrap_or_else(|| panic!("the seed's tool `{name}` is not registered"))
        .definition()
        .clone()
}

/// Every property name of an object schema, following `$ref`s into `defs`.
pub(super) fn properties(schema: &Value, defs: &Value) -> Vec<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap();
        return properties(&defs[name], defs);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(options) = schema[combinator].as_array() {
            return options.iter().flat_map(|o| properties(o, defs)).collect();
        }
    }
    schema["properties"]
        .as_object()
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// The full (not lean) schema of a tool's result type, with its `$defs`.
fn result_schema(tool: &str) -> Value {
    use tollgate::api::notes as api;
    let schema = match tool {
        "memory_store" => schemars::schema_for!(api::MemoryStoreResponse),
        "memory_find" => schemars::schema_for!(api::MemoryFindResponse),
        "context_answer" => schemars::schema_for!(tollgate::api::answer::ContextAnswerResponse),
        other => panic!("no result type for {other}"),
    };
    serde_json::to_value(schema).unwrap()
}

/// The smallest arguments `tool` accepts.
fn required_arguments(tool: &str) -> Value {
    match tool {
        "memory_store" => json!({"information": "i"}),
        _ => json!({"query": "q"}),
    }
}

/// The request `tool` parses from `arguments`, as JSON (every field with its default).
fn parsed(tool: &str, arguments: Value) -> Value {
    use tollgate::api::notes as api;
    fn parse<T: serde::de::DeserializeOwned + serde::Serialize>(arguments: Value) -> Value {
        serde_json::to_value(serde_json::from_value::<T>(arguments).unwrap()).unwrap()
    }
    match tool {
        "memory_store" => parse::<api::MemoryStoreRequest>(arguments),
        "memory_find" => parse::<api::MemoryFindRequest>(arguments),
        "context_answer" => parse::<tollgate::api::answer::ContextAnswerRequest>(arguments),
        other => panic!("no request type for {other}"),
    }
}

#[test]
fn the_memory_tools_have_the_seeds_parameters_defaults_and_result_fields() {
    let text = seed_text();
    let mut problems = Vec::new();
    for tool in TOOLS {
        let lines = section(&text, tool);
        let definition = definition(tool);
        let input = Value::Object(definition.input_schema.as_ref().clone());
        let input_defs = input["$defs"].clone();
        let mut expected = Vec::new();
        let mut parent = String::new();
        for (indent, name, spec) in lines.iter().filter_map(|line| parameter(line)) {
            if LEFT_OUT.iter().any(|(t, n, _)| *t == tool && *n == name) {
                continue;
            }
            if indent <= 2 {
                if spec.contains("required") {
                    let required = input["required"].as_array().cloned().unwrap_or_default();
                    if !required.contains(&json!(name)) {
                        problems.push(format!("{tool}.{name}: the seed requires it"));
                    }
                }
                if let Some(default) = spec.split("default ").nth(1) {
                    let expected = match default.trim() {
                        "true" => json!(true),
                        "false" => json!(false),
                        quoted if quoted.starts_with('"') => json!(quoted.trim_matches('"')),
                        number => json!(number.parse::<i64>().unwrap()),
                    };
                    let actual = parsed(tool, required_arguments(tool)).get(&name).cloned();
                    if actual.as_ref() != Some(&expected) {
                        problems.push(format!(
                            "{tool}.{name}: default {actual:?}, the seed says {expected}"
                        ));
                    }
                }
                parent = name.clone();
                expected.push(name);
            } else {
                // A key of the parameter above (`metadata.kind`).
                let nested = properties(&input["properties"][&parent], &input_defs);
                if !nested.contains(&name) {
                    problems.push(format!("{tool}.{parent}: lacks `{name}` ({nested:?})"));
                }
            }
        }
        assert!(
            !expected.is_empty(),
            "{tool}: no parameters found in the seed"
        );
        expected.sort();
        let mut actual = properties(&input, &input_defs);
        actual.sort();
        if actual != expected {
            problems.push(format!(
                "{tool}: parameters {actual:?}, the seed lists {expected:?}"
            ));
        }
        // Every field of the seed's example result, one level into lists of objects.
        let marker = if tool == "context_answer" {
            "Response Format:"
        } else {
            "Returns:"
        };
        let returns = json_after(&lines, marker);
        let schema = result_schema(tool);
        let defs = schema["$defs"].clone();
        let fields = properties(&schema, &defs);
        for (key, value) in returns.as_object().unwrap() {
            if !fields.contains(key) {
                problems.push(format!("{tool}: the result lacks `{key}` ({fields:?})"));
                continue;
            }
            if let Some(Value::Object(item)) = value.as_array().and_then(|items| items.first()) {
                let item_fields = properties(&schema["properties"][key]["items"], &defs);
                for name in item.keys() {
                    if !item_fields.contains(name) {
                        problems.push(format!("{tool}: `{key}[]` lacks `{name}`"));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
