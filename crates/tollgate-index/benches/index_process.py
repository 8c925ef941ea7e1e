#!/usr/bin/env python3
"""Whole-process timings of the code index (what a user waits for), on any checkout:

    python3 crates/tollgate-index/benches/index_process.py <tollgate-binary> <dir> [cold-runs] [file-to-edit] ["q1|q2|…"]

Builds the index of <dir> cold `cold-runs` times (median), runs five queries 15 times each as
`tollgate search` processes (p50, p99; the CLI's defaults, so test files are filtered out), then
appends a line to one file and re-indexes 12 times (alternating edit and restore), and reports the
index size against the tree's, files/second and the peak RSS of the index runs. The in-process breakdown is `cargo run --release -p tollgate-index --example
index_speed`. Not run in CI.
"""
import subprocess, time, statistics, sys, os, shutil, resource, re
last_output = ""
def run(args, cwd):
    global last_output
    t = time.perf_counter()
    r = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        print("FAILED", args, r.stderr.decode()[:500]); sys.exit(1)
    last_output = r.stdout.decode() + r.stderr.decode()
    return dt
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(len(xs)*p/100))]
TG = os.path.abspath(sys.argv[1])
root = sys.argv[2]
cold_runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
edited = sys.argv[4] if len(sys.argv) > 4 else "crates/ide/src/hover.rs"
colds = []
for _ in range(cold_runs):
    shutil.rmtree(os.path.join(root, ".tollgate"), ignore_errors=True)
    colds.append(run([TG, "index", "."], root))
cold = statistics.median(colds)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
m = re.search(r"indexed (\d+) files: (\d+) changed.*?(\d+) chunks added", last_output)
files, changed, chunks = (int(m.group(i)) for i in (1, 2, 3)) if m else (0, 0, 0)
print(f"cold index: median {cold:.3f} s  runs {[round(c,3) for c in colds]}")
print(f"  {changed} files indexed of {files} walked, {chunks} chunks: {changed/cold:.0f} files/s; peak RSS {peak_mb:.0f} MB")
qs = sys.argv[5].split("|") if len(sys.argv) > 5 else ["where is the config file parsed", "HashMap", "handle the error when the connection is closed", "fn main", "incremental reparse after an edit"]
all_q = []
for q in qs:
    ts = [run([TG, "search", q], root) for _ in range(15)]
    all_q += ts
    print(f"query {q!r}: p50 {statistics.median(ts)*1e3:.1f} ms")
print(f"warm query, all: p50 {statistics.median(all_q)*1e3:.1f} ms  p99 {pct(all_q,99)*1e3:.1f} ms  (n={len(all_q)})")
target = os.path.join(root, edited)
orig = open(target, "rb").read()
ts = []
for i in range(12):
    open(target, "wb").write(orig + (b"\n// probe\n" if i % 2 == 0 else b""))
    ts.append(run([TG, "index", "."], root))
open(target, "wb").write(orig)
run([TG, "index", "."], root)
print(f"one-file re-index: p50 {statistics.median(ts)*1e3:.1f} ms  p99 {pct(ts,99)*1e3:.1f} ms")
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(root, ".tollgate")) for f in fs)
tree = sum(os.path.getsize(os.path.join(d, f)) for d, ds, fs in os.walk(root) if ".tollgate" not in d and "/.git" not in d for f in fs)
print(f"index size: {size/1e6:.1f} MB for a {tree/1e6:.1f} MB tree ({size/tree:.2f}x)")
