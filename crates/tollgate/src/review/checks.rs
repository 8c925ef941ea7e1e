//! The built-in deterministic checks (`TG…` rules) and their registry.
//!
//! Every finding points at a real line: the first changed line of the file it concerns, or the
//! exact line (and columns) of a secret. Only changes without lines (binary files, pure mode or
//! rename changes) are anchored at line 1.

use super::signals::{self, FileFacts};
use crate::config::RuleOverride;
use crate::diff::Diff;
use crate::findings::{Category, Finding, Location, RuleInfo, Severity, Signals, Source};
use crate::secrets;

/// A built-in rule: its metadata and upstream alias.
#[derive(Debug)]
pub(crate) struct BuiltinRule {
    pub(crate) id: &'static str,
    /// The upstream `PRE…` id, accepted in allowlists and `fail_on_rule_ids`.
    pub(crate) upstream_alias: Option<&'static str>,
    pub(crate) name: &'static str,
    pub(crate) severity: Severity,
    pub(crate) category: Category,
    pub(crate) confidence: f64,
    pub(crate) short: &'static str,
    pub(crate) full: &'static str,
    pub(crate) help: &'static str,
}

pub(crate) const TESTS_NOT_TOUCHED: &str = "TG001";
pub(crate) const PUBLIC_API_CHANGED: &str = "TG002";
pub(crate) const CONFIG_CHANGED: &str = "TG003";
pub(crate) const BINARY_CHANGED: &str = "TG004";
pub(crate) const HOTSPOT_CHANGED: &str = "TG005";
pub(crate) const DEPENDENCY_CHANGED: &str = "TG006";
pub(crate) const LARGE_CHANGE: &str = "TG007";
pub(crate) const SECRET_IN_DIFF: &str = "TG008";

