//! `tollgate init`: starter configuration files, written only inside the repository (a
//! committed `tollgate.toml` link is refused, even with `--force`, rather than followed).

use anyhow::{Context, bail};
use tollgate::config::{
    CONFIG_FILE_NAME, DEFAULT_INVARIANTS_PATH, STARTER_CONFIG, STARTER_INVARIANTS,
};
use tollgate::workspace::{RepoPath, Workspace};

use super::ExitStatus;
use crate::args::InitArgs;

pub fn run(args: InitArgs) -> anyhow::Result<ExitStatus> {
    let workspace = Workspace::new(&args.repo)
        .with_context(|| format!("cannot use {} as the repository", args.repo.display()))?;
    let mut files = Vec::new();
    for (name, content) in [
        (CONFIG_FILE_NAME, STARTER_CONFIG),
        (DEFAULT_INVARIANTS_PATH, STARTER_INVARIANTS),
    ] {
        let path = RepoPath::new(name)?;
        // Check everything first so a refusal writes nothing.
        workspace
            .writable(&path)
            .map_err(|err| anyhow::anyhow!("{err}; remove it or write the file by hand"))?;
        files.push((path, content));
    }
    if !args.force {
        let existing: Vec<String> = files
            .iter()
            .filter(|(path, _)| workspace.is_occupied(path))
            .map(|(path, _)| args.repo.join(path.as_str()).display().to_string())
            .collect();
        if !existing.is_empty() {
            bail!(
                "{} already exist(s); rerun with --force to overwrite",
                existing.join(", ")
            );
        }
    }
    for (path, content) in files {
        workspace.write(&path, content.as_bytes())?;
        eprintln!("wrote {}", args.repo.join(path.as_str()).display());
    }
    Ok(ExitStatus::Pass)
}
