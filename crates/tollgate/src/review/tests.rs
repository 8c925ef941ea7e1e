//! Pipeline tests: a diff and a config in, a review result out.

use super::*;
use crate::config::RawConfig;
use crate::findings::{Category, Classification};

/// Reviews `diff` with the settings of a `tollgate.toml` text.
fn check_review(diff: &str, config_toml: &str) -> ReviewResult {
    let config = RawConfig::from_toml(config_toml, "test.toml")
        .unwrap()
        .resolve()
        .unwrap();
    let diff = crate::diff::parse(diff.as_bytes().to_vec()).unwrap();
    review_diff(&diff, &ReviewInputs::default(), &config).result
}

fn rule_lines(result: &ReviewResult, rule: &str) -> Vec<(String, u32)> {
    result
        .findings
        .iter()
        .filter(|f| f.rule_id == rule)
        .map(|f| (f.location.file.clone(), f.location.start_line))
        .collect()
}

/// A diff adding `lines` to a new file at `path`.
fn new_file(path: &str, lines: &[&str]) -> String {
    let mut text = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        text.push('+');
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// A diff replacing line `at` of an existing file with `new` lines.
fn edit(path: &str, at: u32, old: &str, new: &[&str]) -> String {
    let mut text = format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{at},1 +{at},{} @@\n-{old}\n",
        new.len()
    );
    for line in new {
        text.push('+');
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[test]
fn classification_table() {
    let cases: Vec<(String, Classification)> = vec![
        (
            new_file("docs/guide.md", &["# Guide"]),
            Classification::Docs,
        ),
        (
            new_file("tests/test_api.py", &["def test_x():", "    assert 1"]),
            Classification::Test,
        ),
        (
            new_file(".github/workflows/ci.yml", &["on: push"]),
            Classification::Infra,
        ),
        (
            new_file("src/feature.rs", &["fn feature() {}"]),
            Classification::Feature,
        ),
        (
            edit(
                "src/parse.py",
                10,
                "    value = data[key]",
                &[
                    "    if data is None:",
                    "        return None",
                    "    value = data[key]",
                ],
            ),
            Classification::Bugfix,
        ),
        (String::new(), Classification::Refactor),
    ];
    for (diff, expected) in cases {
        let result = check_review(&diff, "");
        assert_eq!(result.classification, expected, "{diff}");
    }
}

#[test]
fn words_like_error_in_code_do_not_make_a_bugfix() {
    // Upstream's defect: any added line mentioning "error" or "null" was a bugfix.
    let diff = edit(
        "src/log.ts",
        3,
        "const level = 1;",
        &["const errorColor = 'red';", "const nullable = true;"],
    );
    assert_ne!(
        check_review(&diff, "").classification,
        Classification::Bugfix
    );
}

#[test]
fn risk_explains_itself() {
    let diff = edit(
        "src/auth/token.rs",
        5,
        "fn check() {}",
        &[
            "pub fn check(token: &str) -> bool {",
            "    !token.is_empty()",
            "}",
        ],
    );
    let result = check_review(&diff, "");
    let signals: Vec<&str> = result
        .risk_factors
        .iter()
        .map(|f| f.signal.as_str())
        .collect();
    assert_eq!(signals, vec!["hotspots", "public_api_changed", "no_tests"]);
    // 1 + 0.5 + 1.5 + 1 = 4.
    assert_eq!(result.risk_score, 4);
    assert!(result.risk_factors[1].detail.contains("src/auth/token.rs"));

    let docs = check_review(&new_file("README.md", &["hello"]), "");
    assert_eq!(docs.risk_score, 1);
    assert!(docs.risk_factors.is_empty());
}

#[test]
fn findings_point_at_real_lines() {
    let diff = format!(
        "{}{}",
        edit(
            "src/lib.rs",
            40,
            "fn old() {}",
            &["fn helper() {}", "pub fn api() {}"]
        ),
        new_file("Cargo.lock", &["# lock"]),
    );
    let result = check_review(&diff, "[review]\nmax_findings = 50\n");
    assert_eq!(
        rule_lines(&result, "TG002"),
        vec![("src/lib.rs".into(), 41)]
    );
    assert_eq!(
        rule_lines(&result, "TG001"),
        vec![("src/lib.rs".into(), 40)]
    );
    assert_eq!(rule_lines(&result, "TG006"), vec![("Cargo.lock".into(), 1)]);
    assert!(result.findings.iter().all(|f| f.on_changed_line));
}

#[test]
fn inline_rust_tests_count_as_tests() {
    let diff = edit(
        "src/lib.rs",
        40,
        "fn old() {}",
        &["fn helper() {}", "#[cfg(test)]", "mod tests {}"],
    );
    let result = check_review(&diff, "");
    assert!(result.signals.tests_touched);
    assert!(rule_lines(&result, "TG001").is_empty());
}

#[test]
fn secrets_are_found_per_occurrence_without_leaking() {
    let key = format!("AKIA{}", "Q7WX3ZPL9MKD2RTB");
    let token = format!("ghp_{}", "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6");
    let diff = new_file(
        "src/settings.py",
        &[
            "import os",
            &format!("KEY = \"{key}\""),
            &format!("TOKEN = \"{token}\""),
        ],
    );
    let result = check_review(&diff, "");
    assert!(result.should_fail);
    assert_eq!(
        rule_lines(&result, "TG008"),
        vec![("src/settings.py".into(), 2), ("src/settings.py".into(), 3)]
    );
    let secret_finding = result
        .findings
        .iter()
        .find(|f| f.rule_id == "TG008")
        .unwrap();
    assert_eq!(secret_finding.location.start_column, Some(8));
    let json = serde_json::to_string(&result).unwrap();
    assert!(!json.contains(&key) && !json.contains(&token));
    assert!(!json.contains("Q7WX3ZPL9MKD2RTB"));
    assert_eq!(result.signals.secrets_found, 2);
}

#[test]
fn gate_is_decided_before_truncation_and_says_why() {
    let diff = edit("src/a.rs", 1, "fn a() {}", &["pub fn a() {}"]);
    let result = check_review(
        &diff,
        "[review]\nfail_on_severity = \"INFO\"\nmax_findings = 0\n",
    );
    assert!(result.findings.is_empty());
    assert!(result.should_fail);
    assert_eq!(result.stats.findings_truncated, 2);
    // Making a function public adds API: a notice at INFO.
    assert!(
        result
            .fail_reasons
            .iter()
            .any(|r| r.contains("INFO TG002 at src/a.rs:1")),
        "{:?}",
        result.fail_reasons
    );
    assert!(result.fail_reasons.iter().any(|r| r.contains("LOW TG001")));
}

#[test]
fn allowlist_and_fail_on_rule_ids() {
    let diff = edit("src/a.rs", 1, "fn a() {}", &["pub fn a() {}"]);
    let passed = check_review(
        &diff,
        "[review]\nallowlist = [\"PRE002\", \"TG001\"]\nfail_on_severity = \"LOW\"\n",
    );
    assert!(!passed.should_fail, "{:?}", passed.fail_reasons);
    assert_eq!(passed.stats.findings_allowlisted, 2);

    let forced = check_review(&diff, "[review]\nfail_on_rule_ids = [\"TG0*\"]\n");
    assert!(forced.should_fail);
    assert!(forced.fail_reasons[0].contains("set to fail the gate"));
}

#[test]
fn rule_overrides_change_severity_or_disable() {
    let diff = edit("src/a.rs", 1, "fn a() {}", &["pub fn a() {}"]);
    let result = check_review(
        &diff,
        "[rules.TG002]\nseverity = \"CRITICAL\"\n[rules.TG001]\nenabled = false\n",
    );
    assert!(result.should_fail);
    assert!(rule_lines(&result, "TG001").is_empty());
    assert_eq!(result.stats.deterministic_checks_executed, 7);
    let api = result
        .findings
        .iter()
        .find(|f| f.rule_id == "TG002")
        .unwrap();
    assert_eq!(api.category, Category::Architecture);
}

#[test]
fn baseline_drops_known_fingerprints() {
    let diff = edit("src/a.rs", 1, "fn a() {}", &["pub fn a() {}"]);
    let first = check_review(&diff, "");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.json");
    write_baseline(&path, &first.findings).unwrap();
    let baseline = Baseline::load(&path, 1 << 20).unwrap();
    let config = RawConfig::default().resolve().unwrap();
    let parsed = crate::diff::parse(diff.into_bytes()).unwrap();
    let inputs = ReviewInputs {
        baseline: Some(&baseline),
        ..ReviewInputs::default()
    };
    let second = review_diff(&parsed, &inputs, &config).result;
    assert!(second.findings.is_empty());
    assert_eq!(second.stats.findings_baselined, first.findings.len());
}

#[test]
fn ignored_and_selected_files() {
    let diff = format!(
        "{}{}",
        new_file("node_modules/x/index.js", &["module.exports = 1;"]),
        new_file("src/app.js", &["export const a = 1;"]),
    );
    let result = check_review(&diff, "");
    assert_eq!(result.stats.files_changed, 1);
    assert!(
        result
            .metadata
            .warnings
            .iter()
            .any(|w| w.contains("ignore"))
    );

    let config = RawConfig::default().resolve().unwrap();
    let parsed = crate::diff::parse(diff.into_bytes()).unwrap();
    let only = vec!["src/app.js".to_string()];
    let inputs = ReviewInputs {
        changed_files: Some(&only),
        ..ReviewInputs::default()
    };
    let result = review_diff(&parsed, &inputs, &config).result;
    assert_eq!(result.stats.files_changed, 1);
}

#[test]
fn changed_files_entries_are_validated() {
    for bad in [
        "/etc/passwd",
        "../x",
        "a/../../b",
        "-rf",
        "a\u{7}b",
        "C:\\x",
        "",
    ] {
        assert!(validate_changed_file(bad).is_err(), "{bad:?}");
    }
    assert!(validate_changed_file("src/ok file.rs").is_ok());
}

#[test]
fn a_spent_time_budget_stops_invariants_and_fails_the_gate_saying_what_was_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".review-invariants.yml"),
        "r:\n  - id: no-todo\n    rule: No TODO\n    paths: ['**']\n    severity: LOW\n    category: style\n    action: deny\n    deny: {regex: TODO}\n",
    )
    .unwrap();
    let diff = new_file("src/a.rs", &["// TODO"]);
    let review = |time_budget: Option<std::time::Duration>| {
        let mut config = RawConfig::default().resolve().unwrap();
        config.time_budget = time_budget;
        run(ReviewRequest {
            workspace: dir.path(),
            diff: DiffInput::Text(diff.clone().into_bytes()),
            config: &config,
            changed_files: None,
        })
        .unwrap()
        .result
    };

    let full = review(Some(std::time::Duration::from_secs(3600)));
    assert_eq!(rule_lines(&full, "no-todo"), [("src/a.rs".to_string(), 1)]);
    assert!(!full.should_fail, "{:?}", full.fail_reasons);

    // A budget that is over before the invariants run (1 ns): deterministic, not a timing.
    let cut = review(Some(std::time::Duration::from_nanos(1)));
    assert!(rule_lines(&cut, "no-todo").is_empty());
    assert!(cut.should_fail);
    assert!(
        cut.fail_reasons[0].starts_with(
            "The review's time budget of 0 ms ran out and skipped invariants on 1 file(s): the change was not fully reviewed"
        ),
        "{:?}",
        cut.fail_reasons
    );
    assert!(
        cut.metadata
            .warnings
            .iter()
            .any(|w| w == "invariants .review-invariants.yml: stopped early; 1 changed file(s) were not checked"),
        "{:?}",
        cut.metadata.warnings
    );
}

