//! Where the gate's own files come from: the invariants, the baseline, the learnings ledger
//! (`.review-learnings.jsonl`) and (through
//! [`GateFiles::read`], for front ends) `tollgate.toml`.
//!
//! Reviewing a pull request with the rules from its own head would let the change switch off
//! the gate that judges it (delete an invariant, baseline its new findings). So a CI front end
//! reads these files from the base commit with [`GateFiles::Commit`]; local runs use the
//! [`GateFiles::Workspace`]. Files read from a commit are named `path@<short sha>` in messages.

use std::io;
use std::path::{Component, Path};

use crate::config::{self, CONFIG_FILE_NAME, ConfigError, ConfigFile, NestedConfig, RawConfig};
use crate::diff::{self, GitError};
use crate::input::{self, InputError, Limit, MAX_CONFIG_BYTES};
use crate::invariants::{self, InvariantSet, InvariantsError, PathRefusal};
use crate::learnings::{LEDGER_FILE, Learnings, LearningsError, Ledger, MAX_LEDGER_BYTES, Record};
use crate::review::{Baseline, BaselineError};
use crate::workspace::{PathError, RepoPath, Workspace};

/// The source of the gate's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateFiles {
    /// The workspace's working tree.
    Workspace,
    /// A commit (any revision git can resolve) of the workspace's repository.
    Commit(String),
}

/// A gate file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateFileError {
    #[error("Cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("Cannot read {path} from commit `{rev}`: {source}")]
    Git {
        path: String,
        rev: String,
        #[source]
        source: GitError,
    },
    #[error(transparent)]
    Input(#[from] InputError),
}

impl GateFiles {
    /// The bytes of `path` (workspace-relative) from this source, at most `limit` (`what`
    /// names the file in errors); `Ok(None)` when there is no such file. Paths that are
    /// absolute or climb out with `..` are never found.
    pub fn read(
        &self,
        workspace: &Path,
        path: &str,
        what: &str,
        limit: Limit,
    ) -> Result<Option<Vec<u8>>, GateFileError> {
        let relative = path.strip_prefix("./").unwrap_or(path);
        if !stays_inside(relative) {
            return Ok(None);
        }
        let bytes = match self {
            GateFiles::Workspace => {
                match input::read_file(&workspace.join(relative), what, limit) {
                    Ok(bytes) => bytes,
                    Err(InputError::NotFound { .. }) => return Ok(None),
                    Err(err) => return Err(err.into()),
                }
            }
            GateFiles::Commit(rev) => {
                let read =
                    diff::read_file_at_commit(workspace, rev, relative).map_err(|source| {
                        GateFileError::Git {
                            path: relative.to_string(),
                            rev: rev.clone(),
                            source,
                        }
                    })?;
                let Some(bytes) = read else {
                    return Ok(None);
                };
                bytes
            }
        };
        if bytes.len() as u64 > limit.bytes {
            return Err(GateFileError::Input(InputError::TooLarge {
                what: what.to_string(),
                path: self.label(relative),
                limit: limit.bytes,
                setting: limit.setting,
            }));
        }
        Ok(Some(bytes))
    }

    /// How a file from this source is named in messages: `path`, or `path@<short sha>`.
    pub fn label(&self, path: &str) -> String {
        match self {
            GateFiles::Workspace => path.to_string(),
            GateFiles::Commit(rev) => format!("{path}@{}", rev.get(..12).unwrap_or(rev)),
        }
    }
}

impl GateFiles {
    /// The configuration layers with the root `tollgate.toml` read from this source (the base
    /// commit in CI, so a pull request cannot rewrite the settings that judge it): file <
    /// `env` < `flags`.
    pub fn load_config<I, K, V>(
        &self,
        workspace: &Path,
        env: I,
        flags: RawConfig,
    ) -> Result<RawConfig, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let label = self.label(CONFIG_FILE_NAME);
        let text = self
            .read(
                workspace,
                CONFIG_FILE_NAME,
                "config file",
                Limit::fixed(MAX_CONFIG_BYTES),
            )
            .map_err(|err| ConfigError::Read {
                path: label.clone(),
                source: io::Error::other(err),
            })?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let file = match &text {
            Some(text) => ConfigFile::Text {
                text,
                label: &label,
            },
            None => ConfigFile::None,
        };
        config::load(file, env, flags)
    }
}

