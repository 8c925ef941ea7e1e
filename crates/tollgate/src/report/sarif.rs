//! SARIF 2.1.0 as GitHub code scanning ingests it.
//!
//! One run per finding [`Source`], all with the driver name `Tollgate`, told apart by
//! `automationDetails.id` = `tollgate/<source>/` (GitHub category `tollgate/<source>`): GitHub
//! rejects two runs with the same identity in one file, and a run per source lets an empty run
//! close the alerts of a pass that now finds nothing. Findings imported from another tool's
//! SARIF get a run per tool (`tollgate/sarif/<tool>/`), so clippy's and ESLint's alerts stay
//! apart. Each run lists the rules its results use
//! (from [`ReviewResult::rules`], else described from the findings), and each result carries
//! `partialFingerprints`: `tollgate/v1` (the finding's fingerprint) and, when there is a checkout
//! under [`ReportConfig::repo_root`], GitHub's `primaryLocationLineHash` of its start line (of
//! the line the finding quotes when the file or line is gone: every result gets one).
//!
//! Paths become relative URIs under `%SRCROOT%`, percent-encoded. Nothing is filtered; runs,
//! rules and results are sorted so the output is deterministic.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;

use serde_json::json;
use serde_sarif::sarif::{
    ArtifactChange, ArtifactContent, ArtifactLocation, Fix, Invocation, Location, Message,
    MultiformatMessageString, PhysicalLocation, PropertyBag, Region, Replacement,
    ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run,
    RunAutomationDetails, Sarif, Suppression, Tool, ToolComponent,
};

use super::{Format, ReportConfig, ReportError, encode_relative_path, percent_encode};
use crate::findings::{
    AnalyzerStatus, Category, Finding, LearningStatus, ReviewResult, RuleInfo, Severity, Source,
};
use crate::workspace::{RepoPath, Workspace};

/// The final SARIF 2.1.0 schema URI (GitHub flags the pre-release `rtm` ones).
const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const DRIVER_NAME: &str = "Tollgate";
const INFORMATION_URI: &str = env!("CARGO_PKG_REPOSITORY");
const SRCROOT: &str = "%SRCROOT%";
/// The `partialFingerprints` key of Tollgate's own fingerprint.
const FINGERPRINT_KEY: &str = "tollgate/v1";
const LINE_HASH_KEY: &str = "primaryLocationLineHash";
// GitHub's limits on rule texts.
const MAX_NAME_CHARS: usize = 255;
const MAX_DESCRIPTION_CHARS: usize = 1024;

pub(super) fn render(
    result: &ReviewResult,
    config: &ReportConfig,
    out: &mut dyn io::Write,
) -> Result<(), ReportError> {
    let log = build_log(result, config);
    serde_json::to_writer_pretty(&mut *out, &log).map_err(ReportError::json(Format::Sarif))?;
    out.write_all(b"\n").map_err(ReportError::io(Format::Sarif))
}

/// The severity table of this format.
fn level(severity: Severity) -> ResultLevel {
    match severity {
        Severity::Critical | Severity::High => ResultLevel::Error,
        Severity::Medium => ResultLevel::Warning,
        Severity::Low | Severity::Info => ResultLevel::Note,
    }
}

/// `problem.severity` of a rule.
fn problem_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "recommendation",
    }
}

/// `security-severity` of a security rule: a number as a string, on GitHub's 0.1–10 scale
/// (>9 critical, 7–8.9 high, 4–6.9 medium, <4 low).
fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "3.0",
        Severity::Info => "1.0",
    }
}

/// `precision` of a rule from the lowest confidence among its results in the run: a rule is
/// only as precise as its weakest report.
fn precision(confidence: f64) -> &'static str {
    if confidence >= 0.9 {
        "very-high"
    } else if confidence >= 0.7 {
        "high"
    } else if confidence >= 0.4 {
        "medium"
    } else {
        "low"
    }
}

/// A run's identity: the source, and for imported SARIF the tool that produced it.
type RunKey = (Source, Option<String>);

fn build_log(result: &ReviewResult, config: &ReportConfig) -> Sarif {
    let mut by_source: BTreeMap<RunKey, Vec<&Finding>> = BTreeMap::new();
    for key in sources_that_ran(result) {
        by_source.entry(key).or_default();
    }
    // Dismissed findings are written too, each with a suppression: nothing is silently lost.
    for finding in result.findings.iter().chain(&result.dismissed) {
        let tool = match finding.source {
            Source::Sarif => finding.tool.clone(),
            _ => None,
        };
        by_source
            .entry((finding.source, tool))
            .or_default()
            .push(finding);
    }
    let mut line_hashes = LineHashCache::new(config.repo_root.as_deref());
    let runs = by_source
        .into_iter()
        .enumerate()
        .map(|(run_idx, (key, findings))| {
            build_run(
                result,
                config,
                &key,
                findings,
                run_idx == 0,
                &mut line_hashes,
            )
        })
        .collect::<Vec<_>>();
    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(runs)
        .build()
}

/// Sources whose run is written even when they found nothing, so that GitHub closes their old
/// alerts: passes whose stats counters show they ran, analyzers whose status is `executed`, and
/// the tools of imported SARIF files. A result with no findings and no counters still gets the
/// preflight run: an upload needs a run.
fn sources_that_ran(result: &ReviewResult) -> Vec<RunKey> {
    let stats = &result.stats;
    let mut sources = Vec::new();
    if stats.deterministic_checks_executed > 0 || result.findings.is_empty() {
        sources.push((Source::Preflight, None));
    }
    if stats.invariants_executed > 0 {
        sources.push((Source::Invariants, None));
    }
    if stats.llm_passes_executed > 0 {
        sources.push((Source::Llm, None));
    }
    let executed = result
        .static_analysis
        .iter()
        .flat_map(|summary| &summary.results)
        .filter(|report| report.status == AnalyzerStatus::Executed);
    for report in executed {
        match report.analyzer.as_str() {
            "tsc" => sources.push((Source::Tsc, None)),
            "semgrep" => sources.push((Source::Semgrep, None)),
            "sarif" => sources.extend(
                report
                    .tools
                    .iter()
                    .map(|tool| (Source::Sarif, Some(tool.clone()))),
            ),
            _ => {}
        }
    }
    sources
}

