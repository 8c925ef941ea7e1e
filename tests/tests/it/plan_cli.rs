//! `tollgate plan create|refine|show|visualize` end to end, without a model.

use crate::util::{TestRepo, tollgate};

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub mod retry;\n")
        .write("src/retry.rs", "pub struct Policy; // retry backoff\n")
        .write("README.md", "# Retry\n");
    repo.commit("init");
    repo
}

#[test]
fn create_show_refine_and_visualize_a_deterministic_plan() {
    let repo = repo();
    let dir = repo.path().to_str().unwrap();
    let created = tollgate(&[
        "plan", "create", "--repo", dir, "--json", "Add", "retry", "backoff",
    ])
    .run();
    created.assert_code(0);
    let response = created.json();
    assert_eq!(response["plan"]["generated_by"]["method"], "deterministic");
    assert_eq!(response["plan"]["goal"], "Add retry backoff");
    let plan_path = repo.path().join("plan.json");
    std::fs::write(&plan_path, response["plan"].to_string()).unwrap();
    let plan_file = plan_path.to_str().unwrap();

    let shown = tollgate(&["plan", "show", "--repo", dir, plan_file]).run();
    shown.assert_code(0);
    assert!(
        shown.stdout.starts_with("# Plan: Add retry backoff"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("deterministic (no model)"));

    let gantt = tollgate(&[
        "plan",
        "visualize",
        "--repo",
        dir,
        "--type",
        "gantt",
        plan_file,
    ])
    .run();
    gantt.assert_code(0);
    assert!(gantt.stdout.starts_with("gantt\n"), "{}", gantt.stdout);

    let refined = tollgate(&[
        "plan",
        "refine",
        "--repo",
        dir,
        "--json",
        plan_file,
        "--feedback",
        "Cap at 30 s",
        "--focus",
        "2",
    ])
    .run();
    refined.assert_code(0);
    assert_eq!(refined.json()["plan"]["version"], 2);

    // From stdin, with a cycle: exit 2 and the cycle named.
    let cyclic = r#"{"steps": [{"step_number": 1, "title": "a", "depends_on": [2]},
                               {"step_number": 2, "title": "b", "depends_on": [1]}]}"#;
    let failed = tollgate(&["plan", "visualize", "--repo", dir, "-"])
        .stdin(cyclic)
        .run();
    failed.assert_code(2);
    assert!(failed.stderr.contains("INVALID_INPUT"), "{}", failed.stderr);
    assert!(failed.stderr.contains("cycle"), "{}", failed.stderr);
}

#[test]
fn create_can_save_and_refine_by_saved_id() {
    let repo = repo();
    let dir = repo.path().to_str().unwrap();
    let created = tollgate(&[
        "plan",
        "create",
        "--repo",
        dir,
        "--json",
        "--save",
        "retry backoff",
    ])
    .run();
    created.assert_code(0);
    let response = created.json();
    let id = response["plan"]["id"].as_str().unwrap().to_string();
    assert_eq!(response["saved"]["outcome"], "created");
    let shown = tollgate(&["plan", "show", "--repo", dir, "--json", &id]).run();
    shown.assert_code(0);
    assert_eq!(shown.json()["id"], id.as_str());

    // Refining prints version 2 and says it saved nothing; --save stores it.
    let feedback = [
        "plan",
        "refine",
        "--repo",
        dir,
        &id,
        "--feedback",
        "add a jitter test",
    ];
    let printed = tollgate(&feedback).run();
    printed.assert_code(0);
    assert!(printed.stdout.contains("version 2"), "{}", printed.stdout);
    assert!(printed.stderr.contains("not saved"), "{}", printed.stderr);
    let version = |id: &str| {
        tollgate(&["plan", "show", "--repo", dir, "--json", id])
            .run()
            .json()["version"]
            .clone()
    };
    assert_eq!(version(&id), 1);
    let saved = tollgate(&[&feedback[..], &["--save"]].concat()).run();
    saved.assert_code(0);
    assert!(!saved.stderr.contains("not saved"), "{}", saved.stderr);
    assert_eq!(version(&id), 2);
    let json = tollgate(&[&feedback[..], &["--save", "--json"]].concat()).run();
    assert_eq!(json.json()["saved"]["outcome"], "new_version");
    assert_eq!(version(&id), 3);
}

#[test]
fn an_unknown_plan_id_points_at_the_cli_listing() {
    let repo = repo();
    let dir = repo.path().to_str().unwrap();
    for command in ["visualize", "show"] {
        let run = tollgate(&["plan", command, "--repo", dir, "plan_nope"]).run();
        run.assert_code(2);
        assert!(
            run.stderr.contains("`tollgate plan list`") && !run.stderr.contains("list_plans"),
            "{}",
            run.stderr
        );
    }
}

/// A `plan save` killed at arbitrary moments of its write leaves a store that opens, passes
/// SQLite's integrity check, and holds either the version before or the version after — never
/// part of one.
#[test]
fn a_writer_killed_mid_save_leaves_the_store_consistent() {
    const STEPS: usize = 800;
    const ROUNDS: u32 = 12;
    let repo = repo();
    let dir = repo.path().to_str().unwrap();
    // A large plan, so each save spends a while inside its transaction.
    let steps: Vec<serde_json::Value> = (1..=STEPS)
        .map(|n| {
            serde_json::json!({"step_number": n, "title": format!("Step {n}"),
                "description": "x".repeat(200)})
        })
        .collect();
    let plan_path = repo.path().join("big.json");
    std::fs::write(
        &plan_path,
        serde_json::json!({"goal": "Big", "steps": steps}).to_string(),
    )
    .unwrap();
    let plan_file = plan_path.to_str().unwrap();
    // Built (if need be) before anything is timed.
    let bin = crate::util::tollgate_bin();
    let save = |overwrite: bool| {
        let mut command = std::process::Command::new(bin);
        command.args(["plan", "save", "--repo", dir, "--name", "big", plan_file]);
        if overwrite {
            command.arg("--overwrite");
        }
        command
    };
    // How long one save takes here sets where the kills land: spread over its whole life
    // (start-up, parsing, the transaction, the commit), whatever the machine's speed.
    let started = std::time::Instant::now();
    assert!(save(false).status().unwrap().success());
    let lifetime = started.elapsed();

    let mut killed = 0;
    for round in 0..ROUNDS {
        let mut child = save(true)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(lifetime * (round + 1) / (ROUNDS + 1));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        child.kill().ok();
        child.wait().unwrap();

        let db = rusqlite::Connection::open(repo.path().join(".tollgate/tollgate.db")).unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok", "round {round}");
        drop(db);
        let loaded = tollgate(&["plan", "load", "--repo", dir, "--name", "big"]).run();
        loaded.assert_code(0);
        let plan = loaded.json();
        assert_eq!(
            plan["steps"].as_array().map(Vec::len),
            Some(STEPS),
            "round {round}"
        );
        // The history lists exactly the versions up to the current one.
        let id = plan["id"].as_str().unwrap().to_string();
        let history = tollgate(&["plan", "history", "--repo", dir, "--json", &id]).run();
        history.assert_code(0);
        let versions = history.json()["versions"].as_array().unwrap().len();
        assert_eq!(
            versions as u64,
            plan["version"].as_u64().unwrap(),
            "round {round}"
        );
    }
    // The test proves something only if some saves died before finishing.
    assert!(killed > 0, "every save finished before it could be killed");
}
