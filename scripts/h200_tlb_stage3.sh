#!/usr/bin/env bash
# stage3.sh BIN OUT: the tlb stage three times (seeds 1-3), then a few curve points again.
set -u
b="$1"; o="$2/stage3"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for r in 1 2 3; do
  t0=$(date +%s.%N)
  timeout 120 "$b/gpuxray" discover --target cuda --only tlb --seed $r --progress -o "$o/tlb$r.json" 2>&1 >"$o/tlb$r.txt" | ts >"$o/tlb$r.log"
  echo "run $r rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "^tlb" "$o/tlb$r.txt" >>"$o/summary.txt"
done
timeout 60 "$b/xchase_curve" --target cuda --steps 16,23,2048,2176,2304,8192,9216 32 >"$o/check.csv" 2>&1
cat "$o/summary.txt" "$o/check.csv"
tar -C "$2" -czf "$2/stage3.tgz" stage3
