//! semgrep on the changed files, with local rules, JSON output.
//!
//! Always `--metrics=off --disable-version-check` (without a network, semgrep otherwise waits
//! about 100 s on its version check and metrics upload, and metrics would send facts about the
//! code away), `--json`, the configured rule sources, then `--` and the changed files in batches.
//! `--json` drops results suppressed with `nosemgrep`, and any result marked `is_ignored` is
//! dropped too. Severities go through the configured table (ERROR is HIGH by default: it fails the
//! default gate only on a changed line, as an analyzer error); a rule's `fix` becomes the finding's suggested
//! fix, spliced into the whole lines it replaces. Exit codes 0 and 1 mean semgrep ran; any other
//! code with errors in its JSON (a missing or invalid rule file is exit 7) is a failure with
//! semgrep's own message.

use serde_json::Value;

use super::discover;
use super::orchestrate::{ToolContext, ToolRun, describe_exit, stderr_warnings};
use super::workspace::SourceFiles;
use crate::findings::{
    AnalyzerStatus, Applicability, Category, Finding, Location, Severity, Source, SuggestedFix,
};
use crate::process::{self, Exit, ToolCommand};
use crate::workspace::{Workspace, changed_file};

/// Rule sources used when none is configured, when present in the workspace root.
const DEFAULT_RULE_SOURCES: &[&str] = &[".semgrep.yml", ".semgrep.yaml", ".semgrep"];
const DEFAULT_CONFIDENCE: f64 = 0.85;
/// semgrep errors reported as warnings, per batch.
const MAX_ERRORS_REPORTED: usize = 10;

