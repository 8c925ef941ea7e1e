//! `tollgate.http.request`: an HTTP request a tool's configuration allows. Only the hosts in
//! `[tools.<name>] allowed_hosts` are reached (a redirect to any other is refused); the
//! configured credentials are added here from the server's environment, so the script never
//! holds them, and any echo of one in the response is masked before the script sees it.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::ToolAccess;

/// The most response body a script gets.
const MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;
/// What an echoed credential becomes.
const MASK: &str = "****";

/// `tollgate.http.request{method, url, headers, body}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpRequest {
    #[serde(default)]
    method: Option<String>,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
}

/// What the script gets back: status, headers (lower-case names), body as text.
#[derive(Debug, Serialize)]
pub(crate) struct HttpResponse {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

pub(crate) fn request(
    access: &ToolAccess,
    env: &[(String, String)],
    request: HttpRequest,
    time_left: Duration,
) -> Result<HttpResponse, String> {
    let url = reqwest::Url::parse(&request.url)
        .map_err(|err| format!("`{}` is not a URL: {err}", request.url))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "only http and https URLs are allowed, not `{}`",
            url.scheme()
        ));
    }
    if !allowed(access, &url) {
        return Err(format!(
            "host `{}` is not allowed for this tool; add it to allowed_hosts of its [tools.<name>] (of [sources.<name>] for a script source) in tollgate.toml",
            host_key(&url).unwrap_or_default()
        ));
    }
    let mut secrets = Vec::new();
    let mut credentials = Vec::new();
    for credential in &access.credentials {
        let value = env
            .iter()
            .find(|(name, _)| name == &credential.env)
            .map(|(_, value)| value.clone())
            .filter(|value| !value.is_empty())
            .ok_or_else(|| {
                format!(
                    "the credential variable {} is not set where the server runs",
                    credential.env
                )
            })?;
        secrets.push(value.clone());
        credentials.push((credential.header.clone(), value));
    }
    // ring, as for the model clients: reqwest is built without a crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redirect_access = access.clone();
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("more than 5 redirects")
            } else if allowed(&redirect_access, attempt.url()) {
                attempt.follow()
            } else {
                let to = host_key(attempt.url()).unwrap_or_default();
                attempt.error(format!("redirect to `{to}` refused: not in allowed_hosts"))
            }
        }))
        .no_proxy()
        .timeout(time_left.max(Duration::from_millis(1)))
        .build()
        .map_err(|err| format!("cannot set up the HTTP client: {err}"))?;
    let method = request
        .method
        .as_deref()
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| format!("`{method}` is not an HTTP method"))?;
    let mut builder = client.request(method, url);
    for (name, value) in &request.headers {
        // The host's credential wins over anything the script puts under its name.
        if credentials
            .iter()
            .any(|(header, _)| header.eq_ignore_ascii_case(name))
        {
            continue;
        }
        builder = builder.header(name, value);
    }
    for (header, value) in &credentials {
        builder = builder.header(header, value);
    }
    if let Some(body) = request.body {
        builder = builder.body(body);
    }
    let response = builder
        .send()
        .map_err(|err| mask(&describe(&err), &secrets))?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                mask(&String::from_utf8_lossy(value.as_bytes()), &secrets),
            )
        })
        .collect();
    let mut bytes = Vec::new();
    response
        .take(MAX_BODY_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("reading the response failed: {err}"))?;
    Ok(HttpResponse {
        status,
        headers,
        body: mask(&String::from_utf8_lossy(&bytes), &secrets),
    })
}

/// `host:port` of a URL, lower-case (the port the scheme implies when none is written).
fn host_key(url: &reqwest::Url) -> Option<String> {
    Some(format!(
        "{}:{}",
        url.host_str()?.to_ascii_lowercase(),
        url.port_or_known_default()?
    ))
}

fn allowed(access: &ToolAccess, url: &reqwest::Url) -> bool {
    host_key(url).is_some_and(|key| access.allowed_hosts.contains(&key))
}

/// A transport error with its causes (a refused redirect says so in its source).
fn describe(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn mask(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_string();
    for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
        text = text.replace(secret.as_str(), MASK);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_configured_host_ports_are_allowed() {
        let access = ToolAccess {
            allowed_hosts: vec![
                "api.example.com:443".to_string(),
                "127.0.0.1:8080".to_string(),
            ],
            credentials: Vec::new(),
        };
        let url = |text: &str| reqwest::Url::parse(text).unwrap();
        assert!(allowed(&access, &url("https://API.example.com/x")));
        assert!(!allowed(&access, &url("http://api.example.com/x")));
        assert!(allowed(&access, &url("http://127.0.0.1:8080/")));
        assert!(!allowed(&access, &url("http://127.0.0.1:8081/")));
        assert!(!allowed(
            &access,
            &url("https://api.example.com.evil.test/")
        ));
        assert_eq!(
            mask("a SECRET b SECRET", &["SECRET".to_string()]),
            "a **** b ****"
        );
    }
}
