//! Test fixtures: a temporary git repository builder and a runner for the `tollgate` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use git2::{Repository, Signature};
use tempfile::TempDir;

/// The `tollgate` binary under test, built once per test process so it is never stale.
/// `TOLLGATE_BIN` points at another build (a release binary, say).
pub fn tollgate_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("TOLLGATE_BIN") {
        Some(path) => PathBuf::from(path),
        None => workspace_bin("tollgate"),
    })
}

/// Builds the workspace's binaries (`cargo build --workspace --bins`, so `bin` is never stale)
/// and returns the path of `bin`. Call it once per binary, from a `OnceLock`.
pub fn workspace_bin(bin: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    // `--workspace`, not `-p PACKAGE`: cargo unifies features over the packages of one command,
    // so a one-package build resolves serde, libc, tokio… with other features than the test
    // build and compiles a second copy of nearly every dependency (twice the time and disk).
    cargo
        .args(["build", "--quiet", "--workspace", "--bins"])
        .current_dir(workspace);
    // The test runner sets the variables cargo gives a crate (`CARGO_PKG_NAME`, …). Build
    // scripts such as ring's declare `rerun-if-env-changed` on them, so inheriting them made
    // this build differ from a shell's `cargo build` and recompile ring, rustls, reqwest and
    // Tollgate itself each time the two alternated.
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if is_crate_variable(key) {
            cargo.env_remove(key);
        }
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "building the {bin} binary failed");
    // The test executable lives in target/<profile>/deps/.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let path = profile_dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} not found", path.display());
    path
}

/// Variables cargo sets for the crate it compiles or runs, never meant for a nested cargo.
fn is_crate_variable(key: &str) -> bool {
    [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_BIN_",
        "CARGO_CRATE_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
    ]
    .iter()
    .any(|prefix| key.starts_with(prefix))
        || key == "OUT_DIR"
}

/// A fixture file under tests/fixtures.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// The outcome of one `tollgate` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// stdout as JSON; panics with both streams when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e})\nstdout:\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    pub fn assert_code(&self, expected: i32) -> &Run {
        assert_eq!(
            self.code, expected,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A `tollgate` invocation with a clean environment (no `TOLLGATE_*` from the caller).
pub struct Tollgate {
    command: Command,
    stdin: Option<Vec<u8>>,
}

pub fn tollgate(args: &[&str]) -> Tollgate {
    let mut command = Command::new(tollgate_bin());
    command.args(args);
    for (key, _) in std::env::vars() {
        // The providers' usual key variables are read when `api_key_env` is unset.
        if key.starts_with("TOLLGATE_")
            || key.starts_with("CE_REVIEW_")
            || key == "OPENAI_API_KEY"
            || key == "ANTHROPIC_API_KEY"
        {
            command.env_remove(key);
        }
    }
    command.env("NO_COLOR", "1");
    Tollgate {
        command,
        stdin: None,
    }
}

impl Tollgate {
    pub fn current_dir(mut self, dir: &Path) -> Tollgate {
        self.command.current_dir(dir);
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Tollgate {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Tollgate {
        self.command.env_remove(key);
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Tollgate {
        self.stdin = Some(bytes.into());
        self
    }

    /// Starts the command without waiting (output discarded), for tests that stop it midway.
    pub fn spawn(mut self) -> std::process::Child {
        self.command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .expect("tollgate starts")
    }

    pub fn run(mut self) -> Run {
        use std::io::Write;
        self.command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        let mut child = self.command.spawn().expect("tollgate starts");
        if let Some(bytes) = self.stdin.take() {
            let mut stdin = child.stdin.take().unwrap();
            // Write from a thread so a large input cannot deadlock against a full stdout pipe.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        Run::from(child.wait_with_output().expect("tollgate finishes"))
    }
}

/// A temporary git repository with helpers to write files and commit.
pub struct TestRepo {
    dir: TempDir,
    repo: Repository,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        // A fixed branch name, whatever the machine's init.defaultBranch says.
        repo.set_head("refs/heads/main").unwrap();
        TestRepo { dir, repo }
    }

    /// The repository already in `dir` (a clone, say).
    pub fn open(dir: TempDir) -> TestRepo {
        let repo = Repository::open(dir.path()).unwrap();
        TestRepo { dir, repo }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, content: &str) -> &TestRepo {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Stages everything (additions, changes, deletions).
    pub fn stage_all(&self) -> &TestRepo {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"].iter(), None).unwrap();
        index.write().unwrap();
        self
    }

    /// Commits the staged state on the current branch; returns the commit id.
    pub fn commit(&self, message: &str) -> String {
        self.stage_all();
        let mut index = self.repo.index().unwrap();
        let tree_id = index.write_tree().unwrap();
        let tree = self.repo.find_tree(tree_id).unwrap();
        let sig = Signature::now("Test", "test@example.com").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        let id = self
            .repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap();
        id.to_string()
    }

    /// Creates `name` at HEAD and switches to it (the working tree already matches).
    pub fn branch(&self, name: &str) -> &TestRepo {
        let head = self.repo.head().unwrap().peel_to_commit().unwrap();
        self.repo.branch(name, &head, false).unwrap();
        self.repo.set_head(&format!("refs/heads/{name}")).unwrap();
        self
    }

    /// Switches to an existing branch and resets the working tree to it.
    pub fn checkout(&self, name: &str) -> &TestRepo {
        self.repo.set_head(&format!("refs/heads/{name}")).unwrap();
        self.repo
            .checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
            .unwrap();
        self
    }
}
