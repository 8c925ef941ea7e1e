//! Context-Engine's `qdrant_index`: the workspace's index brought up to date, or rebuilt.

use tollgate::api::context::dialects::context_engine::{self, IndexRequest, IndexResponse};
use tollgate::api::context::index_progress;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct QdrantIndex;

impl Tool for QdrantIndex {
    const NAME: &'static str = "qdrant_index";
    const TITLE: &'static str = "Index (Context-Engine)";
    const DESCRIPTION: &'static str = "Index or reindex the workspace's code (only changed files \
are read; `recreate` rebuilds everything). The index is Tollgate's own, not a Qdrant collection.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    const LONG_RUNNING: bool = true;

    type Input = IndexRequest;
    type Output = IndexResponse;

    fn call(ctx: &ToolContext, input: IndexRequest) -> Result<IndexResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::qdrant_index(
            &ws,
            &input,
            &mut index_progress(ctx.control()),
        )?)
    }
}
