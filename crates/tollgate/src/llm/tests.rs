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
    server.push(Reply::status(400));
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
