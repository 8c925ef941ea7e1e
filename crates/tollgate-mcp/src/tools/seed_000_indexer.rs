//! The `context-engine` profile against seed 000's indexer server (the memory tools are
//! [`super::seed_000`]'s): `repo_search` and its alias `code_search` have every parameter the
//! seed lists, its defaults, and every field of its response format, two levels deep
//! (`results[].components.*`, `results[].metadata.*`); the seed's examples parse. What is left
//! out is listed in [`LEFT_OUT`] with the reason; additions in [`EXTENSIONS`].

use serde_json::{Value, json};

use super::builtins;
use super::seed_000::{json_after, parameter, properties, section, seed_text};
use crate::profile::Profile;
use crate::tool::Group;

/// Result fields of the seed not given, and why.
const LEFT_OUT: [(&str, &str); 1] = [(
    "metadata.complexity",
    "no complexity measure is computed for chunks; `tokens`, `kind` and `language` are given",
)];

/// Result fields of the other indexer tools not given, and why.
const STATUS_LEFT_OUT: [(&str, &str, &str); 2] = [
    (
        "qdrant_status",
        "scanned_points",
        "nothing is scanned: the index's counts are exact",
    ),
    (
        "qdrant_status",
        "last_modified_at",
        "the index keeps one time, its last update (`last_ingested_at`)",
    ),
];

/// Parameters beyond the seed's, and why.
const EXTENSIONS: [(&str, &str); 1] = [("ext", "issue 30 asks for an extension filter")];

/// The seed's `repo_search` section: from the indexer heading to `context_search`'s text (the
/// seed's export lost both tools' headings).
fn repo_search_section(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| *line != "Indexer Server API")
        .skip(1)
        .take_while(|line| !line.starts_with("Blend code search results"))
        .map(str::to_string)
        .collect()
}

fn definition(name: &str) -> rmcp::model::Tool {
    builtins()
        .unwrap()
        .into_iter()
        .find(|entry| &*entry.name == name && entry.group == Group::In(Profile::ContextEngine))
        .unwrap_or_else(|| panic!("the context-engine profile lacks the seed's tool `{name}`"))
        .definition()
        .clone()
}

fn parse(arguments: Value) -> Result<Value, String> {
    use tollgate::api::context::dialects::context_engine::RepoSearchRequest;
    serde_json::from_value::<RepoSearchRequest>(arguments)
        .map(|request| serde_json::to_value(request).unwrap())
        .map_err(|err| err.to_string())
}

/// The JSON objects after each `marker` line (the seed's examples).
fn examples(lines: &[String], marker: &str) -> Vec<Value> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim() == marker)
        .map(|(at, _)| json_after(&lines[at..], marker))
        .collect()
}

