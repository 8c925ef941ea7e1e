//! A small GitHub REST client: the calls the action makes, JSON in and out, with retries.
//!
//! Transient failures are retried up to [`MAX_ATTEMPTS`] times: connection errors, 5xx, 429,
//! and 403s that are rate limits (`x-ratelimit-remaining: 0` or a `Retry-After`). The wait is
//! `Retry-After` when given, else until `x-ratelimit-reset`, else an exponential backoff; never
//! more than [`MAX_WAIT`]. Pagination follows `Link: rel="next"` only while it stays on the
//! API's own origin, so the token is never sent anywhere else. The token is a [`Token`] and
//! never appears in logs or errors.

use std::fmt;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Method;
use reqwest::blocking::{Client, Response};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, USER_AGENT};
use serde_json::Value;

use crate::token::Token;

/// Tries per request, the first included.
pub const MAX_ATTEMPTS: u32 = 4;
/// The longest single wait before a retry.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// Error bodies are cut to this many characters in messages.
const MAX_ERROR_CHARS: usize = 300;
/// Pages followed at most when listing (100 items a page).
const MAX_PAGES: usize = 100;

pub struct GitHub {
    client: Client,
    api_url: String,
    token: Token,
    retry_base: Duration,
}

impl fmt::Debug for GitHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitHub")
            .field("api_url", &self.api_url)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// An API call that failed for good.
#[derive(Debug)]
pub struct ApiError {
    pub method: Method,
    pub path: String,
    /// `None` when no response came back.
    pub status: Option<u16>,
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(
                f,
                "{} {} answered {status}: {}",
                self.method, self.path, self.message
            ),
            None => write!(f, "{} {} failed: {}", self.method, self.path, self.message),
        }
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// The token may not do this (a read-only token, missing permissions).
    pub fn is_forbidden(&self) -> bool {
        matches!(self.status, Some(401 | 403 | 404))
    }
}

impl GitHub {
    pub fn new(api_url: &str, token: Token, retry_base: Duration) -> anyhow::Result<GitHub> {
        // reqwest is built without a TLS crypto provider (aws-lc-rs needs a C toolchain);
        // ring is installed once per process. A second install is refused, harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|err| anyhow::anyhow!("cannot set up the HTTP client: {err}"))?;
        Ok(GitHub {
            client,
            api_url: api_url.trim_end_matches('/').to_string(),
            token,
            retry_base,
        })
    }

    /// Sends one request (with retries) and returns the JSON body (`Null` for an empty one).
    pub fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let url = format!("{}{path}", self.api_url);
        self.send(method, &url, path, body).map(|(value, _)| value)
    }

    /// GETs every page of a list (`per_page=100`), following `Link: rel="next"`.
    pub fn list(&self, path: &str) -> Result<Vec<Value>, ApiError> {
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut url = format!("{}{path}{separator}per_page=100", self.api_url);
        let mut items = Vec::new();
        for _ in 0..MAX_PAGES {
            let (value, headers) = self.send(Method::GET, &url, path, None)?;
            match value {
                Value::Array(page) => items.extend(page),
                other => {
                    return Err(ApiError {
                        method: Method::GET,
                        path: path.to_string(),
                        status: None,
                        message: format!("expected a list, got {}", kind(&other)),
                    });
                }
            }
            match next_link(&headers).filter(|next| self.same_origin(next)) {
                Some(next) => url = next,
                None => return Ok(items),
            }
        }
        Ok(items)
    }

    /// Runs a GraphQL query (`<api>/graphql`, or `<host>/api/graphql` for GitHub Enterprise's
    /// `<host>/api/v3`) and returns its `data`; an answer with `errors` is an error.
    pub fn graphql(&self, query: &str, variables: &Value) -> Result<Value, ApiError> {
        let url = match self.api_url.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{}/graphql", self.api_url),
        };
        let body = serde_json::json!({ "query": query, "variables": variables });
        let (answer, _) = self.send(Method::POST, &url, "/graphql", Some(&body))?;
        if let Some(errors) = answer.get("errors").filter(|errors| !errors.is_null()) {
            return Err(ApiError {
                method: Method::POST,
                path: "/graphql".to_string(),
                status: None,
                message: one_line(&errors.to_string()),
            });
        }
        Ok(answer.get("data").cloned().unwrap_or(Value::Null))
    }

    fn same_origin(&self, url: &str) -> bool {
        url.strip_prefix(&self.api_url)
            .is_some_and(|rest| rest.starts_with('/'))
    }

    fn send(
        &self,
        method: Method,
        url: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(Value, HeaderMap), ApiError> {
        let error = |status: Option<u16>, message: String| ApiError {
            method: method.clone(),
            path: path.to_string(),
            status,
            message,
        };
        let mut attempt = 1;
        loop {
            let mut request = self
                .client
                .request(method.clone(), url)
                .header(ACCEPT, "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28")
                .header(
                    USER_AGENT,
                    concat!("tollgate-action/", env!("CARGO_PKG_VERSION")),
                )
                .header(AUTHORIZATION, format!("Bearer {}", self.token.expose()));
            if let Some(body) = body {
                request = request
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.to_string());
            }
            let (wait, failure) = match request.send() {
                Ok(response) => {
                    let status = response.status().as_u16();
                    if response.status().is_success() {
                        let headers = response.headers().clone();
                        let text = response.text().map_err(|err| {
                            error(Some(status), format!("cannot read the body: {err}"))
                        })?;
                        if text.trim().is_empty() {
                            return Ok((Value::Null, headers));
                        }
                        let value = serde_json::from_str(&text).map_err(|err| {
                            error(Some(status), format!("the body is not JSON: {err}"))
                        })?;
                        return Ok((value, headers));
                    }
                    let wait = retry_wait(&response, attempt, self.retry_base);
                    let message = one_line(&response.text().unwrap_or_default());
                    (wait, error(Some(status), message))
                }
                // Connection refused, reset, timed out: worth another try.
                Err(err) => (
                    Some(backoff(attempt, self.retry_base)),
                    error(None, one_line(&err.to_string())),
                ),
            };
            match wait {
                Some(wait) if attempt < MAX_ATTEMPTS => {
                    tracing::warn!(
                        "{failure}; retrying in {} ms (attempt {} of {MAX_ATTEMPTS})",
                        wait.as_millis(),
                        attempt + 1
                    );
                    thread::sleep(wait);
                    attempt += 1;
                }
                _ => return Err(failure),
            }
        }
    }
}

