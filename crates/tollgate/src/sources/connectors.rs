//! The two connectors: a directory of the workspace (its files, read through the workspace's
//! path rules, a link out of it never followed) and a git repository's files at a ref (read
//! from the object database with git2, whatever the work tree holds). A file that cannot be an
//! entry (not UTF-8 text, larger than an entry holds) is skipped and reported.

use std::path::{Path, PathBuf};

use super::{Document, Skipped, SourceError, check_bounds, title_of_file};
use crate::ErrorCode;
use crate::config::SourceConfig;
use crate::memory::{MAX_TEXT_BYTES, format_ms};
use crate::workspace::{PathError, RepoPath, Workspace};

fn path_error(source: &SourceConfig, key: &str, err: &PathError) -> SourceError {
    SourceError::Path {
        name: source.name.clone(),
        message: format!(
            "sources.{}.{key}: {}: {}",
            source.name,
            err.path(),
            err.reason()
        ),
        code: err.code(),
    }
}

/// The body of a file, or why it is skipped.
fn text_of(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_TEXT_BYTES} an entry holds",
            bytes.len()
        ));
    }
    if bytes.contains(&0) {
        return Err("not text (it holds NUL bytes)".to_string());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// Bounds counted while reading, so a huge source stops early.
struct Tally<'a> {
    source: &'a SourceConfig,
    documents: usize,
    bytes: u64,
}

impl Tally<'_> {
    fn add(&mut self, body: &str) -> Result<(), SourceError> {
        self.documents += 1;
        self.bytes += body.len() as u64;
        check_bounds(self.source, self.documents, self.bytes)
    }
}

/// Every selected file under `dir`, its id the workspace-relative path.
pub(super) fn read_dir(
    root: &Path,
    source: &SourceConfig,
    dir: &RepoPath,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<Document>, SourceError> {
    let workspace = Workspace::new(root).map_err(|err| SourceError::Path {
        name: source.name.clone(),
        message: format!("the workspace {}: {err}", root.display()),
        code: ErrorCode::IoError,
    })?;
    let base = workspace
        .resolve(dir)
        .map_err(|err| path_error(source, "path", &err))?;
    if !base.is_dir() {
        return Err(SourceError::invalid(
            source,
            format!("sources.{}.path: `{dir}` is not a directory", source.name),
        ));
    }
    let mut tally = Tally {
        source,
        documents: 0,
        bytes: 0,
    };
    let mut documents = Vec::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(base, String::new())];
    while let Some((directory, relative)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            skipped.push(Skipped {
                id: join(dir.as_str(), &relative),
                reason: "the directory cannot be read".to_string(),
            });
            continue;
        };
        let mut names: Vec<(String, std::fs::FileType)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let kind = entry.file_type().ok()?;
                Some((entry.file_name().into_string().ok()?, kind))
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            let inner = join(&relative, &name);
            let id = join(dir.as_str(), &inner);
            let Ok(repo_path) = RepoPath::new(&id) else {
                continue;
            };
            if repo_path.is_in_git_dir() {
                continue;
            }
            if kind.is_dir() {
                pending.push((directory.join(&name), inner));
                continue;
            }
            if !source.selects(&inner) {
                continue;
            }
            // A link is read only where it resolves inside the workspace, and only to a file
            // (a linked directory could loop).
            let bytes = match workspace.read(&repo_path, MAX_TEXT_BYTES as u64 + 1) {
                Ok(bytes) => bytes,
                Err(err) => {
                    skipped.push(Skipped {
                        id,
                        reason: err.reason(),
                    });
                    continue;
                }
            };
            match text_of(bytes) {
                Ok(body) => {
                    tally.add(&body)?;
                    let updated_at = std::fs::metadata(directory.join(&name))
                        .and_then(|meta| meta.modified())
                        .ok()
                        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|age| format_ms(i64::try_from(age.as_millis()).unwrap_or(i64::MAX)));
                    documents.push(Document {
                        title: title_of_file(&id, &body),
                        id,
                        body: Some(body),
                        url: None,
                        updated_at,
                    });
                }
                Err(reason) => skipped.push(Skipped { id, reason }),
            }
        }
    }
    documents.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(documents)
}

