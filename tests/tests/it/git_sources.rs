//! Diffs read straight from real git repositories: ref ranges, staged, unstaged, working tree.

use crate::util::{TestRepo, tollgate};

fn files_of(json: &serde_json::Value) -> Vec<String> {
    let mut files: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["location"]["file"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    files.dedup();
    files
}

#[test]
fn base_head_uses_merge_base_semantics() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn a() {}\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/feature.rs", "pub fn feature() {}\n");
    let head = repo.commit("feature work");
    // main moves on after the fork: its change must not show up in main...feature.
    repo.checkout("main");
    repo.write("src/mainline.rs", "pub fn mainline() {}\n");
    repo.commit("mainline work");

    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "main",
        "--head",
        "feature",
    ])
    .run();
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["stats"]["files_changed"], 1, "{json}");
    assert_eq!(files_of(&json), vec!["src/feature.rs"]);
    assert_eq!(json["metadata"]["head_sha"], head.as_str());
    assert!(json["metadata"]["base_sha"].is_string());
}

#[test]
fn staged_unstaged_and_working_tree() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main():\n    return 1\n");
    repo.commit("init");
    repo.write("src/staged.py", "def staged():\n    return 2\n");
    repo.stage_all();
    repo.write("src/unstaged.py", "x = 1\n");
    // Modify a tracked file without staging it.
    repo.write("src/app.py", "def main():\n    return 3\n");
    let dir = repo.path().to_str().unwrap();

    let staged = tollgate(&["review", "--repo", dir, "--staged"]).run();
    staged.assert_code(0);
    assert_eq!(staged.json()["stats"]["files_changed"], 1);

    let unstaged = tollgate(&["review", "--repo", dir, "--unstaged"]).run();
    unstaged.assert_code(0);
    // Untracked files are not part of `git diff`; the tracked modification is.
    assert_eq!(unstaged.json()["stats"]["files_changed"], 1);
    assert_eq!(unstaged.json()["stats"]["lines_added"], 1);

    let all = tollgate(&["review", "--repo", dir, "--working-tree"]).run();
    all.assert_code(0);
    assert_eq!(all.json()["stats"]["files_changed"], 2);
}

#[test]
fn unknown_ref_and_missing_repo_are_clear_errors() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("init");
    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "nope",
        "--head",
        "HEAD",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("nope"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    let run = tollgate(&["review", "--repo", dir.path().to_str().unwrap(), "--staged"]).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains(dir.path().to_str().unwrap()),
        "{}",
        run.stderr
    );
}

#[test]
fn a_shallow_clone_missing_the_base_says_how_to_fix_it() {
    let repo = TestRepo::new();
    repo.write("a.txt", "1\n");
    let base = repo.commit("base");
    repo.write("a.txt", "2\n");
    repo.commit("head");
    let clone = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1"])
        .arg(format!("file://{}", repo.path().display()))
        .arg(clone.path())
        .status()
        .expect("git runs");
    assert!(status.success());
    let run = tollgate(&[
        "review",
        "--repo",
        clone.path().to_str().unwrap(),
        "--base",
        &base,
        "--head",
        "HEAD",
    ])
    .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("the clone is shallow"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git fetch --unshallow"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("unknown revision"),
        "the cause is kept: {}",
        run.stderr
    );
}

/// `main` plus a branch `feature` that adds a Python package (an empty `__init__.py`), adds a
/// `.gitkeep` and deletes another one: empty files with no hunks.
fn python_package_pr() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("app.py", "x = 1\n").write("old/.gitkeep", "");
    repo.commit("base");
    repo.branch("feature");
    repo.write("pkg/__init__.py", "")
        .write("pkg/mod.py", "def f():\n    return 1\n")
        .write("logs/.gitkeep", "");
    std::fs::remove_file(repo.path().join("old/.gitkeep")).unwrap();
    repo.commit("add a package");
    repo
}

/// How many files `git <args> --name-status` lists (untracked files are not in a diff).
fn git_file_count(dir: &str, args: &[&str]) -> usize {
    let output = std::process::Command::new("git")
        .args(args)
        .args(["--name-status", "--no-color"])
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).lines().count()
}

