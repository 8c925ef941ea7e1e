#!/usr/bin/env python3
"""Offline test of file rankings learned from a repository's own past commits (issue 17).

Question: does evidence learned from the commits the history index already reads (the newest
3,000 at the snapshot S, nothing after it) tell which files a PR title will change, beyond the
three arms `tollgate search` fuses (lexical chunks, vectors, best matching past commit per file)?

Method
------
`dump` runs `tollgate search --json --explain -k 100 --tests include` for every history query of
a `search_eval.py` result file (the queries and gold sets come from there) and keeps, per query,
the distinct files in ranked order with their score parts. `eval` learns, per repository, from
`git log --date-order -n 3000` of the evaluation clone at S (WORK/src/<repo>: the commits the
history indexer reads, changed paths against the first parent, commits of more than 30 files
left out as the indexer's ranking does) four models of "title words -> changed files":

- pmi:     sum over the title's words w of log(P(f|w) / P(f)), Dirichlet-smoothed (mu = 1), for
           the file, its directory (x0.5) and its crate or top directory (x0.25): a word-file
           association with the file prior that a plain vote lacks.
- ibm1:    IBM model 1 translation probabilities t(f|w) (EM, 8 rounds, a NULL word), a file
           scored by sum_w log((1 - 0.1) t(f|w) + 0.1 P(f)).
- profile: every past message that touched a file, concatenated into one BM25 document per
           file (k1 1.2, b 0.75): long histories of central files are length-normalised.
- knn:     the 100 past commits most like the title (BM25 over messages), each voting for its
           files with (relative score)^2 / sqrt(files), divided by the file's commit count^alpha.
- central: the base score divided by 1 + g * log(1 + commits touching the file).

Each is tried alone (ranking the base's top 100), multiplied into the base score, and fused
with the base by reciprocal rank. Words: the CLI's tokenizer in spirit (identifiers whole and
split, lowercased, stop words out), stemmed and without change boilerplate as `path-words`
does. The report gives history MRR per repository, paired bootstrap 95 % CIs against the base
(2,000 resamples, fixed seed) and, per model, "oracle-max": the mean of the better of base and
model for each query, an upper bound for any way of combining the two.

Usage
-----
  python3 tests/bench/history_models.py dump --binary BIN --result RESULT.json \\
      --index-dir-name HASH --repos rust-analyzer,pytest,flask --out feats.json
  python3 tests/bench/history_models.py eval --feats feats.json [--work /work/eval]
"""
import argparse
import collections
import concurrent.futures
import json
import math
import random
import re
import statistics
import subprocess
from pathlib import Path

DEPTH = 3000
MAX_FILES = 30
RESAMPLES = 2000
SEED = 20240601
STOP = set("a an and are as at be by for from if in into is it of on or that the this to was "
           "with".split())
BOILERPLATE = set("fix add remove support use allow make don not dont when handle improve update "
                  "change instead properly correctly issue bug new".split())
MERGE_PR = re.compile(r"^Merge pull request #\d+ from ")


# ---------------------------------------------------------------- words and commits

def stem(w):
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[:-len(suffix)]
    return w


def tokens(text):
    out = []
    for w in re.findall(r"[A-Za-z0-9_]+", text):
        w = w.strip("_")
        if not w:
            continue
        parts = [p.lower() for p in re.findall(
            r"[A-Z]+(?=[A-Z][a-z]|\b|[0-9_])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", w)]
        out.append(w.lower())
        if len(parts) > 1:
            out += parts
    return [t for t in out if t not in STOP]


def words(text):
    return sorted({stem(t) for t in tokens(text)
                   if len(t) > 2 and not t.isdigit() and stem(t) not in BOILERPLATE})


