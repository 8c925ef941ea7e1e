#!/usr/bin/env python3
"""Knowledge-store benchmark: python memory_bench.py TOLLGATE_BIN [N_ENTRIES] [N_QUERIES] [N_PROCESSES]

Stores N_ENTRIES (default 100000) realistic entries (engineering notes over 8 threads, 0-3 tags,
metadata with priority/status/component) through the real code path: `tollgate mcp --tools
memory` over stdio, `store_context_batch` of 100 each (secrets masked, embedded by the built-in
hashed embedder, one transaction per batch). Then, for FTS, semantic and hybrid search, with and
without a thread filter:
  - in process: the `stats.execution_time_ms` the tool measures itself (`explain_query`), and the
    MCP round trip seen by this script;
  - whole process: `tollgate memory search QUERY --mode fts|semantic|hybrid` wall time, each a
    fresh process (open the store, embed, search, print).
Reports p50 and p90 of each, the store throughput and the store's size on disk. Deterministic
text (seeded); the machine's load is not controlled, so compare runs on the same machine."""
import json, os, random, statistics, subprocess, sys, tempfile, time

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
N_QUERIES = int(sys.argv[3]) if len(sys.argv) > 3 else 40
N_PROCESS = int(sys.argv[4]) if len(sys.argv) > 4 else 15
BATCH = 100

rnd = random.Random(19)
THREADS = ["auth", "billing", "search", "deploy", "infra", "frontend", "mobile", "data"]
COMPONENTS = ["api", "worker", "db", "cache", "queue", "ui", "cli", "sdk"]
TAGS = ["bug", "decision", "todo", "perf", "security", "flaky", "docs", "migration", "oncall", "review"]
SUBJECTS = ["the session token", "the invoice job", "the search index", "the deploy pipeline",
            "the retry policy", "the rate limiter", "the connection pool", "the feature flag",
            "the webhook handler", "the cache layer", "the migration script", "the login form",
            "the payment gateway", "the audit log", "the export task", "the schema validator"]
VERBS = ["times out when", "must be rotated after", "was rewritten because", "fails silently if",
         "needs a lock while", "is retried until", "should be batched when", "leaks memory after",
         "is skipped for", "logs too much during"]
CONDITIONS = ["the queue is full", "a tenant is suspended", "the replica lags", "the user logs out",
              "the nightly run starts", "a canary fails", "the region fails over", "traffic spikes",
              "the token expires", "the disk fills up", "a pull request is merged", "the cache is cold"]
FOLLOWUPS = ["We decided to keep it behind a flag.", "See the incident review for details.",
             "Owner: platform team.", "Benchmarks showed a 30% regression before the fix.",
             "Tests cover the happy path only.", "Revisit after the next release.",
             "The workaround is documented in the runbook.", "Customers reported it twice."]


def sentence():
    return f"{rnd.choice(SUBJECTS).capitalize()} {rnd.choice(VERBS)} {rnd.choice(CONDITIONS)}."


def entry(i):
    text = " ".join([sentence() for _ in range(rnd.randint(1, 3))] +
                    rnd.sample(FOLLOWUPS, rnd.randint(0, 2)))
    return {"thread_id": THREADS[i % len(THREADS)], "source": rnd.choice(["user", "agent"]),
            "text": f"{text} (note {i})", "tags": rnd.sample(TAGS, rnd.randint(0, 3)),
            "metadata": {"priority": rnd.randint(1, 10), "status": rnd.choice(["open", "done", "wontfix"]),
                         "component": rnd.choice(COMPONENTS), "ticket": f"T-{i}"}}


class Mcp:
    def __init__(self, repo):
        self.proc = subprocess.Popen([BIN, "mcp", "--repo", repo, "--tools", "memory"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def call(self, tool, arguments):
        reply = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = reply["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool}: {result}")
        return result["structuredContent"]


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def row(name, values):
    return f"| {name} | {pct(values, 50):.1f} | {pct(values, 90):.1f} |"


def main():
    repo = tempfile.mkdtemp(prefix="tollgate-memory-bench-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    mcp = Mcp(repo)
    started = time.perf_counter()
    for first in range(0, N, BATCH):
        batch = [entry(i) for i in range(first, min(N, first + BATCH))]
        result = mcp.call("store_context_batch", {"entries": batch})
        assert result["succeeded"] == len(batch), result
    store_s = time.perf_counter() - started
    queries = [f"{rnd.choice(SUBJECTS).split()[-1]} {rnd.choice(CONDITIONS).split()[-1]}"
               for _ in range(N_QUERIES)]
    lines = [f"{N} entries stored in {store_s:.1f} s ({N / store_s:.0f} entries/s) "
             f"through store_context_batch of {BATCH}.", "",
             "| query (limit 10) | p50 ms | p90 ms |", "|---|---|---|"]
    tools = [("FTS", "fts_search_context"), ("semantic", "semantic_search_context"),
             ("hybrid", "hybrid_search_context")]
    for label, tool in tools:
        for filtered in (False, True):
            inside, round_trip = [], []
            for q in queries:
                arguments = {"query": q, "limit": 10, "explain_query": True}
                if filtered:
                    arguments["thread_id"] = "billing"
                t = time.perf_counter()
                result = mcp.call(tool, arguments)
                round_trip.append((time.perf_counter() - t) * 1000)
                inside.append(result["stats"]["execution_time_ms"])
            name = label + (" + thread filter" if filtered else "")
            lines.append(row(f"{name}, in process", inside))
            lines.append(row(f"{name}, MCP round trip", round_trip))
    mcp.proc.stdin.close()
    mcp.proc.wait()
    for label, mode in [("FTS", "fts"), ("semantic", "semantic"), ("hybrid", "hybrid")]:
        walls = []
        for q in queries[:N_PROCESS]:
            t = time.perf_counter()
            subprocess.run([BIN, "memory", "--repo", repo, "search", q, "--mode", mode],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            walls.append((time.perf_counter() - t) * 1000)
        lines.append(row(f"{label}, whole `tollgate memory search` process", walls))
    db = os.path.join(repo, ".tollgate")
    size = sum(os.path.getsize(os.path.join(db, f)) for f in os.listdir(db))
    lines.append("")
    lines.append(f"Store on disk (`.tollgate/`, database + WAL): {size / 1_048_576:.1f} MiB "
                 f"({size / N:.0f} bytes per entry).")
    print("\n".join(lines))


main()
