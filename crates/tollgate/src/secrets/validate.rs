//! `validate_content`: checks on text a model produced (or is about to receive) before anyone
//! trusts it, suited to what the text claims to be.
//!
//! | content type | checks |
//! |---|---|
//! | `review_finding` | JSON syntax; each finding against the JSON Schema of [`Finding`] |
//! | `plan_output` | JSON syntax; the plan's required top-level shape (see [`check_plan`]) |
//! | `generated_code` | balanced brackets, unterminated strings and comments, merge-conflict markers, leftover Markdown fences |
//! | every type | secrets (kind and position, never the value), oversized lines, leftover TODO markers |
//!
//! Every issue has a 1-based line and column (in characters). Issue ids are derived from the
//! rule and position, so validating the same text twice gives the same ids.

use crate::ErrorCode;
use std::collections::BTreeMap;
use std::time::Instant;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::findings::Finding;
use crate::secrets::{self, MAX_SCRUB_CHARS};

/// What the content claims to be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContentType {
    /// One finding, an array of findings, or an object with a `findings` array (JSON).
    ReviewFinding,
    /// A plan (JSON), as `create_plan` produces it.
    PlanOutput,
    /// Source code; the language comes from `file_path`'s extension.
    GeneratedCode,
    #[default]
    RawText,
}

impl ContentType {
    pub fn as_str(self) -> &'static str {
        match self {
            ContentType::ReviewFinding => "review_finding",
            ContentType::PlanOutput => "plan_output",
            ContentType::GeneratedCode => "generated_code",
            ContentType::RawText => "raw_text",
        }
    }
}

/// What `validate_content` is asked to do (its wire request is `api::secrets::ValidateContent`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidateContent {
    /// The text to check, at most 1,000,000 characters.
    pub content: String,
    /// Default `raw_text`.
    pub content_type: ContentType,
    /// Where the content is meant to go; its extension picks the language of code checks.
    pub file_path: Option<String>,
    /// Also return the content with every detected secret masked (`scrubbed_content`).
    pub scrub_secrets: bool,
}

/// How bad an issue is: `error` fails validation, the others do not.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IssueSeverity {
    Error,
    Warning,
    Info,
}

impl IssueSeverity {
    fn as_str(self) -> &'static str {
        match self {
            IssueSeverity::Error => "error",
            IssueSeverity::Warning => "warning",
            IssueSeverity::Info => "info",
        }
    }
}

/// One problem, at one place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContentIssue {
    /// `<rule>-<line>-<column>`: stable for the same content.
    pub id: String,
    /// `json_syntax`, `schema`, `plan_shape`, `unbalanced_bracket`, `unterminated`,
    /// `conflict_marker`, `markdown_fence`, `secret`, `oversized_line`, `todo_marker`.
    pub rule: String,
    pub severity: IssueSeverity,
    pub message: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// The JSON pointer of the value at fault (schema checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// Output of `validate_content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ValidateContentResult {
    /// No issue of severity `error`.
    pub passed: bool,
    pub content_type: ContentType,
    pub findings_count: usize,
    /// `error`, `warning`, `info` with their counts.
    pub by_severity: BTreeMap<String, usize>,
    /// Issues in order of position.
    pub findings: Vec<ContentIssue>,
    /// Secrets detected (masked in `scrubbed_content` when `scrub_secrets` was asked).
    pub secrets_found: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scrubbed_content: Option<String>,
    /// The groups of checks that ran.
    pub tiers_run: Vec<String>,
    pub processing_time_ms: f64,
}

/// The request is outside the limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidateError {
    #[error(
        "`content` has {chars} characters; the limit is {MAX_SCRUB_CHARS}: split the text and validate each part"
    )]
    TooLarge { chars: usize },
}

impl ValidateError {
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidInput
    }

    pub fn field(&self) -> &'static str {
        "content"
    }
}

/// Lines longer than this many characters are flagged (a warning; minified or generated blobs).
pub const MAX_LINE_CHARS: usize = 1_000;

