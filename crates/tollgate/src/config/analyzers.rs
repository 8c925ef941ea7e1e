//! The `[analyzers]` table: which external analyzers run, on what scope, within which limits.
//!
//! Key names follow upstream's `review_diff` options where they exist (`static_analyzers`,
//! `static_analysis_timeout_ms`, `static_analysis_max_findings_per_analyzer`, `semgrep_args`).
//! [`RawAnalyzers`] is the layered, all-optional shape; [`RawAnalyzers::resolve`] validates it once
//! into [`AnalyzersConfig`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::raw::{ConfigError, value_error};
use crate::findings::{AnalysisScope, AnalyzerKind, Category, Severity};
use crate::workspace::RepoPath;

/// Per-analyzer timeout when none is configured (upstream's default).
pub const DEFAULT_ANALYZER_TIMEOUT_MS: u64 = 60_000;
/// Findings kept per analyzer when no limit is configured (upstream's default).
pub const DEFAULT_MAX_FINDINGS_PER_ANALYZER: usize = 20;
/// Bytes read from each of a tool's stdout and stderr; the rest is drained and dropped.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;
/// Where analyzer caches (tsc build info) go, relative to the workspace.
pub const DEFAULT_CACHE_DIR: &str = ".tollgate/cache";
/// Files per semgrep invocation (upstream's default).
pub const DEFAULT_SEMGREP_BATCH_SIZE: usize = 100;

/// Validated analyzer settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzersConfig {
    /// Analyzers run by a review; empty turns static analysis off (the default).
    pub enabled: Vec<AnalyzerKind>,
    pub scope: AnalysisScope,
    /// Each analyzer's own time limit.
    pub timeout: Duration,
    /// The time all analyzers share; `None` means `timeout` × the number of analyzers, as upstream.
    pub total_timeout: Option<Duration>,
    pub max_findings_per_analyzer: usize,
    pub max_output_bytes: usize,
    /// Cache directory inside the workspace (`None`: no caches, tsc runs non-incrementally).
    /// Lexically checked here; where it lands is checked when a cache is opened
    /// ([`Workspace::own_dir`](crate::workspace::Workspace::own_dir)).
    pub cache_dir: Option<RepoPath>,
    /// SARIF files whose results join the review.
    pub import_sarif: Vec<PathBuf>,
    /// Size limit of each imported SARIF file (set from `review.max_input_bytes`).
    pub max_import_bytes: u64,
    /// Directories searched for tools after the configured path and `node_modules/.bin`: the
    /// front end passes `PATH` in, since the core never reads the environment.
    pub search_path: Option<OsString>,
    pub tsc: TscSettings,
    pub semgrep: SemgrepSettings,
}

impl AnalyzersConfig {
    /// The budget shared by `n_analyzers` analyzers.
    pub fn total_budget(&self, n_analyzers: usize) -> Duration {
        self.total_timeout
            .unwrap_or_else(|| self.timeout.saturating_mul(n_analyzers.max(1) as u32))
    }
}

/// `analyzers.cache_dir`: a directory inside the workspace (a pull request may set it), not
/// under `.git`.
fn cache_dir(dir: &str) -> Result<RepoPath, ConfigError> {
    let hint = "give a directory inside the workspace, such as `.tollgate/cache`";
    let path = RepoPath::new(dir)
        .map_err(|err| value_error("analyzers.cache_dir", format!("{err}; {hint}")))?;
    if path.is_in_git_dir() {
        return Err(value_error(
            "analyzers.cache_dir",
            format!("`{path}` is inside `.git`; {hint}"),
        ));
    }
    Ok(path)
}

/// `[analyzers.tsc]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TscSettings {
    /// Explicit executable, relative to the workspace unless absolute.
    pub path: Option<PathBuf>,
    pub severity: Severity,
    pub category: Category,
    /// Keep `.tsbuildinfo` files in the cache directory so repeated runs re-check less.
    pub incremental: bool,
}

/// `[analyzers.semgrep]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SemgrepSettings {
    /// Explicit executable, relative to the workspace unless absolute.
    pub path: Option<PathBuf>,
    /// Rule files or directories (relative to the workspace). Empty: the project's
    /// `.semgrep.yml`, `.semgrep.yaml` or `.semgrep/` when present.
    pub rules: Vec<String>,
    /// Extra arguments placed before the `--` that ends the options (upstream's `semgrep_args`).
    pub args: Vec<String>,
    /// semgrep severity (upper case) → Tollgate severity; unknown severities become MEDIUM.
    pub severity_map: BTreeMap<String, Severity>,
    /// Category of findings whose rule metadata names none Tollgate knows.
    pub category: Category,
    pub batch_size: usize,
}

