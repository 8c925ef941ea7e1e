#!/usr/bin/env python3
"""Whole-process timings of the code index (what a user waits for), on any checkout:

    python3 crates/tollgate-index/benches/index_process.py <tollgate-binary> <dir> \
        [cold-runs] [file-to-edit] ["q1|q2|…"] [--baseline <other-tollgate-binary>]

Builds the index of <dir> cold `cold-runs` times (median), runs five queries 15 times each as
`tollgate search` processes (p50, p99; the CLI's defaults, so test files are filtered out), then
appends a line to one file and re-indexes 12 times (alternating edit and restore), and reports
the index size against the tree's, files/second and the peak RSS of the index runs.

With `--baseline`, a copy of <dir> is indexed by the other binary and every measurement
alternates between the two, run by run: on a shared machine whose speed drifts, only figures
taken this way compare. The in-process breakdown is `cargo run --release -p tollgate-index
--example index_speed`. Not run in CI.
"""
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(args, cwd):
    """Wall time of one process, and its output."""
    t = time.perf_counter()
    r = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        print("FAILED", args, r.stderr.decode()[:500])
        sys.exit(1)
    return dt, r.stdout.decode() + r.stderr.decode()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def tree_bytes(root):
    return sum(
        os.path.getsize(os.path.join(d, f))
        for d, _, fs in os.walk(root)
        if ".tollgate" not in d and "/.git" not in d
        for f in fs
    )


args = sys.argv[1:]
baseline = None
if "--baseline" in args:
    i = args.index("--baseline")
    baseline = os.path.abspath(args[i + 1])
    del args[i : i + 2]
binary = os.path.abspath(args[0])
root = os.path.abspath(args[1])
cold_runs = int(args[2]) if len(args) > 2 else 3
edited = args[3] if len(args) > 3 else "crates/ide/src/hover.rs"
queries = (
    args[4].split("|")
    if len(args) > 4
    else [
        "where is the config file parsed",
        "HashMap",
        "handle the error when the connection is closed",
        "fn main",
        "incremental reparse after an edit",
    ]
)

# (label, binary, tree): the baseline gets its own copy, so neither sees the other's index.
subjects = [("measured", binary, root)]
scratch = None
if baseline:
    scratch = tempfile.mkdtemp(prefix="tollgate-baseline-")
    copy = os.path.join(scratch, "tree")
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".tollgate"), symlinks=True)
    subjects.append(("baseline", baseline, copy))

cold = {s[0]: [] for s in subjects}
counts = {}
for _ in range(cold_runs):
    for label, tg, tree in subjects:
        shutil.rmtree(os.path.join(tree, ".tollgate"), ignore_errors=True)
        dt, out = run([tg, "index", "."], tree)
        cold[label].append(dt)
        m = re.search(r"indexed (\d+) files: (\d+) changed.*?(\d+) chunks added", out)
        if m:
            counts[label] = tuple(int(m.group(i)) for i in (1, 2, 3))
# Peak RSS is over every child so far: with a baseline it is the larger of the two.
peak = peak_rss_mb()

latency = {s[0]: [] for s in subjects}
per_query = {s[0]: {q: [] for q in queries} for s in subjects}
for _ in range(15):
    for q in queries:
        for label, tg, tree in subjects:
            dt, _ = run([tg, "search", q], tree)
            latency[label].append(dt)
            per_query[label][q].append(dt)

reindex = {s[0]: [] for s in subjects}
originals = {}
for label, _, tree in subjects:
    with open(os.path.join(tree, edited), "rb") as f:
        originals[label] = f.read()
for i in range(12):
    for label, tg, tree in subjects:
        with open(os.path.join(tree, edited), "wb") as f:
            f.write(originals[label] + (b"\n// probe\n" if i % 2 == 0 else b""))
        reindex[label].append(run([tg, "index", "."], tree)[0])
for label, tg, tree in subjects:
    with open(os.path.join(tree, edited), "wb") as f:
        f.write(originals[label])
    run([tg, "index", "."], tree)

for label, tg, tree in subjects:
    print(f"== {label}: {tg}")
    c = statistics.median(cold[label])
    files, changed, chunks = counts.get(label, (0, 0, 0))
    print(f"cold index: median {c:.3f} s  runs {[round(x, 3) for x in cold[label]]}")
    print(f"  {changed} files indexed of {files} walked, {chunks} chunks: {changed / c:.0f} files/s")
    for q in queries:
        print(f"query {q!r}: p50 {statistics.median(per_query[label][q]) * 1e3:.1f} ms")
    xs = latency[label]
    print(f"warm query, all: p50 {statistics.median(xs) * 1e3:.1f} ms  p99 {pct(xs, 99) * 1e3:.1f} ms  (n={len(xs)})")
    xs = reindex[label]
    print(f"one-file re-index: p50 {statistics.median(xs) * 1e3:.1f} ms  p99 {pct(xs, 99) * 1e3:.1f} ms")
    size = sum(
        os.path.getsize(os.path.join(d, f))
        for d, _, fs in os.walk(os.path.join(tree, ".tollgate"))
        for f in fs
    )
    t = tree_bytes(tree)
    print(f"index size: {size / 1e6:.1f} MB for a {t / 1e6:.1f} MB tree ({size / t:.2f}x)")
print(f"peak RSS of the index runs: {peak:.0f} MB" + (" (the larger of the two)" if baseline else ""))
if scratch:
    shutil.rmtree(scratch, ignore_errors=True)