/// Validates `request.content` as its content type says.
pub fn validate_content(request: &ValidateContent) -> Result<ValidateContentResult, ValidateError> {
    let started = Instant::now();
    if request.content.len() > MAX_SCRUB_CHARS {
        let chars = request.content.chars().count();
        if chars > MAX_SCRUB_CHARS {
            return Err(ValidateError::TooLarge { chars });
        }
    }
    let text = request.content.as_str();
    let index = LineIndex::new(text);
    let mut issues = Vec::new();
    let mut tiers = Vec::new();
    match request.content_type {
        ContentType::ReviewFinding => {
            tiers.push("json");
            if let Some(value) = parse_json(text, &mut issues) {
                tiers.push("schema");
                check_findings(&value, text, &index, &mut issues);
            }
        }
        ContentType::PlanOutput => {
            tiers.push("json");
            if let Some(value) = parse_json(text, &mut issues) {
                tiers.push("plan_shape");
                check_plan(&value, text, &index, &mut issues);
            }
        }
        ContentType::GeneratedCode => {
            tiers.push("syntax");
            let language = Syntax::from_path(request.file_path.as_deref());
            if language == Syntax::Json {
                parse_json(text, &mut issues);
            } else {
                check_code(text, language, &index, &mut issues);
            }
        }
        ContentType::RawText => {}
    }

    tiers.push("secrets");
    let scrubbed = secrets::scrub(text, 0, 0);
    for secret in &scrubbed.secrets {
        let (line, column) = index.position(secret.range.start);
        issues.push(issue(
            "secret",
            IssueSeverity::Error,
            format!("{} detected (value withheld)", secret.kind.label()),
            line,
            column,
        ));
    }

    tiers.push("lines");
    let todo_severity = match request.content_type {
        ContentType::GeneratedCode | ContentType::PlanOutput => IssueSeverity::Warning,
        ContentType::ReviewFinding | ContentType::RawText => IssueSeverity::Info,
    };
    for (line_idx, line) in text.lines().enumerate() {
        let n_chars = line.chars().count();
        if n_chars > MAX_LINE_CHARS {
            issues.push(issue(
                "oversized_line",
                IssueSeverity::Warning,
                format!("line has {n_chars} characters (more than {MAX_LINE_CHARS})"),
                line_idx + 1,
                MAX_LINE_CHARS + 1,
            ));
        }
        if let Some((column, marker)) = todo_marker(line) {
            issues.push(issue(
                "todo_marker",
                todo_severity,
                format!("leftover `{marker}` marker"),
                line_idx + 1,
                column,
            ));
        }
    }

    issues.sort_by(|a, b| (a.line, a.column, &a.rule).cmp(&(b.line, b.column, &b.rule)));
    let mut by_severity: BTreeMap<String, usize> = [
        IssueSeverity::Error,
        IssueSeverity::Warning,
        IssueSeverity::Info,
    ]
    .iter()
    .map(|s| (s.as_str().to_string(), 0))
    .collect();
    for found in &issues {
        *by_severity
            .entry(found.severity.as_str().to_string())
            .or_default() += 1;
    }
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(ValidateContentResult {
        passed: !issues.iter().any(|i| i.severity == IssueSeverity::Error),
        content_type: request.content_type,
        findings_count: issues.len(),
        by_severity,
        findings: issues,
        secrets_found: scrubbed.secrets.len(),
        scrubbed_content: request.scrub_secrets.then_some(scrubbed.text),
        tiers_run: tiers.into_iter().map(str::to_string).collect(),
        processing_time_ms: (elapsed_ms * 1000.0).round() / 1000.0,
    })
}

fn issue(
    rule: &str,
    severity: IssueSeverity,
    message: String,
    line: usize,
    column: usize,
) -> ContentIssue {
    ContentIssue {
        id: format!("{rule}-{line}-{column}"),
        rule: rule.to_string(),
        severity,
        message,
        line,
        column,
        pointer: None,
    }
}