def past_commits(src):
    """The newest DEPTH commits at S in date order with the files each changed."""
    out = subprocess.run(
        ["git", "-C", str(src), "log", "--date-order", f"-n{DEPTH}", "--name-only",
         "--diff-merges=first-parent", "--no-renames", "--format=%x00%B%x1e"],
        check=True, capture_output=True, text=True).stdout
    commits = []
    for record in out.split("\0")[1:]:
        message, _, names = record.partition("\x1e")
        files = [n for n in names.split("\n") if n]
        if files and len(files) <= MAX_FILES:
            commits.append((message.strip(), files))
    return commits


def crate_of(f):
    p = f.split("/")
    if len(p) >= 3 and p[0] in ("crates", "lib", "src", "packages"):
        return "/".join(p[:2])
    return p[0] if len(p) > 1 else ""


def dir_of(f):
    return f.rsplit("/", 1)[0] if "/" in f else ""


# ---------------------------------------------------------------- models

class Pmi:
    def __init__(self, commits, weights=(1.0, 0.5, 0.25), mu=1.0):
        self.weights, self.mu = weights, mu
        self.n = 0
        self.df = collections.Counter()
        self.cf = collections.Counter()
        self.cwf = collections.defaultdict(collections.Counter)
        for message, files in commits:
            ws = words(message)
            if not ws:
                continue
            self.n += 1
            keys = {k for f in files for k in (("f", f), ("d", dir_of(f)), ("c", crate_of(f)))}
            for k in keys:
                self.cf[k] += 1
            for w in ws:
                self.df[w] += 1
                for k in keys:
                    self.cwf[w][k] += 1

    def score(self, query, paths):
        ws = [w for w in words(query) if self.df[w]]
        out = {}
        for f in paths:
            s = 0.0
            for kind, weight, key in zip("fdc", self.weights, (f, dir_of(f), crate_of(f))):
                k = (kind, key)
                pf = (self.cf[k] + 0.5) / (self.n + 1)
                for w in ws:
                    s += weight * math.log((self.cwf[w][k] + self.mu * pf)
                                           / ((self.df[w] + self.mu) * pf))
            out[f] = s / max(len(ws), 1)
        return out


class Ibm1:
    def __init__(self, commits, rounds=8, lam=0.1):
        data = [(words(m) + ["<null>"], fs) for m, fs in commits if words(m)]
        vocab = {f for _, fs in data for f in fs}
        t = collections.defaultdict(lambda: 1.0 / len(vocab))
        for _ in range(rounds):
            count, total = collections.Counter(), collections.Counter()
            for ws, fs in data:
                for f in fs:
                    z = sum(t[(w, f)] for w in ws)
                    for w in ws:
                        p = t[(w, f)] / z
                        count[(w, f)] += p
                        total[w] += p
            t = collections.defaultdict(float, {k: v / total[k[0]] for k, v in count.items()})
        self.t, self.lam = t, lam
        self.known = {w for ws, _ in data for w in ws}
        self.cf = collections.Counter(f for _, fs in data for f in fs)
        self.n = len(data)

    def score(self, query, paths):
        ws = [w for w in words(query) if w in self.known]
        out = {}
        for f in paths:
            pf = (self.cf[f] + 0.5) / (self.n * 5)
            out[f] = sum(math.log((1 - self.lam) * self.t[(w, f)] + self.lam * pf)
                         for w in ws) / max(len(ws), 1)
        return out


class Profile:
    def __init__(self, commits, k1=1.2, b=0.75):
        self.docs = collections.defaultdict(collections.Counter)
        for message, files in commits:
            for f in files:
                for w in words(message):
                    self.docs[f][w] += 1
        self.k1, self.b, self.n = k1, b, len(self.docs)
        self.len = {f: sum(d.values()) for f, d in self.docs.items()}
        self.avg = sum(self.len.values()) / max(self.n, 1)
        self.df = collections.Counter(w for d in self.docs.values() for w in d)

    def score(self, query, paths):
        ws = words(query)
        out = {}
        for f in paths:
            d, s = self.docs.get(f, {}), 0.0
            for w in ws:
                n = d.get(w, 0)
                if n:
                    idf = math.log(1 + (self.n - self.df[w] + 0.5) / (self.df[w] + 0.5))
                    s += idf * n * (self.k1 + 1) / (
                        n + self.k1 * (1 - self.b + self.b * self.len[f] / self.avg))
            out[f] = s
        return out


