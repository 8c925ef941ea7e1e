//! The `review` profile: `review_diff`, `check_invariants`, secrets, static analysis, the model-only reviews, cancellation.

use crate::common::*;

#[tokio::test]
async fn review_diff_reviews_a_real_diff_in_both_protocol_eras() {
    for lifecycle in [legacy(), stateless()] {
        let session = connect("review", lifecycle).await;
        let result = session
            .ok(
                "review_diff",
                json!({
                    "diff": DIFF,
                    "base_sha": "0123abcd",
                    "options": {"fail_on_severity": "HIGH", "include_sarif": true, "include_markdown": true},
                }),
            )
            .await;
        let eval = result["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule_id"] == "no-eval")
            .unwrap_or_else(|| panic!("no invariant finding in {result}"));
        assert_eq!(eval["location"]["file"], "src/app.js");
        assert_eq!(eval["location"]["start_line"], 2);
        assert_eq!(result["should_fail"], true);
        assert!(
            result["fail_reasons"][0]
                .as_str()
                .unwrap()
                .contains("no-eval"),
            "{result}"
        );
        assert_eq!(result["metadata"]["base_sha"], "0123abcd");
        assert_eq!(
            result["metadata"]["invariants_path"],
            ".review-invariants.yml"
        );
        let sarif: Value = serde_json::from_str(result["sarif"].as_str().unwrap()).unwrap();
        assert_eq!(sarif["version"], "2.1.0");
        assert!(result["markdown"].as_str().unwrap().contains("no-eval"));
        assert!(
            result["metadata"]["warnings"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn review_diff_defaults_pass_and_unavailable_options_are_reported() {
    let session = connect("review", legacy()).await;
    let result = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"enable_llm": true, "two_pass": false, "semgrep_args": []}}),
        )
        .await;
    // A model's HIGH does not reach the default CRITICAL gate (only analyzer errors do).
    assert_eq!(result["should_fail"], false);
    assert!(result.get("sarif").is_none());
    let warnings: Vec<&str> = result["metadata"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("options.enable_llm:")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("options.two_pass:")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("options.semgrep_args:")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn review_diff_reads_the_workspace_configuration_under_the_options() {
    let workspace = workspace();
    std::fs::write(
        workspace.path().join("tollgate.toml"),
        "[review]\nfail_on_severity = \"HIGH\"\n",
    )
    .unwrap();
    let session = connect_to(workspace, "review", legacy()).await;
    let from_file = session.ok("review_diff", json!({"diff": DIFF})).await;
    assert_eq!(from_file["should_fail"], true);
    let overridden = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"fail_on_severity": "CRITICAL"}}),
        )
        .await;
    assert_eq!(overridden["should_fail"], false);
}

#[tokio::test]
async fn review_diff_refuses_bad_arguments_with_codes_and_fields() {
    let session = connect("review", stateless()).await;
    let cases = [
        (json!({}), "INVALID_INPUT", "missing field `diff`"),
        (
            json!({"diff": "  \n"}),
            "INVALID_INPUT",
            "the diff is empty",
        ),
        (
            json!({"diff": "hello"}),
            "INVALID_INPUT",
            "does not look like a diff",
        ),
        (
            json!({"diff": DIFF, "optoins": {}}),
            "INVALID_INPUT",
            "unknown field `optoins`",
        ),
        (
            json!({"diff": DIFF, "options": {"max_finding": 3}}),
            "INVALID_INPUT",
            "unknown field `max_finding`",
        ),
        (
            json!({"diff": DIFF, "options": {"confidence_threshold": 1.5}}),
            "INVALID_INPUT",
            "options.confidence_threshold",
        ),
        (
            json!({"diff": DIFF, "options": {"max_context_files": 21}}),
            "INVALID_INPUT",
            "options.max_context_files",
        ),
        (
            json!({"diff": DIFF, "options": {"fail_on_severity": "SEVERE"}}),
            "INVALID_INPUT",
            "unknown variant `SEVERE`",
        ),
        (
            json!({"diff": DIFF, "changed_files": ["../secrets.txt"]}),
            "INVALID_INPUT",
            "`..` segments",
        ),
        (
            json!({"diff": DIFF, "changed_files": ["/etc/passwd"]}),
            "INVALID_INPUT",
            "absolute paths",
        ),
        (
            json!({"diff": DIFF, "head_sha": "not-a-sha"}),
            "INVALID_INPUT",
            "head_sha",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "../../etc/passwd"}}),
            "PATH_OUTSIDE_WORKSPACE",
            "climbs out",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "/etc/passwd"}}),
            "PATH_OUTSIDE_WORKSPACE",
            "outside the workspace",
        ),
        (
            json!({"diff": DIFF, "options": {"invariants_path": "nope.yml"}}),
            "FILE_NOT_FOUND",
            "nope.yml",
        ),
    ];
    for (arguments, code, needle) in cases {
        let error = session.err("review_diff", arguments.clone()).await;
        assert_code(&error, code);
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{arguments}: {error}"
        );
    }
    let error = session
        .err(
            "review_diff",
            json!({"diff": DIFF, "options": {"confidence_threshold": -1}}),
        )
        .await;
    assert_eq!(error["details"]["field"], "options.confidence_threshold");
}

