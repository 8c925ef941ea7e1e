//! OpenAI-compatible chat completions (`POST {base_url}/chat/completions`): OpenAI, Azure-style
//! deployments (`api_version`), Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter.
//!
//! The base URL ends where OpenAI's does, at `/v1` (`https://api.openai.com/v1`,
//! `http://localhost:11434/v1`); a bare server root (`http://localhost:8000`) gets `/v1`
//! appended, and any other path (an Azure deployment) is used as given.
//!
//! Structured output is asked for with the `json_schema` response format. Many compatible
//! servers refuse it with a 400; in `auto` mode the client then switches, for the rest of its
//! life, to JSON mode (`json_object`) with the schema in the system prompt, and the answer is
//! validated either way. Only a refusal that names the response format is worth that second
//! request: a 400 about anything else (a parameter, the model) fails at once.
//!
//! OpenAI's reasoning models (the o1, o3 and o4 families, gpt-5) refuse `max_tokens` and any
//! `temperature`: they get `max_completion_tokens` and no temperature.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::http::{Http, PostError, Refused};
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
    /// The variable the key came from, named in the hint of a 401.
    key_env: Option<String>,
    api_version: Option<String>,
    mode: StructuredOutput,
    reasoning: bool,
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
            base_url: base_url(config.base_url.as_deref()),
            model: config.model.clone(),
            api_key: config.api_key.clone(),
            key_env: config.api_key_env.clone(),
            api_version: config.api_version.clone(),
            mode: config.structured_output,
            reasoning: is_reasoning_model(&config.model),
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
        let mut body = if self.reasoning {
            json!({
                "model": self.model,
                "messages": messages,
                "max_completion_tokens": request.max_output_tokens,
            })
        } else {
            json!({
                "model": self.model,
                "messages": messages,
                "temperature": 0,
                "max_tokens": request.max_output_tokens,
            })
        };
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
    fn complete(
        &self,
        request: &ProviderRequest<'_>,
        requests: &mut u32,
    ) -> Result<ProviderReply, LlmError> {
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
        let refusal = |refused: Refused| {
            super::http::explain_auth(
                refused,
                self.api_key.is_some(),
                self.key_env.as_deref(),
                "OPENAI_API_KEY",
            )
        };
        let answer = match self.http.post(
            &url,
            &headers,
            &self.body(request, wants_schema),
            request.limits,
            requests,
        ) {
            Ok(value) => value,
            Err(PostError::Refused(refused))
                if wants_schema
                    && self.mode == StructuredOutput::Auto
                    && refuses_response_format(&refused) =>
            {
                tracing::info!(
                    status = refused.status,
                    "the model server refused the json_schema response format; using JSON mode"
                );
                self.schema_refused.store(true, Ordering::Relaxed);
                match self.http.post(
                    &url,
                    &headers,
                    &self.body(request, false),
                    request.limits,
                    requests,
                ) {
                    Ok(value) => value,
                    Err(PostError::Refused(refused)) => return Err(refusal(refused)),
                    Err(PostError::Failed(err)) => return Err(err),
                }
            }
            Err(PostError::Refused(refused)) => return Err(refusal(refused)),
            Err(PostError::Failed(err)) => return Err(err),
        };
        parse_answer(&answer)
    }
}

/// `configured` without a trailing `/`; a bare server root gets OpenAI's `/v1`.
fn base_url(configured: Option<&str>) -> String {
    let url = configured.unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/');
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    if after_scheme.contains('/') {
        url.to_string()
    } else {
        format!("{url}/v1")
    }
}

/// OpenAI's reasoning families, which take `max_completion_tokens` and no temperature. A
/// router's `openai/` prefix is looked through.
fn is_reasoning_model(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5"].iter().any(|family| {
        name == *family
            || name
                .strip_prefix(family)
                .is_some_and(|rest| rest.starts_with(['-', '.', '_']))
    })
}

/// Whether a refusal of a `json_schema` request is about the response format, so that JSON
/// mode may succeed: a server that does not know the parameter, or says so by name.
fn refuses_response_format(refused: &Refused) -> bool {
    let body = refused.body.to_ascii_lowercase();
    match refused.status {
        415 | 501 => true,
        400 | 404 | 422 => [
            "response_format",
            "json_schema",
            "response format",
            "structured",
        ]
        .iter()
        .any(|word| body.contains(word)),
        _ => false,
    }
}

fn parse_answer(answer: &Value) -> Result<ProviderReply, LlmError> {
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
        ("prompt_tokens", "completion_tokens"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_families_are_recognised_by_name() {
        for model in [
            "o1",
            "o1-mini",
            "o3-mini-2025-01-31",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "openai/o3",
        ] {
            assert!(is_reasoning_model(model), "{model}");
        }
        for model in [
            "gpt-4o",
            "gpt-4.1-mini",
            "ollama3",
            "o10x",
            "llama3.1",
            "gpt-50",
        ] {
            assert!(!is_reasoning_model(model), "{model}");
        }
    }

    #[test]
    fn a_bare_server_root_gets_v1_and_other_paths_stay() {
        assert_eq!(base_url(None), "https://api.openai.com/v1");
        assert_eq!(
            base_url(Some("http://localhost:8000")),
            "http://localhost:8000/v1"
        );
        assert_eq!(
            base_url(Some("http://localhost:8000/")),
            "http://localhost:8000/v1"
        );
        assert_eq!(base_url(Some("http://h/v1/")), "http://h/v1");
        assert_eq!(
            base_url(Some("https://x.openai.azure.com/openai/deployments/d")),
            "https://x.openai.azure.com/openai/deployments/d"
        );
    }
}
