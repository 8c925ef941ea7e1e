//! Context-Engine's `qdrant_status`: the workspace index's state.

use tollgate::api::context::dialects::context_engine::{self, StatusRequest, StatusResponse};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct QdrantStatus;

impl Tool for QdrantStatus {
    const NAME: &'static str = "qdrant_status";
    const TITLE: &'static str = "Index status (Context-Engine)";
    const DESCRIPTION: &'static str = "The workspace index's state: exists, chunk count, last \
update, embedder, size, health. The index is Tollgate's own, not a Qdrant collection.";
    const GROUP: Group = Group::In(Profile::ContextEngine);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = StatusRequest;
    type Output = StatusResponse;

    fn call(ctx: &ToolContext, input: StatusRequest) -> Result<StatusResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(context_engine::qdrant_status(&ws, &input)?)
    }
}
