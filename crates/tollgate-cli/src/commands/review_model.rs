//! `tollgate review-changes`, `tollgate review-git` and `tollgate review-auto`: the core's
//! model reviews (`review_changes`, `review_git_diff`) and the chooser between `review_diff` and
//! `review_git_diff` (`review_auto`), printed as JSON or a short summary.

use std::io::Write;

use anyhow::Context;
use tollgate::api::review::{
    self, AutoOutput, AutoTool, ChangesReview, Correctness, FileContexts, ReviewAutoRequest,
    ReviewChangesOptions, ReviewChangesRequest, ReviewGitDiffRequest, StringList,
};
use tollgate::config::{self, RawConfig};
use tollgate::input::{DEFAULT_MAX_INPUT_BYTES, Limit};

use super::ExitStatus;
use crate::args::{ModelReviewArgs, ReviewAutoArgs, ReviewChangesArgs, ReviewGitArgs};

pub fn changes(args: ReviewChangesArgs) -> anyhow::Result<ExitStatus> {
    let diff = read_diff(&args.diff)?;
    let file_contexts = match &args.file_contexts {
        Some(path) => Some(FileContexts::Json(
            String::from_utf8(tollgate::input::read_file(
                path,
                "--file-contexts file",
                Limit::max_input(DEFAULT_MAX_INPUT_BYTES),
            )?)
            .with_context(|| format!("--file-contexts {} is not UTF-8", path.display()))?,
        )),
        None => None,
    };
    let request = ReviewChangesRequest {
        diff,
        options: ReviewChangesOptions {
            file_contexts,
            base_ref: args.base_ref.clone(),
            ..options(&args.review)
        },
    };
    let settings = settings(&args.review)?;
    let review = review::review_changes(&args.review.repo, settings, &request)
        .map_err(|err| anyhow::anyhow!("{err} [{}]", err.code()))?;
    let json = serde_json::to_value(&review)?;
    finish(&args.review, &review, &json)
}

pub fn git(args: ReviewGitArgs) -> anyhow::Result<ExitStatus> {
    let request = ReviewGitDiffRequest {
        target: args.target.clone(),
        base: args.base.clone(),
        include_patterns: args.include.clone(),
        options: options(&args.review),
    };
    let settings = settings(&args.review)?;
    let response = review::review_git_diff(&args.review.repo, settings, &request)
        .map_err(|err| anyhow::anyhow!("{err} [{}]", err.code()))?;
    let json = serde_json::to_value(&response)?;
    if !args.review.quiet {
        eprintln!(
            "tollgate: reviewed {} ({}): {} of {} file(s), {} bytes of diff",
            response.git_info.target,
            response.git_info.compared,
            response.git_info.files_changed,
            response.git_info.files_in_diff,
            response.git_info.diff_bytes
        );
    }
    finish(&args.review, &response.review, &json)
}

pub fn auto(args: ReviewAutoArgs) -> anyhow::Result<ExitStatus> {
    let tool = match args.tool.as_str() {
        "review_diff" => AutoTool::ReviewDiff,
        "review_git_diff" => AutoTool::ReviewGitDiff,
        _ => AutoTool::Auto,
    };
    let diff = args.diff.as_deref().map(read_diff).transpose()?;
    let request = ReviewAutoRequest {
        tool,
        diff,
        changed_files: args.changed_files.clone(),
        review_diff_options: None,
        target: args.target.clone(),
        base: args.base.clone(),
        include_patterns: args.include.clone(),
        review_git_diff_options: Some(options(&args.review)),
    };
    let settings = settings(&args.review)?;
    let response = review::review_auto(&args.review.repo, settings, &request)
        .map_err(|err| anyhow::anyhow!("{err} [{}]", err.code()))?;
    if !args.review.quiet {
        eprintln!(
            "tollgate: {} — {}",
            response.selected_tool, response.rationale
        );
    }
    match &response.output {
        AutoOutput::ReviewGitDiff(git) if args.review.text => {
            finish(&args.review, &git.review, &serde_json::Value::Null)
        }
        output => {
            let mut stdout = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut stdout, &response)?;
            writeln!(stdout)?;
            stdout.flush()?;
            // The verdict of whichever review ran decides the exit, as for the review itself.
            Ok(match output {
                AutoOutput::ReviewDiff(diff) if diff.result.should_fail => ExitStatus::GateFailed,
                AutoOutput::ReviewGitDiff(git)
                    if git.review.overall_correctness == Correctness::Incorrect =>
                {
                    ExitStatus::GateFailed
                }
                _ => ExitStatus::Pass,
            })
        }
    }
}

fn options(args: &ModelReviewArgs) -> ReviewChangesOptions {
    let list = |items: &[String]| (!items.is_empty()).then(|| StringList::List(items.to_vec()));
    ReviewChangesOptions {
        file_contexts: None,
        base_ref: None,
        confidence_threshold: args.filters.confidence_threshold,
        max_findings: args.filters.max_findings,
        categories: list(args.filters.categories.as_deref().unwrap_or_default()),
        changed_lines_only: args.all_lines.then_some(false),
        custom_instructions: args.instructions.clone(),
        exclude_patterns: list(&args.exclude),
    }
}

/// The configuration layers under the request: the file, the environment, the model flags.
fn settings(args: &ModelReviewArgs) -> anyhow::Result<RawConfig> {
    let flags = RawConfig {
        llm: super::model_flags(&args.model, None),
        ..RawConfig::default()
    };
    Ok(config::load(
        super::config_file(args.config.as_deref(), &args.repo),
        super::store::env(),
        flags,
    )?)
}

/// Prints the result (`json` is what stdout gets unless `--text`); a `patch is incorrect`
/// verdict fails like the gate.
fn finish(
    args: &ModelReviewArgs,
    review: &ChangesReview,
    json: &serde_json::Value,
) -> anyhow::Result<ExitStatus> {
    let mut stdout = std::io::stdout().lock();
    if args.text {
        writeln!(
            stdout,
            "{}: {}",
            review.overall_correctness.as_str(),
            review.overall_explanation
        )?;
        for finding in &review.findings {
            writeln!(
                stdout,
                "  P{} {}:{} [{}] {}",
                finding.priority,
                finding.code_location.file_path,
                finding.code_location.line_range.start,
                finding.category.as_str(),
                finding.title
            )?;
        }
    } else {
        serde_json::to_writer_pretty(&mut stdout, json)?;
        writeln!(stdout)?;
    }
    stdout.flush()?;
    if !args.quiet {
        for warning in &review.warnings {
            eprintln!("warning: {warning}");
        }
        eprintln!(
            "tollgate: {} ({} finding(s), {} filtered)",
            review.overall_correctness.as_str(),
            review.findings.len(),
            review.metadata.findings_filtered
        );
    }
    Ok(match review.overall_correctness {
        Correctness::Incorrect => ExitStatus::GateFailed,
        Correctness::Correct | Correctness::NeedsAttention => ExitStatus::Pass,
    })
}

/// The diff as text: the model reviews take JSON strings, so the bytes must be UTF-8.
fn read_diff(source: &str) -> anyhow::Result<String> {
    let bytes = super::review::read_diff(source, DEFAULT_MAX_INPUT_BYTES)?;
    String::from_utf8(bytes).map_err(|err| {
        anyhow::anyhow!(
            "the diff from {source} is not UTF-8 text (invalid byte at offset {})",
            err.utf8_error().valid_up_to()
        )
    })
}
