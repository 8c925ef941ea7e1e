#!/bin/bash
# cold_index.sh REPO RUNS BIN[:ARGS]... : interleaved cold `tollgate index` runs (fresh index dir
# each run): wall and CPU (user + system) seconds and the load average before each, then each
# spec's medians.
repo=$1; runs=$2; shift 2
declare -A walls cpus
for i in $(seq $runs); do
  for spec in "$@"; do
    bin=${spec%%:*}; extra=""; [[ $spec == *:* ]] && extra=${spec#*:}
    d=/tmp/cold-idx-$$; rm -rf $d
    load=$(cut -d' ' -f1 /proc/loadavg)
    read -r wall user sys < <(/usr/bin/time -f "%e %U %S" $bin index --repo $repo --index-dir $d --quiet $extra 2>&1 >/dev/null | tail -1)
    cpu=$(echo "$user + $sys" | bc)
    echo "$spec wall $wall s, cpu $cpu s (load $load)"
    walls[$spec]="${walls[$spec]:-} $wall"; cpus[$spec]="${cpus[$spec]:-} $cpu"
    rm -rf $d
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for spec in "$@"; do
  echo "$spec median wall $(echo ${walls[$spec]} | median) s, cpu $(echo ${cpus[$spec]} | median) s (walls:${walls[$spec]})"
done