#[tokio::test]
async fn check_invariants_reports_findings_and_file_problems() {
    let session = connect("review", legacy()).await;
    let result = session.ok("check_invariants", json!({"diff": DIFF})).await;
    assert_eq!(result["success"], true);
    assert_eq!(result["invariants_path"], ".review-invariants.yml");
    assert_eq!(result["checked_invariants"], 1);
    let findings = result["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{result}");
    assert_eq!(findings[0]["rule_id"], "no-eval");
    assert_eq!(findings[0]["location"]["start_line"], 2);
    assert!(
        findings[0]["fingerprint"]
            .as_str()
            .is_some_and(|f| !f.is_empty())
    );

    let other_file = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "changed_files": ["README.md"]}),
        )
        .await;
    assert_eq!(other_file["findings"], json!([]));

    let missing = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "rules/missing.yml"}),
        )
        .await;
    assert_eq!(missing["success"], false);
    assert_eq!(missing["error_code"], "FILE_NOT_FOUND");
    assert_eq!(missing["checked_invariants"], 0);

    std::fs::write(
        session.path().join("broken.yml"),
        "rules:\n  - id: x\n    severity: HUGE\n",
    )
    .unwrap();
    let broken = session
        .ok(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "broken.yml"}),
        )
        .await;
    assert_eq!(broken["success"], false);
    assert_eq!(broken["error_code"], "INVALID_INPUT");
    assert!(
        broken["error"].as_str().unwrap().contains("broken.yml:3:"),
        "{broken}"
    );

    for hostile in ["../../etc/passwd", "/etc/passwd"] {
        let error = session
            .err(
                "check_invariants",
                json!({"diff": DIFF, "invariants_path": hostile}),
            )
            .await;
        assert_code(&error, "PATH_OUTSIDE_WORKSPACE");
        assert_eq!(error["details"]["field"], "invariants_path");
    }
    assert_code(
        &session
            .err("check_invariants", json!({"invariants_path": "x.yml"}))
            .await,
        "INVALID_INPUT",
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_workspace_is_refused() {
    let session = connect("review", legacy()).await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules.yml"), INVARIANTS).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("rules.yml"),
        session.path().join("link.yml"),
    )
    .unwrap();
    let error = session
        .err(
            "check_invariants",
            json!({"diff": DIFF, "invariants_path": "link.yml"}),
        )
        .await;
    assert_code(&error, "PATH_OUTSIDE_WORKSPACE");
}

#[tokio::test]
async fn scrub_secrets_masks_and_enforces_its_limits() {
    let session = connect("plan", legacy()).await;
    let token = format!("ghp_{}", "a1B2".repeat(9));
    let result = session
        .ok(
            "scrub_secrets",
            json!({"content": format!("GH={token}\n"), "show_start": 4}),
        )
        .await;
    assert_eq!(result["scrubbed_content"], "GH=ghp_****\n");
    assert_eq!(result["secrets_found"], true);
    assert_eq!(result["secrets_count"], 1);
    assert_eq!(result["detected_types"], json!(["github_token"]));

    let error = session
        .err("scrub_secrets", json!({"content": "a".repeat(1_000_001)}))
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "content");
    assert_code(
        &session
            .err("scrub_secrets", json!({"content": "x", "show_end": 9}))
            .await,
        "INVALID_INPUT",
    );
    assert_code(
        &session
            .err("scrub_secrets", json!({"content": "x", "show_start": -1}))
            .await,
        "INVALID_INPUT",
    );
    assert_code(
        &session.err("scrub_secrets", json!({})).await,
        "INVALID_INPUT",
    );
}

