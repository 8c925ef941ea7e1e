//! What the session tools share: the workspace's store and the session settings.
//!
//! An MCP server is a long-lived process, so the sessions it starts run in it, on worker
//! threads; every call opens the store afresh (SQLite in WAL mode serves many connections), so
//! a CLI in another process sees and steers the same sessions.

use tollgate::session::SessionSettings;
use tollgate::store::Store;

use crate::error::ToolError;
use crate::tool::ToolContext;

pub(crate) fn store(ctx: &ToolContext) -> Result<Store, ToolError> {
    crate::tools::open_store(ctx)
}

pub(crate) fn settings() -> SessionSettings {
    SessionSettings::default()
}

/// Runs a claimed session to its end on a thread of its own.
pub(crate) fn spawn_runner(
    ctx: &ToolContext,
    claimed: tollgate::session::ClaimedSession,
) -> Result<(), ToolError> {
    let layers = crate::tools::workspace_settings(ctx)?;
    let config = layers
        .clone()
        .resolve()
        .map_err(|err| ToolError::new(crate::error::INVALID_INPUT, err.to_string()))?;
    let workspace = ctx.workspace().to_path_buf();
    let id = claimed.id().to_string();
    std::thread::Builder::new()
        .name(format!("session-{id}"))
        .spawn(move || {
            let result = Store::open_configured(&workspace, &layers.store)
                .map_err(tollgate::session::SessionError::from)
                .and_then(|store| {
                    tollgate::session::drive(
                        &store,
                        &workspace,
                        &config,
                        claimed,
                        &settings(),
                        &|_| {},
                    )
                });
            match result {
                Ok(status) => {
                    tracing::info!(session = %id, status = %status.status, "review session stopped")
                }
                Err(err) => tracing::error!(session = %id, "review session runner failed: {err}"),
            }
        })
        .map_err(|err| {
            ToolError::new(
                crate::error::INTERNAL_ERROR,
                format!("cannot start a worker thread: {err}"),
            )
        })?;
    Ok(())
}
