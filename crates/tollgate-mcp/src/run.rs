//! Blocking entry points for front ends: each builds a tokio runtime, serves, and returns when
//! the client goes away (stdio) or the process is asked to stop (HTTP).

use std::net::SocketAddr;

use crate::http::{HttpError, HttpOptions, HttpServer};
use crate::server::{Server, ServerError, serve_stdio};

/// Serves `server` on stdin/stdout until stdin closes.
pub fn run_stdio(server: Server) -> Result<(), ServerError> {
    runtime()
        .map_err(|err| ServerError::Stdio(err.to_string()))?
        .block_on(serve_stdio(server))
}

/// Binds per `options`, calls `on_listening` with the bound address (the port is chosen when 0
/// was asked for), and serves until Ctrl-C or SIGTERM.
pub fn run_http(
    server: Server,
    options: HttpOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), HttpError> {
    runtime().map_err(HttpError::Serve)?.block_on(async move {
        let http = HttpServer::bind(server, options).await?;
        on_listening(http.local_addr()?);
        http.run(stop_signal()).await
    })
}

/// One thread for the transports; tools run on the blocking pool, so a slow review never holds
/// up the protocol.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Completes on Ctrl-C, or on SIGTERM where there is one. If a handler cannot be installed, the
/// server runs until killed.
async fn stop_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    tracing::info!("shutting down");
}
