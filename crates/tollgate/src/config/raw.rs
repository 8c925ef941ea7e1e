//! The raw, layered shape of configuration: what a user wrote in `tollgate.toml`, in the
//! environment or on the command line, before validation.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::analyzers::RawAnalyzers;
use super::llm::RawLlm;
use super::{
    DEFAULT_HOTSPOTS, DEFAULT_IGNORE, DEFAULT_INVARIANTS_PATH, InvariantsSetting, PathOverride,
    PathPatterns, PreflightConfig, ReviewConfig, RuleOverride,
};
use crate::findings::{Category, Severity};
use crate::input::{self, DEFAULT_MAX_INPUT_BYTES, InputError, Limit, MAX_CONFIG_BYTES};

/// A configuration problem, naming where the bad value came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("Cannot read config file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Invalid config file {path}: {message}")]
    Parse { path: String, message: String },
    #[error("Invalid value for {origin}: {message}")]
    Value { origin: String, message: String },
    #[error(
        "Unknown environment variable {name}: Tollgate has no such setting{hint}\n  hint: the TOLLGATE_* variables it reads are listed in README.md (Configuration); unset {all} to go on"
    )]
    UnknownEnv {
        name: String,
        /// ` (did you mean …?)` or empty.
        hint: String,
        /// Every unknown name, comma-separated.
        all: String,
    },
    #[error(transparent)]
    Input(#[from] InputError),
}

/// Every setting optional: one layer of configuration.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    #[serde(default)]
    pub review: RawReview,
    #[serde(default)]
    pub preflight: RawPreflight,
    /// Per-rule overrides keyed by rule id, e.g. `[rules.TG001] severity = "LOW"`.
    #[serde(default)]
    pub rules: BTreeMap<String, RawRuleOverride>,
    /// Static analyzers: tsc, semgrep, imported SARIF.
    #[serde(default)]
    pub analyzers: RawAnalyzers,
    /// The model provider (`[llm]`).
    #[serde(default)]
    pub llm: RawLlm,
    /// Per-directory settings for monorepos (`[[overrides]]`), like ruff's per-file ignores.
    #[serde(default)]
    pub overrides: Vec<RawPathOverride>,
    /// The team's Lua tools (`[tools]`).
    #[serde(default)]
    pub tools: super::tools::RawTools,
    /// Documents synced into the knowledge store (`[sources.<name>]`).
    #[serde(default)]
    pub sources: super::sources::RawSources,
    /// Where plans, sessions, the model cache and the knowledge store live (`[store]`).
    #[serde(default)]
    pub store: RawStore,
    /// Review sessions (`[sessions]`).
    #[serde(default)]
    pub sessions: RawSessions,
    /// The HTTP server of `tollgate mcp --http` (`[server]`, seed 004's `ctx serve --config`).
    #[serde(default)]
    pub server: RawServer,
    /// The code index (`[index]`).
    #[serde(default)]
    pub index: RawIndex,
}

/// The `[index]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawIndex {
    /// `hashed` (the default, no model) or `model2vec:DIR`: a static embedding model in the
    /// model2vec format (`model.safetensors`, `tokenizer.json`), DIR relative to the workspace
    /// or absolute.
    pub embedder: Option<String>,
}

/// The `[server]` table: where `tollgate mcp --http` listens and whom it answers. Flags win.
/// Only the bind address may come from a repository's own `tollgate.toml` (still loopback
/// unless the operator passes `--allow-remote`); the hosts and origins that widen who may call
/// the server come from a file the operator names (`tollgate mcp --config FILE`) or flags.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    /// `ADDR:PORT` to listen on when `--http` is given without one (default 127.0.0.1:7331).
    pub bind: Option<String>,
    /// `Host` values accepted besides the loopback names.
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins accepted (and answered with CORS) besides loopback pages.
    pub allowed_origins: Option<Vec<String>>,
}

impl RawServer {
    /// Where `tollgate mcp --http` listens when neither the flag nor a file names an address.
    pub const DEFAULT_BIND: &'static str = "127.0.0.1:7331";

