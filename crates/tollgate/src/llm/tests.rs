//! The client against a real loopback server speaking each protocol, and a real command.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::config::{ApiKey, RawConfig};

/// The e2e tests' fake model server, compiled into the core's tests too (one implementation).
pub(crate) use tollgate_testkit::fake_llm;

use fake_llm::{FakeLlm, Reply};

const KEY: &str = "sk-test-key-0123456789abcdef";

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["verdict"],
        "properties": {"verdict": {"type": "string"}, "n": {"type": "integer"}}
    })
}

fn config(provider: &str, base_url: &str) -> LlmConfig {
    let mut llm = RawConfig::from_toml(
        &format!(
            "[llm]\nprovider = \"{provider}\"\nbase_url = \"{base_url}\"\nmodel = \"m-1\"\n\
             api_key_env = \"TEST_KEY\"\nretries = 2\nretry_backoff_ms = 1\n\
             input_price_per_mtok = 2.0\noutput_price_per_mtok = 10.0\n"
        ),
        "t",
    )
    .unwrap()
    .overlay(RawConfig::from_env([("TEST_KEY", KEY)]).unwrap())
    .resolve()
    .unwrap()
    .llm;
    llm.timeout = Duration::from_secs(20);
    llm
}

fn client(config: &LlmConfig) -> LlmClient {
    LlmClient::without_cache(config, Path::new(".")).unwrap()
}

fn ask(client: &LlmClient) -> Result<JsonResponse, LlmError> {
    let schema = schema();
    client.complete_json(&JsonRequest::new("SYSTEM", "USER TEXT", "verdict", &schema))
}

#[test]
fn openai_sends_a_json_schema_request_and_reads_the_answer() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok", "n": 2})).usage(1000, 200));
    let answer = ask(&client(&config("openai", &server.openai_base_url()))).unwrap();
    assert_eq!(answer.value, json!({"verdict": "ok", "n": 2}));
    assert!(!answer.cached && !answer.repaired);
    assert_eq!(answer.model, "m-1");
    assert_eq!(answer.usage.input_tokens, 1000);
    assert_eq!(answer.usage.output_tokens, 200);
    assert_eq!(answer.usage.requests, 1);
    // 1000 × $2/M + 200 × $10/M
    assert!((answer.usage.cost_usd.unwrap() - 0.004).abs() < 1e-12);

    let sent = &server.requests()[0];
    assert_eq!(sent.target, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.model(), Some("m-1"));
    assert_eq!(sent.system_text(), "SYSTEM");
    assert_eq!(sent.user_text(), "USER TEXT");
    assert_eq!(sent.body["response_format"]["type"], "json_schema");
    assert_eq!(
        sent.body["response_format"]["json_schema"]["schema"],
        schema()
    );
}

#[test]
fn openai_falls_back_to_json_mode_when_json_schema_is_refused() {
    let server = FakeLlm::start();
    // vLLM's wording; llama.cpp and LM Studio also name the parameter.
    server.push(Reply::raw(
        400,
        r#"{"error": {"message": "response_format json_schema is not supported"}}"#,
    ));
    server.push(Reply::json(json!({"verdict": "a"})));
    server.push(Reply::json(json!({"verdict": "b"})));
    let client = client(&config("openai", &server.openai_base_url()));
    assert_eq!(ask(&client).unwrap().value["verdict"], "a");
    let sent = server.requests();
    assert_eq!(sent[0].body["response_format"]["type"], "json_schema");
    assert_eq!(sent[1].body["response_format"]["type"], "json_object");
    // In JSON mode the schema travels in the prompt.
    assert!(
        sent[1].system_text().contains("\"verdict\""),
        "{}",
        sent[1].system_text()
    );
    // Remembered: the next call goes straight to JSON mode.
    assert_eq!(ask(&client).unwrap().value["verdict"], "b");
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2].body["response_format"]["type"], "json_object");
}

