//! The code index and the context tools end to end: `tollgate index` / `tollgate search` on
//! small real git repositories, an HTTP embedder against a loopback server speaking the
//! OpenAI `/v1/embeddings` protocol, and the context tools over MCP stdio.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{TestRepo, tollgate};

fn sample_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/auth/password.rs",
        "//! Password checks.\n\nuse crate::crypto::hash;\n\n/// Verifies a password against its stored hash.\npub fn verify_password(stored: &str, given: &str) -> bool {\n    hash(given) == stored\n}\n",
    )
    .write("src/crypto.rs", "/// Hashes bytes.\npub fn hash(text: &str) -> String {\n    text.chars().rev().collect()\n}\n")
    .write(
        "web/render.ts",
        "import { Canvas } from './canvas';\n\nexport function drawTriangle(canvas: Canvas, size: number) {\n  canvas.line(0, 0, size, 0);\n}\n",
    )
    .write("tools/report.py", "class ReportWriter:\n    def write_summary(self, rows):\n        return len(rows)\n")
    .write("tests/password_test.rs", "#[test]\nfn verify_password_accepts_the_right_one() {\n    assert!(verify_password(\"x\", \"x\"));\n}\n")
    .write("README.md", "# Sample\n\nA sample project with password checks and a renderer.\n");
    repo.commit("Initial import");
    repo.write("src/crypto.rs", "/// Hashes bytes with a salt.\npub fn hash(text: &str) -> String {\n    format!(\"salt{text}\")\n}\n");
    repo.commit("Salt the password hash (#12)");
    repo
}

fn path_of(repo: &TestRepo) -> &str {
    repo.path().to_str().unwrap()
}

#[test]
fn index_search_status_and_incremental_update() {
    let repo = sample_repo();
    let root = path_of(&repo);
    let run = tollgate(&["index", "--repo", root, "--json"]).run();
    let report = run.assert_code(0).json();
    assert_eq!(report["files_changed"], 6, "{report}");
    assert_eq!(report["commits_added"], 2, "{report}");
    // Nothing changed: nothing is read again (size and mtime say so).
    let again = tollgate(&["index", "--repo", root, "--json"])
        .run()
        .assert_code(0)
        .json();
    assert_eq!(
        (
            again["files_read"].as_u64(),
            again["files_unchanged"].as_u64()
        ),
        (Some(0), Some(6)),
        "{again}"
    );

    let run = tollgate(&[
        "search",
        "how is a password verified",
        "--repo",
        root,
        "--json",
    ])
    .run();
    let results = run.assert_code(0).json();
    let first = &results["results"][0];
    assert_eq!(first["path"], "src/auth/password.rs", "{results}");
    assert_eq!(first["symbol"], "verify_password");
    assert_eq!(
        (first["start_line"].as_u64(), first["end_line"].as_u64()),
        (Some(5), Some(8))
    );
    assert!(
        first["snippet"]
            .as_str()
            .unwrap()
            .contains("pub fn verify_password")
    );
    // Tests are ranked below the code they test by default, excluded or alone on request.
    let paths = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let found = paths(&results);
    let test_rank = found.iter().position(|p| p == "tests/password_test.rs");
    assert!(test_rank.is_none_or(|rank| rank > 0), "{found:?}");
    let excluded = tollgate(&[
        "search",
        "how is a password verified",
        "--repo",
        root,
        "--tests",
        "exclude",
        "--json",
    ])
    .run();
    assert!(
        !paths(&excluded.assert_code(0).json()).contains(&"tests/password_test.rs".to_string())
    );
    let only = tollgate(&[
        "search",
        "verify password",
        "--repo",
        root,
        "--tests",
        "only",
        "--json",
    ])
    .run();
    assert_eq!(
        paths(&only.assert_code(0).json()),
        ["tests/password_test.rs"]
    );
    // Filters apply before the cut: one result asked, the TypeScript file comes back.
    let ts = tollgate(&[
        "search",
        "password triangle",
        "--repo",
        root,
        "--type",
        "ts",
        "-k",
        "1",
        "--json",
    ])
    .run();
    assert_eq!(paths(&ts.assert_code(0).json()), ["web/render.ts"]);

    let status = tollgate(&["index", "--status", "--repo", root, "--json"]).run();
    let status = status.assert_code(0).json();
    assert_eq!(status["healthy"], true, "{status}");
    assert_eq!(status["files"], 6);
    assert_eq!(status["commits"], 2);
    assert_eq!(status["embedder"], "hashed-v1/512");

    // One changed file is all a second run touches; the new content is searchable.
    std::thread::sleep(Duration::from_millis(20));
    repo.write(
        "tools/report.py",
        "def export_spreadsheet(rows):\n    return rows\n",
    );
    let report = tollgate(&["index", "--repo", root, "--json"])
        .run()
        .assert_code(0)
        .json();
    assert_eq!(
        (
            report["files_changed"].as_u64(),
            report["files_unchanged"].as_u64(),
            report["files_read"].as_u64()
        ),
        (Some(1), Some(5), Some(1)),
        "{report}"
    );
    let found = tollgate(&[
        "search",
        "export spreadsheet",
        "--repo",
        root,
        "--json",
        "-k",
        "1",
    ])
    .run();
    let found = found.assert_code(0).json();
    assert_eq!(
        found["results"][0]["symbol"], "export_spreadsheet",
        "{found}"
    );
    assert!(
        !found["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("ReportWriter")
    );

    // A second writer is refused clearly while the first holds the lock (here: this test);
    // readers are not blocked.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(repo.path().join(".tollgate/index/write.lock"))
        .unwrap();
    lock.lock().unwrap();
    let refused = tollgate(&["index", "--repo", root]).run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("another indexer"),
        "{}",
        refused.stderr
    );
    tollgate(&["search", "password", "--repo", root, "--json"])
        .run()
        .assert_code(0);
    drop(lock);
    tollgate(&["index", "--repo", root]).run().assert_code(0);
}

