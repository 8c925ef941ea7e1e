//! What one step does: the real review pipeline on the step's part of the `base..head` diff.
//!
//! The diff is read from git once per run of a session (from the commits pinned when the session
//! was created, so a moved branch never changes what a session reviews) and each step gets the
//! exact text of its files' sections. Whole-PR rules (`TG001` tests not touched, `TG007` large
//! change) would judge a part as if it were the whole, so file steps run with them off and one
//! `pr` step runs only them, on the whole diff.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use crate::config::{ReviewConfig, RuleOverride};
use crate::diff::Diff;
use crate::findings::Finding;
use crate::findings::ReviewResult;
use crate::review::{self, DiffInput, GateFiles, ReviewRequest};
use crate::session::record::{StepRecord, StepUsage};

/// Rules that judge a pull request as a whole.
pub(crate) const PR_LEVEL_RULES: [&str; 2] = ["TG001", "TG007"];

/// The step kinds as stored.
pub(crate) const KIND_PR: &str = "pr";
pub(crate) const KIND_FILES: &str = "files";

/// What a step produced.
#[derive(Debug)]
pub(crate) struct StepReport {
    pub(crate) findings: Vec<Finding>,
    pub(crate) usage: StepUsage,
    /// Why the gate failed on this step's review; empty when it passed.
    pub(crate) gate_reasons: Vec<String>,
}

/// Runs steps; implemented by the pipeline (and by scripted executors in tests).
pub(crate) trait StepExecutor: Sync {
    /// Reviews one step; the error is the reason shown when the step fails for good.
    fn run(&self, step: &StepRecord) -> Result<StepReport, String>;
}

/// The review pipeline over a session's diff.
pub(crate) struct PipelineExecutor<'a> {
    workspace: &'a Path,
    base_sha: &'a str,
    diff: Diff,
    /// Byte offset of every line start of the diff text (plus its end).
    line_starts: Vec<usize>,
    files_config: ReviewConfig,
    pr_config: ReviewConfig,
}

impl<'a> PipelineExecutor<'a> {
    pub(crate) fn new(
        workspace: &'a Path,
        base_sha: &'a str,
        diff: Diff,
        config: &ReviewConfig,
    ) -> PipelineExecutor<'a> {
        let bytes = diff.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        if line_starts.last() != Some(&bytes.len()) {
            line_starts.push(bytes.len());
        }
        // Every finding of a step is kept: the session dedupes across steps and its readers
        // apply their own caps.
        let mut files_config = config.clone();
        files_config.max_findings = usize::MAX;
        for rule in PR_LEVEL_RULES {
            disable(&mut files_config, rule);
        }
        let mut pr_config = files_config.clone();
        for rule in review::builtin_rules() {
            let keep = PR_LEVEL_RULES.contains(&rule.id.as_str())
                && config
                    .rule_overrides
                    .get(&rule.id)
                    .is_none_or(|o| o.enabled);
            match config.rule_overrides.get(&rule.id) {
                Some(original) if keep => {
                    pr_config
                        .rule_overrides
                        .insert(rule.id.clone(), original.clone());
                }
                _ if keep => {
                    pr_config.rule_overrides.remove(&rule.id);
                }
                _ => disable(&mut pr_config, &rule.id),
            }
        }
        pr_config.invariants.paths.clear();
        pr_config.analyzers.enabled.clear();
        pr_config.analyzers.import_sarif.clear();
        PipelineExecutor {
            workspace,
            base_sha,
            diff,
            line_starts,
            files_config,
            pr_config,
        }
    }

    /// The diff text of the files named in `paths` (by new or old path), in diff order.
    fn part(&self, paths: &[String]) -> Vec<u8> {
        let bytes = self.diff.as_bytes();
        let files = self.diff.files();
        let mut out = Vec::new();
        for (idx, file) in files.iter().enumerate() {
            let wanted = paths.iter().any(|p| {
                file.new_path.as_deref() == Some(p.as_str())
                    || file.old_path.as_deref() == Some(p.as_str())
            });
            if !wanted {
                continue;
            }
            let start_line = file.diff_line.saturating_sub(1);
            let end_line = files
                .get(idx + 1)
                .map_or(self.line_starts.len() - 1, |next| {
                    next.diff_line.saturating_sub(1)
                });
            let start = self.line_starts[start_line.min(self.line_starts.len() - 1)];
            let end = self.line_starts[end_line.min(self.line_starts.len() - 1)];
            out.extend_from_slice(&bytes[start..end.max(start)]);
        }
        out
    }
}

impl StepExecutor for PipelineExecutor<'_> {
    fn run(&self, step: &StepRecord) -> Result<StepReport, String> {
        let (text, config) = if step.kind == KIND_PR {
            (self.diff.as_bytes().to_vec(), &self.pr_config)
        } else {
            (self.part(&step.files), &self.files_config)
        };
        let request = ReviewRequest {
            workspace: self.workspace,
            diff: DiffInput::Text(text),
            config,
            changed_files: None,
        };
        // The pull request is judged by its base's invariants and baseline, as in CI.
        let gate_files = GateFiles::Commit(self.base_sha.to_string());
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            review::run_with_gate_files(request, &gate_files)
        }))
        .map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            format!("the review pipeline panicked: {message}")
        })?
        .map_err(|err| format!("{} ({})", err, err.code()))?;
        let result = outcome.result;
        let mut gate_reasons = result.fail_reasons.clone();
        if result.should_fail && gate_reasons.is_empty() {
            gate_reasons.push("the gate failed without giving a reason".to_string());
        }
        Ok(StepReport {
            usage: step_usage(&result),
            findings: result.findings,
            gate_reasons,
        })
    }
}

/// What the step's model passes used, as the review reported it (zero without model passes).
fn step_usage(result: &ReviewResult) -> StepUsage {
    let llm = result.llm.as_ref();
    StepUsage {
        llm_passes: result.stats.llm_passes_executed as u64,
        input_tokens: llm.map_or(0, |l| l.input_tokens),
        output_tokens: llm.map_or(0, |l| l.output_tokens),
        cost_usd: llm.and_then(|l| l.cost_usd).unwrap_or(0.0),
        cache_hits: llm.map_or(0, |l| u64::from(l.cached_calls)),
    }
}

fn disable(config: &mut ReviewConfig, rule: &str) {
    config
        .rule_overrides
        .entry(rule.to_string())
        .and_modify(|o| o.enabled = false)
        .or_insert(RuleOverride {
            enabled: false,
            severity: None,
        });
}