    /// The settings of the workspace's own `tollgate.toml` (`repository`, at `path`) under an
    /// operator's file: the operator's win; hosts and origins from the repository are refused,
    /// since they would let other pages and hosts call the server of whoever runs it there.
    pub fn under_operator(
        repository: RawServer,
        path: &str,
        operator: RawServer,
    ) -> Result<RawServer, ConfigError> {
        for (key, set) in [
            ("allowed_hosts", repository.allowed_hosts.is_some()),
            ("allowed_origins", repository.allowed_origins.is_some()),
        ] {
            if set {
                return Err(ConfigError::Value {
                    origin: format!("{path} [server] {key}"),
                    message: "a repository's own file may not open the server to other hosts or origins; the operator passes --allowed-host / --allowed-origin or names a file of theirs with --config FILE".to_string(),
                });
            }
        }
        Ok(RawServer {
            bind: operator.bind.or(repository.bind),
            allowed_hosts: operator.allowed_hosts,
            allowed_origins: operator.allowed_origins,
        })
    }
}

/// The `[store]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    /// `sqlite:PATH` or `postgres://…` (`TOLLGATE_STORE_URL`, `--store`).
    pub url: Option<String>,
    /// The knowledge store's quota in MiB, in all (default 1024) and per thread (default 256).
    pub memory_quota_mb: Option<u64>,
    pub thread_quota_mb: Option<u64>,
    /// The URL came from a repository's `tollgate.toml`, not from the operator (environment or
    /// flag): it may then only name an SQLite file inside the workspace, so a repository cannot
    /// move the store elsewhere or send the operator's database password to its own server.
    #[serde(skip)]
    pub from_repository: bool,
}

/// The `[sessions]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSessions {
    /// A worker whose heartbeat is older than this many seconds has lost its step (default 15).
    pub lease_secs: Option<u64>,
}

/// One `[[overrides]]` entry: paths, then what changes for findings on them.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawPathOverride {
    /// Globs, repository-relative (`packages/legacy/**`, `*.generated.ts`).
    pub paths: Vec<String>,
    /// Rule ids whose findings on these paths are dropped (`prefix*` allowed: `semgrep/*`).
    #[serde(default)]
    pub disable: Vec<String>,
    /// Severity per rule id on these paths (`{ TG002 = "INFO" }`).
    #[serde(default)]
    pub severity: BTreeMap<String, String>,
}

/// The `[review]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawReview {
    pub confidence_threshold: Option<f64>,
    pub max_findings: Option<usize>,
    pub categories: Option<Vec<String>>,
    pub fail_on_severity: Option<String>,
    #[serde(alias = "fail_on_invariant_ids")]
    pub fail_on_rule_ids: Option<Vec<String>>,
    #[serde(alias = "allowlist_finding_ids")]
    pub allowlist: Option<Vec<String>>,
    /// One path or several.
    pub invariants: Option<Vec<String>>,
    pub baseline: Option<String>,
    /// Size limit of the diff, imported SARIF files and the baseline, in bytes.
    pub max_input_bytes: Option<u64>,
    /// Wall-clock budget of the whole review, in milliseconds (0: none).
    pub time_budget_ms: Option<u64>,
    /// Whether an analyzer error (HIGH or worse) on a changed line fails the gate.
    pub fail_on_analyzer_errors: Option<bool>,
}

/// The `[preflight]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawPreflight {
    /// Replaces the built-in hotspot globs.
    pub hotspots: Option<Vec<String>>,
    /// Added to the built-in hotspot globs.
    pub extra_hotspots: Option<Vec<String>>,
    pub test_paths: Option<Vec<String>>,
    pub config_paths: Option<Vec<String>>,
    /// Replaces the built-in ignored globs.
    pub ignore: Option<Vec<String>>,
    pub large_change_lines: Option<usize>,
    pub large_change_files: Option<usize>,
}

/// `[rules.<id>]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawRuleOverride {
    pub enabled: Option<bool>,
    pub severity: Option<String>,
}

