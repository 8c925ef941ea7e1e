//! `git_commit_retrieval`: a context tool (upstream's name and parameters).

use tollgate::api::context::git_commit_retrieval;
use tollgate::api::context::request::{CommitResponse, GitCommitRetrievalRequest};

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct GitCommitRetrieval;

impl Tool for GitCommitRetrieval {
    const NAME: &'static str = "git_commit_retrieval";
    const TITLE: &'static str = "Commit retrieval";
    const DESCRIPTION: &'static str = "Search commit history (messages and touched paths) for a \
query; filter by date and author. Use to find why or when code changed.";
    const GROUP: Group = Group::In(Profile::Context);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = GitCommitRetrievalRequest;
    type Output = CommitResponse;

    fn call(
        ctx: &ToolContext,
        input: GitCommitRetrievalRequest,
    ) -> Result<CommitResponse, ToolError> {
        let ws = ctx.open_workspace()?;
        Ok(git_commit_retrieval(&ws, &input)?)
    }
}
