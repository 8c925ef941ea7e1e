//! `[tools]`: the team's own Lua tools. Where they are (`dirs`, besides `.tollgate/tools`), the
//! limits of every call (`timeout_ms`, `memory_mb`, `max_instructions`), and per tool
//! (`[tools.<name>]`) the hosts its `tollgate.http.request` may reach and the credentials the
//! host adds to those requests from named environment variables.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::raw::{ConfigError, value_error};

/// A call's wall-clock limit when none is configured.
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 5_000;
/// A call's Lua heap limit when none is configured.
pub const DEFAULT_TOOL_MEMORY_MB: u64 = 64;
/// A call's VM instruction budget when none is configured: far more than a tool that only
/// shapes data and calls the host needs, far less than a loop that never ends reaches.
pub const DEFAULT_TOOL_MAX_INSTRUCTIONS: u64 = 200_000_000;

/// The `[tools]` table as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct RawTools {
    /// Directories of `*.lua` tools, relative to the workspace, besides `.tollgate/tools`.
    pub dirs: Option<Vec<String>>,
    pub timeout_ms: Option<u64>,
    pub memory_mb: Option<u64>,
    pub max_instructions: Option<u64>,
    /// `[tools.<name>]`: what one tool may reach.
    #[serde(flatten)]
    pub tool: BTreeMap<String, RawToolAccess>,
}

/// `[tools.<name>]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawToolAccess {
    /// `host:port` pairs `tollgate.http.request` may reach (redirects included).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Headers the host adds to the tool's HTTP requests, each from an environment variable.
    #[serde(default)]
    pub credentials: Vec<RawCredential>,
}

/// `{ header = "X-Api-Key", env = "JIRA_TOKEN" }`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawCredential {
    pub header: String,
    pub env: String,
}

/// Validated `[tools]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsConfig {
    pub dirs: Vec<String>,
    pub timeout: Duration,
    pub memory_bytes: usize,
    pub max_instructions: u64,
    pub access: BTreeMap<String, ToolAccess>,
}

/// What one tool's HTTP requests may reach and carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolAccess {
    /// Lower-cased `host:port`.
    pub allowed_hosts: Vec<String>,
    pub credentials: Vec<RawCredential>,
}

impl RawTools {
    /// Stacks `higher` on top of `self`: its scalars and its tool tables win.
    pub fn overlay(self, higher: RawTools) -> RawTools {
        let mut tool = self.tool;
        tool.extend(higher.tool);
        RawTools {
            dirs: higher.dirs.or(self.dirs),
            timeout_ms: higher.timeout_ms.or(self.timeout_ms),
            memory_mb: higher.memory_mb.or(self.memory_mb),
            max_instructions: higher.max_instructions.or(self.max_instructions),
            tool,
        }
    }

    pub fn resolve(self) -> Result<ToolsConfig, ConfigError> {
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_TOOL_TIMEOUT_MS);
        if !(1..=600_000).contains(&timeout_ms) {
            return Err(value_error(
                "tools.timeout_ms",
                format!("must be between 1 and 600000 (10 minutes), got {timeout_ms}"),
            ));
        }
        let memory_mb = self.memory_mb.unwrap_or(DEFAULT_TOOL_MEMORY_MB);
        if !(1..=4096).contains(&memory_mb) {
            return Err(value_error(
                "tools.memory_mb",
                format!("must be between 1 and 4096, got {memory_mb}"),
            ));
        }
        let max_instructions = self
            .max_instructions
            .unwrap_or(DEFAULT_TOOL_MAX_INSTRUCTIONS);
        if max_instructions < 1_000 {
            return Err(value_error(
                "tools.max_instructions",
                format!("must be at least 1000, got {max_instructions}"),
            ));
        }
        let mut access = BTreeMap::new();
        for (name, raw) in self.tool {
            let resolved = resolve_access(&format!("tools.{name}"), raw)?;
            access.insert(name, resolved);
        }
        Ok(ToolsConfig {
            dirs: self.dirs.unwrap_or_default(),
            timeout: Duration::from_millis(timeout_ms),
            memory_bytes: usize::try_from(memory_mb * 1024 * 1024).unwrap_or(usize::MAX),
            max_instructions,
            access,
        })
    }
}

/// Validates what one tool (or script source) may reach; `origin` names its table in errors
/// (`tools.jira`, `sources.tickets`).
pub(super) fn resolve_access(origin: &str, raw: RawToolAccess) -> Result<ToolAccess, ConfigError> {
    let mut allowed_hosts = Vec::new();
    for host in raw.allowed_hosts {
        let valid = host
            .rsplit_once(':')
            .is_some_and(|(name, port)| !name.is_empty() && port.parse::<u16>().is_ok());
        if !valid {
            return Err(value_error(
                &format!("{origin}.allowed_hosts"),
                format!("`{host}` is not host:port (e.g. \"api.example.com:443\")"),
            ));
        }
        allowed_hosts.push(host.to_ascii_lowercase());
    }
    for credential in &raw.credentials {
        if credential.header.trim().is_empty() || credential.env.trim().is_empty() {
            return Err(value_error(
                &format!("{origin}.credentials"),
                "each credential needs a header and an env variable name".to_string(),
            ));
        }
    }
    Ok(ToolAccess {
        allowed_hosts,
        credentials: raw.credentials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    #[test]
    fn tools_table_holds_limits_and_per_tool_access() {
        let raw = RawConfig::from_toml(
            "[tools]\ndirs = [\"scripts\"]\ntimeout_ms = 250\n[tools.jira]\nallowed_hosts = [\"Jira.example.com:443\"]\ncredentials = [{ header = \"X-Token\", env = \"JIRA_TOKEN\" }]\n",
            "tollgate.toml",
        )
        .unwrap();
        let config = raw.tools.resolve().unwrap();
        assert_eq!(config.dirs, ["scripts"]);
        assert_eq!(config.timeout, Duration::from_millis(250));
        assert_eq!(config.memory_bytes, 64 * 1024 * 1024);
        let jira = &config.access["jira"];
        assert_eq!(jira.allowed_hosts, ["jira.example.com:443"]);
        assert_eq!(jira.credentials[0].env, "JIRA_TOKEN");

        let bad = RawConfig::from_toml("[tools.x]\nallowed_hosts = [\"nohost\"]\n", "t")
            .unwrap()
            .tools
            .resolve()
            .unwrap_err();
        assert!(bad.to_string().contains("tools.x.allowed_hosts"), "{bad}");
        assert!(RawConfig::from_toml("[tools.x]\nallowed = []\n", "t").is_err());
    }
}
