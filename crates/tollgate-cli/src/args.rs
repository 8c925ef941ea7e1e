//! Command-line definitions (clap types only; no behaviour).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "tollgate",
    version,
    about = "Code review gate and planning engine for CI pipelines and coding agents"
)]
pub struct Cli {
    /// More logging on stderr (-v info, -vv debug). `TOLLGATE_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true, display_order = 800)]
    pub verbose: u8,
    /// Where plans, sessions, the model cache and the knowledge store live: `sqlite:PATH` or
    /// `postgres://user@host/db` (password from PGPASSWORD or PGPASSFILE). Overrides
    /// `TOLLGATE_STORE_URL` and `[store] url`; default the workspace's .tollgate/tollgate.db.
    #[arg(long, value_name = "URL", global = true, display_order = 801)]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Review a diff: findings, reports, and exit 1 when the gate fails.
    Review(Box<ReviewArgs>),
    /// Review a diff with the configured model (upstream's review_changes): JSON result, exit 1
    /// when the verdict is `patch is incorrect`.
    ReviewChanges(Box<ReviewChangesArgs>),
    /// Review the repository's changes with the configured model (upstream's review_git_diff):
    /// staged (default), unstaged, head, a branch or commit, or BASE...TARGET.
    ReviewGit(Box<ReviewGitArgs>),
    /// Pick the review for what is given: `review` of a diff when --diff is given, else the
    /// model review of git changes (review-git); prints {selected_tool, rationale, output}.
    ReviewAuto(Box<ReviewAutoArgs>),
    /// Work with invariants files.
    Invariants {
        #[command(subcommand)]
        command: InvariantsCommand,
    },
    /// Write a commented `tollgate.toml` and a starter `.review-invariants.yml`.
    Init(InitArgs),
    /// Serve the MCP server for coding agents: stdio by default, streamable HTTP with --http.
    Mcp(McpArgs),
    /// Implementation plans: saved plans, versions, approvals, step progress, execution.
    Plan(PlanArgs),
    /// Review a whole pull request in steps as a stored session: start, status, pause, resume,
    /// cancel, telemetry (also from another process while it runs).
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Build or update the code index (.tollgate/index), or show its status.
    Index(IndexArgs),
    /// Search the code index (hybrid: BM25, vectors, commit history).
    Search(SearchArgs),
    /// What would the gate have said about the last N pull requests? Reviews recent merges (or
    /// commits) against their first parent, each with the configuration it had, and prints
    /// gate failures, findings per rule, the noisiest paths and a starting configuration.
    Replay(ReplayArgs),
    /// Review learnings in `.review-learnings.jsonl`: dismiss or accept a finding, list the
    /// ledger, export its lines (or, with --invariants, proposed invariant rules).
    Learn {
        #[command(subcommand)]
        command: LearnCommand,
    },
    /// The knowledge store beside the code index: store, find, search, get, delete entries;
    /// threads and statistics (the same operations as the MCP `memory` tools).
    Memory(MemoryArgs),
    /// The team's own Lua tools (.tollgate/tools/*.lua, [tools] dirs): list them (broken ones
    /// with their error) or run one as the MCP server and HTTP API would.
    Tool(ToolArgs),
    /// The store itself: copy it to another backend or file (`migrate`).
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
    /// Documents from [sources.<name>] in tollgate.toml (a directory, a git repository at a
    /// ref, a Lua script): sync them into the knowledge store, or list them with their counts.
    Sources(SourcesArgs),
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy every plan, review session and cached model answer from one store into another
    /// (SQLite to PostgreSQL or back), verified table by table by row counts and checksums.
    /// The knowledge store is not copied (SQLite only in this build).
    Migrate(StoreMigrateArgs),
}

#[derive(Debug, Args)]
pub struct StoreMigrateArgs {
    /// The source: `sqlite:PATH` or `postgres://USER@HOST/DB` (no password in it).
    #[arg(long, value_name = "URL")]
    pub from: String,
    /// The target, same forms.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// Replace the target's contents when it is not empty.
    #[arg(long)]
    pub force: bool,
    /// The workspace relative SQLite paths are relative to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct SourcesArgs {
    /// Workspace root.
    #[arg(
        long,
        value_name = "DIR",
        default_value = ".",
        global = true,
        display_order = 701
    )]
    pub repo: PathBuf,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: SourcesCommand,
}

#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// Sync source NAME, or every configured source, into its thread (dir:NAME, git:NAME,
    /// script:NAME): new documents stored, changed ones updated, gone ones deleted.
    Sync {
        /// The source's name ([sources.NAME]); default every source.
        name: Option<String>,
    },
    /// List the configured sources with the documents their threads hold.
    List,
}