fn parse_json(text: &str, issues: &mut Vec<ContentIssue>) -> Option<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Some(value),
        Err(err) => {
            issues.push(issue(
                "json_syntax",
                IssueSeverity::Error,
                format!("invalid JSON: {err}"),
                err.line().max(1),
                err.column().max(1),
            ));
            None
        }
    }
}

/// Findings: one object, an array, or `{"findings": [...]}`, each checked against the schema of
/// [`Finding`] as Tollgate reads it.
fn check_findings(value: &Value, text: &str, index: &LineIndex, issues: &mut Vec<ContentIssue>) {
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<Finding>()
        .to_value();
    let positions = json_positions(text);
    let mut problems = Vec::new();
    match value {
        Value::Array(items) => {
            for (idx, item) in items.iter().enumerate() {
                check_schema(item, &schema, &schema, &format!("/{idx}"), &mut problems);
            }
        }
        Value::Object(map) if map.contains_key("findings") => match &map["findings"] {
            Value::Array(items) => {
                for (idx, item) in items.iter().enumerate() {
                    let pointer = format!("/findings/{idx}");
                    check_schema(item, &schema, &schema, &pointer, &mut problems);
                }
            }
            _ => problems.push(SchemaProblem::at(
                "/findings".to_string(),
                "must be an array".to_string(),
            )),
        },
        other => check_schema(other, &schema, &schema, "", &mut problems),
    }
    push_schema_problems(problems, "schema", &positions, index, issues);
}

/// A plan: the required top-level shape of upstream's `EnhancedPlanOutput` (the plan model is
/// not part of this build yet, so only the fields every plan consumer relies on are checked):
/// `id` and `goal` strings, a `version` integer, and `steps`, an array of objects with an
/// integer `step_number`, a string `title` and, when present, `depends_on` as an integer array.
fn check_plan(value: &Value, text: &str, index: &LineIndex, issues: &mut Vec<ContentIssue>) {
    let positions = json_positions(text);
    let mut problems = Vec::new();
    let Some(plan) = value.as_object() else {
        problems.push(SchemaProblem::at(
            String::new(),
            "a plan must be a JSON object".to_string(),
        ));
        push_schema_problems(problems, "plan_shape", &positions, index, issues);
        return;
    };
    let field = |name: &str,
                 want: &str,
                 ok: fn(&Value) -> bool,
                 problems: &mut Vec<SchemaProblem>| match plan.get(name) {
        None => problems.push(SchemaProblem::at(
            String::new(),
            format!("missing required field `{name}`"),
        )),
        Some(v) if !ok(v) => problems.push(SchemaProblem::at(
            format!("/{name}"),
            format!("must be {want}"),
        )),
        Some(_) => {}
    };
    field("id", "a string", Value::is_string, &mut problems);
    field("goal", "a string", Value::is_string, &mut problems);
    field("version", "an integer", |v| v.is_u64(), &mut problems);
    field("steps", "an array", Value::is_array, &mut problems);
    if let Some(Value::Array(steps)) = plan.get("steps") {
        for (idx, step) in steps.iter().enumerate() {
            let at = format!("/steps/{idx}");
            let Some(step) = step.as_object() else {
                problems.push(SchemaProblem::at(
                    at,
                    "a step must be an object".to_string(),
                ));
                continue;
            };
            match step.get("step_number") {
                Some(v) if v.is_u64() => {}
                Some(_) => problems.push(SchemaProblem::at(
                    format!("{at}/step_number"),
                    "must be an integer".into(),
                )),
                None => problems.push(SchemaProblem::at(
                    at.clone(),
                    "missing required field `step_number`".into(),
                )),
            }
            match step.get("title") {
                Some(v) if v.is_string() => {}
                Some(_) => problems.push(SchemaProblem::at(
                    format!("{at}/title"),
                    "must be a string".into(),
                )),
                None => problems.push(SchemaProblem::at(
                    at.clone(),
                    "missing required field `title`".into(),
                )),
            }
            if let Some(deps) = step.get("depends_on")
                && !deps.as_array().is_some_and(|d| d.iter().all(Value::is_u64))
            {
                problems.push(SchemaProblem::at(
                    format!("{at}/depends_on"),
                    "must be an array of step numbers".into(),
                ));
            }
        }
    }
    push_schema_problems(problems, "plan_shape", &positions, index, issues);
}

