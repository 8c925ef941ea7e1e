//! `tollgate review-changes`, `review-git` and `review-auto` against the loopback fake model: JSON
//! on stdout, the exit contract (1 for `patch is incorrect`, 2 for errors), no secret sent.

use serde_json::json;

use crate::fake_llm::{FakeLlm, Reply};
use crate::util::{TestRepo, tollgate};

const KEY: &str = "AKIAQ3EGRTV5XK7PLM2N";

fn configure(repo: &TestRepo, server: &FakeLlm) {
    repo.write(
        "tollgate.toml",
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\nretry_backoff_ms = 1\ncache = false\n",
            server.openai_base_url()
        ),
    );
}

fn answer(correctness: &str, line: u32) -> Reply {
    Reply::json(json!({
        "findings": [{"title": "Hard-coded credential", "body": "Move it to the environment.",
                      "priority": 0, "category": "security", "confidence_score": 0.9,
                      "file": "src/config.rs", "start_line": line}],
        "overall_correctness": correctness,
        "overall_explanation": "A credential is committed.",
        "overall_confidence_score": 0.9
    }))
}

#[test]
fn review_changes_reads_stdin_prints_json_and_fails_on_an_incorrect_patch() {
    let server = FakeLlm::start();
    server.respond_with(|_| answer("patch is incorrect", 2));
    let repo = TestRepo::new();
    configure(&repo, &server);
    let diff = format!(
        "diff --git a/src/config.rs b/src/config.rs\n--- a/src/config.rs\n+++ b/src/config.rs\n\
@@ -1,1 +1,2 @@\n fn a() {{}}\n+const KEY: &str = \"{KEY}\";\n"
    );
    let repo_arg = repo.path().display().to_string();
    let run = tollgate(&["review-changes", "--repo", &repo_arg, "--diff", "-"])
        .stdin(diff.clone())
        .run();
    run.assert_code(1);
    let result = run.json();
    assert_eq!(result["overall_correctness"], "patch is incorrect");
    assert_eq!(result["findings"][0]["is_on_changed_line"], true);
    assert_eq!(
        result["findings"][0]["code_location"]["line_range"]["start"],
        2
    );
    assert!(run.stderr.contains("patch is incorrect"), "{}", run.stderr);
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert!(
        !sent[0].body.to_string().contains(KEY),
        "the key reached the model"
    );

    // Without a model: an error naming the code and how to configure one.
    let bare = TestRepo::new();
    let bare_arg = bare.path().display().to_string();
    let run = tollgate(&["review-changes", "--repo", &bare_arg, "--diff", "-"])
        .stdin(diff)
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("LLM_NOT_CONFIGURED"), "{}", run.stderr);
    assert!(
        run.stderr.contains("TOLLGATE_LLM_PROVIDER"),
        "{}",
        run.stderr
    );
}

#[test]
fn review_git_without_a_model_is_llm_not_configured_even_with_nothing_to_review() {
    // A clean tree: there is nothing uncommitted, and no verdict may be given without a model.
    let repo = TestRepo::new();
    repo.write("a.rs", "fn a() {}\n");
    repo.commit("init");
    let dir = repo.path().display().to_string();
    let run = tollgate(&["review-git", "--repo", &dir, "--target", "head"]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("LLM_NOT_CONFIGURED"), "{}", run.stderr);
    assert!(!run.stdout.contains("patch is correct"), "{}", run.stdout);
}

#[test]
fn review_git_reviews_a_branch_from_its_merge_base_and_refuses_option_like_refs() {
    let server = FakeLlm::start();
    server.respond_with(|_| answer("needs attention", 1));
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn lib() {}\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/config.rs", "const NAME: &str = \"x\";\n");
    repo.commit("feature");
    repo.checkout("main");
    configure(&repo, &server);
    let repo_arg = repo.path().display().to_string();

    let run = tollgate(&[
        "review-git",
        "--repo",
        &repo_arg,
        "--base",
        "main",
        "--target",
        "feature",
        "--text",
    ])
    .run();
    run.assert_code(0);
    assert!(
        run.stdout.starts_with("needs attention: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("P0 src/config.rs:1 [security] Hard-coded credential"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("merge base → target"), "{}", run.stderr);
    let user = server.requests()[0].user_text();
    assert!(user.contains("File: src/config.rs") && !user.contains("src/lib.rs"));

    let run = tollgate(&[
        "review-git",
        "--repo",
        &repo_arg,
        "--target=--output=/tmp/x",
    ])
    .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("Invalid `target`") && run.stderr.contains("INVALID_INPUT"),
        "{}",
        run.stderr
    );
    assert_eq!(server.request_count(), 1);
}

#[test]
fn review_auto_runs_the_gate_for_a_diff_and_the_model_review_of_git_changes_without() {
    let server = FakeLlm::start();
    server.respond_with(|_| answer("patch is incorrect", 1));
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn lib() {}\n");
    configure(&repo, &server);
    repo.commit("base");
    let repo_arg = repo.path().display().to_string();

    // A diff: the deterministic gate, no model call; its secret finding fails the gate.
    let diff = format!(
        "diff --git a/src/config.rs b/src/config.rs\n--- a/src/config.rs\n+++ b/src/config.rs\n\
@@ -1,1 +1,2 @@\n fn a() {{}}\n+const KEY: &str = \"{KEY}\";\n"
    );
    let run = tollgate(&["review-auto", "--repo", &repo_arg, "--diff", "-"])
        .stdin(diff)
        .run();
    run.assert_code(1);
    let wrapped = run.json();
    assert_eq!(wrapped["selected_tool"], "review_diff");
    assert_eq!(wrapped["output"]["should_fail"], true, "{wrapped}");
    assert!(
        wrapped["rationale"]
            .as_str()
            .unwrap()
            .contains("a diff was given")
    );
    assert_eq!(server.request_count(), 0);

    // No diff: the staged change, reviewed by the model.
    repo.write("src/config.rs", "const NAME: &str = \"x\";\n");
    repo.stage_all();
    let run = tollgate(&["review-auto", "--repo", &repo_arg]).run();
    run.assert_code(1);
    let wrapped = run.json();
    assert_eq!(wrapped["selected_tool"], "review_git_diff");
    assert_eq!(wrapped["output"]["git_info"]["files_changed"], 1);
    assert_eq!(
        wrapped["output"]["review"]["overall_correctness"],
        "patch is incorrect"
    );
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_diff_that_is_not_utf8_is_a_clear_error() {
    let repo = TestRepo::new();
    let repo_arg = repo.path().display().to_string();
    let run = tollgate(&["review-changes", "--repo", &repo_arg, "--diff", "-"])
        .stdin(b"diff --git a/x b/x\n+\xff\xfe\n".to_vec())
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("not UTF-8") && run.stderr.contains("offset 20"),
        "{}",
        run.stderr
    );
}
