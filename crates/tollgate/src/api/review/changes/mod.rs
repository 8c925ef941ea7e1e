//! `review_changes`: a model reviews a unified diff and answers upstream's `ReviewResult`
//! (findings with priorities 0–3, a verdict on the whole change); `review_git_diff` takes the
//! diff from the workspace's repository first; `review_auto` picks between `review_diff` and
//! `review_git_diff`.
//!
//! The model passes' machinery is shared with `review_diff` (`review::llm`): the files are
//! ranked by risk and packed to the token budget, every piece of diff or file content is
//! scrubbed and fenced, and every location the model gives is checked against the diff
//! (findings elsewhere are dropped; `is_on_changed_line` comes from the diff). Ids are
//! fingerprints. Then upstream's post-filter, in its order: confidence threshold → changed lines
//! only (priority 0 always kept) → categories → sort by priority → cap.
//!
//! A model that fails (unreachable, invalid JSON after one repair) gives a well-formed result:
//! `needs attention`, the reason in `overall_explanation` and `warnings`. A model that is not
//! configured is an error (`LLM_NOT_CONFIGURED`), since nothing could be reviewed.

mod auto;
mod filter;
mod git;
mod types;

pub use auto::review_auto;
pub use git::review_git_diff;
pub use types::{
    AutoOutput, AutoTool, ChangesMetadata, ChangesReview, ChangesSummary, CodeLocation,
    Correctness, FileContexts, GitInfo, LineRange, MAX_FILE_CONTEXT_BYTES, MAX_PATTERNS,
    MAX_REF_CHARS, ReviewAutoRequest, ReviewAutoResponse, ReviewCategory, ReviewChangesOptions,
    ReviewChangesRequest, ReviewFinding, ReviewGitDiffRequest, ReviewGitDiffResponse, StringList,
    Suggestion,
};

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::api::review::{MAX_FINDINGS_LIMIT, MAX_INSTRUCTIONS_CHARS, RequestError};
use crate::api::review::{parse_diff, require_diff};
use crate::config::{RawConfig, ReviewConfig};
use crate::diff::{Diff, FileDiff, FileStatus};
use crate::findings::{Finding, Location, Severity, Source, assign_identities};
use crate::llm::{LlmClient, Usage, estimate_tokens};
use crate::review::llm::{self as passes, ContextSource, DiffLines, Pass, RankedFile};
use crate::review::signals;

/// Upstream's defaults.
const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.7;
const DEFAULT_MAX_FINDINGS: usize = 20;
/// The longest title upstream allows.
const MAX_TITLE_CHARS: usize = 80;

/// Runs `review_changes` on `request.diff`. `settings` are the configuration layers (the
/// workspace's `tollgate.toml`, the environment); the model comes from their `[llm]`.
pub fn review_changes(
    workspace: &Path,
    settings: RawConfig,
    request: &ReviewChangesRequest,
) -> Result<ChangesReview, RequestError> {
    require_diff(&request.diff)?;
    let options = Options::new(&request.options, "", &[])?;
    let diff = parse_diff(&request.diff)?;
    let config = settings.resolve()?;
    review_parsed(&diff, &options, &config, workspace)
}

/// Validated options.
#[derive(Debug)]
struct Options {
    file_contexts: Option<BTreeMap<String, String>>,
    base_ref: Option<String>,
    confidence_threshold: f64,
    max_findings: usize,
    /// Empty: every category.
    categories: Vec<ReviewCategory>,
    changed_lines_only: bool,
    custom_instructions: Option<String>,
    exclude: Option<GlobSet>,
    include: Option<GlobSet>,
}