/// Environment variables read by [`RawConfig::from_env`], with the upstream names they alias.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("TOLLGATE_CONFIDENCE_THRESHOLD", ""),
    ("TOLLGATE_MAX_FINDINGS", ""),
    ("TOLLGATE_CATEGORIES", ""),
    ("TOLLGATE_FAIL_ON_SEVERITY", "CE_REVIEW_FAIL_ON_SEVERITY"),
    ("TOLLGATE_FAIL_ON_RULE_IDS", ""),
    ("TOLLGATE_ALLOWLIST", ""),
    ("TOLLGATE_INVARIANTS", ""),
    ("TOLLGATE_BASELINE", ""),
    ("TOLLGATE_ANALYZERS", ""),
    ("TOLLGATE_ANALYSIS_SCOPE", ""),
    ("TOLLGATE_STATIC_ANALYSIS_TIMEOUT_MS", ""),
    ("TOLLGATE_MAX_INPUT_BYTES", ""),
    ("TOLLGATE_TIME_BUDGET_MS", ""),
    ("TOLLGATE_FAIL_ON_ANALYZER_ERRORS", ""),
    ("TOLLGATE_STORE_URL", ""),
    ("TOLLGATE_SESSIONS_LEASE_SECS", ""),
    ("TOLLGATE_TOOLS_TIMEOUT_MS", ""),
    ("TOLLGATE_TOOLS_MEMORY_MB", ""),
    ("TOLLGATE_TOOLS_MAX_INSTRUCTIONS", ""),
];

/// `TOLLGATE_*` variables that are not settings: read by the binaries, the index, the tests
/// and the benchmarks for their own purposes. Any other `TOLLGATE_*` name is a typo or a setting
/// that does not exist, and is refused like an unknown key in `tollgate.toml`.
pub const OTHER_TOLLGATE_VARS: &[&str] = &[
    // Log filter of both binaries.
    "TOLLGATE_LOG",
    // The MCP server's bearer token, the embeddings endpoint's key, the Action's retry pace.
    "TOLLGATE_MCP_TOKEN",
    "TOLLGATE_EMBED_API_KEY",
    "TOLLGATE_RETRY_BASE_MS",
    // Search ranking ablations (tollgate-index).
    "TOLLGATE_SEARCH_SIGNALS_OFF",
    // Tests and benchmarks: schema regeneration, the binary under test, external tools.
    "TOLLGATE_UPDATE_SCHEMAS",
    "TOLLGATE_BIN",
    "TOLLGATE_SARIF_MULTITOOL",
    "TOLLGATE_MCP_PYTHON",
    "TOLLGATE_MERMAID_VALIDATOR",
    // Tests: whether the store suite must run on PostgreSQL, and where its binaries are.
    "TOLLGATE_TEST_POSTGRES",
    "TOLLGATE_PG_BIN",
    // action/action.yml: which release to install.
    "TOLLGATE_VERSION",
    "TOLLGATE_REPOSITORY",
];

impl RawConfig {
    /// Parses the text of a `tollgate.toml`; `path` is only used in messages.
    pub fn from_toml(text: &str, path: &str) -> Result<RawConfig, ConfigError> {
        let mut raw: RawConfig = toml::from_str(text).map_err(|err| ConfigError::Parse {
            path: path.to_string(),
            message: describe_toml_error(text, &err),
        })?;
        raw.store.from_repository = raw.store.url.is_some();
        Ok(raw)
    }

    /// Reads and parses a `tollgate.toml`.
    pub fn from_file(path: &Path) -> Result<RawConfig, ConfigError> {
        let display = path.display().to_string();
        let bytes = input::read_file(path, "config file", Limit::fixed(MAX_CONFIG_BYTES))?;
        let text = String::from_utf8(bytes).map_err(|_| ConfigError::Parse {
            path: display.clone(),
            message: "the file is not valid UTF-8".to_string(),
        })?;
        RawConfig::from_toml(&text, &display)
    }

