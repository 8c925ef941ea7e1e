//! `[sources.<name>]`: documents synced into the knowledge store. A `dir` (the files under a
//! workspace directory), a `git` repository's files at a ref (the workspace's own repository or
//! one inside it), or a `script` (a Lua file with `function source.fetch(since)`, run in the
//! user tools' sandbox). Every path is relative to the workspace and must stay inside it;
//! `include`/`exclude` globs are matched against a file's path relative to the source's root.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::PathPatterns;
use super::raw::{ConfigError, value_error};
use super::tools::{RawCredential, RawToolAccess, ToolAccess, resolve_access};
use crate::workspace::RepoPath;

/// Documents one source may hold when `max_documents` is not set.
pub const DEFAULT_SOURCE_MAX_DOCUMENTS: usize = 10_000;
/// Bytes of document bodies one source may hold when `max_bytes` is not set.
pub const DEFAULT_SOURCE_MAX_BYTES: u64 = 100 * 1024 * 1024;

/// `[sources.<name>]` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    /// `dir`, `git` or `script`.
    pub kind: Option<String>,
    /// `dir`: the directory; `git`: a directory inside the repository's tree.
    pub path: Option<String>,
    /// `git`: the repository, relative to the workspace (default: the workspace's own).
    pub repo: Option<String>,
    /// `git`: the commit, branch or tag read (default `HEAD`).
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// `script`: the Lua file.
    pub script: Option<String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    pub max_documents: Option<usize>,
    pub max_bytes: Option<u64>,
    /// `script`: the `host:port` pairs its `tollgate.http.request` may reach.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// `script`: headers the host adds to its requests, each from an environment variable.
    #[serde(default)]
    pub credentials: Vec<RawCredential>,
}

/// What a source reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    Dir {
        path: RepoPath,
    },
    Git {
        /// `None`: the workspace's own repository.
        repo: Option<RepoPath>,
        git_ref: String,
        /// A directory of the tree; `None`: the whole tree.
        path: Option<RepoPath>,
    },
    Script {
        script: RepoPath,
    },
}

impl SourceKind {
    /// `dir`, `git` or `script`: the prefix of the source's knowledge-store thread.
    pub fn as_str(&self) -> &'static str {
        match self {
            SourceKind::Dir { .. } => "dir",
            SourceKind::Git { .. } => "git",
            SourceKind::Script { .. } => "script",
        }
    }
}

/// One validated source.
#[derive(Debug, Clone)]
pub struct SourceConfig {
    pub name: String,
    pub kind: SourceKind,
    /// Empty: every file.
    pub include: PathPatterns,
    pub exclude: PathPatterns,
    pub max_documents: usize,
    pub max_bytes: u64,
    /// What a script source's HTTP requests may reach (nothing for the other kinds).
    pub access: ToolAccess,
}

impl SourceConfig {
    /// The knowledge-store thread its documents live in: `dir:<name>`, `git:<name>`,
    /// `script:<name>`.
    pub fn thread(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.name)
    }

    /// Whether a file at `path` (relative to the source's root) is one of its documents.
    pub fn selects(&self, path: &str) -> bool {
        (self.include.patterns().is_empty() || self.include.is_match(path))
            && !self.exclude.is_match(path)
    }
}

/// Every configured source, sorted by name.
#[derive(Debug, Clone, Default)]
pub struct SourcesConfig {
    pub sources: Vec<SourceConfig>,
}

/// The `[sources]` table: one entry per name.
pub type RawSources = BTreeMap<String, RawSource>;

/// Validates every `[sources.<name>]`; errors name the key (`sources.docs.path`).
pub fn resolve_sources(raw: &RawSources) -> Result<SourcesConfig, ConfigError> {
    let mut sources = Vec::with_capacity(raw.len());
    for (name, source) in raw {
        sources.push(resolve_one(name, source)?);
    }
    Ok(SourcesConfig { sources })
}

