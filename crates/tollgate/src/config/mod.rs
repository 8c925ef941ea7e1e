//! Configuration: `tollgate.toml`, then the environment, then flags.
//!
//! Each layer is a [`RawConfig`] (every field optional, mirroring what a user wrote);
//! [`RawConfig::overlay`] stacks them and [`RawConfig::resolve`] turns the result into a validated
//! [`ReviewConfig`] once, so nothing downstream parses strings again. The core never reads the
//! environment itself: front ends hand [`RawConfig::from_env`] the variables.
//!
//! [`load`] is the one way front ends build their configuration: it finds the workspace's
//! `tollgate.toml` (or reads the file or text they name), stacks the environment and their
//! flags on it, and returns the layers for the caller to resolve (or to stack a request's
//! options on first).

mod analyzers;
mod llm;
mod nested;
mod raw;
mod sources;
mod tools;

pub(crate) use analyzers::check_semgrep_args;
pub use analyzers::{
    AnalyzersConfig, DEFAULT_ANALYZER_TIMEOUT_MS, DEFAULT_CACHE_DIR,
    DEFAULT_MAX_FINDINGS_PER_ANALYZER, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_SEMGREP_BATCH_SIZE,
    RawAnalyzers, RawSemgrep, RawTsc, SemgrepSettings, TscSettings, default_semgrep_severity_map,
};
pub use llm::{
    ApiKey, DEFAULT_LLM_CONCURRENCY, DEFAULT_LLM_MAX_OUTPUT_TOKENS, DEFAULT_LLM_RETRIES,
    DEFAULT_LLM_TIMEOUT_MS, EnvSnapshot, LLM_ENV_VARS, LlmConfig, LlmPassConfig, MAX_RETRY_AFTER,
    ProviderKind, RawLlm, StructuredOutput,
};
pub use nested::{NestedConfig, nested_config_paths};
pub use raw::{
    ConfigError, ENV_VARS, OTHER_TOLLGATE_VARS, RawConfig, RawIndex, RawPathOverride, RawPreflight,
    RawReview, RawRuleOverride, RawServer, RawSessions, RawStore,
};
pub use sources::{
    DEFAULT_SOURCE_MAX_BYTES, DEFAULT_SOURCE_MAX_DOCUMENTS, RawSource, RawSources, SourceConfig,
    SourceKind, SourcesConfig, resolve_sources,
};
pub use tools::{
    DEFAULT_TOOL_MAX_INSTRUCTIONS, DEFAULT_TOOL_MEMORY_MB, DEFAULT_TOOL_TIMEOUT_MS, RawCredential,
    RawToolAccess, RawTools, ToolAccess, ToolsConfig,
};

use std::collections::BTreeMap;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::findings::{Category, Severity};

/// The name of the configuration file looked for in the repository root.
pub const CONFIG_FILE_NAME: &str = "tollgate.toml";

/// The invariants file used when none is configured (skipped when absent).
pub const DEFAULT_INVARIANTS_PATH: &str = ".review-invariants.yml";

/// The commented `tollgate.toml` written by `tollgate init`.
pub const STARTER_CONFIG: &str = include_str!("starter.toml");

/// The starter `.review-invariants.yml` written by `tollgate init`.
pub const STARTER_INVARIANTS: &str = include_str!("starter-invariants.yml");

/// Where the file layer of [`load`] comes from.
#[derive(Debug, Clone, Copy)]
pub enum ConfigFile<'a> {
    /// `tollgate.toml` in this workspace root, when it exists.
    Discover(&'a std::path::Path),
    /// A file the user named (`--config`): it must exist.
    Path(&'a std::path::Path),
    /// Text read by the caller (the Action's gate files at the base commit); `label` names it in
    /// messages.
    Text { text: &'a str, label: &'a str },
    /// No file layer.
    None,
}

/// The configuration layers: file < environment (`env`, the caller's `std::env::vars()`) <
/// `flags`. An unknown `TOLLGATE_*` variable or a bad value is an error naming it; validation
/// of the stacked values happens in [`RawConfig::resolve`].
pub fn load<I, K, V>(
    file: ConfigFile<'_>,
    env: I,
    flags: RawConfig,
) -> Result<RawConfig, ConfigError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let file_layer = match file {
        ConfigFile::Discover(root) => {
            let path = root.join(CONFIG_FILE_NAME);
            if path.is_file() {
                RawConfig::from_file(&path)?
            } else {
                RawConfig::default()
            }
        }
        ConfigFile::Path(path) => RawConfig::from_file(path)?,
        ConfigFile::Text { text, label } => RawConfig::from_toml(text, label)?,
        ConfigFile::None => RawConfig::default(),
    };
    let env_layer = RawConfig::from_env(env)?;
    let layers = file_layer.overlay(env_layer).overlay(flags);
    if let Some(env) = &layers.llm.environment {
        raw::check_env_names(env.names(), layers.llm.api_key_env.as_deref())?;
    }
    Ok(layers)
}

