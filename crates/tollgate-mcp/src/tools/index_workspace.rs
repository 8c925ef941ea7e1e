//! `index_workspace`: a context tool (upstream's name and parameters).

use tollgate::api::context::request::{IndexReport, IndexWorkspaceRequest};
use tollgate::api::context::{index_progress, index_workspace};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct IndexWorkspace;

impl Tool for IndexWorkspace {
    const NAME: &'static str = "index_workspace";
    const TITLE: &'static str = "Index workspace";
    const DESCRIPTION: &'static str = "Build or update the code index under .tollgate/index (only \
changed files are re-read). Searches build it on first use; call this to refresh it after large \
changes.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    const LONG_RUNNING: bool = true;

    type Input = IndexWorkspaceRequest;
    type Output = IndexReport;

    fn call(ctx: &ToolContext, input: IndexWorkspaceRequest) -> Result<IndexReport, ToolError> {
        let ws = ctx.open_workspace()?;
        // Progress as one growing count over every phase; a cancelled call stops at its next
        // file or commit, before it writes.
        Ok(index_workspace(
            &ws,
            &input,
            &mut index_progress(ctx.control()),
        )?)
    }
}
