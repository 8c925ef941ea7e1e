//! Every shell example of README.md, run against the built `tollgate` in a fixture repository.
//!
//! The fenced `sh`, `bash`, `shell` and `console` blocks are read in order; each line that runs
//! `tollgate` (first in the line, after a pipe or inside `$(…)`) is run with bash in one
//! temporary git repository per block, the binary under test first on `PATH`, so the examples
//! of a block can build on each other (`id=$(tollgate session start … --detach)`). Other lines
//! (`cargo …`, `set -o pipefail`) are not run. An example passes when it exits 0 or 1 (1 is a
//! failed gate, an answer); 2 is a usage or runtime error, which is what a renamed flag or a
//! wrong argument gives. Usage synopses (`[--flag]`, `<id>`) are `text` blocks, not examples.

use std::path::Path;
use std::process::Command;

use crate::util::{TestRepo, fixture, tollgate_bin};

/// Examples that need what a test must not use: a model, the network or GitHub. Matched as the
/// start of the example (after `VAR=$(`); each says why.
const SKIPPED: &[(&str, &str)] = &[
    // Model-only reviews need a configured model (LLM_NOT_CONFIGURED without one).
    (
        "git diff main... | tollgate review-changes",
        "needs a model",
    ),
    ("tollgate review-git", "needs a model"),
    // Posts to a pull request through reviewdog: needs GitHub (and reviewdog).
    (
        "tollgate review --base origin/main --head HEAD --format rdjson",
        "needs GitHub and reviewdog",
    ),
];

#[test]
fn every_shell_example_of_the_readme_runs() {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join("README.md"),
    )
    .unwrap();
    let blocks = shell_blocks(&readme);
    // The README's first command, install and review, is among them.
    assert!(
        examples(&blocks[0])
            .first()
            .is_some_and(|first| first.starts_with("tollgate review --diff ")),
        "{:?}",
        examples(&blocks[0])
    );
    let n_examples: usize = blocks.iter().map(|b| examples(b).len()).sum();
    assert!(n_examples >= 10, "only {n_examples} examples found");
    let failures: Vec<String> = blocks.iter().flat_map(|block| run_block(block)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_broken_example_fails() {
    let readme = "Text.\n\n```sh\ntollgate review --diff tests/fixtures/diffs/sample.diff \\\n  --no-such-flag\ntollgate --version   # fine\n```\n";
    let blocks = shell_blocks(readme);
    assert_eq!(examples(&blocks[0]).len(), 2);
    let failures = run_block(&blocks[0]);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("--no-such-flag"), "{}", failures[0]);
}

/// The bodies of the README's shell blocks, `$ ` prompts of `console` blocks removed.
fn shell_blocks(readme: &str) -> Vec<String> {
    enum State {
        Text,
        Shell { console: bool, body: String },
        Other,
    }
    let mut blocks = Vec::new();
    let mut state = State::Text;
    for line in readme.lines() {
        let fence = line.trim_start().strip_prefix("```");
        state = match (state, fence) {
            (State::Text, Some(info)) => match info.trim() {
                "sh" | "bash" | "shell" => State::Shell {
                    console: false,
                    body: String::new(),
                },
                "console" => State::Shell {
                    console: true,
                    body: String::new(),
                },
                _ => State::Other,
            },
            (State::Text, None) => State::Text,
            (State::Shell { body, .. }, Some(_)) => {
                blocks.push(body);
                State::Text
            }
            (State::Shell { console, mut body }, None) => {
                let command = if console {
                    line.strip_prefix("$ ")
                } else {
                    Some(line)
                };
                if let Some(command) = command {
                    body.push_str(command);
                    body.push('\n');
                }
                State::Shell { console, body }
            }
            (State::Other, Some(_)) => State::Text,
            (State::Other, None) => State::Other,
        };
    }
    blocks
}

/// A block's commands (continuation lines joined) that run `tollgate`.
fn examples(block: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        if let Some(start) = line.strip_suffix('\\') {
            pending.push_str(start);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let mut command = std::mem::take(&mut pending);
        // `cargo install … && tollgate …` (the README's first line): the binary under test is
        // built already, so only the part that runs it is run.
        if let Some((install, run)) = command.split_once(" && tollgate ")
            && install.trim_start().starts_with("cargo install ")
        {
            command = format!("tollgate {run}");
        }
        if runs_tollgate(&command) {
            commands.push(command.trim().to_string());
        }
    }
    commands
}

fn runs_tollgate(command: &str) -> bool {
    let code = command.split(" #").next().unwrap_or_default();
    code.trim_start().starts_with("tollgate ")
        || ["| tollgate ", "$(tollgate "]
            .iter()
            .any(|at| code.contains(at))
}

/// Runs a block's examples in a fresh fixture; one message per failing example.
fn run_block(block: &str) -> Vec<String> {
    let examples = examples(block);
    if examples.is_empty() {
        return Vec::new();
    }
    let repo = fixture_repo();
    let bin_dir = tollgate_bin().parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    // One shell for the block, so variables carry from one example to the next; each example
    // reports its own exit status on its own line of a side file.
    let status_file = repo.path().join(".git/example-status");
    let mut script = String::from("set -o pipefail\n");
    let mut run = Vec::new();
    for example in &examples {
        // `id=$(tollgate …)` is matched as `tollgate …`.
        let bare = example
            .split_once("=$(")
            .filter(|(var, _)| var.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map_or(example.as_str(), |(_, command)| command);
        if let Some((_, why)) = SKIPPED.iter().find(|(prefix, _)| bare.starts_with(prefix)) {
            eprintln!("skipped ({why}): {example}");
            continue;
        }
        script.push_str(&format!(
            "{example}\necho $? >> '{}'\n",
            status_file.display()
        ));
        run.push(example);
    }
    let output = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &script])
        .current_dir(repo.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("TOLLGATE_LLM_PROVIDER")
        .output()
        .expect("bash runs");
    let statuses = std::fs::read_to_string(&status_file).unwrap_or_default();
    let statuses: Vec<&str> = statuses.lines().collect();
    let stderr = String::from_utf8_lossy(&output.stderr);
    for (n, example) in run.iter().enumerate() {
        match statuses.get(n) {
            Some(&"0" | &"1") => {}
            Some(code) => failures.push(format!(
                "README example exited {code}: {example}\nstderr of its block:\n{stderr}"
            )),
            None => failures.push(format!("README example did not run: {example}\n{stderr}")),
        }
    }
    failures
}

/// A repository the examples can run in, as a user on a pull request's branch has it: `main`
/// with `a.rs`, `b.rs` and the sample diff the README's first command reviews; `feature`
/// (checked out) changing both sources; `change.diff` on disk.
fn fixture_repo() -> TestRepo {
    let repo = TestRepo::new();
    let sample = std::fs::read_to_string(fixture("diffs/sample.diff")).unwrap();
    repo.write("a.rs", "pub fn a() -> u32 {\n    1\n}\n")
        .write("b.rs", "pub fn b() -> u32 {\n    2\n}\n")
        .write("tests/fixtures/diffs/sample.diff", &sample);
    repo.commit("init");
    repo.branch("feature");
    repo.write("a.rs", "pub fn a() -> u32 {\n    1 + 1\n}\n")
        .write(
            "b.rs",
            "pub fn b() -> u32 {\n    retry_with_backoff(2)\n}\n",
        );
    repo.commit("feature");
    repo.write(
        "change.diff",
        "diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n pub fn a() -> u32 {\n-    1\n+    3\n }\n",
    );
    repo
}
