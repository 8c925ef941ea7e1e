//! The MCP server driven by rmcp's own client over an in-memory duplex pipe: tool lists per
//! profile, every tool with valid and invalid arguments, error codes, both protocol eras, and
//! every structured result checked against the output schema the tool declared.
//!
//! One test binary, one module per profile (`server` holds the profile-independent checks).

mod common;
mod context;
mod plan;
mod review;
mod server;
mod session;