fn push_schema_problems(
    problems: Vec<SchemaProblem>,
    rule: &str,
    positions: &BTreeMap<String, usize>,
    index: &LineIndex,
    issues: &mut Vec<ContentIssue>,
) {
    for SchemaProblem {
        pointer, message, ..
    } in problems
    {
        let offset = positions.get(&pointer).copied().unwrap_or(0);
        let (line, column) = index.position(offset);
        let mut found = issue(
            rule,
            IssueSeverity::Error,
            format!(
                "{}: {message}",
                if pointer.is_empty() { "/" } else { &pointer }
            ),
            line,
            column,
        );
        found.id = format!("{rule}-{line}-{column}-{}", pointer.replace('/', "."));
        found.pointer = Some(pointer);
        issues.push(found);
    }
}

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON pointer of the value at fault (of the object, for a missing field).
    pub pointer: String,
    /// JSON pointer of the field to fix (the missing field itself, for a missing field).
    pub field: String,
    pub message: String,
}

impl SchemaProblem {
    fn at(pointer: String, message: String) -> SchemaProblem {
        SchemaProblem {
            field: pointer.clone(),
            pointer,
            message,
        }
    }
}

/// Checks `value` against `schema` with the small checker below: the one home of "does this
/// JSON fit this schema" for content validation and for the arguments of users' tools.
pub fn check_against_schema(value: &Value, schema: &Value) -> Vec<SchemaProblem> {
    let mut problems = Vec::new();
    check_schema(value, schema, schema, "", &mut problems);
    problems
}

/// A small JSON Schema check over the subset schemars emits and tool authors write: `$ref` (to
/// `#/$defs/…`), `type`, `enum`, `const`, `required`, `properties`, `additionalProperties:
/// false`, `items`, `anyOf`, `oneOf`, `minimum`, `maximum`, `minLength`, `maxLength`,
/// `minItems`, `maxItems`; other keywords are not checked.
fn check_schema(
    value: &Value,
    schema: &Value,
    root: &Value,
    pointer: &str,
    problems: &mut Vec<SchemaProblem>,
) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(Value::String(reference)) = schema.get("$ref") {
        let target = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs")?.get(name));
        if let Some(target) = target {
            check_schema(value, target, root, pointer, problems);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            let fits = options.iter().any(|option| {
                let mut scratch = Vec::new();
                check_schema(value, option, root, pointer, &mut scratch);
                scratch.is_empty()
            });
            if !fits {
                problems.push(SchemaProblem::at(
                    pointer.to_string(),
                    "matches none of the allowed shapes".into(),
                ));
            }
        }
    }
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| type_matches(value, t)) {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!(
                    "must be {} (found {})",
                    allowed.join(" or "),
                    type_name(value)
                ),
            ));
            return;
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        let names: Vec<String> = options.iter().map(Value::to_string).collect();
        problems.push(SchemaProblem::at(
            pointer.to_string(),
            format!("must be one of {} (found {value})", names.join(", ")),
        ));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        problems.push(SchemaProblem::at(
            pointer.to_string(),
            format!("must be {expected}"),
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must be at least {min}"),
            ));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must be at most {max}"),
            ));
        }
    }
    if let Value::String(text) = value {
        let chars = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && chars < min
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must be at least {min} characters"),
            ));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && chars > max
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must be at most {max} characters"),
            ));
        }
    }
    if let Value::Array(items) = value {
        let len = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must have at least {min} items"),
            ));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            problems.push(SchemaProblem::at(
                pointer.to_string(),
                format!("must have at most {max} items"),
            ));
        }
    }
    if let Value::Object(map) = value {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    problems.push(SchemaProblem {
                        pointer: pointer.to_string(),
                        field: format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1")),
                        message: format!("missing required field `{name}`"),
                    });
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, item) in map {
            let at = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => check_schema(item, sub, root, &at, problems),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    problems.push(SchemaProblem::at(at, format!("unknown field `{name}`")));
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (idx, item) in items.iter().enumerate() {
            check_schema(
                item,
                item_schema,
                root,
                &format!("{pointer}/{idx}"),
                problems,
            );
        }
    }
}