class Knn:
    def __init__(self, commits, k=100, power=2.0, alpha=0.0):
        self.commits, self.k, self.power, self.alpha = commits, k, power, alpha
        docs = [collections.Counter(tokens(m)) for m, _ in commits]
        self.len = [sum(d.values()) for d in docs]
        self.avg = sum(self.len) / len(self.len)
        self.df = collections.Counter(t for d in docs for t in d)
        self.post = collections.defaultdict(list)
        for i, d in enumerate(docs):
            for t, n in d.items():
                self.post[t].append((i, n))
        self.cf = collections.Counter(f for _, fs in commits for f in fs)

    def score(self, query, paths):
        sc = collections.Counter()
        n_docs = len(self.commits)
        for t in set(tokens(query)):
            idf = math.log(1 + (n_docs - self.df[t] + 0.5) / (self.df[t] + 0.5))
            for i, n in self.post.get(t, ()):
                sc[i] += idf * n * 2.2 / (n + 1.2 * (0.25 + 0.75 * self.len[i] / self.avg))
        votes = collections.Counter()
        top = sc.most_common(self.k)
        for i, s in top:
            files = self.commits[i][1]
            for f in files:
                votes[f] += (s / top[0][1]) ** self.power / math.sqrt(len(files)) \
                    / self.cf[f] ** self.alpha
        return {f: votes.get(f, 0.0) for f in paths}


# ---------------------------------------------------------------- evaluation

def ranks(scores):
    order = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return {f: i for i, (f, _) in enumerate(order, 1)}


def reciprocal_ranks(rows, scorer):
    out = []
    for r in rows:
        rank = ranks(scorer(r))
        out.append(max((1 / rank[f] for f in r["relevant"] if f in rank), default=0.0))
    return out


def paired(a, b):
    d = [y - x for x, y in zip(a, b)]
    rnd = random.Random(SEED)
    means = sorted(statistics.fmean(rnd.choices(d, k=len(d))) for _ in range(RESAMPLES))
    return statistics.fmean(d), means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def base(r):
    return {f["path"]: f["fs"] for f in r["files"]}


def variants(name, model_score):
    """The ways a model's scores meet the base: alone, multiplied in, fused by rank."""
    def alone(r):
        return model_score(r)

    def times(weight, kind):
        def s(r):
            b, m = base(r), model_score(r)
            if kind == "exp":
                top = max(m.values(), default=0.0)
                return {f: v * math.exp(weight * (m[f] - top)) for f, v in b.items()}
            top = max(m.values(), default=0.0) or 1.0
            return {f: v * (1 + weight * m[f] / top) for f, v in b.items()}
        return s

    def fused(weight):
        def s(r):
            b, m = base(r), model_score(r)
            rb, rm = ranks(b), ranks(m)
            return {f: 1 / (10 + rb[f]) + weight / (10 + rm[f]) for f in b}
        return s

    kind = "lin" if name in ("profile", "knn") else "exp"
    out = [(f"{name} alone", alone)]
    out += [(f"{name} x{kind}({w})", times(w, kind)) for w in (0.05, 0.1, 0.2, 0.4)]
    out += [(f"{name} rrf({w})", fused(w)) for w in (0.2, 0.5)]
    return out


def central(models):
    def make(g):
        def s(r):
            cf = models[r["repo"]]["knn"].cf
            return {f: v / (1 + g * math.log1p(cf[f])) for f, v in base(r).items()}
        return s
    return [(f"central penalty g={g}", make(g)) for g in (0.05, 0.1, 0.2)]


