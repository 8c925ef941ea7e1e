//! `get_file`: a context tool (upstream's name and parameters).

use tollgate::api::context::get_file;
use tollgate::api::context::request::{FileContent, GetFileRequest};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct GetFile;

impl Tool for GetFile {
    const NAME: &'static str = "get_file";
    const TITLE: &'static str = "Get file";
    const DESCRIPTION: &'static str = "Read one workspace file (secrets masked), with size, lines, \
mtime and git status. Paths outside the workspace are refused.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = GetFileRequest;
    type Output = FileContent;

    fn call(ctx: &ToolContext, input: GetFileRequest) -> Result<FileContent, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(get_file(&ws, &input)?)
    }
}
