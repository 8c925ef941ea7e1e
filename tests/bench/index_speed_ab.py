#!/usr/bin/env python3
"""In-process cold index A/B: builds of the `index_speed` example, interleaved.

Usage: index_speed_ab.py ROUNDS REPO NAME=BIN...
Each BIN is a release build of `cargo build --release -p tollgate-index --example index_speed`
(for instance one per allocator or per commit, copied aside). Each round runs every build once
(`--history --runs 1`, order reversed every other round, so neither always runs first) and reads
its `cold: N s` line. Prints per build the median, the minimum, and the median of its per-round
ratio to the first build: on a machine whose speed drifts, the paired ratio is what compares.
"""
import re
import statistics
import subprocess
import sys


def main() -> None:
    rounds, repo = int(sys.argv[1]), sys.argv[2]
    builds = [spec.split("=", 1) for spec in sys.argv[3:]]
    times = {name: [] for name, _ in builds}
    for r in range(rounds):
        for name, binary in builds if r % 2 == 0 else builds[::-1]:
            out = subprocess.run([binary, repo, "--history", "--runs", "1"], capture_output=True,
                                 text=True, check=True).stdout
            times[name].append(float(re.search(r"cold: ([0-9.]+) s", out).group(1)))
    first = builds[0][0]
    for name, _ in builds:
        ratios = [x / y for x, y in zip(times[name], times[first])]
        print(f"{name}: median {statistics.median(times[name]):.3f} s, min {min(times[name]):.3f} s, "
              f"paired ratio to {first} {statistics.median(ratios):.3f} "
              f"({' '.join(f'{x:.2f}' for x in times[name])})")


if __name__ == "__main__":
    main()