#[test]
fn rate_limits_and_server_errors_are_retried_honouring_retry_after() {
    let server = FakeLlm::start();
    server.push(Reply::status(503));
    server.push(Reply::status(429).header("Retry-After", "0"));
    server.push(Reply::json(json!({"verdict": "ok"})));
    let answer = ask(&client(&config("openai", &server.openai_base_url()))).unwrap();
    assert_eq!(answer.value["verdict"], "ok");
    assert_eq!(answer.usage.requests, 3);
    assert_eq!(server.request_count(), 3);
}

#[test]
fn retries_end_with_the_last_error_and_client_errors_are_not_retried() {
    let server = FakeLlm::start();
    for _ in 0..3 {
        server.push(Reply::status(502));
    }
    let err = ask(&client(&config("openai", &server.openai_base_url()))).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 502, .. }), "{err}");
    assert_eq!(err.code(), "LLM_UNAVAILABLE");
    assert_eq!(server.request_count(), 3, "one try and two retries");

    let server = FakeLlm::start();
    server.push(Reply::status(401));
    let err = ask(&client(&config("anthropic", &server.anthropic_base_url()))).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err}");
    assert_eq!(server.request_count(), 1);
    assert!(!err.to_string().contains(KEY));
}

#[test]
fn a_retry_after_beyond_the_limit_is_an_error_at_once() {
    let server = FakeLlm::start();
    server.push(Reply::status(429).header("Retry-After", "86400"));
    let err = ask(&client(&config("openai", &server.openai_base_url()))).unwrap_err();
    assert!(err.to_string().contains("retry after 86400"), "{err}");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_slow_server_is_a_timeout() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "late"})).delay(Duration::from_secs(3)));
    let mut config = config("openai", &server.openai_base_url());
    config.retries = 0;
    config.timeout = Duration::from_millis(300);
    let err = ask(&client(&config)).unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    assert_eq!(err.code(), "TIMEOUT");
}

#[test]
fn invalid_json_gets_one_repair_attempt() {
    let server = FakeLlm::start();
    server.push(Reply::text("Sure! verdict: fine"));
    server.push(Reply::json(json!({"verdict": "fine"})));
    let answer = ask(&client(&config("openai", &server.openai_base_url()))).unwrap();
    assert_eq!(answer.value["verdict"], "fine");
    assert!(answer.repaired);
    assert_eq!(answer.usage.requests, 2);
    let repair = &server.requests()[1];
    let messages = repair.messages();
    assert_eq!(messages[messages.len() - 2]["role"], "assistant");
    assert_eq!(
        messages[messages.len() - 2]["content"],
        "Sure! verdict: fine"
    );
    assert!(repair.user_text().contains("could not be used"));
}

#[test]
fn a_second_invalid_answer_is_an_invalid_output_error() {
    let server = FakeLlm::start();
    server.push(Reply::text("{not json"));
    server.push(Reply::json(json!({"n": "three"})));
    let err = ask(&client(&config("anthropic", &server.anthropic_base_url()))).unwrap_err();
    assert!(
        matches!(err, LlmError::InvalidOutput { repaired: true, .. }),
        "{err}"
    );
    assert_eq!(err.code(), "LLM_INVALID_OUTPUT");
    assert_eq!(server.request_count(), 2, "exactly one repair");
}

#[test]
fn anthropic_forces_a_tool_call_and_reads_its_input() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "tool"})).usage(10, 5));
    let answer = ask(&client(&config("anthropic", &server.anthropic_base_url()))).unwrap();
    assert_eq!(answer.value, json!({"verdict": "tool"}));
    assert_eq!(answer.usage.input_tokens, 10);
    let sent = &server.requests()[0];
    assert_eq!(sent.target, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.body["tools"][0]["name"], "verdict");
    assert_eq!(sent.body["tools"][0]["input_schema"], schema());
    assert_eq!(sent.body["tool_choice"]["name"], "verdict");
    assert_eq!(sent.system_text(), "SYSTEM");
}

