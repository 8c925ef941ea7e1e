//! Tollgate's hybrid code index, its own crate because of its heavy dependencies (tantivy,
//! hnsw_rs, tree-sitter grammars). It knows nothing of reviews or plans: the core's `context`
//! module wraps it for the front ends.
