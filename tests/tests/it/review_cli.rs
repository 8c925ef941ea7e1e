//! `tollgate review` on diff files and stdin: the exit contract, formats, and the JSON contract.

use crate::util::{fixture, tollgate};

fn sample() -> String {
    fixture("diffs/sample.diff").display().to_string()
}

#[test]
fn readme_command_reviews_the_sample_and_passes() {
    let run = tollgate(&["review", "--diff", &sample(), "--format", "markdown"]).run();
    run.assert_code(0);
    assert!(
        run.stdout.contains("<!-- tollgate:summary:v1 -->"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("src/auth/session.ts"), "{}", run.stdout);
    assert!(run.stderr.contains("Gate passed"), "{}", run.stderr);
}

#[test]
fn json_contract_has_fixed_field_names() {
    let run = tollgate(&["review", "--diff", &sample()]).run();
    run.assert_code(0);
    let json = run.json();
    for key in [
        "run_id",
        "risk_score",
        "classification",
        "hotspots",
        "summary",
        "findings",
        "should_fail",
        "fail_reasons",
        "stats",
        "metadata",
    ] {
        assert!(json.get(key).is_some(), "missing top-level `{key}`");
    }
    for key in [
        "files_changed",
        "lines_added",
        "lines_removed",
        "duration_ms",
    ] {
        assert!(json["stats"].get(key).is_some(), "missing stats.{key}");
    }
    assert_eq!(json["stats"]["files_changed"], 3);
    assert_eq!(json["stats"]["lines_added"], 16);
    assert_eq!(json["stats"]["lines_removed"], 2);
    assert_eq!(json["hotspots"], serde_json::json!(["src/auth/session.ts"]));
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for finding in findings {
        for key in [
            "id",
            "rule_id",
            "severity",
            "category",
            "confidence",
            "title",
            "location",
            "evidence",
            "impact",
            "recommendation",
            "source",
            "fingerprint",
            "on_changed_line",
        ] {
            assert!(
                finding.get(key).is_some(),
                "finding misses `{key}`: {finding}"
            );
        }
        let loc = &finding["location"];
        assert!(loc["file"].is_string() && loc["start_line"].is_u64() && loc["end_line"].is_u64());
    }
    // The public API finding points at the first added export, not at line 1.
    let api = findings
        .iter()
        .find(|f| f["rule_id"] == "TG002")
        .expect("public API finding");
    assert_eq!(api["location"]["file"], "src/auth/session.ts");
    assert_eq!(api["location"]["start_line"], 13);
    assert_eq!(api["on_changed_line"], true);
    // The CI change is flagged at the added line.
    let ci = findings
        .iter()
        .find(|f| f["rule_id"] == "TG003")
        .expect("config finding");
    assert_eq!(ci["location"]["file"], ".github/workflows/ci.yml");
    assert_eq!(ci["location"]["start_line"], 11);
}

#[test]
fn secret_fails_the_gate_and_is_never_printed() {
    let diff = fixture("diffs/secret.diff");
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("out.sarif");
    let md = dir.path().join("out.md");
    let run = tollgate(&[
        "review",
        "--diff",
        diff.to_str().unwrap(),
        "--format",
        "json",
        "--format",
        &format!("sarif={}", sarif.display()),
        "--format",
        &format!("markdown={}", md.display()),
    ])
    .run();
    run.assert_code(1);
    let json = run.json();
    assert_eq!(json["should_fail"], true);
    let reasons = json["fail_reasons"].as_array().unwrap();
    assert!(
        reasons
            .iter()
            .any(|r| r.as_str().unwrap().contains("TG008")),
        "{reasons:?}"
    );
    let secret = "AKIAQWERTYUIOPASDFGH";
    for (name, text) in [
        ("stdout", run.stdout.clone()),
        ("stderr", run.stderr.clone()),
        ("sarif", std::fs::read_to_string(&sarif).unwrap()),
        ("markdown", std::fs::read_to_string(&md).unwrap()),
    ] {
        assert!(!text.contains(secret), "{name} leaks the secret");
        assert!(
            !text.contains("QWERTYUIOP"),
            "{name} leaks part of the secret"
        );
    }
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "TG008")
        .unwrap();
    assert_eq!(finding["location"]["start_line"], 4);
    assert_eq!(finding["severity"], "CRITICAL");
}

#[test]
fn stdin_diff_and_empty_diff() {
    let text = std::fs::read(fixture("diffs/sample.diff")).unwrap();
    let run = tollgate(&["review", "--diff", "-"]).stdin(text).run();
    run.assert_code(0);
    assert_eq!(run.json()["stats"]["files_changed"], 3);

    let run = tollgate(&["review", "--diff", "-"]).stdin("").run();
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["findings"], serde_json::json!([]));
    assert_eq!(json["should_fail"], false);
}