#[test]
fn a_cached_answer_costs_no_request() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "once"})));
    let store = Arc::new(Store::open_in_memory().unwrap());
    let config = config("openai", &server.openai_base_url());
    let first = client(&config).with_store(Some(Arc::clone(&store)));
    assert!(!ask(&first).unwrap().cached);
    // A new client (a re-run) with the same store.
    let second = client(&config).with_store(Some(Arc::clone(&store)));
    let answer = ask(&second).unwrap();
    assert!(answer.cached);
    assert_eq!(answer.value["verdict"], "once");
    assert_eq!(answer.usage.requests, 0);
    assert_eq!(answer.usage.input_tokens, 0);
    assert_eq!(answer.usage.cost_usd, Some(0.0));
    assert_eq!(server.request_count(), 1);
    // Another model is another key.
    let mut other = config.clone();
    other.model = "m-2".to_string();
    server.push(Reply::json(json!({"verdict": "other"})));
    let answer = ask(&client(&other).with_store(Some(store))).unwrap();
    assert!(!answer.cached);
    assert_eq!(server.request_count(), 2);
}

#[test]
fn no_provider_and_missing_keys_are_clear_errors() {
    let err = LlmClient::without_cache(&LlmConfig::default(), Path::new(".")).unwrap_err();
    assert_eq!(err.code(), "LLM_NOT_CONFIGURED");
    assert!(err.to_string().contains("TOLLGATE_LLM_PROVIDER"), "{err}");

    let mut config = config("openai", "http://127.0.0.1:9");
    config.api_key = None;
    let err = LlmClient::without_cache(&config, Path::new(".")).unwrap_err();
    assert!(err.to_string().contains("TEST_KEY"), "{err}");
}

#[test]
fn the_key_never_shows_in_debug_output() {
    let config = config("openai", "http://127.0.0.1:9");
    let printed = format!("{:?} {:?}", client(&config), config);
    assert!(!printed.contains(KEY), "{printed}");
    assert_eq!(ApiKey::new(KEY).to_string(), "****");
}

/// A config from `[llm]` lines and an environment (no `api_key_env` unless the lines set it).
fn config_from(lines: &str, env: &[(&str, &str)]) -> LlmConfig {
    let mut llm = RawConfig::from_toml(&format!("[llm]\nretry_backoff_ms = 1\n{lines}"), "t")
        .unwrap()
        .overlay(RawConfig::from_env(env.iter().copied()).unwrap())
        .resolve()
        .unwrap()
        .llm;
    llm.timeout = Duration::from_secs(20);
    llm
}

#[test]
fn without_api_key_env_the_provider_s_usual_variable_is_sent_and_named() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok"})));
    let config = config_from(
        &format!(
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"{}\"\n",
            server.openai_base_url()
        ),
        &[
            ("OPENAI_API_KEY", KEY),
            ("ANTHROPIC_API_KEY", "sk-ant-other-0123456789"),
        ],
    );
    let model = client(&config);
    assert_eq!(model.key_source(), Some("OPENAI_API_KEY"));
    ask(&model).unwrap();
    let expected = format!("Bearer {KEY}");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(expected.as_str())
    );

    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok"})));
    let config = config_from(
        &format!(
            "provider = \"anthropic\"\nmodel = \"m\"\nbase_url = \"{}\"\n",
            server.anthropic_base_url()
        ),
        &[("ANTHROPIC_API_KEY", KEY)],
    );
    let model = client(&config);
    assert_eq!(model.key_source(), Some("ANTHROPIC_API_KEY"));
    ask(&model).unwrap();
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));

    // No key anywhere: the request goes out bare (local servers need none), and a 401 says
    // which variable to set.
    let server = FakeLlm::start();
    server.push(Reply::status(401));
    let config = config_from(
        &format!(
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"{}\"\n",
            server.openai_base_url()
        ),
        &[],
    );
    let model = client(&config);
    assert_eq!(model.key_source(), None);
    let err = ask(&model).unwrap_err().to_string();
    assert!(
        err.contains("no API key was sent") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn anthropic_and_openai_base_urls_are_taken_with_or_without_v1() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok"})));
    server.push(Reply::json(json!({"verdict": "ok"})));
    for base in [
        format!("{}/v1", server.url()),
        format!("{}/v1/", server.url()),
    ] {
        ask(&client(&config("anthropic", &base))).unwrap();
    }
    let targets: Vec<String> = server.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(targets, ["/v1/messages", "/v1/messages"]);

    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok"})));
    ask(&client(&config("openai", &server.url()))).unwrap();
    assert_eq!(server.requests()[0].target, "/v1/chat/completions");
}

