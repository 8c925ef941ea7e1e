//! Importing results from any SARIF 2.1.0 producer (clippy, ESLint, CodeQL, …).
//!
//! Each result becomes a finding with rule id `<tool>/<ruleId>` (the tool is the run's driver
//! name in lower case) and `tool` set to the driver name, so fingerprints, the gate and the
//! SARIF writer keep tools apart. The level comes from the result, else the rule's
//! `defaultConfiguration`, else SARIF's default `warning`; a rule's `security-severity` (GitHub's
//! 0–10 scale) takes precedence when present. Results that are suppressed (an accepted
//! suppression), absent from the current run (`baselineState: absent`), or that are not
//! problems (`kind` `pass` or `notApplicable`) are skipped.
//!
//! Locations resolve through `uriBaseId` and `originalUriBaseIds`; `file:` URIs and absolute
//! bases must lie inside the workspace, and relative paths are taken from the workspace root.
//! Anything else (outside, another scheme) is dropped and counted. A file that is not JSON or
//! not SARIF 2.1.0 is an error naming the file and what is wrong, because the user asked for it
//! by name.

use std::cell::Cell;
use std::path::Path;
use std::time::Instant;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::orchestrate::ToolRun;
use crate::findings::{
    AnalyzerStatus, Applicability, Category, Finding, Location, Severity, Source, SuggestedFix,
};
use crate::input::{self, InputError, Limit};
use crate::workspace::Workspace;

/// Results kept from one file; the rest are skipped unparsed and counted in a warning, so a
/// valid file with millions of results cannot blow memory up (~30× the file size as a tree).
pub const MAX_SARIF_RESULTS: usize = 50_000;
/// How deep `uriBaseId` chains may go (they may not loop).
const MAX_BASE_DEPTH: usize = 8;
const DEFAULT_CONFIDENCE: f64 = 0.9;

/// A SARIF file could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SarifImportError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("SARIF file {path} is not valid JSON: line {line}, column {column}: {message}")]
    Json {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("SARIF file {path} is not SARIF 2.1.0: {reason}")]
    Malformed { path: String, reason: String },
}

/// The findings of one imported file, before scoping.
#[derive(Debug)]
pub(crate) struct ImportedSarif {
    path: String,
    /// Driver names, in order of first appearance.
    tools: Vec<String>,
    /// `name version` of the drivers that give a version.
    versions: Vec<String>,
    findings: Vec<Finding>,
    n_reported: usize,
    outside_workspace: usize,
    warnings: Vec<String>,
    duration_ms: f64,
}

impl ImportedSarif {
    /// As an analyzer run named `sarif`, so it is scoped and capped like the tools.
    pub(crate) fn into_run(self) -> ToolRun {
        let mut run = ToolRun::new("sarif");
        run.report.input = Some(self.path);
        run.report.tools = self.tools;
        run.report.version = (!self.versions.is_empty()).then(|| self.versions.join(", "));
        run.report.findings_reported = self.n_reported;
        run.report.warnings = self.warnings;
        run.report.duration_ms = self.duration_ms;
        run.findings = self.findings;
        run.outside_workspace = self.outside_workspace;
        debug_assert_eq!(run.report.status, AnalyzerStatus::Executed);
        run
    }
}

/// Reads (at most `max_bytes`, see [`crate::input`]) and converts one SARIF file.
pub(crate) fn import(
    path: &Path,
    workspace: &Workspace,
    max_bytes: u64,
) -> Result<ImportedSarif, SarifImportError> {
    let started = Instant::now();
    let display = path.display().to_string();
    let bytes = input::read_file(path, "SARIF file", Limit::max_input(max_bytes))?;
    let mut imported = convert(&bytes, &display, workspace, MAX_SARIF_RESULTS)?;
    imported.duration_ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    Ok(imported)
}