/// Loads an invariants file; a file missing from a commit is [`InvariantsError::NotFound`],
/// as a missing workspace file is, so the default file stays optional either way. Git failures
/// are [`InvariantsError::Read`] errors naming the file at its commit.
pub(super) fn load_invariants(
    source: &GateFiles,
    workspace: &Path,
    given: &str,
) -> Result<InvariantSet, InvariantsError> {
    let GateFiles::Commit(_) = source else {
        return invariants::load_from_workspace(workspace, given);
    };
    let relative = given.strip_prefix("./").unwrap_or(given);
    if !stays_inside(relative) {
        let reason = if Path::new(relative).is_absolute() {
            PathRefusal::OutsideWorkspace {
                workspace: workspace.to_path_buf(),
            }
        } else {
            PathRefusal::ParentEscape
        };
        return Err(InvariantsError::Refused {
            given: given.to_string(),
            reason,
        });
    }
    let label = source.label(relative);
    let bytes = source
        .read(
            workspace,
            relative,
            "invariants file",
            Limit::fixed(invariants::MAX_FILE_BYTES),
        )
        .map_err(|err| InvariantsError::Read {
            path: label.clone().into(),
            source: io::Error::other(err),
        })?
        .ok_or_else(|| InvariantsError::NotFound {
            path: label.clone().into(),
        })?;
    if bytes.len() as u64 > invariants::MAX_FILE_BYTES {
        return Err(InvariantsError::TooLarge {
            path: label.into(),
            size: bytes.len() as u64,
            limit: invariants::MAX_FILE_BYTES,
        });
    }
    InvariantSet::from_yaml(Path::new(relative), &String::from_utf8_lossy(&bytes))
}

/// Loads the baseline file `path` (workspace-relative, or absolute for the workspace).
pub(super) fn load_baseline(
    source: &GateFiles,
    workspace: &Path,
    path: &str,
    max_bytes: u64,
) -> Result<Baseline, BaselineError> {
    let GateFiles::Commit(_) = source else {
        return Baseline::load(&super::resolve_in_workspace(workspace, path), max_bytes);
    };
    let label = source.label(path);
    let bytes = source
        .read(workspace, path, "baseline", Limit::max_input(max_bytes))
        .map_err(|err| BaselineError::Read {
            path: label.clone(),
            source: io::Error::other(err),
        })?
        .ok_or_else(|| BaselineError::Read {
            path: label.clone(),
            source: io::Error::new(io::ErrorKind::NotFound, "no such file in the commit"),
        })?;
    Baseline::from_json(&String::from_utf8_lossy(&bytes), &label)
}

/// The learnings ledger from this source (`None` when there is none), with the code its
/// records point at read from the workspace: the reviewed head, whatever the ledger's source.
/// Files are read through [`Workspace`], so a ledger path that leads outside is never read.
pub(super) fn load_learnings(
    source: &GateFiles,
    workspace: &Path,
    extra: Vec<Record>,
) -> Result<Option<Learnings>, LearningsError> {
    let label = source.label(LEDGER_FILE);
    let read = source
        .read(
            workspace,
            LEDGER_FILE,
            "learnings ledger",
            Limit::fixed(MAX_LEDGER_BYTES),
        )
        .map_err(|err| LearningsError::Read {
            path: label.clone(),
            message: err.to_string(),
        })?;
    let mut ledger = match read {
        Some(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| LearningsError::Parse {
                path: label.clone(),
                line: 1,
                message: "the file is not valid UTF-8".to_string(),
            })?;
            Ledger::parse(&text, &label)?
        }
        None if extra.is_empty() => return Ok(None),
        None => Ledger::default(),
    };
    for record in extra {
        ledger.push(record);
    }
    let root = Workspace::new(workspace).ok();
    Ok(Some(Learnings::new(ledger, |path| {
        let root = root.as_ref()?;
        let bytes = root
            .read(&RepoPath::new(path).ok()?, crate::learnings::MAX_CODE_BYTES)
            .ok()?;
        String::from_utf8(bytes).ok()
    })))
}