impl Options {
    /// Checks `raw`; error fields are prefixed with `prefix` (`options.` inside
    /// `review_git_diff`). `include` are `review_git_diff`'s `include_patterns`.
    fn new(
        raw: &ReviewChangesOptions,
        prefix: &str,
        include: &[String],
    ) -> Result<Options, RequestError> {
        let field = |name: &str| format!("{prefix}{name}");
        let confidence_threshold = raw
            .confidence_threshold
            .unwrap_or(DEFAULT_CONFIDENCE_THRESHOLD);
        if !(0.0..=1.0).contains(&confidence_threshold) {
            return Err(RequestError::invalid(
                &field("confidence_threshold"),
                format!("{confidence_threshold} is outside 0.0–1.0"),
            ));
        }
        let max_findings = raw.max_findings.unwrap_or(DEFAULT_MAX_FINDINGS);
        if max_findings > MAX_FINDINGS_LIMIT {
            return Err(RequestError::invalid(
                &field("max_findings"),
                format!("{max_findings} is above the limit of {MAX_FINDINGS_LIMIT}"),
            ));
        }
        let mut categories = Vec::new();
        for name in raw
            .categories
            .as_ref()
            .map(StringList::items)
            .unwrap_or_default()
        {
            let category = ReviewCategory::parse(&name).ok_or_else(|| {
                RequestError::invalid(
                    &field("categories"),
                    format!(
                        "unknown category `{name}`; use correctness, security, performance, \
                         maintainability, style or documentation"
                    ),
                )
            })?;
            if !categories.contains(&category) {
                categories.push(category);
            }
        }
        if let Some(text) = &raw.custom_instructions
            && text.chars().count() > MAX_INSTRUCTIONS_CHARS
        {
            return Err(RequestError::invalid(
                &field("custom_instructions"),
                format!("longer than {MAX_INSTRUCTIONS_CHARS} characters"),
            ));
        }
        if let Some(base_ref) = &raw.base_ref
            && (base_ref.chars().count() > MAX_REF_CHARS || base_ref.chars().any(char::is_control))
        {
            return Err(RequestError::invalid(
                &field("base_ref"),
                format!("at most {MAX_REF_CHARS} characters, no control characters"),
            ));
        }
        let exclude = raw
            .exclude_patterns
            .as_ref()
            .map(|list| glob_set(&field("exclude_patterns"), &list.items()))
            .transpose()?
            .flatten();
        let include = glob_set("include_patterns", include)?;
        Ok(Options {
            file_contexts: raw
                .file_contexts
                .as_ref()
                .map(|given| file_contexts(&field("file_contexts"), given))
                .transpose()?,
            base_ref: raw.base_ref.clone(),
            confidence_threshold,
            max_findings,
            categories,
            changed_lines_only: raw.changed_lines_only.unwrap_or(true),
            custom_instructions: raw.custom_instructions.clone(),
            exclude,
            include,
        })
    }

    fn selects(&self, file: &FileDiff) -> bool {
        let path = file.path();
        self.include.as_ref().is_none_or(|set| set.is_match(path))
            && !self.exclude.as_ref().is_some_and(|set| set.is_match(path))
    }
}

/// The globs as a set; `None` for no globs.
fn glob_set(field: &str, patterns: &[String]) -> Result<Option<GlobSet>, RequestError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    if patterns.len() > MAX_PATTERNS {
        return Err(RequestError::invalid(
            field,
            format!("more than {MAX_PATTERNS} patterns"),
        ));
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern.trim_start_matches("./")).map_err(|err| {
            RequestError::invalid(field, format!("invalid glob `{pattern}`: {err}"))
        })?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|err| RequestError::invalid(field, err.to_string()))
}

/// `file_contexts` as a map, from either of its shapes.
fn file_contexts(
    field: &str,
    given: &FileContexts,
) -> Result<BTreeMap<String, String>, RequestError> {
    let map = match given {
        FileContexts::Map(map) => map.clone(),
        FileContexts::Json(text) if text.trim().is_empty() => BTreeMap::new(),
        FileContexts::Json(text) => serde_json::from_str::<BTreeMap<String, String>>(text)
            .map_err(|err| {
                RequestError::invalid(
                    field,
                    format!("not a JSON object of path → content strings: {err}"),
                )
            })?,
    };
    let total: usize = map.iter().map(|(path, text)| path.len() + text.len()).sum();
    if total > MAX_FILE_CONTEXT_BYTES {
        return Err(RequestError::invalid(
            field,
            format!("{total} bytes; at most {MAX_FILE_CONTEXT_BYTES}"),
        ));
    }
    Ok(map
        .into_iter()
        .map(|(path, text)| (path.trim_start_matches("./").to_string(), text))
        .collect())
}

/// What the model said about one finding, beside what [`Finding`] holds.
#[derive(Debug)]
struct Said {
    priority: u8,
    category: ReviewCategory,
    body: String,
    suggestion: Option<Suggestion>,
}