#[tokio::test]
async fn static_analysis_runs_in_review_diff_and_on_its_own() {
    // The server's environment has no PATH, so tsc cannot be found: a status, never a clean run.
    let session = connect("review", legacy()).await;
    let review = session
        .ok(
            "review_diff",
            json!({"diff": DIFF, "options": {"enable_static_analysis": true}}),
        )
        .await;
    let analysis = &review["static_analysis"];
    assert_eq!(analysis["analyzers_requested"], json!(["tsc"]), "{review}");
    assert_eq!(analysis["analyzers_executed"], json!([]));
    // tsc is not installed here, and the diff has no TypeScript project anyway: a status and a
    // reason either way.
    assert_ne!(analysis["results"][0]["status"], "executed", "{review}");
    assert!(
        analysis["results"][0]["skipped_reason"].is_string(),
        "{review}"
    );
    assert!(
        review["metadata"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("tsc")),
        "{review}"
    );

    // A TypeScript project whose tsc is missing: unavailable, and the run is not a success.
    std::fs::write(session.path().join("tsconfig.json"), "{}\n").unwrap();
    std::fs::create_dir_all(session.path().join("src")).unwrap();
    std::fs::write(
        session.path().join("src/app.ts"),
        "export const a: number = 1;\n",
    )
    .unwrap();
    let standalone = session
        .ok(
            "run_static_analysis",
            json!({"changed_files": ["src/app.ts"], "options": {"analyzers": ["tsc"]}}),
        )
        .await;
    assert_eq!(standalone["success"], false, "{standalone}");
    assert_eq!(standalone["analyzers"], json!(["tsc"]));
    assert_eq!(
        standalone["results"][0]["status"], "unavailable",
        "{standalone}"
    );

    let error = session
        .err(
            "run_static_analysis",
            json!({"changed_files": ["../../etc/passwd"]}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "changed_files");
    let error = session
        .err(
            "run_static_analysis",
            json!({"changed_files": ["src/app.js"], "options": {"import_sarif": ["../../etc/passwd"]}}),
        )
        .await;
    assert_eq!(error["details"]["field"], "options.import_sarif", "{error}");
    let error = session
        .err(
            "run_static_analysis",
            json!({"options": {"analyzers": ["eslint"]}}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
}

#[tokio::test]
async fn review_changes_returns_upstreams_review_result_and_needs_a_model() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", legacy()).await;
    let review = session
        .ok(
            "review_changes",
            json!({"diff": DIFF, "categories": "security", "file_contexts": "{}"}),
        )
        .await;
    assert_eq!(review["overall_correctness"], "patch is incorrect");
    let finding = &review["findings"][0];
    assert_eq!(finding["priority"], 0);
    assert_eq!(finding["is_on_changed_line"], true);
    assert_eq!(finding["code_location"]["file_path"], "src/app.js");
    assert_eq!(finding["code_location"]["line_range"]["start"], 2);
    assert!(finding["id"].as_str().unwrap().starts_with("llm/security@"));
    assert_eq!(review["metadata"]["model_used"], "fake");
    assert_eq!(
        review["metadata"]["categories_reviewed"],
        json!(["security"])
    );
    assert_eq!(server.request_count(), 1);

    let error = session
        .err(
            "review_changes",
            json!({"diff": DIFF, "categories": ["speed"]}),
        )
        .await;
    assert_code(&error, "INVALID_INPUT");
    assert_eq!(error["details"]["field"], "categories");

    let no_model = connect("review", legacy()).await;
    let error = no_model.err("review_changes", json!({"diff": DIFF})).await;
    assert_code(&error, "LLM_NOT_CONFIGURED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("TOLLGATE_LLM_PROVIDER"),
        "{error}"
    );
}

#[tokio::test]
async fn review_git_diff_reviews_staged_changes_and_refuses_option_like_refs() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", stateless()).await;
    stage_files(
        session.path(),
        &[(
            "src/app.js",
            "const a = 1;\nconst b = eval(input);\nmodule.exports = { a, b };\n",
        )],
    );
    let output = session
        .ok("review_git_diff", json!({"include_patterns": ["src/**"]}))
        .await;
    assert_eq!(output["git_info"]["target"], "staged");
    assert_eq!(output["git_info"]["files_changed"], 1);
    assert_eq!(output["review"]["findings"][0]["priority"], 0);
    assert_eq!(output["review"]["changes_summary"]["lines_added"], 3);

    for (arguments, field) in [
        (json!({"target": "--output=/tmp/x"}), "target"),
        (json!({"target": "HEAD;rm -rf /"}), "target"),
        (json!({"target": "main", "base": "-h"}), "base"),
    ] {
        let error = session.err("review_git_diff", arguments).await;
        assert_code(&error, "INVALID_INPUT");
        assert_eq!(error["details"]["field"], field, "{error}");
    }
}

#[tokio::test]
async fn review_auto_runs_review_diff_for_a_diff_and_review_git_diff_without() {
    let server = FakeLlm::start();
    server.respond_with(|_| model_answer());
    let session = connect_to(model_workspace(&server), "review", legacy()).await;
    let with_diff = session.ok("review_auto", json!({"diff": DIFF})).await;
    assert_eq!(with_diff["selected_tool"], "review_diff");
    assert!(with_diff["output"]["risk_score"].is_u64(), "{with_diff}");
    assert_eq!(
        server.request_count(),
        0,
        "review_diff is deterministic here"
    );

    stage_files(session.path(), &[("src/app.js", "const a = 1;\n")]);
    let from_git = session.ok("review_auto", json!({})).await;
    assert_eq!(from_git["selected_tool"], "review_git_diff");
    assert_eq!(from_git["output"]["git_info"]["files_changed"], 1);
    assert_eq!(server.request_count(), 1);
}

/// A review whose call is stopped (here by the server's call time limit of 8 s, which cancels the
/// call's work as a client's cancellation does) kills the analyzer it started, child included,
/// instead of leaving it running unobserved.
#[tokio::test]
async fn a_stopped_review_call_kills_its_running_analyzer() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::write(
        root.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("src/a.ts"),
        "export const a = 1;\nexport const b = 2;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("tollgate.toml"),
        "[analyzers.tsc]\npath = \"tools/tsc\"\n",
    )
    .unwrap();
    let pid_file = root.join("child.pid");
    let tsc = root.join("tools/tsc");
    // Like npm's node wrapper: a parent waiting on a child that never ends by itself.
    std::fs::write(
        &tsc,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Version 5.4.0'; exit 0; fi\nsleep 100000 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tsc, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let diff = "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,2 @@\n export const a = 1;\n+export const b = 2;\n";
    let session = connect_with_options(
        dir,
        "review",
        legacy(),
        Vec::new(),
        // Long enough for the tool to start on a loaded machine; the tool itself never ends.
        std::time::Duration::from_secs(8),
    )
    .await;
    // The analyzer's own limit is far away: only the stopped call can end the tool.
    let err = session
        .err(
            "review_diff",
            json!({"diff": diff, "options": {"enable_static_analysis": true,
                   "static_analyzers": ["tsc"], "static_analysis_timeout_ms": 600000}}),
        )
        .await;
    assert_code(&err, "TIMEOUT");
    let child: i32 = std::fs::read_to_string(session.path().join("child.pid"))
        .expect("the fake tsc ran")
        .trim()
        .parse()
        .unwrap();
    // The kill follows the stop within the watchdog's poll; wait for the kernel to reap it.
    let mut alive = true;
    for _ in 0..200 {
        let state = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next().map(str::to_string))
            });
        if state.is_none() || matches!(state.as_deref(), Some("Z") | Some("X")) {
            alive = false;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        !alive,
        "the analyzer's child {child} survived the stopped call"
    );
}
