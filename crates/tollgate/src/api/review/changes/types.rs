//! The public shapes of `review_changes`, `review_git_diff` and `review_auto`: upstream's field
//! names (`ReviewResult`, `ReviewFinding`), plus Tollgate's `warnings` and `usage`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::review::{
    MAX_FINDINGS_LIMIT, MAX_INSTRUCTIONS_CHARS, ReviewDiffOptions, ReviewDiffResponse,
};
use crate::findings::Category;
use crate::llm::Usage;

/// The most glob patterns `exclude_patterns` or `include_patterns` may hold.
pub const MAX_PATTERNS: usize = 256;
/// The most bytes `file_contexts` may hold in all.
pub const MAX_FILE_CONTEXT_BYTES: usize = 8 * 1024 * 1024;
/// The longest git ref accepted for `target` or `base`, in characters.
pub const MAX_REF_CHARS: usize = 256;

/// Input of `review_changes`: a unified diff reviewed by the configured model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct ReviewChangesRequest {
    /// The unified diff to review: `git diff` output or a plain patch (required, not blank).
    pub diff: String,
    /// Every other field: the options `review_git_diff` takes too.
    #[serde(flatten)]
    pub options: ReviewChangesOptions,
}

// By hand: serde's `flatten` would accept unknown fields silently (`deny_unknown_fields` does not
// reach through it), so the diff is taken out and the rest must be exactly the options.
impl<'de> Deserialize<'de> for ReviewChangesRequest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let diff = fields.remove("diff");
        // Options first, so an unknown field is named even when `diff` is missing too.
        let options =
            serde_json::from_value(serde_json::Value::Object(fields)).map_err(D::Error::custom)?;
        let diff = match diff {
            Some(serde_json::Value::String(diff)) => diff,
            Some(_) => {
                return Err(D::Error::custom(
                    "invalid type for `diff`: expected a string",
                ));
            }
            None => return Err(D::Error::missing_field("diff")),
        };
        Ok(ReviewChangesRequest { diff, options })
    }
}

/// The options of `review_git_diff` (`review_changes` without its diff).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewChangesOptions {
    /// The new contents of changed files, as a JSON object `{path: content}` or that object
    /// encoded as a JSON string (upstream's shape). Secrets are scrubbed; ±16 lines around the
    /// changes are shown to the model when the contents match the diff. `review_git_diff`
    /// defaults to the working tree's files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_contexts: Option<FileContexts>,
    /// The ref the diff is based on, recorded in the result's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub base_ref: Option<String>,
    /// Drop findings below this confidence (0–1). Default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_threshold: Option<f64>,
    /// Findings returned at most, highest priority first. Default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = MAX_FINDINGS_LIMIT))]
    pub max_findings: Option<usize>,
    /// Keep only these categories (correctness, security, performance, maintainability, style,
    /// documentation): a comma-separated string or an array. Default: all six.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<StringList>,
    /// Keep only findings on lines the diff adds or changes (priority 0 findings are always
    /// kept). Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_lines_only: Option<bool>,
    /// Extra instructions for the model reviewer (secrets scrubbed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_INSTRUCTIONS_CHARS))]
    pub custom_instructions: Option<String>,
    /// Files of the diff not to review: globs (`**/*.lock`, `docs/**`), comma-separated or an
    /// array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_patterns: Option<StringList>,
}

/// A list given as one comma-separated string (upstream) or as an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StringList {
    Csv(String),
    List(Vec<String>),
}

impl StringList {
    /// The entries, trimmed, blanks dropped.
    pub fn items(&self) -> Vec<String> {
        let raw: Vec<&str> = match self {
            StringList::Csv(text) => text.split(',').collect(),
            StringList::List(list) => list.iter().map(String::as_str).collect(),
        };
        raw.into_iter()
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// File contents by path: a JSON object, or the same object encoded as a string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FileContexts {
    Json(String),
    Map(BTreeMap<String, String>),
}

/// Input of `review_git_diff`: which changes of the workspace's repository to review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewGitDiffRequest {
    /// `staged` (index against HEAD, the default), `unstaged` (working tree against the
    /// index), `head` (every uncommitted change against HEAD), or a branch or commit (that
    /// commit against its first parent; with `base`, everything since the merge base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REF_CHARS))]
    pub target: Option<String>,
    /// A branch or commit: the diff becomes `base...target` (from their merge base to
    /// `target`). `target` then defaults to HEAD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REF_CHARS))]
    pub base: Option<String>,
    /// Review only files matching one of these globs. Default: every file.
    #[serde(default)]
    #[schemars(length(max = MAX_PATTERNS))]
    pub include_patterns: Vec<String>,
    /// The options of `review_changes` (everything but `diff`).
    #[serde(default)]
    pub options: ReviewChangesOptions,
}

/// Output of `review_git_diff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewGitDiffResponse {
    pub git_info: GitInfo,
    pub review: ChangesReview,
}

/// What was compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GitInfo {
    /// The target as given (default `staged`).
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The two sides compared, in words (`HEAD → index`, `merge base → <sha>`, …).
    pub compared: String,
    /// The commit on the old side (the merge base, the parent, or HEAD), when it is a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The commit on the new side, when it is a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_commit: Option<String>,
    /// Files in the diff git produced.
    pub files_in_diff: usize,
    /// Files left after `include_patterns`.
    pub files_changed: usize,
    /// Size of the diff text git produced.
    pub diff_bytes: usize,
}