/// Validated settings of a review run.
#[derive(Debug, Clone)]
pub struct ReviewConfig {
    /// Findings below this confidence are dropped (0.0–1.0).
    pub confidence_threshold: f64,
    /// Findings kept in the output after the gate was decided.
    pub max_findings: usize,
    /// When non-empty, only findings of these categories are kept.
    pub categories: Vec<Category>,
    /// The gate fails on any finding at or above this severity.
    pub fail_on_severity: Severity,
    /// The gate fails on any finding of these rules, whatever their severity.
    pub fail_on_rule_ids: Vec<String>,
    /// The gate fails on an analyzer's error (tsc, semgrep, imported SARIF; HIGH or worse) on a
    /// changed line, whatever `fail_on_severity` says: a new type error is what a reviewer
    /// blocks. On by default.
    pub fail_on_analyzer_errors: bool,
    /// Rule ids, finding ids or fingerprints whose findings are dropped.
    pub allowlist: Vec<String>,
    /// Invariants files, relative to the workspace. `explicit` says whether a user named them
    /// (a missing explicit file is an error; the missing default file is skipped).
    pub invariants: InvariantsSetting,
    /// Baseline file of accepted fingerprints, relative to the workspace.
    pub baseline: Option<String>,
    /// Size limit of the diff (file or stdin), imported SARIF files and the baseline
    /// ([`crate::input::DEFAULT_MAX_INPUT_BYTES`] unless configured).
    pub max_input_bytes: u64,
    /// Wall-clock budget of the whole review; when it runs out the remaining work is skipped
    /// and the gate fails, saying so. `None`: no budget.
    pub time_budget: Option<std::time::Duration>,
    pub preflight: PreflightConfig,
    /// Per-rule overrides of the built-in checks, keyed by rule id.
    pub rule_overrides: BTreeMap<String, RuleOverride>,
    /// `[[overrides]]`: per-path rule settings, applied in order (a later match wins).
    pub path_overrides: Vec<PathOverride>,
    /// Static analyzers (`[analyzers]`).
    pub analyzers: AnalyzersConfig,
    /// The model provider (`[llm]`); model passes run only when one is configured.
    pub llm: LlmConfig,
}

/// Which invariants files apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantsSetting {
    pub paths: Vec<String>,
    pub explicit: bool,
}

/// Override of one built-in rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOverride {
    pub enabled: bool,
    pub severity: Option<Severity>,
}

/// One `[[overrides]]` entry, validated.
#[derive(Debug, Clone)]
pub struct PathOverride {
    pub paths: PathPatterns,
    /// Rule ids (or `prefix*`) whose findings on these paths are dropped.
    pub disable: Vec<String>,
    /// Rule ids (or `prefix*`) kept on these paths although an earlier entry disabled them
    /// (a nested `tollgate.toml` enabling a rule the root disables).
    pub enable: Vec<String>,
    /// Severity per rule id on these paths.
    pub severity: BTreeMap<String, Severity>,
}

/// Globs and thresholds behind the preflight signals.
#[derive(Debug, Clone)]
pub struct PreflightConfig {
    pub hotspots: PathPatterns,
    /// Extra test-file globs on top of the per-language conventions.
    pub extra_test_paths: PathPatterns,
    /// Extra config/CI globs on top of the built-in list.
    pub extra_config_paths: PathPatterns,
    /// Paths never considered at all (generated code, vendored trees).
    pub ignore_paths: PathPatterns,
    /// A change above this many changed lines is "large".
    pub large_change_lines: usize,
    /// A change touching more than this many files is "wide".
    pub large_change_files: usize,
}

/// A compiled list of globs that remembers its source text.
#[derive(Debug, Clone)]
pub struct PathPatterns {
    patterns: Vec<String>,
    set: GlobSet,
}

