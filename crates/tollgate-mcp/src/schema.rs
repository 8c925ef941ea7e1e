//! Lean tool definitions: the one post-processor every tool's schemas pass through at
//! registration, because each definition costs an agent context in every session.
//!
//! Input schemas keep everything that validates (types, bounds, enums, `required`,
//! `additionalProperties: false`) and the description of each top-level argument, cut to its
//! first sentence plus any sentence giving the default; prose deeper down, formats and titles go
//! (the names and bounds say enough there), and so do `default`s (an argument left out takes
//! its default; the descriptions state the ones worth knowing). Output schemas lose all prose and annotations, and
//! describe the result [`OUTPUT_DEPTH`] levels deep (without the `minimum: 0` of unsigned counts): below that a value is given by its type
//! alone (`{"type": "object"}`), which every result still matches. String unions become one
//! `enum`, and a subschema that occurs more than once is written once under `$defs`. Results
//! stay JSON Schema 2020-12 (MCP's default dialect, so `$schema` is left out).

use std::collections::BTreeSet;

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// How many levels of an output (object fields, array items) are spelled out. One level: the
/// result's own fields with their types, enums and `required`; an agent reads the values from
/// the result itself.
pub(crate) const OUTPUT_DEPTH: usize = 1;

/// Keywords that only annotate: they validate nothing.
const ANNOTATIONS: [&str; 10] = [
    "$schema",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords whose value is a map of names to subschemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is one subschema.
const SCHEMA_ONE: [&str; 11] = [
    "additionalProperties",
    "items",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Where an expanded `$ref` came from, so a shared subschema keeps its type's name.
const ORIGIN: &str = "\u{0}origin";

/// Subschemas shorter than this stay inline even when repeated: a `$ref` costs about as much.
const MIN_SHARED_BYTES: usize = 48;

/// The lean form of a tool's input schema.
pub(crate) fn lean_input(schema: JsonObject) -> JsonObject {
    let mut root = Value::Object(schema);
    strip(&mut root, Keep::TopLevelArguments);
    collapse_string_unions(&mut root);
    drop_null_from_optional_arguments(&mut root);
    into_object(root)
}

/// An optional argument is left out rather than sent as `null` (the server still accepts
/// `null`), so `"type": ["string", "null"]` says no more than `"type": "string"` and
/// `{"anyOf": [X, {"type": "null"}]}` no more than `X`; only the root's arguments that are not
/// required lose the `null`.
fn drop_null_from_optional_arguments(root: &mut Value) {
    let required: BTreeSet<String> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let Some(properties) = root.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, schema) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        let Value::Object(object) = schema else {
            continue;
        };
        if let Some(Value::Array(types)) = object.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if kept.len() != types.len() && !kept.is_empty() {
                let kept = if kept.len() == 1 {
                    kept[0].clone()
                } else {
                    Value::Array(kept)
                };
                object.insert("type".to_string(), kept);
            }
        }
        if let Some(Value::Array(options)) = object.get("anyOf") {
            let kept: Vec<Value> = options
                .iter()
                .filter(|option| {
                    option.get("type") != Some(&Value::from("null"))
                        || option.as_object().is_some_and(|o| o.len() != 1)
                })
                .cloned()
                .collect();
            if kept.len() == 1 && kept.len() != options.len() {
                let Value::Object(only) = kept[0].clone() else {
                    continue;
                };
                object.remove("anyOf");
                for (key, value) in only {
                    object.entry(key).or_insert(value);
                }
            }
        }
    }
}

/// The lean form of a tool's output schema.
pub(crate) fn lean_output(schema: JsonObject) -> JsonObject {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut root = expand(&Value::Object(schema), &defs, &mut Vec::new());
    strip(&mut root, Keep::Nothing);
    drop_unsigned_minimum(&mut root);
    collapse_string_unions(&mut root);
    cap(&mut root, 0);
    into_object(share_repeats(root))
}

/// A result's counts and ids come from unsigned Rust types, which schemars bounds with
/// `minimum: 0`: true of every value the server sends, and of no use to a caller reading it,
/// so outputs (not inputs, where the bound refuses bad arguments) leave it out; and
/// `additionalProperties: true`, JSON Schema's default, says nothing.
fn drop_unsigned_minimum(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    if object.get("additionalProperties") == Some(&Value::Bool(true)) {
        object.remove("additionalProperties");
    }
    if object.get("minimum") == Some(&Value::from(0))
        && object.get("type") == Some(&Value::from("integer"))
    {
        object.remove("minimum");
    }
    for_each_subschema(object, |_, subschema| drop_unsigned_minimum(subschema));
}

