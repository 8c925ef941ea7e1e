//! Writes and reads stay inside the workspace when the repository is hostile: a committed
//! `.tollgate` link, a `tollgate.toml` link, a `cache_dir` pointing out, SARIF locations
//! through an in-repo link to `/etc` (issue 15).

use std::path::Path;

use crate::util::{TestRepo, tollgate};

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn review_working_tree(repo: &TestRepo, extra: &[&str]) -> crate::util::Run {
    let mut args = vec![
        "review",
        "--repo",
        repo.path().to_str().unwrap(),
        "--working-tree",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    tollgate(&args).run()
}

#[cfg(unix)]
#[test]
fn init_refuses_a_tollgate_toml_link_even_with_force() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted.toml");
    let repo = tempfile::tempdir().unwrap();
    link(&target, &repo.path().join("tollgate.toml"));
    let dir = repo.path().to_str().unwrap();

    for args in [
        vec!["init", "--repo", dir],
        vec!["init", "--repo", dir, "--force"],
    ] {
        let run = tollgate(&args).run();
        run.assert_code(2);
        assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
        assert!(!target.exists(), "{args:?} wrote through the link");
        assert!(
            !repo.path().join(".review-invariants.yml").exists(),
            "a refused init writes nothing"
        );
    }

    // With an existing target, --force must not overwrite it either.
    std::fs::write(&target, "# theirs\n").unwrap();
    tollgate(&["init", "--repo", dir, "--force"])
        .run()
        .assert_code(2);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "# theirs\n");
}

#[test]
fn a_review_refuses_a_cache_dir_outside_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("init");
    repo.write("a.txt", "b\n");
    for cache_dir in [
        outside.path().display().to_string(),
        "../outside-cache".to_string(),
        ".GIT/hooks".to_string(),
    ] {
        repo.write(
            "tollgate.toml",
            &format!("[analyzers]\ncache_dir = \"{cache_dir}\"\n"),
        );
        let run = review_working_tree(&repo, &[]);
        run.assert_code(2);
        assert!(
            run.stderr.contains("analyzers.cache_dir"),
            "{cache_dir}: {}",
            run.stderr
        );
    }
    assert!(entries(outside.path()).is_empty());
}

/// A TypeScript project whose `tsc` is a script that succeeds silently: enough for the
/// analyzer to open its cache.
#[cfg(unix)]
fn ts_repo() -> TestRepo {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.write("tsconfig.json", "{}\n");
    repo.write("src/a.ts", "export const a = 1;\n");
    repo.write("tools/tsc", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(
        repo.path().join("tools/tsc"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.commit("init");
    repo.write("src/a.ts", "export const a = 2;\n");
    repo
}

#[cfg(unix)]
#[test]
fn a_symlinked_cache_dir_is_not_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let repo = ts_repo();
    link(outside.path(), &repo.path().join("cache"));
    repo.write(
        "tollgate.toml",
        "[analyzers]\ncache_dir = \"cache\"\n\n[analyzers.tsc]\npath = \"tools/tsc\"\n",
    );
    let run = review_working_tree(&repo, &["--analyzers", "tsc"]);
    run.assert_code(0);
    assert!(entries(outside.path()).is_empty(), "the cache went outside");
    assert!(
        run.stdout.contains("cannot use the cache directory"),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn a_committed_tollgate_link_moves_no_store_index_or_cache() {
    let outside = tempfile::tempdir().unwrap();
    let repo = ts_repo();
    link(outside.path(), &repo.path().join(".tollgate"));
    repo.write("tollgate.toml", "[analyzers.tsc]\npath = \"tools/tsc\"\n");
    let dir = repo.path().to_str().unwrap();

    let run = review_working_tree(&repo, &["--analyzers", "tsc"]);
    run.assert_code(0);
    assert!(
        run.stdout.contains("cannot use the cache directory"),
        "{}",
        run.stdout
    );

    let index = tollgate(&["index", "--repo", dir, "--json"]).run();
    index.assert_code(2);
    assert!(index.stderr.contains("symbolic link"), "{}", index.stderr);

    let plans = tollgate(&["plan", "list", "--repo", dir]).run();
    plans.assert_code(2);
    assert!(plans.stderr.contains("symbolic link"), "{}", plans.stderr);

    assert!(
        entries(outside.path()).is_empty(),
        "written through the link: {:?}",
        entries(outside.path())
    );
}

#[cfg(unix)]
#[test]
fn sarif_locations_through_an_in_repo_link_are_outside() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn a() {}\n");
    repo.commit("init");
    repo.write("src/lib.rs", "fn a() {}\nfn b() {}\n");
    link(Path::new("/etc"), &repo.path().join("etc"));
    repo.write(
        "lint.sarif",
        r#"{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "planted"}}, "results": [
  {"ruleId": "r", "message": {"text": "through the link"},
   "locations": [{"physicalLocation": {"artifactLocation": {"uri": "etc/passwd"}, "region": {"startLine": 1}}}]},
  {"ruleId": "r", "message": {"text": "inside"},
   "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/lib.rs"}, "region": {"startLine": 2}}}]}
]}]}"#,
    );
    let sarif = repo.path().join("lint.sarif");
    let run = review_working_tree(
        &repo,
        &[
            "--import-sarif",
            sarif.to_str().unwrap(),
            "--analysis-scope",
            "all",
        ],
    );
    run.assert_code(0);
    let json = run.json();
    let paths: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["source"] == "sarif")
        .map(|f| f["location"]["file"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/lib.rs"], "{json:#}");
}