#[test]
fn reasoning_models_get_max_completion_tokens_and_no_temperature() {
    let server = FakeLlm::start();
    server.push(Reply::json(json!({"verdict": "ok"})));
    server.push(Reply::json(json!({"verdict": "ok"})));
    let mut reasoning = config("openai", &server.openai_base_url());
    reasoning.model = "o3-mini".to_string();
    ask(&client(&reasoning)).unwrap();
    ask(&client(&config("openai", &server.openai_base_url()))).unwrap();
    let sent = server.requests();
    assert_eq!(sent[0].body["max_completion_tokens"], 4096);
    assert!(sent[0].body.get("max_tokens").is_none(), "{}", sent[0].body);
    assert!(
        sent[0].body.get("temperature").is_none(),
        "{}",
        sent[0].body
    );
    assert_eq!(sent[1].body["max_tokens"], 4096);
    assert_eq!(sent[1].body["temperature"], 0);
}

#[test]
fn a_400_that_json_mode_cannot_fix_costs_one_request() {
    let server = FakeLlm::start();
    server.push(Reply::raw(
        400,
        r#"{"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model."}}"#,
    ));
    server.push(Reply::json(json!({"verdict": "never asked"})));
    let err = ask(&client(&config("openai", &server.openai_base_url()))).unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 400, .. }), "{err}");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_failed_call_still_counts_what_it_was_billed() {
    let server = FakeLlm::start();
    server.push(Reply::text("{not json").usage(100, 10));
    server.push(Reply::json(json!({"n": "three"})).usage(120, 12));
    let model = client(&config("openai", &server.openai_base_url()));
    let schema = schema();
    let mut spent = Usage::default();
    let err = model
        .complete_json_metered(&JsonRequest::new("S", "U", "verdict", &schema), &mut spent)
        .unwrap_err();
    assert!(matches!(err, LlmError::InvalidOutput { .. }), "{err}");
    assert_eq!(
        (spent.requests, spent.input_tokens, spent.output_tokens),
        (2, 220, 22)
    );

    let server = FakeLlm::start();
    for _ in 0..3 {
        server.push(Reply::status(503));
    }
    let model = client(&config("openai", &server.openai_base_url()));
    let mut spent = Usage::default();
    model
        .complete_json_metered(&JsonRequest::new("S", "U", "verdict", &schema), &mut spent)
        .unwrap_err();
    assert_eq!(spent.requests, 3);
}

#[test]
fn the_time_budget_stops_a_hung_server_and_every_later_call() {
    let server = FakeLlm::start();
    server.respond_with(|_| Reply::json(json!({"verdict": "late"})).delay(Duration::from_secs(30)));
    let mut config = config("openai", &server.openai_base_url());
    config.retries = 2;
    config.time_budget = Some(Duration::from_millis(300));
    let model = client(&config);
    let err = ask(&model).unwrap_err();
    assert!(matches!(err, LlmError::BudgetSpent { .. }), "{err}");
    assert!(err.to_string().contains("time_budget_ms"), "{err}");
    assert_eq!(err.code(), "TIMEOUT");
    // No retry after the budget ran out, and a later call (a clone: the next pass) sends nothing.
    assert_eq!(server.request_count(), 1);
    let err = ask(&model.clone()).unwrap_err();
    assert!(matches!(err, LlmError::BudgetSpent { .. }), "{err}");
    assert_eq!(server.request_count(), 1);
}

