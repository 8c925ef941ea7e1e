//! `tollgate review` with a model, as a user setting one up meets it (issue 18): the key found
//! without `api_key_env`, a model required by CI, every setting by environment and flag, the
//! time budget, usage of failed calls. Against the loopback fake model server.

use serde_json::json;

use crate::fake_llm::{FakeLlm, Reply};
use crate::util::{Run, TestRepo, tollgate};

const KEY: &str = "sk-test-usual-variable-0123456789";

const DIFF: &str = "diff --git a/src/pay.rs b/src/pay.rs\n--- a/src/pay.rs\n+++ b/src/pay.rs\n\
@@ -1,1 +1,3 @@\n fn a() {}\n+fn charge(cents: i64) -> i64 {\n+    cents * 2 }\n";

/// A workspace whose `[llm]` points at `server` (no `api_key_env`), passes on and forced.
fn workspace(server: &FakeLlm, extra: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "tollgate.toml",
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\nretries = 0\n\
             cache = false\nenable_llm = true\nllm_force = true\nrisk_threshold = 1\n{extra}",
            server.openai_base_url()
        ),
    );
    repo.write("change.diff", DIFF);
    repo
}

fn review(repo: &TestRepo, flags: &[&str], env: &[(&str, &str)]) -> Run {
    let repo_arg = repo.path().display().to_string();
    let diff = repo.path().join("change.diff").display().to_string();
    let mut args = vec!["review", "--repo", &repo_arg, "--diff", &diff];
    args.extend(flags);
    let mut command = tollgate(&args);
    for (key, value) in env {
        command = command.env(key, value);
    }
    command.run()
}

#[test]
fn without_api_key_env_the_usual_variable_is_sent_and_named_never_shown() {
    let server = FakeLlm::start();
    server.respond_with(|_| Reply::json(json!({"findings": []})));
    let repo = workspace(&server, "");
    let run = review(&repo, &[], &[("OPENAI_API_KEY", KEY)]);
    run.assert_code(0);
    let expected = format!("Bearer {KEY}");
    let sent = server.requests();
    assert!(!sent.is_empty());
    assert!(
        sent.iter()
            .all(|r| r.header("authorization") == Some(expected.as_str()))
    );
    assert_eq!(run.json()["llm"]["api_key_env"], "OPENAI_API_KEY");
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
}

#[test]
fn a_required_model_that_cannot_answer_fails_the_run_with_exit_2() {
    let server = FakeLlm::start();
    server.respond_with(|_| Reply::status(401));
    let repo = workspace(&server, "");
    // Not required: the review passes with a warning, which --quiet hides.
    let run = review(&repo, &["--quiet"], &[]);
    run.assert_code(0);
    let warnings = run.json()["metadata"]["warnings"].to_string();
    assert!(warnings.contains("no API key was sent"), "{warnings}");
    assert!(warnings.contains("OPENAI_API_KEY"), "{warnings}");
    // Required, by flag or by environment: exit 2 naming the reason.
    for (flags, env) in [
        (&["--quiet", "--llm-required"][..], &[][..]),
        (&["--quiet"][..], &[("TOLLGATE_LLM_REQUIRED", "true")][..]),
    ] {
        let run = review(&repo, flags, env);
        run.assert_code(2);
        assert!(run.stderr.contains("model is required"), "{}", run.stderr);
        assert!(run.stderr.contains("HTTP 401"), "{}", run.stderr);
    }
}

#[test]
fn two_pass_follows_file_env_and_flag_and_unknown_variables_are_refused() {
    let server = FakeLlm::start();
    server.respond_with(|_| Reply::json(json!({"findings": []})));
    let repo = workspace(&server, "two_pass = true\n");
    let passes = |run: &Run| {
        run.json()["llm"]["passes_executed"]
            .as_array()
            .unwrap()
            .len()
    };

    let run = review(&repo, &[], &[]);
    run.assert_code(0);
    assert_eq!(passes(&run), 2);
    // TOLLGATE_LLM_TWO_PASS=false was silently ignored before.
    let run = review(&repo, &[], &[("TOLLGATE_LLM_TWO_PASS", "false")]);
    run.assert_code(0);
    assert_eq!(passes(&run), 1);
    let run = review(
        &repo,
        &["--two-pass", "true"],
        &[("TOLLGATE_LLM_TWO_PASS", "false")],
    );
    run.assert_code(0);
    assert_eq!(passes(&run), 2);

    let before = server.request_count();
    let run = review(&repo, &[], &[("TOLLGATE_LLM_TWOPASS", "false")]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("TOLLGATE_LLM_TWOPASS"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("TOLLGATE_LLM_TWO_PASS"),
        "{}",
        run.stderr
    );
    assert_eq!(server.request_count(), before, "nothing was sent");
}

#[test]
fn the_model_time_budget_stops_a_hung_server_with_a_warning() {
    let server = FakeLlm::start();
    server.respond_with(|_| {
        Reply::json(json!({"findings": []})).delay(std::time::Duration::from_secs(60))
    });
    let repo = workspace(&server, "");
    let run = review(
        &repo,
        &["--llm-time-budget-ms", "400"],
        &[("TOLLGATE_LLM_RETRIES", "2")],
    );
    run.assert_code(0);
    let result = run.json();
    let warnings = result["metadata"]["warnings"].to_string();
    assert!(warnings.contains("time budget of 400 ms"), "{warnings}");
    // One request hung; no retry and no detailed-pass request went out after the budget.
    assert_eq!(server.request_count(), 1);
    assert_eq!(result["llm"]["requests"], 1);
    assert_eq!(result["llm"]["passes_executed"], json!(["structural"]));
    let skipped = result["llm"]["skipped_reason"].as_str().unwrap();
    assert!(skipped.contains("time budget"), "{skipped}");
}

#[test]
fn requests_and_tokens_of_a_failed_pass_are_counted() {
    let server = FakeLlm::start();
    server.respond_with(|_| Reply::text("no JSON here").usage(300, 40));
    let repo = workspace(&server, "two_pass = false\n");
    let run = review(&repo, &[], &[]);
    run.assert_code(0);
    let llm = &run.json()["llm"];
    // The answer and its repair were both billed, though neither was usable.
    assert_eq!(llm["requests"], 2);
    assert_eq!(llm["input_tokens"], 600);
    assert_eq!(llm["output_tokens"], 80);
}

#[test]
fn the_model_only_review_names_the_key_variable_too() {
    let server = FakeLlm::start();
    server.respond_with(|_| {
        Reply::json(
            json!({"findings": [], "overall_correctness": "patch is correct",
                           "overall_explanation": "Fine.", "overall_confidence_score": 0.9}),
        )
    });
    let repo = workspace(&server, "");
    let repo_arg = repo.path().display().to_string();
    let run = tollgate(&["review-changes", "--repo", &repo_arg, "--diff", "-"])
        .stdin(DIFF)
        .env("OPENAI_API_KEY", KEY)
        .run();
    run.assert_code(0);
    assert_eq!(run.json()["metadata"]["api_key_env"], "OPENAI_API_KEY");
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
}
