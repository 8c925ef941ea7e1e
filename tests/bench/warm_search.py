#!/usr/bin/env python3
"""Warm `tollgate search` as whole processes, binaries interleaved.

Usage: warm_search.py REPO ROUNDS NAME=BIN:INDEX_DIR...
Each binary searches its own index (built beforehand with `BIN index --repo REPO --index-dir
INDEX_DIR`), ten fixed queries per round at `-k 10`, every query run by each binary in turn.
Prints p50 and p90 of the wall times per binary.
"""
import statistics
import subprocess
import sys
import time

QUERIES = ["hover", "inlay hints", "goto definition", "Semantics", "trait solver",
           "macro expansion", "diagnostics", "completion of fields", "rename symbol", "syntax tree"]


def main() -> None:
    repo, rounds = sys.argv[1], int(sys.argv[2])
    variants = []
    for spec in sys.argv[3:]:
        name, rest = spec.split("=", 1)
        binary, index_dir = rest.rsplit(":", 1)
        variants.append((name, binary, index_dir))
    times = {name: [] for name, _, _ in variants}
    for _ in range(rounds):
        for query in QUERIES:
            for name, binary, index_dir in variants:
                start = time.perf_counter()
                subprocess.run([binary, "search", query, "--repo", repo, "--index-dir", index_dir,
                                "-k", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True)
                times[name].append((time.perf_counter() - start) * 1000)
    for name, values in times.items():
        values.sort()
        print(f"{name}: p50 {statistics.median(values):.1f} ms, "
              f"p90 {values[int(len(values) * 0.9)]:.1f} ms, n {len(values)}")


if __name__ == "__main__":
    main()