fn type_matches(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Byte offset of every value in a valid JSON text, by JSON pointer.
fn json_positions(text: &str) -> BTreeMap<String, usize> {
    struct Scanner<'a> {
        bytes: &'a [u8],
        at: usize,
        out: BTreeMap<String, usize>,
    }
    impl Scanner<'_> {
        fn skip_ws(&mut self) {
            while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
        }
        fn string(&mut self) -> String {
            let start = self.at + 1;
            self.at += 1;
            while self.at < self.bytes.len() && self.bytes[self.at] != b'"' {
                self.at += if self.bytes[self.at] == b'\\' { 2 } else { 1 };
            }
            let raw = &self.bytes[start.min(self.bytes.len())..self.at.min(self.bytes.len())];
            self.at += 1;
            serde_json::from_slice::<String>(&[b"\"", raw, b"\""].concat())
                .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
        }
        fn value(&mut self, pointer: String, depth: usize) {
            self.skip_ws();
            self.out.insert(pointer.clone(), self.at);
            if depth > 128 {
                return;
            }
            match self.bytes.get(self.at) {
                Some(b'{') => {
                    self.at += 1;
                    loop {
                        self.skip_ws();
                        match self.bytes.get(self.at) {
                            Some(b'"') => {
                                let key = self.string();
                                self.skip_ws();
                                self.at += 1; // ':'
                                let escaped = key.replace('~', "~0").replace('/', "~1");
                                self.value(format!("{pointer}/{escaped}"), depth + 1);
                            }
                            Some(b',') => self.at += 1,
                            _ => {
                                self.at += 1;
                                break;
                            }
                        }
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    let mut idx = 0;
                    loop {
                        self.skip_ws();
                        match self.bytes.get(self.at) {
                            Some(b']') | None => {
                                self.at += 1;
                                break;
                            }
                            Some(b',') => self.at += 1,
                            _ => {
                                self.value(format!("{pointer}/{idx}"), depth + 1);
                                idx += 1;
                            }
                        }
                    }
                }
                Some(b'"') => {
                    self.string();
                }
                Some(_) => {
                    while self.at < self.bytes.len()
                        && !matches!(self.bytes[self.at], b',' | b'}' | b']')
                        && !self.bytes[self.at].is_ascii_whitespace()
                    {
                        self.at += 1;
                    }
                }
                None => {}
            }
        }
    }
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        at: 0,
        out: BTreeMap::new(),
    };
    scanner.value(String::new(), 0);
    scanner.out
}

/// The lexical family of a file: how its comments and strings look, all the bracket check needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    /// `//` and `/* */` comments, `"` strings, `'` chars (Rust, C, C++, Java, Go, C#, Kotlin, Swift).
    CLike,
    /// As C-like, with `'` and `` ` `` strings (JavaScript, TypeScript).
    Script,
    /// `#` comments, `'` and `"` strings (Python, Ruby, shell, YAML, TOML).
    Hash,
    Json,
    /// Unknown: brackets only, no strings or comments.
    Plain,
}

impl Syntax {
    fn from_path(path: Option<&str>) -> Syntax {
        let ext = path
            .and_then(|p| p.rsplit_once('.'))
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "rs" | "c" | "h" | "cc" | "cpp" | "hpp" | "java" | "go" | "cs" | "kt" | "swift"
            | "scala" => Syntax::CLike,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" => Syntax::Script,
            "py" | "rb" | "sh" | "bash" | "yml" | "yaml" | "toml" | "r" | "pl" => Syntax::Hash,
            "json" => Syntax::Json,
            // Generated code without a path is most often C-like.
            "" => Syntax::CLike,
            _ => Syntax::Plain,
        }
    }
}