impl PathPatterns {
    /// Compiles globs: `*` stays within a path segment, `**` crosses them, matching is
    /// case-insensitive, and a pattern without `/` matches a file name at any depth.
    ///
    /// Case-insensitivity comes from lowercasing both the patterns and the paths: globset's
    /// own case-insensitive mode turns every glob into a regex, and compiling those costs more
    /// than a whole review of a typical diff.
    pub fn new(patterns: &[String]) -> Result<PathPatterns, globset::Error> {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let lower = pattern.to_lowercase();
            let effective = if lower.contains('/') {
                lower.trim_start_matches("./").to_string()
            } else {
                format!("**/{lower}")
            };
            builder.add(
                GlobBuilder::new(&effective)
                    .literal_separator(true)
                    .build()?,
            );
        }
        Ok(PathPatterns {
            patterns: patterns.to_vec(),
            set: builder.build()?,
        })
    }

    pub fn empty() -> PathPatterns {
        PathPatterns {
            patterns: Vec::new(),
            set: GlobSet::empty(),
        }
    }

    pub fn is_match(&self, path: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(path.to_lowercase())
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// Built-in hotspot globs: code where a mistake costs more.
pub const DEFAULT_HOTSPOTS: &[&str] = &[
    "**/auth/**",
    "**/oauth/**",
    "**/authn/**",
    "**/authz/**",
    "**/*auth.*",
    "**/*auth[_-]*",
    "**/security/**",
    "**/crypto/**",
    "**/*crypto*.*",
    "**/tls/**",
    "**/ssl/**",
    "**/jwt/**",
    "**/*jwt*.*",
    "**/tokens/**",
    "**/*token.*",
    "**/*token[_-]*",
    "**/*password*.*",
    "**/secrets/**",
    "**/permissions/**",
    "**/*permission*.*",
    "**/acl/**",
    "**/migrations/**",
    "**/migrate/**",
    "**/*migration*.*",
    "**/payments/**",
    "**/billing/**",
];

/// Built-in ignored paths: generated or vendored code nobody reviews line by line.
pub const DEFAULT_IGNORE: &[&str] = &[
    "**/node_modules/**",
    "**/vendor/**",
    "**/third_party/**",
    "**/*.min.js",
    "**/*.min.css",
    "**/*.pb.go",
    "**/*_pb2.py",
    "**/*.generated.*",
    "**/dist/**",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starter_config_parses_and_resolves_to_defaults() {
        let raw = RawConfig::from_toml(STARTER_CONFIG, "starter.toml").unwrap();
        let config = raw.resolve().unwrap();
        assert_eq!(config.fail_on_severity, crate::findings::Severity::Critical);
    }

    #[test]
    fn starter_config_has_a_commented_llm_section_whose_keys_exist() {
        let section: String = STARTER_CONFIG
            .split("\n[")
            .find(|part| part.starts_with("llm]"))
            .expect("an [llm] section")
            .lines()
            .skip(1)
            .take_while(|line| !line.starts_with("# [["))
            .filter_map(|line| line.strip_prefix("# "))
            .filter(|line| line.contains(" = "))
            .map(|line| format!("{line}\n"))
            .collect();
        assert!(section.contains("provider = "), "{section}");
        // Uncommented, every example is a valid setting.
        let raw = RawConfig::from_toml(&format!("[llm]\n{section}"), "starter [llm]").unwrap();
        assert_eq!(raw.llm.provider.as_deref(), Some("openai"));
        raw.resolve().unwrap();
    }

    #[test]
    fn load_finds_the_workspace_file_and_stacks_env_and_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE_NAME),
            "[review]\nmax_findings = 3\nconfidence_threshold = 0.2\n[llm]\ntwo_pass = true\n",
        )
        .unwrap();
        let flags = RawConfig {
            review: RawReview {
                confidence_threshold: Some(0.9),
                ..RawReview::default()
            },
            ..RawConfig::default()
        };
        let env = [
            ("TOLLGATE_MAX_FINDINGS", "4"),
            ("TOLLGATE_LLM_TWO_PASS", "false"),
            ("TOLLGATE_LOG", "debug"),
        ];
        let config = load(ConfigFile::Discover(dir.path()), env, flags)
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(config.max_findings, 4);
        assert_eq!(config.confidence_threshold, 0.9);
        assert!(
            !config.llm.passes.two_pass,
            "TOLLGATE_LLM_TWO_PASS=false must take effect"
        );
        // No file: defaults.
        let empty = tempfile::tempdir().unwrap();
        let config = load(
            ConfigFile::Discover(empty.path()),
            env,
            RawConfig::default(),
        )
        .unwrap()
        .resolve()
        .unwrap();
        assert_eq!(config.confidence_threshold, 0.55);
    }

    #[test]
    fn every_setting_has_an_environment_variable() {
        let env = [
            ("TOLLGATE_LLM_FORCE", "true"),
            ("TOLLGATE_LLM_TWO_PASS", "off"),
            ("TOLLGATE_LLM_RISK_THRESHOLD", "4"),
            ("TOLLGATE_LLM_TOKEN_BUDGET", "2000"),
            ("TOLLGATE_LLM_MAX_CONTEXT_FILES", "7"),
            ("TOLLGATE_LLM_CUSTOM_INSTRUCTIONS", "Mind the locks."),
            ("TOLLGATE_LLM_API_VERSION", "2024-10-21"),
            ("TOLLGATE_LLM_RETRY_BACKOFF_MS", "250"),
            ("TOLLGATE_LLM_REQUIRED", "yes"),
            ("TOLLGATE_LLM_TIME_BUDGET_MS", "90000"),
        ];
        let llm = load(ConfigFile::None, env, RawConfig::default())
            .unwrap()
            .resolve()
            .unwrap()
            .llm;
        let passes = &llm.passes;
        assert!(passes.force && !passes.two_pass);
        assert_eq!(
            (
                passes.risk_threshold,
                passes.token_budget,
                passes.max_context_files
            ),
            (4, 2000, 7)
        );
        assert_eq!(
            passes.custom_instructions.as_deref(),
            Some("Mind the locks.")
        );
        assert_eq!(llm.api_version.as_deref(), Some("2024-10-21"));
        assert_eq!(llm.retry_backoff, std::time::Duration::from_millis(250));
        assert!(llm.required);
        assert_eq!(llm.time_budget, Some(std::time::Duration::from_secs(90)));
        let err = load(
            ConfigFile::None,
            [("TOLLGATE_LLM_RISK_THRESHOLD", "999")],
            RawConfig::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("TOLLGATE_LLM_RISK_THRESHOLD"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_tollgate_variable_is_an_error_naming_it() {
        let err = load(
            ConfigFile::None,
            [("TOLLGATE_LLM_TWOPASS", "false"), ("PATH", "/bin")],
            RawConfig::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("TOLLGATE_LLM_TWOPASS"), "{err}");
        assert!(err.contains("did you mean TOLLGATE_LLM_TWO_PASS"), "{err}");
        // The project's own variables, and whatever api_key_env names, are not settings.
        let others: Vec<(&str, &str)> = OTHER_TOLLGATE_VARS
            .iter()
            .map(|name| (*name, "x"))
            .collect();
        load(ConfigFile::None, others, RawConfig::default()).unwrap();
        let file =
            "[llm]\nprovider = \"openai\"\nmodel = \"m\"\napi_key_env = \"TOLLGATE_OPENAI_KEY\"\n";
        let config = load(
            ConfigFile::Text {
                text: file,
                label: "t",
            },
            [("TOLLGATE_OPENAI_KEY", "sk-x")],
            RawConfig::default(),
        )
        .unwrap()
        .resolve()
        .unwrap();
        assert_eq!(config.llm.api_key.unwrap().expose(), "sk-x");
    }

    #[test]
    fn bare_patterns_match_at_any_depth_and_star_stays_in_segment() {
        let patterns = PathPatterns::new(&["*.lock".into(), "src/*.rs".into()]).unwrap();
        assert!(patterns.is_match("Cargo.lock"));
        assert!(patterns.is_match("deep/dir/yarn.lock"));
        assert!(patterns.is_match("src/main.rs"));
        assert!(!patterns.is_match("src/nested/main.rs"));
    }

    #[test]
    fn default_hotspots_are_case_insensitive() {
        let owned: Vec<String> = DEFAULT_HOTSPOTS.iter().map(|s| s.to_string()).collect();
        let patterns = PathPatterns::new(&owned).unwrap();
        assert!(patterns.is_match("src/Auth/login.ts"));
        assert!(patterns.is_match("db/migrations/0001_init.sql"));
        assert!(patterns.is_match("lib/jwt_verify.py"));
        assert!(patterns.is_match("src/oauth.ts"));
        assert!(patterns.is_match("svc/user_auth_handler.go"));
        assert!(!patterns.is_match("src/author_list.rs"));
        assert!(!patterns.is_match("src/tokenizer.rs"));
        assert!(!patterns.is_match("src/render/page.rs"));
    }
}