/// Which descriptions [`strip`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Nothing,
    /// The root's `properties` keep a shortened description; nothing else does.
    TopLevelArguments,
}

/// Removes annotation keywords from `schema` and every subschema (never from data such as
/// `enum`, `const` or the names under `properties`).
fn strip(schema: &mut Value, keep: Keep) {
    let Value::Object(object) = schema else {
        return;
    };
    object.retain(|key, _| !ANNOTATIONS.contains(&key.as_str()));
    for_each_subschema(object, |keyword, subschema| {
        let description = (keep == Keep::TopLevelArguments && keyword == "properties")
            .then(|| subschema.get("description").and_then(Value::as_str))
            .flatten()
            .map(short_description);
        strip(subschema, Keep::Nothing);
        if let (Some(text), Value::Object(sub)) = (description, subschema) {
            sub.insert("description".to_string(), Value::String(text));
        }
    });
}

/// The first sentence of `text`, plus any later sentence that states a default.
fn short_description(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut sentences = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (idx, _) in text.match_indices(". ") {
        let next = bytes.get(idx + 2).copied().unwrap_or(b' ');
        let before = &text[start..idx];
        // "e.g. `git diff`" is not the end of a sentence.
        let abbreviation = before.ends_with("e.g") || before.ends_with("i.e");
        if (next.is_ascii_uppercase() || next == b'`') && !abbreviation {
            sentences.push(&text[start..=idx]);
            start = idx + 2;
        }
    }
    sentences.push(&text[start..]);
    let mut kept: Vec<&str> = sentences.first().copied().into_iter().collect();
    kept.extend(
        sentences
            .iter()
            .skip(1)
            .filter(|sentence| sentence.starts_with("Default")),
    );
    kept.join(" ")
}

/// Calls `visit` on every direct subschema of `object` with the keyword holding it.
fn for_each_subschema(object: &mut Map<String, Value>, mut visit: impl FnMut(&str, &mut Value)) {
    for (keyword, value) in object.iter_mut() {
        let keyword = keyword.as_str();
        if SCHEMA_MAPS.contains(&keyword) {
            if let Value::Object(map) = value {
                map.values_mut().for_each(|sub| visit(keyword, sub));
            }
        } else if SCHEMA_ONE.contains(&keyword) {
            visit(keyword, value);
        } else if SCHEMA_LISTS.contains(&keyword)
            && let Value::Array(list) = value
        {
            list.iter_mut().for_each(|sub| visit(keyword, sub));
        }
    }
}

/// `{"oneOf": [{"const": "a"}, {"const": "b", "type": "string"}]}` (schemars' form of an enum
/// with documented variants) becomes `{"type": "string", "enum": ["a", "b"]}`.
fn collapse_string_unions(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    for_each_subschema(object, |_, sub| collapse_string_unions(sub));
    let strings = |alternatives: &Value| -> Option<Vec<Value>> {
        let mut values = Vec::new();
        for alternative in alternatives.as_array()? {
            let alternative = alternative.as_object()?;
            if alternative.keys().any(|key| {
                !matches!(key.as_str(), "const" | "enum" | "type") && key.as_str() != ORIGIN
            }) || alternative.get("type").is_some_and(|kind| kind != "string")
            {
                return None;
            }
            match (alternative.get("const"), alternative.get("enum")) {
                (Some(Value::String(one)), None) => values.push(Value::String(one.clone())),
                (None, Some(Value::Array(many))) if many.iter().all(Value::is_string) => {
                    values.extend(many.iter().cloned());
                }
                _ => return None,
            }
        }
        Some(values)
    };
    for keyword in ["oneOf", "anyOf"] {
        let only_union = object
            .keys()
            .all(|key| key == keyword || key == ORIGIN || key == "type");
        if !only_union || object.get("type").is_some_and(|kind| kind != "string") {
            continue;
        }
        if let Some(values) = object.get(keyword).and_then(strings) {
            object.remove(keyword);
            object.insert("type".to_string(), Value::from("string"));
            object.insert("enum".to_string(), Value::Array(values));
        }
    }
}