#[cfg(unix)]
mod command {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn command_config(argv: Vec<String>) -> LlmConfig {
        let mut config = RawConfig::default().resolve().unwrap().llm;
        config.provider = Some(crate::config::ProviderKind::Command);
        config.command = argv;
        config.timeout = Duration::from_secs(20);
        config
    }

    #[test]
    fn the_prompt_goes_to_stdin_and_stdout_is_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let program = script(
            dir.path(),
            "model.sh",
            "cat > \"$1\"\nprintf '%s' '{\"verdict\": \"from-script\"}'\n",
        );
        let seen = dir.path().join("prompt.txt");
        let config = command_config(vec![program, seen.display().to_string()]);
        let client = LlmClient::without_cache(&config, dir.path()).unwrap();
        let answer = ask(&client).unwrap();
        assert_eq!(answer.value["verdict"], "from-script");
        assert!(answer.usage.input_tokens > 0);
        let prompt = std::fs::read_to_string(seen).unwrap();
        assert!(prompt.starts_with("SYSTEM"), "{prompt}");
        assert!(prompt.contains("USER TEXT"), "{prompt}");
        assert!(prompt.contains("JSON Schema"), "{prompt}");
    }

    /// A call stopped by its caller (a timed-out or cancelled `context_answer`) kills the
    /// model command's whole process group at once, not at the model's own timeout.
    #[test]
    fn a_stopped_call_kills_the_command_and_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let hanging = script(
            dir.path(),
            "hang.sh",
            &format!(
                "sleep 60 &\necho $! > '{0}.tmp'\necho $$ >> '{0}.tmp'\nmv '{0}.tmp' '{0}'\nwait\n",
                pids.display()
            ),
        );
        // The model's own limit is far off: only the stop request can end the call soon.
        let mut config = command_config(vec![hanging]);
        config.timeout = Duration::from_secs(60);
        let client = LlmClient::without_cache(&config, dir.path()).unwrap();
        let stop = crate::control::Control::new();
        let schema = schema();
        let mut request = JsonRequest::new("SYSTEM", "USER TEXT", "verdict", &schema);
        request.stop = Some(stop.clone());
        let still_running = std::thread::scope(|scope| {
            let call = scope.spawn(|| client.complete_json(&request));
            while !pids.exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
            stop.cancel();
            let listed = std::fs::read_to_string(&pids).unwrap();
            // Within 10 s of the stop (the model's limit is 60 s), every process is gone.
            let mut still_running = Vec::new();
            for pid in listed.split_whitespace() {
                let proc = Path::new("/proc").join(pid);
                let mut alive = true;
                for _ in 0..500 {
                    let state = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
                    // Gone, or a zombie waiting for its reaper.
                    if state.is_empty() || state.contains(") Z") {
                        alive = false;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if alive {
                    still_running.push(pid.to_string());
                }
            }
            let err = call.join().unwrap().unwrap_err();
            assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
            still_running
        });
        assert!(
            still_running.is_empty(),
            "processes of the stopped call still ran: {still_running:?}"
        );
    }

    #[test]
    fn a_failing_or_hanging_command_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let failing = script(dir.path(), "fail.sh", "echo 'quota exceeded' >&2\nexit 3\n");
        let err =
            ask(&LlmClient::without_cache(&command_config(vec![failing]), dir.path()).unwrap())
                .unwrap_err();
        assert!(err.to_string().contains("exit code 3"), "{err}");
        assert!(err.to_string().contains("quota exceeded"), "{err}");

        let hanging = script(dir.path(), "hang.sh", "sleep 30\n");
        let mut config = command_config(vec![hanging]);
        config.timeout = Duration::from_millis(300);
        let err = ask(&LlmClient::without_cache(&config, dir.path()).unwrap()).unwrap_err();
        assert!(matches!(err, LlmError::Timeout { .. }), "{err}");

        let missing = dir.path().join("no-such-program").display().to_string();
        let err =
            ask(&LlmClient::without_cache(&command_config(vec![missing]), dir.path()).unwrap())
                .unwrap_err();
        assert!(err.to_string().contains("cannot start"), "{err}");
    }
}
