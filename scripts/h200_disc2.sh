#!/usr/bin/env bash
# disc2.sh BIN OUT: two whole discoveries (seeds 1, 2), every progress line timestamped.
set -u
b="$1"; o="$2/disc2"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for r in 1 2; do
  t0=$(date +%s.%N)
  timeout 150 "$b/gpuxray" discover --target cuda --seed $r --progress -o "$o/disc$r.json" 2>&1 >"$o/disc$r.txt" | ts >"$o/disc$r.log"
  echo "discover seed $r: $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc$r.txt" >>"$o/summary.txt"
  grep -E "^(l2\.|tlb\.levels\[.\] |tlb.translation|memory)" "$o/disc$r.txt" | cut -c1-110 >>"$o/summary.txt"
done
cat "$o/summary.txt"
tar -C "$2" -czf "$2/disc2.tgz" disc2
