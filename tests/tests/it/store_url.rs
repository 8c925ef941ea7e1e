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

/// Two workspaces (two machines' checkouts) on one PostgreSQL database: a plan saved by one
/// process loads in another, a session started in one is seen from the other, the first never
/// touches its workspace's SQLite file, and the knowledge store, SQLite-only in this build,
/// says so. Skipped where PostgreSQL is not installed (required under CI).
#[test]
fn two_workspaces_on_one_postgres_database_share_plans_and_sessions() {
    let Some(db) = tollgate_testkit::postgres::database() else {
        return;
    };
    let url = db.url();
    let (one, two) = (repo(), repo());
    let (dir_one, dir_two) = (
        one.path().display().to_string(),
        two.path().display().to_string(),
    );
    let created = tollgate(&[
        "--store",
        &url,
        "plan",
        "create",
        "--repo",
        &dir_one,
        "--json",
        "--save",
        "retry backoff",
    ])
    .run();
    created.assert_code(0);
    let plan_id = created.json()["plan"]["id"].as_str().unwrap().to_string();
    let shown = tollgate(&["plan", "show", "--repo", &dir_two, "--json", &plan_id])
        .env("TOLLGATE_STORE_URL", &url)
        .run();
    shown.assert_code(0);
    assert_eq!(shown.json()["id"], plan_id.as_str());
    // The other workspace's own store has no such plan.
    let local = tollgate(&["plan", "show", "--repo", &dir_two, "--json", &plan_id]).run();
    assert_ne!(local.code, 0, "{}", local.stdout);

    let started = tollgate(&[
        "--store", &url, "session", "start", "--repo", &dir_one, "--base", "main", "--head",
        "feature",
    ])
    .run();
    started.assert_code(0);
    let session_id = started.json()["session_id"].as_str().unwrap().to_string();
    let status = tollgate(&[
        "session",
        "status",
        &session_id,
        "--repo",
        &dir_two,
        "--store",
        &url,
    ])
    .run();
    status.assert_code(0);
    assert!(status.stdout.contains(&session_id), "{}", status.stdout);

    // The shared database copied back into an SQLite file: the same plan and session there.
    let copy = tempfile::tempdir().unwrap();
    let file = format!("sqlite:{}", copy.path().join("copy.db").display());
    let migrated = tollgate(&["store", "migrate", "--from", &url, "--to", &file]).run();
    migrated.assert_code(0);
    let tables = migrated.json()["tables"].as_array().unwrap().clone();
    let rows = |name: &str| {
        tables
            .iter()
            .find(|t| t["table"] == name)
            .map(|t| t["rows"].as_u64().unwrap())
    };
    assert_eq!((rows("plans"), rows("review_sessions")), (Some(1), Some(1)));
    tollgate(&[
        "plan", "show", "--repo", &dir_two, "--store", &file, &plan_id,
    ])
    .run()
    .assert_code(0);
    // Into a store that is not empty: refused unless --force.
    let again = tollgate(&["store", "migrate", "--from", &url, "--to", &file]).run();
    again.assert_code(2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    tollgate(&["store", "migrate", "--from", &url, "--to", &file, "--force"])
        .run()
        .assert_code(0);

    let memory = tollgate(&[
        "--store", &url, "memory", "--repo", &dir_one, "--json", "store", "--thread", "t", "a note",
    ])
    .run();
    memory.assert_code(2);
    assert!(
        memory.stderr.contains("STORE_UNAVAILABLE"),
        "{}",
        memory.stderr
    );
    assert!(memory.stderr.contains("SQLite"), "{}", memory.stderr);

    assert!(
        !one.path().join(".tollgate/tollgate.db").exists(),
        "the workspace's SQLite store was used"
    );
}

/// Issue 33: two `tollgate mcp --http` servers (two machines' checkouts) on one PostgreSQL
/// database serve the same plans: one saved through the first is listed and loaded through the
/// second. Skipped where PostgreSQL is not installed (required under CI).
#[test]
fn two_http_servers_on_one_postgres_database_serve_the_same_plans() {
    use crate::mcp::{post, serve_http};
    let Some(db) = tollgate_testkit::postgres::database() else {
        return;
    };
    let url = db.url();
    let (one, two) = (repo(), repo());
    let store = ["--tools", "plan", "--store", url.as_str()];
    let (_first, first) = serve_http(&one, &store);
    let (_second, second) = serve_http(&two, &store);
    let json = [("Content-Type", "application/json")];
    let (status, created) = post(
        first,
        "/tools/create_plan",
        &json,
        r#"{"task": "retry backoff for the uploader", "auto_save": true}"#,
    );
    assert_eq!(status, 200, "{created}");
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    let id = plan_id_in(&created).unwrap_or_else(|| panic!("no saved plan id in {created}"));

    let (status, listed) = post(second, "/tools/list_plans", &json, "{}");
    assert_eq!(status, 200, "{listed}");
    assert!(listed.contains(&id), "{listed}");
    let (status, loaded) = post(
        second,
        "/tools/load_plan",
        &json,
        &serde_json::json!({ "plan_id": id }).to_string(),
    );
    assert_eq!(status, 200, "{loaded}");
    assert!(
        loaded.contains("retry backoff for the uploader"),
        "{loaded}"
    );
}

/// The first `plan_…` id in a tool's answer.
fn plan_id_in(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) if text.starts_with("plan_") => Some(text.clone()),
        serde_json::Value::Array(items) => items.iter().find_map(plan_id_in),
        serde_json::Value::Object(map) => map.values().find_map(plan_id_in),
        _ => None,
    }
}
