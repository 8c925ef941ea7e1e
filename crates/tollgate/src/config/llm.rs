//! The `[llm]` table and `TOLLGATE_LLM_*` variables: which model provider Tollgate talks to and
//! within which limits.
//!
//! The API key is never written in configuration: `api_key_env` names the environment variable
//! that holds it (default: the provider's usual one, `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`),
//! and the key is read from the environment snapshot a front end hands
//! [`RawConfig::from_env`](super::RawConfig::from_env). The key lives in an [`ApiKey`], which
//! never prints.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::raw::{ConfigError, value_error};

/// Time limit of one model call when none is configured.
pub const DEFAULT_LLM_TIMEOUT_MS: u64 = 120_000;
/// Retries after a 429, a 5xx or a transport failure when none are configured.
pub const DEFAULT_LLM_RETRIES: u32 = 2;
/// Model calls in flight at once, per client, when not configured.
pub const DEFAULT_LLM_CONCURRENCY: usize = 4;
/// Output tokens a call may produce when not configured.
pub const DEFAULT_LLM_MAX_OUTPUT_TOKENS: u32 = 4096;
/// First retry delay; doubled on each retry unless the server says `Retry-After`.
pub const DEFAULT_LLM_RETRY_BACKOFF_MS: u64 = 500;
/// The longest `Retry-After` honoured; a server asking for more gets an error instead.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, Azure, Ollama, vLLM, llama.cpp, LM Studio,
    /// OpenRouter).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Any program that reads the prompt on stdin and prints the answer.
    Command,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Command => "command",
        }
    }

    /// The variable a provider's own tools read the key from, used when `api_key_env` is unset.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Command => None,
        }
    }

    fn parse(text: &str) -> Option<ProviderKind> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "openai_compatible" | "ollama" | "vllm"
            | "llamacpp" | "llama.cpp" | "lmstudio" | "openrouter" | "azure" => {
                Some(ProviderKind::OpenAi)
            }
            "anthropic" | "claude" => Some(ProviderKind::Anthropic),
            "command" | "cli" => Some(ProviderKind::Command),
            _ => None,
        }
    }
}

/// How an OpenAI-compatible server is asked for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructuredOutput {
    /// `json_schema` response format; on a server that refuses it, JSON mode from then on.
    Auto,
    /// `json_schema` only.
    JsonSchema,
    /// `json_object` (JSON mode) with the schema in the prompt.
    JsonObject,
    /// No `response_format` at all: the schema is in the prompt, the answer is validated.
    Prompt,
}

impl StructuredOutput {
    fn parse(text: &str) -> Option<StructuredOutput> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(StructuredOutput::Auto),
            "json_schema" => Some(StructuredOutput::JsonSchema),
            "json_object" | "json" => Some(StructuredOutput::JsonObject),
            "prompt" | "none" => Some(StructuredOutput::Prompt),
            _ => None,
        }
    }
}

/// A provider's API key. Neither `Debug` nor `Display` shows it; [`ApiKey::expose`] is the one
/// deliberate way to read it (to put it in a request header).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

/// The environment a front end passed in, kept only to look up the variable `api_key_env`
/// names once every layer is stacked. Never printed.
#[derive(Clone, Default)]
pub struct EnvSnapshot(Arc<BTreeMap<String, String>>);

impl EnvSnapshot {
    pub fn new(vars: BTreeMap<String, String>) -> EnvSnapshot {
        EnvSnapshot(Arc::new(vars))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

impl fmt::Debug for EnvSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EnvSnapshot({} variables)", self.0.len())
    }
}