#[derive(Debug, Args)]
pub struct ToolArgs {
    /// Workspace root.
    #[arg(
        long,
        value_name = "DIR",
        default_value = ".",
        global = true,
        display_order = 701
    )]
    pub repo: PathBuf,
    #[command(subcommand)]
    pub command: ToolCommand,
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// List the tools that load and the files that do not, with their errors.
    List {
        /// Print JSON: {tools: [{name, description, script, parameters}], broken: [{script, error}]}.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool and print its result as JSON (exit 2 on any error, with its code).
    Run {
        /// The tool's name.
        name: String,
        /// Its arguments as a JSON object.
        #[arg(long = "args", value_name = "JSON", default_value = "{}")]
        arguments: String,
    },
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// Workspace root (the store is <repo>/.tollgate/tollgate.db).
    #[arg(
        long,
        value_name = "DIR",
        default_value = ".",
        global = true,
        display_order = 702
    )]
    pub repo: PathBuf,
    /// Print the result as JSON (the MCP tool's result).
    #[arg(long, global = true, display_order = 703)]
    pub json: bool,
    /// An OpenAI-compatible embeddings endpoint instead of the built-in hashed embedder.
    #[arg(
        long,
        value_name = "URL",
        requires = "embed_model",
        global = true,
        display_order = 704
    )]
    pub embed_url: Option<String>,
    /// The model the embeddings endpoint serves.
    #[arg(long, value_name = "NAME", global = true, display_order = 705)]
    pub embed_model: Option<String>,
    /// Bearer token for the embeddings endpoint.
    #[arg(
        long,
        env = "TOLLGATE_EMBED_API_KEY",
        hide_env_values = true,
        value_name = "KEY",
        global = true,
        display_order = 706
    )]
    pub embed_api_key: Option<String>,
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// Filters shared by `memory find` and `memory search`.
#[derive(Debug, Args)]
pub struct MemoryFilterArgs {
    /// Only this thread.
    #[arg(long, value_name = "ID")]
    pub thread: Option<String>,
    /// Only entries from `user` or `agent`.
    #[arg(long, value_name = "SOURCE")]
    pub source: Option<String>,
    /// Entries with any of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Metadata condition as JSON, e.g. '{"key":"priority","operator":"gte","value":5}'
    /// (repeatable; all must hold).
    #[arg(long = "where", value_name = "JSON")]
    pub conditions: Vec<String>,
    /// Created on or after this ISO 8601 date.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Created on or before this ISO 8601 date (a date covers its whole day).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Results at most (1-100).
    #[arg(long, short = 'n')]
    pub limit: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Store an entry (TEXT, or `-` for stdin); secrets are masked before it is written.
    Store {
        /// The entry's text, or `-` to read it from stdin.
        text: String,
        /// The thread the entry belongs to (a conversation, a topic, a ticket).
        #[arg(long, value_name = "ID")]
        thread: String,
        /// `user` or `agent`.
        #[arg(long, default_value = "user")]
        source: String,
        /// A tag (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// A JSON object of metadata.
        #[arg(long, value_name = "JSON")]
        metadata: Option<String>,
    },
    /// List entries by filters, newest first.
    Find {
        #[command(flatten)]
        filter: MemoryFilterArgs,
    },
    /// Search entries: hybrid (default), fts or semantic.
    Search {
        /// What to look for, in plain words (fts: per --fts-mode).
        query: String,
        /// hybrid, fts or semantic.
        #[arg(long, default_value = "hybrid")]
        mode: String,
        /// How fts reads the query: match, prefix, phrase or boolean.
        #[arg(long, default_value = "match")]
        fts_mode: String,
        #[command(flatten)]
        filter: MemoryFilterArgs,
    },
    /// Show entries by id.
    Get {
        /// The entries' ids (from `memory find` or a search).
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Delete entries; every criterion given must hold.
    Delete {
        /// An entry's id (repeatable).
        #[arg(long = "id", value_name = "ID")]
        ids: Vec<i64>,
        /// Every entry of this thread (repeatable).
        #[arg(long = "thread", value_name = "ID")]
        threads: Vec<String>,
        /// Only with another criterion.
        #[arg(long)]
        source: Option<String>,
        /// Only entries created more than this many days ago.
        #[arg(long, value_name = "DAYS")]
        older_than_days: Option<u32>,
    },
    /// Threads with their entry counts.
    Threads,
    /// Totals and the store's size.
    Stats,
}

#[derive(Debug, Subcommand)]
pub enum LearnCommand {
    /// Dismiss a finding: the gate leaves it out while the code at it is unchanged.
    Dismiss(LearnRecordArgs),
    /// Accept a finding as a real problem the team wants flagged.
    Accept(LearnRecordArgs),
    /// List the ledger's records, newest first, as JSON.
    List(LearnListArgs),
    /// Print the ledger's lines (to commit them, or merge them into another ledger).
    Export(LearnExportArgs),
}

#[derive(Debug, Args)]
pub struct LearnRecordArgs {
    /// The finding: its `id` (`TG003@1a2b…`) or `fingerprint`, as in the JSON report.
    pub finding: String,
    /// The JSON report that holds the finding (`tollgate review --format json`).
    #[arg(long, value_name = "FILE", default_value = "tollgate.json")]
    pub report: PathBuf,
    /// Why (required to dismiss).
    #[arg(long, default_value = "")]
    pub reason: String,
    /// Who decides [default: $USER].
    #[arg(long)]
    pub by: Option<String>,
    /// Cover every finding of the rule under this path glob, not only this one.
    #[arg(long, value_name = "GLOB")]
    pub scope: Option<String>,
    /// Repository root (the ledger is `<repo>/.review-learnings.jsonl`).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct LearnListArgs {
    /// Only `dismissed`, `accepted` or `fixed`.
    #[arg(long)]
    pub disposition: Option<String>,
    /// Only this rule.
    #[arg(long)]
    pub rule: Option<String>,
    /// At most this many records.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Repository root (the ledger is `<repo>/.review-learnings.jsonl`).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct LearnExportArgs {
    /// Print proposed invariant rules (YAML for `.review-invariants.yml`) from repeated
    /// dismissals and acceptances instead; nothing is written, a human reviews them.
    #[arg(long)]
    pub invariants: bool,
    /// Repository root (the ledger is `<repo>/.review-learnings.jsonl`).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Repository root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// How many merges or commits to review (at most 10000).
    #[arg(long, short = 'n', default_value_t = 100)]
    pub count: usize,
    /// Review merge commits only (one per merged pull request). Default: merges when at least
    /// half of the recent first-parent history is merges, else every commit.
    #[arg(long, conflicts_with = "commits")]
    pub merges: bool,
    /// Review every commit of the first-parent history.
    #[arg(long)]
    pub commits: bool,
    /// Reviews run at once [default: the number of CPUs].
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Where results are kept so an interrupted replay resumes
    /// [default: <repo>/.tollgate/replay/results.jsonl].
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Ignore results of earlier runs (they are replaced).
    #[arg(long)]
    pub fresh: bool,
    /// Print the whole report (every commit and the summary) as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Create a session for base...head and run it here with progress, printing the final
    /// status as JSON; with --detach, print the session id and run it in the background.
    Start(SessionStartArgs),
    /// Print a session's status as JSON.
    Status {
        #[command(flatten)]
        target: SessionTarget,
        /// Include the findings found so far.
        #[arg(long)]
        findings: bool,
    },
    /// Pause a session: running steps finish, no new step starts.
    Pause(SessionTarget),
    /// Resume a paused session (here, unless its process is still finishing steps).
    Resume {
        #[command(flatten)]
        target: SessionTarget,
        /// Run it in a background process instead.
        #[arg(long)]
        detach: bool,
    },
    /// Cancel a session for good.
    Cancel(SessionTarget),
    /// Print a session's telemetry (per-step timings, retries, model usage) as JSON.
    Telemetry(SessionTarget),
    /// Run a claimed or queued session (what --detach starts in the background).
    #[command(hide = true)]
    Run(SessionTarget),
}

#[derive(Debug, Args)]
pub struct SessionTarget {
    /// The session id.
    pub id: String,
    /// Repository root: the store is `<repo>/.tollgate/tollgate.db`.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(Debug, Args)]
pub struct SessionStartArgs {
    /// Repository root: the store is `<repo>/.tollgate/tollgate.db`.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The branch or commit the pull request merges into.
    #[arg(long, value_name = "REF")]
    pub base: String,
    /// The pull request's head commit.
    #[arg(long, value_name = "REF", default_value = "HEAD")]
    pub head: String,
    /// Files to review, comma-separated [default: every file changed in base...head].
    #[arg(long, value_name = "PATHS")]
    pub files: Option<String>,
    /// The pull request's title, given to the model passes as context.
    #[arg(long)]
    pub title: Option<String>,
    /// The pull request's author, recorded with the session.
    #[arg(long)]
    pub author: Option<String>,
    /// Worker threads (1–16) [default: 3].
    #[arg(long, value_name = "N")]
    pub max_workers: Option<u32>,
    /// One step at a time.
    #[arg(long)]
    pub serial: bool,
    /// Print the session id and run it in a background process.
    #[arg(long)]
    pub detach: bool,
    /// With --detach: print the created session (id, steps, workers, warnings) as JSON instead
    /// of the id alone.
    #[arg(long, requires = "detach")]
    pub json: bool,
}

/// Where the index is and which embedder it uses (shared by `index` and `search`).
#[derive(Debug, Args)]
pub struct IndexLocationArgs {
    /// Workspace root.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Index directory [default: <repo>/.tollgate/index].
    #[arg(long, value_name = "DIR")]
    pub index_dir: Option<PathBuf>,
    /// An OpenAI-compatible embeddings endpoint (`http://localhost:11434/v1`) instead of the
    /// built-in hashed embedder; changing the embedder rebuilds the index.
    #[arg(long, value_name = "URL", requires = "embed_model")]
    pub embed_url: Option<String>,
    /// The model the embeddings endpoint serves.
    #[arg(long, value_name = "NAME")]
    pub embed_model: Option<String>,
    /// Bearer token for the embeddings endpoint.
    #[arg(
        long,
        env = "TOLLGATE_EMBED_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub embed_api_key: Option<String>,
    /// Most commits a new index reads for the history channel, newest first (later updates
    /// add only new commits) [default: 3000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub history_depth: Option<u32>,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Only (re)index this subdirectory of the workspace.
    pub path: Option<String>,
    #[command(flatten)]
    pub location: IndexLocationArgs,
    /// Show the index's status instead of updating it.
    #[arg(long)]
    pub status: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,
    #[command(flatten)]
    pub location: IndexLocationArgs,
    /// Results (1–100).
    #[arg(long, short = 'k', default_value_t = 10)]
    pub top_k: usize,
    /// Over-fetch more in every channel.
    #[arg(long)]
    pub deep: bool,
    /// Only files with this extension (repeatable): `--type rs --type .ts`.
    #[arg(long = "type", value_name = "EXT")]
    pub file_types: Vec<String>,
    /// Leave out paths under this prefix or matching this glob (repeatable).
    #[arg(long, value_name = "PATH|GLOB")]
    pub exclude: Vec<String>,
    /// Test files: include (the default: ranked lower unless the query asks for tests, like
    /// docs, changelogs and generated files), exclude or only.
    #[arg(long, value_name = "MODE", default_value = "include", value_parser = ["include", "exclude", "only"])]
    pub tests: String,
    /// Only files in this language (rust, typescript, python, go, java, …).
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
    /// Only files under this subdirectory.
    #[arg(long, value_name = "DIR")]
    pub under: Option<String>,
    /// Print JSON (results with paths, lines, relevance and snippets).
    #[arg(long)]
    pub json: bool,
    /// Show why each result ranks where it does: each channel's rank and score, each boost.
    #[arg(long)]
    pub explain: bool,
    /// Lines shown per result around the lines that match the query (like `rg -C`).
    #[arg(long, short = 'C', value_name = "N", default_value_t = 0)]
    pub context: usize,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Repository root (the workspace): config, invariants and baseline resolve inside it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    #[command(flatten)]
    pub source: DiffSourceArgs,

