//! Shared helpers for the end-to-end tests and the benchmark.
