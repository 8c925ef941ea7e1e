//! Reading an invariants file into a validated [`InvariantSet`].
//!
//! The text is parsed once into a positioned YAML tree ([`super::yaml`]), then each rule is
//! validated field by field. Every problem is collected with its line and column (the value's
//! own position when there is a value, the rule's first key otherwise), so one run of
//! `tollgate invariants check` shows them all. A file with any error does not load: a CI gate
//! must not quietly run with half its rules.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::findings::{Category, Severity};
use crate::input::{self, InputError, Limit};

use super::error::{InvariantsError, Problem};
use super::model::{Check, DEFAULT_CONFIDENCE, Invariant, InvariantSet, Lines, Origin};
use super::paths::{self, PathFilter};
use super::pattern::Pattern;
use super::resolve::resolve_invariants_path;
use super::yaml::{self, Node, Pos, Value};

/// The file a repository's own rules live in, at its root.
pub const DEFAULT_FILE_NAME: &str = ".review-invariants.yml";
/// Invariants files larger than this are refused (1 MiB: real files are a few KiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Titles are the first this-many characters of the rule text.
pub const TITLE_CHARS: usize = 80;

/// What `tollgate invariants check` reports about a valid file.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub path: PathBuf,
    /// Number of rules, including guidance-only and disabled ones.
    pub rules: usize,
    /// Number of enabled rules with an action (evaluated against diffs).
    pub checks: usize,
    /// Number of enabled rules without an action.
    pub guidance: usize,
    /// Number of rules with `enabled: false`.
    pub disabled: usize,
    /// Rendered `path:line:col: rule ID: message` lines.
    pub warnings: Vec<String>,
}

impl std::fmt::Display for CheckReport {
    /// One summary line, e.g. `.review-invariants.yml: 12 rules (10 checks, 1 guidance, 1 disabled), 2 warnings`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} rule{} ({} check{}, {} guidance, {} disabled), {} warning{}",
            self.path.display(),
            self.rules,
            plural(self.rules),
            self.checks,
            plural(self.checks),
            self.guidance,
            self.disabled,
            self.warnings.len(),
            plural(self.warnings.len()),
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Validates one file for `tollgate invariants check [FILE]`: `Ok` with counts and warnings,
/// or the error listing every problem (the command prints them and exits 2).
pub fn check_file(path: &Path) -> Result<CheckReport, InvariantsError> {
    let set = InvariantSet::load(path)?;
    Ok(CheckReport {
        path: path.to_path_buf(),
        rules: set.len(),
        checks: set.checks().count(),
        guidance: set.guidance().count(),
        disabled: set.rules().iter().filter(|rule| !rule.enabled()).count(),
        warnings: set.warnings().to_vec(),
    })
}

/// Loads a workspace's invariants file from a path a user or model supplied (relative to the
/// workspace root; see [`resolve_invariants_path`] for what is refused). Messages name the
/// path as given.
pub fn load_from_workspace(
    workspace_root: &Path,
    given: &str,
) -> Result<InvariantSet, InvariantsError> {
    let resolved = resolve_invariants_path(workspace_root, given)?;
    let text = read_capped(&resolved)?;
    let label = Path::new(given.strip_prefix("./").unwrap_or(given));
    InvariantSet::from_yaml(label, &text)
}

impl InvariantSet {
    /// Reads and validates a file (at most [`MAX_FILE_BYTES`]). The path is used as given; use
    /// [`load_from_workspace`] for paths that are not trusted.
    pub fn load(path: &Path) -> Result<InvariantSet, InvariantsError> {
        let text = read_capped(path)?;
        InvariantSet::from_yaml(path, &text)
    }

    /// Validates invariants YAML; `path` only labels rules and messages.
    pub fn from_yaml(path: &Path, text: &str) -> Result<InvariantSet, InvariantsError> {
        let mut loader = Loader {
            path: Arc::from(path),
            problems: Vec::new(),
            warnings: Vec::new(),
            rules: Vec::new(),
            first_id_at: HashMap::new(),
        };
        loader.document(text);
        let Loader {
            mut problems,
            mut warnings,
            rules,
            ..
        } = loader;
        problems.sort_by_key(|problem| (problem.line, problem.column));
        warnings.sort_by_key(|problem| (problem.line, problem.column));
        if !problems.is_empty() {
            return Err(InvariantsError::Invalid {
                path: path.to_path_buf(),
                problems,
                warnings,
            });
        }
        Ok(InvariantSet {
            rules,
            warnings: warnings
                .iter()
                .map(|problem| problem.display(path).to_string())
                .collect(),
            sources: vec![path.to_path_buf()],
        })
    }
}

/// Reads a file of at most [`MAX_FILE_BYTES`] as UTF-8.
fn read_capped(path: &Path) -> Result<String, InvariantsError> {
    let bytes =
        input::read_file(path, "invariants file", Limit::fixed(MAX_FILE_BYTES)).map_err(|err| {
            match err {
                InputError::NotFound { .. } => InvariantsError::NotFound {
                    path: path.to_path_buf(),
                },
                InputError::TooLarge { limit, .. } => InvariantsError::TooLarge {
                    path: path.to_path_buf(),
                    size: std::fs::metadata(path).map_or(limit + 1, |m| m.len()),
                    limit,
                },
                other => InvariantsError::Read {
                    path: path.to_path_buf(),
                    source: io::Error::other(other),
                },
            }
        })?;
    String::from_utf8(bytes).map_err(|err| {
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |idx| idx + 1);
        let column = String::from_utf8_lossy(&valid[line_start..])
            .chars()
            .count()
            + 1;
        InvariantsError::Invalid {
            path: path.to_path_buf(),
            problems: vec![Problem {
                line,
                column,
                rule_id: None,
                message: "the file is not valid UTF-8".to_string(),
            }],
            warnings: Vec::new(),
        }
    })
}

const KNOWN_KEYS: &[&str] = &[
    "id",
    "rule",
    "paths",
    "severity",
    "category",
    "action",
    "deny",
    "require",
    "when",
    "exclude_paths",
    "message",
    "recommendation",
    "impact",
    "lines",
    "enabled",
    "confidence",
];

const ACTIONS: &str = "deny, require or when_require";