#[test]
fn search_is_trustworthy_outside_repositories_after_edits_and_for_nonsense() {
    // Outside a git work tree a search refuses to index on its own, and writes nothing.
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("notes.txt"), "password notes\n").unwrap();
    let refused = tollgate(&[
        "search",
        "password",
        "--repo",
        plain.path().to_str().unwrap(),
    ])
    .run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("not inside a git work tree")
            && refused.stderr.contains("tollgate index --repo"),
        "{}",
        refused.stderr
    );
    assert!(!plain.path().join(".tollgate").exists());

    // Inside one, the first search says it is indexing; Tollgate's state stays out of
    // `git status`.
    let repo = sample_repo();
    let root = path_of(&repo);
    let first = tollgate(&["search", "verify password", "--repo", root]).run();
    first.assert_code(0);
    assert!(
        first.stderr.contains("no index yet: indexing"),
        "{}",
        first.stderr
    );
    // Human output shows the lines that match, with their numbers.
    assert!(
        first.stdout.contains("src/auth/password.rs:5-8")
            && first.stdout.contains("6: pub fn verify_password"),
        "{}",
        first.stdout
    );
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        "",
        "untracked state"
    );

    // An edit after indexing: the search re-indexes the file and reports its new lines. The
    // edit is seen by the file's size and mtime against those indexed, whenever it was made:
    // here its mtime goes back an hour (a restore, `cp -p`, `git stash pop` of an old copy).
    repo.write(
        "src/auth/password.rs",
        "//! Password checks.\n\nuse crate::crypto::hash;\n\n// One line more.\n// And another.\n\n/// Verifies a password against its stored hash.\npub fn verify_password(stored: &str, given: &str) -> bool {\n    hash(given) == stored\n}\n",
    );
    std::fs::File::options()
        .write(true)
        .open(repo.path().join("src/auth/password.rs"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let moved = tollgate(&[
        "search",
        "verify_password",
        "--repo",
        root,
        "--json",
        "-k",
        "1",
    ])
    .run()
    .assert_code(0)
    .json();
    let hit = &moved["results"][0];
    assert_eq!(
        (hit["path"].as_str(), hit["start_line"].as_u64()),
        (Some("src/auth/password.rs"), Some(8)),
        "{moved}"
    );
    assert_eq!(moved["warnings"], json!([]), "{moved}");

    // A query nothing answers scores low; one the code answers scores high.
    let nonsense = tollgate(&["search", "zzzqqq nonexistent", "--repo", root, "--json"])
        .run()
        .assert_code(0)
        .json();
    for result in nonsense["results"].as_array().unwrap() {
        assert!(result["relevance"].as_f64().unwrap() < 0.3, "{nonsense}");
    }
    assert!(hit["relevance"].as_f64().unwrap() > 0.9, "{moved}");

    // --explain says why.
    let explained = tollgate(&[
        "search",
        "verify_password",
        "--repo",
        root,
        "--explain",
        "-k",
        "1",
    ])
    .run();
    explained.assert_code(0);
    assert!(
        explained
            .stdout
            .contains("why: identifier query, code file")
            && explained.stdout.contains("definition"),
        "{}",
        explained.stdout
    );
}

#[test]
fn a_subdirectory_can_be_indexed_alone() {
    let repo = sample_repo();
    let root = path_of(&repo);
    let report = tollgate(&["index", "src", "--repo", root, "--json"])
        .run()
        .assert_code(0)
        .json();
    assert_eq!(report["files_changed"], 2, "{report}");
    let outside = tollgate(&["index", "../", "--repo", root]).run();
    outside.assert_code(2);
    assert!(
        outside.stderr.contains("outside the workspace"),
        "{}",
        outside.stderr
    );
}

/// A loopback `/v1/embeddings` server: 8-dimensional letter-frequency vectors, one per input;
/// records the requests it saw.
fn embeddings_server() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut length = 0;
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if lower.starts_with("authorization:") {
                    auth = line.trim().to_string();
                }
                if line == "\r\n" || line.is_empty() {
                    break;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let request: Value = serde_json::from_slice(&body).unwrap();
            let ok = request_line.starts_with("POST /v1/embeddings ")
                && auth == "authorization: Bearer sk-test";
            log.lock().unwrap().push(json!({"line": request_line.trim(), "model": request["model"], "n": request["input"].as_array().map(Vec::len)}));
            let (status, response) = if ok {
                let data: Vec<Value> = request["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        let mut v = [0.01f32; 8];
                        for b in text
                            .as_str()
                            .unwrap()
                            .bytes()
                            .filter(u8::is_ascii_alphabetic)
                        {
                            v[(b.to_ascii_lowercase() - b'a') as usize % 8] += 1.0;
                        }
                        json!({"object": "embedding", "index": i, "embedding": v})
                    })
                    .collect();
                (
                    "200 OK",
                    json!({"object": "list", "data": data, "model": request["model"]}),
                )
            } else {
                (
                    "401 Unauthorized",
                    json!({"error": {"message": "bad request or key"}}),
                )
            };
            let body = response.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn an_http_embedder_builds_the_vectors_and_a_change_of_embedder_rebuilds() {
    let repo = sample_repo();
    let root = path_of(&repo);
    let (url, seen) = embeddings_server();
    let http = ["--embed-url", url.as_str(), "--embed-model", "tiny-embed"];
    let mut args = vec!["index", "--repo", root, "--json"];
    args.extend(http);
    let report = tollgate(&args)
        .env("TOLLGATE_EMBED_API_KEY", "sk-test")
        .run()
        .assert_code(0)
        .json();
    assert_eq!(report["files_changed"], 6, "{report}");
    let requests = seen.lock().unwrap().clone();
    assert!(
        requests.len() >= 2,
        "a probe and at least one batch: {requests:?}"
    );
    assert!(
        requests.iter().all(|r| r["model"] == "tiny-embed"),
        "{requests:?}"
    );

    let status = tollgate(&["index", "--status", "--repo", root, "--json"])
        .run()
        .json();
    let embedder = status["embedder"].as_str().unwrap().to_string();
    assert!(embedder.starts_with("http/tiny-embed/8@"), "{status}");
    assert_eq!(status["vectors"], status["chunks"]);

    let mut search = vec!["search", "password", "--repo", root, "--json"];
    search.extend(http);
    let found = tollgate(&search)
        .env("TOLLGATE_EMBED_API_KEY", "sk-test")
        .run()
        .assert_code(0)
        .json();
    assert!(
        found["channels"]
            .as_array()
            .unwrap()
            .contains(&json!("vector")),
        "{found}"
    );
    // Searching with another embedder skips the vectors rather than mixing them.
    let hashed = tollgate(&["search", "password", "--repo", root, "--json"])
        .run()
        .assert_code(0)
        .json();
    // Issue 28: the results once, not again as a Markdown string.
    assert!(hashed.get("markdown").is_none(), "{hashed}");
    assert!(
        !hashed["results"].as_array().unwrap().is_empty(),
        "{hashed}"
    );
    assert!(
        !hashed["channels"]
            .as_array()
            .unwrap()
            .contains(&json!("vector")),
        "{hashed}"
    );
    assert!(
        hashed["warnings"][0]
            .as_str()
            .unwrap()
            .contains("vector channel skipped"),
        "{hashed}"
    );

    // A wrong key fails before anything is indexed, naming the endpoint.
    let bad = tollgate(&args)
        .env("TOLLGATE_EMBED_API_KEY", "sk-wrong")
        .run();
    bad.assert_code(2);
    assert!(bad.stderr.contains("401"), "{}", bad.stderr);

    // Back to the built-in embedder: a clear rebuild, every file again.
    let run = tollgate(&["index", "--repo", root]).run();
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("rebuilt the index: embedder changed from http/tiny-embed/8@"),
        "{}",
        run.stderr
    );
    let status = tollgate(&["index", "--status", "--repo", root, "--json"])
        .run()
        .json();
    assert_eq!(status["embedder"], "hashed-v1/512");
    assert_eq!(status["vectors"], status["chunks"]);
}