/// `schema` with every `$ref` into `defs` replaced by a copy of its target (marked with its
/// name). A reference back into a type being expanded (a recursive type) becomes that type's
/// `type` alone.
fn expand(schema: &Value, defs: &Map<String, Value>, stack: &mut Vec<String>) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    if let Some(name) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        && let Some(target) = defs.get(name)
    {
        let mut out = if stack.iter().any(|seen| seen == name) {
            type_only(target)
        } else {
            stack.push(name.to_string());
            let body = expand(target, defs, stack);
            stack.pop();
            into_object(body)
        };
        // Siblings of `$ref` (a description, a default) apply as well.
        for (key, value) in object {
            if key != "$ref" {
                out.insert(key.clone(), expand(value, defs, stack));
            }
        }
        out.entry(ORIGIN.to_string())
            .or_insert_with(|| Value::from(name));
        return Value::Object(out);
    }
    let mut out = object.clone();
    out.remove("$defs");
    for_each_subschema(&mut out, |_, sub| *sub = expand(sub, defs, stack));
    Value::Object(out)
}

/// Replaces what lies [`OUTPUT_DEPTH`] levels down by its type alone.
fn cap(schema: &mut Value, depth: usize) {
    if depth >= OUTPUT_DEPTH && is_structured(schema) {
        *schema = Value::Object(type_only(schema));
        return;
    }
    let Value::Object(object) = schema else {
        return;
    };
    for_each_subschema(object, |keyword, sub| {
        let deeper = matches!(
            keyword,
            "properties" | "patternProperties" | "additionalProperties" | "items" | "prefixItems"
        );
        cap(sub, depth + usize::from(deeper));
    });
}

/// Whether `schema` describes fields or items (not just a scalar, a string enum or an array of
/// scalars).
fn is_structured(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    if object.contains_key("properties") || object.contains_key("$ref") {
        return true;
    }
    if object
        .get("additionalProperties")
        .is_some_and(Value::is_object)
        || object.get("items").is_some_and(is_structured)
    {
        return true;
    }
    SCHEMA_LISTS.iter().any(|keyword| {
        object
            .get(*keyword)
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(is_structured))
    })
}

/// `{"type": …}` for a schema: its own `type`, or the types its alternatives allow (nothing,
/// which allows anything, when one of them does not say).
fn type_only(schema: &Value) -> JsonObject {
    let mut kinds = BTreeSet::new();
    if !collect_types(schema, &mut kinds) || kinds.is_empty() {
        return JsonObject::new();
    }
    let mut out = JsonObject::new();
    let kind = if kinds.len() == 1 {
        kinds
            .into_iter()
            .map(Value::from)
            .next()
            .unwrap_or_default()
    } else {
        Value::Array(kinds.into_iter().map(Value::from).collect())
    };
    out.insert("type".to_string(), kind);
    out
}

/// Adds the types `schema` allows to `kinds`; false when some part of it allows any type.
fn collect_types(schema: &Value, kinds: &mut BTreeSet<String>) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    match object.get("type") {
        Some(Value::String(kind)) => {
            kinds.insert(kind.clone());
            return true;
        }
        Some(Value::Array(many)) => {
            kinds.extend(many.iter().filter_map(Value::as_str).map(str::to_string));
            return true;
        }
        _ => {}
    }
    let alternatives: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|keyword| object.get(*keyword).and_then(Value::as_array))
        .flatten()
        .collect();
    if alternatives.is_empty() {
        // A subschema without a type but with fields is an object; `allOf` and the rest: unknown.
        if object.contains_key("properties") {
            kinds.insert("object".to_string());
            return true;
        }
        return false;
    }
    alternatives
        .into_iter()
        .all(|alternative| collect_types(alternative, kinds))
}

/// Writes each subschema that occurs more than once (and is worth a `$ref`) once under
/// `$defs`, largest first, named after the type it came from; drops the origin marks.
fn share_repeats(root: Value) -> Value {
    let mut root = root;
    let mut defs: Vec<(String, Value)> = Vec::new();
    loop {
        let mut counts: std::collections::HashMap<String, (usize, Value)> =
            std::collections::HashMap::new();
        count_subschemas(&root, true, &mut counts);
        for (_, body) in &defs {
            count_subschemas(body, true, &mut counts);
        }
        let Some((key, (_, example))) = counts
            .into_iter()
            .filter(|(key, (count, _))| *count >= 2 && key.len() >= MIN_SHARED_BYTES)
            .max_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| b.cmp(a)))
        else {
            break;
        };
        let base = example
            .get(ORIGIN)
            .and_then(Value::as_str)
            .unwrap_or("Shared")
            .to_string();
        let mut name = base.clone();
        let mut suffix = 2;
        while defs.iter().any(|(taken, _)| *taken == name) {
            name = format!("{base}{suffix}");
            suffix += 1;
        }
        let reference = Value::from(format!("#/$defs/{name}"));
        replace_subschema(&mut root, &key, &reference);
        for (_, body) in &mut defs {
            replace_subschema(body, &key, &reference);
        }
        defs.push((name, example));
    }
    remove_origins(&mut root);
    if let Value::Object(object) = &mut root
        && !defs.is_empty()
    {
        let mut map = Map::new();
        for (name, mut body) in defs {
            remove_origins(&mut body);
            map.insert(name, body);
        }
        object.insert("$defs".to_string(), Value::Object(map));
    }
    root
}

