//! Command-line and environment definitions (clap types only). In a workflow every value comes
//! from the environment: the runner's `GITHUB_*` variables and the `INPUT_*` variables that
//! `action/action.yml` sets from the action's inputs. Flags exist for running it by hand.

use std::path::PathBuf;

use clap::{ArgAction, Parser, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "tollgate-action",
    version,
    about = "Tollgate's GitHub Action: review a pull request or push, post the results, exit with the gate"
)]
pub struct Args {
    /// `review`: review the checkout and post (stage 1, or the only stage). `post`: review
    /// nothing and run no code from the pull request; read the artifact stage 1 wrote in
    /// `output-dir` (`tollgate.json`, `tollgate-publish.json`), validate it as untrusted, and
    /// post it (stage 2 of the fork pattern, on `workflow_run` with a write token).
    #[arg(long, env = "INPUT_MODE", value_enum, default_value_t = Mode::Review)]
    pub mode: Mode,

    /// The checkout to review (a git repository).
    #[arg(long, env = "GITHUB_WORKSPACE", default_value = ".")]
    pub workspace: PathBuf,

    /// The event that triggered the workflow.
    #[arg(long, env = "GITHUB_EVENT_NAME")]
    pub event_name: String,

    /// The event payload (JSON).
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    pub event_path: PathBuf,

    /// `owner/name` of the repository the workflow runs in.
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub repository: String,

    /// The commit the workflow runs on (the fallback head).
    #[arg(long, env = "GITHUB_SHA")]
    pub sha: Option<String>,

    /// The REST API's base URL (GitHub Enterprise Server sets its own).
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    pub api_url: String,

    /// The web server's URL, for links to files in the summaries.
    #[arg(long, env = "GITHUB_SERVER_URL", default_value = "https://github.com")]
    pub server_url: String,

    /// The token used to post (never printed). Without one nothing is posted.
    #[arg(long, env = "INPUT_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,

    /// Base revision; overrides the one taken from the event.
    #[arg(long, env = "INPUT_BASE")]
    pub base: Option<String>,

    /// Head revision; overrides the one taken from the event. In `post` mode, the full commit
    /// id the artifact must be about (default: `workflow_run.head_sha` of the event).
    #[arg(long, env = "INPUT_HEAD")]
    pub head: Option<String>,

    /// Where tollgate.toml, the invariants and the baseline are read from: the base commit
    /// (so a pull request cannot switch off its own gate) or the head's working tree.
    #[arg(long, env = "INPUT_CONFIG_FROM", value_enum, default_value_t = ConfigFrom::Base)]
    pub config_from: ConfigFrom,

    /// Directory for the SARIF and JSON results (relative to the workspace); in `post` mode,
    /// where the downloaded artifact is.
    #[arg(long, env = "INPUT_OUTPUT_DIR", default_value = "tollgate-results")]
    pub output_dir: PathBuf,

    /// Post or update the sticky summary comment on pull requests.
    #[arg(long, env = "INPUT_COMMENT", action = ArgAction::Set, default_value_t = true)]
    pub comment: bool,

    /// Post a review with inline comments on the diff's lines.
    #[arg(long, env = "INPUT_INLINE_COMMENTS", action = ArgAction::Set, default_value_t = true)]
    pub inline_comments: bool,

    /// Inline comments per review; the rest are listed in the review body.
    #[arg(long, env = "INPUT_MAX_INLINE_COMMENTS", default_value_t = 30)]
    pub max_inline_comments: usize,

    /// Only findings at or above this severity get an inline comment (the built-in notices
    /// are LOW or INFO); the summary lists everything.
    #[arg(long, env = "INPUT_INLINE_MIN_SEVERITY", default_value = "MEDIUM")]
    pub inline_min_severity: tollgate::findings::Severity,

    /// Create a check run with annotations.
    #[arg(long, env = "INPUT_CHECK_RUN", action = ArgAction::Set, default_value_t = true)]
    pub check_run: bool,

    /// The login the token posts as; only its comments are updated or deleted.
    #[arg(long, env = "INPUT_BOT_LOGIN", default_value = "github-actions[bot]")]
    pub bot_login: String,

    /// First wait between retries of a failed API call, in milliseconds (doubled each time;
    /// `Retry-After` and `x-ratelimit-reset` take precedence).
    #[arg(
        long,
        env = "TOLLGATE_RETRY_BASE_MS",
        default_value_t = 1000,
        hide = true
    )]
    pub retry_base_ms: u64,

    #[command(flatten)]
    pub review: ReviewOptions,
}

/// The review options, mirroring `tollgate review`'s; they override tollgate.toml and the
/// `TOLLGATE_*` environment. A composite action passes an unset input as an empty variable,
/// so every option is text here and blank means "not set" (numbers are parsed in `run`).
#[derive(Debug, clap::Args)]
pub struct ReviewOptions {
    #[arg(long, env = "INPUT_FAIL_ON_SEVERITY")]
    pub fail_on_severity: Option<String>,
    #[arg(long, env = "INPUT_CONFIDENCE_THRESHOLD")]
    pub confidence_threshold: Option<String>,
    #[arg(long, env = "INPUT_MAX_FINDINGS")]
    pub max_findings: Option<String>,
    #[arg(long, env = "INPUT_CATEGORIES", value_delimiter = ',')]
    pub categories: Option<Vec<String>>,
    #[arg(long, env = "INPUT_INVARIANTS", value_delimiter = ',')]
    pub invariants: Option<Vec<String>>,
    #[arg(long, env = "INPUT_FAIL_ON_RULE_IDS", value_delimiter = ',')]
    pub fail_on_rule_ids: Option<Vec<String>>,
    #[arg(long, env = "INPUT_ALLOWLIST", value_delimiter = ',')]
    pub allowlist: Option<Vec<String>>,
    #[arg(long, env = "INPUT_BASELINE")]
    pub baseline: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigFrom {
    Base,
    Head,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Review,
    Post,
}
