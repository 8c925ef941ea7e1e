//! Tollgate's hybrid code index, its own crate because of its heavy dependencies (tantivy,
//! hnsw_rs, tree-sitter grammars). It knows nothing of reviews or plans: the core's `context`
//! module wraps it for the front ends.
//!
//! - [`update`] walks a workspace ([`walk`]), chunks changed files by syntax ([`chunk`]),
//!   indexes them in the lexical channel (tantivy BM25 with a code tokenizer) and the vector
//!   channel (an [`Embedder`]: [`HashedEmbedder`] offline, [`HttpEmbedder`] for
//!   OpenAI-compatible endpoints; vectors in our own store, an hnsw_rs graph when large), and
//!   brings the commit-history channel up to `HEAD`.
//! - [`search()`] fuses the channels' scaled scores, weighted by the kind of query, and ranks
//!   files with the signals of [`rank`] (definitions, file aggregation, file classes), with
//!   filters applied inside each channel before its cut.
//! - [`status`] reports an index's health; [`commits`] searches commit history;
//!   [`symbols`] answers definition / importer / related-file questions from the extracted
//!   outlines; [`grep`] is a ripgrep-class regex search that needs no index.

// Without the `engine` feature only `walk`, `rank` and `tokens` are left (what the plan scan
// shares); the helpers the engine alone calls are then unused.
#![cfg_attr(not(feature = "engine"), allow(dead_code))]

#[cfg(feature = "engine")]
use std::path::{Path, PathBuf};

#[cfg(feature = "engine")]
pub mod chunk;
#[cfg(feature = "engine")]
mod embed;
#[cfg(feature = "engine")]
mod error;
#[cfg(feature = "engine")]
mod graph;
#[cfg(feature = "engine")]
pub mod grep;
#[cfg(feature = "engine")]
mod hash;
#[cfg(feature = "engine")]
mod history;
#[cfg(feature = "engine")]
mod lexical;
#[cfg(feature = "model2vec")]
mod model2vec;
pub mod rank;
#[cfg(feature = "engine")]
mod search;
#[cfg(feature = "engine")]
mod store;
#[cfg(feature = "engine")]
pub mod symbols;
mod tokenize;
#[cfg(feature = "engine")]
mod update;
#[cfg(feature = "engine")]
mod vectors;
pub mod walk;

#[cfg(feature = "engine")]
pub use embed::{Embedder, HASHED_DIM, HashedEmbedder, HttpEmbedder};
#[cfg(feature = "engine")]
pub use error::{ERROR_CODES, IndexError};
#[cfg(feature = "engine")]
pub use history::{CommitFilter, CommitHit};
#[cfg(feature = "model2vec")]
pub use model2vec::Model2VecEmbedder;
#[cfg(feature = "engine")]
pub use search::{
    ArmEvidence, Channel, Explain, Filter, Hit, MAX_TOP_K, Mode, SearchOutcome, SearchQuery, Tests,
    nearest, search,
};
pub use tokenize::tokens;
#[cfg(feature = "engine")]
pub use update::{Progress, UpdateReport, update};
#[cfg(feature = "engine")]
pub use vectors::HNSW_MIN_POINTS;

#[cfg(feature = "engine")]
/// Where an index lives and what it covers.
#[derive(Debug, Clone)]
pub struct IndexConfig {
    /// The workspace root; indexed paths are relative to it.
    pub root: PathBuf,
    /// The index directory (default `<root>/.tollgate/index`).
    pub dir: PathBuf,
    /// Index commit history (when the root is in a git repository).
    pub history: bool,
    /// The most commits indexed on a full history build (newest first).
    pub max_commits: usize,
    /// Live vectors from which an HNSW graph is kept (below: exact search).
    pub hnsw_min_points: usize,
    /// The next update rebuilds the whole index, as if it had none (`--force`-style reindex).
    pub rebuild: bool,
}

#[cfg(feature = "engine")]
/// Commits a new index reads by default. Measured on "PR title → files" over five repositories
/// (BENCHMARKS.md): 3,000 commits rank as well as 10,000 (NDCG@10 −0.001, CI −0.006..+0.004) at
/// a third of the history's cost; 1,000 lose (−0.011, rust-analyzer −0.032).
pub const DEFAULT_HISTORY_DEPTH: usize = 3_000;

#[cfg(feature = "engine")]
/// The default index directory inside a workspace.
pub const DEFAULT_INDEX_DIR: &str = ".tollgate/index";

