#!/usr/bin/env bash
# diag.sh BIN OUT: per-chase overhead of the xchase primitive, the L2 TLB's sharing around
# SM 48 again, and a full discovery with a timestamp on every progress line.
set -u
b="$1"; o="$2/diag"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
S=$(seq -s, 2 41)
for st in 34 6 1024; do
  t0=$(date +%s.%N); "$b/xchase_curve" --target cuda --steps "$S" $st >"$o/small-$st.csv" 2>&1
  echo "40 chases of 2-41 pages at $st MiB: $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
done
t0=$(date +%s.%N); "$b/xchase_curve" --target cuda --steps 2 34 >/dev/null 2>&1
echo "one process, one chase: $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
for sm in 1 46 47 48 49 50 96 97; do
  "$b/xchase_curve" --target cuda --steps 1536 --thrash-sm $sm --thrash-steps 8192 --thrash-stride 32 32 | tail -n +2 >>"$o/l2.csv" 2>>"$o/l2.err"
done
t0=$(date +%s.%N)
timeout 150 "$b/gpuxray" discover --target cuda --seed 1 --progress -o "$o/disc.json" 2>&1 >"$o/disc.txt" | ts >"$o/disc.log"
echo "discover rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
cat "$o/summary.txt" "$o/l2.csv"; grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc.txt"
tar -C "$2" -czf "$2/diag.tgz" diag