/// Writes a static embedding model of the model2vec format into `dir`: a word-level
/// `tokenizer.json` over `words` (and `[UNK]`, the zero row) and a `model.safetensors` whose
/// `embeddings` matrix gives each word its row, laid out by hand as the format specifies (an
/// 8-byte little-endian header length, a JSON header, the data).
fn write_model2vec(dir: &std::path::Path, words: &[(&str, [f32; 4])]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut vocab = serde_json::Map::new();
    vocab.insert("[UNK]".into(), 0.into());
    for (i, (word, _)) in words.iter().enumerate() {
        vocab.insert((*word).into(), (i + 1).into());
    }
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let mut data: Vec<u8> = [0f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    for (_, row) in words {
        data.extend(row.iter().flat_map(|v| v.to_le_bytes()));
    }
    let mut header = json!({"embeddings": {"dtype": "F32", "shape": [words.len() + 1, 4],
                                           "data_offsets": [0, data.len()]}})
    .to_string();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header.as_bytes());
    file.extend(&data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
}

/// Issue 31: `[index] embedder = "model2vec:DIR"` builds the vectors with a static embedding
/// model, named in the index; a broken model is an error naming its file.
#[test]
fn a_model2vec_model_named_in_the_config_builds_the_vectors() {
    let repo = sample_repo();
    let root = path_of(&repo).to_string();
    write_model2vec(
        &repo.path().join("models/tiny"),
        &[
            ("password", [1.0, 0.0, 0.0, 0.0]),
            ("hash", [0.0, 1.0, 0.0, 0.0]),
            ("report", [0.0, 0.0, 1.0, 0.0]),
        ],
    );
    repo.write(
        "tollgate.toml",
        "[index]\nembedder = \"model2vec:models/tiny\"\n",
    );
    tollgate(&["index", "--repo", &root]).run().assert_code(0);
    let status = tollgate(&["index", "--repo", &root, "--status", "--json"])
        .run()
        .assert_code(0)
        .json();
    let embedder = status["embedder"].as_str().unwrap();
    assert!(embedder.starts_with("model2vec/tiny/4@"), "{status}");
    assert_eq!(status["vectors"], status["chunks"], "{status}");
    let found = tollgate(&["search", "password hash", "--repo", &root, "--json"])
        .run()
        .assert_code(0)
        .json();
    assert!(
        found["channels"]
            .as_array()
            .unwrap()
            .contains(&json!("vector")),
        "{found}"
    );

    repo.write(
        "tollgate.toml",
        "[index]\nembedder = \"model2vec:models/missing\"\n",
    );
    let broken = tollgate(&["index", "--repo", &root]).run();
    broken.assert_code(2);
    assert!(
        broken.stderr.contains("tokenizer.json"),
        "{}",
        broken.stderr
    );
}
