//! Tollgate's core: everything the CLI, the MCP server and the GitHub Action do, as plain Rust.
//!
//! The review pipeline reads top-down:
//!
//! 1. [`diff`] parses a unified diff (or asks git for one) into files, hunks and lines.
//! 2. [`review`] computes preflight signals, classifies the change, scores its risk, runs the
//!    deterministic checks, [`secrets`] detection and [`invariants`] (while the [`analyzers`],
//!    tsc and semgrep, run beside them), then filters the [`findings`] and decides the gate.
//! 3. [`report`] renders the [`findings::ReviewResult`] as JSON, SARIF or Markdown.
//!
//! The core never prints, never exits and never reads the environment or the working directory:
//! front ends pass those in.

pub mod analyzers;
pub mod api;
pub mod ci_log;
pub mod clock;
pub mod config;
pub mod control;
pub mod diff;
pub mod error_code;
pub mod findings;
pub mod ids;
pub mod input;
pub mod invariants;
pub mod learnings;
pub mod llm;
#[cfg(feature = "index")]
pub mod memory;
pub mod plan;
pub(crate) mod process;
pub mod publish;
pub mod replay;
pub mod report;
pub mod review;
pub mod schemas;
pub mod secrets;
pub mod session;
#[cfg(feature = "index")]
pub mod sources;
pub mod store;
pub mod workspace;

pub use error_code::ErrorCode;

/// The version reported in results and SARIF.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
