//! The store every command opens: the core's one recipe ([`Store::open_configured`]) over the
//! workspace's `tollgate.toml`, the environment (`TOLLGATE_STORE_URL`) and the global
//! `--store URL` flag, which `main` records once before any command runs.
//!
//! The flag reaches every configuration the CLI builds (the model cache of a review, a
//! background session process, the MCP server's tools) as the value of `TOLLGATE_STORE_URL` in
//! [`env`], which is what each command hands `config::load` instead of `std::env::vars()`.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use tollgate::config::{self, ConfigFile, RawConfig, RawStore};
use tollgate::store::Store;

/// The variable `--store` stands in for.
const STORE_VAR: &str = "TOLLGATE_STORE_URL";

static STORE_FLAG: OnceLock<Option<String>> = OnceLock::new();

/// Records `--store` (called once, by `main`).
pub(crate) fn set_flag(url: Option<String>) {
    let _ = STORE_FLAG.set(url);
}

/// `--store`, when given.
pub(crate) fn flag() -> Option<String> {
    STORE_FLAG.get().cloned().flatten()
}

/// The process's environment with `--store` as `TOLLGATE_STORE_URL` (the flag wins over the
/// variable).
pub(crate) fn env() -> Vec<(String, String)> {
    let flag = flag();
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| name != STORE_VAR || flag.is_none())
        .collect();
    if let Some(url) = flag {
        env.push((STORE_VAR.to_string(), url));
    }
    env
}

/// The store settings of the workspace at `repo`: `[store]` < `TOLLGATE_STORE_URL` < `--store`.
pub(crate) fn settings(repo: &Path) -> anyhow::Result<RawStore> {
    Ok(config::load(ConfigFile::Discover(repo), env(), RawConfig::default())?.store)
}

/// The configured store of the workspace at `repo`.
pub(crate) fn open(repo: &Path) -> anyhow::Result<Store> {
    Store::open_configured(repo, &settings(repo)?)
        .with_context(|| format!("opening the store of {}", repo.display()))
}

/// Whether a store other than the workspace's default SQLite file is configured (a command that
/// only looks may skip the default one when it does not exist yet).
pub(crate) fn configured(repo: &Path) -> bool {
    settings(repo).map_or(true, |store| {
        store.url.is_some_and(|url| !url.trim().is_empty())
    })
}

/// `tollgate store migrate`: the copy's report as JSON.
pub(crate) fn run(command: crate::args::StoreCommand) -> anyhow::Result<super::ExitStatus> {
    match command {
        crate::args::StoreCommand::Migrate(args) => {
            let report =
                tollgate::api::store::store_migrate(&args.repo, &args.from, &args.to, args.force)
                    .map_err(|err| anyhow::anyhow!("[{}] {}", err.code.as_str(), err.message))?;
            outln!("{}", serde_json::to_string_pretty(&report)?);
            Ok(super::ExitStatus::Pass)
        }
    }
}
