#!/usr/bin/env python3
"""Code-search quality of `tollgate search` on real repositories, for one or more binaries.

Method
------
Each repository is evaluated at one snapshot commit S, checked out in a fresh clone that holds
S's history and nothing later (so the history channel cannot see the answers), and indexed once
per binary. Three kinds of queries run against that index:

- history: "PR title -> files it changed", generated at run time from the first-parent chain of
  the mirror's HEAD. Every first-parent commit after S gives one query: its PR title (the body's
  first line for "Merge pull request #N from ..." merges, the subject without "(#N)" otherwise,
  a conventional-commit or "[tag]" prefix dropped); gold = the files it changed against its
  first parent that exist at S, changelogs (CHANGES.rst, History.md, ...) and lockfiles left
  out since most PRs touch them (grade 1 each). Skipped: bot commits, version bumps, releases,
  dependency bumps, branch merges and subtree syncs, titles with fewer than 2 content words,
  more than 15 gold files, no gold file. The first --queries usable commits after S are used.
- symbol / nl: hand-written queries in tests/bench/search-queries/<repo>.jsonl, one JSON object
  a line: {"snapshot": SHA, "kind": "symbol"|"nl", "query": ..., "relevant": {path: grade}}
  (grade 2 = the answer, 1 = also useful), written by reading the code at S.
- arch: "how is X organised / where does the Y machinery live", in the same files. A query may
  also give chunk targets, "targets": [{"path": P, "grade": G, "lines": [first, last]}] (lines
  optional: any chunk of P), for the chunk scorer below; without them every relevant file is one.

tests/bench/search-queries/split.json splits session 14's eight repositories into a "tune" and a
"held-out" half (committed before any tuning); --repos tune / --repos held-out names a half, and
the summary has rows per half when its repositories are in the run.

S is the newest first-parent commit with --queries (150) usable history queries between it and
HEAD. A query file pins it (its "snapshot"), so a newer mirror does not move S away from the
hand-written answers; a repository without a query file gets S computed.

Results are ranked by distinct files in order of first appearance (several chunks of one file
count once). Per query: reciprocal rank of the first relevant file (over all -k results, 50 by
default), recall@10 and NDCG@10 (graded gains 2^g - 1). Beside them chunk_ndcg@10, the peer's scorer: NDCG@10
over the first ten chunks as returned, a chunk earning the grade of the best target it hits (path
equal and, with a line span, lines overlapping) that no earlier chunk hit. Means per repository x kind, per kind,
per repository and overall (every query weighs the same). Each variant after the first is
compared with the first (the baseline): mean paired difference with a bootstrap 95% CI (2000
resamples of the queries, fixed seed). --timing times 20 queries, 3 rounds, variants
interleaved, -k 10, whole process.

Usage
-----
  python3 tests/bench/search_eval.py --repos rust-analyzer,pytest,flask,express,zod \\
      --variant base=/tmp/tollgate-head7 [--variant new=/path/to/tollgate] \\
      [--env new:TOLLGATE_SEARCH_SIGNALS_OFF=a,b] [--queries 150] [--kinds history,symbol,nl] \\
      [--timing] [--out /work/eval/result.json]

Clones go to WORK/src/<repo>, indexes to WORK/idx/<repo>/<binary hash> (WORK = --work,
/work/eval); an index is reused while the binary and S are unchanged. Env variables only change
searching, so variants with the same binary share an index; --share-index makes every variant
use the first variant's index (for builds that change only searching). Mirrors are bare git directories
fetched to /work/.mirror/<owner>+<name>/repo (--mirrors).
"""
import argparse
import concurrent.futures
import functools
import hashlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPOS = {
    "rust-analyzer": "rust-lang/rust-analyzer",
    "pytest": "pytest-dev/pytest",
    "flask": "pallets/flask",
    "express": "expressjs/express",
    "zod": "colinhacks/zod",
    "ripgrep": "BurntSushi/ripgrep",
    # session 14's held-out evaluation (split.json: which half each is in)
    "gin": "gin-gonic/gin",
    "axum": "tokio-rs/axum",
    "httpx": "encode/httpx",
    "hono": "honojs/hono",
    "gson": "google/gson",
    "sinatra": "sinatra/sinatra",
    "polly": "App-vNext/Polly",
    "axios": "axios/axios",
}
KINDS = ("history", "symbol", "nl", "arch")
QUERY_DIR = Path(__file__).resolve().parent / "search-queries"
CUTOFF = 10
MAX_GOLD = 15
RESAMPLES = 2000
SEED = 20240601
METRICS = ("mrr", "r@10", "ndcg@10", "chunk_ndcg@10")

