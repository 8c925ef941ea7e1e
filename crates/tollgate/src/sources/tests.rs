use std::path::Path;

use tollgate_index::HashedEmbedder;

use super::*;
use crate::config::{RawConfig, resolve_sources};
use crate::store::Store;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn source(toml: &str) -> SourceConfig {
    let raw = RawConfig::from_toml(toml, "tollgate.toml").unwrap();
    resolve_sources(&raw.sources)
        .unwrap()
        .sources
        .into_iter()
        .next()
        .unwrap()
}

fn sync(
    root: &Path,
    source: &SourceConfig,
    memory: &Memory<'_>,
) -> Result<SourceSync, SourceError> {
    let root = root.canonicalize().unwrap();
    let runner = crate::api::sources::script_runner(&root, &[]);
    sync_source(
        SyncContext {
            root: &root,
            env: &[],
            run_script: runner.as_deref().map(|run| run as ScriptRunner<'_>),
        },
        source,
        memory,
    )
}

/// (added, updated, unchanged, deleted, documents).
fn counts(sync: &SourceSync) -> (usize, usize, usize, usize, usize) {
    (
        sync.added,
        sync.updated,
        sync.unchanged,
        sync.deleted,
        sync.documents,
    )
}

/// The thread's entries as (doc id, text), by doc id.
fn entries(memory: &Memory<'_>, thread: &str) -> Vec<(String, String)> {
    let filter = Filter {
        thread_id: Some(thread.to_string()),
        ..Filter::default()
    };
    let mut out: Vec<(String, String)> = memory
        .list(
            &filter,
            Page {
                limit: 1000,
                offset: 0,
            },
            false,
        )
        .unwrap()
        .into_iter()
        .map(|entry| {
            (
                entry.metadata[DOC_ID_KEY].as_str().unwrap().to_string(),
                entry.text,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_dir_source_syncs_edits_and_deletions_incrementally() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "docs/auth.md",
        "# Authentication\n\nTokens rotate every hour.\n",
    );
    write(
        root,
        "docs/guide/deploy.md",
        "Deploy with the blue-green switch.\n",
    );
    write(root, "docs/notes.txt", "not selected\n");
    write(root, "docs/image.md", "\u{0}binary");
    write(root, "src/main.rs", "fn main() {}\n");
    let docs = source("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\ninclude = [\"*.md\"]\n");
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);

    let first = sync(root, &docs, &memory).unwrap();
    assert_eq!(first.thread, "dir:docs");
    assert_eq!(counts(&first), (2, 0, 0, 0, 2));
    assert_eq!(first.skipped.len(), 1, "{:?}", first.skipped);
    assert_eq!(first.skipped[0].id, "docs/image.md");
    let stored = entries(&memory, "dir:docs");
    assert_eq!(stored[0].0, "docs/auth.md");
    assert!(
        stored[0]
            .1
            .starts_with("Authentication\n\n# Authentication"),
        "{}",
        stored[0].1
    );
    assert_eq!(stored[1].0, "docs/guide/deploy.md");

    // Nothing changed: nothing is written.
    let again = sync(root, &docs, &memory).unwrap();
    assert_eq!(counts(&again), (0, 0, 2, 0, 2));
    assert_eq!(entries(&memory, "dir:docs"), stored);

    // An edit updates its entry, a new file is added, a removed one is deleted.
    write(
        root,
        "docs/auth.md",
        "# Authentication\n\nTokens rotate every day.\n",
    );
    write(root, "docs/faq.md", "# FAQ\n");
    std::fs::remove_file(root.join("docs/guide/deploy.md")).unwrap();
    let edited = sync(root, &docs, &memory).unwrap();
    assert_eq!(counts(&edited), (1, 1, 0, 1, 2));
    let stored = entries(&memory, "dir:docs");
    let ids: Vec<&str> = stored.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["docs/auth.md", "docs/faq.md"]);
    assert!(stored[0].1.contains("every day"), "{}", stored[0].1);
    assert_eq!(
        counts(&sync(root, &docs, &memory).unwrap()),
        (0, 0, 2, 0, 2)
    );
}

#[test]
fn secrets_in_documents_are_masked_and_a_resync_still_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "docs/setup.md",
        "# Setup\n\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
    );
    let docs = source("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\n");
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let first = sync(root, &docs, &memory).unwrap();
    assert_eq!(first.secrets_masked, 1, "{first:?}");
    let stored = entries(&memory, "dir:docs");
    assert!(
        !stored[0].1.contains("AKIAIOSFODNN7EXAMPLE"),
        "{}",
        stored[0].1
    );
    assert_eq!(
        counts(&sync(root, &docs, &memory).unwrap()),
        (0, 0, 1, 0, 1)
    );

    // A secret in a document's id (here its file name) is masked in the stored id too, and
    // the document is still known again by it: no churn of delete and add.
    write(root, "docs/AKIAIOSFODNN7EXAMPLE.md", "# Key notes\n");
    assert_eq!(
        counts(&sync(root, &docs, &memory).unwrap()),
        (1, 0, 1, 0, 2)
    );
    let ids: Vec<String> = entries(&memory, "dir:docs")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert!(
        ids.iter().all(|id| !id.contains("AKIAIOSFODNN7EXAMPLE")),
        "{ids:?}"
    );
    assert_eq!(
        counts(&sync(root, &docs, &memory).unwrap()),
        (0, 0, 2, 0, 2)
    );
}

