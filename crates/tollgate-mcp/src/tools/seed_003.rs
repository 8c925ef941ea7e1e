//! The `ck` profile against its normative seed (`../shared/reference/seeds/003_*.txt`, beside
//! the clone): every tool `tools/list` shows there is served by the profile, with every
//! parameter the seed's schema and parameter table list, its `required`, the defaults the table
//! states, every field of the responses it shows (and the pagination fields), and the seed's
//! example arguments are accepted. Parameters beyond the seed's are listed in [`EXTENSIONS`].

use serde_json::{Value, json};

use super::builtins;
use crate::profile::Profile;
use crate::tool::Group;

/// Parameters the `ck` profile takes beyond the seed's list for a tool, and why.
const EXTENSIONS: [(&str, &str, &str); 5] = [
    (
        "hybrid_search",
        "page_size",
        "hybrid results page like semantic_search's",
    ),
    (
        "hybrid_search",
        "snippet_length",
        "hybrid snippets are cut like semantic_search's",
    ),
    ("hybrid_search", "cursor", "the seed's pagination"),
    ("semantic_search", "cursor", "the seed's pagination"),
    ("regex_search", "cursor", "the seed's pagination"),
];

fn seed_text() -> String {
    super::seed_000::seed("003_")
}

/// The lines under `heading` (`### reindex`), up to the next heading.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|line| line.trim() != heading)
        .skip(1)
        .take_while(|line| !line.starts_with("## ") && !line.starts_with("### "))
        .collect()
}

/// The JSON code blocks of `lines` that follow `marker` (a `**Response:**` line, say).
fn json_blocks(lines: &[&str], marker: &str) -> Vec<Value> {
    let mut blocks = Vec::new();
    let mut armed = false;
    let mut block: Option<String> = None;
    for line in lines {
        match &mut block {
            Some(text) if line.trim() == "```" => {
                // The seed elides arrays as `[...]`.
                if let Ok(value) = serde_json::from_str(&text.replace("[...]", "[]")) {
                    blocks.push(value);
                }
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None if line.trim() == marker => armed = true,
            None if armed && line.trim() == "```json" => {
                block = Some(String::new());
                armed = false;
            }
            None => {}
        }
    }
    blocks
}

/// The parameter table of a tool section: (name, required, default).
fn table(lines: &[&str]) -> Vec<(String, bool, Option<String>)> {
    lines
        .iter()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| Name"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let default = Some(cells[3].to_string()).filter(|d| d != "-");
            (cells[0].to_string(), cells[2] == "Yes", default)
        })
        .collect()
}

fn ck_definition(name: &str) -> rmcp::model::Tool {
    builtins()
        .unwrap()
        .into_iter()
        .find(|entry| &*entry.name == name && entry.group == Group::In(Profile::Ck))
        .unwrap_or_else(|| panic!("the ck profile lacks the seed's tool `{name}`"))
        .definition()
        .clone()
}

/// The full (not lean) schema of a ck tool's result type.
fn result_schema(tool: &str) -> Value {
    use tollgate::api::context::dialects::ck;
    let schema = match tool {
        "semantic_search" | "hybrid_search" => schemars::schema_for!(ck::CkSearchResponse),
        "regex_search" => schemars::schema_for!(ck::CkRegexResponse),
        "index_status" => schemars::schema_for!(ck::CkIndexStatus),
        "reindex" => schemars::schema_for!(ck::CkReindexResponse),
        "health_check" => schemars::schema_for!(ck::CkHealth),
        other => panic!("no result type for {other}"),
    };
    serde_json::to_value(schema).unwrap()
}

/// The request `tool` parses from `arguments`, as JSON (every field with its default).
fn parsed(tool: &str, arguments: Value) -> Result<Value, String> {
    use tollgate::api::context::dialects::ck;
    fn parse<T: serde::de::DeserializeOwned + serde::Serialize>(
        arguments: Value,
    ) -> Result<Value, String> {
        serde_json::from_value::<T>(arguments)
            .map(|request| serde_json::to_value(request).unwrap())
            .map_err(|err| err.to_string())
    }
    match tool {
        "semantic_search" | "hybrid_search" => parse::<ck::CkSearchRequest>(arguments),
        "regex_search" => parse::<ck::CkRegexRequest>(arguments),
        "index_status" => parse::<ck::CkPathRequest>(arguments),
        "reindex" => parse::<ck::CkReindexRequest>(arguments),
        "health_check" => serde_json::from_value::<crate::tool::NoInput>(arguments)
            .map(|_| json!({}))
            .map_err(|err| err.to_string()),
        other => panic!("no request type for {other}"),
    }
}

fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_ck_profile_has_the_seeds_tools_parameters_defaults_and_result_fields() {
    let text = seed_text();
    let listed = json_blocks(&section(&text, "### tools/list"), "**Response:**");
    let tools = listed
        .first()
        .and_then(|response| response["result"]["tools"].as_array())
        .expect("the seed's tools/list response")
        .clone();
    assert_eq!(tools.len(), 6, "the seed lists six tools");
    let mut problems = Vec::new();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let definition = ck_definition(name);
        let input = Value::Object(definition.input_schema.as_ref().clone());
        let mut ours = keys(&input["properties"]);
        ours.sort();
        let spec = section(&text, &format!("### {name}"));
        let rows = table(&spec);
        let mut expected: Vec<String> = keys(&tool["inputSchema"]["properties"]);
        expected.extend(rows.iter().map(|(n, _, _)| n.clone()));
        expected.extend(
            EXTENSIONS
                .iter()
                .filter(|(t, _, _)| *t == name)
                .map(|(_, p, _)| p.to_string()),
        );
        expected.sort();
        expected.dedup();
        if ours != expected {
            problems.push(format!(
                "{name}: parameters {ours:?}, expected {expected:?}"
            ));
        }
        let required: Vec<Value> = tool["inputSchema"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let our_required = input["required"].as_array().cloned().unwrap_or_default();
        for field in required.iter().chain(
            rows.iter()
                .filter(|(_, r, _)| *r)
                .map(|(n, _, _)| json!(n))
                .collect::<Vec<_>>()
                .iter(),
        ) {
            if !our_required.contains(field) {
                problems.push(format!("{name}.{field}: the seed requires it"));
            }
        }
        // Defaults, as parsed from the smallest arguments the seed allows.
        let smallest: serde_json::Map<String, Value> = required
            .iter()
            .map(|field| (field.as_str().unwrap().to_string(), json!("src")))
            .collect();
        let defaults = parsed(name, Value::Object(smallest)).unwrap();
        for (param, _, default) in &rows {
            let Some(default) = default else { continue };
            let expected: Value = serde_json::from_str(default).unwrap();
            let actual = &defaults[param];
            let same = match (actual.as_f64(), expected.as_f64()) {
                (Some(a), Some(b)) => (a - b).abs() < 1e-9,
                _ => *actual == expected,
            };
            if !same {
                problems.push(format!(
                    "{name}.{param}: default {actual}, the seed says {expected}"
                ));
            }
        }
        // The seed's example arguments parse.
        for example in json_blocks(&spec, "**Example:**") {
            if let Err(err) = parsed(name, example["arguments"].clone()) {
                problems.push(format!("{name}: the seed's example is refused: {err}"));
            }
        }
        // Every field of the responses the seed shows.
        let schema = result_schema(name);
        let fields = keys(&schema["properties"]);
        for response in json_blocks(&spec, "**Response:**") {
            for key in keys(&response) {
                if !fields.contains(&key) {
                    problems.push(format!("{name}: the result lacks `{key}` ({fields:?})"));
                }
            }
        }
    }
    // Pagination: the request's cursor is accepted, and the searches' pages carry the
    // response's fields beside MCP's own `content`.
    let pagination = section(&text, "## Pagination");
    let pagination = pagination
        .iter()
        .skip_while(|line| !line.starts_with("Large result sets"))
        .copied()
        .collect::<Vec<_>>();
    let request = json_blocks(&pagination, "**Request with cursor:**");
    let response = json_blocks(&pagination, "**Response with next cursor:**");
    assert_eq!(
        (request.len(), response.len()),
        (1, 1),
        "the seed's pagination"
    );
    if let Err(err) = parsed("semantic_search", request[0]["arguments"].clone()) {
        problems.push(format!("pagination: the seed's request is refused: {err}"));
    }
    for tool in ["semantic_search", "hybrid_search", "regex_search"] {
        let fields = keys(&result_schema(tool)["properties"]);
        for key in keys(&response[0]).into_iter().filter(|k| k != "content") {
            if !fields.contains(&key) {
                problems.push(format!("{tool}: a page lacks `{key}`"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