MERGE_PR = re.compile(r"^Merge pull request #\d+ from ")
PR_SUFFIX = re.compile(r"(?:\s*\(#\d+(?:,\s*#\d+)*\))+\s*$")
TITLE_PREFIX = re.compile(
    r"^(?:\[[^\]]*\]\s*|(?:fix|feat|feature|perf|minor|internal|chore|docs?|refactor|tests?|ci|"
    r"build|style|revert|deps|fixup|typo)(?:\([^)]*\))?!?:\s*)+", re.I)
SKIP_TITLE = re.compile(
    r"\b(?:bump(?:s|ed|ing)?|releas(?:e|es|ed|ing)|changelog|dependabot|pre-commit|autoupdate|"
    r"rustc[ -]pull|subtree|sync from|update plugin list|start version|"
    r"update (?:\w+ )?(?:requirements|dependencies|deps))\b|"
    r"[\w./-]+@[\^~]?\d|^(?:v?\d+(?:\.\d+)+|merge (?:branch|remote-tracking|tag)\b|"
    r"(?:upgrade|update|pin) `?[\w@./-]+`?(?: to \S+)?$)", re.I)
NOT_GOLD = re.compile(r"(?:^|/)(?:(?:changelog|changes|history|news)(?:/|[^/]*$)|"
                      r"[^/]*\.lock$|[^/]*-lock\.(?:json|yaml)$)", re.I)
STOPWORDS = set("""a an the of to in on for with and or is are be been it its this that these
those from by as at into not no do does when if then than via so can cannot should only all any
some more less use uses used using""".split())


@dataclass
class Commit:
    sha: str
    author: str
    subject: str
    body: str
    files: list


@dataclass
class Query:
    repo: str
    kind: str
    query: str
    relevant: dict
    source: str = "hand"
    targets: list = field(default_factory=list)
    results: dict = field(default_factory=dict)


@dataclass
class Variant:
    name: str
    binary: str
    env: dict


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


# ---------------------------------------------------------------- history queries

def first_parent_chain(mirror):
    """First-parent commits from HEAD, newest first."""
    return git(mirror, "rev-list", "--first-parent", "HEAD").split()


def load_commits(mirror, count):
    """The newest `count` first-parent commits with the files each changed against its parent."""
    out = git(mirror, "log", "--first-parent", "--diff-merges=first-parent", "--name-only",
              "--no-renames", f"-n{count}", "--format=%x00%H%x1f%an%x1f%B%x1e", "HEAD")
    commits = []
    for record in out.split("\0")[1:]:
        header, _, names = record.partition("\x1e")
        sha, author, message = header.split("\x1f", 2)
        subject, _, body = message.strip().partition("\n")
        commits.append(Commit(sha, author, subject.strip(), body.strip(),
                              [n for n in names.split("\n") if n]))
    return commits


def files_at(mirror, sha):
    return set(git(mirror, "ls-tree", "-r", "--name-only", sha).split("\n")) - {""}


def pr_title(commit):
    """The PR title a commit stands for, or None when it has none (a branch merge)."""
    title = commit.subject
    if MERGE_PR.match(title):
        title = commit.body.split("\n", 1)[0].strip()
    title = PR_SUFFIX.sub("", title)
    return TITLE_PREFIX.sub("", title).strip() or None


def content_words(title):
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]+", title)
    return [w for w in words if w.lower() not in STOPWORDS]


def history_query(repo, commit, present):
    """The query a commit gives with the files present at S, or None when it is skipped."""
    title = pr_title(commit)
    if (title is None or commit.author.endswith("[bot]") or SKIP_TITLE.search(commit.subject)
            or SKIP_TITLE.search(title) or len(content_words(title)) < 2):
        return None
    gold = sorted(f for f in commit.files if f in present and not NOT_GOLD.search(f))
    if not gold or len(gold) > MAX_GOLD:
        return None
    return Query(repo, "history", title, {f: 1 for f in gold}, source=commit.sha)


def history_queries(repo, mirror, snapshot, n):
    """The first n usable history queries after the snapshot, oldest first."""
    chain = first_parent_chain(mirror)
    if snapshot not in chain:
        sys.exit(f"{repo}: snapshot {snapshot} is not on the first-parent chain of HEAD")
    present = files_at(mirror, snapshot)
    later = reversed(load_commits(mirror, chain.index(snapshot)))
    queries = (history_query(repo, c, present) for c in later)
    return [q for q in queries if q][:n]