fn convert(
    bytes: &[u8],
    path: &str,
    workspace: &Workspace,
    max_results: usize,
) -> Result<ImportedSarif, SarifImportError> {
    let malformed = |reason: String| SarifImportError::Malformed {
        path: path.to_string(),
        reason,
    };
    // A UTF-8 byte order mark is legal in SARIF files written by .NET tools.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let n_dropped = Cell::new(0);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let log = CappedSeed {
        path: &[],
        left: &Cell::new(max_results),
        n_dropped: &n_dropped,
    }
    .deserialize(&mut deserializer)
    .and_then(|log| deserializer.end().map(|()| log))
    .map_err(|err| SarifImportError::Json {
        path: path.to_string(),
        line: err.line(),
        column: err.column(),
        message: err.to_string(),
    })?;
    let Some(log) = log.as_object() else {
        return Err(malformed("the top level is not a JSON object".into()));
    };
    match log.get("version").and_then(Value::as_str) {
        Some("2.1.0") => {}
        Some(other) => {
            return Err(malformed(format!(
                "`version` is \"{other}\"; only \"2.1.0\" is supported"
            )));
        }
        None => return Err(malformed("`version` is missing".into())),
    }
    let Some(runs) = log.get("runs").and_then(Value::as_array) else {
        return Err(malformed("`runs` is missing or not an array".into()));
    };

    let mut imported = ImportedSarif {
        path: path.to_string(),
        tools: Vec::new(),
        versions: Vec::new(),
        findings: Vec::new(),
        n_reported: 0,
        outside_workspace: 0,
        warnings: Vec::new(),
        duration_ms: 0.0,
    };
    let mut counts = SkipCounts::default();
    for (run_idx, run) in runs.iter().enumerate() {
        let driver = &run["tool"]["driver"];
        let Some(tool) = driver["name"]
            .as_str()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        else {
            return Err(malformed(format!(
                "runs[{run_idx}].tool.driver.name is missing"
            )));
        };
        let version = driver["semanticVersion"]
            .as_str()
            .or_else(|| driver["version"].as_str());
        if !imported.tools.iter().any(|known| known == tool) {
            imported.tools.push(tool.to_string());
        }
        if let Some(version) = version {
            let label = format!("{tool} {version}");
            if !imported.versions.contains(&label) {
                imported.versions.push(label);
            }
        }
        let results = match &run["results"] {
            Value::Array(results) => results.as_slice(),
            Value::Null => &[],
            _ => {
                return Err(malformed(format!(
                    "runs[{run_idx}].results is not an array"
                )));
            }
        };
        let context = RunContext::new(run, tool);
        for result in results {
            match context.finding(result, workspace, &mut counts) {
                Outcome::Finding(finding) => {
                    imported.n_reported += 1;
                    imported.findings.push(*finding);
                }
                Outcome::Outside => {
                    imported.n_reported += 1;
                    imported.outside_workspace += 1;
                }
                Outcome::Skipped => {}
            }
        }
    }
    imported.warnings = counts.warnings(path);
    if n_dropped.get() > 0 {
        imported.warnings.push(format!(
            "sarif {path}: {} result(s) beyond the first {max_results} were not imported",
            n_dropped.get()
        ));
    }
    Ok(imported)
}

/// Deserializes a SARIF log as a JSON tree, except that the elements of `runs[*].results`
/// past the first `left` (over all runs) are skipped without being built.
struct CappedSeed<'a> {
    /// Keys from the root to this value: `["runs"]` for a run, `["runs", "results"]` for a
    /// run's results.
    path: &'a [&'static str],
    /// Results that may still be kept.
    left: &'a Cell<usize>,
    n_dropped: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for CappedSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.path {
            // Only the root, the runs, each run and its results need looking into.
            [] | ["runs"] | ["runs", "run"] | ["runs", "run", "results"] => {
                deserializer.deserialize_any(self)
            }
            _ => Value::deserialize(deserializer),
        }
    }
}

