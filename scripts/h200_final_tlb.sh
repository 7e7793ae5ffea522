#!/usr/bin/env bash
# final.sh BIN OUT [TLBRUNS]: the tlb stage TLBRUNS times (seeds 1..), then one full
# discovery, every progress line timestamped.
set -u
b="$1"; o="$2/final"; runs="${3:-3}"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for r in $(seq 1 "$runs"); do
  t0=$(date +%s.%N)
  timeout 120 "$b/gpuxray" discover --target cuda --only tlb --seed $r --progress -o "$o/tlb$r.json" 2>&1 >"$o/tlb$r.txt" | ts >"$o/tlb$r.log"
  echo "tlb run $r rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "^tlb" "$o/tlb$r.txt" >>"$o/summary.txt"
done
t0=$(date +%s.%N)
timeout 200 "$b/gpuxray" discover --target cuda --seed 1 --progress -o "$o/disc.json" 2>&1 >"$o/disc.txt" | ts >"$o/disc.log"
echo "discover rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc.txt" >>"$o/summary.txt"
cat "$o/summary.txt" | cut -c1-200
tar -C "$2" -czf "$2/final.tgz" final
