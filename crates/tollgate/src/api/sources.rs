//! `tollgate sources sync|list` and the sources of `/tools/sources`: the configured
//! `[sources.<name>]` synced into the knowledge store ([`crate::sources`]), and each with the
//! documents its thread holds.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::ApiError;
use crate::config::{RawConfig, SourcesConfig, resolve_sources};
use crate::memory::Memory;
use crate::sources::{self, SourceError, SourceSync, SyncContext};

impl From<SourceError> for ApiError {
    fn from(err: SourceError) -> ApiError {
        ApiError::new(err.code(), err.to_string())
    }
}

/// What `sources sync` did, source by source.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SyncReport {
    pub sources: Vec<SourceSync>,
}

/// One configured source and what its thread holds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourceListing {
    pub name: String,
    pub kind: String,
    /// Its thread, and its `source` in `/tools/search`.
    pub source: String,
    pub document_count: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SourcesList {
    pub sources: Vec<SourceListing>,
}

/// The validated `[sources]` of `layers`.
pub fn configured(layers: &RawConfig) -> Result<SourcesConfig, ApiError> {
    resolve_sources(&layers.sources).map_err(|err| ApiError::invalid("sources", err.to_string()))
}

/// Syncs source `name`, or every configured source (in name order; the first failure stops
/// the rest and says which). `root` is the workspace, `env` the front end's environment (a
/// script's configuration layers and host API read it).
pub fn sync(
    root: &Path,
    layers: &RawConfig,
    env: &[(String, String)],
    memory: &Memory<'_>,
    name: Option<&str>,
) -> Result<SyncReport, ApiError> {
    let config = configured(layers)?;
    let root = root.canonicalize().map_err(|err| {
        ApiError::new(
            crate::ErrorCode::IoError,
            format!("the workspace {}: {err}", root.display()),
        )
    })?;
    let chosen: Vec<_> = match name {
        None => config.sources.iter().collect(),
        Some(name) => match config.sources.iter().find(|source| source.name == name) {
            Some(source) => vec![source],
            None => {
                let known: Vec<&str> = config.sources.iter().map(|s| s.name.as_str()).collect();
                return Err(ApiError::invalid(
                    "name",
                    format!(
                        "no source `{name}` is configured ({}); add [sources.{name}] to tollgate.toml",
                        if known.is_empty() {
                            "there are none".to_string()
                        } else {
                            format!("the sources are {}", known.join(", "))
                        }
                    ),
                ));
            }
        },
    };
    let runner = script_runner(&root, env);
    let context = SyncContext {
        root: &root,
        env,
        run_script: runner
            .as_deref()
            .map(|run| run as sources::ScriptRunner<'_>),
    };
    let mut report = Vec::with_capacity(chosen.len());
    for source in chosen {
        report.push(sources::sync_source(context, source, memory)?);
    }
    Ok(SyncReport { sources: report })
}

/// Every configured source with the documents its thread holds (0 before its first sync).
pub fn list(config: &SourcesConfig, memory: &Memory<'_>) -> Result<SourcesList, ApiError> {
    let threads = memory.threads()?;
    Ok(SourcesList {
        sources: config
            .sources
            .iter()
            .map(|source| {
                let thread = source.thread();
                SourceListing {
                    name: source.name.clone(),
                    kind: source.kind.as_str().to_string(),
                    document_count: threads
                        .iter()
                        .find(|summary| summary.thread_id == thread)
                        .map_or(0, |summary| summary.entry_count),
                    source: thread,
                }
            })
            .collect(),
    })
}

/// The runner of script sources: the user tools' sandbox, with the workspace's environment.
#[allow(clippy::type_complexity)]
pub(crate) fn script_runner<'a>(
    root: &'a std::path::Path,
    env: &'a [(String, String)],
) -> Option<
    Box<
        dyn Fn(
                &crate::config::SourceConfig,
                &crate::workspace::RepoPath,
                Option<String>,
            ) -> Result<serde_json::Value, (crate::ErrorCode, String)>
            + Sync
            + 'a,
    >,
> {
    #[cfg(feature = "usertools")]
    {
        Some(Box::new(move |source, script, since| {
            super::usertools::fetch_source(
                root,
                env.to_vec(),
                &source.name,
                script,
                source.access.clone(),
                since,
            )
            .map_err(|err| (err.code(), err.to_string()))
        }))
    }
    #[cfg(not(feature = "usertools"))]
    {
        let _ = (root, env);
        None
    }
}