#[test]
fn empty_files_do_not_break_git_reviews() {
    let repo = python_package_pr();
    let dir = repo.path().to_str().unwrap();

    let range = tollgate(&[
        "review", "--repo", dir, "--base", "main", "--head", "feature",
    ])
    .run();
    range.assert_code(0);
    // Empty files are identical, so git pairs the deleted `.gitkeep` with an added empty file
    // as an exact rename: the file count is git's own.
    assert_eq!(
        range.json()["stats"]["files_changed"],
        git_file_count(dir, &["diff", "-M", "main...feature"]),
        "{}",
        range.stdout
    );

    // The same change, uncommitted: staged, then in the working tree.
    repo.checkout("main");
    repo.write("pkg/__init__.py", "")
        .write("pkg/mod.py", "y = 2\n");
    std::fs::remove_file(repo.path().join("old/.gitkeep")).unwrap();
    repo.stage_all();
    let staged = tollgate(&["review", "--repo", dir, "--staged"]).run();
    staged.assert_code(0);
    assert_eq!(
        staged.json()["stats"]["files_changed"],
        git_file_count(dir, &["diff", "-M", "--cached"]),
        "{}",
        staged.stdout
    );
    repo.write("logs/.gitkeep", "");
    let working_tree = tollgate(&["review", "--repo", dir, "--working-tree"]).run();
    working_tree.assert_code(0);
    assert_eq!(
        working_tree.json()["stats"]["files_changed"],
        git_file_count(dir, &["diff", "-M", "HEAD"]),
        "{}",
        working_tree.stdout
    );

    repo.checkout("feature");
    let session = tollgate(&[
        "session", "start", "--repo", dir, "--base", "main", "--head", "feature",
    ])
    .run();
    session.assert_code(0);
    assert_eq!(session.json()["status"], "completed", "{}", session.stdout);
}

#[test]
fn a_type_change_counts_as_one_file_as_git_numstat_does() {
    let repo = TestRepo::new();
    repo.write("config.yml", "a: 1\n")
        .write("link", "was a file\n")
        .write("target.txt", "t\n");
    std::os::unix::fs::symlink("target.txt", repo.path().join("was_link")).unwrap();
    repo.commit("base");
    repo.branch("feature");
    // A file becomes a symlink and a symlink becomes a file.
    std::fs::remove_file(repo.path().join("link")).unwrap();
    std::os::unix::fs::symlink("target.txt", repo.path().join("link")).unwrap();
    std::fs::remove_file(repo.path().join("was_link")).unwrap();
    repo.write("was_link", "now a file\n");
    repo.commit("type changes");

    let numstat = std::process::Command::new("git")
        .args(["diff", "--numstat", "main...feature"])
        .current_dir(repo.path())
        .output()
        .expect("git runs");
    let n_by_git = String::from_utf8_lossy(&numstat.stdout).lines().count();
    assert_eq!(n_by_git, 2);

    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "main",
        "--head",
        "feature",
    ])
    .run();
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["stats"]["files_changed"], n_by_git, "{json}");
    // Both sections of each path are still reviewed: the added and removed lines all count.
    assert_eq!(json["stats"]["lines_added"], 2, "{json}");
    assert_eq!(json["stats"]["lines_removed"], 2, "{json}");
}

#[test]
fn base_without_head_reviews_up_to_head() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/new.rs", "pub fn new() {}\n");
    let head = repo.commit("feature work");

    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "main",
    ])
    .run();
    run.assert_code(0);
    let json = run.json();
    assert_eq!(json["metadata"]["head_sha"], head.as_str(), "{json}");
    assert_eq!(files_of(&json), vec!["src/new.rs"]);
    assert_eq!(json["stats"]["files_changed"], 1);

    // --head alone still needs a base.
    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--head",
        "HEAD",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("--base"), "{}", run.stderr);
}

#[test]
fn an_unknown_ref_says_how_to_fetch_it() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("init");
    let run = tollgate(&[
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "origin/main",
    ])
    .run();
    run.assert_code(2);
    for fix in [
        "unknown revision `origin/main`",
        "`git fetch origin main`",
        "fetch-depth: 0",
        "--diff",
    ] {
        assert!(run.stderr.contains(fix), "{fix}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("class=Reference"), "{}", run.stderr);
}
