//! The built-in deterministic checks (`TG…` rules) and their registry.
//!
//! Every finding points at a real line: the first changed line of the file it concerns, or the
//! exact line (and columns) of a secret. Only changes without lines (binary files, pure mode or
//! rename changes) are anchored at line 1.

use super::public_api::ApiChangeKind;
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
        severity: Severity::Low,
        category: Category::Reliability,
        confidence: 0.95,
        short: "Source code changed but no test changed",
        full: "The change modifies source code while no test file changed (by the conventions of Rust, TypeScript/JavaScript, Python, Go, Java, Kotlin, C#, Ruby, C/C++, PHP, Swift, Scala, Elixir and Dart, and the configured test globs) and the changed files add no tests of their own (a Rust test module or doc test, a Vitest in-source test, a Python doctest). Docs- and config-only changes are not source changes.",
        help: "Add or update tests that cover the change. If the change needs none (a pure rename, say), allowlist this finding or the rule `TG001`.",
    },
    BuiltinRule {
        id: PUBLIC_API_CHANGED,
        upstream_alias: Some("PRE002"),
        name: "public-api-changed",
        severity: Severity::Medium,
        category: Category::Architecture,
        confidence: 0.9,
        short: "Public API removed or changed",
        full: "The change removes an exported name or changes its declaration in a file of the package's public surface: `pub` items in Rust, `export` (including names in export lists) in TypeScript/JavaScript, public top-level names and `__all__` in Python, exported names in Go, `public`/`protected` members in Java, Kotlin and C#. Callers may break (MEDIUM). Names only added cannot break a caller and are reported at INFO. Config files, dotfiles, scripts, benches, examples, tests, docs, binaries, build scripts, Go `internal/` and `cmd/` packages and Python modules starting with `_` are not public surface.",
        help: "Check compatibility for existing callers, update documentation and the changelog, and consider a deprecation path for removals.",
    },
    BuiltinRule {
        id: CONFIG_CHANGED,
        upstream_alias: Some("PRE003"),
        name: "config-or-ci-changed",
        severity: Severity::Low,
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
        full: "The change exceeds `[preflight] large_change_lines` changed lines or `large_change_files` files. Lockfiles and generated files are not counted: nobody reviews them line by line. Large changes are reviewed less carefully.",
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
        full: "An added line contains what looks like a credential: a provider key format (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI, Anthropic, npm, PyPI, …), a private key, a JWT, credentials in a URL, or a high-entropy value assigned to a password/secret/token name. The finding never repeats the secret. Published example values are reported at LOW; in test, example and fixture paths a password, JWT or URL credential at MEDIUM and a private key at HIGH, saying why; provider key formats stay CRITICAL everywhere.",
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
            CONFIG_CHANGED => file_kind_notice(diff, facts, rule, |f| f.is_config, &mut out),
            BINARY_CHANGED => file_kind_notice(diff, facts, rule, |f| f.file.binary, &mut out),
            HOTSPOT_CHANGED => file_kind_notice(diff, facts, rule, |f| f.is_hotspot, &mut out),
            DEPENDENCY_CHANGED => {
                file_kind_notice(diff, facts, rule, |f| f.is_dependency, &mut out)
            }
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

/// One finding per file whose exported names changed: MEDIUM when a name was removed or its
/// declaration changed (callers may break), INFO when names were only added.
fn public_api(facts: &[FileFacts<'_>], rule: &BuiltinRule, out: &mut Vec<Finding>) {
    for f in facts.iter().filter(|f| !f.api_changes.is_empty()) {
        // Removals and changes sort first: the finding is anchored where callers may break.
        let first = &f.api_changes[0];
        let breaking = first.kind != ApiChangeKind::Added;
        let severity = if breaking {
            rule.severity
        } else {
            Severity::Info
        };
        let mut summary = Vec::new();
        for kind in [
            ApiChangeKind::Removed,
            ApiChangeKind::Changed,
            ApiChangeKind::Added,
        ] {
            let names: Vec<&str> = f
                .api_changes
                .iter()
                .filter(|change| change.kind == kind)
                .map(|change| change.name.as_str())
                .collect();
            if !names.is_empty() {
                summary.push(format!("{}: {}", kind.verb(), preview(&names)));
            }
        }
        let verbs = if breaking {
            "removed or changed"
        } else {
            "added"
        };
        let mut finding = base(
            rule,
            format!("Public API {verbs} in {}", f.path),
            Location::line(f.path, first.line),
        )
        .with_message(format!(
            "Exported names of {} {}",
            f.path,
            summary.join("; ")
        ))
        .with_impact(if breaking {
            "Callers of the removed or changed names may break."
        } else {
            "Additive: no existing caller breaks; new names become part of what the package promises."
        })
        .with_anchor(first.anchor_text.clone())
        .on_changed_line(first.on_added_line);
        finding.severity = severity;
        for change in f.api_changes.iter().take(5) {
            let sign = match change.kind {
                ApiChangeKind::Added => '+',
                ApiChangeKind::Changed => '~',
                ApiChangeKind::Removed => '-',
            };
            // Masked before cutting, so a cut can never leave a secret too short to detect.
            let text = secrets::redact_line(&change.text);
            finding = finding.with_evidence(format!("{sign} {}", truncate(&text, 200)));
        }
        out.push(finding);
    }
}

/// A notice that some kind of file changed (config, binary, hotspot, dependency manifest): one
/// finding for the whole change, listing the files, at the first one's first changed line.
fn file_kind_notice(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    rule: &BuiltinRule,
    pred: impl Fn(&FileFacts<'_>) -> bool,
    out: &mut Vec<Finding>,
) {
    let matching: Vec<&FileFacts<'_>> = facts.iter().filter(|f| pred(f)).collect();
    let Some(first) = matching.first() else {
        return;
    };
    let paths: Vec<&str> = matching.iter().map(|f| f.path).collect();
    let (location, anchor, on_changed) = first_change(diff, first);
    let title = match paths.as_slice() {
        [only] => format!("{}: {only}", rule.short),
        _ => format!("{}: {} files", rule.short, paths.len()),
    };
    let mut finding = base(rule, title, location)
        .with_message(format!("{} ({})", rule.short, preview(&paths)))
        .with_anchor(anchor)
        .on_changed_line(on_changed);
    for path in paths.iter().take(MAX_LISTED_FILES) {
        finding = finding.with_evidence(*path);
    }
    if paths.len() > MAX_LISTED_FILES {
        finding = finding.with_evidence(format!("… and {} more", paths.len() - MAX_LISTED_FILES));
    }
    out.push(finding);
}

/// Files listed in a grouped notice's evidence; the rest are counted.
const MAX_LISTED_FILES: usize = 20;

fn large(
    diff: &Diff,
    facts: &[FileFacts<'_>],
    rule: &BuiltinRule,
    (max_lines, max_files): (usize, usize),
    out: &mut Vec<Finding>,
) {
    let reviewed: Vec<&FileFacts<'_>> = facts.iter().filter(|f| f.is_reviewed()).collect();
    let (lines, n_files) = signals::reviewed_size(facts);
    if lines <= max_lines && n_files <= max_files {
        return;
    }
    let Some(first) = reviewed
        .iter()
        .find(|f| f.lines_added > 0)
        .or(reviewed.first())
    else {
        return;
    };
    let (location, anchor, on_changed) = first_change(diff, first);
    let not_counted = facts.len() - reviewed.len();
    let not_counted = if not_counted == 0 {
        String::new()
    } else {
        format!("; {not_counted} lockfile(s) and generated file(s) not counted")
    };
    out.push(
        base(
            rule,
            format!("Large change: {lines} lines in {n_files} files"),
            location,
        )
        .with_message(format!(
            "The change has {lines} changed lines in {n_files} files (limits: {max_lines} lines, {max_files} files{not_counted})"
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
        let lines: Vec<_> = f.file.added_lines().collect();
        let owned: Vec<_> = lines.iter().map(|line| diff.line_text(line)).collect();
        let texts: Vec<&str> = owned.iter().map(|text| text.as_ref()).collect();
        let found = secrets::find_secrets_each(&texts);
        for ((line, text), matches) in lines.into_iter().zip(texts).zip(found) {
            if matches.is_empty() {
                continue;
            }
            n_lines += 1;
            let redacted = secrets::redact_line(text);
            let line_no = line.new_line.unwrap_or(1);
            for found in matches {
                let start_col = text[..found.range.start].chars().count() as u32 + 1;
                let end_col = start_col + text[found.range.clone()].chars().count() as u32;
                let value = &text[found.range.clone()];
                let (severity, confidence, why_lower) = secret_severity(
                    rule.severity,
                    found.kind,
                    found.confidence,
                    value,
                    text,
                    f.is_test || tollgate_lang::is_sample_path(f.path),
                );
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
                        "Line {line_no} of {} adds {} (`{}`). The value is not shown.{}",
                        f.path,
                        found.kind.in_sentence(),
                        found.kind.as_str(),
                        why_lower
                            .map(|why| format!(
                                " Reported at {severity} rather than {}: {why}.",
                                rule.severity
                            ))
                            .unwrap_or_default()
                    ))
                    .with_evidence(truncate(redacted.trim(), 200))
                    .with_impact("Anyone with read access to the repository or its history can use this credential.")
                    .with_anchor(redacted.clone())
                    .on_changed_line(true),
                );
                if let Some(last) = out.last_mut() {
                    last.severity = severity;
                }
            }
        }
    }
    n_lines
}

/// Severity and confidence of a detected secret, and why they are lower than the rule's when
/// they are: a published example value (LOW); in a test, example or fixture path, where
/// generated fixtures are the norm, a context-dependent detection (a JWT, a URL password, a
/// password or secret by its name: MEDIUM) or a private key (made for the test CA or the
/// self-signed example: HIGH, still shown, not failing the default gate). A cloud provider's
/// or a live service's key format is as real in a test as anywhere else.
fn secret_severity(
    rule_severity: Severity,
    kind: secrets::SecretKind,
    confidence: f64,
    value: &str,
    line: &str,
    in_test: bool,
) -> (Severity, f64, Option<String>) {
    use secrets::SecretKind as K;
    if let Some(reason) = secrets::known_example(kind, value, line) {
        // Above the default confidence threshold: lowered, never filtered out of sight.
        return (Severity::Low, confidence.min(0.6), Some(reason.to_string()));
    }
    let context_dependent = matches!(
        kind,
        K::Jwt | K::UrlCredentials | K::Password | K::GenericSecret
    );
    let where_fixtures =
        "it is in a test, example or fixture path, where such values are usually fixtures";
    match (in_test, context_dependent) {
        (true, true) => (
            Severity::Medium,
            confidence.min(0.6),
            Some(where_fixtures.to_string()),
        ),
        (true, false) if kind == K::PrivateKey => (
            rule_severity.min(Severity::High),
            confidence.min(0.6),
            Some(format!(
                "{where_fixtures} (a key made for a test CA or a self-signed example); rotate it if it is real"
            )),
        ),
        (true, false) => (rule_severity, confidence.min(0.6), None),
        (false, _) => (rule_severity, confidence, None),
    }
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