    /// Builds a layer from environment variables (`TOLLGATE_*`; upstream's
    /// `CE_REVIEW_FAIL_ON_SEVERITY` is honoured when the Tollgate name is absent). Lists are
    /// comma-separated.
    pub fn from_env<I, K, V>(vars: I) -> Result<RawConfig, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let vars: BTreeMap<String, String> = vars
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
            .collect();
        let get = |name: &str| -> Option<(String, String)> {
            let (_, alias) = ENV_VARS.iter().find(|(n, _)| *n == name)?;
            vars.get(name)
                .map(|v| (name.to_string(), v.clone()))
                .or_else(|| {
                    (!alias.is_empty())
                        .then(|| vars.get(*alias).map(|v| (alias.to_string(), v.clone())))
                        .flatten()
                })
                .filter(|(_, v)| !v.trim().is_empty())
        };
        let mut review = RawReview::default();
        if let Some((origin, value)) = get("TOLLGATE_CONFIDENCE_THRESHOLD") {
            review.confidence_threshold = Some(parse_number(&origin, &value)?);
        }
        if let Some((origin, value)) = get("TOLLGATE_MAX_FINDINGS") {
            review.max_findings = Some(parse_number(&origin, &value)?);
        }
        review.categories = get("TOLLGATE_CATEGORIES").map(|(_, v)| split_list(&v));
        review.fail_on_severity = get("TOLLGATE_FAIL_ON_SEVERITY").map(|(_, v)| v);
        review.fail_on_rule_ids = get("TOLLGATE_FAIL_ON_RULE_IDS").map(|(_, v)| split_list(&v));
        review.allowlist = get("TOLLGATE_ALLOWLIST").map(|(_, v)| split_list(&v));
        review.invariants = get("TOLLGATE_INVARIANTS").map(|(_, v)| split_list(&v));
        review.baseline = get("TOLLGATE_BASELINE").map(|(_, v)| v);
        if let Some((origin, value)) = get("TOLLGATE_MAX_INPUT_BYTES") {
            review.max_input_bytes = Some(parse_number(&origin, &value)?);
        }
        if let Some((origin, value)) = get("TOLLGATE_TIME_BUDGET_MS") {
            review.time_budget_ms = Some(parse_number(&origin, &value)?);
        }
        if let Some((origin, value)) = get("TOLLGATE_FAIL_ON_ANALYZER_ERRORS") {
            review.fail_on_analyzer_errors = Some(super::llm::parse_bool(&origin, &value)?);
        }
        let mut analyzers = RawAnalyzers {
            static_analyzers: get("TOLLGATE_ANALYZERS").map(|(_, v)| split_list(&v)),
            scope: get("TOLLGATE_ANALYSIS_SCOPE").map(|(_, v)| v),
            // Tools are looked up on the caller's PATH, which only the front end may read.
            search_path: vars.get("PATH").cloned(),
            ..RawAnalyzers::default()
        };
        if let Some((origin, value)) = get("TOLLGATE_STATIC_ANALYSIS_TIMEOUT_MS") {
            analyzers.static_analysis_timeout_ms = Some(parse_number(&origin, &value)?);
        }
        let llm = RawLlm::from_env(&vars)?;
        let store = RawStore {
            url: get("TOLLGATE_STORE_URL").map(|(_, v)| v),
            ..RawStore::default()
        };
        let mut sessions = RawSessions::default();
        if let Some((origin, value)) = get("TOLLGATE_SESSIONS_LEASE_SECS") {
            sessions.lease_secs = Some(parse_number(&origin, &value)?);
        }
        let mut tools = super::tools::RawTools::default();
        if let Some((origin, value)) = get("TOLLGATE_TOOLS_TIMEOUT_MS") {
            tools.timeout_ms = Some(parse_number(&origin, &value)?);
        }
        if let Some((origin, value)) = get("TOLLGATE_TOOLS_MEMORY_MB") {
            tools.memory_mb = Some(parse_number(&origin, &value)?);
        }
        if let Some((origin, value)) = get("TOLLGATE_TOOLS_MAX_INSTRUCTIONS") {
            tools.max_instructions = Some(parse_number(&origin, &value)?);
        }
        Ok(RawConfig {
            review,
            analyzers,
            llm,
            store,
            sessions,
            tools,
            ..RawConfig::default()
        })
    }

    /// Stacks `higher` on top of `self`: every setting `higher` has wins.
    pub fn overlay(self, higher: RawConfig) -> RawConfig {
        let (low, high) = (self.review, higher.review);
        let review = RawReview {
            confidence_threshold: high.confidence_threshold.or(low.confidence_threshold),
            max_findings: high.max_findings.or(low.max_findings),
            categories: high.categories.or(low.categories),
            fail_on_severity: high.fail_on_severity.or(low.fail_on_severity),
            fail_on_rule_ids: high.fail_on_rule_ids.or(low.fail_on_rule_ids),
            allowlist: high.allowlist.or(low.allowlist),
            invariants: high.invariants.or(low.invariants),
            baseline: high.baseline.or(low.baseline),
            max_input_bytes: high.max_input_bytes.or(low.max_input_bytes),
            time_budget_ms: high.time_budget_ms.or(low.time_budget_ms),
            fail_on_analyzer_errors: high.fail_on_analyzer_errors.or(low.fail_on_analyzer_errors),
        };
        let (low, high) = (self.preflight, higher.preflight);
        let preflight = RawPreflight {
            hotspots: high.hotspots.or(low.hotspots),
            extra_hotspots: high.extra_hotspots.or(low.extra_hotspots),
            test_paths: high.test_paths.or(low.test_paths),
            config_paths: high.config_paths.or(low.config_paths),
            ignore: high.ignore.or(low.ignore),
            large_change_lines: high.large_change_lines.or(low.large_change_lines),
            large_change_files: high.large_change_files.or(low.large_change_files),
        };
        let mut rules = self.rules;
        for (id, over) in higher.rules {
            let entry = rules.entry(id).or_default();
            entry.enabled = over.enabled.or(entry.enabled);
            entry.severity = over.severity.or(entry.severity.take());
        }
        // Entries are a list: a layer that has some replaces the lower layer's.
        let overrides = if higher.overrides.is_empty() {
            self.overrides
        } else {
            higher.overrides
        };
        // The URL and where it came from go together; the quotas stack one by one.
        let (low, high) = (self.store, higher.store);
        let located = if high.url.is_some() { &high } else { &low };
        let store = RawStore {
            url: located.url.clone(),
            from_repository: located.from_repository,
            memory_quota_mb: high.memory_quota_mb.or(low.memory_quota_mb),
            thread_quota_mb: high.thread_quota_mb.or(low.thread_quota_mb),
        };
        let sessions = RawSessions {
            lease_secs: higher.sessions.lease_secs.or(self.sessions.lease_secs),
        };
        let (low, high) = (self.server, higher.server);
        let server = RawServer {
            bind: high.bind.or(low.bind),
            allowed_hosts: high.allowed_hosts.or(low.allowed_hosts),
            allowed_origins: high.allowed_origins.or(low.allowed_origins),
        };
        RawConfig {
            review,
            preflight,
            rules,
            analyzers: self.analyzers.overlay(higher.analyzers),
            llm: self.llm.overlay(higher.llm),
            overrides,
            store,
            sessions,
            tools: self.tools.overlay(higher.tools),
            server,
            index: RawIndex {
                embedder: higher.index.embedder.or(self.index.embedder),
            },
            // A layer's source replaces the lower layer's of the same name.
            sources: {
                let mut sources = self.sources;
                sources.extend(higher.sources);
                sources
            },
        }
    }

    /// Validates every value and applies defaults (upstream's `review_diff` defaults).
    pub fn resolve(self) -> Result<ReviewConfig, ConfigError> {
        let review = self.review;
        let confidence_threshold = review.confidence_threshold.unwrap_or(0.55);
        if !(0.0..=1.0).contains(&confidence_threshold) {
            return Err(value_error(
                "review.confidence_threshold",
                format!("{confidence_threshold} is outside 0.0–1.0"),
            ));
        }
        let categories = review
            .categories
            .unwrap_or_default()
            .iter()
            .map(|c| c.parse::<Category>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| value_error("review.categories", e.to_string()))?;
        let fail_on_severity = match review.fail_on_severity {
            Some(text) => text
                .parse::<Severity>()
                .map_err(|e| value_error("review.fail_on_severity", e.to_string()))?,
            None => Severity::Critical,
        };
        let invariants = match review.invariants {
            Some(paths) if !paths.is_empty() => InvariantsSetting {
                paths,
                explicit: true,
            },
            _ => InvariantsSetting {
                paths: vec![DEFAULT_INVARIANTS_PATH.to_string()],
                explicit: false,
            },
        };

        let pre = self.preflight;
        let mut hotspots = pre
            .hotspots
            .unwrap_or_else(|| DEFAULT_HOTSPOTS.iter().map(|s| s.to_string()).collect());
        hotspots.extend(pre.extra_hotspots.unwrap_or_default());
        let ignore = pre
            .ignore
            .unwrap_or_else(|| DEFAULT_IGNORE.iter().map(|s| s.to_string()).collect());
        let globs = |key: &str, list: &[String]| {
            PathPatterns::new(list).map_err(|e| value_error(key, e.to_string()))
        };
        let preflight = PreflightConfig {
            hotspots: globs("preflight.hotspots", &hotspots)?,
            extra_test_paths: globs("preflight.test_paths", &pre.test_paths.unwrap_or_default())?,
            extra_config_paths: globs(
                "preflight.config_paths",
                &pre.config_paths.unwrap_or_default(),
            )?,
            ignore_paths: globs("preflight.ignore", &ignore)?,
            large_change_lines: pre.large_change_lines.unwrap_or(1000),
            large_change_files: pre.large_change_files.unwrap_or(50),
        };

        let mut rule_overrides = BTreeMap::new();
        for (id, raw) in self.rules {
            let severity = raw
                .severity
                .map(|s| s.parse::<Severity>())
                .transpose()
                .map_err(|e| value_error(&format!("rules.{id}.severity"), e.to_string()))?;
            rule_overrides.insert(
                id,
                RuleOverride {
                    enabled: raw.enabled.unwrap_or(true),
                    severity,
                },
            );
        }

        let path_overrides = resolve_overrides(self.overrides, "overrides")?;

        let max_input_bytes = review.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT_BYTES);
        if max_input_bytes == 0 {
            return Err(value_error(
                "review.max_input_bytes",
                "0 would refuse every input; give a size in bytes".to_string(),
            ));
        }
        let time_budget = review
            .time_budget_ms
            .filter(|&ms| ms > 0)
            .map(Duration::from_millis);
        let mut analyzers = self.analyzers.resolve()?;
        // Imported SARIF files are big inputs too; one setting bounds them all.
        analyzers.max_import_bytes = max_input_bytes;
        let mut llm = self.llm.resolve()?;
        llm.cache_store = self.store;

        Ok(ReviewConfig {
            analyzers,
            llm,
            confidence_threshold,
            max_findings: review.max_findings.unwrap_or(20),
            categories,
            fail_on_severity,
            fail_on_rule_ids: review.fail_on_rule_ids.unwrap_or_default(),
            fail_on_analyzer_errors: review.fail_on_analyzer_errors.unwrap_or(true),
            allowlist: review.allowlist.unwrap_or_default(),
            invariants,
            baseline: review.baseline,
            max_input_bytes,
            time_budget,
            preflight,
            rule_overrides,
            path_overrides,
        })
    }
}

