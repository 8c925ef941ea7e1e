//! The one list of stable error codes every front end shows: the MCP server's `error.code`, the
//! HTTP API's status, the CLI's `error [CODE]`. Each error type's `code()` returns one of these,
//! so a code is spelled once and a typo is a compile error, not a new code.

use std::fmt;
use std::str::FromStr;

macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $text:literal,)*) => {
        /// A stable, machine-readable error code (`SCREAMING_SNAKE_CASE` on the wire).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &[ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as it travels (`INVALID_INPUT`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $text,)*
                }
            }
        }
    };
}

error_codes! {
    /// Arguments or input malformed, out of bounds, or referring to nothing usable.
    InvalidInput = "INVALID_INPUT",
    /// A named file does not exist.
    FileNotFound = "FILE_NOT_FOUND",
    /// A path leaves the workspace (lexically or through a link).
    PathOutsideWorkspace = "PATH_OUTSIDE_WORKSPACE",
    /// An input is over its size limit.
    InputTooLarge = "INPUT_TOO_LARGE",
    /// Reading or writing a file failed.
    IoError = "IO_ERROR",
    /// A command or git operation failed.
    ExecutionFailed = "EXECUTION_FAILED",
    /// A git repository could not be read.
    GitError = "GIT_ERROR",
    /// The work was cancelled (by the client, or because the server is shutting down).
    Cancelled = "CANCELLED",
    /// The work ran past its time limit.
    Timeout = "TIMEOUT",
    /// The stored state changed underneath the request (a concurrent edit).
    Conflict = "CONFLICT",
    /// The operation is not allowed in the object's current state.
    InvalidStateTransition = "INVALID_STATE_TRANSITION",
    /// No plan has this id.
    PlanNotFound = "PLAN_NOT_FOUND",
    /// No session has this id.
    SessionNotFound = "SESSION_NOT_FOUND",
    /// No knowledge-store entry has this id.
    MemoryNotFound = "MEMORY_NOT_FOUND",
    /// Another process holds the session.
    SessionBusy = "SESSION_BUSY",
    /// The operation needs a model and none is configured.
    LlmNotConfigured = "LLM_NOT_CONFIGURED",
    /// The model provider could not be reached or refused the request.
    LlmUnavailable = "LLM_UNAVAILABLE",
    /// The model's answer did not match the expected shape, even after a repair.
    LlmInvalidOutput = "LLM_INVALID_OUTPUT",
    /// The provider's response was not a model answer.
    LlmBadResponse = "LLM_BAD_RESPONSE",
    /// A value could not be serialised or parsed back.
    SerializationError = "SERIALIZATION_ERROR",
    /// The embedded store failed.
    StoreError = "STORE_ERROR",
    /// The embedded store could not be opened.
    StoreUnavailable = "STORE_UNAVAILABLE",
    /// A write would take the knowledge store or one of its threads past its quota.
    StoreFull = "STORE_FULL",
    /// The store was written by a newer Tollgate.
    StoreVersionMismatch = "STORE_VERSION_MISMATCH",
    /// Another process is updating the code index.
    IndexBusy = "INDEX_BUSY",
    /// There is no code index here (yet).
    IndexNotFound = "INDEX_NOT_FOUND",
    /// The code index is damaged; rebuilding it fixes this.
    IndexCorrupt = "INDEX_CORRUPT",
    /// The code index's search engine failed.
    IndexError = "INDEX_ERROR",
    /// The embedder (local or HTTP) failed.
    EmbedderError = "EMBEDDER_ERROR",
    /// Tollgate itself failed (a bug).
    InternalError = "INTERNAL_ERROR",
    /// HTTP API: no or a wrong bearer token.
    Unauthorized = "UNAUTHORIZED",
    /// HTTP API: the request's origin or host is not allowed.
    Forbidden = "FORBIDDEN",
    /// HTTP API: the request body is over the limit.
    PayloadTooLarge = "PAYLOAD_TOO_LARGE",
    /// HTTP API: no route at that path.
    NotFound = "NOT_FOUND",
    /// HTTP API: no tool of that name in the served profile.
    ToolNotFound = "TOOL_NOT_FOUND",
    /// The HTTP server holds as many connections as it allows (from this peer or in all).
    TooManyConnections = "TOO_MANY_CONNECTIONS",
    /// HTTP API: the tool does not answer this method (`GET` of a tool that takes arguments).
    MethodNotAllowed = "METHOD_NOT_ALLOWED",
    /// A user's tool script failed: a Lua error, a sandbox or host-API refusal, its memory
    /// limit. The message names the script, the line and what happened.
    ScriptError = "SCRIPT_ERROR",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a Tollgate error code")]
pub struct UnknownErrorCode(pub String);

impl FromStr for ErrorCode {
    type Err = UnknownErrorCode;

    fn from_str(text: &str) -> Result<ErrorCode, UnknownErrorCode> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
            .ok_or_else(|| UnknownErrorCode(text.to_string()))
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_screaming_snake_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "{text} twice");
            assert!(
                text.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{text}"
            );
            assert_eq!(text.parse::<ErrorCode>().unwrap(), *code);
        }
        assert!("invalid_input".parse::<ErrorCode>().is_err());
    }

    #[test]
    #[cfg(feature = "index")]
    fn the_index_crate_s_codes_are_all_error_codes() {
        for code in tollgate_index::ERROR_CODES {
            assert!(code.parse::<ErrorCode>().is_ok(), "{code}");
        }
    }
}
