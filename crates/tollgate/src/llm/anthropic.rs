//! Anthropic Messages (`POST {base_url}/v1/messages`). Structured output is a tool the model is
//! forced to call: the tool's `input_schema` is the schema, and the call's `input` is the answer.
//!
//! The base URL is the server root (`https://api.anthropic.com`, as Anthropic's SDKs take it);
//! one ending in `/v1` (as OpenAI-style URLs do) is accepted too and not doubled.

use serde_json::{Value, json};

use super::http::{Http, PostError};
use super::{LlmError, ProviderReply, ProviderRequest, Role};
use crate::config::{ApiKey, LlmConfig};

/// Anthropic's public API.
pub(super) const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version header every request carries.
const API_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub(super) struct Anthropic {
    http: Http,
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    key_env: Option<String>,
}

impl Anthropic {
    pub(super) fn new(config: &LlmConfig) -> Result<Anthropic, LlmError> {
        if config.model.is_empty() {
            return Err(LlmError::Incomplete {
                provider: "anthropic",
                what: "a model: set [llm] model or TOLLGATE_LLM_MODEL".to_string(),
            });
        }
        let api_key = match (&config.api_key_env, &config.api_key) {
            (_, Some(key)) => Some(key.clone()),
            (Some(name), None) => {
                return Err(LlmError::Incomplete {
                    provider: "anthropic",
                    what: format!(
                        "an API key in the environment variable `{name}`, which is not set"
                    ),
                });
            }
            (None, None) => None,
        };
        Ok(Anthropic {
            http: Http::new(config.retries, config.retry_backoff)?,
            base_url: base_url(config.base_url.as_deref()),
            model: config.model.clone(),
            api_key,
            key_env: config.api_key_env.clone(),
        })
    }

    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }
}

/// The server root: without a trailing `/` or `/v1` (the request path adds `/v1/messages`).
fn base_url(configured: Option<&str>) -> String {
    let url = configured.unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/');
    url.strip_suffix("/v1").unwrap_or(url).to_string()
}

impl super::Provider for Anthropic {
    fn complete(
        &self,
        request: &ProviderRequest<'_>,
        requests: &mut u32,
    ) -> Result<ProviderReply, LlmError> {
        let url = format!("{}/v1/messages", self.base_url);
        let key;
        let mut headers = vec![("anthropic-version", API_VERSION)];
        if let Some(api_key) = &self.api_key {
            key = api_key.expose().to_string();
            headers.push(("x-api-key", key.as_str()));
        }
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| {
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({"role": role, "content": message.content})
            })
            .collect();
        let body = json!({
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "temperature": 0,
            "system": request.system,
            "messages": messages,
            "tools": [{
                "name": request.schema_name,
                "description": "Return the answer. Call this tool exactly once with the complete result.",
                "input_schema": request.schema,
            }],
            "tool_choice": {"type": "tool", "name": request.schema_name},
        });
        let answer = match self
            .http
            .post(&url, &headers, &body, request.limits, requests)
        {
            Ok(value) => value,
            Err(PostError::Refused(refused)) => {
                return Err(super::http::explain_auth(
                    refused,
                    self.api_key.is_some(),
                    self.key_env.as_deref(),
                    "ANTHROPIC_API_KEY",
                ));
            }
            Err(PostError::Failed(err)) => return Err(err),
        };
        parse_answer(&answer, request.schema_name)
    }
}

fn parse_answer(answer: &Value, tool: &str) -> Result<ProviderReply, LlmError> {
    let content = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Protocol("no `content` array in the answer".to_string()))?;
    let tool_input = content.iter().find(|block| {
        block.get("type").and_then(Value::as_str) == Some("tool_use")
            && block.get("name").and_then(Value::as_str) == Some(tool)
    });
    // Without a tool call, the text blocks are the answer (validated like any other).
    let text = match tool_input.and_then(|block| block.get("input")) {
        Some(input) => input.to_string(),
        None => content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
    };
    Ok(ProviderReply::from_answer(
        answer,
        text,
        ("input_tokens", "output_tokens"),
    ))
}