/// Counts every subschema below `schema` (not `schema` itself when `is_root`) by its
/// canonical text.
fn count_subschemas(
    schema: &Value,
    is_root: bool,
    counts: &mut std::collections::HashMap<String, (usize, Value)>,
) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if !is_root {
        let entry = counts
            .entry(canonical(schema))
            .or_insert_with(|| (0, schema.clone()));
        entry.0 += 1;
    }
    let mut object = object.clone();
    for_each_subschema(&mut object, |_, sub| count_subschemas(sub, false, counts));
}

/// Replaces every subschema below `schema` whose canonical text is `key` by a `$ref`.
fn replace_subschema(schema: &mut Value, key: &str, reference: &Value) {
    let Value::Object(object) = schema else {
        return;
    };
    for_each_subschema(object, |_, sub| {
        if sub.is_object() && canonical(sub) == key {
            let mut object = JsonObject::new();
            object.insert("$ref".to_string(), reference.clone());
            *sub = Value::Object(object);
        } else {
            replace_subschema(sub, key, reference);
        }
    });
}

fn remove_origins(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    object.remove(ORIGIN);
    for_each_subschema(object, |_, sub| remove_origins(sub));
}

/// `value` as compact JSON with object keys sorted and origin marks left out, so equal
/// subschemas have equal text.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().filter(|key| *key != ORIGIN).collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::from(key.as_str()), canonical(&object[key])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        scalar => scalar.to_string(),
    }
}