/// Refuses a `TOLLGATE_*` variable that is neither a setting nor in [`OTHER_TOLLGATE_VARS`]
/// (`key_env`, the variable holding the API key, may have any name).
pub(super) fn check_env_names<'a>(
    names: impl Iterator<Item = &'a str>,
    key_env: Option<&str>,
) -> Result<(), ConfigError> {
    let known = |name: &str| {
        ENV_VARS.iter().any(|(n, _)| *n == name)
            || super::LLM_ENV_VARS.contains(&name)
            || OTHER_TOLLGATE_VARS.contains(&name)
            || key_env == Some(name)
    };
    let mut unknown: Vec<&str> = names
        .filter(|name| name.starts_with("TOLLGATE_") && !known(name))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    let first = unknown[0];
    let hint = closest_env_name(first)
        .map(|near| format!(" (did you mean {near}?)"))
        .unwrap_or_default();
    Err(ConfigError::UnknownEnv {
        name: first.to_string(),
        hint,
        all: unknown.join(", "),
    })
}

/// The setting's variable whose name shares the longest prefix with `name`, when it is close.
fn closest_env_name(name: &str) -> Option<&'static str> {
    let common = |a: &str, b: &str| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    ENV_VARS
        .iter()
        .map(|(n, _)| *n)
        .chain(super::LLM_ENV_VARS.iter().copied())
        .filter(|candidate| candidate.starts_with("TOLLGATE_"))
        .map(|candidate| (common(candidate, name), candidate))
        .filter(|(n, _)| *n > "TOLLGATE_".len() + 2)
        .max_by_key(|(n, _)| *n)
        .map(|(_, candidate)| candidate)
}