/// The review of a parsed diff; the model client is built only when there is something to
/// review.
fn review_parsed(
    diff: &Diff,
    options: &Options,
    config: &ReviewConfig,
    workspace: &Path,
) -> Result<ChangesReview, RequestError> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    let selected: Vec<&FileDiff> = diff.files().iter().filter(|f| options.selects(f)).collect();
    let n_left_out = diff.files().len() - selected.len();
    if n_left_out > 0 {
        warnings.push(format!(
            "{n_left_out} file(s) of the diff not reviewed: excluded by exclude_patterns or not matched by include_patterns"
        ));
    }
    let (lines_added, lines_removed) = selected.iter().fold((0, 0), |(a, r), file| {
        let (added, removed) = file.line_counts();
        (a + added, r + removed)
    });
    let mut review = ChangesReview {
        findings: Vec::new(),
        overall_correctness: Correctness::Correct,
        overall_explanation: String::new(),
        overall_confidence_score: 0.0,
        changes_summary: ChangesSummary {
            files_changed: selected.len(),
            lines_added,
            lines_removed,
        },
        metadata: ChangesMetadata {
            reviewed_at: crate::clock::now_rfc3339(),
            review_duration_ms: 0,
            model_used: String::new(),
            api_key_env: None,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            findings_filtered: 0,
            confidence_threshold: options.confidence_threshold,
            categories_reviewed: if options.categories.is_empty() {
                ReviewCategory::ALL.to_vec()
            } else {
                options.categories.clone()
            },
            base_ref: options.base_ref.clone(),
        },
        warnings: Vec::new(),
        usage: Usage::default(),
    };
    if let Some(given) = &options.file_contexts {
        let unknown: Vec<&str> = given
            .keys()
            .filter(|path| !selected.iter().any(|f| f.new_path.as_deref() == Some(path)))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            warnings.push(format!(
                "file_contexts: {} path(s) not among the reviewed files were ignored: {}",
                unknown.len(),
                unknown.join(", ")
            ));
        }
    }
    // The model first: without one this review cannot review anything, and an empty diff
    // answered "patch is correct" would read as a verdict nobody gave.
    let client =
        LlmClient::from_config(&config.llm, workspace).map_err(RequestError::ModelRequired)?;
    let reviewable = selected
        .iter()
        .any(|f| !f.binary && f.status != FileStatus::Deleted && !f.hunks.is_empty());
    if !reviewable {
        review.overall_explanation = if selected.is_empty() {
            "Nothing to review: the diff has no files to review.".to_string()
        } else {
            "Nothing to review: the diff has no text changes to new or modified files.".to_string()
        };
        review.overall_confidence_score = 1.0;
        review.warnings = warnings;
        review.metadata.review_duration_ms = elapsed_ms(started);
        return Ok(review);
    }
    review.metadata.model_used = client.model().to_string();
    review.metadata.api_key_env = client.key_source().map(str::to_string);

    let (facts, _) = signals::compute(diff, &selected, &config.preflight);
    let ranked: Vec<RankedFile<'_>> = facts
        .iter()
        .map(|facts| RankedFile {
            file: facts.file,
            weight: passes::weight(facts),
        })
        .collect();
    let settings = &config.llm.passes;
    let custom = options
        .custom_instructions
        .as_deref()
        .or(settings.custom_instructions.as_deref());
    let system = passes::system_prompt(Pass::Complete, custom);
    let budget = (settings.token_budget as usize)
        .saturating_sub(estimate_tokens(&system) + 300)
        .max(500);
    let context = match &options.file_contexts {
        Some(given) => ContextSource::Given(given),
        None => ContextSource::Workspace(workspace),
    };
    let packed = passes::pack(
        diff,
        &ranked,
        context,
        settings.max_context_files as usize,
        budget,
    );
    if !packed.omitted.is_empty() {
        warnings.push(format!(
            "{} file(s) not sent to the model (over the token budget of {} per request, {} requests at most): {}",
            packed.omitted.len(),
            settings.token_budget,
            passes::sections::MAX_CHUNKS_PER_PASS,
            packed.omitted.join(", ")
        ));
    }
    if !packed.truncated.is_empty() {
        warnings.push(format!(
            "only part of {} was sent to the model (over the token budget)",
            packed.truncated.join(", ")
        ));
    }
    if !packed.context_mismatched.is_empty() {
        warnings.push(format!(
            "file_contexts of {} not used: the content does not match the diff's new side",
            packed.context_mismatched.join(", ")
        ));
    }

    let schema = passes::changes_schema();
    let answers = passes::ask_all(
        &client,
        &system,
        &packed.chunks,
        "review_changes",
        &schema,
        |i, n| {
            format!(
                "Review part {} of {n} of this change. Report your findings and your verdict on \
                 this part as JSON.",
                i + 1
            )
        },
    );
    let lines = DiffLines::new(diff);
    let mut findings = Vec::new();
    let mut said = Vec::new();
    let mut verdicts = Vec::new();
    let mut failures = Vec::new();
    let mut n_off_diff = 0usize;
    for (answer, spent) in answers {
        // Counted whatever the outcome: a failed call may have been billed.
        review.usage.add(&spent);
        match answer {
            Ok(answer) => {
                if !answer.model.is_empty() {
                    review.metadata.model_used = answer.model.clone();
                }
                for item in answer.value["findings"].as_array().into_iter().flatten() {
                    match to_finding(item, &lines, &packed.sent) {
                        Some((finding, what)) => {
                            findings.push(finding);
                            said.push(what);
                        }
                        None => n_off_diff += 1,
                    }
                }
                verdicts.push(Verdict::read(&answer.value));
            }
            Err(err) => {
                let reason = format!("{err} ({})", err.code());
                warnings.push(format!(
                    "the model failed on part of the change: {reason}; its findings are missing"
                ));
                failures.push(reason);
            }
        }
    }
    review.usage.cost_usd = client.estimate_cost(&review.usage);
    if n_off_diff > 0 {
        warnings.push(format!(
            "{n_off_diff} model finding(s) pointed outside the diff (a file not reviewed or a line not in a hunk) and were dropped"
        ));
    }

    let verdict = Verdict::combine(&verdicts, &failures, &packed.omitted, &packed.truncated);
    review.overall_correctness = verdict.correctness;
    review.overall_explanation = verdict.explanation;
    review.overall_confidence_score = verdict.confidence;

    let n_verified = findings.len();
    let unique = with_identities(findings, said);
    let n_merged = n_verified - unique.len();
    let (kept, n_filtered) = filter::apply(unique, options);
    review.findings = kept;
    // Merged repeats count as filtered, so found = returned + filtered (off-diff aside).
    review.metadata.findings_filtered = n_filtered + n_merged;
    review.warnings = warnings;
    review.metadata.review_duration_ms = elapsed_ms(started);
    Ok(review)
}

