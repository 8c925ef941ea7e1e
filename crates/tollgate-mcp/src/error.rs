//! Tool errors: what a model reads when a call fails. Each has a stable code and a message that
//! says what to fix; they travel as tool results (`isError: true`), never as protocol errors,
//! because clients show protocol errors to nobody.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use tollgate::ErrorCode;

/// The arguments are malformed, out of bounds or refer to nothing usable.
pub(crate) const INVALID_INPUT: ErrorCode = ErrorCode::InvalidInput;
/// Tollgate itself failed (a bug): a panic, or a result it could not serialise.
pub(crate) const INTERNAL_ERROR: ErrorCode = ErrorCode::InternalError;
/// The client cancelled the call, or the server is shutting down.
pub(crate) const CANCELLED: ErrorCode = ErrorCode::Cancelled;
/// The call ran longer than the server's limit.
pub(crate) const TIMEOUT: ErrorCode = ErrorCode::Timeout;

/// A failed tool call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolError {
    code: ErrorCode,
    message: String,
    details: Option<Value>,
}

impl ToolError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Names the argument at fault, so a model knows which one to change.
    pub(crate) fn with_field(mut self, field: Option<&str>) -> ToolError {
        if let Some(field) = field {
            self.details = Some(json!({ "field": field }));
        }
        self
    }

    pub(crate) fn code(&self) -> ErrorCode {
        self.code
    }

    /// Upstream's error shape: `{"error": {"code", "message", "details"?}}`.
    pub(crate) fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let (Some(details), Some(object)) = (&self.details, error.as_object_mut()) {
            object.insert("details".to_string(), details.clone());
        }
        json!({ "error": error })
    }

    /// The error as a tool result. Its one text block is [`Self::to_json`], so scripts can parse
    /// it; there is no structured content, which would have to match the tool's output schema.
    pub(crate) fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.to_json().to_string())])
    }
}

impl From<tollgate::api::ApiError> for ToolError {
    fn from(err: tollgate::api::ApiError) -> ToolError {
        ToolError::new(err.code, err.message).with_field(err.field.as_deref())
    }
}

impl From<tollgate::api::review::RequestError> for ToolError {
    fn from(err: tollgate::api::review::RequestError) -> ToolError {
        ToolError::new(err.code(), err.to_string()).with_field(err.field())
    }
}

impl From<tollgate::api::secrets::ScrubError> for ToolError {
    fn from(err: tollgate::api::secrets::ScrubError) -> ToolError {
        ToolError::new(err.code(), err.to_string()).with_field(Some(err.field()))
    }
}

impl From<tollgate::analyzers::AnalysisError> for ToolError {
    fn from(err: tollgate::analyzers::AnalysisError) -> ToolError {
        use tollgate::analyzers::AnalysisError;
        let field = match &err {
            AnalysisError::ChangedFile { .. } => Some("changed_files".to_string()),
            AnalysisError::SarifPath { .. } | AnalysisError::Sarif(_) => {
                Some("options.import_sarif".to_string())
            }
            AnalysisError::Diff(_) => Some("diff".to_string()),
            AnalysisError::Option { option, .. } => Some(format!("options.{option}")),
            _ => None,
        };
        ToolError::new(err.code(), err.to_string()).with_field(field.as_deref())
    }
}

impl From<tollgate::session::SessionError> for ToolError {
    fn from(err: tollgate::session::SessionError) -> ToolError {
        ToolError::new(err.code(), err.to_string()).with_field(err.field())
    }
}

impl From<tollgate::secrets::ValidateError> for ToolError {
    fn from(err: tollgate::secrets::ValidateError) -> ToolError {
        ToolError::new(err.code(), err.to_string()).with_field(Some(err.field()))
    }
}

impl From<tollgate::store::StoreError> for ToolError {
    fn from(err: tollgate::store::StoreError) -> ToolError {
        ToolError::new(err.code(), err.to_string())
    }
}

impl From<tollgate::api::context::ContextError> for ToolError {
    fn from(err: tollgate::api::context::ContextError) -> ToolError {
        ToolError::new(err.code(), err.to_string()).with_field(err.field())
    }
}

impl From<tollgate::plan::lifecycle::library::PlanStoreError> for ToolError {
    fn from(err: tollgate::plan::lifecycle::library::PlanStoreError) -> ToolError {
        tollgate::api::plan::plan_store_error(err, tollgate::api::plan::FrontEnd::Mcp).into()
    }
}