pub(crate) const BUILTIN_RULES: &[BuiltinRule] = &[
    BuiltinRule {
        id: TESTS_NOT_TOUCHED,
        upstream_alias: Some("PRE001"),
        name: "source-changed-without-tests",
        severity: Severity::Medium,
        category: Category::Reliability,
        confidence: 0.95,
        short: "Source code changed but no test changed",
        full: "The change modifies source code while no test file (by the conventions of Rust, TypeScript/JavaScript, Python, Go, Java and the configured test globs) and no inline test module changed.",
        help: "Add or update tests that cover the change. If the change needs none (a pure rename, say), allowlist this finding or the rule `TG001`.",
    },
    BuiltinRule {
        id: PUBLIC_API_CHANGED,
        upstream_alias: Some("PRE002"),
        name: "public-api-changed",
        severity: Severity::High,
        category: Category::Architecture,
        confidence: 0.9,
        short: "Public API added, changed or removed",
        full: "A changed line declares public API: `pub` items in Rust, `export` in TypeScript/JavaScript, public top-level names in Python, exported names in Go, `public`/`protected` members in Java, Kotlin and C#. Callers outside the module may depend on it.",
        help: "Check compatibility for existing callers, update documentation and the changelog, and consider a deprecation path for removals.",
    },
    BuiltinRule {
        id: CONFIG_CHANGED,
        upstream_alias: Some("PRE003"),
        name: "config-or-ci-changed",
        severity: Severity::Medium,
        category: Category::Infra,
        confidence: 0.9,
        short: "Build, CI or tool configuration changed",
        full: "A CI workflow, container, infrastructure or tool configuration file changed. Such changes affect every build and deployment and are easy to get subtly wrong.",
        help: "Have someone who owns the pipeline review it; run the pipeline on this branch before merging.",
    },
    BuiltinRule {
        id: BINARY_CHANGED,
        upstream_alias: Some("PRE004"),
        name: "binary-file-changed",
        severity: Severity::Low,
        category: Category::Maintainability,
        confidence: 0.85,
        short: "Binary file added or changed",
        full: "A binary file changed. Its content cannot be reviewed in the diff.",
        help: "Make sure the binary is intended (not a build artefact) and comes from a trusted source; prefer Git LFS for large assets.",
    },
    BuiltinRule {
        id: HOTSPOT_CHANGED,
        upstream_alias: Some("PRE005"),
        name: "hotspot-changed",
        severity: Severity::Info,
        category: Category::Maintainability,
        confidence: 0.9,
        short: "Sensitive area changed",
        full: "The change touches a hotspot: authentication, security, cryptography, secrets, permissions, migrations or payments (configurable with `[preflight] hotspots`).",
        help: "Ask for a review from an owner of this area.",
    },
    BuiltinRule {
        id: DEPENDENCY_CHANGED,
        upstream_alias: None,
        name: "dependency-manifest-changed",
        severity: Severity::Low,
        category: Category::Infra,
        confidence: 0.9,
        short: "Dependency manifest or lockfile changed",
        full: "A dependency manifest or lockfile changed (Cargo, npm/yarn/pnpm, pip/poetry/uv, Go modules, Maven/Gradle, Bundler, Composer, NuGet, Mix).",
        help: "Check new dependencies for licence, maintenance and known vulnerabilities; make sure the lockfile matches the manifest.",
    },
    BuiltinRule {
        id: LARGE_CHANGE,
        upstream_alias: None,
        name: "large-change",
        severity: Severity::Low,
        category: Category::Maintainability,
        confidence: 0.9,
        short: "Change is larger than the configured limits",
        full: "The change exceeds `[preflight] large_change_lines` changed lines or `large_change_files` files. Large changes are reviewed less carefully.",
        help: "Split the change into smaller pull requests that can be reviewed on their own.",
    },
    BuiltinRule {
        id: SECRET_IN_DIFF,
        upstream_alias: None,
        name: "secret-in-diff",
        severity: Severity::Critical,
        category: Category::Security,
        confidence: 0.9,
        short: "Secret added in the diff",
        full: "An added line contains what looks like a credential: a provider key format (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI, Anthropic, npm, PyPI, …), a private key, a JWT, credentials in a URL, or a high-entropy value assigned to a password/secret/token name. The finding never repeats the secret.",
        help: "Remove the secret from the change and from history, revoke and rotate it, and load it from the environment or a secret manager instead.",
    },
];

/// Looks up a built-in rule by id or upstream alias.
pub(crate) fn builtin_rule(id: &str) -> Option<&'static BuiltinRule> {
    BUILTIN_RULES
        .iter()
        .find(|r| r.id == id || r.upstream_alias == Some(id))
}

/// Normalises an id given by a user: upstream `PRE…` aliases become `TG…`.
pub(crate) fn canonical_rule_id(id: &str) -> &str {
    builtin_rule(id).map_or(id, |r| r.id)
}

pub(crate) fn rule_info(rule: &BuiltinRule) -> RuleInfo {
    RuleInfo {
        id: rule.id.to_string(),
        name: rule.name.to_string(),
        short_description: rule.short.to_string(),
        full_description: rule.full.to_string(),
        help: rule.help.to_string(),
        default_severity: rule.severity,
        category: rule.category,
        help_uri: None,
    }
}