/// `automationDetails.id` of a run: `tollgate/<source>/`, or `tollgate/sarif/<tool>/` for an
/// imported tool (lower case, anything but letters, digits, `.` and `_` made `-`).
fn automation_id((source, tool): &RunKey) -> String {
    match tool {
        None => format!("tollgate/{}/", source.as_str()),
        Some(tool) => {
            let mut slug = String::new();
            for c in tool.trim().chars().flat_map(char::to_lowercase) {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    slug.push(c);
                } else if !slug.ends_with('-') {
                    slug.push('-');
                }
            }
            let slug = slug.trim_matches('-');
            let slug = if slug.is_empty() { "unknown" } else { slug };
            format!("tollgate/{}/{slug}/", source.as_str())
        }
    }
}

fn build_run(
    result: &ReviewResult,
    config: &ReportConfig,
    key: &RunKey,
    mut findings: Vec<&Finding>,
    first_run: bool,
    line_hashes: &mut LineHashCache,
) -> Run {
    findings.sort_by(|a, b| {
        let key = |f: &Finding| {
            (
                f.location.start_line,
                f.location.start_column,
                f.location.end_line,
                f.location.end_column,
            )
        };
        a.location
            .file
            .cmp(&b.location.file)
            .then_with(|| key(a).cmp(&key(b)))
            .then_with(|| a.rule_id.cmp(&b.rule_id))
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });

    let mut findings_by_rule: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for finding in &findings {
        findings_by_rule
            .entry(finding.rule_id.as_str())
            .or_default()
            .push(finding);
    }
    let rule_index: HashMap<&str, usize> = findings_by_rule
        .keys()
        .enumerate()
        .map(|(idx, id)| (*id, idx))
        .collect();
    let rules: Vec<ReportingDescriptor> = findings_by_rule
        .iter()
        .map(|(id, rule_findings)| {
            let info = result.rules.iter().find(|rule| rule.id == *id);
            rule_descriptor(id, info, rule_findings)
        })
        .collect();

    let results: Vec<SarifResult> = findings
        .iter()
        .map(|finding| {
            let idx = rule_index[finding.rule_id.as_str()];
            build_result(finding, idx, config, line_hashes)
        })
        .collect();

    let version = tool_version(result);
    let mut driver = ToolComponent::builder()
        .name(DRIVER_NAME)
        .version(version.clone())
        .semantic_version(version)
        .rules(rules)
        .build();
    // The project's page, when the build names one (never a placeholder).
    driver.information_uri = (!INFORMATION_URI.is_empty()).then(|| INFORMATION_URI.to_string());

    let root_uri = config.repo_root.as_deref().and_then(directory_uri);
    let srcroot = match &root_uri {
        Some(uri) => ArtifactLocation::builder()
            .uri(uri.clone())
            .description(Message::from("The repository root"))
            .build(),
        None => ArtifactLocation::builder()
            .description(Message::from(
                "The repository root: finding paths are relative to it",
            ))
            .build(),
    };
    let mut invocation = Invocation::builder().execution_successful(true).build();
    if let Some(uri) = root_uri {
        invocation.working_directory = Some(ArtifactLocation::builder().uri(uri).build());
    }
    // Warnings concern the whole review, not one pass: written once, on the first run.
    if first_run && !result.metadata.warnings.is_empty() {
        let notifications = result
            .metadata
            .warnings
            .iter()
            .filter(|warning| !warning.trim().is_empty())
            .map(|warning| {
                serde_sarif::sarif::Notification::builder()
                    .message(Message::from(warning.as_str()))
                    .level(json!("warning"))
                    .build()
            })
            .collect::<Vec<_>>();
        if !notifications.is_empty() {
            invocation.tool_execution_notifications = Some(notifications);
        }
    }

    Run::builder()
        .tool(Tool::from(driver))
        .automation_details(
            RunAutomationDetails::builder()
                .id(automation_id(key))
                .build(),
        )
        .original_uri_base_ids(BTreeMap::from([(SRCROOT.to_string(), srcroot)]))
        .invocations(vec![invocation])
        // `Location` columns count characters (see findings::Location).
        .column_kind(json!("unicodeCodePoints"))
        .results(results)
        .build()
}

fn tool_version(result: &ReviewResult) -> String {
    let version = result.metadata.tool_version.trim();
    if version.is_empty() {
        crate::VERSION.to_string()
    } else {
        version.to_string()
    }
}

