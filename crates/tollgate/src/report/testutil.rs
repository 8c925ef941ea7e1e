//! Test helpers shared by the renderers: one sample result with the awkward cases, and a
//! checkout holding the files it points at.

use std::collections::BTreeMap;
use std::path::Path;

use crate::findings::{
    Applicability, Category, Classification, Finding, Location, ReviewMetadata, ReviewResult,
    ReviewStats, RiskFactor, RuleInfo, Severity, Signals, Source, SuggestedFix, Timings,
    assign_identities, sort_for_display,
};
use crate::report::{Format, ReportConfig, render};

/// Paths of the sample findings whose files exist in [`sample_repo`], with their contents.
/// `scripts/tool.py` uses CRLF line endings; `src/removed.rs` is deliberately absent.
pub(crate) const SAMPLE_FILES: &[(&str, &str)] = &[
    (
        "src/config/settings.rs",
        "pub struct Settings {\n    pub name: String,\n}\npub const API_KEY: &str = \"sk_live_0123456789abcdef\";\n",
    ),
    ("src/lib.rs", "pub mod api;\npub mod config;\n"),
    (
        "src/api/handlers v2/user handler.rs",
        "use crate::config::Settings;\n\npub fn load(settings: &Settings) -> String {\n    let raw = std::fs::read_to_string(&settings.name)\n        .ok()\n        .unwrap();\n    raw\n}\n",
    ),
    (
        "src/ünïcode/naïve.rs",
        "// Ünïcödé 日本語\npub fn run(cmd: &str) { let _ = std::process::Command::new(\"sh\").arg(cmd); }\n",
    ),
    (
        "scripts/tool.py",
        "import sys\r\nprint(eval(sys.argv[1]))\r\n",
    ),
];

