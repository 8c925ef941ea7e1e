//! `index_status`: a context tool (upstream's name and parameters).

use tollgate::api::context::index_status;
use tollgate::api::context::request::IndexStatusResponse;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, NoInput, Tool, ToolContext};

pub(crate) struct IndexStatus;

impl Tool for IndexStatus {
    const NAME: &'static str = "index_status";
    const TITLE: &'static str = "Index status";
    const DESCRIPTION: &'static str = "Report the code index's health: files, chunks, commits, \
embedder, last indexed, size, problems.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = IndexStatusResponse;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<IndexStatusResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(index_status(&ws)?)
    }
}
