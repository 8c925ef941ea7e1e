//! `tollgate review --format` with the CI formats: each one is written, parses as what it claims
//! to be, and never changes the exit code.

use crate::util::{fixture, tollgate};

fn secret_diff() -> String {
    fixture("diffs/secret.diff").display().to_string()
}

#[test]
fn every_ci_format_renders_the_same_findings() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let run = tollgate(&[
        "review",
        "--diff",
        &secret_diff(),
        "--format",
        &format!("json={}", path("r.json")),
        "--format",
        &format!("rdjson={}", path("r.rdjson")),
        "--format",
        &format!("rdjsonl={}", path("r.rdjsonl")),
        "--format",
        &format!("codequality={}", path("gl.json")),
        "--format",
        &format!("checkstyle={}", path("cs.xml")),
        "--format",
        &format!("junit={}", path("junit.xml")),
        "--format",
        "github",
    ])
    .run();
    run.assert_code(1);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read("r.json")).unwrap();
    let n_findings = json["findings"].as_array().unwrap().len();
    assert!(n_findings >= 2, "{json}");

    let rdjson: serde_json::Value = serde_json::from_str(&read("r.rdjson")).unwrap();
    assert_eq!(rdjson["diagnostics"].as_array().unwrap().len(), n_findings);
    assert_eq!(read("r.rdjsonl").lines().count(), n_findings);
    let gitlab: serde_json::Value = serde_json::from_str(&read("gl.json")).unwrap();
    assert_eq!(gitlab.as_array().unwrap().len(), n_findings);
    assert!(
        gitlab
            .as_array()
            .unwrap()
            .iter()
            .any(|issue| issue["severity"] == "blocker")
    );
    assert_eq!(read("cs.xml").matches("<error ").count(), n_findings);
    // JUnit: every finding is a test case, and only those that fail the gate are failures.
    let n_failing = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["fails_gate"] == true)
        .count();
    assert!(n_failing >= 1 && n_failing < n_findings, "{json}");
    let junit = read("junit.xml");
    assert_eq!(junit.matches("<testcase ").count(), n_findings);
    assert_eq!(junit.matches("<failure ").count(), n_failing);
    // Workflow commands on stdout, the secret nowhere.
    let commands = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("::error ") || line.starts_with("::warning "))
        .count();
    assert!(commands >= 1, "{}", run.stdout);
    for name in ["r.rdjson", "gl.json", "cs.xml", "junit.xml"] {
        assert!(
            !read(name).contains("wJalrXUtnFEMI"),
            "{name} leaks the secret"
        );
    }
    assert!(!run.stdout.contains("wJalrXUtnFEMI"));
}

#[test]
fn unknown_formats_list_the_known_ones() {
    let run = tollgate(&["review", "--diff", &secret_diff(), "--format", "html"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("rdjson"), "{}", run.stderr);
    assert!(run.stderr.contains("checkstyle"), "{}", run.stderr);
}