/// Fingerprints the findings and turns them into [`ReviewFinding`]s. Repeats of one finding
/// (same category, same place) are merged into the first, which takes the highest priority and
/// confidence of the repeats.
fn with_identities(mut findings: Vec<Finding>, said: Vec<Said>) -> Vec<ReviewFinding> {
    assign_identities(&mut findings);
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut kept: Vec<ReviewFinding> = Vec::new();
    for (finding, said) in findings.into_iter().zip(said) {
        if let Some(&i) = index_of.get(&finding.fingerprint) {
            let first = &mut kept[i];
            first.priority = first.priority.min(said.priority);
            first.confidence_score = first.confidence_score.max(finding.confidence);
            continue;
        }
        index_of.insert(finding.fingerprint.clone(), kept.len());
        kept.push(ReviewFinding {
            id: finding.id,
            title: finding.title,
            body: said.body,
            confidence_score: finding.confidence,
            priority: said.priority,
            category: said.category,
            code_location: CodeLocation {
                file_path: finding.location.file,
                line_range: LineRange {
                    start: finding.location.start_line,
                    end: finding.location.end_line,
                },
            },
            suggestion: said.suggestion,
            is_on_changed_line: finding.on_changed_line,
        });
    }
    kept
}

/// A model's finding, when its location is in the diff: the shared [`Finding`] (for the
/// fingerprint) and the rest of what the model said. Model text is scrubbed again: a model may
/// echo a secret it was never shown in full.
fn to_finding(item: &Value, lines: &DiffLines, sent: &[String]) -> Option<(Finding, Said)> {
    let verified = lines.verify(
        sent,
        item["file"].as_str().unwrap_or_default(),
        item["start_line"].as_i64().unwrap_or(0),
        item["end_line"].as_i64(),
    )?;
    let category = ReviewCategory::parse(item["category"].as_str()?)?;
    let priority = u8::try_from(item["priority"].as_u64()?)
        .ok()
        .filter(|p| *p <= 3)?;
    let title = text(&item["title"], 200);
    let title = if title.is_empty() {
        "Model review finding".to_string()
    } else {
        truncate_title(&title)
    };
    let suggestion = item.get("suggestion").filter(|s| s.is_object()).map(|s| {
        let snippet = s["code_snippet"]
            .as_str()
            .map(|code| crate::secrets::scrub(code, 0, 0).text)
            .filter(|code| !code.trim().is_empty());
        Suggestion {
            description: text(&s["description"], 2000),
            can_auto_fix: snippet.is_some() && s["can_auto_fix"].as_bool().unwrap_or(false),
            code_snippet: snippet,
        }
    });
    let finding = Finding::new(
        format!("llm/{}", category.as_str()),
        severity_of(priority),
        category.category(),
        Source::Llm,
        title,
        Location {
            file: verified.path,
            start_line: verified.start_line,
            end_line: verified.end_line,
            start_column: None,
            end_column: None,
        },
    )
    .with_confidence(item["confidence_score"].as_f64().unwrap_or(0.0))
    .with_anchor(verified.anchor)
    .on_changed_line(verified.on_changed_line);
    Some((
        finding,
        Said {
            priority,
            category,
            body: text(&item["body"], 4000),
            suggestion,
        },
    ))
}