    /// Configuration file [default: <repo>/tollgate.toml when present].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Output format, repeatable: json, sarif, markdown, rdjson, rdjsonl, gitlab, checkstyle,
    /// junit or github; `FORMAT=PATH` writes a file, a bare FORMAT writes to stdout [default: json
    /// to stdout].
    #[arg(long = "format", value_name = "FORMAT[=PATH]")]
    pub formats: Vec<String>,

    /// Write the report that would go to stdout (the `--format` without a path, or the default
    /// JSON) to FILE instead, as semgrep's `--output` does.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub filters: FindingFilterFlags,

    /// Invariants file(s), repeatable [default: .review-invariants.yml when present].
    #[arg(long, value_name = "PATH")]
    pub invariants: Option<Vec<String>>,

    /// Fail the gate on findings at or above this severity [default: CRITICAL].
    #[arg(long, value_name = "SEVERITY", value_parser = known::<tollgate::findings::Severity>)]
    pub fail_on_severity: Option<String>,

    /// Fail the gate on any finding of these rules (comma-separated; `prefix*` allowed).
    #[arg(
        long,
        alias = "fail-on-invariant-ids",
        value_name = "LIST",
        value_delimiter = ','
    )]
    pub fail_on_rule_ids: Option<Vec<String>>,