fn resolve_one(name: &str, raw: &RawSource) -> Result<SourceConfig, ConfigError> {
    let key = |field: &str| format!("sources.{name}.{field}");
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(value_error(
            &format!("sources.{name}"),
            "a source's name is 1 to 64 lower-case letters, digits, `-` and `_`".to_string(),
        ));
    }
    let path = |field: &str, text: &str| {
        RepoPath::new(text).map_err(|err| {
            value_error(
                &key(field),
                format!(
                    "`{text}`: {} (paths are relative to the workspace and stay inside it)",
                    err.reason()
                ),
            )
        })
    };
    let not_for = |field: &str, present: bool, kind: &str| {
        if present {
            Err(value_error(
                &key(field),
                format!("a `{kind}` source has no `{field}`"),
            ))
        } else {
            Ok(())
        }
    };
    if raw.kind.as_deref() != Some("script") {
        let kind = raw.kind.as_deref().unwrap_or("dir");
        not_for("allowed_hosts", !raw.allowed_hosts.is_empty(), kind)?;
        not_for("credentials", !raw.credentials.is_empty(), kind)?;
    }
    let kind = match raw.kind.as_deref() {
        Some("dir") => {
            not_for("repo", raw.repo.is_some(), "dir")?;
            not_for("ref", raw.git_ref.is_some(), "dir")?;
            not_for("script", raw.script.is_some(), "dir")?;
            let Some(text) = raw.path.as_deref() else {
                return Err(value_error(
                    &key("path"),
                    "a `dir` source needs `path`, the directory relative to the workspace"
                        .to_string(),
                ));
            };
            SourceKind::Dir {
                path: path("path", text)?,
            }
        }
        Some("git") => {
            not_for("script", raw.script.is_some(), "git")?;
            let repo = match raw.repo.as_deref().map(str::trim) {
                None | Some(".") | Some("./") => None,
                Some(text) => Some(path("repo", text)?),
            };
            let git_ref = raw.git_ref.as_deref().unwrap_or("HEAD").trim().to_string();
            if git_ref.is_empty() || git_ref.starts_with('-') {
                return Err(value_error(
                    &key("ref"),
                    "give a commit, branch or tag (default HEAD)".to_string(),
                ));
            }
            SourceKind::Git {
                repo,
                git_ref,
                path: raw
                    .path
                    .as_deref()
                    .map(|text| path("path", text))
                    .transpose()?,
            }
        }
        Some("script") => {
            not_for("path", raw.path.is_some(), "script")?;
            not_for("repo", raw.repo.is_some(), "script")?;
            not_for("ref", raw.git_ref.is_some(), "script")?;
            let Some(text) = raw.script.as_deref() else {
                return Err(value_error(
                    &key("script"),
                    "a `script` source needs `script`, a Lua file relative to the workspace"
                        .to_string(),
                ));
            };
            SourceKind::Script {
                script: path("script", text)?,
            }
        }
        Some(other) => {
            return Err(value_error(
                &key("kind"),
                format!("`{other}` is not a kind: dir, git or script"),
            ));
        }
        None => {
            return Err(value_error(
                &key("kind"),
                "missing: give kind = \"dir\", \"git\" or \"script\"".to_string(),
            ));
        }
    };
    let globs = |field: &str, list: &[String]| {
        PathPatterns::new(list).map_err(|err| value_error(&key(field), err.to_string()))
    };
    let max_documents = raw.max_documents.unwrap_or(DEFAULT_SOURCE_MAX_DOCUMENTS);
    if max_documents == 0 {
        return Err(value_error(
            &key("max_documents"),
            "0 would refuse every document".to_string(),
        ));
    }
    let max_bytes = raw.max_bytes.unwrap_or(DEFAULT_SOURCE_MAX_BYTES);
    if max_bytes == 0 {
        return Err(value_error(
            &key("max_bytes"),
            "0 would refuse every document".to_string(),
        ));
    }
    Ok(SourceConfig {
        name: name.to_string(),
        kind,
        include: globs("include", &raw.include)?,
        exclude: globs("exclude", &raw.exclude)?,
        max_documents,
        max_bytes,
        access: resolve_access(
            &format!("sources.{name}"),
            RawToolAccess {
                allowed_hosts: raw.allowed_hosts.clone(),
                credentials: raw.credentials.clone(),
            },
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    fn resolve(text: &str) -> Result<SourcesConfig, String> {
        let raw = RawConfig::from_toml(text, "tollgate.toml").map_err(|err| err.to_string())?;
        resolve_sources(&raw.sources).map_err(|err| err.to_string())
    }

    #[test]
    fn each_kind_resolves_with_its_keys() {
        let config = resolve(
            "[sources.docs]\nkind = \"dir\"\npath = \"docs\"\ninclude = [\"*.md\"]\n\
             [sources.own]\nkind = \"git\"\nref = \"main\"\n\
             [sources.jira]\nkind = \"script\"\nscript = \"sources/jira.lua\"\nmax_documents = 5\n",
        )
        .unwrap();
        let names: Vec<String> = config.sources.iter().map(SourceConfig::thread).collect();
        assert_eq!(names, ["dir:docs", "script:jira", "git:own"]);
        let docs = &config.sources[0];
        assert!(docs.selects("guide/auth.md"));
        assert!(!docs.selects("guide/auth.txt"));
        assert_eq!(
            config.sources[2].kind,
            SourceKind::Git {
                repo: None,
                git_ref: "main".to_string(),
                path: None
            }
        );
        assert_eq!(config.sources[1].max_documents, 5);
    }

    #[test]
    fn unknown_keys_escapes_and_missing_kinds_are_errors_naming_them() {
        let unknown =
            resolve("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\npaht = \"x\"\n").unwrap_err();
        assert!(unknown.contains("paht"), "{unknown}");
        let escape = resolve("[sources.docs]\nkind = \"dir\"\npath = \"../x\"\n").unwrap_err();
        assert!(
            escape.contains("sources.docs.path") && escape.contains(".."),
            "{escape}"
        );
        let absolute = resolve("[sources.docs]\nkind = \"dir\"\npath = \"/etc\"\n").unwrap_err();
        assert!(absolute.contains("sources.docs.path"), "{absolute}");
        let kind = resolve("[sources.docs]\nkind = \"web\"\n").unwrap_err();
        assert!(kind.contains("sources.docs.kind"), "{kind}");
        let missing = resolve("[sources.docs]\npath = \"docs\"\n").unwrap_err();
        assert!(missing.contains("sources.docs.kind"), "{missing}");
        let wrong =
            resolve("[sources.docs]\nkind = \"dir\"\npath = \"d\"\nref = \"main\"\n").unwrap_err();
        assert!(wrong.contains("sources.docs.ref"), "{wrong}");
        let name = resolve("[sources.Docs]\nkind = \"dir\"\npath = \"d\"\n").unwrap_err();
        assert!(name.contains("sources.Docs"), "{name}");
    }

    #[test]
    fn the_readmes_sources_example_resolves() {
        let readme = include_str!("../../../../README.md");
        let start = readme
            .find("```toml\n[sources.handbook]")
            .expect("README.md shows [sources.handbook]")
            + "```toml\n".len();
        let end = start + readme[start..].find("```").unwrap();
        let config = resolve(&readme[start..end]).unwrap();
        let threads: Vec<String> = config.sources.iter().map(SourceConfig::thread).collect();
        assert_eq!(threads, ["git:adr", "dir:handbook", "script:tickets"]);
    }
}