impl PartialEq for EnvSnapshot {
    fn eq(&self, other: &EnvSnapshot) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

/// The `[llm]` table, every key optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawLlm {
    /// `openai` (and compatible servers), `anthropic` or `command`.
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The NAME of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Program and arguments of the `command` provider (run directly, never through a shell).
    pub command: Option<Vec<String>>,
    pub timeout_ms: Option<u64>,
    pub retries: Option<u32>,
    pub retry_backoff_ms: Option<u64>,
    pub concurrency: Option<usize>,
    pub max_output_tokens: Option<u32>,
    /// USD per million input tokens, for the cost estimate.
    pub input_price_per_mtok: Option<f64>,
    /// USD per million output tokens, for the cost estimate.
    pub output_price_per_mtok: Option<f64>,
    /// Keep answers in the store so a re-run on the same input costs nothing. Default true.
    pub cache: Option<bool>,
    /// `auto`, `json_schema`, `json_object` or `prompt` (OpenAI-compatible servers).
    pub structured_output: Option<String>,
    /// Azure-style deployments: sent as `?api-version=`, with the key in an `api-key` header.
    pub api_version: Option<String>,
    /// Run the model review passes in `tollgate review` / `review_diff` (upstream's option name).
    pub enable_llm: Option<bool>,
    /// Run them even on low-risk, tested changes.
    pub llm_force: Option<bool>,
    /// Run the detailed second pass when warranted. Default true.
    pub two_pass: Option<bool>,
    /// Risk score (1–5) from which the detailed pass runs. Default 3.
    pub risk_threshold: Option<u8>,
    /// Tokens of diff and context per model request (1000–50000). Default 8000.
    pub token_budget: Option<u32>,
    /// Files whose surrounding code is sent as context (1–20). Default 5.
    pub max_context_files: Option<u32>,
    /// Extra instructions for the reviewer.
    pub custom_instructions: Option<String>,
    /// A model that cannot answer fails the run (exit 2) instead of leaving a warning. For CI
    /// jobs that depend on the model. Default false.
    pub required: Option<bool>,
    /// Wall-clock budget of all model calls of one review or plan operation, in milliseconds
    /// (0: none); once spent, no call starts and running ones stop. Default none.
    pub time_budget_ms: Option<u64>,
    #[serde(skip)]
    pub environment: Option<EnvSnapshot>,
}

/// Environment variables read into [`RawLlm`].
pub const LLM_ENV_VARS: &[&str] = &[
    "TOLLGATE_LLM_PROVIDER",
    "TOLLGATE_LLM_BASE_URL",
    "TOLLGATE_LLM_MODEL",
    "TOLLGATE_LLM_API_KEY_ENV",
    "TOLLGATE_LLM_COMMAND",
    "TOLLGATE_LLM_TIMEOUT_MS",
    "TOLLGATE_LLM_RETRIES",
    "TOLLGATE_LLM_CONCURRENCY",
    "TOLLGATE_LLM_MAX_OUTPUT_TOKENS",
    "TOLLGATE_LLM_INPUT_PRICE_PER_MTOK",
    "TOLLGATE_LLM_OUTPUT_PRICE_PER_MTOK",
    "TOLLGATE_LLM_CACHE",
    "TOLLGATE_LLM_STRUCTURED_OUTPUT",
    "TOLLGATE_LLM_API_VERSION",
    "TOLLGATE_LLM_RETRY_BACKOFF_MS",
    "TOLLGATE_LLM_FORCE",
    "TOLLGATE_LLM_TWO_PASS",
    "TOLLGATE_LLM_RISK_THRESHOLD",
    "TOLLGATE_LLM_TOKEN_BUDGET",
    "TOLLGATE_LLM_MAX_CONTEXT_FILES",
    "TOLLGATE_LLM_CUSTOM_INSTRUCTIONS",
    "TOLLGATE_LLM_REQUIRED",
    "TOLLGATE_LLM_TIME_BUDGET_MS",
    "TOLLGATE_ENABLE_LLM",
    "CE_REVIEW_ENABLE_LLM",
];

