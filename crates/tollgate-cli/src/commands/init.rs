//! `tollgate init`: starter configuration files.

use std::path::Path;

use anyhow::{Context, bail};
use tollgate::config::{
    CONFIG_FILE_NAME, DEFAULT_INVARIANTS_PATH, STARTER_CONFIG, STARTER_INVARIANTS,
};

use super::ExitStatus;
use crate::args::InitArgs;

pub fn run(args: InitArgs) -> anyhow::Result<ExitStatus> {
    let files = [
        (CONFIG_FILE_NAME, STARTER_CONFIG),
        (DEFAULT_INVARIANTS_PATH, STARTER_INVARIANTS),
    ];
    // Check everything first so a refusal writes nothing.
    if !args.force {
        let existing: Vec<String> = files
            .iter()
            .map(|(name, _)| args.repo.join(name))
            .filter(|path| path.exists())
            .map(|path| path.display().to_string())
            .collect();
        if !existing.is_empty() {
            bail!(
                "{} already exist(s); rerun with --force to overwrite",
                existing.join(", ")
            );
        }
    }
    for (name, content) in files {
        let path = args.repo.join(name);
        write(&path, content)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitStatus::Pass)
}

fn write(path: &Path, content: &str) -> anyhow::Result<()> {
    std::fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))
}