struct Loader {
    path: Arc<Path>,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    rules: Vec<Invariant>,
    first_id_at: HashMap<String, Pos>,
}

/// A rule's fields by name, with the key's position, before validation.
struct Fields<'a> {
    rule_pos: Pos,
    rule_id: Option<String>,
    by_name: Vec<(&'static str, &'a Node, &'a Node)>,
    unknown: Vec<(String, Pos)>,
}

impl<'a> Fields<'a> {
    fn get(&self, name: &str) -> Option<&'a Node> {
        self.by_name
            .iter()
            .find(|(known, _, _)| *known == name)
            .map(|(_, _, value)| *value)
    }

    fn key_pos(&self, name: &str) -> Pos {
        self.by_name
            .iter()
            .find(|(known, _, _)| *known == name)
            .map_or(self.rule_pos, |(_, key, _)| key.pos_or(self.rule_pos))
    }

    /// A value's position, falling back to its key's (empty containers have none).
    fn value_pos(&self, name: &str) -> Pos {
        let key_pos = self.key_pos(name);
        self.get(name)
            .map_or(key_pos, |value| value.pos_or(key_pos))
    }
}

impl Loader {
    fn error(&mut self, pos: Pos, rule_id: Option<&str>, message: impl Into<String>) {
        self.problems.push(Problem {
            line: pos.line,
            column: pos.column,
            rule_id: rule_id.map(str::to_string),
            message: message.into(),
        });
    }

    fn warn(&mut self, pos: Pos, rule_id: Option<&str>, message: impl Into<String>) {
        self.warnings.push(Problem {
            line: pos.line,
            column: pos.column,
            rule_id: rule_id.map(str::to_string),
            message: message.into(),
        });
    }

