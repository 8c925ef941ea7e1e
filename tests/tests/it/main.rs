//! End-to-end tests of the `tollgate` binary: one test target, one module per topic.

mod baseline_allowlist;
mod config_precedence;
mod git_sources;
mod init_and_invariants;
mod review_cli;
mod sarif_validation;
mod util;