impl<'de> Visitor<'de> for CappedSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        match self.path {
            ["runs"] => {
                while let Some(run) = seq.next_element_seed(CappedSeed {
                    path: &["runs", "run"],
                    ..self
                })? {
                    items.push(run);
                }
            }
            ["runs", "run", "results"] => loop {
                if self.left.get() > 0 {
                    let Some(result) = seq.next_element::<Value>()? else {
                        break;
                    };
                    self.left.set(self.left.get() - 1);
                    items.push(result);
                } else {
                    if seq.next_element::<IgnoredAny>()?.is_none() {
                        break;
                    }
                    self.n_dropped.set(self.n_dropped.get() + 1);
                }
            },
            _ => {
                while let Some(item) = seq.next_element::<Value>()? {
                    items.push(item);
                }
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let child: &'static [&'static str] = match (self.path, key.as_str()) {
                ([], "runs") => &["runs"],
                (["runs", "run"], "results") => &["runs", "run", "results"],
                _ => &["other"],
            };
            let value = map.next_value_seed(CappedSeed {
                path: child,
                ..self
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// Why results were left out, for one warning per reason.
#[derive(Debug, Default)]
struct SkipCounts {
    suppressed: usize,
    not_problems: usize,
    absent: usize,
    unlocated: usize,
}

impl SkipCounts {
    fn warnings(&self, path: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        for (n, what) in [
            (self.suppressed, "suppressed in the file"),
            (self.absent, "marked absent by the producer's baseline"),
            (self.not_problems, "of kind pass or notApplicable"),
            (self.unlocated, "without a file and line to anchor them"),
        ] {
            if n > 0 {
                warnings.push(format!("sarif {path}: {n} result(s) {what} were skipped"));
            }
        }
        warnings
    }
}

enum Outcome {
    Finding(Box<Finding>),
    Outside,
    Skipped,
}

/// What one run's results refer to: its rules, artifacts and base URIs.
struct RunContext<'a> {
    tool: &'a str,
    slug: String,
    rules: &'a [Value],
    rules_by_id: Map<String, Value>,
    artifacts: &'a [Value],
    bases: Option<&'a Map<String, Value>>,
}

impl<'a> RunContext<'a> {
    fn new(run: &'a Value, tool: &'a str) -> RunContext<'a> {
        let driver = &run["tool"]["driver"];
        let rules = driver["rules"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let mut rules_by_id = Map::new();
        let extension_rules = run["tool"]["extensions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|ext| ext["rules"].as_array().into_iter().flatten());
        for rule in rules.iter().chain(extension_rules) {
            if let Some(id) = rule["id"].as_str() {
                rules_by_id
                    .entry(id.to_string())
                    .or_insert_with(|| rule.clone());
            }
        }
        RunContext {
            tool,
            slug: slug(tool),
            rules,
            rules_by_id,
            artifacts: run["artifacts"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or(&[]),
            bases: run["originalUriBaseIds"].as_object(),
        }
    }

    fn finding(&self, result: &Value, workspace: &Workspace, counts: &mut SkipCounts) -> Outcome {
        if is_suppressed(result) {
            counts.suppressed += 1;
            return Outcome::Skipped;
        }
        if result["baselineState"] == "absent" {
            counts.absent += 1;
            return Outcome::Skipped;
        }
        let kind = result["kind"].as_str().unwrap_or("fail");
        if kind == "pass" || kind == "notApplicable" {
            counts.not_problems += 1;
            return Outcome::Skipped;
        }
        let rule = self.rule_of(result);
        let rule_id = result["ruleId"]
            .as_str()
            .or_else(|| result["rule"]["id"].as_str())
            .or_else(|| rule.and_then(|r| r["id"].as_str()))
            .unwrap_or("unknown-rule");
        let null = Value::Null;
        let rule = rule.unwrap_or(&null);

        let location = &result["locations"][0]["physicalLocation"];
        let region = &location["region"];
        let Some(start_line) = positive(&region["startLine"]) else {
            counts.unlocated += 1;
            return Outcome::Skipped;
        };
        let mut artifact = &location["artifactLocation"];
        if artifact["uri"].is_null()
            && let Some(idx) = artifact["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
        {
            artifact = &self.artifacts.get(idx).unwrap_or(&null)["location"];
        }
        let Some(uri) = artifact["uri"].as_str() else {
            counts.unlocated += 1;
            return Outcome::Skipped;
        };
        let Some(path) = self.resolve(uri, artifact["uriBaseId"].as_str(), workspace, 0) else {
            return Outcome::Outside;
        };

        let level = result["level"]
            .as_str()
            .or_else(|| rule["defaultConfiguration"]["level"].as_str())
            .unwrap_or(if kind == "fail" { "warning" } else { "none" });
        let security_severity = rule["properties"]["security-severity"]
            .as_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .or_else(|| rule["properties"]["security-severity"].as_f64());
        let severity = match security_severity {
            Some(score) if score >= 9.0 => Severity::Critical,
            Some(score) if score >= 7.0 => Severity::High,
            Some(score) if score >= 4.0 => Severity::Medium,
            Some(score) if score > 0.0 => Severity::Low,
            _ => match level {
                "error" => Severity::High,
                "warning" => Severity::Medium,
                "note" => Severity::Low,
                _ => Severity::Info,
            },
        };
        let category = category_of(rule, result).unwrap_or(if security_severity.is_some() {
            Category::Security
        } else if level == "error" {
            Category::Correctness
        } else {
            Category::Maintainability
        });
        let confidence = match rule["properties"]["precision"].as_str() {
            Some("very-high") => 0.95,
            Some("high") => 0.85,
            Some("medium") => 0.7,
            Some("low") => 0.5,
            _ => DEFAULT_CONFIDENCE,
        };
        let message = message_of(result, rule).unwrap_or_else(|| rule_id.to_string());

        let end_line = positive(&region["endLine"])
            .unwrap_or(start_line)
            .max(start_line);
        let location = Location {
            file: path,
            start_line,
            end_line,
            start_column: positive(&region["startColumn"]),
            end_column: positive(&region["endColumn"]),
        };
        let title: String = message
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect();
        let mut finding = Finding::new(
            format!("{}/{rule_id}", self.slug),
            severity,
            category,
            Source::Sarif,
            title,
            location,
        )
        .with_confidence(confidence)
        .with_message(message)
        .with_evidence(format!("{} {level}: {rule_id}", self.tool))
        .with_recommendation(
            text_of(&rule["help"])
                .map(|help| help.chars().take(1000).collect())
                .unwrap_or_else(|| format!("See the {} documentation of `{rule_id}`.", self.tool)),
        );
        finding.tool = Some(self.tool.to_string());
        if let Some(uri) = rule["helpUri"].as_str() {
            finding = finding.with_evidence(format!("help: {uri}"));
        }
        if let Some(fix) = fix_of(result, &finding.location) {
            finding = finding.with_fix(fix);
        }
        Outcome::Finding(Box::new(finding))
    }

    fn rule_of(&self, result: &Value) -> Option<&Value> {
        let index = result["ruleIndex"]
            .as_u64()
            .or_else(|| result["rule"]["index"].as_u64())
            .and_then(|i| usize::try_from(i).ok());
        if let Some(rule) = index.and_then(|i| self.rules.get(i)) {
            return Some(rule);
        }
        let id = result["ruleId"]
            .as_str()
            .or_else(|| result["rule"]["id"].as_str())?;
        self.rules_by_id.get(id)
    }

    /// A repository-relative path for `uri`, or `None` when it lies outside the workspace or is
    /// not a file.
    fn resolve(
        &self,
        uri: &str,
        base_id: Option<&str>,
        workspace: &Workspace,
        depth: usize,
    ) -> Option<String> {
        if let Some(absolute) = file_uri_path(uri) {
            return workspace
                .relative(&absolute, "")
                .ok()
                .map(|path| path.as_str().to_string());
        }
        if has_scheme(uri) {
            return None;
        }
        let relative = percent_decode(uri);
        let base = base_id.and_then(|id| self.bases.and_then(|bases| bases.get(id)));
        match base.and_then(|b| b["uri"].as_str()) {
            // An undefined base (often `%SRCROOT%`) or one without a URI means the checkout.
            None => workspace
                .relative(&relative, "")
                .ok()
                .map(|path| path.as_str().to_string()),
            Some(base_uri) if depth < MAX_BASE_DEPTH => {
                let base_uri = if base_uri.ends_with('/') {
                    base_uri.to_string()
                } else {
                    format!("{base_uri}/")
                };
                let joined = format!("{base_uri}{}", uri.trim_start_matches("./"));
                let parent = base.and_then(|b| b["uriBaseId"].as_str());
                self.resolve(&joined, parent, workspace, depth + 1)
            }
            Some(_) => None,
        }
    }
}

/// An accepted suppression (status absent or `accepted`) hides a result; one under review or
/// rejected does not.
fn is_suppressed(result: &Value) -> bool {
    result["suppressions"].as_array().is_some_and(|list| {
        list.iter()
            .any(|s| s["status"].is_null() || s["status"] == "accepted")
    })
}

fn category_of(rule: &Value, result: &Value) -> Option<Category> {
    let tags = rule["properties"]["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            result["properties"]["tags"]
                .as_array()
                .into_iter()
                .flatten(),
        )
        .filter_map(Value::as_str);
    let mut found = None;
    for tag in tags {
        let category = match tag.to_ascii_lowercase().as_str() {
            "security" => Category::Security,
            "correctness" => Category::Correctness,
            "performance" => Category::Performance,
            "maintainability" => Category::Maintainability,
            "style" => Category::Style,
            "reliability" => Category::Reliability,
            "documentation" => Category::Documentation,
            _ => continue,
        };
        // Security outranks whatever else a rule is tagged with.
        if category == Category::Security {
            return Some(category);
        }
        found.get_or_insert(category);
    }
    found
}

/// The result's text, else its message template filled in, else the rule's description.
fn message_of(result: &Value, rule: &Value) -> Option<String> {
    let message = &result["message"];
    if let Some(text) = text_of(message) {
        return Some(text);
    }
    if let Some(id) = message["id"].as_str()
        && let Some(template) = text_of(&rule["messageStrings"][id])
    {
        let arguments: Vec<&str> = message["arguments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut filled = template;
        for (idx, argument) in arguments.iter().enumerate() {
            filled = filled.replace(&format!("{{{idx}}}"), argument);
        }
        return Some(filled);
    }
    text_of(&rule["shortDescription"]).or_else(|| text_of(&rule["fullDescription"]))
}

fn text_of(message: &Value) -> Option<String> {
    message["text"]
        .as_str()
        .or_else(|| message["markdown"].as_str())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// A producer's first fix. Its replacement text is used only when it replaces exactly the
/// finding's whole lines (what [`SuggestedFix::replacement`] means); otherwise the fix is shown,
/// not offered.
fn fix_of(result: &Value, location: &Location) -> Option<SuggestedFix> {
    let fix = &result["fixes"][0];
    if fix.is_null() {
        return None;
    }
    let changes = fix["artifactChanges"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let replacements: Vec<&Value> = changes
        .iter()
        .flat_map(|c| c["replacements"].as_array().into_iter().flatten())
        .collect();
    let whole_lines = match (changes.len(), replacements.as_slice()) {
        (1, [only]) => {
            let region = &only["deletedRegion"];
            let plain_lines = ["startColumn", "endColumn", "charOffset", "byteOffset"]
                .iter()
                .all(|key| region[key].is_null());
            let same_lines = positive(&region["startLine"]) == Some(location.start_line)
                && positive(&region["endLine"]).unwrap_or(location.start_line) == location.end_line;
            if plain_lines && same_lines {
                only["insertedContent"]["text"].as_str().map(str::to_string)
            } else {
                None
            }
        }
        _ => None,
    };
    Some(SuggestedFix {
        description: text_of(&fix["description"])
            .unwrap_or_else(|| "Fix suggested by the tool".to_string()),
        applicability: if whole_lines.is_some() {
            Applicability::Unsafe
        } else {
            Applicability::DisplayOnly
        },
        replacement: whole_lines,
    })
}

fn positive(value: &Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// `clippy` from `clippy`, `codeql` from `CodeQL`, `semgrep-oss` from `Semgrep OSS`.
fn slug(tool: &str) -> String {
    let mut slug = String::new();
    for c in tool.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "sarif".to_string()
    } else {
        slug.to_string()
    }
}

/// The path of a `file:` URI (`file:///a/b`, `file://localhost/a/b`, `file:/a/b`), decoded.
fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri
        .strip_prefix("file://")
        .map(|rest| rest.strip_prefix("localhost").unwrap_or(rest))
        .or_else(|| uri.strip_prefix("file:"))?;
    rest.starts_with('/').then(|| percent_decode(rest))
}

/// `scheme:` per RFC 3986, longer than one letter so `C:/x` is not taken for one.
fn has_scheme(uri: &str) -> bool {
    uri.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] == b'%'
            && let Some(hex) = text.get(idx + 1..idx + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            idx += 3;
            continue;
        }
        out.push(bytes[idx]);
        idx += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        (dir, workspace)
    }

    fn import_text(text: &str, workspace: &Workspace) -> Result<ImportedSarif, SarifImportError> {
        convert(text.as_bytes(), "in.sarif", workspace, MAX_SARIF_RESULTS)
    }

    /// A clippy-sarif-like log with the awkward cases.
    fn clippy_log(root: &str) -> String {
        format!(
            r#"{{
  "version": "2.1.0",
  "runs": [{{
    "tool": {{"driver": {{"name": "clippy", "version": "0.1.80",
      "rules": [
        {{"id": "clippy::unwrap_used", "defaultConfiguration": {{"level": "error"}},
          "shortDescription": {{"text": "unwrap on Option"}}, "helpUri": "https://rust-lang.github.io/rust-clippy/#unwrap_used"}},
        {{"id": "clippy::needless_return", "messageStrings": {{"default": {{"text": "remove `{{0}}`"}}}}}}
      ]}}}},
    "originalUriBaseIds": {{
      "ROOT": {{"uri": "file://{root}/"}},
      "SRC": {{"uri": "src/", "uriBaseId": "ROOT"}}
    }},
    "artifacts": [{{"location": {{"uri": "src/lib.rs"}}}}],
    "results": [
      {{"ruleId": "clippy::unwrap_used", "ruleIndex": 0, "message": {{"text": "used `unwrap()` on an `Option`"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "main.rs", "uriBaseId": "SRC"}},
          "region": {{"startLine": 7, "startColumn": 5, "endColumn": 20}}}}}}]}},
      {{"ruleId": "clippy::needless_return", "level": "warning",
        "message": {{"id": "default", "arguments": ["return"]}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"index": 0}}, "region": {{"startLine": 3, "endLine": 4}}}}}}],
        "fixes": [{{"description": {{"text": "remove it"}}, "artifactChanges": [{{"artifactLocation": {{"index": 0}},
          "replacements": [{{"deletedRegion": {{"startLine": 3, "endLine": 4}}, "insertedContent": {{"text": "x\n"}}}}]}}]}}]}},
      {{"ruleId": "clippy::unwrap_used", "suppressions": [{{"kind": "inSource"}}],
        "message": {{"text": "suppressed"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "src/lib.rs"}}, "region": {{"startLine": 1}}}}}}]}},
      {{"ruleId": "clippy::unwrap_used", "suppressions": [{{"kind": "external", "status": "rejected"}}],
        "message": {{"text": "a rejected suppression does not hide"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "src/lib.rs"}}, "region": {{"startLine": 2}}}}}}]}},
      {{"ruleId": "x", "kind": "pass", "message": {{"text": "fine"}}}},
      {{"ruleId": "x", "message": {{"text": "no region"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "src/lib.rs"}}}}}}]}},
      {{"ruleId": "x", "message": {{"text": "outside"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "file:///etc/passwd"}}, "region": {{"startLine": 1}}}}}}]}},
      {{"ruleId": "x", "message": {{"text": "climbs out"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "../../x.rs"}}, "region": {{"startLine": 1}}}}}}]}}
    ]
  }}]
}}"#
        )
    }

    #[test]
    fn clippy_results_become_findings() {
        let (_dir, workspace) = workspace();
        let root = workspace.root().display().to_string();
        let imported = import_text(&clippy_log(&root), &workspace).unwrap();
        assert_eq!(imported.tools, ["clippy"]);
        assert_eq!(imported.versions, ["clippy 0.1.80"]);
        assert_eq!(imported.findings.len(), 3, "{:#?}", imported.findings);
        assert_eq!(imported.outside_workspace, 2);
        assert_eq!(imported.n_reported, 5);

        let unwrap = &imported.findings[0];
        assert_eq!(unwrap.rule_id, "clippy/clippy::unwrap_used");
        assert_eq!(unwrap.tool.as_deref(), Some("clippy"));
        assert_eq!(unwrap.source, Source::Sarif);
        assert_eq!(
            unwrap.severity,
            Severity::High,
            "level from the rule's default"
        );
        assert_eq!(unwrap.location.file, "src/main.rs", "SRC → ROOT chain");
        assert_eq!(
            (
                unwrap.location.start_line,
                unwrap.location.start_column,
                unwrap.location.end_column
            ),
            (7, Some(5), Some(20))
        );
        assert!(unwrap.evidence.iter().any(|e| e.contains("rust-clippy")));

        let needless = &imported.findings[1];
        assert_eq!(needless.title, "remove `return`", "message template filled");
        assert_eq!(needless.severity, Severity::Medium);
        assert_eq!(needless.location.file, "src/lib.rs", "artifact index");
        assert_eq!(
            (needless.location.start_line, needless.location.end_line),
            (3, 4)
        );
        let fix = needless.suggested_fix.as_ref().unwrap();
        assert_eq!(fix.replacement.as_deref(), Some("x\n"));

        assert_eq!(imported.findings[2].location.start_line, 2);
        let warnings = imported.warnings.join("\n");
        for expected in [
            "1 result(s) suppressed",
            "pass or notApplicable",
            "without a file and line",
        ] {
            assert!(warnings.contains(expected), "{warnings}");
        }
    }

    #[test]
    fn security_severity_and_tags_decide_codeql_findings() {
        let (_dir, workspace) = workspace();
        let log = r#"{"version": "2.1.0", "runs": [{
            "tool": {"driver": {"name": "CodeQL", "semanticVersion": "2.17.0", "rules": [
                {"id": "js/sql-injection", "properties": {"security-severity": "9.8", "tags": ["security", "external/cwe/cwe-089"], "precision": "high"}},
                {"id": "js/unused-local-variable", "properties": {"tags": ["maintainability"], "precision": "very-high"}, "defaultConfiguration": {"level": "note"}}
            ]}},
            "results": [
                {"ruleId": "js/sql-injection", "ruleIndex": 0, "level": "error", "message": {"text": "This query depends on a user-provided value."},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": "app/db%20layer.js", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 12}}}]},
                {"ruleId": "js/unused-local-variable", "message": {"text": "Unused variable x."},
                 "locations": [{"physicalLocation": {"artifactLocation": {"uri": "app/x.js"}, "region": {"startLine": 3}}}]}
            ]}]}"#;
        let imported = import_text(log, &workspace).unwrap();
        assert_eq!(imported.tools, ["CodeQL"]);
        assert_eq!(imported.versions, ["CodeQL 2.17.0"]);
        let sql = &imported.findings[0];
        assert_eq!(sql.rule_id, "codeql/js/sql-injection");
        assert_eq!(sql.severity, Severity::Critical);
        assert_eq!(sql.category, Category::Security);
        assert_eq!(sql.confidence, 0.85);
        assert_eq!(sql.location.file, "app/db layer.js");
        let unused = &imported.findings[1];
        assert_eq!(unused.severity, Severity::Low);
        assert_eq!(unused.category, Category::Maintainability);
        assert_eq!(unused.confidence, 0.95);
    }

    #[test]
    fn malformed_files_are_errors_naming_the_file() {
        let (_dir, workspace) = workspace();
        for (text, expected) in [
            ("{\"version\": \"2.1.0\",\n  \"runs\": [", "line 2"),
            ("[]", "not a JSON object"),
            (r#"{"runs": []}"#, "`version` is missing"),
            (r#"{"version": "2.0.0", "runs": []}"#, "\"2.0.0\""),
            (r#"{"version": "2.1.0"}"#, "`runs`"),
            (
                r#"{"version": "2.1.0", "runs": [{"tool": {}}]}"#,
                "runs[0].tool.driver.name",
            ),
            (
                r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": {}}]}"#,
                "runs[0].results",
            ),
        ] {
            let err = import_text(text, &workspace).unwrap_err().to_string();
            assert!(
                err.contains("in.sarif") && err.contains(expected),
                "{text}: {err}"
            );
        }
        let err = import(Path::new("/nonexistent/x.sarif"), &workspace, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/x.sarif"), "{err}");
    }

    #[test]
    fn results_past_the_cap_are_skipped_with_a_warning() {
        let (_dir, workspace) = workspace();
        let result = r#"{"ruleId": "r", "message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.ts"}, "region": {"startLine": 1}}}]}"#;
        let run = |n: usize| {
            format!(
                r#"{{"tool": {{"driver": {{"name": "x"}}}}, "results": [{}]}}"#,
                vec![result; n].join(",")
            )
        };
        let text = format!(
            r#"{{"version": "2.1.0", "runs": [{}, {}]}}"#,
            run(3),
            run(4)
        );
        let imported = convert(text.as_bytes(), "in.sarif", &workspace, 5).unwrap();
        assert_eq!(imported.n_reported, 5);
        assert_eq!(
            imported.warnings,
            ["sarif in.sarif: 2 result(s) beyond the first 5 were not imported"]
        );
        // Skipped results are still checked as JSON: break the last one.
        let at = text.rfind(r#""m"}"#).unwrap();
        let broken = format!("{}\"m\"]{}", &text[..at], &text[at + 4..]);
        assert!(convert(broken.as_bytes(), "in.sarif", &workspace, 5).is_err());
    }

    #[test]
    fn empty_runs_and_bom_are_fine() {
        let (_dir, workspace) = workspace();
        let text = "\u{feff}{\"version\": \"2.1.0\", \"runs\": [{\"tool\": {\"driver\": {\"name\": \"ESLint\"}}, \"results\": []}]}";
        let imported = import_text(text, &workspace).unwrap();
        assert!(imported.findings.is_empty());
        assert_eq!(imported.tools, ["ESLint"]);
    }

    #[test]
    fn uri_helpers() {
        assert_eq!(slug("Semgrep OSS"), "semgrep-oss");
        assert_eq!(slug("ESLint"), "eslint");
        assert_eq!(slug("  "), "sarif");
        assert_eq!(file_uri_path("file:///a/b%20c").as_deref(), Some("/a/b c"));
        assert_eq!(file_uri_path("file://localhost/a").as_deref(), Some("/a"));
        assert_eq!(file_uri_path("src/a"), None);
        assert!(has_scheme("https://x"));
        assert!(!has_scheme("C:/x"));
        assert!(!has_scheme("src/a:b"));
        assert_eq!(percent_decode("%E2%9C%93%zz"), "✓%zz");
    }
}