#[test]
fn malformed_diff_is_exit_2_naming_the_line() {
    let truncated = "diff --git a/x.rs b/x.rs\n--- a/x.rs\n+++ b/x.rs\n@@ -1,3 +1,4 @@\n a\n+b\n";
    let run = tollgate(&["review", "--diff", "-"]).stdin(truncated).run();
    run.assert_code(2);
    assert!(run.stderr.contains("line"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "no partial report on stdout");

    let run = tollgate(&["review", "--diff", "-"])
        .stdin("this is not a diff at all\n")
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("does not look like a diff"),
        "{}",
        run.stderr
    );
}

#[test]
fn usage_errors_are_exit_2() {
    let run = tollgate(&["review"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("no diff to review"), "{}", run.stderr);

    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--format",
        "json",
        "--format",
        "sarif",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("stdout"), "{}", run.stderr);

    let run = tollgate(&["review", "--diff", &sample(), "--format", "xml"]).run();
    run.assert_code(2);

    let run = tollgate(&["review", "--diff", "/nonexistent/x.diff"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("/nonexistent/x.diff"), "{}", run.stderr);

    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--changed-files",
        "../etc/passwd",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains(".."), "{}", run.stderr);
}

#[test]
fn formats_write_files_and_max_findings_never_hides_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/out");
    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--fail-on-severity",
        "LOW",
        "--max-findings",
        "1",
        "--format",
        &format!("json={}/r.json", out.display()),
        "--format",
        &format!("sarif={}/r.sarif", out.display()),
        "--format",
        &format!("markdown={}/r.md", out.display()),
    ])
    .run();
    run.assert_code(1);
    assert!(run.stdout.is_empty());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("r.json")).unwrap()).unwrap();
    // Every rule keeps one finding past the cut; the sample has one finding per rule.
    let findings = json["findings"].as_array().unwrap();
    let mut rules: Vec<&str> = findings
        .iter()
        .map(|f| f["rule_id"].as_str().unwrap())
        .collect();
    rules.dedup();
    assert_eq!(rules.len(), findings.len(), "{findings:?}");
    assert!(findings.len() > 1);
    assert_eq!(json["stats"]["findings_truncated"], 0);
    assert!(json["fail_reasons"].as_array().unwrap().len() >= 2);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("r.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert!(
        std::fs::read_to_string(out.join("r.md"))
            .unwrap()
            .contains("tollgate")
    );
}

/// Issue 28: `--output FILE` writes the report that would go to stdout (the default JSON, or
/// the one `--format` without a path) to FILE, as semgrep's `--output` does; with every
/// format given a path there is nothing for it to take, and that is an error. Writing a
/// baseline prints no report unless one is asked for.
#[test]
fn output_takes_the_stdout_report_and_a_baseline_run_prints_none() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("tollgate.json");
    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--format",
        "json",
        "--output",
        &json_path.display().to_string(),
    ])
    .run();
    run.assert_code(0);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert!(json["findings"].is_array());

    let md_path = dir.path().join("r.md");
    tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--format",
        "markdown",
        "--format",
        &format!("sarif={}/r.sarif", dir.path().display()),
        "-o",
        &md_path.display().to_string(),
    ])
    .run()
    .assert_code(0);
    assert!(
        std::fs::read_to_string(&md_path)
            .unwrap()
            .contains("tollgate")
    );

    let clash = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--format",
        &format!("json={}/a.json", dir.path().display()),
        "--output",
        "b.json",
    ])
    .run();
    clash.assert_code(2);
    assert!(clash.stderr.contains("--output"), "{}", clash.stderr);

    let baseline = dir.path().join("baseline.json");
    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--write-baseline",
        &baseline.display().to_string(),
    ])
    .run();
    run.assert_code(0);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(baseline.is_file());
}

#[test]
fn category_and_confidence_filters() {
    let run = tollgate(&["review", "--diff", &sample(), "--categories", "infra"]).run();
    run.assert_code(0);
    let json = run.json();
    for f in json["findings"].as_array().unwrap() {
        assert_eq!(f["category"], "infra");
    }
    assert!(json["stats"]["findings_filtered"].as_u64().unwrap() > 0);

    let run = tollgate(&[
        "review",
        "--diff",
        &sample(),
        "--confidence-threshold",
        "0.99",
    ])
    .run();
    run.assert_code(0);
    assert_eq!(run.json()["findings"], serde_json::json!([]));

    let run = tollgate(&["review", "--diff", &sample(), "--categories", "vibes"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("vibes"), "{}", run.stderr);
}