#[test]
fn paths_out_of_the_workspace_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "# Secret\n");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "docs/ok.md", "# Ok\n");
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);

    // `..` is refused by the configuration already.
    let raw = RawConfig::from_toml("[sources.x]\nkind = \"dir\"\npath = \"../x\"\n", "t").unwrap();
    let err = resolve_sources(&raw.sources).unwrap_err().to_string();
    assert!(
        err.contains("sources.x.path") && err.contains("`..`"),
        "{err}"
    );

    // A source directory that is a link out of the workspace.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
        let linked = source("[sources.linked]\nkind = \"dir\"\npath = \"linked\"\n");
        let err = sync(root, &linked, &memory).unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathOutsideWorkspace, "{err}");
        assert!(err.to_string().contains("source `linked`"), "{err}");

        // A file linked out from inside the directory is skipped, never read.
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("docs/leak.md"))
            .unwrap();
        let docs = source("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\n");
        let report = sync(root, &docs, &memory).unwrap();
        assert_eq!(report.documents, 1);
        assert_eq!(report.skipped[0].id, "docs/leak.md", "{:?}", report.skipped);
        assert!(
            entries(&memory, "dir:docs")
                .iter()
                .all(|(_, text)| !text.contains("Secret"))
        );
    }
}

#[test]
fn a_source_past_its_bounds_stops_with_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for n in 0..3 {
        write(root, &format!("docs/{n}.md"), "0123456789");
    }
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let few = source("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\nmax_documents = 2\n");
    let err = sync(root, &few, &memory).unwrap_err().to_string();
    assert!(
        err.contains("source `docs`") && err.contains("sources.docs.max_documents"),
        "{err}"
    );
    let small = source("[sources.docs]\nkind = \"dir\"\npath = \"docs\"\nmax_bytes = 25\n");
    let err = sync(root, &small, &memory).unwrap_err().to_string();
    assert!(err.contains("sources.docs.max_bytes"), "{err}");
    assert!(
        entries(&memory, "dir:docs").is_empty(),
        "nothing written past a bound"
    );
}

fn commit(repo: &git2::Repository, files: &[(&str, Option<&str>)], message: &str) -> git2::Oid {
    let root = repo.workdir().unwrap().to_path_buf();
    let mut index = repo.index().unwrap();
    for (path, text) in files {
        match text {
            Some(text) => {
                write(&root, path, text);
                index.add_path(Path::new(path)).unwrap();
            }
            None => {
                std::fs::remove_file(root.join(path)).unwrap();
                index.remove_path(Path::new(path)).unwrap();
            }
        }
    }
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("t", "t@example.com").unwrap();
    let parents: Vec<git2::Commit<'_>> = repo
        .head()
        .ok()
        .and_then(|head| head.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )
    .unwrap()
}