#[test]
fn repo_search_and_code_search_have_the_seeds_parameters_defaults_and_result_fields() {
    let text = seed_text();
    let lines = repo_search_section(&text);
    let mut problems = Vec::new();
    let repo_search = definition("repo_search");
    // The seed: "Exact alias of repo_search() for discoverability. Same parameters and return
    // shape."
    assert!(text.contains("Exact alias of repo_search()"));
    let code_search = definition("code_search");
    assert_eq!(
        repo_search.input_schema, code_search.input_schema,
        "code_search's parameters are repo_search's"
    );
    assert_eq!(repo_search.output_schema, code_search.output_schema);

    let input = Value::Object(repo_search.input_schema.as_ref().clone());
    let defaults = parse(json!({"query": "q"})).unwrap();
    let mut expected = Vec::new();
    for (indent, name, spec) in lines.iter().filter_map(|line| parameter(line)) {
        if indent > 2 {
            continue;
        }
        if spec.contains("required") {
            let required = input["required"].as_array().cloned().unwrap_or_default();
            if !required.contains(&json!(name)) {
                problems.push(format!("repo_search.{name}: the seed requires it"));
            }
        }
        if let Some(default) = spec.split("default ").nth(1) {
            let expected: Value = serde_json::from_str(default.trim()).unwrap();
            if defaults.get(&name) != Some(&expected) {
                problems.push(format!(
                    "repo_search.{name}: default {:?}, the seed says {expected}",
                    defaults.get(&name)
                ));
            }
        }
        expected.push(name);
    }
    assert!(expected.len() >= 14, "parameters found: {expected:?}");
    expected.extend(EXTENSIONS.iter().map(|(name, _)| name.to_string()));
    expected.sort();
    expected.dedup();
    let mut actual = properties(&input, &input["$defs"]);
    actual.sort();
    if actual != expected {
        problems.push(format!(
            "repo_search: parameters {actual:?}, the seed lists {expected:?}"
        ));
    }
    // `query` and `repo` take a string or a list, as the seed says.
    for (field, one, many) in [
        ("query", json!("a"), json!(["a", "b"])),
        ("repo", json!("r"), json!(["r", "s"])),
        ("path_glob", json!("**/*.py"), json!(["**/*.py"])),
        ("not_glob", json!("**/x"), json!(["**/x"])),
    ] {
        for value in [one, many] {
            let mut arguments = json!({"query": "q"});
            arguments[field] = value.clone();
            if let Err(err) = parse(arguments) {
                problems.push(format!("repo_search.{field}: {value} refused: {err}"));
            }
        }
    }
    for example in examples(&lines, "Basic Search:")
        .into_iter()
        .chain(examples(&lines, "Advanced Search with Multiple Filters:"))
        .chain(examples(&lines, "Symbol Search:"))
        .chain(examples(&lines, "Cross-Codebase Search (multi-repo):"))
        .chain(examples(&lines, "Single Repo Search:"))
    {
        if let Err(err) = parse(example.clone()) {
            problems.push(format!("the seed's example {example} is refused: {err}"));
        }
    }

    // Every field of the response format, into results[] and their objects.
    let format = json_after(&lines, "Response Format:");
    let schema = serde_json::to_value(schemars::schema_for!(
        tollgate::api::context::dialects::context_engine::RepoSearchResponse
    ))
    .unwrap();
    let defs = schema["$defs"].clone();
    let fields = properties(&schema, &defs);
    for key in format.as_object().unwrap().keys() {
        if !fields.contains(key) {
            problems.push(format!("repo_search: the result lacks `{key}`"));
        }
    }
    let item = &format["results"][0];
    let item_schema = &schema["properties"]["results"]["items"];
    let item_fields = properties(item_schema, &defs);
    for (key, value) in item.as_object().unwrap() {
        if !item_fields.contains(key) {
            problems.push(format!("repo_search: `results[]` lacks `{key}`"));
            continue;
        }
        if let Value::Object(nested) = value {
            let nested_schema = &defs[item_schema["$ref"]
                .as_str()
                .map(|r| r.rsplit('/').next().unwrap())
                .unwrap_or_default()]["properties"][key];
            let nested_fields = properties(nested_schema, &defs);
            for name in nested.keys() {
                let at = format!("{key}.{name}");
                if !nested_fields.contains(name) && !LEFT_OUT.iter().any(|(f, _)| *f == at) {
                    problems.push(format!("repo_search: `results[].{at}` is missing"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The other indexer tools the profile serves: their `name()` sections' parameters (a
/// "Parameters: Same as other()" line takes the other's), the stated defaults, and the fields of
/// the results they show ("Same shape as repo_search()": `repo_search`'s result type).
#[test]
fn the_other_indexer_tools_have_the_seeds_parameters_and_result_fields() {
    use tollgate::api::context::dialects::context_engine as ce;
    let text = seed_text();
    let mut problems = Vec::new();
    let tools = [
        "search_tests_for",
        "search_config_for",
        "search_callers_for",
        "search_importers_for",
        "change_history_for_path",
        "expand_query",
        "qdrant_index",
        "qdrant_status",
    ];
    for tool in tools {
        let mut lines = section(&text, tool);
        assert!(!lines.is_empty(), "{tool}: no section in the seed");
        if let Some(other) = lines.iter().find_map(|line| {
            line.trim()
                .strip_prefix("Parameters: Same as ")
                .and_then(|rest| rest.strip_suffix("().").or(rest.strip_suffix("()")))
                .map(str::to_string)
        }) {
            lines = section(&text, &other);
        }
        let input = Value::Object(definition(tool).input_schema.as_ref().clone());
        let mut expected: Vec<String> = Vec::new();
        // Bullets before "Parameters:" are other lists (expand_query's runtimes).
        let parameters = lines
            .iter()
            .skip_while(|line| !line.trim().starts_with("Parameters:"))
            .filter_map(|line| parameter(line));
        for (indent, name, spec) in parameters {
            if indent > 2 {
                continue;
            }
            if spec.contains("required")
                && !input["required"]
                    .as_array()
                    .is_some_and(|r| r.contains(&json!(name)))
            {
                problems.push(format!("{tool}.{name}: the seed requires it"));
            }
            expected.push(name);
        }
        expected.sort();
        let mut actual = properties(&input, &input["$defs"]);
        actual.sort();
        if actual != expected {
            problems.push(format!(
                "{tool}: parameters {actual:?}, the seed lists {expected:?}"
            ));
        }
        let own = section(&text, tool);
        let schema = match tool {
            "change_history_for_path" => schemars::schema_for!(ce::ChangeHistoryResponse),
            "expand_query" => schemars::schema_for!(ce::ExpandQueryResponse),
            "qdrant_index" => schemars::schema_for!(ce::IndexResponse),
            "qdrant_status" => schemars::schema_for!(ce::StatusResponse),
            _ => {
                assert!(
                    own.iter()
                        .any(|l| l.contains("Same shape as repo_search()")),
                    "{tool}: the seed's result"
                );
                schemars::schema_for!(ce::RepoSearchResponse)
            }
        };
        let schema = serde_json::to_value(schema).unwrap();
        let fields = properties(&schema, &schema["$defs"]);
        if own.iter().any(|l| l.trim() == "Returns:") {
            let returns = json_after(&own, "Returns:");
            for (key, value) in returns.as_object().unwrap() {
                if !fields.contains(key)
                    && !STATUS_LEFT_OUT
                        .iter()
                        .any(|(t, f, _)| *t == tool && f == key)
                {
                    problems.push(format!("{tool}: the result lacks `{key}`"));
                }
                if let Value::Object(nested) = value {
                    let nested_fields = properties(&schema["properties"][key], &schema["$defs"]);
                    // A map (`vectors_config`: names to sizes) or a field left out.
                    if nested_fields.is_empty() {
                        continue;
                    }
                    for name in nested.keys() {
                        if !nested_fields.contains(name) {
                            problems.push(format!("{tool}: `{key}` lacks `{name}`"));
                        }
                    }
                }
            }
        }
    }
    // expand_query's default, as the seed states it.
    let parsed: ce::ExpandQueryRequest = serde_json::from_value(json!({"query": "q"})).unwrap();
    assert_eq!(parsed.max_new, 2);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `info_request`: every parameter of its section (`information_request` is accepted as an
/// alias of `info_request`, not a second property), the stated defaults, and every field of its
/// three result examples, into `results[]`, `relationships`, `confidence` and
/// `query_understanding`.
#[test]
fn info_request_has_the_seeds_parameters_defaults_and_result_fields() {
    use tollgate::api::context::dialects::info_request::{InfoRequest, InfoResponse};
    /// What is not given, and why.
    const LEFT_OUT: [(&str, &str); 2] = [
        (
            "information_request",
            "an alias of info_request (accepted, not listed)",
        ),
        (
            "relationships.calls",
            "no call graph is extracted; imports and related files are",
        ),
    ];
    let text = seed_text();
    let lines = section(&text, "info_request");
    let input = Value::Object(definition("info_request").input_schema.as_ref().clone());
    let defaults = serde_json::to_value(
        serde_json::from_value::<InfoRequest>(json!({"info_request": "q"})).unwrap(),
    )
    .unwrap();
    let aliased: InfoRequest = serde_json::from_value(json!({"information_request": "q"})).unwrap();
    assert_eq!(aliased.info_request, "q");
    let mut problems = Vec::new();
    let mut expected = Vec::new();
    for (_, name, spec) in lines.iter().filter_map(|line| parameter(line)) {
        if LEFT_OUT.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if spec.contains("required")
            && !input["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!(name)))
        {
            problems.push(format!("info_request.{name}: the seed requires it"));
        }
        if let Some(default) = spec.split("default ").nth(1) {
            let expected: Value = serde_json::from_str(default.trim()).unwrap();
            if defaults.get(&name) != Some(&expected) {
                problems.push(format!(
                    "info_request.{name}: default {:?}, the seed says {expected}",
                    defaults.get(&name)
                ));
            }
        }
        expected.push(name);
    }
    expected.sort();
    let mut actual = properties(&input, &input["$defs"]);
    actual.sort();
    if actual != expected {
        problems.push(format!(
            "info_request: parameters {actual:?}, the seed lists {expected:?}"
        ));
    }
    let schema = serde_json::to_value(schemars::schema_for!(InfoResponse)).unwrap();
    let defs = schema["$defs"].clone();
    let fields = properties(&schema, &defs);
    let hit_fields = properties(&schema["properties"]["results"]["items"], &defs);
    for marker in [
        "Returns (basic mode):",
        "Returns (with include_explanation: true):",
        "Returns (with include_relationships: true):",
    ] {
        let returns = json_after(&lines, marker);
        for (key, value) in returns.as_object().unwrap() {
            if !fields.contains(key) {
                problems.push(format!("{marker} the result lacks `{key}`"));
                continue;
            }
            if let Value::Object(nested) = value
                && key != "grouped_results"
            {
                let nested_fields = properties(&schema["properties"][key], &defs);
                for name in nested.keys() {
                    if !nested_fields.contains(name) {
                        problems.push(format!("{marker} `{key}` lacks `{name}`"));
                    }
                }
            }
        }
        for hit in returns["results"].as_array().into_iter().flatten() {
            for (key, value) in hit.as_object().unwrap() {
                if !hit_fields.contains(key) {
                    problems.push(format!("{marker} `results[]` lacks `{key}`"));
                }
                if let Value::Object(nested) = value {
                    let item = &defs[schema["properties"]["results"]["items"]["$ref"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()];
                    let nested_fields = properties(&item["properties"][key], &defs);
                    for name in nested.keys() {
                        let at = format!("{key}.{name}");
                        if !nested_fields.contains(name) && !LEFT_OUT.iter().any(|(n, _)| *n == at)
                        {
                            problems.push(format!("{marker} `results[].{at}` is missing"));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