#[test]
fn file_kind_notices_are_one_finding_per_change_and_lockfiles_are_not_large() {
    let mut diff = String::new();
    for path in [".github/workflows/ci.yml", "Dockerfile", "tsconfig.json"] {
        diff.push_str(&new_file(path, &["a: 1"]));
    }
    let lock: Vec<String> = (0..40).map(|n| format!("pkg-{n} = 1.0.{n}")).collect();
    let lock: Vec<&str> = lock.iter().map(String::as_str).collect();
    diff.push_str(&new_file("uv.lock", &lock));
    let result = check_review(&diff, "[preflight]\nlarge_change_lines = 20\n");
    let config: Vec<&Finding> = result
        .findings
        .iter()
        .filter(|f| f.rule_id == "TG003")
        .collect();
    assert_eq!(config.len(), 1, "one notice for the three files");
    assert_eq!(config[0].severity, Severity::Low);
    assert_eq!(config[0].evidence.len(), 3, "{:?}", config[0].evidence);
    assert!(config[0].title.contains("3 files"), "{}", config[0].title);
    // 43 changed lines, 40 of them the lockfile's: below the limit of 20 once it is not counted.
    assert!(rule_lines(&result, "TG007").is_empty());
    // Issue 28: nor does the risk score's `large_change` signal count them.
    assert!(
        !result
            .risk_factors
            .iter()
            .any(|f| f.signal == "large_change"),
        "{:?}",
        result.risk_factors
    );
    let counted = check_review(
        &diff.replace("uv.lock", "pkgs.txt"),
        "[preflight]\nlarge_change_lines = 20\n",
    );
    assert_eq!(
        rule_lines(&counted, "TG007").len(),
        1,
        "the same lines in a plain file count"
    );
}