impl RawLlm {
    /// The `TOLLGATE_LLM_*` layer; `vars` is the whole environment, kept (unprinted) for the
    /// key lookup. `TOLLGATE_LLM_COMMAND` is split on whitespace (no shell quoting: configure
    /// arguments with spaces in `tollgate.toml`).
    pub(super) fn from_env(vars: &BTreeMap<String, String>) -> Result<RawLlm, ConfigError> {
        let get = |name: &str| {
            vars.get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let number = |name: &str| -> Result<Option<f64>, ConfigError> {
            get(name)
                .map(|v| {
                    v.parse::<f64>()
                        .map_err(|e| value_error(name, format!("`{v}`: {e}")))
                })
                .transpose()
        };
        let int = |name: &str| -> Result<Option<u64>, ConfigError> {
            get(name)
                .map(|v| {
                    v.parse::<u64>()
                        .map_err(|e| value_error(name, format!("`{v}`: {e}")))
                })
                .transpose()
        };
        let narrow = |name: &str, value: Option<u64>| -> Result<Option<u32>, ConfigError> {
            value
                .map(|v| u32::try_from(v).map_err(|e| value_error(name, e.to_string())))
                .transpose()
        };
        let boolean = |name: &str| -> Result<Option<bool>, ConfigError> {
            get(name).map(|v| parse_bool(name, &v)).transpose()
        };
        let risk_threshold = int("TOLLGATE_LLM_RISK_THRESHOLD")?
            .map(|v| {
                u8::try_from(v)
                    .map_err(|e| value_error("TOLLGATE_LLM_RISK_THRESHOLD", e.to_string()))
            })
            .transpose()?;
        Ok(RawLlm {
            provider: get("TOLLGATE_LLM_PROVIDER"),
            base_url: get("TOLLGATE_LLM_BASE_URL"),
            model: get("TOLLGATE_LLM_MODEL"),
            api_key_env: get("TOLLGATE_LLM_API_KEY_ENV"),
            command: get("TOLLGATE_LLM_COMMAND")
                .map(|v| v.split_whitespace().map(str::to_string).collect()),
            timeout_ms: int("TOLLGATE_LLM_TIMEOUT_MS")?,
            retries: narrow("TOLLGATE_LLM_RETRIES", int("TOLLGATE_LLM_RETRIES")?)?,
            retry_backoff_ms: int("TOLLGATE_LLM_RETRY_BACKOFF_MS")?,
            concurrency: int("TOLLGATE_LLM_CONCURRENCY")?.map(|v| v as usize),
            max_output_tokens: narrow(
                "TOLLGATE_LLM_MAX_OUTPUT_TOKENS",
                int("TOLLGATE_LLM_MAX_OUTPUT_TOKENS")?,
            )?,
            input_price_per_mtok: number("TOLLGATE_LLM_INPUT_PRICE_PER_MTOK")?,
            output_price_per_mtok: number("TOLLGATE_LLM_OUTPUT_PRICE_PER_MTOK")?,
            cache: boolean("TOLLGATE_LLM_CACHE")?,
            structured_output: get("TOLLGATE_LLM_STRUCTURED_OUTPUT"),
            api_version: get("TOLLGATE_LLM_API_VERSION"),
            enable_llm: match get("TOLLGATE_ENABLE_LLM").or_else(|| get("CE_REVIEW_ENABLE_LLM")) {
                None => None,
                Some(v) => Some(parse_bool("TOLLGATE_ENABLE_LLM", &v)?),
            },
            llm_force: boolean("TOLLGATE_LLM_FORCE")?,
            two_pass: boolean("TOLLGATE_LLM_TWO_PASS")?,
            risk_threshold,
            token_budget: narrow(
                "TOLLGATE_LLM_TOKEN_BUDGET",
                int("TOLLGATE_LLM_TOKEN_BUDGET")?,
            )?,
            max_context_files: narrow(
                "TOLLGATE_LLM_MAX_CONTEXT_FILES",
                int("TOLLGATE_LLM_MAX_CONTEXT_FILES")?,
            )?,
            // Not trimmed away: only a blank value means unset.
            custom_instructions: get("TOLLGATE_LLM_CUSTOM_INSTRUCTIONS"),
            required: boolean("TOLLGATE_LLM_REQUIRED")?,
            time_budget_ms: int("TOLLGATE_LLM_TIME_BUDGET_MS")?,
            environment: Some(EnvSnapshot::new(vars.clone())),
        })
    }

    /// Stacks `high` on top of `self`.
    pub(super) fn overlay(self, high: RawLlm) -> RawLlm {
        RawLlm {
            provider: high.provider.or(self.provider),
            base_url: high.base_url.or(self.base_url),
            model: high.model.or(self.model),
            api_key_env: high.api_key_env.or(self.api_key_env),
            command: high.command.or(self.command),
            timeout_ms: high.timeout_ms.or(self.timeout_ms),
            retries: high.retries.or(self.retries),
            retry_backoff_ms: high.retry_backoff_ms.or(self.retry_backoff_ms),
            concurrency: high.concurrency.or(self.concurrency),
            max_output_tokens: high.max_output_tokens.or(self.max_output_tokens),
            input_price_per_mtok: high.input_price_per_mtok.or(self.input_price_per_mtok),
            output_price_per_mtok: high.output_price_per_mtok.or(self.output_price_per_mtok),
            cache: high.cache.or(self.cache),
            structured_output: high.structured_output.or(self.structured_output),
            api_version: high.api_version.or(self.api_version),
            enable_llm: high.enable_llm.or(self.enable_llm),
            llm_force: high.llm_force.or(self.llm_force),
            two_pass: high.two_pass.or(self.two_pass),
            risk_threshold: high.risk_threshold.or(self.risk_threshold),
            token_budget: high.token_budget.or(self.token_budget),
            max_context_files: high.max_context_files.or(self.max_context_files),
            custom_instructions: high.custom_instructions.or(self.custom_instructions),
            required: high.required.or(self.required),
            time_budget_ms: high.time_budget_ms.or(self.time_budget_ms),
            environment: high.environment.or(self.environment),
        }
    }

    /// Validates the table. No provider configured is valid (`provider: None`): model passes
    /// then report that they cannot run.
    pub fn resolve(self) -> Result<LlmConfig, ConfigError> {
        let provider = match &self.provider {
            None => None,
            Some(text) => Some(ProviderKind::parse(text).ok_or_else(|| {
                value_error(
                    "llm.provider",
                    format!("unknown provider `{text}` (expected openai, anthropic or command)"),
                )
            })?),
        };
        let structured_output = match &self.structured_output {
            None => StructuredOutput::Auto,
            Some(text) => StructuredOutput::parse(text).ok_or_else(|| {
                value_error(
                    "llm.structured_output",
                    format!(
                        "unknown mode `{text}` (expected auto, json_schema, json_object or prompt)"
                    ),
                )
            })?,
        };
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(value_error(
                "llm.base_url",
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
        let command = self.command.unwrap_or_default();
        if provider == Some(ProviderKind::Command) && command.is_empty() {
            return Err(value_error(
                "llm.command",
                "the command provider needs a program: command = [\"program\", \"arg\", …]"
                    .to_string(),
            ));
        }
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_LLM_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > 3_600_000 {
            return Err(value_error(
                "llm.timeout_ms",
                format!("{timeout_ms} is outside 1–3600000"),
            ));
        }
        let retries = self.retries.unwrap_or(DEFAULT_LLM_RETRIES);
        if retries > 10 {
            return Err(value_error(
                "llm.retries",
                format!("{retries} is more than 10"),
            ));
        }
        let concurrency = self.concurrency.unwrap_or(DEFAULT_LLM_CONCURRENCY);
        if concurrency == 0 || concurrency > 64 {
            return Err(value_error(
                "llm.concurrency",
                format!("{concurrency} is outside 1–64"),
            ));
        }
        for (key, price) in [
            ("llm.input_price_per_mtok", self.input_price_per_mtok),
            ("llm.output_price_per_mtok", self.output_price_per_mtok),
        ] {
            if let Some(price) = price
                && !(price.is_finite() && price >= 0.0)
            {
                return Err(value_error(key, format!("{price} is not a price")));
            }
        }
        // Without `api_key_env`, the provider's usual variable, when it is set: a user who
        // exported OPENAI_API_KEY expects it to be sent. An explicit name must be set (the
        // provider says so when it is not).
        let default_key_env = provider.and_then(ProviderKind::default_key_env);
        let read = |name: &str| {
            self.environment
                .as_ref()
                .and_then(|env| env.get(name))
                .filter(|v| !v.is_empty())
                .map(ApiKey::new)
        };
        let (api_key_env, api_key, key_env_defaulted) = match &self.api_key_env {
            Some(name) => (Some(name.clone()), read(name), false),
            None => match default_key_env.and_then(|name| read(name).map(|key| (name, key))) {
                Some((name, key)) => (Some(name.to_string()), Some(key), true),
                None => (None, None, false),
            },
        };
        let model = self.model.unwrap_or_default();
        let risk_threshold = self.risk_threshold.unwrap_or(3);
        if !(1..=5).contains(&risk_threshold) {
            return Err(value_error(
                "llm.risk_threshold",
                format!("{risk_threshold} is outside 1–5"),
            ));
        }
        let passes = LlmPassConfig {
            enabled: self.enable_llm.unwrap_or(false),
            force: self.llm_force.unwrap_or(false),
            two_pass: self.two_pass.unwrap_or(true),
            risk_threshold,
            // Upstream clamps rather than refuses.
            token_budget: self.token_budget.unwrap_or(8000).clamp(1000, 50_000),
            max_context_files: self.max_context_files.unwrap_or(5).clamp(1, 20),
            custom_instructions: self
                .custom_instructions
                .filter(|text| !text.trim().is_empty()),
        };
        Ok(LlmConfig {
            passes,
            cache_store: super::RawStore::default(),
            provider,
            base_url: self.base_url,
            model,
            api_key_env,
            key_env_defaulted,
            api_key,
            command,
            timeout: Duration::from_millis(timeout_ms),
            retries,
            retry_backoff: Duration::from_millis(
                self.retry_backoff_ms
                    .unwrap_or(DEFAULT_LLM_RETRY_BACKOFF_MS),
            ),
            concurrency,
            max_output_tokens: self
                .max_output_tokens
                .unwrap_or(DEFAULT_LLM_MAX_OUTPUT_TOKENS)
                .max(1),
            input_price_per_mtok: self.input_price_per_mtok,
            output_price_per_mtok: self.output_price_per_mtok,
            cache: self.cache.unwrap_or(true),
            structured_output,
            api_version: self.api_version,
            required: self.required.unwrap_or(false),
            time_budget: self
                .time_budget_ms
                .filter(|&ms| ms > 0)
                .map(Duration::from_millis),
        })
    }
}

/// How the review's model passes run (upstream's `review_diff` LLM options).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmPassConfig {
    pub enabled: bool,
    pub force: bool,
    pub two_pass: bool,
    pub risk_threshold: u8,
    pub token_budget: u32,
    pub max_context_files: u32,
    pub custom_instructions: Option<String>,
}

/// Validated model settings. `provider: None` means no model is configured.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The review passes that use the model.
    pub passes: LlmPassConfig,
    /// The store the response cache lives in (`[store]`; the workspace's file by default).
    pub cache_store: super::RawStore,
    pub provider: Option<ProviderKind>,
    /// Server root; each provider has a default (OpenAI's and Anthropic's public APIs).
    pub base_url: Option<String>,
    /// Model name sent to the server (the `command` provider records it only).
    pub model: String,
    /// The variable the key is read from: `api_key_env`, else the provider's usual variable
    /// when that one is set (then `key_env_defaulted`). Reports name it, never the key.
    pub api_key_env: Option<String>,
    pub key_env_defaulted: bool,
    /// The key read from `api_key_env`, when set.
    pub api_key: Option<ApiKey>,
    pub command: Vec<String>,
    /// Time limit of one model call (one HTTP request or one command run).
    pub timeout: Duration,
    pub retries: u32,
    pub retry_backoff: Duration,
    pub concurrency: usize,
    pub max_output_tokens: u32,
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
    pub cache: bool,
    pub structured_output: StructuredOutput,
    pub api_version: Option<String>,
    /// A model that cannot answer fails the run instead of leaving a warning.
    pub required: bool,
    /// Wall-clock budget of all model calls of one client (one review, one plan operation).
    pub time_budget: Option<Duration>,
}

impl Default for LlmConfig {
    fn default() -> LlmConfig {
        RawLlm::default()
            .resolve()
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

pub(super) fn parse_bool(origin: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(value_error(
            origin,
            format!("`{other}` is not a boolean (true/false)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    #[test]
    fn key_is_read_from_the_named_variable_and_never_printed() {
        let file = RawConfig::from_toml(
            "[llm]\nprovider = \"openai\"\nmodel = \"gpt-x\"\napi_key_env = \"MY_KEY\"\n",
            "tollgate.toml",
        )
        .unwrap();
        let env =
            RawConfig::from_env([("MY_KEY", "sk-secret-value-123"), ("PATH", "/bin")]).unwrap();
        let config = file.overlay(env).resolve().unwrap();
        let llm = &config.llm;
        assert_eq!(llm.provider, Some(ProviderKind::OpenAi));
        assert_eq!(
            llm.api_key.as_ref().unwrap().expose(),
            "sk-secret-value-123"
        );
        let printed = format!("{config:?}");
        assert!(!printed.contains("sk-secret-value-123"), "{printed}");
    }

    #[test]
    fn env_overrides_file_and_bad_values_name_their_origin() {
        let file = RawConfig::from_toml(
            "[llm]\nprovider = \"anthropic\"\nmodel = \"a\"\ntimeout_ms = 5000\n",
            "t",
        )
        .unwrap();
        let env = RawConfig::from_env([("TOLLGATE_LLM_MODEL", "b"), ("TOLLGATE_LLM_RETRIES", "5")])
            .unwrap();
        let llm = file.overlay(env).resolve().unwrap().llm;
        assert_eq!(llm.model, "b");
        assert_eq!(llm.retries, 5);
        assert_eq!(llm.timeout, Duration::from_secs(5));

        let err = RawConfig::from_env([("TOLLGATE_LLM_TIMEOUT_MS", "soon")]).unwrap_err();
        assert!(err.to_string().contains("TOLLGATE_LLM_TIMEOUT_MS"), "{err}");
        let raw = RawConfig::from_toml("[llm]\nprovider = \"gpt\"\n", "t").unwrap();
        assert!(
            raw.resolve()
                .unwrap_err()
                .to_string()
                .contains("llm.provider")
        );
        let raw = RawConfig::from_toml("[llm]\nprovider = \"command\"\n", "t").unwrap();
        assert!(
            raw.resolve()
                .unwrap_err()
                .to_string()
                .contains("llm.command")
        );
    }

    #[test]
    fn nothing_configured_means_no_provider() {
        let llm = RawConfig::default().resolve().unwrap().llm;
        assert_eq!(llm.provider, None);
        assert!(llm.cache);
    }
}