/// The nested `tollgate.toml` files above the `changed` paths (see [`config::nested_config_paths`]),
/// from this source, parsed and in the order [`crate::config::ReviewConfig::with_nested`] wants.
/// The paths come from the diff, so workspace files are read through [`Workspace`]: one that
/// resolves outside the root is refused, not read.
pub(super) fn load_nested_configs<'a>(
    source: &GateFiles,
    workspace: &Path,
    changed: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<NestedConfig>, ConfigError> {
    let candidates = config::nested_config_paths(changed);
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    // One answer per candidate: the file's bytes, or `None` when there is none.
    let contents: Vec<Option<Vec<u8>>> = match source {
        GateFiles::Workspace => {
            let root = Workspace::new(workspace).map_err(|source| ConfigError::Read {
                path: workspace.display().to_string(),
                source,
            })?;
            let mut contents = Vec::with_capacity(candidates.len());
            for path in &candidates {
                let Ok(repo_path) = RepoPath::new(path) else {
                    contents.push(None);
                    continue;
                };
                contents.push(match root.read(&repo_path, MAX_CONFIG_BYTES) {
                    Ok(bytes) => Some(bytes),
                    Err(PathError::NotFound { .. }) => None,
                    Err(err) => {
                        return Err(ConfigError::Read {
                            path: path.clone(),
                            source: io::Error::other(err),
                        });
                    }
                });
            }
            contents
        }
        // One repository open for all of them: replay asks this for every commit.
        GateFiles::Commit(rev) => {
            let paths: Vec<&str> = candidates.iter().map(String::as_str).collect();
            diff::read_files_at_commit(workspace, rev, &paths).map_err(|err| ConfigError::Read {
                path: source.label(CONFIG_FILE_NAME),
                source: io::Error::other(err),
            })?
        }
    };
    let mut found = Vec::new();
    for (path, bytes) in candidates.iter().zip(contents) {
        let Some(bytes) = bytes else { continue };
        let label = source.label(path);
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(ConfigError::Input(InputError::TooLarge {
                what: "config file".to_string(),
                path: label,
                limit: MAX_CONFIG_BYTES,
                setting: None,
            }));
        }
        let text = String::from_utf8(bytes).map_err(|_| ConfigError::Parse {
            path: label.clone(),
            message: "the file is not valid UTF-8".to_string(),
        })?;
        found.push(NestedConfig::parse(path, &text, &label)?);
    }
    Ok(found)
}