def find_snapshot(repo, mirror, n):
    """S = the newest first-parent commit with n usable history queries between it and HEAD."""
    chain = first_parent_chain(mirror)
    commits = load_commits(mirror, min(len(chain), 40 * n))
    for i in range(n, len(commits)):  # S = chain[i], after it commits[:i]
        present = files_at(mirror, chain[i])
        if sum(history_query(repo, c, present) is not None for c in commits[:i]) >= n:
            return chain[i]
    sys.exit(f"{repo}: fewer than {n} usable history queries in {len(commits)} commits")


# ---------------------------------------------------------------- hand-written queries

def hand_queries(repo):
    """(snapshot, queries) from the repository's query file; (None, []) when it has none."""
    path = QUERY_DIR / f"{repo}.jsonl"
    if not path.exists():
        return None, []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    snapshots = {r["snapshot"] for r in rows}
    if len(snapshots) != 1:
        sys.exit(f"{path}: expected one snapshot, found {sorted(snapshots)}")
    return snapshots.pop(), [Query(repo, r["kind"], r["query"], r["relevant"],
                                   targets=r.get("targets") or default_targets(r["relevant"]))
                             for r in rows]


def default_targets(relevant):
    """A query file without chunk targets: each relevant file is a target, any of its lines."""
    return [{"path": p, "grade": g} for p, g in relevant.items()]


def split(path=QUERY_DIR / "split.json"):
    """{repo: half} from the committed manifest (tune / held-out), {} without one."""
    if not path.exists():
        return {}
    halves = json.loads(path.read_text())["halves"]
    return {repo: half for half, repos in halves.items() for repo in repos}


# ---------------------------------------------------------------- clones and indexes

def mirror_dir(root, repo):
    return Path(root) / REPOS[repo].replace("/", "+") / "repo"


def prepare_clone(work, repo, mirror, snapshot):
    """A work tree at the snapshot whose only history is the snapshot's ancestry."""
    src = Path(work) / "src" / repo
    head = subprocess.run(["git", "-C", str(src), "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    if (src / ".git").exists() and head == snapshot:
        return src
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    git(src, "init", "-q")
    try:
        git(src, "fetch", "-q", "--no-tags", str(mirror), f"{snapshot}:refs/heads/snapshot")
    except subprocess.CalledProcessError:
        # a mirror with unreadable old objects (gson's): the snapshot alone, no history
        git(src, "fetch", "-q", "--depth", "1", "--no-tags", f"file://{Path(mirror).resolve()}",
            f"{snapshot}:refs/heads/snapshot")
    git(src, "checkout", "-q", "snapshot")
    return src


@functools.cache
def binary_hash(binary):
    return hashlib.sha256(Path(binary).read_bytes()).hexdigest()[:12]


def ensure_index(work, repo, src, snapshot, binary):
    """The index directory of this binary for the clone, built unless already built for S."""
    idx = Path(work) / "idx" / repo / binary_hash(binary)
    stamp = idx.with_suffix(".done")
    if stamp.exists() and stamp.read_text() == snapshot:
        return idx, 0.0
    shutil.rmtree(idx, ignore_errors=True)
    idx.mkdir(parents=True)
    t = time.perf_counter()
    subprocess.run([binary, "index", "--repo", str(src), "--index-dir", str(idx), "--quiet"],
                   check=True, capture_output=True)
    stamp.write_text(snapshot)
    return idx, time.perf_counter() - t


# ---------------------------------------------------------------- searching and metrics

def search(variant, src, idx, query, k):
    cmd = [variant.binary, "search", "--repo", str(src), "--index-dir", str(idx), "--json",
           "-k", str(k), "--tests", "include", query]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **variant.env})
    if p.returncode != 0:
        raise RuntimeError(f"{variant.name}: {query!r} exited {p.returncode}: {p.stderr[-500:]}")
    return json.loads(p.stdout)["results"]


def ranked_files(results):
    """Distinct result paths in order of first appearance."""
    return list(dict.fromkeys(r["path"] for r in results))


def reciprocal_rank(files, relevant):
    return next((1 / i for i, f in enumerate(files, 1) if f in relevant), 0.0)


def recall(files, relevant, k=CUTOFF):
    return sum(f in relevant for f in files[:k]) / len(relevant)


def ndcg(files, relevant, k=CUTOFF):
    def dcg(grades):
        return sum((2 ** g - 1) / math.log2(i + 1) for i, g in enumerate(grades, 1))
    ideal = dcg(sorted(relevant.values(), reverse=True)[:k])
    return dcg([relevant.get(f, 0) for f in files[:k]]) / ideal