    /// Drop findings by rule id, finding id or fingerprint (comma-separated).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub allowlist: Option<Vec<String>>,

    /// Baseline file: findings whose fingerprints it lists do not count.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<String>,

    /// Write the fingerprints of this run's findings to FILE as a new baseline; the run then
    /// exits 0 (the findings it records are accepted), whatever the gate says.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,

    /// Review only these paths of the diff (comma-separated).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub changed_files: Option<Vec<String>>,

    /// Static analyzers to run (comma-separated): tsc, semgrep; `none` turns configured ones off.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub analyzers: Option<Vec<String>>,

    /// Which analyzer findings count: changed-lines, changed-files or all [default: changed-lines].
    #[arg(long, value_name = "SCOPE")]
    pub analysis_scope: Option<String>,

    /// Time limit per analyzer in milliseconds [default: 60000].
    #[arg(long, value_name = "MS")]
    pub analyzer_timeout_ms: Option<u64>,

    /// Size limit of the diff, imported SARIF files and the baseline, in bytes
    /// [default: 134217728 (128 MiB)].
    #[arg(long, value_name = "BYTES")]
    pub max_input_bytes: Option<u64>,

    /// Time budget of the whole review in milliseconds; when it runs out, the remaining work
    /// is skipped and the gate fails saying so [default: none].
    #[arg(long, value_name = "MS")]
    pub time_budget_ms: Option<u64>,

    /// Merge the results of a SARIF 2.1.0 file from another tool (clippy, eslint, CodeQL, …);
    /// repeatable.
    #[arg(long, value_name = "FILE")]
    pub import_sarif: Vec<PathBuf>,

    /// URL prefix for file links in Markdown (e.g. https://github.com/o/r/blob/<sha>/).
    #[arg(long, value_name = "URL")]
    pub link_base: Option<String>,

    #[command(flatten)]
    pub passes: ModelPassFlags,

    #[command(flatten)]
    pub model: ModelFlags,

