//! Configuration: `tollgate.toml`, then the environment, then flags.
//!
//! Each layer is a [`RawConfig`] (every field optional, mirroring what a user wrote);
//! [`RawConfig::overlay`] stacks them and [`RawConfig::resolve`] turns the result into a validated
//! [`ReviewConfig`] once, so nothing downstream parses strings again. The core never reads the
//! environment itself: front ends hand [`RawConfig::from_env`] the variables.

mod analyzers;
mod llm;
mod nested;
mod raw;

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
pub use raw::{ConfigError, RawConfig, RawPathOverride, RawPreflight, RawReview, RawRuleOverride};

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