def cmd_eval(args):
    rows = json.load(open(args.feats))
    repos = sorted({r["repo"] for r in rows}, key=[r["repo"] for r in rows].index)
    models = {}
    for repo in repos:
        commits = past_commits(Path(args.work) / "src" / repo)
        models[repo] = {"pmi": Pmi(commits), "ibm1": Ibm1(commits), "profile": Profile(commits),
                        "knn": Knn(commits)}
    cache = {}

    def model_score(name):
        def s(r):
            key = (name, r["repo"], r["query"])
            if key not in cache:
                cache[key] = models[r["repo"]][name].score(
                    r["query"], [f["path"] for f in r["files"]])
            return cache[key]
        return s

    by_repo = {repo: [r for r in rows if r["repo"] == repo] for repo in repos}
    base_rr = {repo: reciprocal_ranks(by_repo[repo], base) for repo in repos}
    print("history MRR of the base's top 100 re-ranked; paired difference against base [95% CI]")
    print(f"{'variant':28}" + "".join(f"{repo:>34}" for repo in repos))
    print(f"{'base':28}" + "".join(f"{statistics.fmean(base_rr[repo]):>34.3f}" for repo in repos))
    tried = central(models)
    for name in ("pmi", "ibm1", "profile", "knn"):
        tried += variants(name, model_score(name))
    for label, scorer in tried:
        cells = []
        for repo in repos:
            rr = reciprocal_ranks(by_repo[repo], scorer)
            d, lo, hi = paired(base_rr[repo], rr)
            cells.append(f"{statistics.fmean(rr):.3f} {d:+.3f} [{lo:+.3f},{hi:+.3f}]")
        print(f"{label:28}" + "".join(f"{c:>34}" for c in cells))
    print("oracle-max (per query the better of base and model alone)")
    for name in ("pmi", "ibm1", "profile", "knn", "all four"):
        cells = []
        for repo in repos:
            names = ("pmi", "ibm1", "profile", "knn") if name == "all four" else (name,)
            each = [reciprocal_ranks(by_repo[repo], model_score(n)) for n in names]
            best = [max(vals) for vals in zip(base_rr[repo], *each)]
            cells.append(f"{statistics.fmean(best):.3f}")
        print(f"{name:28}" + "".join(f"{c:>34}" for c in cells))


# ---------------------------------------------------------------- dump

def cmd_dump(args):
    queries = [q for q in json.load(open(args.result))["queries"]
               if q["repo"] in args.repos.split(",") and q["kind"] == "history"]

    def run(q):
        repo = q["repo"]
        p = subprocess.run(
            [args.binary, "search", "--repo", f"{args.work}/src/{repo}", "--index-dir",
             f"{args.work}/idx/{repo}/{args.index_dir_name}", "--json", "--explain", "-k", "100",
             "--tests", "include", q["query"]], capture_output=True, text=True, check=True)
        files, seen = [], set()
        for hit in json.loads(p.stdout)["results"]:
            if hit["path"] in seen:
                continue
            seen.add(hit["path"])
            x = hit["explain"]
            files.append({"path": hit["path"], "fs": x["file_score"], "cls": x["file_class"],
                          "ev": {e["arm"]: (e["rank"], e["weighted"]) for e in x["evidence"]}})
        return {"repo": repo, "query": q["query"], "relevant": q["relevant"], "files": files}

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        rows = list(ex.map(run, queries))
    json.dump(rows, open(args.out, "w"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--binary", required=True)
    d.add_argument("--result", required=True, help="a search_eval.py --out file")
    d.add_argument("--index-dir-name", required=True, help="WORK/idx/<repo>/<this>")
    d.add_argument("--repos", default="rust-analyzer,pytest,flask")
    d.add_argument("--out", required=True)
    d.add_argument("--work", default="/work/eval")
    e = sub.add_parser("eval")
    e.add_argument("--feats", required=True)
    e.add_argument("--work", default="/work/eval")
    args = ap.parse_args()
    (cmd_dump if args.cmd == "dump" else cmd_eval)(args)


if __name__ == "__main__":
    main()
