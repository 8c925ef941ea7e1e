//! Shared helpers for the end-to-end tests and the benchmark.

/// Synthetic repositories and diffs for the benchmark (`tollgate-bench`) and size-sensitive tests.
pub mod workload;
