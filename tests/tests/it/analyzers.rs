//! Static analyzers in `tollgate review`: the real tsc and semgrep on fixture projects
//! (`tests/fixtures/analyzers/`), imported SARIF, and fake tools written by the tests for the
//! absent, crashing and timed-out paths.
//!
//! Tests that need a real tool skip with a message when it is not installed, except under CI
//! (`CI` set), where `.ci/run` installs both and a missing tool is a failure.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::util::{Run, TestRepo, Tollgate, fixture, tollgate};

/// Whether `tool` is on PATH; outside CI a missing tool skips the test with a message.
fn require_tool(tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()));
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install {tool} (.ci/run does)"
        );
        eprintln!("{tool} is not installed; skipping (run .ci/run to install it)");
    }
    found
}

/// Copies a fixture directory over the repository's working tree.
fn copy_fixture(repo: &TestRepo, rel: &str) {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let root = fixture(rel);
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    for file in files {
        let content = std::fs::read_to_string(root.join(&file)).unwrap();
        repo.write(file.to_str().unwrap(), &content);
    }
}

/// A repository with `<project>/before` committed and `<project>/after` in the working tree.
fn project_repo(project: &str) -> TestRepo {
    let repo = TestRepo::new();
    copy_fixture(&repo, &format!("analyzers/{project}/before"));
    repo.commit("before");
    copy_fixture(&repo, &format!("analyzers/{project}/after"));
    repo
}

fn review(repo: &TestRepo, extra: &[&str]) -> Run {
    review_command(repo, extra).run()
}

/// [`review`] with one environment variable set.
fn review_with_env(repo: &TestRepo, extra: &[&str], key: &str, value: &str) -> Run {
    review_command(repo, extra).env(key, value).run()
}

fn review_command(repo: &TestRepo, extra: &[&str]) -> Tollgate {
    let mut args = vec![
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--working-tree",
    ];
    args.extend_from_slice(extra);
    tollgate(&args)
}