fn into_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, Tool};
    use serde_json::{Value, json};

    use super::{OUTPUT_DEPTH, lean_input, lean_output, short_description};
    use crate::{Profiles, Server, ServerOptions};

    fn object(value: Value) -> rmcp::model::JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn an_output_schema_loses_prose_keeps_its_fields_and_shares_repeats() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Result",
            "description": "What a review returns.",
            "type": "object",
            "properties": {
                // A field named like a keyword is data, not an annotation.
                "description": {"type": "string", "description": "prose"},
                "severity": {"$ref": "#/$defs/Severity"},
                "count": {"type": "integer", "format": "uint", "minimum": 0},
                "finding": {"$ref": "#/$defs/Finding"},
                "first": {"anyOf": [{"$ref": "#/$defs/Finding"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["description", "severity"],
            "$defs": {
                "Severity": {"description": "How bad.", "oneOf": [
                    {"const": "LOW", "type": "string", "description": "low"},
                    {"const": "HIGH", "type": "string"}
                ]},
                "Finding": {"type": "object", "properties": {
                    "rule": {"type": "string"}, "line": {"type": "integer"}
                }}
            }
        });
        let lean = Value::Object(lean_output(object(schema)));
        assert_eq!(OUTPUT_DEPTH, 1);
        assert_eq!(
            lean,
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "severity": {"type": "string", "enum": ["LOW", "HIGH"]},
                    "count": {"type": "integer"},
                    "finding": {"type": "object"},
                    "first": {"type": ["null", "object"]},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["description", "severity"]
            })
        );
        // What the full schema accepts, the lean one accepts.
        let value = json!({"description": "d", "severity": "HIGH", "count": 2,
            "finding": {"rule": "r", "line": 3}, "first": null, "tags": ["a"]});
        assert!(jsonschema::is_valid(&lean, &value));
        assert!(!jsonschema::is_valid(
            &lean,
            &json!({"description": "d", "severity": "MID"})
        ));

        // A structure repeated at the depth kept is written once.
        let big = json!({"type": "object", "properties": {
            "a": {"type": "string", "enum": ["one", "two", "three", "four", "five", "six"]},
            "b": {"type": "string", "enum": ["one", "two", "three", "four", "five", "six"]}
        }});
        let lean = Value::Object(lean_output(object(big)));
        assert_eq!(lean["properties"]["a"], json!({"$ref": "#/$defs/Shared"}));
        assert_eq!(lean["properties"]["b"], json!({"$ref": "#/$defs/Shared"}));
        assert_eq!(lean["$defs"]["Shared"]["enum"][5], "six");
    }

    #[test]
    fn an_input_schema_keeps_validation_and_short_argument_descriptions() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "limit": {"type": "integer", "format": "uint", "minimum": 1, "maximum": 50,
                    "default": 10,
                    "description": "Results at most.\nMore is slower (e.g. `deep` mode). Default 10."},
                "options": {"$ref": "#/$defs/Options", "description": "How to search. Long story."}
            },
            "required": ["limit"],
            "$defs": {"Options": {"type": "object", "additionalProperties": false,
                "description": "Options.",
                "properties": {"kind": {"description": "Which.", "oneOf": [
                    {"const": "a", "type": "string"}, {"const": "b", "type": "string"}]}}}}
        });
        let lean = Value::Object(lean_input(object(schema)));
        assert_eq!(
            lean,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50,
                        "description": "Results at most. Default 10."},
                    "options": {"$ref": "#/$defs/Options",
                        "description": "How to search."}
                },
                "required": ["limit"],
                "$defs": {"Options": {"type": "object", "additionalProperties": false,
                    "properties": {"kind": {"type": "string", "enum": ["a", "b"]}}}}
            })
        );
    }

    #[test]
    fn short_descriptions_keep_the_first_sentence_and_the_default() {
        assert_eq!(
            short_description("Pick one (e.g. `a`). Slow. Default: `a`.\nAlso this."),
            "Pick one (e.g. `a`). Default: `a`."
        );
        assert_eq!(short_description("No full stop"), "No full stop");
    }

    /// The estimator the budgets use: a token per four bytes of compact JSON (close to what
    /// the common tokenizers give for JSON Schema text, and needs no tokenizer).
    fn estimated_tokens(bytes: usize) -> usize {
        bytes.div_ceil(4)
    }

    /// `tools/list` and `tool_manifest` as a client of the real server sees them.
    async fn listed(profiles: &str) -> (Vec<Tool>, Value) {
        let workspace = tempfile::tempdir().unwrap();
        let server = Server::new(ServerOptions {
            workspace: workspace.path().to_path_buf(),
            workspace_named: true,
            profiles: profiles.parse::<Profiles>().unwrap(),
            env: Vec::new(),
            call_timeout: ServerOptions::DEFAULT_CALL_TIMEOUT,
        })
        .unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let manifest = client
            .call_tool(CallToolRequestParams::new("tool_manifest"))
            .await
            .unwrap()
            .structured_content
            .unwrap();
        (tools, manifest)
    }

    /// The issue's budgets, measured over what a client receives: the default profile within
    /// 6k tokens of tool definitions, every profile together within 20k, and `tool_manifest`
    /// answering no more than `tools/list` says beyond each tool's profile, version and hints.
    #[tokio::test]
    async fn tool_definitions_fit_their_token_budgets() {
        let mut report = Vec::new();
        let mut over = Vec::new();
        for (profiles, budget) in [
            ("review", 6_000),
            ("plan", 20_000),
            ("context", 20_000),
            ("session", 20_000),
            ("memory", 20_000),
            ("all", 20_000),
            // The seed dialects, each beside the utilities.
            ("ck", 6_000),
            ("context-engine", 12_000),
        ] {
            let (tools, manifest) = listed(profiles).await;
            let bytes = serde_json::to_vec(&tools).unwrap().len();
            let manifest_bytes = serde_json::to_vec(&manifest).unwrap().len();
            let tokens = estimated_tokens(bytes);
            report.push(format!(
                "{profiles}: tools/list {bytes} bytes ≈ {tokens} tokens (budget {budget}), tool_manifest {manifest_bytes} bytes"
            ));
            // The manifest adds per tool its profile, version and all four hints (tools/list leaves
            // defaults out): at most 128 bytes each.
            if tokens > budget || manifest_bytes > bytes + 128 * tools.len() {
                over.push(profiles);
            }
        }
        assert!(
            over.is_empty(),
            "over budget: {over:?}\n{}",
            report.join("\n")
        );
        // The figures BENCHMARKS.md records (`--no-capture` shows them).
        #[allow(clippy::print_stdout)]
        {
            println!("{}", report.join("\n"));
        }
    }
}