/// The default semgrep severity table. ERROR becomes HIGH, not CRITICAL: it fails the default
/// gate only as an analyzer error on a changed line (`fail_on_analyzer_errors`), never
/// through `fail_on_severity` (CRITICAL) alone.
/// Rules that use semgrep's newer CRITICAL/HIGH/MEDIUM/LOW levels keep them.
pub fn default_semgrep_severity_map() -> BTreeMap<String, Severity> {
    [
        ("CRITICAL", Severity::Critical),
        ("ERROR", Severity::High),
        ("HIGH", Severity::High),
        ("WARNING", Severity::Medium),
        ("MEDIUM", Severity::Medium),
        ("INFO", Severity::Low),
        ("LOW", Severity::Low),
        ("INVENTORY", Severity::Info),
        ("EXPERIMENT", Severity::Info),
    ]
    .into_iter()
    .map(|(name, severity)| (name.to_string(), severity))
    .collect()
}

/// The `[analyzers]` table as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawAnalyzers {
    /// `["tsc", "semgrep"]`; empty or absent: off.
    pub static_analyzers: Option<Vec<String>>,
    /// `changed_lines` (default), `changed_files` or `all`.
    pub scope: Option<String>,
    pub static_analysis_timeout_ms: Option<u64>,
    pub total_timeout_ms: Option<u64>,
    pub static_analysis_max_findings_per_analyzer: Option<usize>,
    pub max_output_bytes: Option<usize>,
    /// Relative to the workspace; `cache = false` turns caching off.
    pub cache_dir: Option<String>,
    pub cache: Option<bool>,
    pub semgrep_args: Option<Vec<String>>,
    pub import_sarif: Option<Vec<String>>,
    /// Never read from a file: the environment layer fills it from `PATH`.
    #[serde(skip)]
    pub search_path: Option<String>,
    #[serde(default)]
    pub tsc: RawTsc,
    #[serde(default)]
    pub semgrep: RawSemgrep,
}

/// `[analyzers.tsc]` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawTsc {
    pub path: Option<String>,
    pub severity: Option<String>,
    pub category: Option<String>,
    pub incremental: Option<bool>,
}

/// `[analyzers.semgrep]` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSemgrep {
    pub path: Option<String>,
    pub rules: Option<Vec<String>>,
    /// semgrep severity → Tollgate severity, merged over the defaults.
    pub severity: Option<BTreeMap<String, String>>,
    pub category: Option<String>,
    pub batch_size: Option<usize>,
}

impl RawAnalyzers {
    /// Stacks `high` on top of `self`, field by field.
    pub(super) fn overlay(self, high: RawAnalyzers) -> RawAnalyzers {
        let low = self;
        let mut severity = low.semgrep.severity.unwrap_or_default();
        let high_severity = high.semgrep.severity.clone();
        severity.extend(high.semgrep.severity.unwrap_or_default());
        RawAnalyzers {
            static_analyzers: high.static_analyzers.or(low.static_analyzers),
            scope: high.scope.or(low.scope),
            static_analysis_timeout_ms: high
                .static_analysis_timeout_ms
                .or(low.static_analysis_timeout_ms),
            total_timeout_ms: high.total_timeout_ms.or(low.total_timeout_ms),
            static_analysis_max_findings_per_analyzer: high
                .static_analysis_max_findings_per_analyzer
                .or(low.static_analysis_max_findings_per_analyzer),
            max_output_bytes: high.max_output_bytes.or(low.max_output_bytes),
            cache_dir: high.cache_dir.or(low.cache_dir),
            cache: high.cache.or(low.cache),
            semgrep_args: high.semgrep_args.or(low.semgrep_args),
            import_sarif: high.import_sarif.or(low.import_sarif),
            search_path: high.search_path.or(low.search_path),
            tsc: RawTsc {
                path: high.tsc.path.or(low.tsc.path),
                severity: high.tsc.severity.or(low.tsc.severity),
                category: high.tsc.category.or(low.tsc.category),
                incremental: high.tsc.incremental.or(low.tsc.incremental),
            },
            semgrep: RawSemgrep {
                path: high.semgrep.path.or(low.semgrep.path),
                rules: high.semgrep.rules.or(low.semgrep.rules),
                severity: (!severity.is_empty() || high_severity.is_some()).then_some(severity),
                category: high.semgrep.category.or(low.semgrep.category),
                batch_size: high.semgrep.batch_size.or(low.semgrep.batch_size),
            },
        }
    }