fn rule_descriptor(
    rule_id: &str,
    info: Option<&RuleInfo>,
    findings: &[&Finding],
) -> ReportingDescriptor {
    // `findings` is never empty: the rule is listed because a result uses it.
    let first = findings[0];
    let severity = info.map_or_else(
        || {
            findings
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or(first.severity)
        },
        |info| info.default_severity,
    );
    let category = info.map_or(first.category, |info| info.category);
    let min_confidence = findings
        .iter()
        .map(|f| f.confidence)
        .fold(1.0_f64, f64::min);

    let name = info
        .map(|info| info.name.trim())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| {
            let from_title = kebab_case(&first.title);
            if from_title.is_empty() {
                kebab_case(rule_id)
            } else {
                from_title
            }
        });
    let short = first_non_empty(&[
        info.map_or("", |info| info.short_description.as_str()),
        &first.title,
        rule_id,
    ]);
    let full = first_non_empty(&[
        info.map_or("", |info| info.full_description.as_str()),
        info.map_or("", |info| info.short_description.as_str()),
        &first.message,
        &first.title,
        rule_id,
    ]);
    // A rule's help is Markdown written by whoever defined the rule; for rules described from a
    // finding it is the producer's text, so it goes in as plain text only.
    let help = match info
        .map(|info| info.help.trim())
        .filter(|help| !help.is_empty())
    {
        Some(markdown) => MultiformatMessageString::builder()
            .text(markdown)
            .markdown(markdown)
            .build(),
        None => MultiformatMessageString::builder()
            .text(first_non_empty(&[&first.recommendation, &full]))
            .build(),
    };

    let mut tags = vec![category.as_str().to_string()];
    if category == Category::Security && !tags.iter().any(|tag| tag == "security") {
        tags.push("security".to_string());
    }
    let mut properties = BTreeMap::from([
        ("precision".to_string(), json!(precision(min_confidence))),
        (
            "problem.severity".to_string(),
            json!(problem_severity(severity)),
        ),
    ]);
    if category == Category::Security {
        properties.insert(
            "security-severity".to_string(),
            json!(security_severity(severity)),
        );
    }

    let mut descriptor = ReportingDescriptor::builder()
        .id(rule_id)
        .short_description(plain_text(truncate_chars(&short, MAX_DESCRIPTION_CHARS)))
        .full_description(plain_text(truncate_chars(&full, MAX_DESCRIPTION_CHARS)))
        .help(help)
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level(severity).to_string()))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(tags)
                .additional_properties(properties)
                .build(),
        )
        .build();
    // SARIF wants the name omitted when it is the id over again (SARIF1001).
    if !name.eq_ignore_ascii_case(rule_id) {
        descriptor.name = Some(truncate_chars(&name, MAX_NAME_CHARS));
    }
    if let Some(uri) = info
        .and_then(|info| info.help_uri.as_deref())
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
    {
        descriptor.help_uri = Some(uri.to_string());
    }
    descriptor
}

fn build_result(
    finding: &Finding,
    rule_index: usize,
    config: &ReportConfig,
    line_hashes: &mut LineHashCache,
) -> SarifResult {
    let location = &finding.location;
    let start_line = location.start_line.max(1);
    let end_line = location.end_line.max(start_line);
    let path = repo_relative_path(&location.file, config.repo_root.as_deref());
    let uri = encode_relative_path(&path);

    let mut region = Region::builder()
        .start_line(i64::from(start_line))
        .end_line(i64::from(end_line))
        .build();
    region.start_column = location.start_column.map(i64::from);
    region.end_column = location.end_column.map(i64::from);

    let mut fingerprints = BTreeMap::new();
    if !finding.fingerprint.is_empty() {
        fingerprints.insert(FINGERPRINT_KEY.to_string(), finding.fingerprint.clone());
    }
    if let Some(hash) = line_hashes.hash_of(&path, start_line) {
        fingerprints.insert(LINE_HASH_KEY.to_string(), hash);
    } else if line_hashes.has_checkout(&path) {
        // A removed file or a line past its end: GitHub tracks the alert by this hash, so it
        // is the hash of the line the finding quotes (its fingerprint when it quotes none).
        let quoted = if finding.anchor_text.is_empty() {
            &finding.fingerprint
        } else {
            &finding.anchor_text
        };
        if let Some(&hash) = super::line_hash::line_hash_values(quoted).first() {
            fingerprints.insert(
                LINE_HASH_KEY.to_string(),
                super::line_hash::format_line_hash(hash),
            );
        }
    }

    let properties = BTreeMap::from([
        ("id".to_string(), json!(finding.id)),
        ("severity".to_string(), json!(finding.severity.as_str())),
        ("category".to_string(), json!(finding.category.as_str())),
        ("confidence".to_string(), json!(finding.confidence)),
        (
            "on_changed_line".to_string(),
            json!(finding.on_changed_line),
        ),
    ]);

    let mut sarif_result = SarifResult::builder()
        .rule_id(finding.rule_id.clone())
        .rule_index(rule_index as i64)
        .level(level(finding.severity))
        .message(text_message(result_message(finding)))
        .properties(
            PropertyBag::builder()
                .additional_properties(properties)
                .build(),
        )
        .build();
    if !uri.is_empty() {
        let artifact = ArtifactLocation::builder()
            .uri(uri)
            .uri_base_id(SRCROOT)
            .build();
        sarif_result.locations = Some(vec![
            Location::builder()
                .physical_location(
                    PhysicalLocation::builder()
                        .artifact_location(artifact.clone())
                        .region(region)
                        .build(),
                )
                .build(),
        ]);
        sarif_result.fixes = fix(finding, artifact, start_line, end_line).map(|fix| vec![fix]);
    }
    if !fingerprints.is_empty() {
        sarif_result.partial_fingerprints = Some(fingerprints);
    }
    if let Some(note) = finding
        .learning
        .as_ref()
        .filter(|note| note.status == LearningStatus::Dismissed)
    {
        // `external`: the decision lives in `.review-learnings.jsonl`, not in the source.
        let mut suppression = Suppression::builder()
            .kind(json!("external"))
            .status(json!("accepted"))
            .build();
        let justification = match (note.reason.trim(), note.by.trim()) {
            ("", _) => None,
            (reason, "") => Some(reason.to_string()),
            (reason, by) => Some(format!("{reason} ({by})")),
        };
        suppression.justification = justification.map(|text| truncate_chars(&text, 1000));
        sarif_result.suppressions = Some(vec![suppression]);
    }
    sarif_result
}

