//! `tollgate sources sync [NAME]|list`: the configured `[sources.<name>]` synced into the
//! workspace's knowledge store (the one a running server reads) through `api::sources`.

use anyhow::{Context, anyhow};
use tollgate::api::ApiError;
use tollgate::config::{self, ConfigFile, RawConfig};
use tollgate::memory::Memory;
use tollgate::workspace::HashedEmbedder;

use super::ExitStatus;
use crate::args::{SourcesArgs, SourcesCommand};

pub fn run(args: SourcesArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .repo
        .canonicalize()
        .with_context(|| format!("cannot use the workspace {}", args.repo.display()))?;
    let env = super::store::env();
    let layers = config::load(
        ConfigFile::Discover(&root),
        env.clone(),
        RawConfig::default(),
    )?;
    let store = super::store::open(&root)?;
    // The embedder the MCP server and HTTP API search with.
    let embedder = HashedEmbedder;
    let memory = Memory::new(&store, &embedder);
    match args.command {
        SourcesCommand::Sync { name } => {
            let report =
                tollgate::api::sources::sync(&root, &layers, &env, &memory, name.as_deref())
                    .map_err(coded)?;
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                if report.sources.is_empty() {
                    eprintln!("no sources (add [sources.<name>] to tollgate.toml)");
                }
                for synced in &report.sources {
                    outln!(
                        "{}  {} documents: {} added, {} updated, {} unchanged, {} deleted",
                        synced.thread,
                        synced.documents,
                        synced.added,
                        synced.updated,
                        synced.unchanged,
                        synced.deleted
                    );
                    for skipped in &synced.skipped {
                        eprintln!("  skipped {}: {}", skipped.id, skipped.reason);
                    }
                    if synced.secrets_masked > 0 {
                        eprintln!(
                            "  note: {} secret(s) were masked before storing",
                            synced.secrets_masked
                        );
                    }
                }
            }
        }
        SourcesCommand::List => {
            let configured = tollgate::api::sources::configured(&layers).map_err(coded)?;
            let listing = tollgate::api::sources::list(&configured, &memory).map_err(coded)?;
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&listing)?);
            } else {
                if listing.sources.is_empty() {
                    eprintln!("no sources (add [sources.<name>] to tollgate.toml)");
                }
                for source in &listing.sources {
                    outln!("{}  {} documents", source.source, source.document_count);
                }
            }
        }
    }
    Ok(ExitStatus::Pass)
}

fn coded(err: ApiError) -> anyhow::Error {
    anyhow!("[{}] {}", err.code, err.message)
}