/// Every selected blob of the tree at `git_ref` (under `path`, when given), its id the path in
/// the repository, its `updated_at` the commit's time.
pub(super) fn read_git(
    root: &Path,
    source: &SourceConfig,
    repo: Option<&RepoPath>,
    git_ref: &str,
    path: Option<&RepoPath>,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<Document>, SourceError> {
    let git = |message: String| SourceError::Git {
        name: source.name.clone(),
        message,
    };
    let repository = match repo {
        None => git2::Repository::discover(root).map_err(|err| {
            git(format!(
                "the workspace is not in a git repository: {}",
                err.message()
            ))
        })?,
        Some(repo) => {
            let workspace = Workspace::new(root).map_err(|err| SourceError::Path {
                name: source.name.clone(),
                message: format!("the workspace {}: {err}", root.display()),
                code: ErrorCode::IoError,
            })?;
            let resolved = workspace
                .resolve(repo)
                .map_err(|err| path_error(source, "repo", &err))?;
            git2::Repository::open(&resolved).map_err(|err| {
                git(format!(
                    "sources.{}.repo: `{repo}` is not a git repository: {}",
                    source.name,
                    err.message()
                ))
            })?
        }
    };
    let commit = repository
        .revparse_single(git_ref)
        .and_then(|object| object.peel_to_commit())
        .map_err(|err| {
            git(format!(
                "sources.{}.ref: `{git_ref}` names no commit: {}",
                source.name,
                err.message()
            ))
        })?;
    let updated_at = format_ms(commit.time().seconds().saturating_mul(1000));
    let mut tree = commit
        .tree()
        .map_err(|err| git(format!("the commit's tree: {}", err.message())))?;
    let prefix = match path {
        Some(path) => {
            let entry = tree.get_path(Path::new(path.as_str())).map_err(|_| {
                git(format!(
                    "sources.{}.path: `{path}` is not in the tree at `{git_ref}`",
                    source.name
                ))
            })?;
            tree = entry
                .to_object(&repository)
                .and_then(|object| object.peel_to_tree())
                .map_err(|_| {
                    git(format!(
                        "sources.{}.path: `{path}` is not a directory at `{git_ref}`",
                        source.name
                    ))
                })?;
            path.as_str().to_string()
        }
        None => String::new(),
    };
    let mut blobs = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        // Regular files only: links and submodules are no documents.
        let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
        if let (true, Ok(name)) = (regular, entry.name()) {
            blobs.push((format!("{dir}{name}"), entry.id()));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|err| git(format!("walking the tree: {}", err.message())))?;
    let mut tally = Tally {
        source,
        documents: 0,
        bytes: 0,
    };
    let mut documents = Vec::new();
    for (inner, oid) in blobs {
        if !source.selects(&inner) {
            continue;
        }
        let id = join(&prefix, &inner);
        let blob = repository
            .find_blob(oid)
            .map_err(|err| git(format!("reading `{id}`: {}", err.message())))?;
        if blob.size() > MAX_TEXT_BYTES {
            skipped.push(Skipped {
                id,
                reason: format!(
                    "{} bytes, over the {MAX_TEXT_BYTES} an entry holds",
                    blob.size()
                ),
            });
            continue;
        }
        match text_of(blob.content().to_vec()) {
            Ok(body) => {
                tally.add(&body)?;
                documents.push(Document {
                    title: title_of_file(&id, &body),
                    id,
                    body: Some(body),
                    url: None,
                    updated_at: Some(updated_at.clone()),
                });
            }
            Err(reason) => skipped.push(Skipped { id, reason }),
        }
    }
    documents.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(documents)
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}
