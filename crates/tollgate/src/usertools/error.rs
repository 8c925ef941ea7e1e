//! What can go wrong calling a user's tool, each with its stable code: the contract's 400
//! (arguments), 404 (no such tool), 408 (time or instruction limit), 500 (the script failed).

use crate::ErrorCode;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UserToolError {
    #[error("unknown tool `{name}`; the user tools served are: {available}")]
    NotFound { name: String, available: String },
    #[error("invalid arguments for `{tool}`: {field}: {message}")]
    Invalid {
        tool: String,
        /// The argument at fault, as a dotted path (`options.limit`).
        field: String,
        message: String,
    },
    #[error("`{tool}` ({script}) stopped: {limit}")]
    Limit {
        tool: String,
        script: String,
        limit: String,
    },
    #[error("`{tool}` failed in {script}{}: {message}", line.map(|line| format!(" line {line}")).unwrap_or_default())]
    Script {
        tool: String,
        /// The script's path, relative to the workspace.
        script: String,
        line: Option<u32>,
        message: String,
    },
}

impl UserToolError {
    pub fn code(&self) -> ErrorCode {
        match self {
            UserToolError::NotFound { .. } => ErrorCode::ToolNotFound,
            UserToolError::Invalid { .. } => ErrorCode::InvalidInput,
            UserToolError::Limit { .. } => ErrorCode::Timeout,
            UserToolError::Script { .. } => ErrorCode::ScriptError,
        }
    }

    /// The argument at fault, for a validation error.
    pub fn field(&self) -> Option<&str> {
        match self {
            UserToolError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}