/// A SARIF fix for a suggested fix that carries replacement text. The replacement stands for
/// the finding's whole lines; a whole-line region ends before the last line's newline, so one
/// trailing newline of the replacement is dropped.
fn fix(
    finding: &Finding,
    artifact: ArtifactLocation,
    start_line: u32,
    end_line: u32,
) -> Option<Fix> {
    let suggested = finding.suggested_fix.as_ref()?;
    let replacement = suggested.replacement.as_deref()?;
    let replacement = replacement
        .strip_suffix('\n')
        .map(|text| text.strip_suffix('\r').unwrap_or(text))
        .unwrap_or(replacement);
    let deleted = Region::builder()
        .start_line(i64::from(start_line))
        .end_line(i64::from(end_line))
        .build();
    let change = ArtifactChange::builder()
        .artifact_location(artifact)
        .replacements(vec![
            Replacement::builder()
                .deleted_region(deleted)
                .inserted_content(ArtifactContent::builder().text(replacement).build())
                .build(),
        ])
        .build();
    let applicability = serde_json::to_value(suggested.applicability).unwrap_or_default();
    Some(
        Fix::builder()
            .artifact_changes(vec![change])
            .description(text_message(first_non_empty(&[
                &suggested.description,
                "Suggested fix",
            ])))
            .properties(
                PropertyBag::builder()
                    .additional_properties(BTreeMap::from([(
                        "applicability".to_string(),
                        applicability,
                    )]))
                    .build(),
            )
            .build(),
    )
}

/// `title. message`, never empty.
fn result_message(finding: &Finding) -> String {
    let title = finding.title.trim();
    let message = finding.message.trim();
    match (title.is_empty(), message.is_empty()) {
        (false, false) if title.ends_with(['.', '!', '?', ':']) => format!("{title} {message}"),
        (false, false) => format!("{title}. {message}"),
        (false, true) => title.to_string(),
        (true, false) => message.to_string(),
        (true, true) => finding.rule_id.clone(),
    }
}

fn text_message(text: impl Into<String>) -> Message {
    Message::builder().text(text.into()).build()
}

fn plain_text(text: String) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(text).build()
}

fn first_non_empty(candidates: &[&str]) -> String {
    candidates
        .iter()
        .map(|text| text.trim())
        .find(|text| !text.is_empty())
        .unwrap_or("(no description)")
        .to_string()
}

fn truncate_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some(_) => {
            let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
            kept + "…"
        }
    }
}