fn stays_inside(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use git2::{Repository, Signature};

    use super::*;

    /// A repository whose first commit holds `files`; returns it and the commit id.
    fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init(dir.path()).expect("init");
        let mut index = repo.index().expect("index");
        for (path, content) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(&full, content).expect("write");
            index.add_path(Path::new(path)).expect("add");
        }
        index.write().expect("write index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let signature = Signature::now("T", "t@example.com").expect("signature");
        let id = repo
            .commit(Some("HEAD"), &signature, &signature, "c", &tree, &[])
            .expect("commit");
        (dir, id.to_string())
    }

    const RULES: &str = "rules:\n  - id: no-todo\n    rule: No TODO\n    paths: [\"**\"]\n    severity: LOW\n    category: style\n    action: deny\n    deny: { regex: { pattern: TODO } }\n";

    #[test]
    fn nested_configs_come_from_the_source_and_never_from_outside() {
        let nested = "[rules.TG001]\nenabled = false\n";
        let (dir, commit) = repo_with(&[("svc/tollgate.toml", nested), ("svc/a.rs", "")]);
        // The head adds a nested file of its own: read from the workspace, not from the commit.
        std::fs::create_dir_all(dir.path().join("lib")).expect("mkdir");
        std::fs::write(dir.path().join("lib/tollgate.toml"), nested).expect("write");
        let changed = ["svc/a.rs", "lib/b.rs"];

        let base =
            load_nested_configs(&GateFiles::Commit(commit), dir.path(), changed).expect("loads");
        assert_eq!(
            base.iter().map(|n| n.dir.as_str()).collect::<Vec<_>>(),
            ["svc"]
        );
        let head = load_nested_configs(&GateFiles::Workspace, dir.path(), changed).expect("loads");
        assert_eq!(head.len(), 2);

        // A nested file that is a link out of the workspace is refused, not read.
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().expect("temp dir");
            std::fs::write(outside.path().join("tollgate.toml"), nested).expect("write");
            std::fs::remove_file(dir.path().join("lib/tollgate.toml")).expect("remove");
            std::os::unix::fs::symlink(
                outside.path().join("tollgate.toml"),
                dir.path().join("lib/tollgate.toml"),
            )
            .expect("symlink");
            let err = load_nested_configs(&GateFiles::Workspace, dir.path(), changed)
                .expect_err("refused");
            assert!(err.to_string().contains("lib/tollgate.toml"), "{err}");
        }
    }

    #[test]
    fn commit_files_ignore_the_working_tree() {
        let (dir, commit) = repo_with(&[
            (".review-invariants.yml", RULES),
            (
                "baseline.json",
                r#"{"version":1,"tool":"tollgate","findings":[{"fingerprint":"abc"}]}"#,
            ),
        ]);
        // The head rewrites the rules and the baseline; the commit's versions are used anyway.
        std::fs::write(dir.path().join(".review-invariants.yml"), "rules: []\n").expect("write");
        std::fs::write(dir.path().join("baseline.json"), "not json").expect("write");
        let source = GateFiles::Commit(commit.clone());

        let set = load_invariants(&source, dir.path(), "./.review-invariants.yml").expect("loads");
        assert_eq!(set.checks().count(), 1);
        let baseline = load_baseline(&source, dir.path(), "baseline.json", 1 << 20).expect("loads");
        assert!(baseline.contains("abc"));

        let workspace =
            load_invariants(&GateFiles::Workspace, dir.path(), ".review-invariants.yml")
                .expect("loads");
        assert_eq!(workspace.checks().count(), 0);
        assert!(
            load_baseline(&GateFiles::Workspace, dir.path(), "baseline.json", 1 << 20).is_err()
        );
    }

    #[test]
    fn missing_and_escaping_paths() {
        let (dir, commit) = repo_with(&[("a.txt", "a\n")]);
        let source = GateFiles::Commit(commit.clone());
        let err =
            load_invariants(&source, dir.path(), ".review-invariants.yml").expect_err("absent");
        assert!(matches!(err, InvariantsError::NotFound { .. }), "{err}");
        assert!(
            err.to_string()
                .contains(&format!(".review-invariants.yml@{}", &commit[..12])),
            "{err}"
        );
        let err = load_invariants(&source, dir.path(), "../x.yml").expect_err("refused");
        assert_eq!(err.code(), "PATH_OUTSIDE_WORKSPACE", "{err}");
        let err = load_baseline(&source, dir.path(), "baseline.json", 1 << 20).expect_err("absent");
        assert!(err.to_string().contains("baseline.json@"), "{err}");
        assert_eq!(
            source
                .read(dir.path(), "a.txt", "file", Limit::fixed(1 << 20))
                .expect("reads")
                .as_deref(),
            Some(&b"a\n"[..])
        );
        assert_eq!(
            source
                .read(dir.path(), "/etc/hostname", "file", Limit::fixed(1 << 20))
                .expect("reads"),
            None
        );
        assert_eq!(
            GateFiles::Workspace
                .read(dir.path(), "../a.txt", "file", Limit::fixed(1 << 20))
                .expect("reads"),
            None
        );
        let err = GateFiles::Commit("nope".into())
            .read(dir.path(), "a.txt", "file", Limit::fixed(1 << 20))
            .expect_err("bad rev");
        assert!(
            err.to_string()
                .starts_with("Cannot read a.txt from commit `nope`"),
            "{err}"
        );
    }
}
