//! How long reading a big pull request from git takes, against `git diff -M --stat` on the same
//! change (issue 15: renames at scale):
//!
//! `cargo run -p tollgate --example git_renames -- <new dir> [--runs N]`
//!
//! Builds a repository in `<new dir>` with 2,000 changed files on branch `feature` against
//! `main`: 1,960 modified and 40 renamed (97 % similar), the renames spread among the modified
//! files. Then it times [`diff_from_repo`] (the review's parse phase) and `git diff -M --stat`
//! `N` times each, interleaved, prints the medians and how many renames were paired, and leaves
//! the repository for `tollgate review --repo <dir> --base main --head feature`. Not run in CI.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports on the terminal"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Signature, Time};
use tollgate::diff::{DiffSpec, FileStatus, diff_from_repo};

const N_RENAMES: usize = 40;
const N_MODIFIED: usize = 1960;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .expect("usage: git_renames <new dir> [--runs N]"),
    );
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(5, |n| n.parse().expect("--runs N"));
    build(&dir);

    let spec = DiffSpec::Range {
        base: "main".to_owned(),
        head: "feature".to_owned(),
    };
    let (mut ours, mut git) = (Vec::new(), Vec::new());
    let mut statuses = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let diff = diff_from_repo(&dir, &spec).expect("diff_from_repo");
        ours.push(started.elapsed());
        statuses = diff.diff.files().iter().map(|f| f.status).collect();

        let started = Instant::now();
        let status = Command::new("git")
            .args(["diff", "-M", "--stat", "main...feature"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .status()
            .expect("git runs");
        git.push(started.elapsed());
        assert!(status.success());
    }
    let count = |wanted: FileStatus| statuses.iter().filter(|s| **s == wanted).count();
    println!(
        "files: {} (renamed {} of {N_RENAMES}, modified {}, added {}, deleted {})",
        statuses.len(),
        count(FileStatus::Renamed),
        count(FileStatus::Modified),
        count(FileStatus::Added),
        count(FileStatus::Deleted),
    );
    println!("diff_from_repo      median {:?}", median(ours));
    println!("git diff -M --stat  median {:?}", median(git));
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `main` and `feature` in a new repository at `dir`, checked out at `feature`.
fn build(dir: &Path) {
    let repo = Repository::init(dir).expect("git init (the directory must be new or empty)");
    let mut before = Vec::new();
    let mut after = Vec::new();
    let renames_every = N_MODIFIED / N_RENAMES;
    for n in 0..N_MODIFIED {
        let path = format!("src/m{:02}/f{n:04}.py", n / renames_every);
        let body = |version: u32| {
            (0..30)
                .map(|line| format!("def f_{n}_{line}():\n    return {line} + {version}\n"))
                .collect::<String>()
        };
        before.push((path.clone(), Some(body(1))));
        after.push((path, Some(body(2))));
    }
    for n in 0..N_RENAMES {
        let lines: Vec<String> = (0..100)
            .map(|line| format!("value_{n}_{line} = {line}\n"))
            .collect();
        let mut edited = lines.clone();
        for line in [10, 50, 90] {
            edited[line] = format!("value_{n}_{line} = 'edited in the rename'\n");
        }
        before.push((format!("src/m{n:02}/old_name.py"), Some(lines.concat())));
        after.push((format!("src/m{n:02}/old_name.py"), None));
        after.push((format!("src/m{n:02}/new_name.py"), Some(edited.concat())));
    }
    let main = commit(&repo, "main", None, &before);
    commit(&repo, "feature", Some(main), &after);
    repo.set_head("refs/heads/feature").expect("set HEAD");
    let mut checkout = git2::build::CheckoutBuilder::new();
    repo.checkout_head(Some(checkout.force()))
        .expect("checkout");
}

fn commit(
    repo: &Repository,
    branch: &str,
    parent: Option<Oid>,
    files: &[(String, Option<String>)],
) -> Oid {
    let mut index = Index::new().expect("in-memory index");
    let parent = parent.map(|id| repo.find_commit(id).expect("parent"));
    if let Some(parent) = &parent {
        index
            .read_tree(&parent.tree().expect("tree"))
            .expect("read tree");
    }
    for (path, content) in files {
        match content {
            Some(content) => {
                let entry = IndexEntry {
                    ctime: IndexTime::new(0, 0),
                    mtime: IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100_644,
                    uid: 0,
                    gid: 0,
                    file_size: u32::try_from(content.len()).expect("small file"),
                    id: repo.blob(content.as_bytes()).expect("blob"),
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                };
                index.add(&entry).expect("add");
            }
            None => index.remove_path(Path::new(path)).expect("remove"),
        }
    }
    let tree = repo
        .find_tree(index.write_tree_to(repo).expect("write tree"))
        .expect("tree");
    let signature = Signature::new("Bench", "bench@example.com", &Time::new(0, 0)).expect("sig");
    let parents: Vec<_> = parent.iter().collect();
    repo.commit(
        Some(&format!("refs/heads/{branch}")),
        &signature,
        &signature,
        "bench",
        &tree,
        &parents,
    )
    .expect("commit")
}
