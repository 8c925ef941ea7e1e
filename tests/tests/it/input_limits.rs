//! Inputs a pull request or a user controls cannot hang `tollgate review` or exhaust its memory:
//! devices and FIFOs are refused without reading, sizes are capped with errors that name the
//! file and the limit, and deeply nested YAML or TOML is refused up front.

use crate::util::{TestRepo, fixture, tollgate};

fn sample() -> String {
    fixture("diffs/sample.diff").display().to_string()
}

#[test]
fn devices_named_as_inputs_are_refused_without_reading_them() {
    let sample = sample();
    for args in [
        vec!["--diff", "/dev/zero"],
        vec!["--diff", &sample, "--import-sarif", "/dev/zero"],
        vec!["--diff", &sample, "--baseline", "/dev/zero"],
    ] {
        let mut all = vec!["review"];
        all.extend(&args);
        let run = tollgate(&all).run();
        run.assert_code(2);
        assert!(
            run.stderr
                .contains("/dev/zero is a device, not a regular file"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_without_a_writer_is_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("change.diff");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Nobody ever writes to it: a blocking open would hang this test.
    let run = tollgate(&["review", "--diff", fifo.to_str().unwrap()]).run();
    run.assert_code(2);
    assert!(
        run.stderr.contains("is a FIFO, not a regular file"),
        "{}",
        run.stderr
    );
}

#[test]
fn oversized_diffs_name_the_limit_and_how_to_raise_it() {
    let diff = std::fs::read(fixture("diffs/sample.diff")).unwrap();
    let limit = (diff.len() - 1).to_string();
    let from_stdin = tollgate(&["review", "--diff", "-", "--max-input-bytes", &limit])
        .stdin(diff.clone())
        .run();
    from_stdin.assert_code(2);
    assert!(
        from_stdin.stderr.contains(&format!(
            "diff from stdin is larger than the limit of {limit} bytes; raise it with review.max_input_bytes in tollgate.toml, TOLLGATE_MAX_INPUT_BYTES or --max-input-bytes"
        )),
        "{}",
        from_stdin.stderr
    );
    let from_env = tollgate(&["review", "--diff", &sample()])
        .env("TOLLGATE_MAX_INPUT_BYTES", &limit)
        .run();
    from_env.assert_code(2);
    assert!(
        from_env.stderr.contains(&format!(
            "{} is larger than the limit of {limit} bytes",
            sample()
        )),
        "{}",
        from_env.stderr
    );
    tollgate(&[
        "review",
        "--diff",
        "-",
        "--max-input-bytes",
        &diff.len().to_string(),
    ])
    .stdin(diff)
    .run()
    .assert_code(0);
}

#[test]
fn deeply_nested_invariants_and_config_are_refused_up_front() {
    let repo = TestRepo::new();
    repo.write(
        ".review-invariants.yml",
        &format!("a: {}", "[".repeat(200_000)),
    );
    let run = tollgate(&["review", "--diff", &sample()])
        .current_dir(repo.path())
        .run();
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("the document nests deeper than 64 levels"),
        "{}",
        run.stderr
    );

    let repo = TestRepo::new();
    repo.write("tollgate.toml", &format!("a = {}", "[".repeat(200_000)));
    let run = tollgate(&["review", "--diff", &sample()])
        .current_dir(repo.path())
        .run();
    run.assert_code(2);
    assert!(run.stderr.contains("tollgate.toml"), "{}", run.stderr);
}