/// Runs the built-in checks. Returns the findings, the number of checks run, and the number of
/// added lines holding secrets.
pub(crate) fn run(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    signals: &Signals,
    overrides: &std::collections::BTreeMap<String, RuleOverride>,
    large_change: (usize, usize),
) -> (Vec<Finding>, usize, usize) {
    let enabled = |id: &str| overrides.get(id).is_none_or(|o| o.enabled);
    let mut out = Vec::new();
    let mut n_checks = 0;
    let mut n_secret_lines = 0;

    for rule in BUILTIN_RULES {
        if !enabled(rule.id) {
            continue;
        }
        n_checks += 1;
        let before = out.len();
        match rule.id {
            TESTS_NOT_TOUCHED => tests_not_touched(diff, facts, signals, rule, &mut out),
            PUBLIC_API_CHANGED => public_api(facts, rule, &mut out),
            CONFIG_CHANGED => per_file(diff, facts, rule, |f| f.is_config, &mut out),
            BINARY_CHANGED => per_file(diff, facts, rule, |f| f.file.binary, &mut out),
            HOTSPOT_CHANGED => per_file(diff, facts, rule, |f| f.is_hotspot, &mut out),
            DEPENDENCY_CHANGED => per_file(diff, facts, rule, |f| f.is_dependency, &mut out),
            LARGE_CHANGE => large(diff, facts, rule, large_change, &mut out),
            SECRET_IN_DIFF => n_secret_lines = secrets_in_added_lines(diff, facts, rule, &mut out),
            _ => {}
        }
        if let Some(severity) = overrides.get(rule.id).and_then(|o| o.severity) {
            for finding in &mut out[before..] {
                finding.severity = severity;
            }
        }
    }
    (out, n_checks, n_secret_lines)
}

fn base(rule: &BuiltinRule, title: String, location: Location) -> Finding {
    Finding::new(
        rule.id,
        rule.severity,
        rule.category,
        Source::Preflight,
        title,
        location,
    )
    .with_confidence(rule.confidence)
    .with_recommendation(rule.help)
}

/// Location of a file's first changed line, with that line's text for the fingerprint.
fn first_change(diff: &Diff, facts: &FileFacts<'_>) -> (Location, String, bool) {
    let first_added = facts.file.added_lines().next();
    match first_added {
        Some(line) => (
            Location::line(facts.path, line.new_line.unwrap_or(1)),
            diff.line_text(line).into_owned(),
            true,
        ),
        // Deletions point at the old line; files without lines at line 1 of the file.
        None => (
            Location::line(facts.path, facts.first_changed_line.unwrap_or(1)),
            String::new(),
            false,
        ),
    }
}

fn tests_not_touched(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    signals: &Signals,
    rule: &BuiltinRule,
    out: &mut Vec<Finding>,
) {
    if signals.tests_touched {
        return;
    }
    let sources: Vec<&FileFacts<'_>> = facts.iter().filter(|f| f.is_source()).collect();
    let Some(first) = sources
        .iter()
        .find(|f| f.lines_added > 0)
        .or(sources.first())
    else {
        return;
    };
    let (location, anchor, on_changed) = first_change(diff, first);
    let files = sources.iter().map(|f| f.path).collect::<Vec<_>>();
    let mut finding = base(
        rule,
        format!(
            "{} source file(s) changed without test changes",
            sources.len()
        ),
        location,
    )
    .with_message(format!(
        "Source files changed but no test changed: {}",
        preview(&files)
    ))
    .with_impact("Regressions in the changed code may go unnoticed.")
    .with_anchor(anchor)
    .on_changed_line(on_changed);
    for path in files.iter().take(10) {
        finding = finding.with_evidence(*path);
    }
    out.push(finding);
}

