//! `tollgate.toml` < environment < flags.

use crate::util::{fixture, tollgate};

#[test]
fn file_then_env_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tollgate.toml"),
        "[review]\nfail_on_severity = \"MEDIUM\"\n",
    )
    .unwrap();
    let diff = fixture("diffs/sample.diff");
    let args = [
        "review",
        "--repo",
        dir.path().to_str().unwrap(),
        "--diff",
        diff.to_str().unwrap(),
    ];

    // The file alone fails the sample (MEDIUM findings).
    tollgate(&args).run().assert_code(1);
    // The environment overrides the file.
    tollgate(&args)
        .env("TOLLGATE_FAIL_ON_SEVERITY", "CRITICAL")
        .run()
        .assert_code(0);
    // A flag overrides the environment.
    let mut with_flag = args.to_vec();
    with_flag.extend(["--fail-on-severity", "LOW"]);
    let run = tollgate(&with_flag)
        .env("TOLLGATE_FAIL_ON_SEVERITY", "CRITICAL")
        .run();
    run.assert_code(1);
    assert_eq!(run.json()["metadata"]["gate"]["fail_on_severity"], "LOW");
}

#[test]
fn bad_config_is_exit_2_with_location() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tollgate.toml"),
        "[review]\nfail_on_sevrity = \"LOW\"\n",
    )
    .unwrap();
    let diff = fixture("diffs/sample.diff");
    let run = tollgate(&[
        "review",
        "--repo",
        dir.path().to_str().unwrap(),
        "--diff",
        diff.to_str().unwrap(),
    ])
    .run();
    run.assert_code(2);
    assert!(run.stderr.contains("tollgate.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("line 2"), "{}", run.stderr);
    assert!(run.stderr.contains("fail_on_sevrity"), "{}", run.stderr);

    let run = tollgate(&["review", "--diff", diff.to_str().unwrap()])
        .env("TOLLGATE_MAX_FINDINGS", "lots")
        .run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("TOLLGATE_MAX_FINDINGS"),
        "{}",
        run.stderr
    );
}

/// Monorepos: the nearest `tollgate.toml` above a file sets its rules; a nested file may not
/// set what judges the whole change.
#[test]
fn nearest_nested_config_wins_for_the_files_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        ".review-invariants.yml",
        "rules:\n  - id: no-todo\n    rule: No TODO\n    paths: [\"**\"]\n    severity: LOW\n    category: style\n    action: deny\n    deny: { regex: { pattern: TODO } }\n",
    );
    // The root raises no-todo; `svc/` switches it off; `svc/core/` switches it back on.
    write("tollgate.toml", "[rules.no-todo]\nseverity = \"MEDIUM\"\n");
    write("svc/tollgate.toml", "[rules.no-todo]\nenabled = false\n");
    write(
        "svc/core/tollgate.toml",
        "[rules.no-todo]\nenabled = true\nseverity = \"CRITICAL\"\n",
    );
    let mut diff = String::new();
    for path in ["lib/a.py", "svc/b.py", "svc/core/c.py"] {
        diff.push_str(&format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1  # TODO later\n"
        ));
    }
    std::fs::write(dir.path().join("change.diff"), &diff).unwrap();
    let args = [
        "review",
        "--repo",
        dir.path().to_str().unwrap(),
        "--diff",
        dir.path()
            .join("change.diff")
            .to_str()
            .unwrap()
            .to_string()
            .leak(),
        "--format",
        "json",
    ];
    let run = tollgate(&args).run();
    // The CRITICAL one under svc/core fails the gate.
    run.assert_code(1);
    let json = run.json();
    let mut todo: Vec<(String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule_id"].as_str().unwrap().contains("no-todo"))
        .map(|f| {
            (
                f["location"]["file"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    todo.sort();
    assert_eq!(
        todo,
        [
            ("lib/a.py".to_string(), "MEDIUM".to_string()),
            ("svc/core/c.py".to_string(), "CRITICAL".to_string()),
        ],
        "{json}"
    );

    write(
        "svc/tollgate.toml",
        "[review]\nfail_on_severity = \"INFO\"\n",
    );
    let run = tollgate(&args).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("svc/tollgate.toml: [review]"),
        "{}",
        run.stderr
    );
}
