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
}