    fn document(&mut self, text: &str) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let root = match yaml::parse(text) {
            Ok(root) => root,
            Err(err) => {
                self.error(err.pos, None, format!("YAML syntax error: {}", err.message));
                return;
            }
        };
        let root_pos = root.pos_or(Pos::START);
        let entries = match &root.value {
            Value::Map(entries) => entries,
            Value::Null => {
                self.warn(Pos::START, None, "the file has no rules");
                return;
            }
            other => {
                self.error(
                    root_pos,
                    None,
                    format!(
                        "expected a mapping of section names to lists of rules, found {}",
                        other.kind()
                    ),
                );
                return;
            }
        };
        let mut first_section_at: HashMap<String, Pos> = HashMap::new();
        for (key, value) in entries {
            let key_pos = key.pos_or(root_pos);
            let Some(section) = key.scalar_text() else {
                self.error(key_pos, None, "section names must be plain text");
                continue;
            };
            if let Some(first) = first_section_at.get(&section) {
                let message = format!(
                    "duplicate section `{section}` (first at line {}); YAML keys must be unique",
                    first.line
                );
                self.error(key_pos, None, message);
                continue;
            }
            first_section_at.insert(section.clone(), key_pos);
            match &value.value {
                Value::Seq(items) => {
                    for item in items {
                        self.rule(&section, item, key_pos);
                    }
                }
                Value::Null => {
                    self.warn(key_pos, None, format!("section `{section}` is empty"));
                }
                other => {
                    let message = format!(
                        "section `{section}` is {}, not a list of rules; ignored",
                        other.kind()
                    );
                    self.warn(key_pos, None, message);
                }
            }
        }
        if self.rules.is_empty() && self.problems.is_empty() {
            self.warn(root_pos, None, "the file has no rules");
        }
    }

    fn rule(&mut self, section: &str, node: &Node, section_pos: Pos) {
        let rule_pos = node.pos_or(section_pos);
        let Value::Map(entries) = &node.value else {
            self.error(
                rule_pos,
                None,
                format!(
                    "expected a rule (a mapping with id, rule, paths, severity, category), found {}",
                    node.value.kind()
                ),
            );
            return;
        };
        let n_problems_before = self.problems.len();
        let Some(fields) = self.fields(entries, rule_pos) else {
            return;
        };
        let id = fields.rule_id.clone();
        // As strict as `tollgate.toml`: a misspelt key would leave its rule silently unchecked.
        for (name, pos) in &fields.unknown {
            let hint = suggest(name)
                .map(|known| format!(" (did you mean `{known}`?)"))
                .unwrap_or_default();
            let message = format!(
                "unknown key `{name}`{hint}; valid keys: {}",
                KNOWN_KEYS.join(", ")
            );
            self.error(*pos, id.as_deref(), message);
        }

        let text = self.required_text(&fields, "rule");
        let path_filter = self.path_filter(&fields);
        let severity = self
            .required_text(&fields, "severity")
            .and_then(|given| self.parse_enum::<Severity>(&fields, "severity", &given));
        let category = self
            .required_text(&fields, "category")
            .and_then(|given| self.parse_enum::<Category>(&fields, "category", &given));
        let lines = self.lines(&fields);
        let enabled = self.enabled(&fields);
        let confidence = self.confidence(&fields);
        let message = self.optional_text(&fields, "message");
        let recommendation = self.optional_text(&fields, "recommendation");
        let impact = self.optional_text(&fields, "impact");
        let check = self.check(&fields, lines);

        if self.problems.len() > n_problems_before {
            return;
        }
        let (
            Some(id),
            Some(text),
            Some(severity),
            Some(category),
            Some(path_filter),
            Some(lines),
            Some(check),
        ) = (id, text, severity, category, path_filter, lines, check)
        else {
            // Every `None` above came with a problem; this is only reached if one did not.
            self.error(rule_pos, fields.rule_id.as_deref(), "invalid rule");
            return;
        };
        if check.is_none() && enabled {
            self.warn(
                rule_pos,
                Some(&id),
                "no `action`: the rule is guidance for the model only and is not checked against diffs",
            );
        }
        self.rules.push(Invariant {
            title: title_of(&text),
            id,
            section: section.to_string(),
            text,
            severity,
            category,
            check,
            paths: path_filter,
            lines,
            message: message.flatten(),
            recommendation: recommendation.flatten(),
            impact: impact.flatten(),
            confidence: confidence.flatten().unwrap_or(DEFAULT_CONFIDENCE),
            enabled,
            origin: Origin {
                path: Arc::clone(&self.path),
                line: rule_pos.line,
                column: rule_pos.column,
            },
        });
    }

    /// Indexes a rule's keys, reporting duplicate and non-text keys, and validates its `id`.
    /// `None` when the id itself is unusable in a way that makes further messages confusing.
    fn fields<'a>(&mut self, entries: &'a [(Node, Node)], rule_pos: Pos) -> Option<Fields<'a>> {
        let mut fields = Fields {
            rule_pos,
            rule_id: None,
            by_name: Vec::new(),
            unknown: Vec::new(),
        };
        // The id first, so every other message can name the rule.
        let id_node = entries
            .iter()
            .find(|(key, _)| key.as_str() == Some("id"))
            .map(|(_, value)| value);
        if let Some(id_node) = id_node {
            let pos = id_node.pos_or(rule_pos);
            match id_node.scalar_text() {
                Some(id) if matches!(id_node.value, Value::Str(_) | Value::Int(_)) => {
                    let id = id.trim().to_string();
                    if id.is_empty() {
                        self.error(pos, None, "`id` is empty");
                    } else {
                        if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
                            self.warn(
                                pos,
                                Some(&id),
                                "the id contains whitespace; ids appear in reports, allowlists and `fail_on_invariant_ids`",
                            );
                        }
                        if let Some(first) = self.first_id_at.get(&id) {
                            let message = format!(
                                "duplicate rule id `{id}` (first defined at line {})",
                                first.line
                            );
                            self.error(pos, Some(&id), message);
                        } else {
                            self.first_id_at.insert(id.clone(), pos);
                        }
                        fields.rule_id = Some(id);
                    }
                }
                _ => self.error(
                    pos,
                    None,
                    format!("`id` must be a string, found {}", id_node.value.kind()),
                ),
            }
        }
        let rule_id = fields.rule_id.clone();
        for (key, value) in entries {
            let key_pos = key.pos_or(rule_pos);
            let Some(name) = key.as_str() else {
                self.error(key_pos, rule_id.as_deref(), "rule keys must be strings");
                continue;
            };
            match KNOWN_KEYS.iter().find(|known| **known == name) {
                Some(known) => {
                    if fields.get(known).is_some() {
                        let first = fields.key_pos(known);
                        let message = format!(
                            "duplicate key `{name}` (first at line {}); YAML keys must be unique",
                            first.line
                        );
                        self.error(key_pos, rule_id.as_deref(), message);
                    } else {
                        fields.by_name.push((known, key, value));
                    }
                }
                None => fields.unknown.push((name.to_string(), key_pos)),
            }
        }
        if id_node.is_none() {
            let message = missing_message("id", &fields);
            self.error(rule_pos, None, message);
        }
        Some(fields)
    }

    /// A required, non-empty string field.
    fn required_text(&mut self, fields: &Fields<'_>, name: &str) -> Option<String> {
        let rule_id = fields.rule_id.as_deref();
        let Some(node) = fields.get(name) else {
            let message = missing_message(name, fields);
            self.error(fields.rule_pos, rule_id, message);
            return None;
        };
        let text = self.text(fields, name, node)?;
        if text.trim().is_empty() {
            self.error(
                fields.value_pos(name),
                rule_id,
                format!("`{name}` is empty"),
            );
            return None;
        }
        Some(text)
    }

    /// An optional string field: `Some(None)` when absent or null, `None` after an error.
    fn optional_text(&mut self, fields: &Fields<'_>, name: &str) -> Option<Option<String>> {
        match fields.get(name) {
            None => Some(None),
            Some(node) if node.value == Value::Null => Some(None),
            Some(node) => self
                .text(fields, name, node)
                .map(|text| Some(text.trim().to_string()).filter(|text| !text.is_empty())),
        }
    }

    fn text(&mut self, fields: &Fields<'_>, name: &str, node: &Node) -> Option<String> {
        match &node.value {
            Value::Str(text) => Some(text.clone()),
            other => {
                let hint = if matches!(other, Value::Int(_) | Value::Float(_) | Value::Bool(_)) {
                    " (quote it)"
                } else {
                    ""
                };
                self.error(
                    fields.value_pos(name),
                    fields.rule_id.as_deref(),
                    format!("`{name}` must be a string, found {}{hint}", other.kind()),
                );
                None
            }
        }
    }

    fn parse_enum<T>(&mut self, fields: &Fields<'_>, name: &str, given: &str) -> Option<T>
    where
        T: std::str::FromStr<Err = crate::findings::UnknownValue>,
    {
        match given.parse::<T>() {
            Ok(value) => Some(value),
            Err(err) => {
                self.error(
                    fields.value_pos(name),
                    fields.rule_id.as_deref(),
                    err.to_string(),
                );
                None
            }
        }
    }

    /// `paths` (required) and `exclude_paths` (optional): a glob or a list of globs.
    fn path_filter(&mut self, fields: &Fields<'_>) -> Option<PathFilter> {
        let rule_id = fields.rule_id.as_deref();
        let Some(paths_node) = fields.get("paths") else {
            let message = missing_message("paths", fields);
            self.error(fields.rule_pos, rule_id, message);
            return None;
        };
        let include = self.globs(fields, "paths", paths_node, true);
        let exclude = match fields.get("exclude_paths") {
            None => Some(Vec::new()),
            Some(node) if node.value == Value::Null => Some(Vec::new()),
            Some(node) => self.globs(fields, "exclude_paths", node, false),
        };
        let (include, exclude) = (include?, exclude?);
        if include.iter().all(|glob| glob.starts_with('!')) {
            self.error(
                fields.value_pos("paths"),
                rule_id,
                "`paths` needs at least one glob that is not a `!` exclusion",
            );
            return None;
        }
        match PathFilter::new(&include, &exclude) {
            Ok(filter) if filter.has_includes() => Some(filter),
            Ok(_) => None,
            Err(err) => {
                self.error(fields.value_pos("paths"), rule_id, err.to_string());
                None
            }
        }
    }

    fn globs(
        &mut self,
        fields: &Fields<'_>,
        name: &str,
        node: &Node,
        allow_negation: bool,
    ) -> Option<Vec<String>> {
        let rule_id = fields.rule_id.as_deref();
        let fallback = fields.value_pos(name);
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Str(_) => vec![node],
            other => {
                self.error(
                    fallback,
                    rule_id,
                    format!("`{name}` must be a list of globs, found {}", other.kind()),
                );
                return None;
            }
        };
        if items.is_empty() {
            let message = if name == "paths" {
                "`paths` is empty: a rule needs at least one glob (use `**` for every file)"
            } else {
                "`exclude_paths` is empty"
            };
            if name == "paths" {
                self.error(fallback, rule_id, message);
                return None;
            }
            self.warn(fallback, rule_id, message);
            return Some(Vec::new());
        }
        let mut globs = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            let pos = item.pos_or(fallback);
            let Some(glob) = item.as_str() else {
                self.error(
                    pos,
                    rule_id,
                    format!(
                        "`{name}` entries must be strings, found {}",
                        item.value.kind()
                    ),
                );
                ok = false;
                continue;
            };
            let bare = match glob.strip_prefix('!') {
                Some(rest) if allow_negation => rest,
                Some(_) => {
                    self.error(
                        pos,
                        rule_id,
                        format!(
                            "`{name}` entries cannot be negated with `!` (list the glob without it)"
                        ),
                    );
                    ok = false;
                    continue;
                }
                None => glob,
            };
            if let Err(err) = paths::compile(bare) {
                self.error(pos, rule_id, err.to_string());
                ok = false;
                continue;
            }
            globs.push(glob.to_string());
        }
        ok.then_some(globs)
    }

    fn lines(&mut self, fields: &Fields<'_>) -> Option<Lines> {
        let Some(node) = fields.get("lines") else {
            return Some(Lines::Added);
        };
        let given = self.text(fields, "lines", node)?;
        match given.trim().to_ascii_lowercase().as_str() {
            "added" => Some(Lines::Added),
            "removed" => Some(Lines::Removed),
            _ => {
                self.error(
                    fields.value_pos("lines"),
                    fields.rule_id.as_deref(),
                    format!("unknown `lines` value `{given}` (expected added or removed)"),
                );
                None
            }
        }
    }

    fn enabled(&mut self, fields: &Fields<'_>) -> bool {
        match fields.get("enabled").map(|node| &node.value) {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Bool(false)) => false,
            Some(other) => {
                let message = format!("`enabled` must be true or false, found {}", other.kind());
                self.error(
                    fields.value_pos("enabled"),
                    fields.rule_id.as_deref(),
                    message,
                );
                true
            }
        }
    }

    /// `Some(None)` when absent, `None` after an error.
    fn confidence(&mut self, fields: &Fields<'_>) -> Option<Option<f64>> {
        let value = match fields.get("confidence").map(|node| &node.value) {
            None => return Some(None),
            Some(Value::Float(x)) => *x,
            Some(Value::Int(n)) => *n as f64,
            Some(other) => {
                let message = format!("`confidence` must be a number, found {}", other.kind());
                self.error(
                    fields.value_pos("confidence"),
                    fields.rule_id.as_deref(),
                    message,
                );
                return None;
            }
        };
        if (0.0..=1.0).contains(&value) {
            Some(Some(value))
        } else {
            self.error(
                fields.value_pos("confidence"),
                fields.rule_id.as_deref(),
                format!("`confidence` must be between 0 and 1, found {value}"),
            );
            None
        }
    }

    /// The action and its regexes. `Some(None)` for a guidance rule, `None` after an error.
    fn check(&mut self, fields: &Fields<'_>, lines: Option<Lines>) -> Option<Option<Check>> {
        let rule_id = fields.rule_id.as_deref();
        let action = match fields.get("action") {
            None => None,
            Some(node) if node.value == Value::Null => None,
            Some(node) => Some(self.text(fields, "action", node)?),
        };
        let Some(action) = action else {
            for unused in ["deny", "require", "when"] {
                if fields.get(unused).is_some() {
                    self.warn(
                        fields.key_pos(unused),
                        rule_id,
                        format!("`{unused}` is ignored: the rule has no `action`"),
                    );
                }
            }
            return Some(None);
        };
        let normalized = action.trim().to_ascii_lowercase();
        let (check, used): (Option<Check>, &[&str]) = match normalized.as_str() {
            "deny" => (
                self.regex_block(fields, "deny", "deny").map(Check::Deny),
                &["deny"],
            ),
            "require" => (
                self.regex_block(fields, "require", "require")
                    .map(Check::Require),
                &["require"],
            ),
            "when_require" => {
                let when = self.regex_block(fields, "when", "when_require");
                let require = self.regex_block(fields, "require", "when_require");
                (
                    when.zip(require)
                        .map(|(when, require)| Check::WhenRequire { when, require }),
                    &["when", "require"],
                )
            }
            _ => {
                let hint = if normalized == "warn" {
                    "; to report without failing the gate, use `action: deny` with a lower `severity` (LOW or INFO)"
                } else {
                    ""
                };
                self.error(
                    fields.value_pos("action"),
                    rule_id,
                    format!("unknown action `{action}` (expected {ACTIONS}){hint}"),
                );
                return None;
            }
        };
        for unused in ["deny", "require", "when"] {
            if !used.contains(&unused) && fields.get(unused).is_some() {
                self.warn(
                    fields.key_pos(unused),
                    rule_id,
                    format!("`{unused}` is ignored by action `{normalized}`"),
                );
            }
        }
        if lines == Some(Lines::Removed) && normalized != "deny" {
            self.error(
                fields.value_pos("lines"),
                rule_id,
                format!(
                    "`lines: removed` works with action deny only (`{normalized}` looks for code that was added)"
                ),
            );
            return None;
        }
        check.map(Some)
    }

    /// `NAME: {regex: {pattern, flags}}` (or `NAME: {regex: "pattern"}`), compiled.
    fn regex_block(&mut self, fields: &Fields<'_>, name: &str, action: &str) -> Option<Pattern> {
        let rule_id = fields.rule_id.as_deref();
        let Some(block) = fields.get(name) else {
            self.error(
                fields.rule_pos,
                rule_id,
                format!("action `{action}` needs `{name}: {{regex: {{pattern: …}}}}`"),
            );
            return None;
        };
        let block_pos = fields.value_pos(name);
        let Value::Map(entries) = &block.value else {
            self.error(
                block_pos,
                rule_id,
                format!(
                    "`{name}` must be a mapping with a `regex` key, found {}",
                    block.value.kind()
                ),
            );
            return None;
        };
        let mut regex = None;
        for (key, value) in entries {
            match key.as_str() {
                Some("regex") => regex = Some((key, value)),
                other => {
                    let shown = other.map_or_else(|| "?".to_string(), str::to_string);
                    self.error(
                        key.pos_or(block_pos),
                        rule_id,
                        format!("unknown key `{shown}` in `{name}` (valid keys: regex)"),
                    );
                }
            }
        }
        let Some((regex_key, regex)) = regex else {
            self.error(
                block_pos,
                rule_id,
                format!("`{name}` needs a `regex` with a `pattern`"),
            );
            return None;
        };
        let regex_pos = regex.pos_or(regex_key.pos_or(block_pos));
        let (pattern_node, flags_node) = match &regex.value {
            Value::Str(_) => (regex, None),
            Value::Map(entries) => {
                let mut pattern = None;
                let mut flags = None;
                for (key, value) in entries {
                    match key.as_str() {
                        Some("pattern") => pattern = Some(value),
                        Some("flags") => flags = Some(value),
                        other => {
                            let shown = other.map_or_else(|| "?".to_string(), str::to_string);
                            let message = format!(
                                "unknown key `{shown}` in `{name}.regex` (valid keys: pattern, flags)"
                            );
                            self.error(key.pos_or(regex_pos), rule_id, message);
                        }
                    }
                }
                let Some(pattern) = pattern else {
                    self.error(
                        regex_pos,
                        rule_id,
                        format!("`{name}.regex` needs a `pattern`"),
                    );
                    return None;
                };
                (pattern, flags)
            }
            other => {
                self.error(
                    regex_pos,
                    rule_id,
                    format!(
                        "`{name}.regex` must be a mapping with `pattern` (and `flags`), found {}",
                        other.kind()
                    ),
                );
                return None;
            }
        };
        let pattern_pos = pattern_node.pos_or(regex_pos);
        let Some(source) = pattern_node.as_str() else {
            self.error(
                pattern_pos,
                rule_id,
                format!(
                    "`{name}.regex.pattern` must be a string, found {} (quote it)",
                    pattern_node.value.kind()
                ),
            );
            return None;
        };
        let (flags, flags_pos) = match flags_node {
            None => ("", pattern_pos),
            Some(node) if node.value == Value::Null => ("", pattern_pos),
            Some(node) => match node.as_str() {
                Some(flags) => (flags, node.pos_or(regex_pos)),
                None => {
                    self.error(
                        node.pos_or(regex_pos),
                        rule_id,
                        format!(
                            "`{name}.regex.flags` must be a string such as \"i\", found {}",
                            node.value.kind()
                        ),
                    );
                    return None;
                }
            },
        };
        match Pattern::new(source, flags) {
            Ok(pattern) => Some(pattern),
            Err(err) => {
                use super::pattern::PatternError;
                let pos = match err {
                    PatternError::UnknownFlag(_) | PatternError::DuplicateFlag(_) => flags_pos,
                    _ => pattern_pos,
                };
                self.error(pos, rule_id, format!("invalid `{name}` regex: {err}"));
                None
            }
        }
    }
}