/// Validates `[[overrides]]` entries; `origin` names them in errors (`overrides`, or a nested
/// file's `packages/api/tollgate.toml: overrides`).
pub(super) fn resolve_overrides(
    entries: Vec<RawPathOverride>,
    origin: &str,
) -> Result<Vec<PathOverride>, ConfigError> {
    let mut path_overrides = Vec::with_capacity(entries.len());
    for (idx, raw) in entries.into_iter().enumerate() {
        let key = format!("{origin}[{idx}]");
        if raw.paths.is_empty() {
            return Err(value_error(
                &format!("{key}.paths"),
                "give at least one glob; an override without paths would apply nowhere".to_string(),
            ));
        }
        let paths = PathPatterns::new(&raw.paths)
            .map_err(|e| value_error(&format!("{key}.paths"), e.to_string()))?;
        let mut severity = BTreeMap::new();
        for (rule, text) in raw.severity {
            let parsed = text
                .parse::<Severity>()
                .map_err(|e| value_error(&format!("{key}.severity.{rule}"), e.to_string()))?;
            severity.insert(rule, parsed);
        }
        path_overrides.push(PathOverride {
            paths,
            disable: raw.disable,
            enable: Vec::new(),
            severity,
        });
    }
    Ok(path_overrides)
}

pub(super) fn value_error(origin: &str, message: String) -> ConfigError {
    ConfigError::Value {
        origin: origin.to_string(),
        message,
    }
}