/// Brackets, strings and comments; conflict markers; Markdown fences around the code.
fn check_code(text: &str, language: Syntax, index: &LineIndex, issues: &mut Vec<ContentIssue>) {
    for (line_idx, line) in text.lines().enumerate() {
        if ["<<<<<<< ", ">>>>>>> "].iter().any(|m| line.starts_with(m)) || line == "=======" {
            issues.push(issue(
                "conflict_marker",
                IssueSeverity::Error,
                "merge-conflict marker".to_string(),
                line_idx + 1,
                1,
            ));
        }
        if line.trim_start().starts_with("```") {
            issues.push(issue(
                "markdown_fence",
                IssueSeverity::Warning,
                "Markdown code fence inside the code (model output not unwrapped?)".to_string(),
                line_idx + 1,
                line.len() - line.trim_start().len() + 1,
            ));
        }
    }

    let bytes = text.as_bytes();
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut at = 0;
    let unterminated = |what: &str, start: usize, issues: &mut Vec<ContentIssue>| {
        let (line, column) = index.position(start);
        issues.push(issue(
            "unterminated",
            IssueSeverity::Error,
            format!("unterminated {what}"),
            line,
            column,
        ));
    };
    while at < bytes.len() {
        let b = bytes[at];
        let next = bytes.get(at + 1).copied();
        let line_comment = match language {
            Syntax::CLike | Syntax::Script => b == b'/' && next == Some(b'/'),
            Syntax::Hash => b == b'#',
            _ => false,
        };
        if line_comment {
            while at < bytes.len() && bytes[at] != b'\n' {
                at += 1;
            }
            continue;
        }
        if matches!(language, Syntax::CLike | Syntax::Script) && b == b'/' && next == Some(b'*') {
            match text[at + 2..].find("*/") {
                Some(end) => at += 2 + end + 2,
                None => {
                    unterminated("block comment", at, issues);
                    break;
                }
            }
            continue;
        }
        let quote = match (language, b) {
            (Syntax::Plain, _) => None,
            (_, b'"') => Some(b'"'),
            (Syntax::Script | Syntax::Hash, b'\'') => Some(b'\''),
            (Syntax::Script, b'`') => Some(b'`'),
            // A char literal ('x', '\n', '\u{..}'); a lone `'` is a lifetime or label.
            (Syntax::CLike, b'\'') => {
                let rest = &text[at + 1..];
                let close = if let Some(escaped) = rest.strip_prefix('\\') {
                    escaped.find('\'').map(|i| i + 2)
                } else {
                    rest.chars()
                        .next()
                        .filter(|c| rest[c.len_utf8()..].starts_with('\''))
                        .map(|c| c.len_utf8() + 1)
                };
                if let Some(len) = close.filter(|len| *len <= 12) {
                    at += 1 + len;
                    continue;
                }
                None
            }
            _ => None,
        };
        if let Some(quote) = quote {
            // Python's triple quotes span lines; other strings end at the line (template
            // literals excepted).
            let triple = language == Syntax::Hash
                && text[at..].starts_with(&format!("{0}{0}{0}", quote as char));
            let start = at;
            at += if triple { 3 } else { 1 };
            let mut closed = false;
            while at < bytes.len() {
                let c = bytes[at];
                if c == b'\\' {
                    at += 2;
                    continue;
                }
                if triple {
                    if text[at..].starts_with(&format!("{0}{0}{0}", quote as char)) {
                        at += 3;
                        closed = true;
                        break;
                    }
                } else if c == quote {
                    at += 1;
                    closed = true;
                    break;
                } else if c == b'\n'
                    && quote != b'`'
                    && !(language == Syntax::CLike && quote == b'"')
                {
                    break;
                }
                at += 1;
            }
            if !closed {
                unterminated("string", start, issues);
            }
            continue;
        }
        match b {
            b'(' | b'[' | b'{' => stack.push((b, at)),
            b')' | b']' | b'}' => {
                let open = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.last() {
                    Some((top, _)) if *top == open => {
                        stack.pop();
                    }
                    Some((top, start)) => {
                        let (line, column) = index.position(at);
                        let (open_line, open_column) = index.position(*start);
                        issues.push(issue(
                            "unbalanced_bracket",
                            IssueSeverity::Error,
                            format!(
                                "`{}` closes `{}` opened at {open_line}:{open_column}",
                                b as char, *top as char
                            ),
                            line,
                            column,
                        ));
                        stack.pop();
                    }
                    None => {
                        let (line, column) = index.position(at);
                        issues.push(issue(
                            "unbalanced_bracket",
                            IssueSeverity::Error,
                            format!("`{}` has no matching opening bracket", b as char),
                            line,
                            column,
                        ));
                    }
                }
            }
            _ => {}
        }
        at += 1;
    }
    for (open, start) in stack {
        let (line, column) = index.position(start);
        issues.push(issue(
            "unbalanced_bracket",
            IssueSeverity::Error,
            format!("`{}` is never closed", open as char),
            line,
            column,
        ));
    }
}

