//! The `ck` profile: ck's tools (seed 003) with ck's names, parameters and result pages, each a
//! thin adapter to `tollgate::api::context::dialects::ck`. Three names are the `context`
//! profile's (seed 001's tools of those names); the server never serves both.

pub(super) mod health_check;
pub(super) mod hybrid_search;
pub(super) mod index_status;
pub(super) mod regex_search;
pub(super) mod reindex;
pub(super) mod semantic_search;