    /// Validates every value and applies the defaults.
    pub(super) fn resolve(self) -> Result<AnalyzersConfig, ConfigError> {
        let mut enabled = Vec::new();
        for name in self.static_analyzers.unwrap_or_default() {
            // `none` lets a flag or the environment turn off what the file turned on.
            if name.trim().eq_ignore_ascii_case("none") || name.trim().is_empty() {
                continue;
            }
            let kind = name
                .parse::<AnalyzerKind>()
                .map_err(|e| value_error("analyzers.static_analyzers", e.to_string()))?;
            if !enabled.contains(&kind) {
                enabled.push(kind);
            }
        }
        let scope = match self.scope {
            Some(text) => text
                .parse::<AnalysisScope>()
                .map_err(|e| value_error("analyzers.scope", e.to_string()))?,
            None => AnalysisScope::ChangedLines,
        };
        let timeout_ms = self
            .static_analysis_timeout_ms
            .unwrap_or(DEFAULT_ANALYZER_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(value_error(
                "analyzers.static_analysis_timeout_ms",
                "must be at least 1".to_string(),
            ));
        }
        if self.total_timeout_ms == Some(0) {
            return Err(value_error(
                "analyzers.total_timeout_ms",
                "must be at least 1".to_string(),
            ));
        }
        let max_output_bytes = self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES);
        if max_output_bytes < 1024 {
            return Err(value_error(
                "analyzers.max_output_bytes",
                format!("{max_output_bytes} is too small (at least 1024)"),
            ));
        }
        let cache_dir = match (self.cache, self.cache_dir) {
            (Some(false), _) => None,
            (_, Some(dir)) if dir.trim().is_empty() => {
                return Err(value_error(
                    "analyzers.cache_dir",
                    "is empty (set `cache = false` to turn caching off)".to_string(),
                ));
            }
            (_, Some(dir)) => Some(cache_dir(&dir)?),
            (_, None) => Some(cache_dir(DEFAULT_CACHE_DIR)?),
        };

        let tsc = TscSettings {
            path: non_empty_path(self.tsc.path),
            severity: parse_severity("analyzers.tsc.severity", self.tsc.severity)?
                .unwrap_or(Severity::High),
            category: parse_category("analyzers.tsc.category", self.tsc.category)?
                .unwrap_or(Category::Correctness),
            incremental: self.tsc.incremental.unwrap_or(true),
        };

        let mut severity_map = default_semgrep_severity_map();
        for (name, value) in self.semgrep.severity.unwrap_or_default() {
            let key = format!("analyzers.semgrep.severity.{name}");
            let severity = value
                .parse::<Severity>()
                .map_err(|e| value_error(&key, e.to_string()))?;
            severity_map.insert(name.trim().to_ascii_uppercase(), severity);
        }
        let batch_size = self
            .semgrep
            .batch_size
            .unwrap_or(DEFAULT_SEMGREP_BATCH_SIZE);
        if batch_size == 0 {
            return Err(value_error(
                "analyzers.semgrep.batch_size",
                "must be at least 1".to_string(),
            ));
        }
        let args = self.semgrep_args.unwrap_or_default();
        check_semgrep_args(&args).map_err(|e| value_error("analyzers.semgrep_args", e))?;
        let semgrep = SemgrepSettings {
            path: non_empty_path(self.semgrep.path),
            rules: self.semgrep.rules.unwrap_or_default(),
            args,
            severity_map,
            category: parse_category("analyzers.semgrep.category", self.semgrep.category)?
                .unwrap_or(Category::Security),
            batch_size,
        };