/// The first `TODO`, `FIXME`, `XXX` or `HACK` standing as a word, with its 1-based column.
fn todo_marker(line: &str) -> Option<(usize, &'static str)> {
    const MARKERS: [&str; 4] = ["TODO", "FIXME", "XXX", "HACK"];
    let mut best: Option<(usize, &'static str)> = None;
    for marker in MARKERS {
        let mut from = 0;
        while let Some(found) = line[from..].find(marker) {
            let start = from + found;
            let end = start + marker.len();
            let word_before = line[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let word_after = line[end..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !word_before && !word_after {
                if best.is_none_or(|(b, _)| start < b) {
                    best = Some((start, marker));
                }
                break;
            }
            from = end;
        }
    }
    best.map(|(start, marker)| (line[..start].chars().count() + 1, marker))
}

/// Byte offset → 1-based line and character column.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl LineIndex<'_> {
    fn new(text: &str) -> LineIndex<'_> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|s| *s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(
        content: &str,
        content_type: ContentType,
        path: Option<&str>,
    ) -> ValidateContentResult {
        validate_content(&ValidateContent {
            content: content.to_string(),
            content_type,
            file_path: path.map(str::to_string),
            scrub_secrets: false,
        })
        .unwrap()
    }

    fn rules(result: &ValidateContentResult) -> Vec<(&str, usize, usize)> {
        result
            .findings
            .iter()
            .map(|i| (i.rule.as_str(), i.line, i.column))
            .collect()
    }

    #[test]
    fn code_brackets_strings_and_comments() {
        let ok =
            "fn main() {\n    let s = \"}\"; // }\n    let c = '{';\n    /* ( */ x(&'a y);\n}\n";
        let result = validate(ok, ContentType::GeneratedCode, Some("src/main.rs"));
        assert!(result.passed, "{:?}", result.findings);

        let bad = "fn main() {\n    call(1, 2];\n";
        let result = validate(bad, ContentType::GeneratedCode, Some("src/main.rs"));
        assert!(!result.passed);
        assert_eq!(
            rules(&result),
            [("unbalanced_bracket", 1, 11), ("unbalanced_bracket", 2, 14)]
        );
        assert!(
            result.findings[1].message.contains("opened at 2:9"),
            "{:?}",
            result.findings
        );

        let py = "def f():\n    s = 'unclosed\n    return {'a': 1}\n";
        let result = validate(py, ContentType::GeneratedCode, Some("x.py"));
        assert_eq!(rules(&result), [("unterminated", 2, 9)]);

        let fenced = "```rust\nfn x() {}\n```\n<<<<<<< HEAD\n";
        let result = validate(fenced, ContentType::GeneratedCode, Some("a.rs"));
        assert_eq!(
            rules(&result),
            [
                ("markdown_fence", 1, 1),
                ("markdown_fence", 3, 1),
                ("conflict_marker", 4, 1)
            ]
        );
    }

    #[test]
    fn findings_are_checked_against_the_finding_schema_with_positions() {
        let content = r#"{"findings": [
  {"id": "x", "rule_id": "TG001", "severity": "HIGH", "category": "security",
   "confidence": 0.9, "title": "t", "message": "m", "source": "llm",
   "location": {"file": "a.rs", "start_line": 3, "end_line": 3},
   "fingerprint": "f", "on_changed_line": true},
  {"id": "y", "rule_id": "TG001", "severity": "SEVERE", "category": "security",
   "confidence": "high", "title": "t", "message": "m", "source": "llm",
   "location": {"file": "a.rs", "start_line": 3, "end_line": 3},
   "fingerprint": "f", "on_changed_line": true}
]}"#;
        let result = validate(content, ContentType::ReviewFinding, None);
        assert!(!result.passed);
        let schema: Vec<(&str, usize, Option<&str>)> = result
            .findings
            .iter()
            .map(|i| (i.rule.as_str(), i.line, i.pointer.as_deref()))
            .collect();
        assert_eq!(
            schema,
            [
                ("schema", 6, Some("/findings/1/severity")),
                ("schema", 7, Some("/findings/1/confidence")),
            ],
            "{:?}",
            result.findings
        );
        assert_eq!(result.findings[0].column, 47);

        let broken = validate("{\"a\": 1,,}", ContentType::ReviewFinding, None);
        assert_eq!(rules(&broken), [("json_syntax", 1, 9)]);
        let missing = validate("[{}]", ContentType::ReviewFinding, None);
        assert!(
            missing
                .findings
                .iter()
                .any(|i| i.message.contains("`rule_id`")),
            "{:?}",
            missing.findings
        );
    }

    #[test]
    fn plans_need_their_top_level_shape() {
        let good = r#"{"id": "plan_1", "version": 1, "goal": "g",
 "steps": [{"step_number": 1, "title": "a", "depends_on": []}]}"#;
        assert!(validate(good, ContentType::PlanOutput, None).passed);
        let bad = r#"{"id": "plan_1", "goal": "g",
 "steps": [{"title": "a", "depends_on": ["x"]}]}"#;
        let result = validate(bad, ContentType::PlanOutput, None);
        let messages: Vec<&str> = result.findings.iter().map(|i| i.message.as_str()).collect();
        assert_eq!(result.findings.len(), 3, "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("`version`")));
        assert!(messages.iter().any(|m| m.contains("`step_number`")));
        assert!(messages.iter().any(|m| m.contains("depends_on")));
    }

    #[test]
    fn secrets_long_lines_and_todo_markers_everywhere() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let content = format!(
            "x\ntoken: {token} // TODO rotate\n{}\nTODOS are fine\n",
            "y".repeat(1200)
        );
        let result = validate_content(&ValidateContent {
            content: content.clone(),
            content_type: ContentType::RawText,
            file_path: None,
            scrub_secrets: true,
        })
        .unwrap();
        assert!(!result.passed);
        assert_eq!(
            rules(&result),
            [
                ("secret", 2, 8),
                ("todo_marker", 2, 52),
                ("oversized_line", 3, 1001)
            ]
        );
        assert_eq!(result.findings[1].severity, IssueSeverity::Info);
        let json = serde_json::to_string(&result.findings).unwrap();
        assert!(!json.contains(&token));
        let scrubbed = result.scrubbed_content.unwrap();
        assert!(!scrubbed.contains(&token) && scrubbed.contains("TODO rotate"));
        assert_eq!(result.secrets_found, 1);
        // Same content, same ids.
        let again = validate(&content, ContentType::RawText, None);
        assert_eq!(again.findings[0].id, result.findings[0].id);
        assert_eq!(again.scrubbed_content, None);
    }
}
