//! Retrieval quality on real history ("commit title → changed files", reference note §8):
//!
//! `cargo run --release -p tollgate-index --example index_bench -- <git-dir> [queries=150]`
//!
//! Clones `<git-dir>` to a temporary directory, checks out the snapshot S that lies `queries`
//! first-parent commits before `HEAD` (history after S stays invisible: the history channel
//! only sees commits reachable from S), indexes S, then asks each later commit's title and
//! scores the file ranking against the files the commit changed that exist at S. Commits that
//! are bumps, releases or merges of nothing, titles with fewer than two content words and
//! commits touching more than 15 indexed files are skipped. Prints recall@10 and MRR for each
//! channel alone and for the fusion. Not run in CI.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports on the terminal"
)]

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use git2::{Oid, Repository};
use tollgate_index::{Channel, HashedEmbedder, IndexConfig, SearchQuery, search, update};

struct Query {
    title: String,
    gold: HashSet<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let source = args.get(1).expect("usage: index_bench <git-dir> [queries]");
    let wanted: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(150);
    let work = std::env::temp_dir().join(format!("tollgate-bench-{}", std::process::id()));
    let status = Command::new("git")
        .args(["clone", "--quiet", "--no-checkout", source])
        .arg(&work)
        .status()
        .unwrap();
    assert!(status.success(), "git clone failed");
    let repo = Repository::open(&work).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    // First-parent chain, newest first.
    let mut chain: Vec<Oid> = Vec::new();
    let mut cursor = Some(head);
    while let Some(commit) = cursor {
        chain.push(commit.id());
        cursor = commit.parent(0).ok();
    }
    // Scan back until `wanted` usable queries follow the snapshot.
    let mut candidates: Vec<(Oid, String, Vec<String>)> = Vec::new();
    let mut snapshot = None;
    for &oid in &chain {
        if candidates.len() >= wanted {
            snapshot = Some(oid);
            break;
        }
        let commit = repo.find_commit(oid).unwrap();
        let title = commit.summary().ok().flatten().unwrap_or("").to_string();
        let lower = title.to_lowercase();
        if [
            "bump",
            "release",
            "changelog",
            "merge branch",
            "version",
            "pkg/brew",
            "deps:",
        ]
        .iter()
        .any(|w| lower.contains(w))
            || lower
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() > 2)
                .count()
                < 2
        {
            continue;
        }
        let Some(parent) = commit.parent(0).ok() else {
            continue;
        };
        let diff = repo
            .diff_tree_to_tree(
                Some(&parent.tree().unwrap()),
                Some(&commit.tree().unwrap()),
                None,
            )
            .unwrap();
        let files: Vec<String> = diff
            .deltas()
            .filter_map(|d| {
                d.old_file()
                    .path()
                    .and_then(|p| p.to_str())
                    .map(str::to_string)
            })
            .collect();
        if files.is_empty() || files.len() > 15 {
            continue;
        }
        candidates.push((oid, title, files));
    }
    let snapshot = snapshot.expect("not enough history for that many queries");
    let status = Command::new("git")
        .arg("-C")
        .arg(&work)
        .args(["checkout", "--quiet", "--detach", &snapshot.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    candidates.reverse(); // Oldest first.

    let config = IndexConfig::new(&work);
    let started = Instant::now();
    let report = update(&config, None, &HashedEmbedder, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    eprintln!(
        "snapshot {snapshot}: {} files, {} chunks, {} commits indexed in {} ms",
        report.files_changed,
        report.chunks_added,
        report.commits_added,
        started.elapsed().as_millis()
    );
    let indexed: HashSet<String> = tollgate_index::walk::walk(&work, None)
        .into_iter()
        .map(|f| f.path)
        .collect();
    let queries: Vec<Query> = candidates
        .into_iter()
        .filter_map(|(_, title, files)| {
            let gold: HashSet<String> = files
                .into_iter()
                .filter(|f| indexed.contains(f) && work.join(f).exists())
                .collect();
            (!gold.is_empty()).then_some(Query { title, gold })
        })
        .collect();
    println!(
        "repository {source}\nsnapshot {snapshot}, {} queries",
        queries.len()
    );
    println!(
        "{:<28} {:>9} {:>7} {:>7}",
        "variant", "recall@10", "MRR", "hit@1"
    );
    let variants: Vec<(&str, Vec<Channel>)> = vec![
        ("lexical (BM25)", vec![Channel::Lexical]),
        ("vector (hashed)", vec![Channel::Vector]),
        ("history", vec![Channel::History]),
        ("lexical+vector", vec![Channel::Lexical, Channel::Vector]),
        ("fusion (all)", Vec::new()),
    ];
    for (name, channels) in variants {
        let (mut recall, mut mrr, mut hit1) = (0.0, 0.0, 0.0);
        for q in &queries {
            let mut query = SearchQuery::new(&q.title, 50);
            query.channels = channels.clone();
            let outcome = search(&config, &HashedEmbedder, &query).unwrap();
            let mut files: Vec<String> = Vec::new();
            for hit in outcome.hits {
                if !files.contains(&hit.path) {
                    files.push(hit.path);
                }
            }
            let top10: HashSet<&String> = files.iter().take(10).collect();
            recall +=
                q.gold.iter().filter(|g| top10.contains(g)).count() as f64 / q.gold.len() as f64;
            if let Some(rank) = files.iter().position(|f| q.gold.contains(f)) {
                mrr += 1.0 / (rank as f64 + 1.0);
                if rank == 0 {
                    hit1 += 1.0;
                }
            }
        }
        let n = queries.len().max(1) as f64;
        println!(
            "{name:<28} {:>9.3} {:>7.3} {:>7.3}",
            recall / n,
            mrr / n,
            hit1 / n
        );
    }
    let _ = std::fs::remove_dir_all(Path::new(&work));
}