/// Input of `review_auto`: a diff (reviewed by `review_diff`) or git changes (reviewed by
/// `review_git_diff`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewAutoRequest {
    /// `auto` (a non-blank `diff` picks review_diff, else review_git_diff), `review_diff` or
    /// `review_git_diff`. Default auto.
    #[serde(default)]
    pub tool: AutoTool,
    /// For review_diff: the unified diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For review_diff: review only these paths of the diff.
    #[serde(default)]
    #[schemars(length(max = crate::api::review::MAX_CHANGED_FILES))]
    pub changed_files: Vec<String>,
    /// For review_diff: its options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_diff_options: Option<ReviewDiffOptions>,
    /// For review_git_diff: `staged` (default), `unstaged`, `head`, a branch or a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REF_CHARS))]
    pub target: Option<String>,
    /// For review_git_diff: the base of `base...target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_REF_CHARS))]
    pub base: Option<String>,
    /// For review_git_diff: review only files matching these globs.
    #[serde(default)]
    #[schemars(length(max = MAX_PATTERNS))]
    pub include_patterns: Vec<String>,
    /// For review_git_diff: the options of review_changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_git_diff_options: Option<ReviewChangesOptions>,
}

/// Which tool `review_auto` may run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutoTool {
    #[default]
    Auto,
    ReviewDiff,
    ReviewGitDiff,
}

/// Output of `review_auto`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewAutoResponse {
    /// `review_diff` or `review_git_diff`.
    pub selected_tool: String,
    /// Why that tool was chosen.
    pub rationale: String,
    /// The chosen tool's output.
    pub output: AutoOutput,
}

/// `review_diff`'s result, or `review_git_diff`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AutoOutput {
    ReviewGitDiff(Box<ReviewGitDiffResponse>),
    ReviewDiff(Box<ReviewDiffResponse>),
}

/// Output of `review_changes` (upstream's `ReviewResult`, plus `warnings` and `usage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangesReview {
    /// Findings after the filters, highest priority first.
    pub findings: Vec<ReviewFinding>,
    pub overall_correctness: Correctness,
    pub overall_explanation: String,
    /// The model's confidence in the verdict (0–1; 0 when the model gave none).
    pub overall_confidence_score: f64,
    pub changes_summary: ChangesSummary,
    pub metadata: ChangesMetadata,
    /// What went wrong or was left out without failing the review.
    pub warnings: Vec<String>,
    /// Tokens and estimated cost of the model calls.
    pub usage: Usage,
}

/// The verdict on the whole change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Correctness {
    #[serde(rename = "patch is correct")]
    Correct,
    #[serde(rename = "patch is incorrect")]
    Incorrect,
    #[serde(rename = "needs attention")]
    NeedsAttention,
}

impl Correctness {
    pub fn as_str(self) -> &'static str {
        match self {
            Correctness::Correct => "patch is correct",
            Correctness::Incorrect => "patch is incorrect",
            Correctness::NeedsAttention => "needs attention",
        }
    }
}

/// One finding of `review_changes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewFinding {
    /// Stable across runs: derived from Tollgate's fingerprint (never the model's id).
    pub id: String,
    /// At most 80 characters.
    pub title: String,
    pub body: String,
    pub confidence_score: f64,
    /// 0 (must fix) to 3 (nit).
    pub priority: u8,
    pub category: ReviewCategory,
    pub code_location: CodeLocation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Suggestion>,
    /// Whether the location covers a line the diff adds (computed by Tollgate from the diff).
    pub is_on_changed_line: bool,
}

/// The six categories of `review_changes`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReviewCategory {
    Correctness,
    Security,
    Performance,
    Maintainability,
    Style,
    Documentation,
}

impl ReviewCategory {
    pub const ALL: [ReviewCategory; 6] = [
        ReviewCategory::Correctness,
        ReviewCategory::Security,
        ReviewCategory::Performance,
        ReviewCategory::Maintainability,
        ReviewCategory::Style,
        ReviewCategory::Documentation,
    ];

    pub fn as_str(self) -> &'static str {
        self.category().as_str()
    }

    /// The same category in the shared vocabulary.
    pub(crate) fn category(self) -> Category {
        match self {
            ReviewCategory::Correctness => Category::Correctness,
            ReviewCategory::Security => Category::Security,
            ReviewCategory::Performance => Category::Performance,
            ReviewCategory::Maintainability => Category::Maintainability,
            ReviewCategory::Style => Category::Style,
            ReviewCategory::Documentation => Category::Documentation,
        }
    }

    pub(crate) fn parse(text: &str) -> Option<ReviewCategory> {
        ReviewCategory::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeLocation {
    pub file_path: String,
    pub line_range: LineRange,
}

/// New-file line numbers, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Suggestion {
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_snippet: Option<String>,
    /// The snippet replaces the finding's lines as is (false without a snippet).
    pub can_auto_fix: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangesSummary {
    pub files_changed: usize,
    pub lines_added: usize,
    pub lines_removed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangesMetadata {
    pub reviewed_at: String,
    pub review_duration_ms: u64,
    /// The model that answered (empty when none was called).
    pub model_used: String,
    /// The environment variable the API key was read from (its name, never the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    pub tool_version: String,
    /// Findings removed by the filters (threshold, changed lines, categories, cap).
    pub findings_filtered: usize,
    pub confidence_threshold: f64,
    pub categories_reviewed: Vec<ReviewCategory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
}