#[test]
fn a_git_source_reads_the_files_at_its_ref_not_the_work_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = git2::Repository::init(root.join("handbook")).unwrap();
    let first = commit(
        &repo,
        &[
            ("docs/auth.md", Some("# Auth\n\nJWT signed with RS256.\n")),
            ("docs/old.md", Some("# Old\n")),
            ("README.md", Some("# Handbook\n")),
        ],
        "first",
    );
    repo.tag_lightweight("v1", &repo.find_object(first, None).unwrap(), false)
        .unwrap();
    // Uncommitted edits are not what the ref holds.
    write(
        &root.join("handbook"),
        "docs/auth.md",
        "# Auth\n\nwork tree only\n",
    );
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let at = |git_ref: &str| {
        source(&format!(
            "[sources.handbook]\nkind = \"git\"\nrepo = \"handbook\"\nref = \"{git_ref}\"\npath = \"docs\"\n"
        ))
    };
    let synced = sync(root, &at("v1"), &memory).unwrap();
    assert_eq!(synced.thread, "git:handbook");
    assert_eq!(counts(&synced), (2, 0, 0, 0, 2));
    let stored = entries(&memory, "git:handbook");
    assert_eq!(stored[0].0, "docs/auth.md");
    assert!(stored[0].1.contains("RS256") && !stored[0].1.contains("work tree"));
    assert_eq!(
        counts(&sync(root, &at("v1"), &memory).unwrap()),
        (0, 0, 2, 0, 2)
    );

    // A later commit edits one file and deletes another; syncing at it propagates both, and
    // syncing back at the tag restores them.
    commit(
        &repo,
        &[
            ("docs/auth.md", Some("# Auth\n\nJWT signed with EdDSA.\n")),
            ("docs/old.md", None),
        ],
        "second",
    );
    let head = sync(root, &at("HEAD"), &memory).unwrap();
    assert_eq!(counts(&head), (0, 1, 0, 1, 1));
    let stored = entries(&memory, "git:handbook");
    assert_eq!(stored.len(), 1);
    assert!(stored[0].1.contains("EdDSA"), "{}", stored[0].1);
    assert_eq!(
        counts(&sync(root, &at("v1"), &memory).unwrap()),
        (1, 1, 0, 0, 2)
    );

    let err = sync(root, &at("no-such-ref"), &memory)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sources.handbook.ref"), "{err}");
    let not_repo = source("[sources.x]\nkind = \"git\"\nrepo = \"handbook/docs\"\n");
    let err = sync(root, &not_repo, &memory).unwrap_err().to_string();
    assert!(err.contains("not a git repository"), "{err}");
}

#[test]
fn a_git_source_without_repo_reads_the_workspaces_own_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = git2::Repository::init(root).unwrap();
    commit(
        &repo,
        &[
            ("docs/adr-1.md", Some("# Use SQLite\n")),
            ("src/lib.rs", Some("pub fn f() {}\n")),
        ],
        "first",
    );
    // A file only in the work tree is not at HEAD.
    write(root, "docs/adr-2.md", "# Not committed\n");
    let own = source("[sources.own]\nkind = \"git\"\ninclude = [\"*.md\"]\n");
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let synced = sync(root, &own, &memory).unwrap();
    assert_eq!(counts(&synced), (1, 0, 0, 0, 1));
    assert_eq!(entries(&memory, "git:own")[0].0, "docs/adr-1.md");
}

#[cfg(feature = "usertools")]
#[test]
fn a_script_source_syncs_what_its_fetch_returns_in_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git2::Repository::init(root).unwrap();
    // The script's documents come from a file the test edits (through the host API, the
    // only file access the sandbox has), and it records the `since` it was given.
    let script = r#"
source = {}
function source.fetch(since)
  local listing = tollgate.json.decode(tollgate.get_file("tickets.json").content)
  local out = {}
  for _, ticket in ipairs(listing) do
    local doc = { id = ticket.key, title = ticket.title, url = "https://tickets.example/" .. ticket.key,
                  updated_at = ticket.updated }
    -- Unchanged since the last sync: no need to fetch the body again.
    if since == nil or ticket.updated > since then doc.body = ticket.body end
    out[#out + 1] = doc
  end
  return out
end
"#;
    write(root, "sources/tickets.lua", script);
    let tickets = |list: &str| write(root, "tickets.json", list);
    tickets(
        r#"[{"key":"T-1","title":"Login fails","body":"500 on /login","updated":"2024-01-01"},
            {"key":"T-2","title":"Slow search","body":"p99 is 3s","updated":"2024-01-02"}]"#,
    );
    let jira = source("[sources.tickets]\nkind = \"script\"\nscript = \"sources/tickets.lua\"\n");
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let first = sync(root, &jira, &memory).unwrap();
    assert_eq!(first.thread, "script:tickets");
    assert_eq!(counts(&first), (2, 0, 0, 0, 2));
    // The second run is given `since` and returns no bodies: nothing changes.
    assert_eq!(
        counts(&sync(root, &jira, &memory).unwrap()),
        (0, 0, 2, 0, 2)
    );

    tickets(
        r#"[{"key":"T-2","title":"Slow search","body":"p99 is 300ms now","updated":"2024-01-05"},
            {"key":"T-3","title":"New","body":"fresh","updated":"2024-01-06"}]"#,
    );
    let edited = sync(root, &jira, &memory).unwrap();
    assert_eq!(counts(&edited), (1, 1, 0, 1, 2));
    let stored = entries(&memory, "script:tickets");
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].0, "T-2");
    assert!(
        stored[0].1.starts_with("Slow search\n\np99 is 300ms"),
        "{}",
        stored[0].1
    );

    // The sandbox is the user tools': a refused capability is a script error naming it.
    write(
        root,
        "sources/evil.lua",
        "source = {}\nfunction source.fetch(since)\n  return io.open('/etc/passwd')\nend\n",
    );
    let evil = source("[sources.evil]\nkind = \"script\"\nscript = \"sources/evil.lua\"\n");
    let err = sync(root, &evil, &memory).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ScriptError, "{err}");
    assert!(
        err.to_string().contains("sources/evil.lua") && err.to_string().contains("io"),
        "{err}"
    );
    // A document with a field the contract does not have is an error naming it.
    write(
        root,
        "sources/odd.lua",
        "source = {}\nfunction source.fetch(since)\n  return {{ id = 'a', body = 'b', colour = 'red' }}\nend\n",
    );
    let odd = source("[sources.odd]\nkind = \"script\"\nscript = \"sources/odd.lua\"\n");
    let err = sync(root, &odd, &memory).unwrap_err().to_string();
    assert!(err.contains("documents[1].colour"), "{err}");
}