def chunk_hits(target, result):
    """A result chunk hits a target when the paths match and, with a line span, lines overlap."""
    if result["path"] != target["path"]:
        return False
    lines = target.get("lines")
    return not lines or (result["start_line"] <= lines[1] and result["end_line"] >= lines[0])


def chunk_ndcg(results, targets, k=CUTOFF):
    """NDCG@k over the first k chunks (the peer's scorer): each chunk earns the grade of the best
    target it hits that no earlier chunk has hit (a target counts once), gains 2^g - 1."""
    def dcg(grades):
        return sum((2 ** g - 1) / math.log2(i + 1) for i, g in enumerate(grades, 1))
    ideal = dcg(sorted((t["grade"] for t in targets), reverse=True)[:k])
    hit, grades = set(), []
    for r in results[:k]:
        open_targets = [(t["grade"], i) for i, t in enumerate(targets)
                        if i not in hit and chunk_hits(t, r)]
        if open_targets:
            grade, i = max(open_targets)
            hit.add(i)
            grades.append(grade)
        else:
            grades.append(0)
    return dcg(grades) / ideal


def evaluate(query, files, results):
    return {"mrr": reciprocal_rank(files, query.relevant), "r@10": recall(files, query.relevant),
            "ndcg@10": ndcg(files, query.relevant),
            "chunk_ndcg@10": chunk_ndcg(results, query.targets or default_targets(query.relevant))}


def run_query(variant, src, idx, query, k):
    results = search(variant, src, idx, query.query, k)
    files = ranked_files(results)
    first = next((i for i, f in enumerate(files, 1) if f in query.relevant), None)
    query.results[variant.name] = {**evaluate(query, files, results), "first_relevant_rank": first,
                                   "chunks": len(results), "files": files[:20],
                                   "top": [[r["path"], r["start_line"], r["end_line"],
                                            r.get("relevance")] for r in results[:10]]}


# ---------------------------------------------------------------- aggregation

def groups(queries, repos):
    """(label, queries) for every repo x kind, every kind, every repo, each half of the split
    (by kind and all) and all queries."""
    kinds = [k for k in KINDS if any(q.kind == k for q in queries)]
    out = [(f"{r} {k}", [q for q in queries if q.repo == r and q.kind == k])
           for r in repos for k in kinds]
    out += [(f"all {k}", [q for q in queries if q.kind == k]) for k in kinds]
    out += [(f"{r} all", [q for q in queries if q.repo == r]) for r in repos]
    halves = split()
    for half in dict.fromkeys(halves[r] for r in repos if r in halves):
        inside = [q for q in queries if halves.get(q.repo) == half]
        out += [(f"{half} {k}", [q for q in inside if q.kind == k]) for k in kinds]
        out.append((f"{half} all", inside))
    out.append(("all", list(queries)))
    return [(label, qs) for label, qs in out if qs]


def bootstrap(diffs):
    rnd = random.Random(SEED)
    means = sorted(statistics.fmean(rnd.choices(diffs, k=len(diffs))) for _ in range(RESAMPLES))
    return means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def summarize(queries, repos, variants):
    base = variants[0].name
    summary = {}
    for label, qs in groups(queries, repos):
        row = {"n": len(qs)}
        for v in variants:
            row[v.name] = {m: statistics.fmean(q.results[v.name][m] for q in qs) for m in METRICS}
        for v in variants[1:]:
            row[f"{v.name}-{base}"] = {}
            for m in METRICS:
                diffs = [q.results[v.name][m] - q.results[base][m] for q in qs]
                lo, hi = bootstrap(diffs)
                row[f"{v.name}-{base}"][m] = {"diff": statistics.fmean(diffs), "ci95": [lo, hi]}
        summary[label] = row
    return summary


def print_summary(summary, variants):
    names = [v.name for v in variants]
    columns = [(m, n) for m in METRICS for n in names]
    print(f"{'group':<22}{'n':>5}" + "".join(f"{m[:9] + ' ' + n[:6]:>17}" for m, n in columns))
    for label, row in summary.items():
        print(f"{label:<22}{row['n']:>5}" + "".join(f"{row[n][m]:>17.3f}" for m, n in columns))
    for v in variants[1:]:
        key = f"{v.name}-{names[0]}"
        print(f"\n{key}: mean paired difference [95% bootstrap CI]")
        for label, row in summary.items():
            cells = "".join(f"  {m} {d['diff']:+.3f} [{d['ci95'][0]:+.3f},{d['ci95'][1]:+.3f}]"
                            for m, d in row[key].items())
            print(f"{label:<22}{row['n']:>5}{cells}")


# ---------------------------------------------------------------- timing

