//! JSON over HTTP with the retry policy every HTTP provider shares: 429, 5xx and transport
//! failures are retried with exponential backoff (doubling from the configured base), and a
//! `Retry-After` header (seconds or an HTTP date) replaces the backoff when the server sends one.
//! Other 4xx answers are final.

use std::time::{Duration, Instant, SystemTime};

use reqwest::blocking::Client;
use serde_json::Value;

use super::LlmError;
use crate::config::MAX_RETRY_AFTER;

/// The longest error body kept in a message.
const MAX_ERROR_CHARS: usize = 500;

#[derive(Debug)]
pub(super) struct Http {
    client: Client,
    retries: u32,
    backoff: Duration,
}

/// A final non-success answer, before it becomes an [`LlmError`] (a provider may fall back on
/// some of them).
#[derive(Debug)]
pub(super) struct Refused {
    pub(super) status: u16,
    pub(super) body: String,
}

/// The outcome of [`Http::post`]: a body, or a refusal the provider may handle.
pub(super) type Posted = Result<Value, PostError>;

#[derive(Debug)]
pub(super) enum PostError {
    Refused(Refused),
    Failed(LlmError),
}

/// Where one call stands against the run's model time budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Time limit of one attempt.
    pub(super) timeout: Duration,
    /// When the run's budget ends; no attempt or retry wait goes past it.
    pub(super) deadline: Option<(Instant, Duration)>,
}

impl Limits {
    /// The time limit of an attempt starting now, or the budget error once it is spent.
    pub(super) fn attempt(&self) -> Result<Duration, LlmError> {
        match self.deadline {
            None => Ok(self.timeout),
            Some((deadline, budget)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    Err(LlmError::BudgetSpent { budget })
                } else {
                    Ok(self.timeout.min(left))
                }
            }
        }
    }

    /// Whether waiting `wait` before a retry would run past the budget.
    fn wait_exceeds(&self, wait: Duration) -> bool {
        self.deadline
            .is_some_and(|(deadline, _)| Instant::now() + wait >= deadline)
    }

    /// A timed-out attempt is the budget's doing when the budget clipped it.
    pub(super) fn timed_out(&self, after: Duration) -> LlmError {
        match self.deadline {
            Some((deadline, budget)) if Instant::now() >= deadline || after < self.timeout => {
                LlmError::BudgetSpent { budget }
            }
            _ => LlmError::Timeout { after },
        }
    }
}

impl Http {
    pub(super) fn new(retries: u32, backoff: Duration) -> Result<Http, LlmError> {
        // reqwest is built without a TLS crypto provider (aws-lc-rs needs a C toolchain); ring is
        // installed once per process. A second install is refused, harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .build()
            .map_err(|err| LlmError::Transport(format!("cannot set up the HTTP client: {err}")))?;
        Ok(Http {
            client,
            retries,
            backoff,
        })
    }

    /// POSTs `body` to `url` with `headers`; returns the JSON answer. Every request sent is
    /// counted in `requests`, whatever its outcome (failed ones may be billed too).
    pub(super) fn post(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        limits: Limits,
        requests: &mut u32,
    ) -> Posted {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let timeout = limits.attempt().map_err(PostError::Failed)?;
            *requests += 1;
            // reqwest's `json` feature is off workspace-wide; the body is serialised here.
            let mut builder = self
                .client
                .post(url)
                .timeout(timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            let retry_in = match builder.send() {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(parse_retry_after);
                    if response.status().is_success() {
                        let text = response.text().map_err(|err| {
                            PostError::Failed(transport_error(err, timeout, &limits))
                        })?;
                        return serde_json::from_str(&text).map_err(|err| {
                            PostError::Failed(LlmError::Protocol(format!(
                                "the body is not JSON ({err}): {}",
                                snippet(&text)
                            )))
                        });
                    }
                    let body = response.text().unwrap_or_default();
                    let retryable = status == 429 || (500..600).contains(&status);
                    if !retryable || attempt > self.retries {
                        return Err(PostError::Refused(Refused {
                            status,
                            body: snippet(&body),
                        }));
                    }
                    match retry_after {
                        Some(wait) if wait > MAX_RETRY_AFTER => {
                            return Err(PostError::Refused(Refused {
                                status,
                                body: format!(
                                    "the server asks to retry after {} s, longer than the {} s Tollgate waits; {}",
                                    wait.as_secs(),
                                    MAX_RETRY_AFTER.as_secs(),
                                    snippet(&body)
                                ),
                            }));
                        }
                        Some(wait) => wait,
                        None => self.backoff_for(attempt),
                    }
                }
                Err(err) => {
                    let error = transport_error(err, timeout, &limits);
                    if attempt > self.retries || matches!(error, LlmError::BudgetSpent { .. }) {
                        return Err(PostError::Failed(error));
                    }
                    tracing::debug!(%error, attempt, "retrying a failed model request");
                    self.backoff_for(attempt)
                }
            };
            if limits.wait_exceeds(retry_in) {
                return Err(PostError::Failed(LlmError::BudgetSpent {
                    budget: limits
                        .deadline
                        .map(|(_, budget)| budget)
                        .unwrap_or_default(),
                }));
            }
            std::thread::sleep(retry_in);
        }
    }

    fn backoff_for(&self, attempt: u32) -> Duration {
        self.backoff
            .saturating_mul(1u32 << (attempt - 1).min(10))
            .min(Duration::from_secs(60))
    }
}

fn transport_error(err: reqwest::Error, timeout: Duration, limits: &Limits) -> LlmError {
    if err.is_timeout() {
        limits.timed_out(timeout)
    } else {
        // The URL is ours (no key in it); the source chain says what failed.
        let mut message = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        LlmError::Transport(message)
    }
}

/// `Retry-After`: delta seconds or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let format = time::format_description::well_known::Rfc2822;
    let when = time::OffsetDateTime::parse(value, &format).ok()?;
    let when = SystemTime::from(when);
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// A refusal as an error; a 401 or 403 says which variable the key came from, or that none
/// was sent and how to send one (the key itself is never named).
pub(super) fn explain_auth(
    refused: Refused,
    key_sent: bool,
    key_env: Option<&str>,
    usual_env: &str,
) -> LlmError {
    let hint = match (refused.status, key_sent, key_env) {
        (401 | 403, true, Some(name)) => {
            format!(" (the API key sent came from {name}: check that it is valid for this server)")
        }
        (401 | 403, false, _) => format!(
            " (no API key was sent: set {usual_env}, or name the variable holding it in [llm] api_key_env)"
        ),
        _ => String::new(),
    };
    LlmError::Http {
        status: refused.status,
        message: format!("{}{hint}", refused.body),
    }
}

/// The start of an error body, on one line.
pub(super) fn snippet(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = one_line.chars().take(MAX_ERROR_CHARS).collect();
    if cut.len() < one_line.len() {
        cut.push('…');
    }
    // A server echoing our request could echo a secret back: never let one into a message.
    crate::secrets::scrub(&cut, 0, 0).text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