/// An executable script at `rel` in the repository.
fn fake_tool(repo: &TestRepo, rel: &str, body: &str) {
    repo.write(rel, &format!("#!/bin/sh\n{body}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = repo.path().join(rel);
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn analyzer<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["static_analysis"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no static_analysis results in {json:#}"))
        .iter()
        .find(|r| r["analyzer"] == name)
        .unwrap_or_else(|| panic!("no {name} result in {:#}", json["static_analysis"]))
}

fn findings_of<'a>(json: &'a Value, prefix: &str) -> Vec<&'a Value> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule_id"].as_str().unwrap().starts_with(prefix))
        .collect()
}

fn at(finding: &Value) -> (String, u64) {
    (
        finding["location"]["file"].as_str().unwrap().to_string(),
        finding["location"]["start_line"].as_u64().unwrap(),
    )
}

#[test]
fn tsc_counts_only_type_errors_on_changed_lines() {
    if !require_tool("tsc") {
        return;
    }
    let repo = project_repo("ts-monorepo");
    let run = review(&repo, &["--analyzers", "tsc"]);
    // New type errors on changed lines fail the default gate; the one outside the change does
    // not count.
    run.assert_code(1);
    let json = run.json();
    let reasons = json["fail_reasons"].as_array().unwrap();
    assert!(
        !reasons.is_empty()
            && reasons.iter().all(|r| r
                .as_str()
                .unwrap()
                .contains("analyzer error on a changed line")),
        "{reasons:?}"
    );
    // Switched off, the same errors pass the gate.
    review_with_env(
        &repo,
        &["--analyzers", "tsc"],
        "TOLLGATE_FAIL_ON_ANALYZER_ERRORS",
        "false",
    )
    .assert_code(0);

    let tsc = analyzer(&json, "tsc");
    assert_eq!(tsc["status"], "executed", "{tsc:#}");
    assert!(tsc.get("skipped_reason").is_none());
    assert!(!tsc["version"].as_str().unwrap().is_empty());
    assert_eq!(tsc["invocations"], 2, "one run per owning tsconfig");
    let process_ms = tsc["process_ms"].as_f64().unwrap();
    assert!(process_ms > 0.0 && process_ms <= tsc["duration_ms"].as_f64().unwrap());
    assert_eq!(tsc["findings_reported"], 3);
    assert_eq!(
        tsc["findings_out_of_scope"], 1,
        "the error that predates the change"
    );
    assert_eq!(tsc["findings_kept"], 2);
    assert_eq!(json["static_analysis"]["scope"], "changed_lines");
    assert_eq!(json["stats"]["static_analyzers_executed"], 1);
    assert!(
        json["stats"]["timings_ms"]["static_analysis"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let findings = findings_of(&json, "tsc/");
    let mut places: Vec<(String, u64)> = findings.iter().map(|f| at(f)).collect();
    places.sort();
    assert_eq!(
        places,
        [
            ("packages/app/src/math.ts".to_string(), 10),
            ("packages/lib/src/user.ts".to_string(), 9),
        ]
    );
    for finding in &findings {
        assert_eq!(finding["severity"], "HIGH");
        assert_eq!(finding["category"], "correctness");
        assert_eq!(finding["source"], "tsc");
        assert_eq!(finding["on_changed_line"], true);
        assert_eq!(finding["fingerprint"].as_str().unwrap().len(), 32);
    }
    let math = findings
        .iter()
        .find(|f| at(f).0.ends_with("math.ts"))
        .unwrap();
    assert_eq!(math["rule_id"], "tsc/TS2345");
    assert_eq!(math["location"]["start_column"], 17);
    let user = findings
        .iter()
        .find(|f| at(f).0.ends_with("user.ts"))
        .unwrap();
    assert_eq!(user["rule_id"], "tsc/TS2322");
    let message = user["message"].as_str().unwrap();
    assert_eq!(
        message.lines().count(),
        3,
        "continuation lines kept: {message}"
    );
    assert!(message.contains("'address.city'"), "{message}");

    // Incremental build info lands in the cache, which keeps itself out of git.
    let cache = repo.path().join(".tollgate/cache");
    assert!(cache.join(".gitignore").is_file());
    let n_build_infos = std::fs::read_dir(cache.join("tsc")).unwrap().count();
    assert_eq!(n_build_infos, 2);

    // The type errors vote in the gate like any finding.
    let run = review(&repo, &["--analyzers", "tsc", "--fail-on-severity", "HIGH"]);
    run.assert_code(1);
    let reasons = run.json()["fail_reasons"].to_string();
    assert!(reasons.contains("tsc/TS2345"), "{reasons}");
}

#[test]
fn tsc_scope_can_widen_to_changed_files() {
    if !require_tool("tsc") {
        return;
    }
    let repo = project_repo("ts-monorepo");
    let json = review(
        &repo,
        &["--analyzers", "tsc", "--analysis-scope", "changed-files"],
    )
    .json();
    let tsc = analyzer(&json, "tsc");
    assert_eq!(tsc["findings_out_of_scope"], 0);
    let old = findings_of(&json, "tsc/")
        .into_iter()
        .find(|f| at(f) == ("packages/app/src/math.ts".to_string(), 3))
        .expect("the pre-existing error counts in the changed-files scope");
    assert_eq!(old["on_changed_line"], false);
    assert_eq!(old["rule_id"], "tsc/TS2322");
}

#[test]
fn semgrep_honours_nosemgrep_and_carries_its_autofix() {
    if !require_tool("semgrep") {
        return;
    }
    let repo = project_repo("semgrep-project");
    let run = review(&repo, &["--analyzers", "semgrep", "--format", "json"]);
    // ERROR maps to HIGH, an analyzer error on a changed line: it fails the default gate.
    run.assert_code(1);
    let json = run.json();
    assert!(
        json["fail_reasons"].as_array().unwrap().iter().all(|r| r
            .as_str()
            .unwrap()
            .contains("analyzer error on a changed line")),
        "{}",
        json["fail_reasons"]
    );
    let semgrep = analyzer(&json, "semgrep");
    assert_eq!(semgrep["status"], "executed", "{semgrep:#}");
    assert!(!semgrep["version"].as_str().unwrap().is_empty());
    assert_eq!(
        semgrep["findings_reported"], 3,
        "nosemgrep dropped by semgrep"
    );
    assert_eq!(
        semgrep["findings_out_of_scope"], 1,
        "eval(legacy) predates the change"
    );

    let findings = findings_of(&json, "semgrep/");
    let places: Vec<(String, u64)> = findings.iter().map(|f| at(f)).collect();
    assert!(
        !places.contains(&("src/app.js".to_string(), 8)),
        "the nosemgrep line was reported: {places:?}"
    );
    let eval = findings
        .iter()
        .find(|f| f["rule_id"] == "semgrep/no-eval")
        .unwrap();
    assert_eq!(at(eval), ("src/app.js".to_string(), 10));
    assert_eq!(eval["severity"], "HIGH");
    assert_eq!(eval["category"], "security");
    assert!(eval["message"].as_str().unwrap().contains("userInput"));

    let equality = findings
        .iter()
        .find(|f| f["rule_id"] == "semgrep/strict-equality")
        .unwrap();
    assert_eq!(equality["severity"], "MEDIUM");
    assert_eq!(equality["category"], "correctness");
    let fix = &equality["suggested_fix"];
    let replacement = fix["replacement"].as_str().unwrap();
    assert!(
        replacement.starts_with("  if (") && replacement.contains("request.method === \"POST\""),
        "{replacement}"
    );
    assert_eq!(fix["applicability"], "unsafe");

    // The severity table is configuration: a project may make ERROR fail the gate.
    repo.write(
        "tollgate.toml",
        "[analyzers.semgrep]\nseverity = { ERROR = \"CRITICAL\" }\n",
    );
    let run = review(&repo, &["--analyzers", "semgrep"]);
    run.assert_code(1);
    assert!(
        run.json()["fail_reasons"]
            .to_string()
            .contains("semgrep/no-eval")
    );
}

#[test]
fn absent_tools_are_unavailable_never_executed() {
    let repo = project_repo("ts-monorepo");
    copy_fixture(&repo, "analyzers/semgrep-project/before");
    copy_fixture(&repo, "analyzers/semgrep-project/after");
    let empty = tempfile::tempdir().unwrap();
    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--working-tree",
        "--analyzers",
        "tsc,semgrep",
    ])
    .env("PATH", empty.path().to_str().unwrap())
    .run();
    run.assert_code(0);
    let json = run.json();
    for name in ["tsc", "semgrep"] {
        let result = analyzer(&json, name);
        assert_eq!(result["status"], "unavailable", "{result:#}");
        assert!(
            result["skipped_reason"]
                .as_str()
                .unwrap()
                .contains("not found"),
            "{result:#}"
        );
        assert_eq!(result["invocations"], 0);
        assert!(
            run.stderr.contains(&format!("{name} unavailable")),
            "{}",
            run.stderr
        );
    }
    assert_eq!(
        json["static_analysis"]["analyzers_executed"],
        serde_json::json!([])
    );
    assert_eq!(json["stats"]["static_analyzers_executed"], 0);
    assert!(findings_of(&json, "tsc/").is_empty());

    // A configured path that does not exist is reported as such, without falling back to PATH.
    repo.write("tollgate.toml", "[analyzers.tsc]\npath = \"tools/tsc\"\n");
    let json = review(&repo, &["--analyzers", "tsc"]).json();
    let tsc = analyzer(&json, "tsc");
    assert_eq!(tsc["status"], "unavailable");
    assert!(
        tsc["skipped_reason"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{tsc:#}"
    );
}

#[test]
fn crashing_tools_are_failed_with_their_stderr() {
    let repo = project_repo("ts-monorepo");
    fake_tool(
        &repo,
        "tools/tsc",
        "echo 'TypeError: Cannot read properties of undefined' >&2\nexit 3",
    );
    fake_tool(
        &repo,
        "tools/semgrep",
        "echo 'Traceback (most recent call last):'\nexit 2",
    );
    repo.write(
        "tollgate.toml",
        "[analyzers.tsc]\npath = \"tools/tsc\"\n\n[analyzers.semgrep]\npath = \"tools/semgrep\"\nrules = [\"tools\"]\n",
    );
    let run = review(&repo, &["--analyzers", "tsc,semgrep"]);
    run.assert_code(0);
    let json = run.json();

    let tsc = analyzer(&json, "tsc");
    assert_eq!(tsc["status"], "failed", "{tsc:#}");
    assert_eq!(tsc["discovered_via"], "config");
    assert_eq!(tsc["exit_code"], 3);
    let reason = tsc["skipped_reason"].as_str().unwrap();
    assert!(reason.contains("exited with code 3"), "{reason}");
    assert!(
        tsc["warnings"]
            .to_string()
            .contains("tsc: TypeError: Cannot read properties of undefined"),
        "stderr becomes warnings: {tsc:#}"
    );

    let semgrep = analyzer(&json, "semgrep");
    assert_eq!(semgrep["status"], "failed", "{semgrep:#}");
    assert!(
        semgrep["skipped_reason"]
            .as_str()
            .unwrap()
            .contains("not JSON"),
        "{semgrep:#}"
    );
    assert_eq!(json["stats"]["static_analyzers_executed"], 0);
}

#[test]
fn a_timed_out_tool_is_killed_with_its_children() {
    let repo = project_repo("ts-monorepo");
    let pid_file = repo.path().join("child.pid");
    // Like npm's node wrapper around the native compiler: a parent waiting on a child.
    fake_tool(
        &repo,
        "tools/tsc",
        &format!("sleep 100000 &\necho $! > '{}'\nwait", pid_file.display()),
    );
    repo.write("tollgate.toml", "[analyzers.tsc]\npath = \"tools/tsc\"\n");
    // Had the review waited on the tool, this would hang until nextest's terminate-after.
    let run = review(
        &repo,
        &["--analyzers", "tsc", "--analyzer-timeout-ms", "1500"],
    );
    run.assert_code(0);
    // A review waiting on an analyzer says so on stderr.
    assert!(
        run.stderr.contains("static analysis (tsc) still running"),
        "{}",
        run.stderr
    );
    let json = run.json();
    let tsc = analyzer(&json, "tsc");
    assert_eq!(tsc["status"], "timed_out", "{tsc:#}");
    assert!(
        tsc["skipped_reason"]
            .as_str()
            .unwrap()
            .contains("process tree was killed")
    );
    let child: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!process_alive(child), "the tool's child {child} survived");
}

#[test]
fn imported_sarif_joins_the_review_with_a_run_per_tool() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn a() {}\nfn b() {}\n");
    repo.commit("init");
    repo.write(
        "src/lib.rs",
        "fn a() {}\nfn b() {}\nfn c() { x.unwrap(); }\n",
    );
    let sarif_path = repo.path().join("reports/lint.sarif");
    repo.write(
        "reports/lint.sarif",
        &format!(
            r#"{{"version": "2.1.0", "runs": [
  {{"tool": {{"driver": {{"name": "clippy", "version": "0.1.80",
      "rules": [{{"id": "clippy::unwrap_used", "defaultConfiguration": {{"level": "error"}}}}]}}}},
    "originalUriBaseIds": {{"ROOT": {{"uri": "file://{root}/"}}}},
    "results": [
      {{"ruleId": "clippy::unwrap_used", "message": {{"text": "used `unwrap()` on an `Option`"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "src/lib.rs", "uriBaseId": "ROOT"}},
          "region": {{"startLine": 3, "startColumn": 10}}}}}}]}},
      {{"ruleId": "clippy::unwrap_used", "message": {{"text": "old"}},
        "locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": "src/lib.rs"}}, "region": {{"startLine": 1}}}}}}]}}
    ]}},
  {{"tool": {{"driver": {{"name": "ESLint"}}}}, "results": []}}
]}}"#,
            root = repo.path().canonicalize().unwrap().display()
        ),
    );
    let out = repo.path().join("out.sarif");
    let run = review(
        &repo,
        &[
            "--import-sarif",
            sarif_path.to_str().unwrap(),
            "--fail-on-severity",
            "HIGH",
            "--format",
            "json",
            "--format",
            &format!("sarif={}", out.display()),
        ],
    );
    run.assert_code(1);
    let json = run.json();
    let imported = analyzer(&json, "sarif");
    assert_eq!(imported["status"], "executed");
    assert_eq!(imported["tools"], serde_json::json!(["clippy", "ESLint"]));
    assert_eq!(
        imported["findings_out_of_scope"], 1,
        "line 1 did not change"
    );
    let clippy = findings_of(&json, "clippy/");
    assert_eq!(clippy.len(), 1);
    assert_eq!(clippy[0]["rule_id"], "clippy/clippy::unwrap_used");
    assert_eq!(clippy[0]["tool"], "clippy");
    assert_eq!(clippy[0]["source"], "sarif");
    assert_eq!(clippy[0]["severity"], "HIGH");
    assert_eq!(at(clippy[0]), ("src/lib.rs".to_string(), 3));
    assert!(
        json["fail_reasons"]
            .to_string()
            .contains("clippy/clippy::unwrap_used")
    );

    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ids: Vec<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["automationDetails"]["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"tollgate/sarif/clippy/"), "{ids:?}");
    assert!(ids.contains(&"tollgate/sarif/eslint/"), "{ids:?}");
}

#[test]
fn malformed_sarif_fails_the_run_naming_the_file() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("init");
    repo.write("a.txt", "b\n");
    repo.write("broken.sarif", "{\"version\": \"2.1.0\", \"runs\": [\n");
    let broken = repo.path().join("broken.sarif");
    let run = review(&repo, &["--import-sarif", broken.to_str().unwrap()]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("broken.sarif") && run.stderr.contains("not valid JSON"),
        "{}",
        run.stderr
    );
    repo.write("old.sarif", "{\"version\": \"2.0.0\", \"runs\": []}");
    let old = repo.path().join("old.sarif");
    let run = review(&repo, &["--import-sarif", old.to_str().unwrap()]);
    run.assert_code(2);
    assert!(run.stderr.contains("only \"2.1.0\""), "{}", run.stderr);
}

/// Whether `pid` runs (zombies count as gone), allowing a moment for the kill to land.
fn process_alive(pid: u32) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return false,
            Ok(stat) => {
                let state = stat
                    .rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next());
                if matches!(state, Some("Z" | "X")) {
                    return false;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}