def timing(queries, variants, contexts):
    """p50/p90 whole-process wall time of 20 queries x 3 rounds, variants interleaved."""
    rnd = random.Random(SEED)
    sample = rnd.sample(queries, min(20, len(queries)))
    times = {v.name: [] for v in variants}
    for _ in range(3):
        for q in sample:
            for v in rnd.sample(variants, len(variants)):
                src, idx = contexts[(q.repo, v.name)]
                t = time.perf_counter()
                search(v, src, idx, q.query, CUTOFF)
                times[v.name].append(time.perf_counter() - t)
    return {name: {"p50_ms": 1000 * statistics.median(ts),
                   "p90_ms": 1000 * statistics.quantiles(ts, n=10)[-1]}
            for name, ts in times.items()}


# ---------------------------------------------------------------- main

def parse_variants(specs, envs):
    variants = []
    for spec in specs:
        name, _, binary = spec.partition("=")
        if not binary or not os.access(binary, os.X_OK):
            sys.exit(f"--variant {spec}: expected NAME=BINARY with an executable binary")
        variants.append(Variant(name, binary, {}))
    by_name = {v.name: v for v in variants}
    for spec in envs:
        name, _, assignment = spec.partition(":")
        key, eq, value = assignment.partition("=")
        if name not in by_name or not eq:
            sys.exit(f"--env {spec}: expected NAME:KEY=VALUE for a known variant")
        by_name[name].env[key] = value
    return variants


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="rust-analyzer,pytest,flask,express,zod",
                    help="comma-separated; 'tune' or 'held-out' for a half of split.json")
    ap.add_argument("--variant", action="append", required=True, metavar="NAME=BINARY")
    ap.add_argument("--env", action="append", default=[], metavar="NAME:KEY=VALUE")
    ap.add_argument("--queries", type=int, default=150, help="history queries per repository")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("-k", type=int, default=50, help="results asked for per query (max 50)")
    ap.add_argument("--jobs", type=int, default=2, help="searches run in parallel")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--work", default="/work/eval")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", help="write every per-query result and the summary as JSON")
    ap.add_argument("--share-index", action="store_true",
                    help="every variant searches the first variant's index (binaries that "
                         "differ only in searching: no re-index per build)")
    return ap.parse_args()


def repo_queries(repo, mirror, n, kinds):
    """(S, queries of the wanted kinds) for one repository."""
    snapshot, hand = hand_queries(repo)
    snapshot = snapshot or find_snapshot(repo, mirror, n)
    history = history_queries(repo, mirror, snapshot, n) if "history" in kinds else []
    return snapshot, history + [q for q in hand if q.kind in kinds]


def main():
    args = parse_args()
    started = time.perf_counter()
    kinds = args.kinds.split(",")
    halves = split()
    repos = [r for name in args.repos.split(",")
             for r in ([r for r, h in halves.items() if h == name] or [name])]
    variants = parse_variants(args.variant, args.env)
    snapshots, queries, contexts, index_secs = {}, [], {}, {}
    for repo in repos:
        mirror = mirror_dir(args.mirrors, repo)
        snapshots[repo], qs = repo_queries(repo, mirror, args.queries, kinds)
        src = prepare_clone(args.work, repo, mirror, snapshots[repo])
        for v in variants:  # one indexing process at a time
            builder = variants[0].binary if args.share_index else v.binary
            idx, secs = ensure_index(args.work, repo, src, snapshots[repo], builder)
            contexts[(repo, v.name)] = (src, idx)
            index_secs[f"{repo}/{v.name}"] = secs
        print(f"{repo}: S={snapshots[repo][:12]}, " + ", ".join(
            f"{k} {sum(q.kind == k for q in qs)}" for k in kinds), file=sys.stderr)
        queries += qs
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(run_query, v, *contexts[(q.repo, v.name)], q, args.k)
                for q in queries for v in variants]
        for job in jobs:
            job.result()
    summary = summarize(queries, repos, variants)
    print_summary(summary, variants)
    report = {"snapshots": snapshots, "variants": [vars(v) for v in variants],
              "index_seconds": index_secs, "summary": summary,
              "queries": [vars(q) for q in queries]}
    if args.timing:
        report["timing"] = timing(queries, variants, contexts)
        for name, t in report["timing"].items():
            print(f"timing {name}: p50 {t['p50_ms']:.0f} ms, p90 {t['p90_ms']:.0f} ms")
    report["seconds"] = time.perf_counter() - started
    print(f"\n{len(queries)} queries x {len(variants)} variants in {report['seconds']:.0f} s",
          file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
