#!/usr/bin/env python3
"""Interleaved A/B of whole-process wall time: python ab.py RUNS CMD_ARGS... -- BIN1 BIN2 ..."""
import subprocess, sys, time, statistics, random
runs = int(sys.argv[1]); sep = sys.argv.index('--')
args = sys.argv[2:sep]; bins = sys.argv[sep+1:]
times = {b: [] for b in bins}
for _ in range(3):
    for b in bins: subprocess.run([b] + args, capture_output=True)
for _ in range(runs):
    for b in random.sample(bins, len(bins)):
        t = time.perf_counter(); subprocess.run([b] + args, capture_output=True); times[b].append((time.perf_counter() - t) * 1000)
base = bins[0]
for b in bins:
    d = [x - y for x, y in zip(times[b], times[base])]
    rnd = random.Random(1)
    boots = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(2000))
    print(f"{b}: median {statistics.median(times[b]):.2f} ms, paired median diff vs {base} {statistics.median(d):+.2f} ms (95% CI {boots[50]:+.2f}..{boots[1950]:+.2f})")