/// A one-request-at-a-time HTTP server on loopback answering `body`; returns its address and
/// the requests it got (head and body).
#[cfg(feature = "usertools")]
fn loopback(body: &'static str) -> (std::net::SocketAddr, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let _ = sender.send(String::from_utf8_lossy(&request).into_owned());
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, receiver)
}

#[cfg(feature = "usertools")]
#[test]
fn a_script_source_reaches_its_allowed_host_with_a_credential_it_never_sees() {
    let (addr, requests) = loopback(
        r#"[{"key":"W-1","title":"Runbook","body":"Restart the worker","url":"https://wiki.example/W-1"}]"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git2::Repository::init(root).unwrap();
    write(
        root,
        "sources/wiki.lua",
        &format!(
            r#"
source = {{}}
function source.fetch(since)
  local response = tollgate.http.request({{ url = "http://{addr}/pages" }})
  local out = {{}}
  for _, page in ipairs(tollgate.json.decode(response.body)) do
    out[#out + 1] = {{ id = page.key, title = page.title, body = page.body, url = page.url }}
  end
  return out
end
"#
        ),
    );
    let config = format!(
        "[sources.wiki]\nkind = \"script\"\nscript = \"sources/wiki.lua\"\nallowed_hosts = [\"{addr}\"]\ncredentials = [{{ header = \"X-Wiki-Token\", env = \"WIKI_TOKEN\" }}]\n"
    );
    let wiki = source(&config);
    let db = Store::open_in_memory().unwrap();
    let memory = Memory::new(&db, &HashedEmbedder);
    let env = vec![("WIKI_TOKEN".to_string(), "wk-secret-value".to_string())];
    let canonical = root.canonicalize().unwrap();
    let runner = crate::api::sources::script_runner(&canonical, &env);
    let context = SyncContext {
        root: &canonical,
        env: &env,
        run_script: runner.as_deref().map(|run| run as ScriptRunner<'_>),
    };
    let synced = sync_source(context, &wiki, &memory).unwrap();
    assert_eq!(counts(&synced), (1, 0, 0, 0, 1));
    let request = requests
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    assert!(
        request
            .to_ascii_lowercase()
            .contains("x-wiki-token: wk-secret-value"),
        "{request}"
    );
    let filter = Filter {
        thread_id: Some("script:wiki".to_string()),
        ..Filter::default()
    };
    let entry = memory
        .list(
            &filter,
            Page {
                limit: 10,
                offset: 0,
            },
            false,
        )
        .unwrap()
        .remove(0);
    assert_eq!(entry.metadata[URL_KEY], "https://wiki.example/W-1");

    // Without the host in its allowed_hosts, the request is refused: a script error.
    let closed = source("[sources.wiki]\nkind = \"script\"\nscript = \"sources/wiki.lua\"\n");
    let err = sync_source(context, &closed, &memory).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ScriptError, "{err}");
    assert!(err.to_string().contains("is not allowed"), "{err}");
    // Only a script source has hosts.
    let raw = RawConfig::from_toml(
        "[sources.d]\nkind = \"dir\"\npath = \"d\"\nallowed_hosts = [\"a:1\"]\n",
        "t",
    )
    .unwrap();
    let err = resolve_sources(&raw.sources).unwrap_err().to_string();
    assert!(err.contains("sources.d.allowed_hosts"), "{err}");
}
