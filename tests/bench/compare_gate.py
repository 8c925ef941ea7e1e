#!/usr/bin/env python3
"""Old vs new gate on the same real commits (BENCHMARKS.md, "Findings on real history"): each
commit is reviewed against its first parent by both binaries with
`tollgate review --base P --head C`. Paired bootstrap CIs over commits.

Usage: compare_gate.py OLD_BIN NEW_BIN REPO SHAS_FILE"""
import json, subprocess, sys, random, re, statistics, time

old_bin, new_bin, repo, shas_file = sys.argv[1:5]
shas = [l.split()[0] for l in open(shas_file) if l.strip()]

NON_SURFACE = re.compile(r'(^|/)\.|(^|/)(tests?|__tests__|spec|e2e|benches|benchmarks?|bench|examples?|docs?|scripts?|tools|fixtures|testdata|xtask)/|\.(config|conf|setup)\.|(^|/)(build\.rs|setup\.py|conftest\.py|noxfile\.py)$|_test\.go$|\.test\.|\.spec\.|(^|/)test_[^/]*\.py$')

def review(binary, sha):
    parent = subprocess.run(['git', '-C', repo, 'rev-parse', sha + '^1'], capture_output=True, text=True).stdout.strip()
    t = time.perf_counter()
    p = subprocess.run([binary, 'review', '--repo', repo, '--base', parent, '--head', sha, '--quiet',
                        '--max-findings', '100000', '--format', 'json'], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        return None
    d = json.loads(p.stdout)
    f = d['findings']
    return {
        'fail': d['should_fail'],
        'reasons': d['fail_reasons'],
        'high': sum(1 for x in f if x['severity'] in ('HIGH', 'CRITICAL')),
        'n': len(f),
        'tg002_off_surface': sum(1 for x in f if x['rule_id'] == 'TG002' and NON_SURFACE.search(x['location']['file'])),
        'tg002': sum(1 for x in f if x['rule_id'] == 'TG002'),
        'secs': dt,
    }

rows = []
for sha in shas:
    o, n = review(old_bin, sha), review(new_bin, sha)
    if o and n:
        rows.append((sha, o, n))

def boot(diffs, iters=5000, seed=1):
    rnd = random.Random(seed)
    means = sorted(statistics.fmean(rnd.choices(diffs, k=len(diffs))) for _ in range(iters))
    return statistics.fmean(diffs), means[int(0.025 * iters)], means[int(0.975 * iters)]

k = len(rows)
out = {'repo': repo, 'commits': k}
for key in ('fail', 'high', 'n', 'tg002', 'tg002_off_surface'):
    o = [float(r[1][key]) for r in rows]
    n = [float(r[2][key]) for r in rows]
    mean, lo, hi = boot([b - a for a, b in zip(o, n)])
    out[key] = {'old_per_commit': round(statistics.fmean(o), 3), 'new_per_commit': round(statistics.fmean(n), 3),
                'diff': round(mean, 3), 'ci95': [round(lo, 3), round(hi, 3)],
                'old_total': int(sum(o)), 'new_total': int(sum(n))}
out['new_failures'] = [(r[0][:10], r[2]['reasons'][:2]) for r in rows if r[2]['fail']]
out['old_failures'] = [(r[0][:10], r[1]['reasons'][:1]) for r in rows if r[1]['fail']]
out['median_review_secs'] = {'old': round(statistics.median(r[1]['secs'] for r in rows), 4),
                             'new': round(statistics.median(r[2]['secs'] for r in rows), 4)}
print(json.dumps(out, indent=1))
