#!/usr/bin/env python3
"""Interleaved A/B of whole processes: python ab.py [--cpu] RUNS CMD_ARGS... -- BIN1 BIN2 ...

Each round runs every binary once, in a random order, with the same arguments; the first binary
is the baseline. Reports each binary's median and the paired median difference to the baseline
with a bootstrap 95% CI. By default the measure is wall time; --cpu measures the process's user +
system CPU time instead, which other load on the machine disturbs far less."""
import os, random, statistics, subprocess, sys, time

cpu = sys.argv[1] == "--cpu"
argv = sys.argv[2:] if cpu else sys.argv[1:]
runs = int(argv[0]); sep = argv.index('--')
args = argv[1:sep]; bins = argv[sep + 1:]


def measure(binary):
    start = time.perf_counter()
    proc = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    if cpu:
        return (usage.ru_utime + usage.ru_stime) * 1000
    return (time.perf_counter() - start) * 1000


times = {b: [] for b in bins}
for _ in range(3):
    for b in bins:
        measure(b)
for _ in range(runs):
    for b in random.sample(bins, len(bins)):
        times[b].append(measure(b))
base = bins[0]
unit = "ms CPU" if cpu else "ms"
for b in bins:
    d = [x - y for x, y in zip(times[b], times[base])]
    rnd = random.Random(1)
    boots = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(2000))
    print(f"{b}: median {statistics.median(times[b]):.2f} {unit}, paired median diff vs {base} "
          f"{statistics.median(d):+.2f} (95% CI {boots[50]:+.2f}..{boots[1950]:+.2f})")
