//! ck's `index_status`: the index's counts.

use tollgate::api::context::dialects::ck::{self, CkIndexStatus, CkPathRequest};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct IndexStatus;

impl Tool for IndexStatus {
    const NAME: &'static str = "index_status";
    const TITLE: &'static str = "Index status (ck)";
    const DESCRIPTION: &'static str = "Get index statistics: indexed, files, chunks, size, last \
update (the workspace's one index).";
    const GROUP: Group = Group::In(Profile::Ck);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = CkPathRequest;
    type Output = CkIndexStatus;

    fn call(ctx: &ToolContext, input: CkPathRequest) -> Result<CkIndexStatus, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(ck::index_status(&ws, &input)?)
    }
}
