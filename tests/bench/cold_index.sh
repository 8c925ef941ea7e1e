#!/bin/bash
# cold_index.sh REPO RUNS BIN[:ARGS]... : interleaved cold `tollgate index` wall times (fresh index dir each run)
repo=$1; runs=$2; shift 2
for i in $(seq $runs); do
  for spec in "$@"; do
    bin=${spec%%:*}; extra=""; [[ $spec == *:* ]] && extra=${spec#*:}
    d=/tmp/cold-idx-$$; rm -rf $d
    s=$(date +%s.%N); $bin index --repo $repo --index-dir $d --quiet $extra >/dev/null 2>&1; e=$(date +%s.%N)
    echo "$spec $(echo "$e - $s" | bc)"
    rm -rf $d
  done
done