    /// Print nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Which findings are kept, for every review command; each overrides tollgate.toml and
/// `TOLLGATE_*`.
#[derive(Debug, Args)]
pub struct FindingFilterFlags {
    /// Drop findings below this confidence (0.0–1.0) [default: 0.55; 0.7 for the model-only
    /// reviews].
    #[arg(long, value_name = "X")]
    pub confidence_threshold: Option<f64>,
    /// Findings kept in the output, worst first, after the gate is decided [default: 20].
    #[arg(long, value_name = "N")]
    pub max_findings: Option<usize>,
    /// Keep only these categories (comma-separated): correctness, security, performance,
    /// maintainability, style, documentation, reliability, architecture, infra.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = known::<tollgate::findings::Category>)]
    pub categories: Option<Vec<String>>,
}

/// The model passes of `tollgate review` (the names of the MCP `review_diff` options); each
/// overrides `[llm]` in tollgate.toml and `TOLLGATE_LLM_*`.
#[derive(Debug, Args)]
pub struct ModelPassFlags {
    /// Run the model review passes (needs a provider in [llm] or TOLLGATE_LLM_PROVIDER).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub enable_llm: Option<bool>,
    /// Run the model passes even on low-risk changes with tests touched.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub llm_force: Option<bool>,
    /// Run the detailed second pass when the risk warrants it [default: true].
    #[arg(long, value_name = "BOOL")]
    pub two_pass: Option<bool>,
    /// Risk score (1–5) from which the detailed pass runs [default: 3].
    #[arg(long, value_name = "N")]
    pub risk_threshold: Option<u8>,
    /// Extra instructions for the model reviewer.
    #[arg(long, value_name = "TEXT")]
    pub custom_instructions: Option<String>,
    /// Fail (exit 2) when the configured model cannot answer, instead of warning.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub llm_required: Option<bool>,
}

/// Model limits shared by every command that calls a model; each overrides `[llm]` in
/// tollgate.toml and `TOLLGATE_LLM_*`.
#[derive(Debug, Args)]
pub struct ModelFlags {
    /// Tokens of diff and context per model request (1000–50000) [default: 8000].
    #[arg(long, value_name = "N")]
    pub token_budget: Option<u32>,
    /// Files whose surrounding code is sent to the model (1–20) [default: 5].
    #[arg(long, value_name = "N")]
    pub max_context_files: Option<u32>,
    /// Time limit of one model call in milliseconds [default: 120000].
    #[arg(long, value_name = "MS")]
    pub llm_timeout_ms: Option<u64>,
    /// Time budget of all model calls of this run in milliseconds; once spent, the model passes
    /// stop with a warning [default: none].
    #[arg(long, value_name = "MS")]
    pub llm_time_budget_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ReviewChangesArgs {
    /// Unified diff file, or `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub diff: String,
    /// JSON file of new file contents, `{"path": "content"}`, shown around the changes.
    #[arg(long, value_name = "FILE")]
    pub file_contexts: Option<PathBuf>,
    /// The ref the diff is based on (recorded in the result).
    #[arg(long, value_name = "REF")]
    pub base_ref: Option<String>,
    #[command(flatten)]
    pub review: ModelReviewArgs,
}

#[derive(Debug, Args)]
pub struct ReviewGitArgs {
    /// `staged`, `unstaged`, `head` (every uncommitted change), or a branch or commit (against
    /// its parent) [default: staged; HEAD with --base].
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Review BASE...TARGET (from their merge base).
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Review only files matching these globs (comma-separated).
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    pub include: Vec<String>,
    #[command(flatten)]
    pub review: ModelReviewArgs,
}

#[derive(Debug, Args)]
pub struct ReviewAutoArgs {
    /// `auto` (a non-empty --diff picks review_diff, else review_git_diff), `review_diff` or
    /// `review_git_diff`.
    #[arg(long, value_name = "TOOL", default_value = "auto",
          value_parser = ["auto", "review_diff", "review_git_diff"])]
    pub tool: String,
    /// For review_diff: a unified diff file, or `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub diff: Option<String>,
    /// For review_diff: review only these paths of the diff (comma-separated).
    #[arg(long, value_name = "PATHS", value_delimiter = ',')]
    pub changed_files: Vec<String>,
    /// For review_git_diff: `staged`, `unstaged`, `head`, or a branch or commit.
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// For review_git_diff: review BASE...TARGET.
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// For review_git_diff: only files matching these globs (comma-separated).
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    pub include: Vec<String>,
    #[command(flatten)]
    pub review: ModelReviewArgs,
}