fn parse_number<T: std::str::FromStr>(origin: &str, value: &str) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .map_err(|e| value_error(origin, format!("`{value}`: {e}")))
}

fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Turns a TOML error into `line L, column C: message`.
fn describe_toml_error(text: &str, err: &toml::de::Error) -> String {
    let message = err.message().trim_end().to_string();
    match err.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_toml_is_refused_by_the_parser_s_own_depth_limit() {
        // `toml` stops arrays, inline tables and dotted keys at depth 80 (and a config file is
        // at most 1 MiB): pinned here so an upgrade that drops the guard fails loudly.
        for text in [
            format!("a = {}", "[".repeat(200_000)),
            format!("a = {}", "{b = ".repeat(100_000)),
            format!("{} = 1", vec!["k"; 100_000].join(".")),
        ] {
            let err = RawConfig::from_toml(&text, "tollgate.toml").unwrap_err();
            assert!(matches!(err, ConfigError::Parse { .. }), "{err}");
        }
    }

    #[test]
    fn limits_and_the_time_budget_layer_like_other_settings() {
        let file = RawConfig::from_toml(
            "[review]\nmax_input_bytes = 10\ntime_budget_ms = 5000\n",
            "t",
        )
        .unwrap();
        let env = RawConfig::from_env([("TOLLGATE_MAX_INPUT_BYTES", "20")]).unwrap();
        let config = file.overlay(env).resolve().unwrap();
        assert_eq!(config.max_input_bytes, 20);
        assert_eq!(config.analyzers.max_import_bytes, 20);
        assert_eq!(config.time_budget, Some(Duration::from_secs(5)));
        let defaults = RawConfig::default().resolve().unwrap();
        assert_eq!(defaults.max_input_bytes, DEFAULT_MAX_INPUT_BYTES);
        assert_eq!(defaults.time_budget, None);
        let zero = RawConfig::from_env([("TOLLGATE_MAX_INPUT_BYTES", "0")]).unwrap();
        assert!(
            zero.resolve()
                .unwrap_err()
                .to_string()
                .contains("review.max_input_bytes")
        );
    }

    #[test]
    fn flags_override_env_which_overrides_file() {
        let file = RawConfig::from_toml(
            "[review]\nfail_on_severity = \"LOW\"\nmax_findings = 5\nconfidence_threshold = 0.1\n",
            "tollgate.toml",
        )
        .unwrap();
        let env = RawConfig::from_env([
            ("TOLLGATE_FAIL_ON_SEVERITY", "medium"),
            ("TOLLGATE_MAX_FINDINGS", "7"),
        ])
        .unwrap();
        let flags = RawConfig {
            review: RawReview {
                fail_on_severity: Some("HIGH".into()),
                ..RawReview::default()
            },
            ..RawConfig::default()
        };
        let config = file.overlay(env).overlay(flags).resolve().unwrap();
        assert_eq!(config.fail_on_severity, Severity::High);
        assert_eq!(config.max_findings, 7);
        assert_eq!(config.confidence_threshold, 0.1);
    }

    #[test]
    fn defaults_follow_upstream_review_diff() {
        let config = RawConfig::default().resolve().unwrap();
        assert_eq!(config.fail_on_severity, Severity::Critical);
        assert_eq!(config.max_findings, 20);
        assert_eq!(config.confidence_threshold, 0.55);
        assert!(!config.invariants.explicit);
        assert_eq!(config.invariants.paths, vec![DEFAULT_INVARIANTS_PATH]);
    }

    #[test]
    fn upstream_env_alias_is_used_only_without_tollgate_name() {
        let only_alias = RawConfig::from_env([("CE_REVIEW_FAIL_ON_SEVERITY", "HIGH")]).unwrap();
        assert_eq!(only_alias.review.fail_on_severity.as_deref(), Some("HIGH"));
        let both = RawConfig::from_env([
            ("CE_REVIEW_FAIL_ON_SEVERITY", "HIGH"),
            ("TOLLGATE_FAIL_ON_SEVERITY", "LOW"),
        ])
        .unwrap();
        assert_eq!(both.review.fail_on_severity.as_deref(), Some("LOW"));
    }

    #[test]
    fn errors_name_the_key_line_and_value() {
        let err =
            RawConfig::from_toml("[review]\nmax_findngs = 3\n", "x/tollgate.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("x/tollgate.toml"), "{text}");
        assert!(text.contains("line 2"), "{text}");
        assert!(text.contains("max_findngs"), "{text}");

        let err = RawConfig::from_env([("TOLLGATE_MAX_FINDINGS", "many")]).unwrap_err();
        assert!(err.to_string().contains("TOLLGATE_MAX_FINDINGS"), "{err}");

        let raw = RawConfig::from_toml("[review]\nfail_on_severity = \"SEVERE\"\n", "t").unwrap();
        let err = raw.resolve().unwrap_err().to_string();
        assert!(
            err.contains("review.fail_on_severity") && err.contains("SEVERE"),
            "{err}"
        );

        let raw = RawConfig::from_toml("[preflight]\nhotspots = [\"a/[\"]\n", "t").unwrap();
        assert!(
            raw.resolve()
                .unwrap_err()
                .to_string()
                .contains("preflight.hotspots")
        );
    }

    #[test]
    fn rule_overrides_merge_per_field() {
        let low = RawConfig::from_toml("[rules.TG001]\nseverity = \"LOW\"\n", "t").unwrap();
        let high = RawConfig::from_toml("[rules.TG001]\nenabled = false\n", "t").unwrap();
        let config = low.overlay(high).resolve().unwrap();
        let over = &config.rule_overrides["TG001"];
        assert!(!over.enabled);
        assert_eq!(over.severity, Some(Severity::Low));
    }

    /// Issue 28: the unknown-variable error points at README.md's Configuration section, whose
    /// one table lists every `TOLLGATE_*` variable the code knows, no more, no fewer.
    #[test]
    fn the_readme_configuration_table_lists_every_variable() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
                .unwrap();
        let section = readme
            .split("\n## ")
            .find(|s| s.starts_with("Configuration\n"))
            .expect("README.md has a `## Configuration` section");
        let mut documented = std::collections::BTreeSet::new();
        for row in section.lines().filter(|l| l.starts_with("| `TOLLGATE_")) {
            let name = row.trim_start_matches("| `").split('`').next().unwrap();
            assert!(documented.insert(name.to_string()), "{name} twice");
        }
        let known: std::collections::BTreeSet<String> = ENV_VARS
            .iter()
            .map(|(name, _)| *name)
            .chain(super::super::LLM_ENV_VARS.iter().copied())
            .chain(OTHER_TOLLGATE_VARS.iter().copied())
            .filter(|name| name.starts_with("TOLLGATE_"))
            .map(String::from)
            .collect();
        assert_eq!(documented, known);
    }
}