        Ok(AnalyzersConfig {
            enabled,
            scope,
            timeout: Duration::from_millis(timeout_ms),
            total_timeout: self.total_timeout_ms.map(Duration::from_millis),
            max_findings_per_analyzer: self
                .static_analysis_max_findings_per_analyzer
                .unwrap_or(DEFAULT_MAX_FINDINGS_PER_ANALYZER),
            max_output_bytes,
            cache_dir,
            import_sarif: self
                .import_sarif
                .unwrap_or_default()
                .into_iter()
                .filter(|path| !path.trim().is_empty())
                .map(PathBuf::from)
                .collect(),
            max_import_bytes: crate::input::DEFAULT_MAX_INPUT_BYTES,
            search_path: self.search_path.map(OsString::from),
            tsc,
            semgrep,
        })
    }
}

impl Default for AnalyzersConfig {
    /// Everything off, with the documented defaults.
    fn default() -> AnalyzersConfig {
        RawAnalyzers::default()
            .resolve()
            .expect("the defaults are valid")
    }
}

/// Refuses semgrep arguments that would defeat how Tollgate runs it: options that write files
/// (`--output`, `--autofix`), change the stdout format Tollgate parses (`--sarif`, `--text`, …),
/// turn metrics or the version check back on, or end the options early (`--`).
pub(crate) fn check_semgrep_args(args: &[String]) -> Result<(), String> {
    const FORMATS: &[&str] = &[
        "--sarif",
        "--text",
        "--emacs",
        "--vim",
        "--junit-xml",
        "--gitlab-sast",
        "--gitlab-secrets",
    ];
    for arg in args {
        let name = arg.split('=').next().unwrap_or(arg);
        let reason = if name == "-o"
            || name == "--output"
            || (name.starts_with("--") && name.ends_with("-output"))
            || name == "-a"
            || name == "--autofix"
        {
            "it would make semgrep write files"
        } else if FORMATS.contains(&name) {
            "Tollgate reads semgrep's JSON from stdout"
        } else if name == "--metrics" || name == "--enable-version-check" {
            "metrics and the version check stay off (they send data and stall without a network)"
        } else if name == "--" {
            "Tollgate puts `--` before the paths itself"
        } else {
            continue;
        };
        return Err(format!("`{arg}` is not allowed: {reason}"));
    }
    Ok(())
}

fn non_empty_path(path: Option<String>) -> Option<PathBuf> {
    path.filter(|p| !p.trim().is_empty()).map(PathBuf::from)
}

fn parse_severity(origin: &str, text: Option<String>) -> Result<Option<Severity>, ConfigError> {
    text.map(|t| t.parse::<Severity>())
        .transpose()
        .map_err(|e| value_error(origin, e.to_string()))
}