#[test]
fn secrets_in_tests_and_published_examples_are_lowered_with_the_reason() {
    let header = "eyJhbGciOiJIUzI1NiJ9";
    let jwt = format!(
        "{header}.eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ.Kx7q2LmN9pQr4StUv8WyZ1aBcDeFgHiJkLmNoPqRsTu"
    );
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
    let placeholder = format!("{header}.eyJ1c2VyIjoiYWxpY2UifQ.signature");
    let diff = [
        new_file(
            "tests/auth.test.ts",
            &[
                &format!("const t = \"{jwt}\";"),
                &format!("const g = \"{token}\";"),
            ],
        ),
        new_file("src/bench.ts", &[&format!("const t = \"{placeholder}\";")]),
        new_file("src/client.ts", &[&format!("const t = \"{jwt}\";")]),
    ]
    .concat();
    let result = check_review(&diff, "");
    let secret = |path: &str, kind: &str| {
        result
            .findings
            .iter()
            .find(|f| f.rule_id == "TG008" && f.location.file == path && f.title.contains(kind))
            .unwrap_or_else(|| panic!("no {kind} finding in {path}: {:?}", result.findings))
    };
    let in_test = secret("tests/auth.test.ts", "JSON Web Token");
    assert_eq!(in_test.severity, Severity::Medium);
    assert!(
        in_test.message.contains("test, example or fixture path"),
        "{}",
        in_test.message
    );
    assert_eq!(
        secret("tests/auth.test.ts", "GitHub").severity,
        Severity::Critical
    );
    let example = secret("src/bench.ts", "JSON Web Token");
    assert_eq!(example.severity, Severity::Low);
    assert!(
        example.message.contains("placeholder"),
        "{}",
        example.message
    );
    assert_eq!(
        secret("src/client.ts", "JSON Web Token").severity,
        Severity::Critical
    );
    let json = serde_json::to_string(&result).unwrap();
    assert!(
        !json.contains(&jwt) && !json.contains(&token),
        "still masked"
    );
}