/// "missing required field", with a typo hint when an unknown key is close to the name.
fn missing_message(name: &str, fields: &Fields<'_>) -> String {
    let typo = fields
        .unknown
        .iter()
        .find(|(unknown, _)| edit_distance(unknown, name) <= 2);
    match typo {
        Some((unknown, pos)) => format!(
            "missing required field `{name}` (is `{unknown}` on line {} a typo?)",
            pos.line
        ),
        None => format!("missing required field `{name}`"),
    }
}

/// The known key closest to an unknown one, if it is close enough to be a typo.
fn suggest(unknown: &str) -> Option<&'static str> {
    let lowered = unknown.to_ascii_lowercase();
    KNOWN_KEYS
        .iter()
        .map(|known| (edit_distance(&lowered, known), *known))
        .filter(|(distance, known)| *distance <= 2.max(known.len() / 4))
        .min()
        .map(|(_, known)| known)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// The first [`TITLE_CHARS`] characters of the rule text, whitespace collapsed.
fn title_of(text: &str) -> String {
    let collapsed = crate::findings::normalize_anchor(text);
    collapsed.chars().take(TITLE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::invariants::MAX_YAML_NESTING;

    fn load(text: &str) -> Result<InvariantSet, InvariantsError> {
        InvariantSet::from_yaml(Path::new(".review-invariants.yml"), text)
    }

    fn problems(text: &str) -> Vec<String> {
        match load(text) {
            Ok(set) => panic!("expected errors, loaded {} rules", set.len()),
            Err(err) => err.to_string().lines().map(str::to_string).collect(),
        }
    }

    fn warnings(set: &InvariantSet) -> Vec<String> {
        set.warnings().to_vec()
    }

    /// A file in upstream's format, byte for byte as its documentation shows it.
    const UPSTREAM: &str = r#"# Project invariants
security:
  - id: no-eval
    rule: "Never use eval() or new Function() in application code"
    paths: ["src/**/*.ts", "src/**/*.js"]
    severity: CRITICAL
    category: security
    action: deny
    deny:
      regex:
        pattern: "\\beval\\s*\\(|new\\s+Function\\s*\\("
  - id: auth-check
    rule: "Route handlers that read req.user must call requireAuth"
    paths: ["src/routes/**"]
    severity: HIGH
    category: security
    action: when_require
    when:
      regex:
        pattern: "req\\.user"
    require:
      regex:
        pattern: "requireAuth\\("
        flags: "i"
architecture:
  - id: layering
    rule: "UI components must not import from the database layer; keep data access in services."
    paths: ["src/ui/**"]
    severity: MEDIUM
    category: architecture
  - id: changelog
    rule: "Every change to src must update the changelog"
    paths: ["CHANGELOG.md"]
    severity: low
    category: Documentation
    action: require
    require:
      regex:
        pattern: "^## "
        flags: "m"
notes: "free text is ignored"
"#;

    #[test]
    fn upstream_format_loads_unchanged() {
        let set = load(UPSTREAM).unwrap();
        let ids: Vec<&str> = set.rules().iter().map(Invariant::id).collect();
        assert_eq!(ids, ["no-eval", "auth-check", "layering", "changelog"]);
        assert_eq!(set.checks().count(), 3);
        assert_eq!(set.guidance().count(), 1);

        let no_eval = set.get("no-eval").unwrap();
        assert_eq!(no_eval.section(), "security");
        assert_eq!(no_eval.severity(), Severity::Critical);
        assert_eq!(no_eval.category(), Category::Security);
        assert_eq!(no_eval.confidence(), DEFAULT_CONFIDENCE);
        assert_eq!(no_eval.lines(), Lines::Added);
        assert_eq!(no_eval.origin().line, 3);
        assert!(
            matches!(no_eval.check(), Some(Check::Deny(p)) if p.regex().is_match("x = eval(y)"))
        );
        assert!(no_eval.paths().matches("src/a/b.ts"));
        assert!(!no_eval.paths().matches("test/a.ts"));

        let changelog = set.get("changelog").unwrap();
        assert_eq!(changelog.severity(), Severity::Low);
        assert_eq!(changelog.category(), Category::Documentation);
        assert_eq!(changelog.check().unwrap().action(), "require");

        assert_eq!(
            warnings(&set),
            [
                ".review-invariants.yml:26:5: rule layering: no `action`: the rule is guidance for the model only and is not checked against diffs",
                ".review-invariants.yml:41:1: section `notes` is a string, not a list of rules; ignored",
            ]
        );
    }

    #[test]
    fn crlf_files_with_a_bom_load_with_the_same_positions() {
        let windows = format!("\u{feff}{}", UPSTREAM.replace('\n', "\r\n"));
        let set = load(&windows).unwrap();
        assert_eq!(set.len(), 4);
        assert_eq!(set.get("auth-check").unwrap().origin().line, 12);
        let bad = format!("{RULE_HEAD}    severity: URGENT\n    category: security\n")
            .replace('\n', "\r\n");
        assert!(
            problems(&bad)[0].starts_with(".review-invariants.yml:5:15: rule r1: Unknown severity")
        );
    }

    #[test]
    fn title_is_the_first_80_characters_on_a_char_boundary() {
        let long = "é".repeat(100);
        let text = format!(
            "s:\n  - id: a\n    rule: \"{long}\"\n    paths: ['**']\n    severity: INFO\n    category: style\n"
        );
        let set = load(&text).unwrap();
        assert_eq!(set.rules()[0].title().chars().count(), 80);
        assert_eq!(set.rules()[0].text(), long);
        let set = load(
            "s:\n  - id: a\n    rule: |\n      two\n      lines\n    paths: ['**']\n    severity: INFO\n    category: style\n",
        )
        .unwrap();
        assert_eq!(set.rules()[0].title(), "two lines");
    }

    const RULE_HEAD: &str = "rules:\n  - id: r1\n    rule: Some rule\n    paths: ['src/**']\n";

    #[test]
    fn bad_severity_is_reported_at_its_line_and_column() {
        let text = format!("{RULE_HEAD}    severity: URGENT\n    category: security\n");
        assert_eq!(
            problems(&text),
            [
                ".review-invariants.yml:5:15: rule r1: Unknown severity `URGENT` (expected one of: CRITICAL, HIGH, MEDIUM, LOW, INFO)"
            ]
        );
    }

    #[test]
    fn bad_category_and_unknown_action_are_errors() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: secrity\n    action: warn\n    deny: {{regex: {{pattern: x}}}}\n"
        );
        let got = problems(&text);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].starts_with(".review-invariants.yml:6:15: rule r1: Unknown category `secrity`"),
            "{got:?}"
        );
        assert!(got[1].starts_with(".review-invariants.yml:7:13: rule r1: unknown action `warn` (expected deny, require or when_require); to report without failing"), "{got:?}");
    }

    #[test]
    fn invalid_regex_names_the_rule_and_the_regex_error() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: \"foo(bar\"\n"
        );
        let got = problems(&text);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(
                ".review-invariants.yml:10:18: rule r1: invalid `deny` regex: unclosed group"
            ),
            "{got:?}"
        );
        assert!(got[0].contains("unclosed group"), "{got:?}");
    }

    #[test]
    fn lookahead_is_refused_with_an_explanation() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: deny\n    deny: {{regex: {{pattern: 'password(?!_hash)'}}}}\n"
        );
        assert_eq!(
            problems(&text),
            [
                ".review-invariants.yml:8:29: rule r1: invalid `deny` regex: Lookahead `(?!` (at offset 8) is not supported by Tollgate's linear-time regex engine; rewrite the pattern or split the rule (for example into a `when_require` rule)"
            ]
        );
    }

    #[test]
    fn deeply_nested_yaml_is_refused_before_parsing() {
        // 200 KB of `[`: libyaml used to spend ~40 s here before its own recursion limit.
        let text = format!("a: {}", "[".repeat(200_000));
        assert_eq!(
            problems(&text),
            [format!(
                ".review-invariants.yml:1:{}: YAML syntax error: the document nests deeper than {MAX_YAML_NESTING} levels; flatten it",
                4 + MAX_YAML_NESTING - 1
            )]
        );
    }

    #[test]
    fn unknown_flag_is_reported_at_the_flags() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: x\n        flags: ix\n"
        );
        assert_eq!(
            problems(&text),
            [
                ".review-invariants.yml:11:16: rule r1: invalid `deny` regex: Unknown regex flag `x` (JavaScript flags: i, m, s, u, v, g, y, d)"
            ]
        );
    }

    #[test]
    fn missing_fields_are_reported_at_the_rule_with_typo_hints() {
        let text = "rules:\n  - id: r1\n    rule: Some rule\n    paths: ['src/**']\n    sevirity: high\n    category: security\n";
        match load(text) {
            Err(InvariantsError::Invalid { problems, .. }) => {
                let shown: Vec<String> = problems
                    .iter()
                    .map(|p| p.display(Path::new("f.yml")).to_string())
                    .collect();
                assert_eq!(shown.len(), 2, "{shown:?}");
                assert_eq!(
                    shown[0],
                    "f.yml:2:5: rule r1: missing required field `severity` (is `sevirity` on line 5 a typo?)"
                );
                assert!(
                    shown[1].starts_with(
                        "f.yml:5:5: rule r1: unknown key `sevirity` (did you mean `severity`?)"
                    ),
                    "{shown:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        let got = problems("rules:\n  - rule: No id\n    severity: high\n");
        assert_eq!(
            got,
            [
                ".review-invariants.yml:2:5: missing required field `id`",
                ".review-invariants.yml:2:5: missing required field `paths`",
                ".review-invariants.yml:2:5: missing required field `category`",
            ]
        );
    }

    #[test]
    fn all_problems_of_a_file_are_collected_in_order() {
        let text = "\
a:
  - id: one
    rule: x
    paths: []
    severity: high
    category: security
  - id: two
    rule: y
    paths: ['src/[a']
    severity: high
    category: security
    action: require
  - id: one
    rule: z
    paths: ['**']
    severity: 3
    category: style
    confidence: 2
";
        let got = problems(text);
        assert_eq!(
            got,
            [
                ".review-invariants.yml:4:5: rule one: `paths` is empty: a rule needs at least one glob (use `**` for every file)",
                ".review-invariants.yml:7:5: rule two: action `require` needs `require: {regex: {pattern: …}}`",
                ".review-invariants.yml:9:13: rule two: Invalid glob `src/[a`: unclosed character class; missing ']'",
                ".review-invariants.yml:13:9: rule one: duplicate rule id `one` (first defined at line 2)",
                ".review-invariants.yml:16:15: rule one: `severity` must be a string, found a number (quote it)",
                ".review-invariants.yml:18:17: rule one: `confidence` must be between 0 and 1, found 2",
            ]
        );
    }

    #[test]
    fn yaml_syntax_errors_have_a_position() {
        let err = load("a:\n  - id: x\n   rule: [unclosed\n").unwrap_err();
        let problems = err.problems();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.starts_with("YAML syntax error: "),
            "{problems:?}"
        );
        assert!(problems[0].line >= 2, "{problems:?}");
        assert!(!problems[0].message.contains("at line"), "{problems:?}");
    }

    #[test]
    fn top_level_must_be_a_mapping() {
        assert_eq!(
            problems("- id: x\n"),
            [
                ".review-invariants.yml:1:3: expected a mapping of section names to lists of rules, found a list"
            ]
        );
        let set = load("").unwrap();
        assert!(set.is_empty());
        assert_eq!(
            warnings(&set),
            [".review-invariants.yml:1:1: the file has no rules"]
        );
    }

    #[test]
    fn non_list_sections_and_empty_sections_are_warnings() {
        let set = load("version: 2\nempty:\nrules:\n  - id: a\n    rule: r\n    paths: '**'\n    severity: INFO\n    category: style\n    action: deny\n    deny: {regex: x}\n").unwrap();
        assert_eq!(set.len(), 1);
        assert_eq!(
            warnings(&set),
            [
                ".review-invariants.yml:1:1: section `version` is a number, not a list of rules; ignored",
                ".review-invariants.yml:2:1: section `empty` is empty",
            ]
        );
    }

    #[test]
    fn extensions_load() {
        let text = "\
rules:
  - id: keep-security-check
    rule: Do not remove the CSRF middleware
    paths: ['src/**', '!src/legacy/**']
    exclude_paths: ['**/*.test.ts']
    severity: high
    category: security
    action: deny
    lines: removed
    deny: {regex: {pattern: csrfProtection}}
    message: Removing CSRF protection exposes every form.
    recommendation: Keep `app.use(csrfProtection)`.
    impact: Cross-site request forgery.
    confidence: 0.8
  - id: off
    rule: Disabled rule
    paths: ['**']
    severity: info
    category: style
    action: deny
    deny: {regex: x}
    enabled: false
";
        let set = load(text).unwrap();
        let rule = set.get("keep-security-check").unwrap();
        assert_eq!(rule.lines(), Lines::Removed);
        assert_eq!(rule.confidence(), 0.8);
        assert_eq!(
            rule.message(),
            Some("Removing CSRF protection exposes every form.")
        );
        assert_eq!(
            rule.recommendation(),
            Some("Keep `app.use(csrfProtection)`.")
        );
        assert_eq!(rule.impact(), Some("Cross-site request forgery."));
        assert!(rule.paths().matches("src/app.ts"));
        assert!(!rule.paths().matches("src/legacy/app.ts"));
        assert!(!rule.paths().matches("src/app.test.ts"));
        assert!(!set.get("off").unwrap().enabled());
        assert_eq!(set.checks().count(), 1);
        assert!(set.warnings().is_empty(), "{:?}", warnings(&set));
    }

    #[test]
    fn lines_removed_needs_deny() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: require\n    lines: removed\n    require: {{regex: x}}\n"
        );
        let got = problems(&text);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(
                ".review-invariants.yml:8:12: rule r1: `lines: removed` works with action deny only"
            ),
            "{got:?}"
        );
    }

    #[test]
    fn unused_regex_blocks_warn_and_unknown_nested_keys_are_errors() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: deny\n    deny: {{regex: {{pattern: x}}}}\n    when: {{regex: y}}\n"
        );
        let set = load(&text).unwrap();
        assert_eq!(
            warnings(&set),
            [".review-invariants.yml:9:5: rule r1: `when` is ignored by action `deny`",]
        );
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    action: deny\n    deny: {{regex: {{pattern: x, flag: i}}, flags: i}}\n"
        );
        assert_eq!(
            problems(&text),
            [
                ".review-invariants.yml:8:32: rule r1: unknown key `flag` in `deny.regex` (valid keys: pattern, flags)",
                ".review-invariants.yml:8:42: rule r1: unknown key `flags` in `deny` (valid keys: regex)",
            ]
        );
    }

    /// Issue 28: a typo in a key is an error, as in `tollgate.toml`, so a rule never silently
    /// stops running: with its line and column and the valid keys.
    #[test]
    fn an_unknown_key_is_an_error_naming_the_valid_keys() {
        let text = format!(
            "{RULE_HEAD}    severity: high\n    category: security\n    actoin: deny\n    deny: {{regex: x}}\n"
        );
        let got = problems(&text);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            got[0],
            format!(
                ".review-invariants.yml:7:5: rule r1: unknown key `actoin` (did you mean `action`?); valid keys: {}",
                KNOWN_KEYS.join(", ")
            )
        );
    }

    #[test]
    fn duplicate_keys_and_sections_are_errors() {
        let text = format!(
            "{RULE_HEAD}    paths: ['x']\n    severity: high\n    category: style\nrules: []\n"
        );
        let got = problems(&text);
        assert_eq!(
            got,
            [
                ".review-invariants.yml:5:5: rule r1: duplicate key `paths` (first at line 4); YAML keys must be unique",
                ".review-invariants.yml:8:1: duplicate section `rules` (first at line 1); YAML keys must be unique",
            ]
        );
    }

    #[test]
    fn wrong_types_are_errors_not_panics() {
        for text in [
            "a: [1, 2]\n",
            "a:\n  - id: [x]\n",
            "a:\n  - id: x\n    rule: r\n    paths: {a: b}\n    severity: high\n    category: style\n",
            "a:\n  - id: x\n    rule: r\n    paths: [1]\n    severity: high\n    category: style\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['*']\n    severity: high\n    category: style\n    action: deny\n    deny: x\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['*']\n    severity: high\n    category: style\n    action: deny\n    deny: {regex: {flags: i}}\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['*']\n    severity: high\n    category: style\n    action: deny\n    deny: {regex: {pattern: 5}}\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['*']\n    severity: high\n    category: style\n    enabled: maybe\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['*']\n    severity: high\n    category: style\n    exclude_paths: ['!x']\n",
            "a:\n  - id: x\n    rule: r\n    paths: ['!x']\n    severity: high\n    category: style\n",
            "a:\n  - id: ''\n",
            "a:\n  - {? [k] : v}\n",
        ] {
            assert!(load(text).is_err(), "should fail:\n{text}");
        }
    }

    #[test]
    fn guidance_rules_warn_and_are_not_checks() {
        let text =
            format!("{RULE_HEAD}    severity: high\n    category: style\n    deny: {{regex: x}}\n");
        let set = load(&text).unwrap();
        assert_eq!(set.checks().count(), 0);
        assert_eq!(set.guidance().count(), 1);
        assert_eq!(
            warnings(&set),
            [
                ".review-invariants.yml:2:5: rule r1: no `action`: the rule is guidance for the model only and is not checked against diffs",
                ".review-invariants.yml:7:5: rule r1: `deny` is ignored: the rule has no `action`",
            ]
        );
    }

    #[test]
    fn merge_refuses_duplicate_ids_across_files() {
        let rule = "s:\n  - id: a\n    rule: r\n    paths: ['**']\n    severity: info\n    category: style\n";
        let first = InvariantSet::from_yaml(Path::new("pack.yml"), rule).unwrap();
        let second = InvariantSet::from_yaml(Path::new("mine.yml"), rule).unwrap();
        let err = first.clone().merge(second).unwrap_err();
        assert_eq!(
            err.to_string(),
            "mine.yml:2:5: rule a: duplicate rule id `a` (already defined at pack.yml:2:5)"
        );
        let other =
            InvariantSet::from_yaml(Path::new("other.yml"), &rule.replace("id: a", "id: b"))
                .unwrap();
        let merged = first.merge(other).unwrap();
        assert_eq!(merged.len(), 2);
        assert_eq!(merged.sources().len(), 2);
    }

    #[test]
    fn files_are_capped_and_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.yml");
        std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert!(matches!(
            InvariantSet::load(&big),
            Err(InvariantsError::TooLarge { size, .. }) if size == MAX_FILE_BYTES + 1
        ));
        let latin1 = dir.path().join("latin1.yml");
        std::fs::write(&latin1, b"a:\n  - id: caf\xe9\n").unwrap();
        let err = InvariantSet::load(&latin1).unwrap_err();
        assert_eq!(
            err.problems(),
            [Problem {
                line: 2,
                column: 12,
                rule_id: None,
                message: "the file is not valid UTF-8".into()
            }]
        );
        assert!(matches!(
            InvariantSet::load(&dir.path().join("missing.yml")),
            Err(InvariantsError::NotFound { .. })
        ));
        assert!(matches!(
            InvariantSet::load(dir.path()),
            Err(InvariantsError::Read { .. })
        ));
    }

    #[test]
    fn check_file_counts_rules_and_reports_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DEFAULT_FILE_NAME);
        std::fs::write(&path, UPSTREAM).unwrap();
        let report = check_file(&path).unwrap();
        assert_eq!(
            (
                report.rules,
                report.checks,
                report.guidance,
                report.disabled
            ),
            (4, 3, 1, 0)
        );
        assert_eq!(report.warnings.len(), 2);
        assert!(
            report
                .to_string()
                .ends_with(": 4 rules (3 checks, 1 guidance, 0 disabled), 2 warnings")
        );
    }

    proptest::proptest! {
        #[test]
        fn edited_files_load_or_report_without_panicking(
            at in 0usize..UPSTREAM.len(),
            n_removed in 0usize..12,
            inserted in "[\\PC\n]{0,12}",
        ) {
            let mut text = UPSTREAM.to_string();
            let start = (0..=at).rev().find(|idx| text.is_char_boundary(*idx)).unwrap_or(0);
            let end = (start + n_removed).min(text.len());
            let end = (end..=text.len()).find(|idx| text.is_char_boundary(*idx)).unwrap_or(text.len());
            text.replace_range(start..end, &inserted);
            if let Err(InvariantsError::Invalid { problems, .. }) = load(&text) {
                proptest::prop_assert!(!problems.is_empty());
                proptest::prop_assert!(problems.iter().all(|p| p.line >= 1 && p.column >= 1));
            }
        }

        #[test]
        fn yaml_shaped_noise_loads_or_reports_without_panicking(
            text in "[a-z_:\\- \n\\[\\]{}'\"#&*!|>0-9,.?]{0,160}",
        ) {
            let _ = load(&text);
        }
    }

    #[test]
    fn suggestions_find_close_keys_only() {
        assert_eq!(suggest("sevirity"), Some("severity"));
        assert_eq!(suggest("Paths"), Some("paths"));
        assert_eq!(suggest("exclude"), None);
        assert_eq!(suggest("zzz"), None);
    }
}
