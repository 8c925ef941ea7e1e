//! The context tools against their normative seed (`../shared/reference/seeds/002_*.txt`,
//! beside the clone): every parameter the seed lists, nested batch fields, the defaults it
//! states and the result fields its tables promise.

use serde_json::{Value, json};

use super::builtins;

fn seed_text() -> String {
    super::seed_000::seed("002_")
}

/// `### name` sections of the seed's tool reference: name → its lines.
fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("### ") {
            out.push((name.trim().to_string(), Vec::new()));
        } else if line.starts_with("## ") {
            out.push((String::new(), Vec::new()));
        } else if let Some((_, lines)) = out.last_mut() {
            lines.push(line.to_string());
        }
    }
    out.retain(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    });
    out
}

/// The backticked names on a line.
fn backticked(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn input_schema(name: &str) -> Value {
    let entry = builtins()
        .unwrap()
        .into_iter()
        .find(|entry| &*entry.name == name)
        .unwrap_or_else(|| panic!("the seed's tool `{name}` is not registered"));
    Value::Object(entry.definition().input_schema.as_ref().clone())
}

fn output_schema(name: &str) -> Value {
    let entry = builtins()
        .unwrap()
        .into_iter()
        .find(|entry| &*entry.name == name)
        .unwrap();
    Value::Object(
        entry
            .definition()
            .output_schema
            .as_ref()
            .map(|schema| schema.as_ref().clone())
            .unwrap_or_default(),
    )
}

fn property_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn every_context_tool_has_the_seeds_parameters_defaults_and_result_fields() {
    let text = seed_text();
    let sections = sections(&text);
    let names: Vec<&str> = sections.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), 13, "{names:?}");
    let mut problems = Vec::new();
    for (tool, lines) in &sections {
        let schema = input_schema(tool);
        let mut expected: Vec<String> = Vec::new();
        let mut nested: Vec<String> = Vec::new();
        for line in lines {
            if let Some(rest) = line.strip_prefix("- `") {
                // A parameter line reads "- `name` (type, …)"; other bullets name fields.
                let Some((name, after)) = rest.split_once('`') else {
                    continue;
                };
                if !after.starts_with(" (") {
                    continue;
                }
                let name = name.to_string();
                if let Some(default) = line
                    .split("default: ")
                    .nth(1)
                    .and_then(|rest| rest.split([')', ' ']).next())
                {
                    check_default(tool, &name, default, &mut problems);
                }
                expected.push(name);
            } else if line.starts_with("  - `") {
                nested.extend(backticked(line));
            }
        }
        expected.sort();
        let actual = property_names(&schema);
        if actual != expected {
            problems.push(format!(
                "{tool}: parameters {actual:?}, the seed lists {expected:?}"
            ));
        }
        if !nested.is_empty() {
            // A batch item is its single tool's arguments: those must hold every nested name.
            let single = if tool.starts_with("store") {
                "store_context"
            } else {
                "update_context"
            };
            let items = property_names(&input_schema(single));
            for name in &nested {
                if !items.contains(name) {
                    problems.push(format!("{tool}: an item lacks `{name}` ({items:?})"));
                }
            }
        }
    }
    // The seed's response table: which top-level fields each search tool returns.
    let table_rows = [
        "results",
        "count",
        "query",
        "model",
        "mode",
        "language",
        "fusion_method",
        "search_modes_used",
        "fts_count",
        "semantic_count",
    ];
    let columns = [
        "search_context",
        "semantic_search_context",
        "fts_search_context",
        "hybrid_search_context",
    ];
    for line in text.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let field = cells[1].trim_matches('`');
        if !table_rows.contains(&field) || cells.len() < 6 {
            continue;
        }
        for (column, cell) in columns.iter().zip(&cells[2..6]) {
            let has = property_names(&output_schema(column)).contains(&field.to_string());
            let wants = cell.starts_with("Yes") || cell.starts_with("List");
            if has != wants {
                problems.push(format!(
                    "{column}: result field `{field}` present={has}, seed says {cell}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A stated default must be what the input type fills in when the argument is left out.
fn check_default(tool: &str, name: &str, default: &str, problems: &mut Vec<String>) {
    let expected = match default.trim_end_matches([',', '.']) {
        "True" | "true" => json!(true),
        "False" | "false" => json!(false),
        number => match number.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => return,
        },
    };
    let required = match tool {
        "semantic_search_context" | "fts_search_context" | "hybrid_search_context" => {
            json!({"query": "q"})
        }
        "get_context_by_ids" => json!({"context_ids": [1]}),
        "store_context_batch" => json!({"entries": []}),
        "update_context_batch" => json!({"updates": []}),
        _ => json!({}),
    };
    let actual = defaults_of(tool, required).get(name).cloned();
    if actual.as_ref() != Some(&expected) {
        problems.push(format!(
            "{tool}.{name}: default {actual:?}, the seed says {expected}"
        ));
    }
}

/// The request `tool` parses from `arguments`, as JSON (every field with its default).
fn defaults_of(tool: &str, arguments: Value) -> serde_json::Map<String, Value> {
    use tollgate::api::memory as api;
    fn parsed<T: serde::de::DeserializeOwned + serde::Serialize>(arguments: Value) -> Value {
        serde_json::to_value(serde_json::from_value::<T>(arguments).unwrap()).unwrap()
    }
    let value = match tool {
        "search_context" => parsed::<api::SearchContextRequest>(arguments),
        "get_context_by_ids" => parsed::<api::GetContextByIdsRequest>(arguments),
        "semantic_search_context" => parsed::<api::SemanticSearchRequest>(arguments),
        "fts_search_context" => parsed::<api::FtsSearchRequest>(arguments),
        "hybrid_search_context" => parsed::<api::HybridSearchRequest>(arguments),
        "store_context_batch" => parsed::<api::StoreContextBatchRequest>(arguments),
        "update_context_batch" => parsed::<api::UpdateContextBatchRequest>(arguments),
        _ => Value::Null,
    };
    value.as_object().cloned().unwrap_or_default()
}