/// Issue 28: test CA keys under `tests/certs/`, a self-signed key under an example's
/// `self_signed_certs/` and a sample JWT under `examples/jwt/` are reported at HIGH or below with
/// the reason and do not fail the default (CRITICAL) gate; a cloud-provider key or a live
/// service's token fails wherever it sits.
#[test]
fn secrets_in_test_example_and_fixture_paths_do_not_fail_the_default_gate() {
    let dashes = "-----";
    let pem = |kind: &str| {
        vec![
            format!("{dashes}BEGIN {kind}PRIVATE KEY{dashes}"),
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun".to_string(),
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK".to_string(),
            format!("{dashes}END {kind}PRIVATE KEY{dashes}"),
        ]
    };
    let lines = |v: &[String]| v.iter().map(String::as_str).collect::<Vec<_>>().join("\n");
    let header = "eyJhbGciOiJIUzI1NiJ9";
    let jwt = format!(
        "{header}.eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ.Kx7q2LmN9pQr4StUv8WyZ1aBcDeFgHiJkLmNoPqRsTu"
    );
    let aws = format!("AKIA{}", "QWERTYUIOPASDFGH");
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
    let files = [
        ("tests/certs/ca.key", lines(&pem("RSA "))),
        ("examples/tls/self_signed_certs/server.key", lines(&pem(""))),
        ("examples/jwt/token.txt", jwt.clone()),
        ("tests/fixtures/settings.py", format!("AWS_KEY = \"{aws}\"")),
        ("examples/client/main.py", format!("GITHUB = \"{token}\"")),
    ];
    let lowered_only: String = files[..3]
        .iter()
        .map(|(path, text)| new_file(path, &text.lines().collect::<Vec<_>>()))
        .collect();
    let result = check_review(&lowered_only, "");
    let secrets: Vec<&Finding> = result
        .findings
        .iter()
        .filter(|f| f.rule_id == "TG008")
        .collect();
    assert_eq!(secrets.len(), 3, "{secrets:#?}");
    for finding in &secrets {
        assert!(finding.severity <= Severity::High, "{finding:#?}");
        assert!(
            finding.message.contains("Reported at")
                && finding.message.contains("rather than CRITICAL"),
            "{}",
            finding.message
        );
    }
    assert!(!result.should_fail, "{:?}", result.fail_reasons);

    let all: String = files
        .iter()
        .map(|(path, text)| new_file(path, &text.lines().collect::<Vec<_>>()))
        .collect();
    let result = check_review(&all, "");
    for path in ["tests/fixtures/settings.py", "examples/client/main.py"] {
        let finding = result
            .findings
            .iter()
            .find(|f| f.rule_id == "TG008" && f.location.file == path)
            .unwrap_or_else(|| panic!("no secret in {path}"));
        assert_eq!(finding.severity, Severity::Critical, "{path}");
    }
    assert!(result.should_fail);
}

