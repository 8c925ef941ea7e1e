#!/bin/bash
# reindex.sh REPO RUNS FILE BIN... : one-file re-index times, binaries interleaved. Each binary
# gets its own copy of REPO (cp -a, history included) and a cold index first; then, RUNS times,
# a comment line is appended to FILE in each copy and `BIN index --json` reports its
# `elapsed_ms`. Prints every run and each binary's median. The copies are removed at the end.
set -euo pipefail
repo=$1; runs=$2; file=$3; shift 3
work=$(mktemp -d /tmp/reindex.XXXXXX)
trap 'rm -rf "$work"' EXIT
i=0
for bin in "$@"; do
  cp -a "$repo" "$work/$i"
  "$bin" index --repo "$work/$i" --quiet >/dev/null 2>&1
  i=$((i + 1))
done
declare -A times
for run in $(seq "$runs"); do
  i=0
  for bin in "$@"; do
    echo "// reindex.sh run $run" >> "$work/$i/$file"
    ms=$("$bin" index --repo "$work/$i" --json 2>/dev/null | sed -n 's/.*"elapsed_ms": \([0-9]*\).*/\1/p')
    echo "$bin run $run: $ms ms (load $(cut -d' ' -f1 /proc/loadavg))"
    times[$i]="${times[$i]:-} $ms"
    i=$((i + 1))
  done
done
i=0
for bin in "$@"; do
  median=$(echo ${times[$i]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$bin median: $median ms (runs:${times[$i]})"
  i=$((i + 1))
done