pub(crate) fn run(ctx: &ToolContext<'_>) -> ToolRun {
    let mut run = ToolRun::new("semgrep");
    let settings = &ctx.config.semgrep;
    let root = ctx.workspace.root();

    let rules: Vec<String> = if settings.rules.is_empty() {
        DEFAULT_RULE_SOURCES
            .iter()
            .filter(|name| root.join(name).exists())
            .map(|name| name.to_string())
            .collect()
    } else {
        settings.rules.clone()
    };
    for rule in &settings.rules {
        if let Err(reason) = check_rule_source(ctx.workspace, rule) {
            return run.with_status(
                AnalyzerStatus::Failed,
                format!("rule source `{rule}` is unusable: {reason}"),
            );
        }
    }
    let args_name_config = settings
        .args
        .iter()
        .any(|arg| arg == "--config" || arg == "-c" || arg.starts_with("--config="));
    if rules.is_empty() && !args_name_config {
        return run.with_status(
            AnalyzerStatus::Skipped,
            "no semgrep rules configured: set [analyzers.semgrep] rules, or add .semgrep.yml"
                .into(),
        );
    }
    if ctx.files.is_empty() {
        // Scanning the whole workspace by default would be slow and noisy (upstream does the same).
        return run.with_status(
            AnalyzerStatus::Skipped,
            "no changed files to scan".to_string(),
        );
    }
    let tool = match discover::discover(
        "semgrep",
        settings.path.as_deref(),
        root,
        ctx.config.search_path.as_deref(),
    ) {
        Ok(tool) => tool,
        Err(reason) => return run.with_status(AnalyzerStatus::Unavailable, reason),
    };
    run.found(&tool);

    let mut base = ToolCommand::new(&tool.path, root)
        .args([
            "scan",
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--quiet",
        ])
        // Belt and braces for versions that read these before their flags.
        .env("SEMGREP_SEND_METRICS", "off")
        .env("SEMGREP_ENABLE_VERSION_CHECK", "0");
    for rule in &rules {
        base = base.arg("--config").arg(rule);
    }
    base = base.args(settings.args.iter());

    let batches: Vec<&[String]> = ctx.files.chunks(settings.batch_size).collect();
    if batches.len() > 1 {
        run.report.warnings.push(format!(
            "semgrep: {} files scanned in {} batches of at most {}",
            ctx.files.len(),
            batches.len(),
            settings.batch_size
        ));
    }
    let mut sources = SourceFiles::new(ctx.workspace);
    for (idx, batch) in batches.iter().enumerate() {
        if process::remaining(ctx.deadline).is_none() {
            run.set_status(
                AnalyzerStatus::TimedOut,
                format!(
                    "the time budget ran out after {idx} of {} batches",
                    batches.len()
                ),
            );
            break;
        }
        let command = base.clone().arg("--").args(batch.iter());
        let Some(output) = ctx.execute(&command, &mut run) else {
            return run;
        };
        run.report.warnings.extend(stderr_warnings(
            "semgrep",
            &output.stderr,
            output.stderr_truncated,
        ));
        let code = match output.exit {
            Exit::Cancelled => {
                run.set_status(
                    AnalyzerStatus::Cancelled,
                    "semgrep was stopped: the review was cancelled".to_string(),
                );
                break;
            }
            Exit::TimedOut => {
                run.set_status(
                    AnalyzerStatus::TimedOut,
                    format!(
                        "semgrep ran past its time limit (batch {} of {}) and its process tree was killed",
                        idx + 1,
                        batches.len()
                    ),
                );
                break;
            }
            Exit::Signal(_) => {
                run.set_status(
                    AnalyzerStatus::Failed,
                    format!("semgrep {}", describe_exit(output.exit)),
                );
                break;
            }
            Exit::Code(code) => code,
        };
        let json: Value = match serde_json::from_slice(&output.stdout) {
            Ok(json) => json,
            Err(err) => {
                let why = if output.stdout_truncated {
                    format!(
                        "its JSON output exceeded max_output_bytes ({} bytes)",
                        ctx.config.max_output_bytes
                    )
                } else {
                    format!("its output is not JSON ({err})")
                };
                run.set_status(
                    AnalyzerStatus::Failed,
                    format!("semgrep {} and {why}", describe_exit(output.exit)),
                );
                break;
            }
        };
        if run.report.version.is_none() {
            run.report.version = json["version"].as_str().map(str::to_string);
        }
        let errors = json["errors"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        for error in errors.iter().take(MAX_ERRORS_REPORTED) {
            run.report.warnings.push(describe_error(error));
        }
        if errors.len() > MAX_ERRORS_REPORTED {
            run.report.warnings.push(format!(
                "semgrep: … {} more errors",
                errors.len() - MAX_ERRORS_REPORTED
            ));
        }
        if code != 0 && code != 1 {
            let message = errors
                .iter()
                .find(|e| e["level"] == "error")
                .or(errors.first())
                .and_then(|e| e["message"].as_str())
                .map(|m| one_line(m, 300))
                .unwrap_or_else(|| "no error message".to_string());
            run.set_status(
                AnalyzerStatus::Failed,
                format!("semgrep {}: {message}", describe_exit(output.exit)),
            );
            break;
        }
        for result in json["results"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            if result["extra"]["is_ignored"] == true {
                continue;
            }
            run.report.findings_reported += 1;
            match finding(ctx, result, &mut sources) {
                Some(finding) => run.findings.push(finding),
                None => run.outside_workspace += 1,
            }
        }
    }
    run
}

/// A rule source from the configuration: a relative path that exists and resolves, symlinks
/// included, inside the workspace (semgrep reads it).
fn check_rule_source(workspace: &Workspace, rule: &str) -> Result<(), String> {
    let path = changed_file(rule).map_err(|err| err.reason())?;
    workspace
        .resolve(&path)
        .map(drop)
        .map_err(|err| err.reason())
}

/// One semgrep result as a finding; `None` when its path lies outside the workspace or it has
/// no position.
fn finding(
    ctx: &ToolContext<'_>,
    result: &Value,
    sources: &mut SourceFiles<'_>,
) -> Option<Finding> {
    let settings = &ctx.config.semgrep;
    let path = ctx
        .workspace
        .relative(result["path"].as_str()?, "")
        .ok()?
        .as_str()
        .to_string();
    let check_id = result["check_id"].as_str().unwrap_or("unknown");
    let extra = &result["extra"];
    let start_line = position(&result["start"], "line")?;
    let end_line = position(&result["end"], "line")
        .unwrap_or(start_line)
        .max(start_line);

    let severity_name = extra["severity"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_uppercase();
    let severity = settings
        .severity_map
        .get(&severity_name)
        .copied()
        .unwrap_or(Severity::Medium);
    let metadata = &extra["metadata"];
    let category = metadata["category"]
        .as_str()
        .and_then(category_of)
        .unwrap_or(settings.category);
    let confidence = match metadata["confidence"].as_str().map(str::to_ascii_uppercase) {
        Some(c) if c == "HIGH" => 0.9,
        Some(c) if c == "MEDIUM" => 0.75,
        Some(c) if c == "LOW" => 0.5,
        _ => DEFAULT_CONFIDENCE,
    };
    let message = extra["message"]
        .as_str()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(check_id);

    let location = Location {
        file: path.clone(),
        start_line,
        end_line,
        start_column: position(&result["start"], "col"),
        end_column: position(&result["end"], "col"),
    };
    let mut finding = Finding::new(
        format!("semgrep/{check_id}"),
        severity,
        category,
        Source::Semgrep,
        one_line(message, 200),
        location,
    )
    .with_confidence(confidence)
    .with_message(message)
    .with_evidence(format!(
        "semgrep rule {check_id} ({})",
        if severity_name.is_empty() {
            "no severity"
        } else {
            &severity_name
        }
    ))
    .with_impact("A semgrep rule of this project matched the changed code.")
    .with_recommendation(
        "Fix the code, or suppress this occurrence with a `nosemgrep` comment that says why.",
    );
    if let Some(reference) = metadata["references"]
        .as_array()
        .and_then(|refs| refs.first())
        .and_then(Value::as_str)
        .or_else(|| metadata["source"].as_str())
    {
        finding = finding.with_evidence(format!("reference: {reference}"));
    }
    if let Some(fix) = extra["fix"].as_str() {
        let replacement = splice_fix(sources, &path, result, fix);
        finding = finding.with_fix(SuggestedFix {
            description: format!(
                "semgrep autofix: replace the match with `{}`",
                one_line(fix, 120)
            ),
            replacement,
            // Autofixes are pattern rewrites: worth offering, never applied unseen.
            applicability: Applicability::Unsafe,
        });
    }
    Some(finding)
}

/// The whole lines of the match with `fix` put in place of the matched bytes: the form
/// [`SuggestedFix::replacement`] takes. `None` when the file cannot be read or the offsets do
/// not fit it.
fn splice_fix(
    sources: &mut SourceFiles<'_>,
    path: &str,
    result: &Value,
    fix: &str,
) -> Option<String> {
    let start = usize::try_from(result["start"]["offset"].as_u64()?).ok()?;
    let end = usize::try_from(result["end"]["offset"].as_u64()?).ok()?;
    let start_line = position(&result["start"], "line")?;
    let end_line = position(&result["end"], "line")?;
    let text = sources.get(path)?;
    let first = text.line_range(start_line)?;
    let last = text.line_range(end_line)?;
    if !(first.start <= start && start <= end && end <= last.end) {
        return None;
    }
    let bytes = text.bytes();
    let mut spliced = Vec::with_capacity(last.end - first.start + fix.len());
    spliced.extend_from_slice(&bytes[first.start..start]);
    spliced.extend_from_slice(fix.as_bytes());
    spliced.extend_from_slice(&bytes[end..last.end]);
    String::from_utf8(spliced).ok()
}

fn position(value: &Value, key: &str) -> Option<u32> {
    value[key]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// semgrep's metadata categories onto Tollgate's.
fn category_of(name: &str) -> Option<Category> {
    match name.to_ascii_lowercase().as_str() {
        "security" => Some(Category::Security),
        "correctness" => Some(Category::Correctness),
        "performance" => Some(Category::Performance),
        "maintainability" | "best-practice" | "best-practices" => Some(Category::Maintainability),
        "portability" | "reliability" => Some(Category::Reliability),
        "style" => Some(Category::Style),
        _ => None,
    }
}

fn describe_error(error: &Value) -> String {
    let level = error["level"].as_str().unwrap_or("error");
    let kind = error["type"].as_str().unwrap_or("error");
    let message = error["message"]
        .as_str()
        .map(|m| one_line(m, 300))
        .unwrap_or_default();
    match error["path"].as_str() {
        Some(path) => format!("semgrep {level}: {kind} in {path}: {message}"),
        None => format!("semgrep {level}: {kind}: {message}"),
    }
}

/// The text on one line, shortened to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > max {
        let mut short: String = joined.chars().take(max.saturating_sub(1)).collect();
        short.push('…');
        short
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::config::AnalyzersConfig;

    fn context<'a>(
        workspace: &'a Workspace,
        config: &'a AnalyzersConfig,
        files: &'a [String],
    ) -> ToolContext<'a> {
        ToolContext {
            workspace,
            config,
            files,
            whole_workspace: false,
            deadline: Instant::now(),
            stop: &NEVER,
        }
    }

    static NEVER: std::sync::LazyLock<crate::control::Control> =
        std::sync::LazyLock::new(crate::control::Control::default);

    fn result(json: &str) -> Value {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn results_become_findings_with_mapped_severity_and_spliced_fix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/app.js"),
            "const a = 1;\neval(userInput);\nif (a == 2) { go(); }\n",
        )
        .unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let config = AnalyzersConfig::default();
        let files = vec!["src/app.js".to_string()];
        let ctx = context(&workspace, &config, &files);
        let mut sources = SourceFiles::new(&workspace);

        let eval = finding(
            &ctx,
            &result(
                r#"{"check_id": "rules.no-eval", "path": "src/app.js",
                    "start": {"line": 2, "col": 1, "offset": 13}, "end": {"line": 2, "col": 16, "offset": 28},
                    "extra": {"message": "Do not call eval on userInput", "severity": "ERROR",
                              "metadata": {"category": "security", "confidence": "HIGH"}, "lines": "requires login"}}"#,
            ),
            &mut sources,
        )
        .unwrap();
        assert_eq!(eval.rule_id, "semgrep/rules.no-eval");
        assert_eq!(eval.severity, Severity::High, "ERROR is HIGH, not CRITICAL");
        assert_eq!(eval.category, Category::Security);
        assert_eq!(eval.confidence, 0.9);
        assert_eq!(
            (
                eval.location.start_line,
                eval.location.start_column,
                eval.location.end_column
            ),
            (2, Some(1), Some(16))
        );
        assert!(eval.suggested_fix.is_none());

        let equality = finding(
            &ctx,
            &result(
                r#"{"check_id": "rules.strict-eq", "path": "src/app.js",
                    "start": {"line": 3, "col": 5, "offset": 34}, "end": {"line": 3, "col": 11, "offset": 40},
                    "extra": {"message": "Use ===", "severity": "WARNING", "fix": "a === 2", "metadata": {}}}"#,
            ),
            &mut sources,
        )
        .unwrap();
        assert_eq!(equality.severity, Severity::Medium);
        assert_eq!(
            equality.category,
            Category::Security,
            "the configured default"
        );
        let fix = equality.suggested_fix.unwrap();
        assert_eq!(fix.replacement.as_deref(), Some("if (a === 2) { go(); }"));
        assert_eq!(fix.applicability, Applicability::Unsafe);

        // Outside the workspace, or without a position: not a finding.
        assert!(
            finding(
                &ctx,
                &result(r#"{"check_id": "x", "path": "../x.js", "start": {"line": 1}}"#),
                &mut sources
            )
            .is_none()
        );
        assert!(
            finding(
                &ctx,
                &result(r#"{"check_id": "x", "path": "src/app.js", "start": {}}"#),
                &mut sources
            )
            .is_none()
        );
    }

    #[test]
    fn fixes_that_do_not_fit_the_file_are_display_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.js"), "x == y\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let mut sources = SourceFiles::new(&workspace);
        let stale =
            result(r#"{"start": {"line": 1, "offset": 0}, "end": {"line": 1, "offset": 99}}"#);
        assert_eq!(splice_fix(&mut sources, "a.js", &stale, "z"), None);
        let good =
            result(r#"{"start": {"line": 1, "offset": 0}, "end": {"line": 1, "offset": 6}}"#);
        assert_eq!(
            splice_fix(&mut sources, "a.js", &good, "x === y").as_deref(),
            Some("x === y")
        );
    }

    #[test]
    fn rule_sources_must_exist_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rules.yml"), "rules: []\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        assert_eq!(check_rule_source(&workspace, "rules.yml"), Ok(()));
        assert!(check_rule_source(&workspace, "missing.yml").is_err());
        assert!(check_rule_source(&workspace, "../rules.yml").is_err());
        assert!(check_rule_source(&workspace, "--config=auto").is_err());
    }

    #[test]
    fn errors_read_as_one_line() {
        let error = result(
            r#"{"level": "warn", "type": "Syntax error", "path": "src/a.js", "message": "Syntax error at line 1:\n `x` was unexpected"}"#,
        );
        assert_eq!(
            describe_error(&error),
            "semgrep warn: Syntax error in src/a.js: Syntax error at line 1: `x` was unexpected"
        );
        assert_eq!(one_line("a\n b", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
