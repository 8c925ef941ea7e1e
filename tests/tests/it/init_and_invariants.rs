//! `tollgate init`, `tollgate invariants check`, and invariants inside a review.

use crate::util::{TestRepo, tollgate};

#[test]
fn init_writes_valid_starters_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    tollgate(&["init", "--repo", path]).run().assert_code(0);
    let starter = std::fs::read_to_string(dir.path().join("tollgate.toml")).unwrap();
    // A commented model section: the first thing a user setting up a model looks for.
    assert!(starter.contains("\n[llm]\n"), "{starter}");
    assert!(starter.contains("# provider = "), "{starter}");
    assert!(dir.path().join(".review-invariants.yml").is_file());

    std::fs::write(dir.path().join("tollgate.toml"), "# mine\n").unwrap();
    let again = tollgate(&["init", "--repo", path]).run();
    again.assert_code(2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tollgate.toml")).unwrap(),
        "# mine\n",
        "a refused init writes nothing"
    );

    let check = tollgate(&["invariants", "check"])
        .current_dir(dir.path())
        .run();
    check.assert_code(0);
    assert!(check.stdout.contains("rule(s) valid"), "{}", check.stdout);
}

#[test]
fn invariants_check_reports_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yml");
    std::fs::write(
        &file,
        "security:\n  - id: no-eval\n    rule: no eval\n    paths: [\"**/*.js\"]\n    severity: SEVERE\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: \"eval\\\\(\"\n",
    )
    .unwrap();
    let run = tollgate(&["invariants", "check", file.to_str().unwrap()]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("bad.yml:5"), "{}", run.stderr);
    assert!(run.stderr.contains("no-eval"), "{}", run.stderr);

    std::fs::write(
        &file,
        "security:\n  - id: bad-regex\n    rule: broken\n    paths: [\"**\"]\n    severity: LOW\n    category: style\n    action: deny\n    deny:\n      regex:\n        pattern: \"(unclosed\"\n",
    )
    .unwrap();
    let run = tollgate(&["invariants", "check", file.to_str().unwrap()]).run();
    run.assert_code(2);
    assert!(run.stderr.contains("bad-regex"), "{}", run.stderr);
}

#[test]
fn review_applies_the_default_invariants_file_at_exact_lines() {
    let repo = TestRepo::new();
    repo.write(
        ".review-invariants.yml",
        "security:\n  - id: no-eval\n    rule: Do not call eval\n    paths: [\"**/*.js\"]\n    severity: HIGH\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: \"\\\\beval\\\\(\"\n",
    );
    repo.write("web/app.js", "const a = 1;\n");
    repo.commit("init");
    repo.write(
        "web/app.js",
        "const a = 1;\nconst b = eval(input);\nconst c = 2;\nconst d = eval(other);\n",
    );
    let dir = repo.path().to_str().unwrap();
    let run = tollgate(&[
        "review",
        "--repo",
        dir,
        "--working-tree",
        "--fail-on-severity",
        "HIGH",
    ])
    .run();
    run.assert_code(1);
    let json = run.json();
    let lines: Vec<u64> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule_id"] == "no-eval")
        .map(|f| f["location"]["start_line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![2, 4], "one finding per occurrence, exact lines");
    assert_eq!(
        json["metadata"]["invariants_path"],
        ".review-invariants.yml"
    );

    // An explicitly named invariants file must exist.
    let run = tollgate(&[
        "review",
        "--repo",
        dir,
        "--working-tree",
        "--invariants",
        "missing.yml",
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("missing.yml"), "{}", run.stderr);

    // Paths outside the workspace are refused.
    let run = tollgate(&[
        "review",
        "--repo",
        dir,
        "--working-tree",
        "--invariants",
        "../outside.yml",
    ])
    .run();
    run.assert_code(2);
}