fn public_api(facts: &[FileFacts<'_>], rule: &BuiltinRule, out: &mut Vec<Finding>) {
    for f in facts.iter().filter(|f| !f.public_api_lines.is_empty()) {
        let first = &f.public_api_lines[0];
        // A removal-only API change points at the old line number: where the API was.
        let mut finding = base(
            rule,
            format!("Public API changed in {}", f.path),
            Location::line(f.path, first.line),
        )
        .with_message(format!(
            "{} changed line(s) declare public API in {}",
            f.public_api_lines.len(),
            f.path
        ))
        .with_impact("Callers outside this module may break or change behaviour.")
        .with_anchor(first.text.clone())
        .on_changed_line(first.added);
        for api in f.public_api_lines.iter().take(5) {
            let sign = if api.added { '+' } else { '-' };
            // Masked before cutting, so a cut can never leave a secret too short to detect.
            let text = secrets::redact_line(api.text.trim());
            finding = finding.with_evidence(format!("{sign} {}", truncate(&text, 200)));
        }
        out.push(finding);
    }
}

fn per_file(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    rule: &BuiltinRule,
    pred: impl Fn(&FileFacts<'_>) -> bool,
    out: &mut Vec<Finding>,
) {
    for f in facts.iter().filter(|f| pred(f)) {
        let (location, anchor, on_changed) = first_change(diff, f);
        out.push(
            base(rule, format!("{}: {}", rule.short, f.path), location)
                .with_message(format!("{} ({})", rule.short, f.path))
                .with_evidence(f.path)
                .with_anchor(anchor)
                .on_changed_line(on_changed),
        );
    }
}

fn large(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    rule: &BuiltinRule,
    (max_lines, max_files): (usize, usize),
    out: &mut Vec<Finding>,
) {
    let lines: usize = facts.iter().map(|f| f.lines_added + f.lines_removed).sum();
    let n_files = signals::n_files(facts);
    if lines <= max_lines && n_files <= max_files {
        return;
    }
    let Some(first) = facts.iter().find(|f| f.lines_added > 0).or(facts.first()) else {
        return;
    };
    let (location, anchor, on_changed) = first_change(diff, first);
    out.push(
        base(
            rule,
            format!("Large change: {lines} lines in {n_files} files"),
            location,
        )
        .with_message(format!(
            "The change has {lines} changed lines in {n_files} files (limits: {max_lines} lines, {max_files} files)"
        ))
        .with_impact("Large changes hide defects from reviewers.")
        .with_anchor(anchor)
        .on_changed_line(on_changed),
    );
}

/// One finding per secret occurrence, at its exact line and columns. Returns the number of
/// added lines that held at least one secret.
fn secrets_in_added_lines(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    rule: &BuiltinRule,
    out: &mut Vec<Finding>,
) -> usize {
    let mut n_lines = 0;
    for f in facts.iter().filter(|f| !f.file.binary) {
        for line in f.file.added_lines() {
            let text = diff.line_text(line);
            let matches = secrets::find_secrets(&text);
            if matches.is_empty() {
                continue;
            }
            n_lines += 1;
            let redacted = secrets::redact_line(&text);
            let line_no = line.new_line.unwrap_or(1);
            for found in matches {
                let start_col = text[..found.range.start].chars().count() as u32 + 1;
                let end_col = start_col + text[found.range.clone()].chars().count() as u32;
                // Test fixtures often hold fake credentials: still flagged, with less confidence.
                let confidence = if f.is_test {
                    found.confidence.min(0.6)
                } else {
                    found.confidence
                };
                out.push(
                    base(
                        rule,
                        format!("{} added in {}", found.kind.label(), f.path),
                        Location {
                            file: f.path.to_string(),
                            start_line: line_no,
                            end_line: line_no,
                            start_column: Some(start_col),
                            end_column: Some(end_col),
                        },
                    )
                    .with_confidence(confidence)
                    .with_message(format!(
                        "Line {line_no} of {} adds a {} (`{}`). The value is not shown.",
                        f.path,
                        found.kind.label(),
                        found.kind.as_str()
                    ))
                    .with_evidence(truncate(redacted.trim(), 200))
                    .with_impact("Anyone with read access to the repository or its history can use this credential.")
                    .with_anchor(redacted.clone())
                    .on_changed_line(true),
                );
            }
        }
    }
    n_lines
}

fn preview(items: &[&str]) -> String {
    let mut text = items.iter().take(5).copied().collect::<Vec<_>>().join(", ");
    if items.len() > 5 {
        text.push_str(&format!(" and {} more", items.len() - 5));
    }
    text
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((idx, _)) => format!("{}…", &text[..idx]),
        None => text.to_string(),
    }
}
