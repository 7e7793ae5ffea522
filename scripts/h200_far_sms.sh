#!/usr/bin/env bash
# h200_far_sms.sh BIN OUT: three whole discoveries (seeds 1-3, --data kept, every progress line
# timestamped), then hash_loop with fingerprints over 16, 32 and 64 SMs (slice classes resolved
# per SM count). Outputs under OUT/farsms, and OUT/farsms.tgz.
set -u
b="$1"; o="$2/farsms"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for r in 1 2 3; do
  t0=$(date +%s.%N)
  timeout 120 "$b/gpuxray" discover --target cuda --seed $r --progress --data "$o/data$r" \
    -o "$o/disc$r.json" 2>&1 >"$o/disc$r.txt" | ts >"$o/disc$r.log"
  echo "discover seed $r: rc ${PIPESTATUS[0]} $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc$r.txt" >>"$o/summary.txt"
  grep -E "^(l2\.|memory)" "$o/disc$r.txt" | cut -c1-110 >>"$o/summary.txt"
  grep -h "back to back" "$o/disc$r.log" >>"$o/summary.txt"
done
for s in 16 32 64; do
  t0=$(date +%s.%N)
  timeout 100 "$b/hash_loop" --target cuda --pages 2 --sms $s -o "$o/loop$s.csv" >"$o/loop$s.txt" 2>&1
  echo "hash_loop --sms $s: rc $? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "learned|cost|prediction =|bar" "$o/loop$s.txt" >>"$o/summary.txt"
done
cat "$o/summary.txt"
tar -C "$2" -czf "$2/farsms.tgz" farsms
