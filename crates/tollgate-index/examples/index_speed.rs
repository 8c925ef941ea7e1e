//! Where an index build, a query and a one-file re-index spend their time, in process (the
//! whole-process figures come from timing the `tollgate` binary):
//!
//! `cargo run --release -p tollgate-index --example index_speed -- <dir> [--history] [--runs N]`
//!
//! Deletes `<dir>/.tollgate/index`, builds it cold, runs a fixed set of queries `N` times
//! (median and p99 per query), then appends a line to one indexed file, re-indexes, and restores
//! the file. `--warm` keeps an existing index and only runs the queries; `--reindex`
//! keeps it and only re-indexes. Not run in CI.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports on the terminal"
)]

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tollgate_index::{HashedEmbedder, IndexConfig, SearchQuery, search, update};

/// The `tollgate` binary's allocator, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const QUERIES: &[&str] = &[
    "where is the config file parsed",
    "HashMap",
    "handle the error when the connection is closed",
    "fn main",
    "incremental reparse after an edit",
];

fn median(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    (samples[samples.len() / 2], p99)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(args.get(1).expect("usage: index_speed <dir> [--history]"));
    let history = args.iter().any(|a| a == "--history");
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let warm = args.iter().any(|a| a == "--warm");
    let mut config = IndexConfig::new(&root);
    config.history = history;
    let embedder = HashedEmbedder;
    if warm {
        run_queries(&config, &embedder, runs);
        return;
    }
    if args.iter().any(|a| a == "--reindex") {
        reindex_one_file(&root, &config, &embedder, runs);
        return;
    }
    let _ = std::fs::remove_dir_all(&config.dir);

    let started = Instant::now();
    let report = update(&config, None, &embedder, &mut |_| ControlFlow::Continue(())).unwrap();
    println!(
        "cold: {:.3} s ({} files, {} chunks; walk {} ms, index {} ms, history {} ms)",
        started.elapsed().as_secs_f64(),
        report.files_changed,
        report.chunks_added,
        report.walk_ms,
        report.index_ms,
        report.history_ms
    );

    run_queries(&config, &embedder, runs);
    reindex_one_file(&root, &config, &embedder, runs);
}

fn run_queries(config: &IndexConfig, embedder: &HashedEmbedder, runs: usize) {
    for text in QUERIES {
        let query = SearchQuery::new(text, 10);
        let samples: Vec<Duration> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                search(config, embedder, &query).unwrap();
                started.elapsed()
            })
            .collect();
        let (p50, p99) = median(samples);
        println!(
            "query {text:?}: p50 {:.2} ms, p99 {:.2} ms",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
}

fn reindex_one_file(
    root: &std::path::Path,
    config: &IndexConfig,
    embedder: &HashedEmbedder,
    runs: usize,
) {
    let files = tollgate_index::walk::walk(root, None);
    let target = files
        .iter()
        .filter(|f| f.size > 2_000)
        .nth(files.len() / 3)
        .expect("a file to edit");
    let original = std::fs::read(&target.abs).unwrap();
    let mut edited = original.clone();
    edited.extend_from_slice(b"\n// tollgate speed probe\n");
    let mut samples = Vec::new();
    for round in 0..runs.min(10) {
        std::fs::write(
            &target.abs,
            if round % 2 == 0 { &edited } else { &original },
        )
        .unwrap();
        let started = Instant::now();
        let report = update(config, None, embedder, &mut |_| ControlFlow::Continue(())).unwrap();
        samples.push(started.elapsed());
        assert_eq!(report.files_changed, 1, "{report:?}");
    }
    std::fs::write(&target.abs, &original).unwrap();
    let (p50, p99) = median(samples);
    println!(
        "one-file re-index ({}): p50 {:.1} ms, p99 {:.1} ms",
        target.path,
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
}
