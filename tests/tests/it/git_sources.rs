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
