//! Log messages to the client (the MCP `logging` capability): a call's start, the progress its
//! work reports and how it ended, at or above the level the client chose, per request
//! (2026-07-28: `_meta` `logLevel`) or with `logging/setLevel` (the handshake era). A client that
//! chose no level gets no messages. A message names the tool and gives counts, durations and
//! error codes, never arguments or results, so nothing a caller sent (a secret in a diff)
//! comes back in a log.

// MCP deprecated logging (SEP-2577) but clients still use it; rmcp marks its types deprecated.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext};
use serde_json::Value;

use crate::error::INTERNAL_ERROR;

/// The levels Tollgate logs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Debug,
    Info,
    Warning,
    Error,
}

impl Level {
    fn to_mcp(self) -> LoggingLevel {
        match self {
            Level::Debug => LoggingLevel::Debug,
            Level::Info => LoggingLevel::Info,
            Level::Warning => LoggingLevel::Warning,
            Level::Error => LoggingLevel::Error,
        }
    }
}

/// Severity order of MCP's levels (RFC 5424, least severe first).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level a handshake-era client set with `logging/setLevel`, shared by the server's clones.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogLevels(Arc<Mutex<Option<LoggingLevel>>>);

impl LogLevels {
    pub(crate) fn set(&self, level: LoggingLevel) {
        if let Ok(mut chosen) = self.0.lock() {
            *chosen = Some(level);
        }
    }

    fn get(&self) -> Option<LoggingLevel> {
        self.0.lock().ok().and_then(|chosen| *chosen)
    }
}

/// Where one call's log messages go, and from which level.
pub(crate) struct ClientLog {
    /// The least severe level sent; `None`: the client asked for no messages.
    threshold: Option<u8>,
    peer: Peer<RoleServer>,
}

impl ClientLog {
    /// The request's own level when it carries one, else (handshake era only) the level set
    /// with `logging/setLevel`.
    pub(crate) fn for_request(levels: &LogLevels, context: &RequestContext<RoleServer>) -> Self {
        let stateless = context.meta.protocol_version().is_some();
        let level = context
            .meta
            .log_level()
            .or_else(|| (!stateless).then(|| levels.get()).flatten());
        ClientLog {
            threshold: level.map(rank),
            peer: context.peer.clone(),
        }
    }

    pub(crate) async fn send(&self, level: Level, message: String) {
        let level = level.to_mcp();
        if self
            .threshold
            .is_none_or(|threshold| rank(level) < threshold)
        {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level, Value::String(message))
            .with_logger("tollgate");
        // A client that went away is noticed by the transport, not here.
        let _ = self.peer.notify_logging_message(param).await;
    }

    /// A report of the call's work: its phase and count.
    pub(crate) async fn progress(&self, name: &str, done: u64, total: Option<u64>, phase: &str) {
        let of = total
            .map(|total| format!(" of {total}"))
            .unwrap_or_default();
        self.send(Level::Debug, format!("`{name}`: {phase} ({done}{of})"))
            .await;
    }

    /// How the call ended: its duration, and the error code when it failed.
    pub(crate) async fn finished(&self, name: &str, result: &CallToolResult, elapsed: Duration) {
        let millis = elapsed.as_millis();
        if result.is_error != Some(true) {
            self.send(Level::Info, format!("`{name}` finished in {millis} ms"))
                .await;
            return;
        }
        let code = result
            .content
            .first()
            .and_then(|block| block.as_text())
            .and_then(|text| serde_json::from_str::<Value>(&text.text).ok())
            .and_then(|body| body["error"]["code"].as_str().map(str::to_string))
            .unwrap_or_else(|| "UNKNOWN".to_string());
        let level = if code == INTERNAL_ERROR.as_str() {
            Level::Error
        } else {
            Level::Warning
        };
        self.send(
            level,
            format!("`{name}` failed with {code} after {millis} ms"),
        )
        .await;
    }
}
