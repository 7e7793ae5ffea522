#!/usr/bin/env bash
# share.sh BIN OUT: SM x SM interference for the H200's 2nd and 3rd TLB structures.
set -u
b="$1"; o="$2/share"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
t0=$(date +%s)
# no thrash references
timeout 60 "$b/xchase_curve" --target cuda --steps 16,1536,6144 32 >"$o/ref.csv" 2>"$o/ref.err"
for sm in 1 2 3 4 5 7 8 9 15 16 17 18 24 31 32 33 48 64 65 66 100 131; do
  timeout 30 "$b/xchase_curve" --target cuda --steps 1536 --thrash-sm $sm --thrash-steps 8192 --thrash-stride 32 32 | tail -n +2 >>"$o/l2.csv" 2>>"$o/l2.err"
  timeout 30 "$b/xchase_curve" --target cuda --steps 6144 --thrash-sm $sm --thrash-steps 16384 --thrash-stride 32 32 | tail -n +2 >>"$o/l3.csv" 2>>"$o/l3.err"
  timeout 30 "$b/xchase_curve" --target cuda --steps 12 --thrash-sm $sm --thrash-steps 64 --thrash-stride 34 34 | tail -n +2 >>"$o/l1.csv" 2>>"$o/l1.err"
done
echo "share $(($(date +%s) - t0)) s" >"$o/summary.txt"
# the second level's knee again and the 6 MiB curve (entry copies), a third run of the curves
t0=$(date +%s)
timeout 120 "$b/xchase_curve" --target cuda --steps 2,16,23,512,1448,2048,2176,2304,4096,5793,8192,9216,11585,16384 2 6 32 34 64 96 192 1024 >"$o/curves3.csv" 2>"$o/curves3.err"
echo "curves3 rc=$? $(($(date +%s) - t0)) s" >>"$o/summary.txt"
cat "$o/summary.txt"; cat "$o/ref.csv"; cat "$o/l1.csv" "$o/l2.csv" "$o/l3.csv"
