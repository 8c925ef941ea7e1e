//! OpenAI-compatible chat completions (`POST {base_url}/chat/completions`): OpenAI, Azure-style
//! deployments (`api_version`), Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter.
//!
//! Structured output is asked for with the `json_schema` response format. Many compatible
//! servers refuse it with a 400; in `auto` mode the client then switches, for the rest of its
//! life, to JSON mode (`json_object`) with the schema in the system prompt, and the answer is
//! validated either way.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::http::{Http, PostError};
use super::{LlmError, ProviderReply, ProviderRequest, Role};
use crate::config::{ApiKey, LlmConfig, StructuredOutput};

/// OpenAI's public API.
pub(super) const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Debug)]
pub(super) struct OpenAi {
    http: Http,
    base_url: String,
    model: String,
    api_key: Option<ApiKey>,
    api_version: Option<String>,
    mode: StructuredOutput,
    /// Set once the server refused `json_schema` (auto mode only).
    schema_refused: AtomicBool,
}

impl OpenAi {
    pub(super) fn new(config: &LlmConfig) -> Result<OpenAi, LlmError> {
        if config.model.is_empty() {
            return Err(LlmError::Incomplete {
                provider: "openai",
                what: "a model: set [llm] model or TOLLGATE_LLM_MODEL".to_string(),
            });
        }
        if let Some(name) = &config.api_key_env
            && config.api_key.is_none()
        {
            return Err(LlmError::Incomplete {
                provider: "openai",
                what: format!("an API key in the environment variable `{name}`, which is not set"),
            });
        }
        Ok(OpenAi {
            http: Http::new(config.retries, config.retry_backoff)?,
            base_url: config
                .base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
                .trim_end_matches('/')
                .to_string(),
            model: config.model.clone(),
            api_key: config.api_key.clone(),
            api_version: config.api_version.clone(),
            mode: config.structured_output,
            schema_refused: AtomicBool::new(false),
        })
    }

    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }

    fn body(&self, request: &ProviderRequest<'_>, use_schema: bool) -> Value {
        let mut system = request.system.to_string();
        if !use_schema {
            system.push_str(&super::command::schema_instruction(request.schema));
        }
        let mut messages = vec![json!({"role": "system", "content": system})];
        for message in request.messages {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            messages.push(json!({"role": role, "content": message.content}));
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": request.max_output_tokens,
        });
        let format = if use_schema {
            Some(json!({
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": false}
            }))
        } else if self.mode == StructuredOutput::Prompt {
            None
        } else {
            Some(json!({"type": "json_object"}))
        };
        if let Some(format) = format {
            body["response_format"] = format;
        }
        body
    }
}

impl super::Provider for OpenAi {
    fn complete(&self, request: &ProviderRequest<'_>) -> Result<ProviderReply, LlmError> {
        let mut url = format!("{}/chat/completions", self.base_url);
        let mut headers: Vec<(&str, String)> = Vec::new();
        match (&self.api_version, &self.api_key) {
            (Some(version), key) => {
                url.push_str("?api-version=");
                url.push_str(&version.replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '.',
                    "",
                ));
                if let Some(key) = key {
                    headers.push(("api-key", key.expose().to_string()));
                }
            }
            (None, Some(key)) => {
                headers.push(("authorization", format!("Bearer {}", key.expose())))
            }
            (None, None) => {}
        }
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let wants_schema = match self.mode {
            StructuredOutput::Auto => !self.schema_refused.load(Ordering::Relaxed),
            StructuredOutput::JsonSchema => true,
            StructuredOutput::JsonObject | StructuredOutput::Prompt => false,
        };
        let mut requests = 0;
        let answer = match self.http.post(
            &url,
            &headers,
            &self.body(request, wants_schema),
            request.timeout,
        ) {
            Ok((value, n)) => {
                requests += n;
                value
            }
            Err(PostError::Refused(refused, n))
                if wants_schema
                    && self.mode == StructuredOutput::Auto
                    && matches!(refused.status, 400 | 404 | 415 | 422 | 501) =>
            {
                requests += n;
                tracing::info!(
                    status = refused.status,
                    "the model server refused the json_schema response format; using JSON mode"
                );
                self.schema_refused.store(true, Ordering::Relaxed);
                match self
                    .http
                    .post(&url, &headers, &self.body(request, false), request.timeout)
                {
                    Ok((value, n)) => {
                        requests += n;
                        value
                    }
                    Err(PostError::Refused(refused, _)) => return Err(refused.into_error()),
                    Err(PostError::Failed(err)) => return Err(err),
                }
            }
            Err(PostError::Refused(refused, _)) => return Err(refused.into_error()),
            Err(PostError::Failed(err)) => return Err(err),
        };
        parse_answer(&answer, requests)
    }
}

fn parse_answer(answer: &Value, requests: u32) -> Result<ProviderReply, LlmError> {
    let message = answer
        .pointer("/choices/0/message")
        .ok_or_else(|| LlmError::Protocol("no `choices[0].message` in the answer".to_string()))?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        // Some servers return content parts.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => match message.get("refusal").and_then(Value::as_str) {
            Some(refusal) => {
                return Err(LlmError::Protocol(format!(
                    "the model refused: {}",
                    super::http::snippet(refusal)
                )));
            }
            None => String::new(),
        },
    };
    Ok(ProviderReply::from_answer(
        answer,
        text,
        requests,
        ("prompt_tokens", "completion_tokens"),
    ))
}
