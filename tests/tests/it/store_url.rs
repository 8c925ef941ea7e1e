//! `--store URL`, `TOLLGATE_STORE_URL` and `[store] url`: every command opens the store the
//! configuration names, the flag before or after the subcommand.

use crate::util::{TestRepo, tollgate};

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "fn a() {}\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/a.rs", "fn a() {}\nfn b() {}\n");
    repo.commit("feature");
    repo
}

#[test]
fn the_store_flag_and_variable_name_the_store_every_command_uses() {
    let repo = repo();
    let dir = repo.path().display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let db = elsewhere.path().join("shared.db");
    let url = format!("sqlite:{}", db.display());
    // Before the subcommand.
    let run = tollgate(&[
        "--store", &url, "session", "start", "--repo", &dir, "--base", "main", "--head", "feature",
    ])
    .run();
    run.assert_code(0);
    let id = run.json()["session_id"].as_str().unwrap().to_string();
    assert!(db.is_file(), "the session went to the named store");
    assert!(
        !repo.path().join(".tollgate/tollgate.db").exists(),
        "the workspace's default store was not used"
    );
    // After the subcommand.
    tollgate(&["session", "status", &id, "--repo", &dir, "--store", &url])
        .run()
        .assert_code(0);
    // The variable names it too; without either, the default store has no such session.
    tollgate(&["session", "status", &id, "--repo", &dir])
        .env("TOLLGATE_STORE_URL", &url)
        .run()
        .assert_code(0);
    let missing = tollgate(&["session", "status", &id, "--repo", &dir]).run();
    missing.assert_code(2);
    assert!(
        missing.stderr.contains("No review session"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_repository_cannot_point_the_store_outside_the_workspace_and_a_password_never_prints() {
    let repo = repo();
    let dir = repo.path().display().to_string();
    repo.write(
        "tollgate.toml",
        "[store]\nurl = \"sqlite:/tmp/tollgate-elsewhere.db\"\n",
    );
    let run = tollgate(&["plan", "list", "--repo", &dir]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("TOLLGATE_STORE_URL"), "{}", run.stderr);
    // The operator's setting wins over the file's.
    tollgate(&[
        "plan",
        "list",
        "--repo",
        &dir,
        "--store",
        "sqlite:.tollgate/tollgate.db",
    ])
    .run()
    .assert_code(0);
    let run = tollgate(&[
        "plan",
        "list",
        "--repo",
        &dir,
        "--store",
        "postgres://tollgate:hunter2secret@db.invalid/reviews",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("PGPASSWORD"), "{}", run.stderr);
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
}