/// What `review-changes`, `review-git` and `review-auto` share.
#[derive(Debug, Args)]
pub struct ModelReviewArgs {
    /// Repository root (the workspace): tollgate.toml and, for review-git, the repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Configuration file [default: <repo>/tollgate.toml when present].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub filters: FindingFilterFlags,
    /// Keep findings on unchanged lines too (by default only changed lines and P0).
    #[arg(long)]
    pub all_lines: bool,
    /// Extra instructions for the model reviewer.
    #[arg(long, value_name = "TEXT")]
    pub instructions: Option<String>,
    /// Files not to review: globs (comma-separated).
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Print a short human summary on stdout instead of the JSON result.
    #[arg(long)]
    pub text: bool,
    /// Print nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where the diff comes from; exactly one source (or `--base`/`--head`).
#[derive(Debug, Args)]
#[group(id = "source", multiple = true)]
pub struct DiffSourceArgs {
    /// Unified diff file, or `-` for stdin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["base", "staged", "unstaged", "working_tree"])]
    pub diff: Option<String>,
    /// Base ref: the diff is `BASE...HEAD` (from their merge base).
    #[arg(long, value_name = "REF", conflicts_with_all = ["staged", "unstaged", "working_tree"])]
    pub base: Option<String>,
    /// Head ref (with --base) [default: HEAD].
    #[arg(long, value_name = "REF", requires = "base")]
    pub head: Option<String>,
    /// Staged changes (index against HEAD).
    #[arg(long, conflicts_with_all = ["unstaged", "working_tree"])]
    pub staged: bool,
    /// Unstaged changes (working tree against the index).
    #[arg(long, conflicts_with = "working_tree")]
    pub unstaged: bool,
    /// All uncommitted changes (working tree against HEAD).
    #[arg(long)]
    pub working_tree: bool,
}

#[derive(Debug, Subcommand)]
pub enum InvariantsCommand {
    /// Validate an invariants file; errors are printed as file:line:column and exit 2.
    Check {
        /// The file [default: .review-invariants.yml].
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directory to write into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Overwrite existing files.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The workspace (repository root): every path a client sends resolves inside it
    /// [default: the current directory, unless that is a file-system root or holds the home
    /// directory, which are served only when named here].
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Tool profiles to serve, comma-separated: review, plan, context, session, memory, user, or
    /// all; or the seed dialects ck and context-engine (not with context: some tool names are
    /// both's). The utilities (tool_manifest, get_workspace_info, scrub_secrets, validate_content) are
    /// always served.
    #[arg(long = "tools", value_name = "LIST", default_value = "review,user")]
    pub tools: tollgate_mcp::Profiles,
    /// The longest a tool call may run before it is answered with a TIMEOUT error.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub call_timeout_secs: u64,
    /// Serve streamable HTTP on ADDR (e.g. 127.0.0.1:8011; port 0 picks a free one) instead of
    /// stdio; without ADDR, on `[server] bind` [default: 127.0.0.1:7331]. The endpoint is /mcp;
    /// /health answers when the server is up.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = false)]
    pub http: Option<Option<std::net::SocketAddr>>,
    /// An operator's settings file whose `[server]` table (bind, allowed_hosts,
    /// allowed_origins) applies over the workspace's; flags win over both.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub config: Option<PathBuf>,
    /// Allow --http on a non-loopback address; the server then requires the bearer token in
    /// TOLLGATE_MCP_TOKEN.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// Another accepted Host header value over HTTP, besides the loopback names (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,
    /// A browser origin allowed over HTTP besides loopback ones, with scheme and port, such as
    /// https://app.example.com:443 (repeatable). Requests from any other origin are refused.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The workspace (repository root); plans live in its `.tollgate/tollgate.db`.
    #[arg(
        long,
        value_name = "DIR",
        default_value = ".",
        global = true,
        display_order = 707
    )]
    pub repo: PathBuf,
    /// Print the result as JSON instead of text.
    #[arg(long, global = true, display_order = 708)]
    pub json: bool,
    /// Who is acting, recorded in the plan's history [default: $USER, else `cli`].
    #[arg(long, value_name = "NAME", global = true, display_order = 709)]
    pub author: Option<String>,
    #[command(subcommand)]
    pub command: PlanCommand,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Create a plan for a task: with the configured model, else deterministically from the
    /// repository (labelled as such); --from-plan validates and enriches your own plan.
    Create {
        /// The task, in plain words.
        #[arg(value_name = "TASK", required = true, num_args = 1..)]
        task: Vec<String>,
        /// Repository files used as context (1–50) [default: 10].
        #[arg(long, value_name = "N")]
        max_context_files: Option<usize>,
        /// Tokens of file content a model sees [default: 12000].
        #[arg(long, value_name = "TOKENS")]
        context_token_budget: Option<usize>,
        /// Do not store Mermaid diagrams in the plan.
        #[arg(long)]
        no_diagrams: bool,
        /// Only the minimum viable steps.
        #[arg(long)]
        mvp_only: bool,
        /// Only consider files matching this glob (repeatable).
        #[arg(long = "include", value_name = "GLOB")]
        include: Vec<String>,
        /// Never consider files matching this glob (repeatable).
        #[arg(long = "exclude", value_name = "GLOB")]
        exclude: Vec<String>,
        /// Validate and enrich this plan (JSON file, `-` for stdin) instead of generating one.
        #[arg(long, value_name = "FILE")]
        from_plan: Option<String>,
        /// Save the plan in the workspace's plan store.
        #[arg(long)]
        save: bool,
    },
    /// Refine a plan (file, `-`, or saved plan id) into its next version.
    Refine {
        /// The plan: a JSON file, `-` for stdin, or a saved plan's id.
        #[arg(value_name = "PLAN")]
        plan: String,
        /// What to change.
        #[arg(long)]
        feedback: Option<String>,
        /// Answers to the plan's questions, as a JSON object {question: answer}.
        #[arg(long, value_name = "JSON")]
        clarifications: Option<String>,
        /// A step the refinement is about (repeatable).
        #[arg(long = "focus", value_name = "N")]
        focus_steps: Vec<u32>,
        /// Save the result as the plan's next version (a plan file not saved yet is saved as a
        /// new plan) [default: print only].
        #[arg(long)]
        save: bool,
    },
    /// Print a plan (file, `-`, or saved plan id) as Markdown (or --json).
    Show {
        /// The plan: a JSON file, `-` for stdin, or a saved plan's id.
        #[arg(value_name = "PLAN")]
        plan: String,
    },
    /// Print a Mermaid diagram of a plan (file, `-`, or saved plan id).
    Visualize {
        /// The plan: a JSON file, `-` for stdin, or a saved plan's id.
        #[arg(value_name = "PLAN")]
        plan: String,
        /// dependencies, architecture or gantt.
        #[arg(long = "type", value_name = "TYPE", default_value = "dependencies",
              value_parser = ["dependencies", "architecture", "gantt"])]
        diagram_type: String,
    },
    /// Carry out steps of a plan (file, `-`, or saved plan id) with the configured model: prints
    /// each step's changes as diffs; --apply writes them and records the steps' states.
    Execute {
        /// The plan: a JSON file, `-` for stdin, or a saved plan's id.
        #[arg(value_name = "PLAN")]
        plan: String,
        /// single_step, all_ready or full_plan.
        #[arg(long, value_name = "MODE", default_value = "single_step",
              value_parser = ["single_step", "all_ready", "full_plan"])]
        mode: String,
        /// The step to run with single_step [default: the first ready step].
        #[arg(long = "step", value_name = "N")]
        step: Option<u32>,
        /// Write the changes (with backups) and record each step as completed or failed
        /// [default: preview only].
        #[arg(long)]
        apply: bool,
        /// The most steps this run executes, 1–50 [default: 5].
        #[arg(long, value_name = "N")]
        max_steps: Option<usize>,
        /// Go on with the other ready steps after a step fails.
        #[arg(long)]
        continue_on_failure: bool,
        /// More instructions or facts for the model.
        #[arg(long = "context", value_name = "TEXT")]
        context: Option<String>,
    },
    /// Undo a step's applied changes: restore its files from their backups (refused when a
    /// file was edited since, unless --force) and put the step back to pending.
    Undo {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The step [default: the step whose changes were applied last].
        #[arg(long = "step", value_name = "N")]
        step: Option<u32>,
        /// Restore the backups even over files edited since the step wrote them.
        #[arg(long)]
        force: bool,
    },
    /// List saved plans, most recently updated first.
    List {
        /// Only plans with this status: ready, approved, executing, completed, failed.
        #[arg(long)]
        status: Option<String>,
        /// Only plans with this tag (repeatable: all must match).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// At most this many plans [default: 50].
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Include deleted plans.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Save a plan (JSON file, `-` for stdin); a saved plan gets a new version with --overwrite.
    Save {
        /// The plan: a JSON file, `-` for stdin.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// A name for the plan, unique among live plans.
        #[arg(long)]
        name: Option<String>,
        /// A tag (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// Save as the next version of the saved plan with the same id or name.
        #[arg(long)]
        overwrite: bool,
        /// Why, recorded in the history.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Print a saved plan as JSON (by id, or --name).
    Load {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID", required_unless_present = "name")]
        plan_id: Option<String>,
        /// The live plan of this name, instead of an id.
        #[arg(long, conflicts_with = "plan_id")]
        name: Option<String>,
        /// A past version.
        #[arg(long)]
        version: Option<u32>,
    },
    /// Delete a plan (soft: its versions stay in the store).
    Delete {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
    },
    /// A plan's versions (who, when, why) and lifecycle events.
    History {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// At most this many versions and events [default: 20].
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Include each version's full plan (JSON output).
        #[arg(long)]
        include_plans: bool,
    },
    /// Compare two versions of a plan.
    Diff {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The older version.
        #[arg(value_name = "FROM")]
        from_version: u32,
        /// The newer version.
        #[arg(value_name = "TO")]
        to_version: u32,
    },
    /// Make an old version current again (recorded as a new version).
    Rollback {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The version to make current.
        #[arg(value_name = "VERSION")]
        target_version: u32,
        /// Why, recorded in the history.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Approval requests: ask for one, answer one, list them.
    Approve {
        #[command(subcommand)]
        command: PlanApproveCommand,
    },
    /// Step counts, percentage, ready, blocked and current steps.
    Progress {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
    },
    /// Record a step's lifecycle: start, complete, fail.
    Step {
        #[command(subcommand)]
        command: PlanStepCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlanApproveCommand {
    /// Ask for approval of the whole plan, or of the given steps.
    Request {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// A step to approve (repeatable; none: the whole plan).
        #[arg(long = "step", value_name = "N")]
        steps: Vec<u32>,
        /// A note for the approver.
        #[arg(long)]
        note: Option<String>,
    },
    /// Answer an approval request.
    Respond {
        /// The approval request's id (from `plan approve list`).
        #[arg(value_name = "REQUEST_ID")]
        request_id: String,
        /// approve, reject or request_modification.
        #[arg(value_name = "ACTION", value_parser = ["approve", "reject", "request_modification"])]
        action: String,
        /// Why, recorded with the answer.
        #[arg(long)]
        comment: Option<String>,
        /// The changes asked for, as JSON (with request_modification).
        #[arg(long, value_name = "JSON")]
        modifications: Option<String>,
    },
    /// A plan's approval requests.
    List {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlanStepCommand {
    /// Start a ready step.
    Start {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The step's number.
        #[arg(value_name = "STEP")]
        step_number: u32,
    },
    /// Complete a step.
    Complete {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The step's number.
        #[arg(value_name = "STEP")]
        step_number: u32,
        /// What was done, recorded in the history.
        #[arg(long)]
        notes: Option<String>,
        /// A file the step changed (repeatable).
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
    },
    /// Fail a step: optionally retry it (up to 3 attempts), skip it, or skip its dependents.
    Fail {
        /// The saved plan's id (`plan_…`, from `plan list`).
        #[arg(value_name = "PLAN_ID")]
        plan_id: String,
        /// The step's number.
        #[arg(value_name = "STEP")]
        step_number: u32,
        /// What went wrong, recorded in the history.
        #[arg(long, value_name = "TEXT", default_value = "failed (no reason given)")]
        error: String,
        /// Put the step back to ready for another attempt (at most 3 in all).
        #[arg(long, conflicts_with_all = ["skip", "skip_dependents"])]
        retry: bool,
        /// Skip the step; its dependents may run.
        #[arg(long, conflicts_with = "skip_dependents")]
        skip: bool,
        /// Skip the step and every step that depends on it.
        #[arg(long)]
        skip_dependents: bool,
    },
}

/// A flag's value checked where it is typed, so a bad one is an error naming the flag (the
/// configuration would name its own key): kept as written, for the configuration layer.
fn known<T>(text: &str) -> Result<String, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    text.parse::<T>()
        .map(|_| text.to_string())
        .map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Issue 28: the README's `plan step fail PLAN STEP` works without `--error`.
    #[test]
    fn a_step_fails_without_an_error_text() {
        let cli = Cli::try_parse_from(["tollgate", "plan", "step", "fail", "plan_x", "2"]);
        assert!(cli.is_ok(), "{}", cli.unwrap_err());
    }

    /// Issue 28: `mcp --help` names every tool served whatever the profile.
    #[test]
    fn mcp_help_lists_the_utilities() {
        let help = Cli::command()
            .find_subcommand_mut("mcp")
            .unwrap()
            .render_long_help()
            .to_string();
        for tool in [
            "tool_manifest",
            "get_workspace_info",
            "scrub_secrets",
            "validate_content",
        ] {
            assert!(help.contains(tool), "{tool} missing from:\n{help}");
        }
    }

    /// Issue 28: every option and positional of every command says what it is, and so does
    /// every command.
    #[test]
    fn every_command_option_and_positional_has_a_description() {
        fn walk(command: &clap::Command, path: &str, blank: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let described = arg.get_help().is_some() || arg.get_long_help().is_some();
                if !described && !arg.is_hide_set() {
                    blank.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    blank.push(format!("{name} (the command)"));
                }
                walk(sub, &name, blank);
            }
        }
        let mut command = Cli::command();
        command.build();
        let mut blank = Vec::new();
        walk(&command, "tollgate", &mut blank);
        assert!(
            blank.is_empty(),
            "{} without a description:\n{}",
            blank.len(),
            blank.join("\n")
        );
    }

    /// Issue 28: options come in one stable order in every command's help: the command's own
    /// (as declared), then those of its group (`--repo`, `--json`), then the process-wide
    /// `--verbose` and `--store`, then `--help` (and `--version`).
    #[test]
    fn every_help_lists_its_own_options_first_and_the_global_ones_last() {
        fn walk(command: &mut clap::Command, path: &str, misplaced: &mut Vec<String>) {
            let help = command.render_long_help().to_string();
            let options: Vec<&str> = help
                .lines()
                .filter_map(|line| {
                    let line = line.trim_start();
                    line.starts_with('-').then(|| {
                        line.split([' ', ',', '='])
                            .find(|word| word.starts_with("--"))
                            .unwrap_or(line)
                            .trim_end_matches("...")
                    })
                })
                .collect();
            let tail: Vec<&str> = options
                .iter()
                .copied()
                .filter(|o| ["--verbose", "--store", "--help"].contains(o))
                .collect();
            // Only the root has `--version` after `--help` (`plan load --version` is its own).
            let options = match options.split_last() {
                Some((&"--version", rest)) if path == "tollgate" => rest,
                _ => options.as_slice(),
            };
            let last = &options[options.len() - tail.len()..];
            if last != tail.as_slice() || tail != ["--verbose", "--store", "--help"] {
                misplaced.push(format!("{path}: {options:?}"));
            }
            let names: Vec<String> = command
                .get_subcommands()
                .map(|sub| sub.get_name().to_string())
                .filter(|name| name != "help")
                .collect();
            for name in names {
                let sub = command.find_subcommand_mut(&name).unwrap();
                walk(sub, &format!("{path} {name}"), misplaced);
            }
        }
        let mut command = Cli::command();
        command.build();
        let mut misplaced = Vec::new();
        walk(&mut command, "tollgate", &mut misplaced);
        assert!(misplaced.is_empty(), "{}", misplaced.join("\n"));
    }

    /// Issue 28: a bad value is an error naming the flag the user typed.
    #[test]
    fn bad_values_name_the_flag_typed() {
        for (flag, value) in [
            ("--fail-on-severity", "SUPER"),
            ("--categories", "security,bogus"),
        ] {
            let err = Cli::try_parse_from(["tollgate", "review", flag, value]).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(flag), "{text}");
            assert!(!text.contains("review."), "{text}");
        }
        assert!(Cli::try_parse_from(["tollgate", "review", "--fail-on-severity", "high"]).is_ok());
    }
}
