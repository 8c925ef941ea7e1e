//! The `context-engine` profile: Context-Engine's indexer tools (seed 000) with its names,
//! parameters and result shapes, each a thin adapter to
//! `tollgate::api::context::dialects::context_engine`. `search_tests_for` and
//! `search_callers_for` are also the `context` profile's names (seed 001's tools); the server
//! never serves both.

pub(super) mod change_history_for_path;
pub(super) mod code_search;
pub(super) mod expand_query;
pub(super) mod info_request;
pub(super) mod qdrant_index;
pub(super) mod qdrant_status;
pub(super) mod repo_search;
pub(super) mod search_callers_for;
pub(super) mod search_config_for;
pub(super) mod search_importers_for;
pub(super) mod search_tests_for;