/// The model's text, cut to `max` characters, trimmed and scrubbed.
fn text(value: &Value, max: usize) -> String {
    let raw: String = value
        .as_str()
        .unwrap_or_default()
        .chars()
        .take(max)
        .collect();
    crate::secrets::scrub(raw.trim(), 0, 0).text
}

/// At most [`MAX_TITLE_CHARS`] characters, an ellipsis marking a cut.
fn truncate_title(title: &str) -> String {
    if title.chars().count() <= MAX_TITLE_CHARS {
        return title.to_string();
    }
    let mut cut: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// Priorities as the shared severities, so a finding's fingerprint and rule read the same
/// everywhere.
fn severity_of(priority: u8) -> Severity {
    match priority {
        0 => Severity::Critical,
        1 => Severity::High,
        2 => Severity::Medium,
        _ => Severity::Low,
    }
}

/// One answer's verdict, or the verdict on the whole change.
#[derive(Debug)]
struct Verdict {
    correctness: Correctness,
    explanation: String,
    confidence: f64,
}

impl Verdict {
    fn read(value: &Value) -> Verdict {
        let correctness = match value["overall_correctness"].as_str() {
            Some("patch is correct") => Correctness::Correct,
            Some("patch is incorrect") => Correctness::Incorrect,
            _ => Correctness::NeedsAttention,
        };
        Verdict {
            correctness,
            explanation: text(&value["overall_explanation"], 4000),
            confidence: value["overall_confidence_score"]
                .as_f64()
                .unwrap_or(0.0)
                .clamp(0.0, 1.0),
        }
    }

    /// The worst verdict of the parts; a change reviewed only in part is never `correct`.
    fn combine(
        parts: &[Verdict],
        failures: &[String],
        omitted: &[String],
        truncated: &[String],
    ) -> Verdict {
        if parts.is_empty() {
            return Verdict {
                correctness: Correctness::NeedsAttention,
                explanation: format!(
                    "The model review failed, so the change was not reviewed: {}",
                    failures.join("; ")
                ),
                confidence: 0.0,
            };
        }
        let rank = |c: Correctness| match c {
            Correctness::Correct => 0,
            Correctness::NeedsAttention => 1,
            Correctness::Incorrect => 2,
        };
        let mut correctness = parts
            .iter()
            .map(|part| part.correctness)
            .max_by_key(|c| rank(*c))
            .unwrap_or(Correctness::NeedsAttention);
        let mut explanation = if parts.len() == 1 {
            parts[0].explanation.clone()
        } else {
            parts
                .iter()
                .enumerate()
                .map(|(i, part)| format!("Part {}: {}", i + 1, part.explanation))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let partial = !failures.is_empty() || !omitted.is_empty() || !truncated.is_empty();
        if partial && correctness == Correctness::Correct {
            correctness = Correctness::NeedsAttention;
            explanation.push_str(
                "\n(Only part of the change was reviewed; see warnings: the rest may hide problems.)",
            );
        }
        Verdict {
            correctness,
            explanation,
            confidence: parts.iter().map(|part| part.confidence).fold(1.0, f64::min),
        }
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