/// `Use of unwrap()` → `use-of-unwrap`.
fn kebab_case(text: &str) -> String {
    let mut out = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The path as GitHub expects it: relative to the checkout, `/`-separated. Finding paths are
/// relative already; an absolute one under `repo_root` is made relative.
fn repo_relative_path(file: &str, repo_root: Option<&Path>) -> String {
    let normalized = file.replace('\\', "/");
    if let Some(rest) = repo_root.and_then(|root| Path::new(&normalized).strip_prefix(root).ok()) {
        return rest.to_string_lossy().replace('\\', "/");
    }
    normalized
}

/// `file:///…/` for an absolute directory, `None` for a relative one (a base URI must be
/// absolute).
fn directory_uri(dir: &Path) -> Option<String> {
    let text = dir.to_string_lossy().replace('\\', "/");
    let text = text.trim_end_matches('/');
    let is_windows_drive =
        text.len() >= 2 && text.as_bytes()[0].is_ascii_alphabetic() && text.as_bytes()[1] == b':';
    if is_windows_drive {
        Some(format!("file:///{}/", percent_encode(text, b"/:")))
    } else if dir.is_absolute() {
        Some(format!("file://{}/", percent_encode(text, b"/:")))
    } else {
        None
    }
}

/// Line hashes per file, read once. Files are read only when they resolve (symlinks included)
/// inside the checkout.
struct LineHashCache {
    workspace: Option<Workspace>,
    files: HashMap<String, Option<Vec<(u64, u32)>>>,
}

impl LineHashCache {
    fn new(repo_root: Option<&Path>) -> LineHashCache {
        LineHashCache {
            workspace: super::source::open(repo_root),
            files: HashMap::new(),
        }
    }

    /// Whether `path` lies inside the checkout (existing or not), so a hash is due for it;
    /// without a checkout GitHub computes the hashes at upload.
    fn has_checkout(&self, path: &str) -> bool {
        self.workspace.as_ref().is_some_and(|workspace| {
            RepoPath::new(path).is_ok_and(|path| workspace.locate(&path).is_ok())
        })
    }

    fn hash_of(&mut self, path: &str, line: u32) -> Option<String> {
        let workspace = self.workspace.as_ref()?;
        let hashes = self
            .files
            .entry(path.to_string())
            .or_insert_with(|| read_line_hashes(workspace, path))
            .as_ref()?;
        let idx = usize::try_from(line).ok()?.checked_sub(1)?;
        hashes
            .get(idx)
            .copied()
            .map(super::line_hash::format_line_hash)
    }
}

fn read_line_hashes(workspace: &Workspace, path: &str) -> Option<Vec<(u64, u32)>> {
    // codeql-action reads files as UTF-8 with replacement characters, as this does.
    Some(super::line_hash::line_hash_values(
        &super::source::read_confined(workspace, path)?,
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;
    use crate::findings::{Location as FindingLocation, Source};
    use crate::report::line_hashes;
    use crate::report::testutil::{
        SAMPLE_FILES, render_to_string, render_with, sample_repo, sample_result, write_file,
    };

    const SARIF_SCHEMA: &str = include_str!("testdata/sarif-2.1.0.json");

    fn render_json(result: &ReviewResult, config: &ReportConfig) -> Value {
        serde_json::from_str(&render_with(Format::Sarif, result, config)).expect("valid JSON")
    }

    fn assert_schema_valid(sarif: &Value) {
        let schema: Value = serde_json::from_str(SARIF_SCHEMA).unwrap();
        let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(sarif)
            .map(|err| format!("{err} at {}", err.instance_path()))
            .collect();
        assert!(errors.is_empty(), "SARIF fails its schema: {errors:#?}");
    }

    /// Every string in the log is non-empty: GitHub treats empty strings as missing.
    fn assert_no_empty_strings(value: &Value, path: &str) {
        match value {
            Value::String(text) => assert!(!text.is_empty(), "empty string at {path}"),
            Value::Array(items) => {
                for (idx, item) in items.iter().enumerate() {
                    assert_no_empty_strings(item, &format!("{path}[{idx}]"));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    assert_no_empty_strings(item, &format!("{path}.{key}"));
                }
            }
            _ => {}
        }
    }

    fn results_of(sarif: &Value) -> Vec<&Value> {
        sarif["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|run| run["results"].as_array().unwrap())
            .collect()
    }

    fn result_at<'a>(sarif: &'a Value, rule_id: &str) -> &'a Value {
        results_of(sarif)
            .into_iter()
            .find(|result| result["ruleId"] == rule_id)
            .unwrap_or_else(|| panic!("no result for {rule_id}"))
    }

    #[test]
    fn renders_the_sample_result() {
        let repo = sample_repo();
        let config = ReportConfig::new(Some(repo.path().to_path_buf()), None);
        let sarif = render_with(Format::Sarif, &sample_result(), &config);
        let root_uri = directory_uri(repo.path()).unwrap();
        assert!(sarif.contains(&root_uri));
        insta::assert_snapshot!(sarif.replace(&root_uri, "file:///REPO_ROOT/"));
    }

    #[test]
    fn sample_is_valid_sarif_that_github_accepts() {
        let repo = sample_repo();
        let result = sample_result();
        let config = ReportConfig::new(Some(repo.path().to_path_buf()), None);
        let sarif = render_json(&result, &config);
        assert_schema_valid(&sarif);
        assert_no_empty_strings(&sarif, "$");
        assert_eq!(sarif["$schema"], SCHEMA_URI);
        assert_eq!(sarif["version"], "2.1.0");

        // One run per source, told apart by automationDetails.id; the driver is the same.
        let runs = sarif["runs"].as_array().unwrap();
        let ids: Vec<&str> = runs
            .iter()
            .map(|run| run["automationDetails"]["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                "tollgate/preflight/",
                "tollgate/invariants/",
                "tollgate/semgrep/",
                "tollgate/llm/"
            ]
        );
        for run in runs {
            let driver = &run["tool"]["driver"];
            assert_eq!(driver["name"], DRIVER_NAME);
            assert_eq!(driver["semanticVersion"], "0.1.0");
            assert_eq!(run["columnKind"], "unicodeCodePoints");
            assert_eq!(run["invocations"][0]["executionSuccessful"], true);
            let id = run["automationDetails"]["id"].as_str().unwrap();
            let source = id.trim_start_matches("tollgate/").trim_end_matches('/');
            let rules = driver["rules"].as_array().unwrap();
            for result in run["results"].as_array().unwrap() {
                let finding = result_finding(&result_finding_id(result));
                assert_eq!(finding.source.as_str(), source);
                let idx = result["ruleIndex"].as_u64().unwrap() as usize;
                assert_eq!(rules[idx]["id"], result["ruleId"]);
            }
        }
        assert_eq!(results_of(&sarif).len(), result.findings.len());

        // Relative, percent-encoded URIs under %SRCROOT%.
        for result in results_of(&sarif) {
            let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
            let uri = artifact["uri"].as_str().unwrap();
            assert_eq!(artifact["uriBaseId"], SRCROOT);
            assert!(
                !uri.starts_with('/') && !uri.contains(':') && !uri.contains(' '),
                "{uri}"
            );
            assert!(uri.is_ascii(), "{uri}");
            assert!(result["partialFingerprints"][FINGERPRINT_KEY].is_string());
        }
        let spaced = result_at(&sarif, "no-unwrap-in-handlers");
        assert_eq!(
            spaced["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "src/api/handlers%20v2/user%20handler.rs"
        );
        let region = &spaced["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            (region["startLine"].as_u64(), region["endLine"].as_u64()),
            (Some(4), Some(6))
        );
        assert!(region.get("startColumn").is_none());
        let unicode = result_at(&sarif, "llm/security");
        assert_eq!(
            unicode["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "src/%C3%BCn%C3%AFcode/na%C3%AFve.rs"
        );
        assert_eq!(
            unicode["locations"][0]["physicalLocation"]["region"]["startColumn"],
            25
        );
    }

    fn result_finding_id(result: &Value) -> String {
        result["properties"]["id"].as_str().unwrap().to_string()
    }

    fn result_finding(id: &str) -> Finding {
        sample_result()
            .findings
            .into_iter()
            .find(|finding| finding.id == id)
            .unwrap()
    }

    #[test]
    fn line_hashes_come_from_the_checkout() {
        let repo = sample_repo();
        let result = sample_result();
        let config = ReportConfig::new(Some(repo.path().to_path_buf()), None);
        let sarif = render_json(&result, &config);
        for finding in &result.findings {
            let sarif_result = results_of(&sarif)
                .into_iter()
                .find(|r| r["properties"]["id"] == finding.id.as_str())
                .unwrap();
            let fingerprints = &sarif_result["partialFingerprints"];
            assert_eq!(fingerprints[FINGERPRINT_KEY], finding.fingerprint.as_str());
            let content = SAMPLE_FILES
                .iter()
                .find(|(path, _)| *path == finding.location.file)
                .map(|(_, content)| *content);
            let from_checkout = content.and_then(|content| {
                line_hashes(content)
                    .get(finding.location.start_line as usize - 1)
                    .cloned()
            });
            // Issue 28: src/removed.rs is missing and src/lib.rs:999 is past the end of the
            // file; GitHub tracks alerts by this hash, so they get the hash of the line the
            // finding quotes (or of its fingerprint when it quotes none).
            let expected = from_checkout.unwrap_or_else(|| {
                let quoted = if finding.anchor_text.is_empty() {
                    &finding.fingerprint
                } else {
                    &finding.anchor_text
                };
                line_hashes(quoted)[0].clone()
            });
            assert_eq!(
                fingerprints[LINE_HASH_KEY].as_str(),
                Some(expected.as_str()),
                "{}",
                finding.rule_id
            );
        }
        let crlf = result_at(&sarif, "semgrep/python.lang.security.audit.eval-detected");
        assert_eq!(
            crlf["partialFingerprints"][LINE_HASH_KEY],
            line_hashes("import sys\nprint(eval(sys.argv[1]))\n")[1].as_str()
        );
        assert_eq!(
            result_at(&sarif, "TG005")["partialFingerprints"][LINE_HASH_KEY],
            line_hashes("fn old() {}")[0].as_str()
        );
        for sarif_result in results_of(&sarif) {
            assert!(
                sarif_result["partialFingerprints"][LINE_HASH_KEY].is_string(),
                "{sarif_result:#}"
            );
        }
    }

    #[test]
    fn without_a_checkout_there_are_no_line_hashes_or_root_uri() {
        let sarif: Value =
            serde_json::from_str(&render_to_string(Format::Sarif, &sample_result())).unwrap();
        assert_schema_valid(&sarif);
        for run in sarif["runs"].as_array().unwrap() {
            let srcroot = &run["originalUriBaseIds"][SRCROOT];
            assert!(srcroot.get("uri").is_none());
            assert!(srcroot["description"]["text"].is_string());
            assert!(run["invocations"][0].get("workingDirectory").is_none());
        }
        for result in results_of(&sarif) {
            assert!(result["partialFingerprints"].get(LINE_HASH_KEY).is_none());
        }
    }

    #[test]
    fn files_outside_the_checkout_are_never_read() {
        let outer = tempfile::tempdir().unwrap();
        write_file(outer.path(), "secret.rs", "top secret\n");
        let root = outer.path().join("repo");
        write_file(&root, "inside.rs", "fn main() {}\n");
        #[cfg(unix)]
        std::os::unix::fs::symlink(outer.path().join("secret.rs"), root.join("link.rs")).unwrap();

        let mut result = sample_result();
        let template = result.findings[0].clone();
        result.findings = ["inside.rs", "../secret.rs", "link.rs"]
            .into_iter()
            .map(|path| {
                let mut finding = template.clone();
                finding.location = FindingLocation::line(path, 1);
                finding.fingerprint = format!("fp-{path}");
                finding
            })
            .collect();
        let config = ReportConfig::new(Some(root.clone()), None);
        let sarif = render_json(&result, &config);
        let hashed: Vec<&str> = results_of(&sarif)
            .into_iter()
            .filter(|r| r["partialFingerprints"].get(LINE_HASH_KEY).is_some())
            .map(|r| {
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(hashed, ["inside.rs"]);
    }

    #[test]
    fn rules_carry_github_metadata() {
        let sarif = render_json(&sample_result(), &ReportConfig::new(None, None));
        let rules: Vec<&Value> = sarif["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|run| run["tool"]["driver"]["rules"].as_array().unwrap())
            .collect();
        let rule = |id: &str| *rules.iter().find(|rule| rule["id"] == id).unwrap();

        let secret = rule("TG001");
        assert_eq!(secret["name"], "secret-in-diff");
        assert_eq!(secret["defaultConfiguration"]["level"], "error");
        assert_eq!(secret["properties"]["security-severity"], "9.5");
        assert_eq!(secret["properties"]["precision"], "very-high");
        assert_eq!(secret["properties"]["problem.severity"], "error");
        assert_eq!(
            secret["properties"]["tags"],
            serde_json::json!(["security"])
        );
        assert_eq!(
            secret["helpUri"],
            "https://example.invalid/tollgate/rules/TG001"
        );
        assert!(
            secret["help"]["markdown"]
                .as_str()
                .unwrap()
                .contains("**rotate it**")
        );

        let api = rule("TG004");
        assert!(api["properties"].get("security-severity").is_none());
        assert_eq!(api["properties"]["problem.severity"], "warning");
        assert_eq!(api["defaultConfiguration"]["level"], "warning");

        // TG005 has empty descriptions in its RuleInfo: filled from what is known.
        let hotspot = rule("TG005");
        assert_eq!(hotspot["fullDescription"]["text"], "A hotspot file changed");
        assert_eq!(hotspot["help"]["text"], "A hotspot file changed");

        // No RuleInfo: described from the finding, help as plain text only.
        let llm = rule("llm/security");
        assert_eq!(llm["name"], "shell-command-built-from-caller-input");
        assert_eq!(
            llm["shortDescription"]["text"],
            "Shell command built from caller input"
        );
        assert_eq!(
            llm["help"]["text"],
            "Pass arguments as a list, never through a shell."
        );
        assert!(llm["help"].get("markdown").is_none());
        assert_eq!(llm["properties"]["security-severity"], "8.0");
        assert_eq!(llm["properties"]["precision"], "medium");

        for rule in &rules {
            if let Some(score) = rule["properties"].get("security-severity") {
                let score: f64 = score.as_str().unwrap().parse().unwrap();
                assert!((0.1..=10.0).contains(&score));
            }
        }
    }

    #[test]
    fn dismissed_findings_are_written_with_a_suppression() {
        use crate::findings::{LearningNote, LearningStatus};
        let mut result = sample_result();
        let mut dismissed = result.findings.remove(0);
        dismissed.learning = Some(LearningNote {
            status: LearningStatus::Dismissed,
            reason: "test fixture".into(),
            by: "alice".into(),
            at: "t".into(),
            fingerprint: String::new(),
        });
        let fingerprint = dismissed.fingerprint.clone();
        result.dismissed.push(dismissed);
        let sarif = render_json(&result, &ReportConfig::new(None, None));
        assert_schema_valid(&sarif);
        let suppressed: Vec<&Value> = results_of(&sarif)
            .into_iter()
            .filter(|r| r.get("suppressions").is_some())
            .collect();
        assert_eq!(suppressed.len(), 1);
        assert_eq!(
            suppressed[0]["partialFingerprints"][FINGERPRINT_KEY],
            fingerprint.as_str()
        );
        assert_eq!(suppressed[0]["suppressions"][0]["kind"], "external");
        assert_eq!(
            suppressed[0]["suppressions"][0]["justification"],
            "test fixture (alice)"
        );
    }

    #[test]
    fn results_carry_level_message_properties_and_fixes() {
        let sarif = render_json(&sample_result(), &ReportConfig::new(None, None));
        let secret = result_at(&sarif, "TG001");
        assert_eq!(secret["level"], "error");
        assert_eq!(
            secret["message"]["text"],
            "Hardcoded secret in `API_KEY`. A live API key is committed in source code."
        );
        assert_eq!(secret["properties"]["severity"], "CRITICAL");
        assert_eq!(secret["properties"]["category"], "security");
        assert_eq!(secret["properties"]["on_changed_line"], true);
        assert_eq!(result_at(&sarif, "TG004")["level"], "warning");
        assert_eq!(
            result_at(&sarif, "TG004")["properties"]["on_changed_line"],
            false
        );
        assert_eq!(result_at(&sarif, "TG005")["level"], "note");

        // Only the fix with replacement text becomes a SARIF fix.
        let with_fix = result_at(&sarif, "no-unwrap-in-handlers");
        let replacement = &with_fix["fixes"][0]["artifactChanges"][0]["replacements"][0];
        assert_eq!(replacement["deletedRegion"]["startLine"], 4);
        assert_eq!(replacement["deletedRegion"]["endLine"], 6);
        assert_eq!(
            replacement["insertedContent"]["text"],
            "    let raw = std::fs::read_to_string(&settings.name)?;"
        );
        assert_eq!(
            with_fix["fixes"][0]["properties"]["applicability"],
            "unsafe"
        );
        assert!(result_at(&sarif, "llm/security").get("fixes").is_none());
        let n_with_fixes = results_of(&sarif)
            .into_iter()
            .filter(|r| r.get("fixes").is_some())
            .count();
        assert_eq!(n_with_fixes, 1);
    }

    #[test]
    fn output_does_not_depend_on_input_order() {
        let result = sample_result();
        let mut reversed = result.clone();
        reversed.findings.reverse();
        reversed.rules.reverse();
        assert_eq!(
            render_to_string(Format::Sarif, &result),
            render_to_string(Format::Sarif, &reversed)
        );
    }

    #[test]
    fn a_clean_review_still_closes_alerts_of_the_passes_that_ran() {
        let mut result = sample_result();
        result.findings.clear();
        let sarif = render_json(&result, &ReportConfig::new(None, None));
        assert_schema_valid(&sarif);
        let ids: BTreeSet<&str> = sarif["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|run| run["automationDetails"]["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            BTreeSet::from([
                "tollgate/preflight/",
                "tollgate/invariants/",
                "tollgate/llm/"
            ])
        );
        assert!(results_of(&sarif).is_empty());

        // Nothing ran and nothing was found: one (empty) run so the log is still an upload.
        result.stats = Default::default();
        let sarif = render_json(&result, &ReportConfig::new(None, None));
        assert_eq!(sarif["runs"].as_array().unwrap().len(), 1);
        assert_eq!(
            sarif["runs"][0]["automationDetails"]["id"],
            "tollgate/preflight/"
        );
        assert_eq!(
            sarif["runs"][0]["tool"]["driver"]["rules"],
            serde_json::json!([])
        );
        let _ = Source::Preflight;
    }

    #[test]
    fn each_imported_tool_and_executed_analyzer_gets_its_own_run() {
        use crate::findings::{AnalysisScope, AnalyzerKind, AnalyzerReport, StaticAnalysisSummary};

        let mut result = sample_result();
        result.findings.retain(|f| f.source != Source::Semgrep);
        for (tool, rule) in [
            ("clippy", "clippy/clippy::unwrap_used"),
            ("ESLint", "eslint/no-undef"),
        ] {
            let mut finding = result.findings[0].clone();
            finding.fingerprint = format!("fp-{tool}");
            finding.source = Source::Sarif;
            finding.tool = Some(tool.to_string());
            finding.rule_id = rule.to_string();
            result.findings.push(finding);
        }
        let mut tsc = AnalyzerReport::new("tsc", AnalyzerStatus::Executed);
        tsc.findings_reported = 3;
        let mut sarif_import = AnalyzerReport::new("sarif", AnalyzerStatus::Executed);
        sarif_import.tools = vec!["clippy".into(), "ESLint".into(), "CodeQL".into()];
        let semgrep = AnalyzerReport::new("semgrep", AnalyzerStatus::Unavailable);
        result.static_analysis = Some(StaticAnalysisSummary {
            analyzers_requested: vec![AnalyzerKind::Tsc, AnalyzerKind::Semgrep],
            analyzers_executed: vec![AnalyzerKind::Tsc],
            scope: AnalysisScope::ChangedLines,
            duration_ms: 1.0,
            budget_ms: 120_000,
            findings_out_of_scope: 0,
            findings_over_limit: 0,
            warnings: Vec::new(),
            results: vec![tsc, semgrep, sarif_import],
        });

        let sarif = render_json(&result, &ReportConfig::new(None, None));
        assert_schema_valid(&sarif);
        let runs = sarif["runs"].as_array().unwrap();
        let ids: Vec<&str> = runs
            .iter()
            .map(|run| run["automationDetails"]["id"].as_str().unwrap())
            .collect();
        for expected in [
            "tollgate/tsc/",
            "tollgate/sarif/clippy/",
            "tollgate/sarif/eslint/",
            "tollgate/sarif/codeql/",
        ] {
            assert_eq!(
                ids.iter().filter(|id| **id == expected).count(),
                1,
                "{ids:?}"
            );
        }
        assert!(
            !ids.contains(&"tollgate/semgrep/"),
            "semgrep did not execute: {ids:?}"
        );
        let clippy = runs
            .iter()
            .find(|run| run["automationDetails"]["id"] == "tollgate/sarif/clippy/")
            .unwrap();
        let rule_ids: Vec<&str> = clippy["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["ruleId"].as_str().unwrap())
            .collect();
        assert_eq!(rule_ids, ["clippy/clippy::unwrap_used"]);
        let codeql = runs
            .iter()
            .find(|run| run["automationDetails"]["id"] == "tollgate/sarif/codeql/")
            .unwrap();
        assert_eq!(codeql["results"], serde_json::json!([]));
    }

    #[test]
    fn degenerate_findings_never_produce_empty_strings() {
        let mut result = sample_result();
        let mut finding = result.findings[0].clone();
        finding.rule_id = "X1".into();
        finding.title = String::new();
        finding.message = "   ".into();
        finding.fingerprint = String::new();
        finding.location = FindingLocation::line("C:\\work\\repo\\src\\x.rs", 0);
        result.findings = vec![finding];
        result.metadata.tool_version = String::new();
        result.metadata.warnings = vec![String::new()];
        let sarif = render_json(&result, &ReportConfig::new(None, None));
        assert_schema_valid(&sarif);
        assert_no_empty_strings(&sarif, "$");
        let rule = &sarif["runs"][0]["tool"]["driver"]["rules"][0];
        assert!(
            rule.get("name").is_none(),
            "a name equal to the id is left out: {rule}"
        );
        let only = &results_of(&sarif)[0];
        assert_eq!(only["message"]["text"], "X1");
        assert_eq!(
            only["locations"][0]["physicalLocation"]["region"]["startLine"],
            1
        );
        assert_eq!(
            only["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "C%3A/work/repo/src/x.rs"
        );
        assert_eq!(
            sarif["runs"][0]["tool"]["driver"]["version"],
            crate::VERSION
        );
    }

    /// GitHub's ingestion rules, run by the SARIF Multitool (`--rule-kind Ghas` with GH1001–GH1007
    /// enabled, then the default SARIF rules) when `TOLLGATE_SARIF_MULTITOOL` names its binary;
    /// CI installs it. Its exit code is always 0, so this counts `error` results in its log.
    #[test]
    fn multitool_reports_no_errors() {
        let Some(multitool) = std::env::var_os("TOLLGATE_SARIF_MULTITOOL") else {
            return;
        };
        let repo = sample_repo();
        let work = tempfile::tempdir().unwrap();
        let rules_path = work.path().join("gh-rules.xml");
        std::fs::write(&rules_path, include_str!("testdata/gh-rules.xml")).unwrap();
        let mut empty = sample_result();
        empty.findings.clear();
        let logs = [
            (
                "sample",
                render_with(
                    Format::Sarif,
                    &sample_result(),
                    &ReportConfig::new(Some(repo.path().to_path_buf()), None),
                ),
            ),
            ("no-root", render_to_string(Format::Sarif, &sample_result())),
            ("empty", render_to_string(Format::Sarif, &empty)),
        ];
        for (name, log) in logs {
            let input = work.path().join(format!("{name}.sarif"));
            std::fs::write(&input, log).unwrap();
            for rule_kind in ["Ghas", "Sarif"] {
                let output = work
                    .path()
                    .join(format!("{name}-{rule_kind}.validation.sarif"));
                let status = std::process::Command::new(&multitool)
                    .arg("validate")
                    .arg(&input)
                    .args(["--rule-kind", rule_kind, "--config"])
                    .arg(&rules_path)
                    .args(["--log", "ForceOverwrite", "--output"])
                    .arg(&output)
                    .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("the SARIF Multitool runs");
                assert!(status.success(), "{name} {rule_kind}: {status}");
                let validation: Value =
                    serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
                let errors: Vec<&Value> = results_of(&validation)
                    .into_iter()
                    .filter(|result| result["level"] == "error")
                    .collect();
                assert!(errors.is_empty(), "{name} {rule_kind}: {errors:#?}");
            }
        }
    }

    #[test]
    fn directory_uris_are_absolute_file_uris() {
        assert_eq!(
            directory_uri(Path::new("/home/me/my repo")).as_deref(),
            Some("file:///home/me/my%20repo/")
        );
        assert_eq!(
            directory_uri(Path::new("C:\\src\\repo")).as_deref(),
            Some("file:///C:/src/repo/")
        );
        assert_eq!(directory_uri(Path::new("relative/dir")), None);
    }
}
