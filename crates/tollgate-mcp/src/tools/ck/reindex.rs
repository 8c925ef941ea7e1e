//! ck's `reindex`: rebuild the index (`force`) or update it.

use tollgate::api::context::dialects::ck::{self, CkReindexRequest, CkReindexResponse};
use tollgate::api::context::index_progress;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct Reindex;

impl Tool for Reindex {
    const NAME: &'static str = "reindex";
    const TITLE: &'static str = "Reindex (ck)";
    const DESCRIPTION: &'static str = "Force rebuild semantic index (`force`, the default), or \
update the files changed under `path`.";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    const LONG_RUNNING: bool = true;

    type Input = CkReindexRequest;
    type Output = CkReindexResponse;

    fn call(ctx: &ToolContext, input: CkReindexRequest) -> Result<CkReindexResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        // A cancelled call stops at its next file or commit, before it writes.
        Ok(ck::reindex(
            &ws,
            &input,
            &mut index_progress(ctx.control()),
        )?)
    }
}