/// Issue 28: the message read "adds a AWS access key ID".
#[test]
fn a_secret_finding_reads_right() {
    let key = format!("AKIA{}", "QWERTYUIOPASDFGH");
    let result = check_review(&new_file("src/s.py", &[&format!("KEY = \"{key}\"")]), "");
    let finding = result
        .findings
        .iter()
        .find(|f| f.rule_id == "TG008")
        .expect("the key is found");
    assert!(
        finding.message.contains("adds an AWS access key ID"),
        "{}",
        finding.message
    );
}

#[test]
fn a_dismissed_finding_leaves_the_gate_but_stays_in_the_result() {
    let key = format!("AKIA{}", "QWERTYUIOPASDFGH");
    let diff = new_file(
        "src/settings.py",
        &[&format!("AWS_ACCESS_KEY_ID = \"{key}\"")],
    );
    let first = check_review(&diff, "");
    assert!(first.should_fail);
    let secret = first
        .findings
        .iter()
        .find(|f| f.rule_id == "TG008")
        .expect("the key is found")
        .clone();

    let mut ledger = crate::learnings::Ledger::default();
    ledger.push(crate::learnings::Record {
        fingerprint: secret.fingerprint.clone(),
        rule_id: secret.rule_id.clone(),
        path: secret.location.file.clone(),
        scope: None,
        disposition: crate::learnings::Disposition::Dismissed,
        reason: "test key".into(),
        by: "alice".into(),
        at: "t".into(),
        // No file to read: the anchored line is the evidence.
        evidence: Some(crate::learnings::evidence_of([secret.anchor_text.as_str()])),
    });
    let learnings = Learnings::new(ledger, |_| None);
    let config = RawConfig::default().resolve().unwrap();
    let parsed = crate::diff::parse(diff.into_bytes()).unwrap();
    let inputs = ReviewInputs {
        learnings: Some(&learnings),
        ..ReviewInputs::default()
    };
    let second = review_diff(&parsed, &inputs, &config).result;
    assert!(!second.should_fail, "{:?}", second.fail_reasons);
    assert!(!second.findings.iter().any(|f| f.rule_id == "TG008"));
    assert_eq!(second.dismissed.len(), 1);
    assert_eq!(second.stats.findings_dismissed, 1);
    assert!(second.summary.contains("1 dismissed"), "{}", second.summary);
    let note = second.dismissed[0].learning.as_ref().unwrap();
    assert_eq!(note.status, crate::findings::LearningStatus::Dismissed);
}