#[cfg(feature = "engine")]
impl IndexConfig {
    pub fn new(root: &Path) -> IndexConfig {
        IndexConfig {
            root: root.to_path_buf(),
            dir: root.join(DEFAULT_INDEX_DIR),
            history: true,
            max_commits: DEFAULT_HISTORY_DEPTH,
            hnsw_min_points: HNSW_MIN_POINTS,
            rebuild: false,
        }
    }
}

#[cfg(feature = "engine")]
/// An index's state and health.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub exists: bool,
    pub files: usize,
    pub chunks: usize,
    pub vectors: usize,
    /// Vectors of replaced chunks not yet compacted away.
    pub dead_vectors: usize,
    pub commits: u64,
    pub embedder: Option<String>,
    /// Seconds since the epoch of the last completed run.
    pub indexed_at: Option<i64>,
    pub size_bytes: u64,
    pub source_bytes: u64,
    pub languages: std::collections::BTreeMap<String, usize>,
    /// An HNSW graph is in use.
    pub graph: bool,
    /// True when the index can serve every channel it has data for.
    pub healthy: bool,
    pub problems: Vec<String>,
    /// An indexer is running right now.
    pub updating: bool,
}

#[cfg(feature = "engine")]
/// True when an index has been built at `config.dir` (a completed run left its header), whatever
/// its health; cheap enough to ask before every query.
pub fn exists(config: &IndexConfig) -> bool {
    config.dir.join("meta.json").is_file()
}

#[cfg(feature = "engine")]
/// Whether the index exists in the format this build reads (an older one must be rebuilt).
pub fn is_current(config: &IndexConfig) -> bool {
    store::read_json::<store::Meta>(&config.dir.join("meta.json"))
        .ok()
        .flatten()
        .is_some_and(|meta| meta.version == store::FORMAT_VERSION)
}

#[cfg(feature = "engine")]
/// Reports on the index at `config.dir` without changing it.
pub fn status(config: &IndexConfig) -> Result<Status, IndexError> {
    let dir = &config.dir;
    let meta: Option<store::Meta> = match store::read_json(&dir.join("meta.json")) {
        Ok(meta) => meta,
        Err(err) => {
            return Ok(Status {
                exists: true,
                problems: vec![err.to_string()],
                ..Status::default()
            });
        }
    };
    let Some(meta) = meta else {
        return Ok(Status {
            updating: store::WriteLock::is_held(dir),
            ..Status::default()
        });
    };
    if meta.version != store::FORMAT_VERSION {
        return Ok(Status {
            exists: true,
            problems: vec![format!(
                "the index has format {}, this Tollgate uses {}: run `tollgate index` to rebuild it",
                meta.version,
                store::FORMAT_VERSION
            )],
            updating: store::WriteLock::is_held(dir),
            ..Status::default()
        });
    }
    let mut status = Status {
        exists: true,
        files: meta.files,
        chunks: meta.chunks,
        embedder: Some(meta.embedder.clone()),
        indexed_at: Some(meta.indexed_at),
        size_bytes: store::dir_size(dir),
        source_bytes: meta.source_bytes,
        graph: dir.join("graph.json").exists(),
        updating: store::WriteLock::is_held(dir),
        ..Status::default()
    };
    match update::load_files(dir) {
        Ok(Some(files)) => status.languages = update::languages(&files),
        Ok(None) => status
            .problems
            .push(format!("the file table {} is missing", store::FILES_TABLE)),
        Err(err) => status.problems.push(err.to_string()),
    }
    if !dir.join(store::PATHS_LIST).is_file() {
        status.problems.push(format!(
            "the paths list {} is missing (filtered searches fail)",
            store::PATHS_LIST
        ));
    }
    match lexical::Lexical::open(&dir.join("lexical"))
        .and_then(|l| l.map(|l| l.reader()).transpose())
    {
        Ok(Some(reader)) => {
            let docs = reader.num_docs() as usize;
            if docs != meta.chunks && !status.updating {
                status.problems.push(format!(
                    "the lexical index holds {docs} chunks where {} were recorded (an interrupted run?): run `tollgate index`",
                    meta.chunks
                ));
            }
        }
        Ok(None) => status
            .problems
            .push("the lexical index is missing".to_string()),
        Err(err) => status
            .problems
            .push(format!("the lexical index is unreadable: {err}")),
    }
    let store = vectors::VectorStore::new(dir, &meta.embedder, meta.dim);
    match store.load() {
        Ok(Some(loaded)) => {
            status.vectors = loaded.len();
            status.dead_vectors = loaded.total_records - loaded.len();
        }
        Ok(None) if meta.chunks > 0 => status
            .problems
            .push("the vector store is missing".to_string()),
        Ok(None) => {}
        Err(err) => status
            .problems
            .push(format!("the vector store is unreadable: {err}")),
    }
    if config.history {
        match history::status(&dir.join("history")) {
            Ok(Some((commits, _))) => status.commits = commits,
            Ok(None) => {}
            Err(err) => status
                .problems
                .push(format!("the history index is unreadable: {err}")),
        }
    }
    status.healthy = status.problems.is_empty();
    Ok(status)
}

