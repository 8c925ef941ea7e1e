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
