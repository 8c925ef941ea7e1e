//! `get_workspace_info`: what this server works on and offers (a Tollgate extension; upstream
//! documented the name without shipping it), with the code index's health.

use schemars::JsonSchema;
use serde::Serialize;
use tollgate::config::{CONFIG_FILE_NAME, DEFAULT_INVARIANTS_PATH};

use crate::error::ToolError;
use crate::server::protocol_versions;
use crate::tool::{Group, Hints, NoInput, Tool, ToolContext};

pub(crate) struct GetWorkspaceInfo;

/// The workspace and the server.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WorkspaceInfo {
    /// Absolute path of the workspace root; paths in arguments and findings are relative to it.
    workspace_path: String,
    /// The root of the git repository containing the workspace, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    git_root: Option<String>,
    /// The checked-out branch; absent when `HEAD` is detached or there is no repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    /// The commit `HEAD` points at; absent before the first commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    head_sha: Option<String>,
    /// `tollgate.toml` when the workspace has one (it configures `review_diff`).
    #[serde(skip_serializing_if = "Option::is_none")]
    config_file: Option<String>,
    /// `.review-invariants.yml` when the workspace has one (used by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    invariants_file: Option<String>,
    /// Tollgate's version.
    tool_version: String,
    /// MCP protocol versions this server accepts.
    protocol_versions: Vec<String>,
    /// The tool profiles being served (utilities come with every profile).
    profiles: Vec<String>,
    /// Names of the served tools.
    tools: Vec<String>,
    /// Files in the code index (0 before `index_workspace` or the first search).
    total_files: usize,
    /// The code index's health (the `index_status` tool has the details).
    index_status: IndexHealth,
    /// Problems reading the repository state (the rest of the answer still holds).
    warnings: Vec<String>,
}

/// Upstream's `index_status` block.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct IndexHealth {
    /// An index exists and every channel it has data for can be served.
    healthy: bool,
    /// RFC 3339; absent before the first index run.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_indexed: Option<String>,
    /// Bytes on disk.
    index_size: u64,
    /// What is wrong, when something is.
    problems: Vec<String>,
}

impl Tool for GetWorkspaceInfo {
    const NAME: &'static str = "get_workspace_info";
    const TITLE: &'static str = "Workspace info";
    const DESCRIPTION: &'static str = "Describe the served workspace (root, git branch and HEAD, \
config files present), the server (version, profiles, tools) and the code index's health.";
    const GROUP: Group = Group::Utility;
    const VERSION: &'static str = "1.1.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = NoInput;
    type Output = WorkspaceInfo;

    fn call(ctx: &ToolContext, _input: NoInput) -> Result<WorkspaceInfo, ToolError> {
        let workspace = ctx.workspace();
        let mut warnings = Vec::new();
        let head = match tollgate::diff::head_info(workspace) {
            Ok(head) => head,
            Err(err) => {
                warnings.push(format!("cannot read the git repository: {err}"));
                None
            }
        };
        let (git_root, branch, head_sha) = match head {
            Some(head) => (
                head.root.map(|root| root.display().to_string()),
                head.branch,
                head.commit,
            ),
            None => (None, None, None),
        };
        let index = tollgate::workspace::IndexedWorkspace::open(workspace)
            .map_err(tollgate::api::context::ContextError::unreadable)
            .and_then(|ws| tollgate::api::context::index_status(&ws));
        let (total_files, index_status) = match index {
            Ok(status) => (
                status.files,
                IndexHealth {
                    healthy: status.healthy,
                    last_indexed: status.last_indexed,
                    index_size: status.index_size,
                    problems: if status.exists {
                        status.problems
                    } else {
                        vec!["no index yet: call index_workspace".to_string()]
                    },
                },
            ),
            Err(err) => {
                warnings.push(format!("cannot read the code index: {err}"));
                (
                    0,
                    IndexHealth {
                        healthy: false,
                        last_indexed: None,
                        index_size: 0,
                        problems: vec![err.to_string()],
                    },
                )
            }
        };
        let present = |name: &str| workspace.join(name).is_file().then(|| name.to_string());
        let catalog = ctx.catalog();
        Ok(WorkspaceInfo {
            workspace_path: workspace.display().to_string(),
            git_root,
            branch,
            head_sha,
            config_file: present(CONFIG_FILE_NAME),
            invariants_file: present(DEFAULT_INVARIANTS_PATH),
            tool_version: tollgate::VERSION.to_string(),
            protocol_versions: protocol_versions(),
            profiles: catalog.profiles.iter().map(|p| p.to_string()).collect(),
            tools: catalog
                .registry
                .over_mcp()
                .iter()
                .map(|entry| entry.name.to_string())
                .collect(),
            total_files,
            index_status,
            warnings,
        })
    }
}
