//! `index_workspace`: a context tool (upstream's name and parameters).

use std::ops::ControlFlow;

use tollgate::context::Progress;
use tollgate::context::request::{IndexReport, IndexWorkspaceRequest};
use tollgate::context::{Workspace, index_workspace};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct IndexWorkspace;

impl Tool for IndexWorkspace {
    const NAME: &'static str = "index_workspace";
    const TITLE: &'static str = "Index workspace";
    const DESCRIPTION: &'static str = "Build or update the code index under .tollgate/index: only changed files are re-read (size and mtime, then content hash), removed files leave, commit history is brought up to HEAD. path limits the update to a subdirectory. Fails with INDEX_BUSY while another indexer runs.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    type Input = IndexWorkspaceRequest;
    type Output = IndexReport;

    fn call(ctx: &ToolContext, input: IndexWorkspaceRequest) -> Result<IndexReport, ToolError> {
        let ws = Workspace::open(ctx.workspace())?;
        let control = ctx.control();
        // Progress as files done of the changed total; a cancelled call stops before it commits.
        let mut on_progress = |progress: Progress| {
            match progress {
                Progress::Walked { files } => {
                    control.report(0, None, format!("found {files} files"));
                }
                Progress::Processed { done, total } => {
                    control.report(done as u64, Some(total as u64), "indexing changed files");
                }
                Progress::Committing => control.report(0, None, "writing the index"),
                Progress::History => control.report(0, None, "indexing commit history"),
            }
            if control.is_cancelled() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        Ok(index_workspace(&ws, &input, &mut on_progress)?)
    }
}
