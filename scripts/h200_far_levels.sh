#!/usr/bin/env bash
# h200_far_levels.sh BIN OUT N: N discoveries of the levels stage alone (seeds 1..N, --data
# kept: the far-stream deltas), then one whole discovery (seed N+1), every progress line
# timestamped. Outputs under OUT/farlv, and OUT/farlv.tgz.
set -u
b="$1"; o="$2/farlv"; n="${3:-5}"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for r in $(seq 1 "$n"); do
  timeout 60 "$b/gpuxray" discover --target cuda --seed $r --only levels --progress \
    --data "$o/lv$r" -o "$o/lv$r.json" 2>&1 >"$o/lv$r.txt" | ts >"$o/lv$r.log"
  grep -h "back to back" "$o/lv$r.log" >>"$o/summary.txt"
  grep -E "^l2.latency_cycles" "$o/lv$r.txt" | cut -c1-60 >>"$o/summary.txt"
done
r=$((n + 1)); t0=$(date +%s.%N)
timeout 150 "$b/gpuxray" discover --target cuda --seed $r --progress --data "$o/data$r" \
  -o "$o/disc$r.json" 2>&1 >"$o/disc$r.txt" | ts >"$o/disc$r.log"
echo "discover seed $r: rc ${PIPESTATUS[0]} $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc$r.txt" >>"$o/summary.txt"
grep -E "^(l2\.|memory)" "$o/disc$r.txt" | cut -c1-110 >>"$o/summary.txt"
grep -h "back to back" "$o/disc$r.log" >>"$o/summary.txt"
cat "$o/summary.txt"
tar -C "$2" -czf "$2/farlv.tgz" farlv