/// A result touching every awkward case: several sources, a Unicode path, a path with spaces,
/// a multi-line range, a finding without columns, one off the changed lines, one with a
/// replacement fix and one with a description-only fix, a rule without a `RuleInfo`, a missing
/// file, a line past the end of its file, and Markdown/HTML metacharacters in texts.
pub(crate) fn sample_result() -> ReviewResult {
    let mut findings = vec![
        Finding::new(
            "TG001",
            Severity::Critical,
            Category::Security,
            Source::Preflight,
            "Hardcoded secret in `API_KEY`",
            Location {
                file: "src/config/settings.rs".into(),
                start_line: 4,
                end_line: 4,
                start_column: Some(28),
                end_column: Some(53),
            },
        )
        .with_message("A live API key is committed in source code.")
        .with_evidence("sk_live_…cdef")
        .with_impact("Anyone with read access can use the key.")
        .with_recommendation("Load the key from the environment and rotate it.")
        .with_anchor("pub const API_KEY: &str = \"sk_live_0123456789abcdef\";")
        .on_changed_line(true),
        Finding::new(
            "TG004",
            Severity::Medium,
            Category::Architecture,
            Source::Preflight,
            "Public API changed",
            Location::line("src/lib.rs", 1),
        )
        .with_confidence(0.9)
        .with_message("`pub mod api` is new; downstream crates | tools may depend on it.")
        .with_anchor("pub mod api;")
        .on_changed_line(false),
        Finding::new(
            "no-unwrap-in-handlers",
            Severity::High,
            Category::Reliability,
            Source::Invariants,
            "Use of `unwrap()` on Option<T> | Result<T, E>",
            Location {
                file: "src/api/handlers v2/user handler.rs".into(),
                start_line: 4,
                end_line: 6,
                start_column: None,
                end_column: None,
            },
        )
        .with_message("Handlers must not panic.\nReturn an error instead of calling `unwrap()`.")
        .with_recommendation("Use `?` and return `Result<String, io::Error>`.")
        .with_fix(SuggestedFix {
            description: "Propagate the error with `?`".into(),
            replacement: Some("    let raw = std::fs::read_to_string(&settings.name)?;\n".into()),
            applicability: Applicability::Unsafe,
        })
        .with_anchor("    let raw = std::fs::read_to_string(&settings.name)")
        .on_changed_line(true),
        Finding::new(
            "llm/security",
            Severity::High,
            Category::Security,
            Source::Llm,
            "Shell command built from caller input",
            Location {
                file: "src/ünïcode/naïve.rs".into(),
                start_line: 2,
                end_line: 2,
                start_column: Some(25),
                end_column: Some(77),
            },
        )
        .with_confidence(0.62)
        .with_message("`cmd` reaches `sh` unescaped: <script> & friends.")
        .with_recommendation("Pass arguments as a list, never through a shell.")
        .with_fix(SuggestedFix {
            description: "Avoid the shell".into(),
            replacement: None,
            applicability: Applicability::DisplayOnly,
        })
        .with_anchor(
            "pub fn run(cmd: &str) { let _ = std::process::Command::new(\"sh\").arg(cmd); }",
        )
        .on_changed_line(true),
        Finding::new(
            "semgrep/python.lang.security.audit.eval-detected",
            Severity::High,
            Category::Security,
            Source::Semgrep,
            "Detected the use of eval()",
            Location {
                file: "scripts/tool.py".into(),
                start_line: 2,
                end_line: 2,
                start_column: Some(7),
                end_column: Some(24),
            },
        )
        .with_confidence(0.85)
        .with_message("eval() on user input can run arbitrary code.")
        .with_anchor("print(eval(sys.argv[1]))")
        .on_changed_line(true),
        Finding::new(
            "TG005",
            Severity::Info,
            Category::Maintainability,
            Source::Preflight,
            "Hotspot file changed",
            Location::line("src/removed.rs", 10),
        )
        .with_confidence(0.9)
        .with_message("The file matches a hotspot pattern.")
        .with_anchor("fn old() {}")
        .on_changed_line(true),
        Finding::new(
            "llm/style",
            Severity::Low,
            Category::Style,
            Source::Llm,
            "Module order",
            Location::line("src/lib.rs", 999),
        )
        .with_confidence(0.4)
        .with_message("Modules are not sorted.")
        .with_anchor("")
        .on_changed_line(false),
    ];
    assign_identities(&mut findings);
    sort_for_display(&mut findings);
    // As the gate below (fail_on_severity HIGH) decides.
    for finding in &mut findings {
        finding.fails_gate = finding.severity >= Severity::High;
    }

    let mut gate = BTreeMap::new();
    gate.insert("fail_on_severity".to_string(), serde_json::json!("HIGH"));
    gate.insert("confidence_threshold".to_string(), serde_json::json!(0.3));

    ReviewResult {
        run_id: "run-0001".into(),
        risk_score: 4,
        risk_factors: vec![
            RiskFactor {
                signal: "public_api_changed".into(),
                points: 1.5,
                detail: "src/lib.rs exports `api`".into(),
            },
            RiskFactor {
                signal: "no_tests".into(),
                points: 1.0,
                detail: "No test file changed | none".into(),
            },
            RiskFactor {
                signal: "hotspots".into(),
                points: 0.5,
                detail: "1 hotspot file".into(),
            },
        ],
        classification: Classification::Feature,
        hotspots: vec!["src/removed.rs".into()],
        summary: "Adds a user handler and a settings module. 7 findings, 1 critical.".into(),
        signals: Signals {
            tests_touched: false,
            public_api_files: vec!["src/lib.rs".into()],
            hotspot_files: vec!["src/removed.rs".into()],
            secrets_found: 1,
            ..Signals::default()
        },
        findings,
        dismissed: Vec::new(),
        should_fail: true,
        fail_reasons: vec![
            "CRITICAL TG001: Hardcoded secret in `API_KEY`".into(),
            "HIGH no-unwrap-in-handlers: Use of `unwrap()` on Option<T> | Result<T, E>".into(),
        ],
        stats: ReviewStats {
            files_changed: 5,
            lines_added: 18,
            lines_removed: 3,
            duration_ms: 12.5,
            deterministic_checks_executed: 5,
            invariants_executed: 2,
            static_analyzers_executed: 1,
            llm_passes_executed: 1,
            findings_total: 9,
            findings_filtered: 1,
            findings_deduplicated: 1,
            timings_ms: Timings {
                parse: 0.5,
                preflight: 1.0,
                invariants: 2.0,
                static_analysis: 5.0,
                llm: 4.0,
                gate: 0.0,
            },
            ..ReviewStats::default()
        },
        metadata: ReviewMetadata {
            reviewed_at: "2026-01-02T03:04:05Z".into(),
            tool_version: "0.1.0".into(),
            base_sha: Some("1111111111111111111111111111111111111111".into()),
            head_sha: Some("2222222222222222222222222222222222222222".into()),
            invariants_path: Some(".review-invariants.yml".into()),
            warnings: vec!["semgrep skipped 1 file: <binary> data.bin".into()],
            gate,
        },
        rules: vec![
            RuleInfo {
                id: "TG001".into(),
                name: "secret-in-diff".into(),
                short_description: "A secret was added in the diff".into(),
                full_description: "An added line holds something that looks like a credential: \
                                   an API key, a token or a private key."
                    .into(),
                help: "Remove the secret, **rotate it**, and load it from the environment.".into(),
                default_severity: Severity::Critical,
                category: Category::Security,
                help_uri: Some("https://example.invalid/tollgate/rules/TG001".into()),
            },
            RuleInfo {
                id: "TG004".into(),
                name: "public-api-changed".into(),
                short_description: "The public API changed".into(),
                full_description: "A file that defines the public API was changed.".into(),
                help: "Check semver and downstream users.".into(),
                default_severity: Severity::Medium,
                category: Category::Architecture,
                help_uri: None,
            },
            RuleInfo {
                id: "TG005".into(),
                name: "hotspot-changed".into(),
                short_description: "A hotspot file changed".into(),
                full_description: String::new(),
                help: String::new(),
                default_severity: Severity::Info,
                category: Category::Maintainability,
                help_uri: None,
            },
            RuleInfo {
                id: "no-unwrap-in-handlers".into(),
                name: "unwrap-in-handler".into(),
                short_description: "Handlers call unwrap()".into(),
                full_description: "HTTP handlers must return errors instead of panicking.".into(),
                help: "Replace `unwrap()` with `?`.".into(),
                default_severity: Severity::High,
                category: Category::Reliability,
                help_uri: None,
            },
            RuleInfo {
                id: "semgrep/python.lang.security.audit.eval-detected".into(),
                name: "eval-detected".into(),
                short_description: "eval() with non-constant input".into(),
                full_description: "eval() runs arbitrary code.".into(),
                help: "Avoid eval(); parse the input instead.".into(),
                default_severity: Severity::High,
                category: Category::Security,
                help_uri: Some(
                    "https://semgrep.dev/r/python.lang.security.audit.eval-detected".into(),
                ),
            },
        ],
        static_analysis: None,
        llm: None,
    }
}

/// A checkout holding [`SAMPLE_FILES`].
pub(crate) fn sample_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in SAMPLE_FILES {
        write_file(dir.path(), path, content);
    }
    dir
}

pub(crate) fn write_file(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("file has a parent")).expect("create dirs");
    std::fs::write(full, content).expect("write file");
}

/// Renders with no checkout and no link base.
pub(crate) fn render_to_string(format: Format, result: &ReviewResult) -> String {
    render_with(format, result, &ReportConfig::new(None, None))
}

pub(crate) fn render_with(format: Format, result: &ReviewResult, config: &ReportConfig) -> String {
    let mut out = Vec::new();
    render(format, result, config, &mut out).expect("render succeeds");
    String::from_utf8(out).expect("reports are UTF-8")
}