/// How long to wait before retrying a failed response, or `None` when retrying cannot help.
fn retry_wait(response: &Response, attempt: u32, base: Duration) -> Option<Duration> {
    let status = response.status().as_u16();
    let headers = response.headers();
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    let retry_after = header("retry-after").and_then(|value| value.parse::<u64>().ok());
    let rate_limited = header("x-ratelimit-remaining") == Some("0");
    let retryable = status >= 500
        || status == 429
        || (status == 403 && (rate_limited || retry_after.is_some()));
    if !retryable {
        return None;
    }
    if let Some(seconds) = retry_after {
        return Some(Duration::from_secs(seconds).min(MAX_WAIT));
    }
    if rate_limited
        && let Some(reset) = header("x-ratelimit-reset").and_then(|value| value.parse::<u64>().ok())
    {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        return Some(Duration::from_secs(reset.saturating_sub(now)).min(MAX_WAIT));
    }
    Some(backoff(attempt, base))
}

fn backoff(attempt: u32, base: Duration) -> Duration {
    base.saturating_mul(1 << attempt.saturating_sub(1).min(6))
        .min(MAX_WAIT)
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = headers.get("link")?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|param| param.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

/// Error bodies come from the network: one line, cut short, so a log line stays a log line.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    match flat.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat.to_string(),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn next_links_are_found() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "link",
            HeaderValue::from_static(
                "<https://api.github.com/x?page=3>; rel=\"next\", <https://api.github.com/x?page=9>; rel=\"last\"",
            ),
        );
        assert_eq!(
            next_link(&headers).as_deref(),
            Some("https://api.github.com/x?page=3")
        );
        headers.insert(
            "link",
            HeaderValue::from_static("<https://a/x?page=1>; rel=\"prev\""),
        );
        assert_eq!(next_link(&headers), None);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(100);
        assert_eq!(backoff(1, base), Duration::from_millis(100));
        assert_eq!(backoff(3, base), Duration::from_millis(400));
        assert_eq!(backoff(30, Duration::from_secs(10)), MAX_WAIT);
    }

    #[test]
    fn error_bodies_stay_on_one_line() {
        assert_eq!(one_line("a\n::error::x\r\n"), "a ::error::x");
        assert_eq!(
            one_line(&"x".repeat(400)).chars().count(),
            MAX_ERROR_CHARS + 1
        );
    }

    #[test]
    fn pagination_stays_on_the_api_origin() {
        let github = GitHub::new(
            "http://127.0.0.1:9/api/v3/",
            Token::new(Some("t".into())).unwrap(),
            Duration::ZERO,
        )
        .unwrap();
        assert!(github.same_origin("http://127.0.0.1:9/api/v3/repos/o/r?page=2"));
        assert!(!github.same_origin("http://127.0.0.1:9/api/v3.evil/x"));
        assert!(!github.same_origin("https://elsewhere.example/api/v3/x"));
        assert!(!format!("{github:?}").contains("Bearer"));
    }
}
