//! `[sources.<name>]` through the real binary: `tollgate sources sync` stores a directory's
//! documents in the workspace's knowledge store, and a running `tollgate mcp --http` finds
//! them with `POST /tools/search` (`source` filter) and counts them in `/tools/sources`;
//! an edit and a deletion re-synced are what the server answers next.

use serde_json::{Value, json};

use crate::mcp::{post, serve_http};
use crate::util::{TestRepo, tollgate};

#[test]
fn a_dir_source_synced_by_the_cli_is_searched_by_a_running_http_server() {
    let repo = TestRepo::new();
    repo.write(
        "tollgate.toml",
        "[sources.handbook]\nkind = \"dir\"\npath = \"handbook\"\ninclude = [\"*.md\"]\n",
    );
    repo.write(
        "handbook/auth.md",
        "# Authentication guide\n\nJWT tokens are signed with RS256 and rotate hourly.\n",
    );
    repo.write(
        "handbook/oncall.md",
        "# On-call\n\nPage the payments rotation for refund incidents.\n",
    );
    repo.write("handbook/draft.txt", "JWT draft, not selected\n");
    repo.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    repo.commit("base");
    let dir = repo.path().to_str().unwrap().to_string();
    tollgate(&["index", "--repo", &dir]).run().assert_code(0);
    let (_process, addr) = serve_http(&repo, &["--tools", "memory"]);
    let call = |path: &str, body: Value| -> (u16, Value) {
        let (status, answer) = post(
            addr,
            path,
            &[("Content-Type", "application/json")],
            &body.to_string(),
        );
        (
            status,
            serde_json::from_str(&answer).unwrap_or_else(|err| panic!("{err}: {answer}")),
        )
    };
    let count = || {
        let (status, sources) = call("/tools/sources", json!({}));
        assert_eq!(status, 200, "{sources}");
        sources["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|source| source["source"] == "dir:handbook")
            .unwrap_or_else(|| panic!("dir:handbook is not listed: {sources}"))["document_count"]
            .as_u64()
            .unwrap()
    };
    // Configured but not synced yet: listed with no documents.
    assert_eq!(count(), 0);

    let sync = || {
        let run = tollgate(&["sources", "sync", "handbook", "--repo", &dir, "--json"]).run();
        run.assert_code(0);
        run.json()["sources"][0].clone()
    };
    let first = sync();
    assert_eq!(first["thread"], "dir:handbook", "{first}");
    assert_eq!(
        (first["added"].as_u64(), first["documents"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(sync()["unchanged"], 2, "a second sync changes nothing");
    assert_eq!(count(), 2);

    let search = |query: &str| {
        let (status, found) = call(
            "/tools/search",
            json!({"query": query, "source": "dir:handbook"}),
        );
        assert_eq!(status, 200, "{found}");
        found["results"].as_array().unwrap().clone()
    };
    let hits = search("JWT RS256");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["source"], "dir:handbook");
    assert_eq!(hits[0]["source_id"], "handbook/auth.md");
    assert_eq!(hits[0]["title"], "Authentication guide");
    let (status, document) = call("/tools/get", json!({"id": hits[0]["id"]}));
    assert_eq!(status, 200, "{document}");
    assert_eq!(document["source_id"], "handbook/auth.md");
    assert!(document["body"].as_str().unwrap().contains("rotate hourly"));

    // An edit and a deletion, re-synced, are what the running server finds next.
    repo.write(
        "handbook/auth.md",
        "# Authentication guide\n\nPASETO tokens replaced JWT in May.\n",
    );
    std::fs::remove_file(repo.path().join("handbook/oncall.md")).unwrap();
    let edited = sync();
    assert_eq!(
        (edited["updated"].as_u64(), edited["deleted"].as_u64()),
        (Some(1), Some(1)),
        "{edited}"
    );
    assert_eq!(count(), 1);
    assert_eq!(search("PASETO").len(), 1);
    assert!(search("RS256").is_empty());
    assert!(search("refund incidents").is_empty());

    // `list` says the same; an unknown name is an error naming the configured ones.
    let listed = tollgate(&["sources", "list", "--repo", &dir, "--json"]).run();
    listed.assert_code(0);
    assert_eq!(
        listed.json()["sources"],
        json!([{"name": "handbook", "kind": "dir", "source": "dir:handbook", "document_count": 1}])
    );
    let unknown = tollgate(&["sources", "sync", "wiki", "--repo", &dir]).run();
    assert_ne!(unknown.code, 0);
    assert!(
        unknown.stderr.contains("wiki") && unknown.stderr.contains("handbook"),
        "{}",
        unknown.stderr
    );
}
