//! The contract between the wire and the domain: every operation's request and response, with
//! upstream's field names, defaults and bounds, and the one function per operation that parses a
//! request once into typed values and calls the domain.
//!
//! Invariant: only this module's types (and the domain types they name as output) derive
//! `Deserialize` + `JsonSchema` for input; domain modules take typed values. The MCP server, the
//! HTTP API, the CLI and the Action call these functions, so an operation means the same thing on
//! every front end, and its schema (`schemas()`) is generated from the types here.

pub mod analysis;
#[cfg(feature = "index")]
pub mod answer;
#[cfg(feature = "index")]
pub mod context;
#[cfg(feature = "index")]
pub mod knowledge;
pub mod learn;
#[cfg(feature = "index")]
pub mod learn_mirror;
pub mod lifecycle;
#[cfg(feature = "index")]
pub mod memory;
#[cfg(feature = "index")]
pub mod notes;
pub mod plan;
pub mod review;
pub mod secrets;
pub mod session;
/// Documents synced into the knowledge store from `[sources.<name>]`.
#[cfg(feature = "index")]
pub mod sources;
pub mod store;
/// Tools a team writes in sandboxed Lua: loading, validation, the sandbox and its host API
/// (which calls the operations of this layer, as the built-in tools do).
#[cfg(feature = "usertools")]
pub mod usertools;

use std::fmt;

use crate::ErrorCode;

/// Why an operation refused or failed: a stable code, a message that says what to fix, and the
/// request field at fault when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            field: None,
        }
    }

    /// `INVALID_INPUT` naming the field at fault.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::InvalidInput, message).at(field)
    }

    /// Names the request field at fault, so a caller knows which one to change.
    pub fn at(mut self, field: impl Into<String>) -> ApiError {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_field_and_shows_its_message() {
        let err = ApiError::invalid("limit", "limit must be between 1 and 100, got 0");
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert_eq!(err.field.as_deref(), Some("limit"));
        assert_eq!(err.to_string(), "limit must be between 1 and 100, got 0");
    }

    /// The boundary's invariant: `api` calls the domain, never the other way round. Only the
    /// crate root, `schemas` (the list of generated schemas) and test code may name `api`.
    #[test]
    fn no_domain_module_imports_the_api_layer() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let relative = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if path.is_dir() {
                    if relative != "api" {
                        stack.push(path);
                    }
                    continue;
                }
                let exempt = ["lib.rs", "schemas.rs"].contains(&relative.as_str())
                    || relative.ends_with("tests.rs");
                if exempt || !relative.ends_with(".rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                if code.contains("crate::api") || code.contains("super::api") {
                    offenders.push(relative);
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "domain modules importing `api`: {offenders:?}"
        );
    }
}
