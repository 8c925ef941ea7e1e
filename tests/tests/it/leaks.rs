//! Hostile pull requests: secrets never leave through findings (every report format, the
//! session store, debug logs), and nothing a pull request names runs as a workflow command in
//! the CI log. Fake secrets are assembled at run time so this file holds nothing token-shaped.

use std::path::Path;

use crate::util::{TestRepo, tollgate};

/// Each secret with the part of it that must never appear (what follows any public prefix).
struct Secret {
    value: String,
    hidden: String,
}

fn secret(prefix: &str, rest: &str) -> Secret {
    Secret {
        value: format!("{prefix}{rest}"),
        hidden: rest.to_string(),
    }
}

fn secrets() -> Vec<Secret> {
    vec![
        secret(&format!("gh{}_", "p"), &"Q7wE".repeat(9)),
        secret(&format!("sk_{}_", "test"), "51Hq8ZtK2pLmN4vR7xYb3cWd9"),
        secret(&format!("AK{}", "IA"), "QWERTYUIOPASDFGZ"),
        secret("", "Vx7kq2Lm9pZ"),
        secret("", "Geh31m!Tz8"),
        secret("", "f8Kq2LmZx9Rt4Vb7Nc1Hy6Jw3Pd5Gs0A"),
    ]
}

const INVARIANTS: &str = r#"config:
  - id: no-inline-config
    rule: Configuration values come from the environment
    paths: ["**"]
    severity: HIGH
    category: security
    action: deny
    deny: { regex: { pattern: "(TOKEN|STRIPE|KEY_ID|curl|Passwort|INSERT)" } }
"#;

/// `main` with an invariants file; `feature` adds every secret on lines that TG002, TG008 and
/// the invariant all quote.
fn pr_with_secrets() -> TestRepo {
    let s = secrets();
    let repo = TestRepo::new();
    repo.write(".review-invariants.yml", INVARIANTS)
        .write("README.md", "# app\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write(
        "src/config.ts",
        &format!(
            "export const GITHUB_TOKEN = \"{}\";\nexport const STRIPE = \"{}\";\nexport const AWS_KEY_ID = \"{}\";\n",
            s[0].value, s[1].value, s[2].value
        ),
    )
    .write(
        "deploy.sh",
        &format!(
            "#!/bin/sh\ncurl -u \"deploy:{}\" https://artifacts.internal/upload\n",
            s[3].value
        ),
    )
    .write("docs/setup.md", &format!("# Setup\n\nPasswort: {}\n", s[4].value))
    .write(
        "db/seed.sql",
        &format!(
            "INSERT INTO oauth_clients (client_id, client_secret) VALUES ('web', '{}');\n",
            s[5].value
        ),
    );
    repo.commit("feature");
    repo
}

fn assert_no_secret(name: &str, text: &str) {
    for secret in secrets() {
        assert!(
            !text.contains(&secret.hidden),
            "{name} leaks {}…:\n{text}",
            &secret.hidden[..4]
        );
    }
}

/// Every file under `dir`, as lossy text (the store's database and its WAL included).
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map_while(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap_or_default();
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    out
}

#[test]
fn secrets_never_leave_through_any_format_the_store_or_debug_logs() {
    let repo = pr_with_secrets();
    let dir = repo.path().display().to_string();
    let out = tempfile::tempdir().unwrap();
    let formats = [
        "sarif",
        "markdown",
        "rdjson",
        "rdjsonl",
        "gitlab",
        "checkstyle",
        "junit",
        "github",
    ];
    let mut args = vec![
        "review".to_string(),
        "--repo".into(),
        dir.clone(),
        "--base".into(),
        "main".into(),
        "--head".into(),
        "feature".into(),
        "--format".into(),
        "json".into(),
    ];
    for format in formats {
        args.push("--format".into());
        args.push(format!("{format}={}", out.path().join(format).display()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = tollgate(&args).env("TOLLGATE_LOG", "trace").run();
    run.assert_code(1);
    let json = run.json();
    let findings = json["findings"].as_array().unwrap();
    // The producers that quote lines did report on them: rules, the secret rule, the invariant.
    for rule in ["TG002", "TG008", "no-inline-config"] {
        assert!(
            findings.iter().any(|f| f["rule_id"] == rule),
            "{rule} missing: {json}"
        );
    }
    assert!(run.stdout.contains("ghp_****"), "{}", run.stdout);
    assert_no_secret("stdout", &run.stdout);
    assert_no_secret("stderr (trace logs)", &run.stderr);
    for format in formats {
        let text = std::fs::read_to_string(out.path().join(format)).unwrap();
        assert!(!text.is_empty(), "{format}");
        assert_no_secret(format, &text);
    }

    let started = tollgate(&[
        "session", "start", "--repo", &dir, "--base", "main", "--head", "feature",
    ])
    .env("TOLLGATE_LOG", "trace")
    .run();
    // The pull request adds a secret, so the session's gate fails: exit 1, as `review` does.
    started.assert_code(1);
    assert_no_secret(
        "session start",
        &format!("{}{}", started.stdout, started.stderr),
    );
    let id = started.json()["session_id"].as_str().unwrap().to_string();
    let listed = tollgate(&["session", "status", &id, "--repo", &dir, "--findings"]).run();
    listed.assert_code(0);
    let stored = listed.json()["finding_list"].as_array().unwrap().clone();
    assert!(stored.iter().any(|f| f["rule_id"] == "TG008"), "{stored:?}");
    assert_no_secret("session status --findings", &listed.stdout);
    let store = repo.path().join(".tollgate");
    let files = files_under(&store);
    assert!(files.iter().any(|(name, _)| name.ends_with("tollgate.db")));
    for (name, text) in files {
        assert_no_secret(&name, &text);
    }
}

#[test]
fn paths_in_fail_reasons_and_logs_cannot_run_workflow_commands() {
    let token = format!("gh{}_{}", "p", "Zx9Q".repeat(9));
    let repo = TestRepo::new();
    repo.write("README.md", "# r\n");
    repo.commit("base");
    repo.branch("feature");
    let hostile = [
        "src/##[set-output name=should-fail;]false.py",
        "src/a\n::set-output name=should-fail::false.py",
        "src/\u{1b}]0;pwned\u{7}\u{1b}[2K.py",
    ];
    for path in hostile {
        repo.write(path, &format!("KEY = \"{token}\"\n"));
    }
    repo.commit("feature");
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.json");
    let run = tollgate(&[
        "review",
        "--repo",
        &repo.path().display().to_string(),
        "--base",
        "main",
        "--head",
        "feature",
        "--format",
        &format!("json={}", report.display()),
    ])
    .env("TOLLGATE_LOG", "debug")
    .run();
    run.assert_code(1);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // The report keeps the real paths; only the log is defused.
    let files: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["location"]["file"].as_str())
        .collect();
    for path in hostile {
        assert!(files.contains(&path), "{path:?} not in {files:?}");
    }
    assert!(
        run.stderr
            .contains("src/##%5Bset-output name=should-fail;]false.py"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("\\u{1b}]0;pwned\\u{7}"),
        "{}",
        run.stderr
    );
    for line in run.stderr.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line}");
        assert!(!line.contains("##["), "{line}");
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
}