fn parse_category(origin: &str, text: Option<String>) -> Result<Option<Category>, ConfigError> {
    text.map(|t| t.parse::<Category>())
        .transpose()
        .map_err(|e| value_error(origin, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    fn resolve(toml: &str) -> Result<AnalyzersConfig, ConfigError> {
        RawConfig::from_toml(toml, "tollgate.toml")
            .unwrap()
            .resolve()
            .map(|config| config.analyzers)
    }

    #[test]
    fn defaults_are_off_with_upstream_limits() {
        let config = resolve("").unwrap();
        assert!(config.enabled.is_empty());
        assert_eq!(config.scope, AnalysisScope::ChangedLines);
        assert_eq!(config.timeout, Duration::from_secs(60));
        assert_eq!(config.total_budget(2), Duration::from_secs(120));
        assert_eq!(config.max_findings_per_analyzer, 20);
        assert_eq!(
            config.cache_dir.as_ref().map(RepoPath::as_str),
            Some(DEFAULT_CACHE_DIR)
        );
        assert_eq!(config.semgrep.severity_map["ERROR"], Severity::High);
        assert_eq!(config.semgrep.batch_size, 100);
        assert!(config.tsc.incremental);
    }

    #[test]
    fn cache_dir_stays_inside_the_workspace() {
        for (dir, reason) in [
            ("/tmp/cache", "absolute"),
            ("../cache", "`..`"),
            ("cache/../../x", "`..`"),
            (".GIT/hooks", "`.git`"),
            ("a\\u0000b", "NUL"),
        ] {
            let err = resolve(&format!("[analyzers]\ncache_dir = \"{dir}\"\n")).unwrap_err();
            let message = err.to_string();
            assert!(message.contains("analyzers.cache_dir"), "{dir}: {message}");
            assert!(message.contains(reason), "{dir}: {message}");
        }
        let config = resolve("[analyzers]\ncache_dir = \"./build//cache\"\n").unwrap();
        assert_eq!(
            config.cache_dir.as_ref().map(RepoPath::as_str),
            Some("build/cache")
        );
    }

    #[test]
    fn table_is_read_and_validated() {
        let config = resolve(
            r#"
[analyzers]
static_analyzers = ["tsc", "SEMGREP", "tsc"]
scope = "changed-files"
static_analysis_timeout_ms = 5000
total_timeout_ms = 7000
static_analysis_max_findings_per_analyzer = 3
semgrep_args = ["--exclude", "vendor"]
cache = false

[analyzers.tsc]
path = "tools/tsc"
severity = "medium"

[analyzers.semgrep]
rules = ["rules/"]
severity = { error = "CRITICAL" }
category = "correctness"
"#,
        )
        .unwrap();
        assert_eq!(config.enabled, [AnalyzerKind::Tsc, AnalyzerKind::Semgrep]);
        assert_eq!(config.scope, AnalysisScope::ChangedFiles);
        assert_eq!(config.total_budget(2), Duration::from_secs(7));
        assert_eq!(config.cache_dir, None);
        assert_eq!(config.tsc.path, Some(PathBuf::from("tools/tsc")));
        assert_eq!(config.tsc.severity, Severity::Medium);
        assert_eq!(config.semgrep.severity_map["ERROR"], Severity::Critical);
        assert_eq!(config.semgrep.severity_map["WARNING"], Severity::Medium);
        assert_eq!(config.semgrep.args, ["--exclude", "vendor"]);
        assert_eq!(config.semgrep.category, Category::Correctness);
    }

    #[test]
    fn bad_values_name_their_key() {
        for (toml, key) in [
            (
                "[analyzers]\nstatic_analyzers = [\"eslint\"]",
                "static_analyzers",
            ),
            ("[analyzers]\nscope = \"lines\"", "analyzers.scope"),
            ("[analyzers]\nstatic_analysis_timeout_ms = 0", "timeout_ms"),
            (
                "[analyzers.semgrep]\nseverity = { ERROR = \"bad\" }",
                "ERROR",
            ),
            ("[analyzers.semgrep]\nbatch_size = 0", "batch_size"),
            (
                "[analyzers.tsc]\ncategory = \"types\"",
                "analyzers.tsc.category",
            ),
            (
                "[analyzers]\nsemgrep_args = [\"--autofix\"]",
                "semgrep_args",
            ),
            (
                "[analyzers]\nsemgrep_args = [\"--json-output=x\"]",
                "write files",
            ),
            ("[analyzers]\nsemgrep_args = [\"--metrics=on\"]", "metrics"),
            ("[analyzers]\nsemgrep_args = [\"--sarif\"]", "stdout"),
        ] {
            let err = resolve(toml).unwrap_err().to_string();
            assert!(err.contains(key), "{toml}: {err}");
        }
        let err = RawConfig::from_toml("[analyzers]\ntimeout = 1\n", "t.toml").unwrap_err();
        assert!(err.to_string().contains("timeout"), "{err}");
    }

    #[test]
    fn higher_layers_win_and_none_turns_analyzers_off() {
        let file = RawConfig::from_toml(
            "[analyzers]\nstatic_analyzers = [\"tsc\"]\n[analyzers.semgrep.severity]\nERROR = \"LOW\"\n",
            "t",
        )
        .unwrap();
        let env = RawConfig::from_env([("TOLLGATE_ANALYZERS", "none")]).unwrap();
        let config = file.clone().overlay(env).resolve().unwrap().analyzers;
        assert!(config.enabled.is_empty());
        assert_eq!(config.semgrep.severity_map["ERROR"], Severity::Low);

        let env = RawConfig::from_env([
            ("TOLLGATE_ANALYZERS", "semgrep"),
            ("TOLLGATE_ANALYSIS_SCOPE", "all"),
            ("PATH", "/opt/bin"),
        ])
        .unwrap();
        let config = file.overlay(env).resolve().unwrap().analyzers;
        assert_eq!(config.enabled, [AnalyzerKind::Semgrep]);
        assert_eq!(config.scope, AnalysisScope::All);
        assert_eq!(config.search_path, Some(OsString::from("/opt/bin")));
    }
}