#[cfg(feature = "engine")]
/// Commits relevant to `query`, best first (empty without a history index).
pub fn commits(
    config: &IndexConfig,
    query: &str,
    limit: usize,
    filter: &CommitFilter,
) -> Result<Vec<CommitHit>, IndexError> {
    history::search(&config.dir.join("history"), query, limit, filter)
}

#[cfg(feature = "engine")]
#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::rank::{Signal, Signals};
    use crate::walk::Language;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn paths(outcome: &SearchOutcome) -> Vec<&str> {
        outcome.hits.iter().map(|h| h.path.as_str()).collect()
    }

    #[test]
    fn a_cancelled_update_commits_nothing_and_the_previous_index_serves_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.rs", "pub fn alpha_quota() {}\n");
        let config = IndexConfig::new(root);
        let embedder = HashedEmbedder;
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        write(root, "b.rs", "pub fn beta_quota() {}\n");

        // Stop at the first report of processed files.
        let mut seen = Vec::new();
        let err = update(&config, None, &embedder, &mut |p| {
            let stop = matches!(p, Progress::Processed { .. });
            seen.push(p);
            if stop {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap_err();
        assert_eq!(err.code(), "CANCELLED");
        assert!(!seen.contains(&Progress::Committing), "{seen:?}");
        let hits = search(&config, &embedder, &SearchQuery::new("beta_quota", 5))
            .unwrap()
            .hits;
        assert!(hits.iter().all(|h| h.path != "b.rs"), "{hits:?}");
        assert!(
            search(&config, &embedder, &SearchQuery::new("alpha_quota", 5))
                .unwrap()
                .hits
                .iter()
                .any(|h| h.path == "a.rs")
        );
        // The next update picks the file up: nothing of the cancelled one lingers.
        let report = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!(report.files_changed, 1, "{report:?}");
    }

    #[test]
    fn filters_apply_inside_each_channel_before_the_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // Twenty Rust files match the query better than the one Markdown file does.
        for i in 0..20 {
            write(
                root,
                &format!("src/parser_{i}.rs"),
                &format!(
                    "/// Parse the config.\npub fn parse_config_{i}(config: &str) {{ parse(config) }}\n"
                ),
            );
        }
        write(
            root,
            "docs/guide.md",
            "# Guide\n\nHow we parse the config file.\n",
        );
        write(
            root,
            "docs/tests/parse_config_test.py",
            "def test_parse_config():\n    pass\n",
        );
        let config = IndexConfig::new(root);
        let embedder = HashedEmbedder;
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();

        let run = |filter: Filter, channel: Channel| {
            let mut query = SearchQuery::new("parse config", 1);
            query.filter = filter;
            query.channels = vec![channel];
            let outcome = search(&config, &embedder, &query).unwrap();
            assert_eq!(outcome.channels, [channel]);
            paths(&outcome)
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
        };
        for channel in [Channel::Lexical, Channel::Vector] {
            // Unfiltered, the Markdown file loses: the filters below are what bring it up.
            let unfiltered = run(Filter::default(), channel);
            assert_ne!(unfiltered, ["docs/guide.md"], "{channel:?}");
            let markdown_only = [
                Filter {
                    extensions: vec!["md".into()],
                    ..Filter::default()
                },
                Filter {
                    languages: vec![Language::Markdown],
                    ..Filter::default()
                },
                Filter {
                    include: vec!["docs/*.md".into()],
                    ..Filter::default()
                },
                Filter {
                    under: Some("docs".into()),
                    tests: Tests::Exclude,
                    ..Filter::default()
                },
                Filter {
                    exclude: vec!["src".into(), "**/*.py".into()],
                    ..Filter::default()
                },
            ];
            for filter in markdown_only {
                assert_eq!(
                    run(filter.clone(), channel),
                    ["docs/guide.md"],
                    "{channel:?} {filter:?}"
                );
            }
            let tests_only = Filter {
                tests: Tests::Only,
                ..Filter::default()
            };
            assert_eq!(
                run(tests_only, channel),
                ["docs/tests/parse_config_test.py"],
                "{channel:?}"
            );
            let nothing = Filter {
                extensions: vec!["java".into()],
                ..Filter::default()
            };
            assert!(run(nothing, channel).is_empty(), "{channel:?}");
        }

        // A deleted file is never served; a path with a tab and a newline is listed whole.
        std::fs::remove_file(root.join("docs/guide.md")).unwrap();
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        let markdown = Filter {
            extensions: vec!["md".into()],
            ..Filter::default()
        };
        assert!(run(markdown.clone(), Channel::Lexical).is_empty());
        assert!(run(markdown.clone(), Channel::Vector).is_empty());
        write(
            root,
            "docs/odd\tname\nhere.md",
            "# Parse\n\nParse the config.\n",
        );
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        for channel in [Channel::Lexical, Channel::Vector] {
            assert_eq!(
                run(markdown.clone(), channel),
                ["docs/odd\tname\nhere.md"],
                "{channel:?}"
            );
        }

        // A damaged paths list is refused by name, never read as fewer files.
        let list_path = config.dir.join(store::PATHS_LIST);
        let list = std::fs::read_to_string(&list_path).unwrap();
        std::fs::write(&list_path, format!("{list}markdown\tdocs/lost.md\0")).unwrap();
        let mut query = SearchQuery::new("parse config", 3);
        query.filter = markdown;
        let err = search(&config, &embedder, &query).unwrap_err();
        assert_eq!(err.code(), "INDEX_CORRUPT", "{err}");
        assert!(err.to_string().contains("record"), "{err}");

        // Without the paths list a filtered search says what is wrong and how to fix it; an
        // unfiltered one still serves, and the next update writes the list again.
        std::fs::remove_file(&list_path).unwrap();
        let err = search(&config, &embedder, &query).unwrap_err();
        assert_eq!(err.code(), "INDEX_CORRUPT", "{err}");
        assert!(err.to_string().contains("paths.txt is missing"), "{err}");
        let health = status(&config).unwrap();
        assert!(
            !health.healthy && health.problems[0].contains("paths.txt"),
            "{health:?}"
        );
        assert!(err.to_string().contains("run `tollgate index`"), "{err}");
        let unfiltered = search(&config, &embedder, &SearchQuery::new("parse config", 3)).unwrap();
        assert!(!unfiltered.hits.is_empty());
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!(
            paths(&search(&config, &embedder, &query).unwrap()),
            ["docs/odd\tname\nhere.md"]
        );
    }

    #[test]
    fn a_question_about_code_ranks_the_tests_of_that_code_lower() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(
            root,
            "src/capture.py",
            "def start_capturing(fd):\n    \"\"\"Output captured at the file descriptor level.\"\"\"\n    return dup(fd)\n",
        );
        // The test says it more often than the code it tests.
        let tests = "def test_dup(fd):\n    \"\"\"Output captured at the file descriptor level: is the output captured?\"\"\"\n    assert capture(fd)\n";
        write(root, "testing/test_capture.py", tests);
        let first = index_and_rank_first(root);
        let question = "how is output captured at the file descriptor level";
        assert_eq!(first(question, Signals::without(&[])), "src/capture.py");
        assert_eq!(
            first(question, Signals::without(&[Signal::QuestionTests])),
            "testing/test_capture.py"
        );
        // A change description keeps the mild penalty: changes touch tests too.
        let change = "capture output at the file descriptor level";
        assert_eq!(
            first(change, Signals::without(&[])),
            "testing/test_capture.py"
        );
    }

    /// Indexes `root` and returns the first hit (path, first line, last line) for a query
    /// with these signals on.
    fn index_and_first_hit(root: &Path) -> impl Fn(&str, Signals) -> (String, usize, usize) {
        let config = IndexConfig::new(root);
        update(&config, None, &HashedEmbedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        move |text, signals| {
            let mut query = SearchQuery::new(text, 5);
            query.signals = signals;
            let outcome = search(&config, &HashedEmbedder, &query).unwrap();
            let hit = &outcome.hits[0];
            (hit.path.clone(), hit.start_line, hit.end_line)
        }
    }

    #[test]
    fn the_head_of_the_results_does_not_depend_on_how_many_are_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // Many files sharing the query's words in different measure, so that each channel has
        // far more candidates than ten results need and the arms disagree on their order.
        let words = [
            "retry", "backoff", "delay", "jitter", "attempt", "timeout", "budget", "policy",
        ];
        for i in 0..160 {
            let mut text = String::new();
            for (j, word) in words.iter().enumerate() {
                for _ in 0..((i * (j + 3)) % 5) {
                    text.push_str(&format!("// {word} handling {i}\n"));
                }
            }
            text.push_str(&format!(
                "pub fn step_{i}() -> u32 {{\n    {i}\n}}\n// filler {}\n",
                "x ".repeat(i % 17)
            ));
            write(root, &format!("src/m{i:03}.rs"), &text);
        }
        let config = IndexConfig::new(root);
        update(&config, None, &HashedEmbedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        for text in [
            "how are retry delays with backoff and jitter chosen",
            "retry attempt timeout budget",
        ] {
            let head = |k: usize| -> Vec<(String, usize)> {
                let outcome = search(&config, &HashedEmbedder, &SearchQuery::new(text, k)).unwrap();
                assert!(outcome.hits.len() >= 10.min(k), "{text}: {k}");
                outcome
                    .hits
                    .iter()
                    .take(10)
                    .map(|h| (h.path.clone(), h.start_line))
                    .collect()
            };
            let ten = head(10);
            assert_eq!(ten, head(20), "{text}");
            assert_eq!(ten, head(50), "{text}");
            assert_eq!(ten, head(200), "{text}");
        }
    }

    #[test]
    fn a_tiny_chunk_does_not_stand_for_its_file_when_it_has_a_substantive_one() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // The one-line re-export says the query's words best; the body is what is wanted.
        write(
            root,
            "src/limits.rs",
            "pub use crate::quota::QuotaLimiterWindow as QuotaLimiterWindowLimiter;\n\n\
             /// Counts requests in a sliding window and refuses those over the quota.\n\
             pub fn admit_request(window: &mut Vec<u64>, now: u64, quota: usize) -> bool {\n    \
             window.retain(|t| now - t < 60);\n    if window.len() >= quota {\n        \
             return false;\n    }\n    window.push(now);\n    true\n}\n",
        );
        write(
            root,
            "src/other.rs",
            "/// Formats a greeting.\npub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
        );
        let first = index_and_first_hit(root);
        let query = "quota limiter window for requests";
        let (path, start, end) = first(query, Signals::without(&[]));
        assert_eq!(path, "src/limits.rs");
        assert!(end - start + 1 > 3, "{start}-{end}");
        let (_, start, end) = first(query, Signals::without(&[Signal::TinyChunks]));
        assert!(end - start < 3, "{start}-{end}");
    }

    #[test]
    fn an_architecture_question_lifts_the_hub_module_of_what_it_names() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // The hub says little; the implementations say "extractor" over and over.
        write(
            root,
            "src/extract/mod.rs",
            "//! Types that pull values out of a request.\nmod path;\nmod query;\npub use self::path::Path;\npub use self::query::Query;\n\npub trait FromRequest: Sized {\n    fn from_request(req: &Request) -> Option<Self>;\n}\n",
        );
        for name in ["json", "form", "cookie"] {
            write(
                root,
                &format!("src/handlers/{name}.rs"),
                &format!(
                    "/// The {name} extractor: an extractor of {name} bodies, organised like every extractor.\npub struct {name}Extractor;\n\n/// Runs the {name} extractor.\npub fn run_{name}_extractor() {{}}\n"
                ),
            );
        }
        let first = index_and_rank_first(root);
        let query = "how are extractors organised";
        assert_eq!(first(query, Signals::without(&[])), "src/extract/mod.rs");
        assert_ne!(
            first(query, Signals::without(&[Signal::HubModules])),
            "src/extract/mod.rs"
        );
        // An entry-point question lifts the package's entry file.
        write(root, "src/lib.rs", "pub mod extract;\npub mod handlers;\n");
        let first = index_and_rank_first(root);
        let query = "what does the crate export as its entry point";
        assert_eq!(first(query, Signals::without(&[])), "src/lib.rs");
        assert_ne!(
            first(query, Signals::without(&[Signal::HubModules])),
            "src/lib.rs"
        );
    }

    #[test]
    fn manifests_and_examples_rank_below_the_code_unless_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(
            root,
            "src/compress.rs",
            "/// Gzip compression of response bodies.\npub fn gzip_body(body: &[u8]) -> Vec<u8> {\n    body.to_vec()\n}\n",
        );
        write(
            root,
            "Cargo.toml",
            "[package]\nname = \"gzip-compression-bodies\"\ndescription = \"gzip compression of response bodies, gzip response compression\"\n\n[features]\ngzip = []\ncompression = [\"gzip\"]\n",
        );
        let first = index_and_rank_first(root);
        let query = "gzip compression of response bodies";
        assert_eq!(first(query, Signals::without(&[])), "src/compress.rs");
        assert_eq!(
            first(query, Signals::without(&[Signal::ManifestPenalty])),
            "Cargo.toml"
        );
        // Asked for: the dependency list.
        assert_eq!(
            first(
                "gzip compression dependency in the cargo manifest",
                Signals::without(&[])
            ),
            "Cargo.toml"
        );
    }

    /// Indexes `root` and returns what ranks first for a query with these signals on.
    fn index_and_rank_first(root: &Path) -> impl Fn(&str, Signals) -> String {
        let config = IndexConfig::new(root);
        update(&config, None, &HashedEmbedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        move |text, signals| {
            let mut query = SearchQuery::new(text, 5);
            query.signals = signals;
            let outcome = search(&config, &HashedEmbedder, &query).unwrap();
            outcome.hits[0].path.clone()
        }
    }

    #[test]
    fn a_change_description_lifts_the_file_named_after_its_words() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // The rendering code says the title's words more often than the file they name.
        write(
            root,
            "src/render.rs",
            "/// Shows the popup links.\npub fn show_popup_links(links: &[Link]) -> Popup {\n    Popup::with_links(links)\n}\n",
        );
        write(
            root,
            "src/hover.rs",
            "/// The popup links at a position.\npub fn popup_links_at(pos: Pos) -> Popup {\n    show_popup_links(&links_at(pos))\n}\n",
        );
        // Unrelated code, so the vector arm's scale has a floor.
        write(
            root,
            "src/db.rs",
            "pub fn open_database(url: &str) -> Database {\n    Database::connect(url)\n}\n",
        );
        let first = index_and_rank_first(root);
        let change = "Show popup links on hover";
        assert_eq!(first(change, Signals::without(&[])), "src/hover.rs");
        assert_eq!(
            first(change, Signals::without(&[Signal::PathWords])),
            "src/render.rs"
        );
        // A question about the same thing is not a change: no lift.
        let question = "how are popup links shown on hover";
        assert_eq!(
            first(question, Signals::without(&[])),
            first(question, Signals::without(&[Signal::PathWords]))
        );
    }

    #[test]
    fn build_search_update_and_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(
            root,
            "src/auth.rs",
            "/// Checks a password against its hash.\npub fn verify_password(hash: &str, pw: &str) -> bool {\n    hash == pw\n}\n",
        );
        write(
            root,
            "src/render.py",
            "class Renderer:\n    def draw_triangle(self, a, b, c):\n        return [a, b, c]\n",
        );
        write(
            root,
            "tests/auth_test.rs",
            "fn verify_password_works() { assert!(true) }\n",
        );
        write(
            root,
            "node_modules/x/index.js",
            "function verifyPassword() {}\n",
        );
        write(
            root,
            "gen.go",
            "// Code generated by hand. DO NOT EDIT.\npackage x\nfunc VerifyPassword() {}\n",
        );
        let mut config = IndexConfig::new(root);
        config.hnsw_min_points = 2;
        let embedder = HashedEmbedder;
        let report = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!(
            (report.files_changed, report.files_skipped),
            (4, 0),
            "{report:?}"
        );
        // Generated code is indexed, so a change to it can be found, and ranked below the
        // code it was generated from.
        let outcome = search(&config, &embedder, &SearchQuery::new("verify_password", 5)).unwrap();
        let found = paths(&outcome);
        let (code, generated) = (
            found.iter().position(|p| *p == "src/auth.rs"),
            found.iter().position(|p| *p == "gen.go"),
        );
        assert!(
            code.is_some() && generated.is_some() && code < generated,
            "{found:?}"
        );

        let outcome = search(
            &config,
            &embedder,
            &SearchQuery::new("where do we verify the password", 5),
        )
        .unwrap();
        assert_eq!(paths(&outcome)[0], "src/auth.rs");
        assert!(
            outcome.channels.contains(&Channel::Vector)
                && outcome.channels.contains(&Channel::Lexical)
        );
        let hit = &outcome.hits[0];
        assert_eq!(
            (hit.start_line, hit.end_line, hit.symbol.as_deref()),
            (1, 4, Some("verify_password"))
        );
        // Tests are ranked lower by default, filtered out on request (before the cut).
        assert!(paths(&outcome)[1..].contains(&"tests/auth_test.rs"));
        let mut query = SearchQuery::new("verify password", 1);
        query.filter.tests = Tests::Only;
        assert_eq!(
            paths(&search(&config, &embedder, &query).unwrap()),
            ["tests/auth_test.rs"]
        );
        query.filter.tests = Tests::Exclude;
        query.filter.extensions = vec![".py".into()];
        let outcome = search(&config, &embedder, &query).unwrap();
        assert!(outcome.hits.is_empty() || paths(&outcome) == ["src/render.py"]);

        // Unchanged files are skipped; a changed one replaces its chunks; a deleted one leaves.
        let report = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!((report.files_changed, report.files_unchanged), (0, 4));
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(
            root,
            "src/render.py",
            "def rasterize_polygon(points):\n    return points\n",
        );
        std::fs::remove_file(root.join("tests/auth_test.rs")).unwrap();
        let report = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        assert_eq!(
            (
                report.files_changed,
                report.files_removed,
                report.files_unchanged
            ),
            (1, 1, 2),
            "{report:?}"
        );
        let outcome = search(&config, &embedder, &SearchQuery::new("draw triangle", 5)).unwrap();
        assert!(!paths(&outcome).contains(&"tests/auth_test.rs"));
        let outcome = search(
            &config,
            &embedder,
            &SearchQuery::new("rasterize polygon", 5),
        )
        .unwrap();
        assert_eq!(paths(&outcome)[0], "src/render.py");
        assert_eq!(outcome.hits[0].symbol.as_deref(), Some("rasterize_polygon"));

        let status = status(&config).unwrap();
        assert!(status.healthy, "{status:?}");
        assert_eq!((status.files, status.vectors), (3, status.chunks));
        assert!(status.graph);

        // A second writer is refused while the first holds the lock; readers carry on.
        let _held = store::WriteLock::acquire(&config.dir).unwrap();
        let err = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap_err();
        assert_eq!(err.code(), "INDEX_BUSY");
        assert!(err.to_string().contains("another indexer"), "{err}");
        assert!(
            !search(&config, &embedder, &SearchQuery::new("password", 3))
                .unwrap()
                .hits
                .is_empty()
        );
    }

    #[test]
    fn an_index_of_an_older_format_is_refused_with_the_fix_then_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.rs", "pub fn alpha_quota() {}\n");
        let config = IndexConfig::new(dir.path());
        update(&config, None, &HashedEmbedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        let meta_path = config.dir.join("meta.json");
        let mut meta: store::Meta = store::read_json(&meta_path).unwrap().unwrap();
        meta.version = 1;
        store::write_json(&meta_path, &meta).unwrap();
        let err = search(&config, &HashedEmbedder, &SearchQuery::new("alpha", 5)).unwrap_err();
        assert_eq!(err.code(), "INDEX_CORRUPT");
        assert!(err.to_string().contains("run `tollgate index`"), "{err}");
        assert!(!status(&config).unwrap().healthy);
        let report = update(&config, None, &HashedEmbedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert!(report.rebuilt.is_some(), "{report:?}");
        let hits = search(
            &config,
            &HashedEmbedder,
            &SearchQuery::new("alpha_quota", 5),
        )
        .unwrap();
        assert_eq!(paths(&hits), ["a.rs"]);
    }

    /// `nearest` ranks by cosine similarity alone, its scores the similarities, the filter
    /// applied; a rebuild asked for reads every file again and keeps what is outside `under`.
    #[test]
    fn nearest_ranks_by_similarity_and_a_forced_rebuild_reads_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "src/pool.rs",
            "/// A database connection pool.\npub fn connection_pool() {}\n",
        );
        write(
            root,
            "src/net.rs",
            "/// Request timeout.\npub fn request_timeout() {}\n",
        );
        write(
            root,
            "docs/pool.md",
            "# Connection pool\n\nThe database connection pool.\n",
        );
        let mut config = IndexConfig::new(root);
        let embedder = HashedEmbedder;
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        let mut query = SearchQuery::new("database connection pool", 10);
        let outcome = nearest(&config, &embedder, &query).unwrap();
        assert_eq!(outcome.channels, [Channel::Vector]);
        let scores: Vec<f32> = outcome.hits.iter().map(|h| h.score).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        assert!(
            outcome.hits[0].path.contains("pool"),
            "{:?}",
            paths(&outcome)
        );
        assert!(
            scores.iter().all(|s| (-1.0..=1.0).contains(s)),
            "{scores:?}"
        );
        query.filter.under = Some("src".to_string());
        let filtered = nearest(&config, &embedder, &query).unwrap();
        assert!(
            filtered.hits.iter().all(|h| h.path.starts_with("src/")),
            "{:?}",
            paths(&filtered)
        );

        config.rebuild = true;
        let report = update(&config, Some("src"), &embedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(report.rebuilt.as_deref(), Some("a rebuild was asked for"));
        assert_eq!(report.files_changed, 3, "{report:?}");
        config.rebuild = false;
        assert_eq!(status(&config).unwrap().files, 3);
    }

    #[test]
    fn a_hit_is_stale_when_its_size_or_mtime_differ_from_those_indexed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.rs", "pub fn alpha_quota() {}\n");
        let config = IndexConfig::new(root);
        let embedder = HashedEmbedder;
        update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        let query = SearchQuery::new("alpha_quota", 3);
        assert!(search(&config, &embedder, &query).unwrap().stale.is_empty());

        // Edited, then given an mtime older than the index (a restore, `cp -p`): its size
        // tells. Comparing the mtime with the last run's time missed it.
        write(root, "a.rs", "// moved down\npub fn alpha_quota() {}\n");
        std::fs::File::options()
            .write(true)
            .open(root.join("a.rs"))
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
        assert_eq!(search(&config, &embedder, &query).unwrap().stale, ["a.rs"]);
        update(&config, Some("a.rs"), &embedder, &mut |_| {
            ControlFlow::Continue(())
        })
        .unwrap();
        assert!(search(&config, &embedder, &query).unwrap().stale.is_empty());
    }

    #[test]
    fn a_lock_file_left_by_a_dead_process_is_no_lock() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("write.lock"), "999999999").unwrap();
        assert!(store::WriteLock::acquire(tmp.path()).is_ok());
        // An empty lock, as a crash before its unsynced pid reached the disk leaves it.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("write.lock"), "").unwrap();
        let held = store::WriteLock::acquire(tmp.path()).unwrap();
        let err = store::WriteLock::acquire(tmp.path()).unwrap_err();
        assert_eq!(err.code(), "INDEX_BUSY");
        drop(held);
        assert!(store::WriteLock::acquire(tmp.path()).is_ok());
    }

    /// The write lock admits one holder at a time however writers race for it: taking it,
    /// finding it held and giving it up in tight loops on eight threads never lets two hold it.
    #[test]
    fn the_write_lock_never_has_two_holders() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let tmp = tempfile::tempdir().unwrap();
        let holders = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let busy = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..3000 {
                        match store::WriteLock::acquire(tmp.path()) {
                            Ok(lock) => {
                                let now = holders.fetch_add(1, Ordering::SeqCst) + 1;
                                most.fetch_max(now, Ordering::SeqCst);
                                std::thread::yield_now();
                                holders.fetch_sub(1, Ordering::SeqCst);
                                drop(lock);
                            }
                            Err(err) => {
                                assert_eq!(err.code(), "INDEX_BUSY", "{err}");
                                busy.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                });
            }
        });
        assert!(busy.load(Ordering::SeqCst) > 0, "the writers never met");
        assert_eq!(
            most.load(Ordering::SeqCst),
            1,
            "two writers held the lock at once"
        );
    }

    /// Simultaneous first builds of one index (threads here, processes in the field): one
    /// builds, the others are told the index is busy; none fails otherwise and the index that
    /// results is whole.
    #[test]
    fn racing_first_builds_are_busy_never_broken() {
        for round in 0..6 {
            let dir = tempfile::tempdir().unwrap();
            for i in 0..20 {
                write(
                    dir.path(),
                    &format!("m{i}.rs"),
                    &format!("pub fn item_{i}() {{}}\n"),
                );
            }
            let config = IndexConfig::new(dir.path());
            let outcomes: Vec<Result<(), IndexError>> = std::thread::scope(|scope| {
                let builders: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            update(&config, None, &HashedEmbedder, &mut |_| {
                                ControlFlow::Continue(())
                            })
                            .map(|_| ())
                        })
                    })
                    .collect();
                builders.into_iter().map(|b| b.join().unwrap()).collect()
            });
            let broken: Vec<String> = outcomes
                .iter()
                .filter_map(|outcome| outcome.as_ref().err())
                .filter(|err| err.code() != "INDEX_BUSY")
                .map(|err| format!("{}: {err}", err.code()))
                .collect();
            assert!(broken.is_empty(), "round {round}: {broken:?}");
            assert!(
                outcomes.iter().any(Result::is_ok),
                "round {round}: none built"
            );
            let hits = search(&config, &HashedEmbedder, &SearchQuery::new("item_7", 3)).unwrap();
            assert_eq!(paths(&hits)[0], "m7.rs");
        }
    }
}
