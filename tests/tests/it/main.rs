//! End-to-end tests of the `tollgate` and `tollgate-action` binaries: one test target, one
//! module per topic.

#![allow(
    clippy::print_stderr,
    reason = "tests explain skipped external tools on stderr"
)]

mod action;
mod analyzers;
mod baseline_allowlist;
mod ci_formats;
mod config_precedence;
mod confine;
mod git_sources;
mod index;
mod init_and_invariants;
mod input_limits;
mod leaks;
mod learn;
mod mcp;
mod memory;
mod model_setup;
mod plan_cli;
mod plan_execute;
mod plan_mermaid;
mod readme_examples;
mod replay;
mod review_cli;
mod review_model;
mod sarif_validation;
mod seeds;
mod session;
mod store_url;
mod synced_sources;
mod user_tools;
mod util;

use tollgate_testkit::{fake_github, fake_llm};
