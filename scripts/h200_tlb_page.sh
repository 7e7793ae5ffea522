#!/usr/bin/env bash
# page.sh BIN OUT: walks per arena byte (bench/tlb_page), the xchase window cache, a tlb stage run.
set -u
b="$1"; o="$2/page"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
for st in 4096 65536 2097152; do
  t0=$(date +%s.%N)
  timeout 120 "$b/tlb_page" --target cuda --bytes 1073741824 --step $st >"$o/page-$st.txt" 2>&1
  echo "tlb_page step $st rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s: $(tail -1 "$o/page-$st.txt")" >>"$o/summary.txt"
done
t0=$(date +%s.%N)
timeout 60 "$b/tlb_page" --target cuda --bytes 8589934592 --step 2097152 >"$o/page-8g.txt" 2>&1
echo "tlb_page 8 GiB rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s: $(tail -1 "$o/page-8g.txt")" >>"$o/summary.txt"
# the window cache: the same chases on windows kept and fresh
timeout 60 "$b/xchase_curve" --target cuda --steps 16,23,2048,2304 32 2 34 32 2 >"$o/xcache.csv" 2>&1
t0=$(date +%s.%N)
timeout 120 "$b/gpuxray" discover --target cuda --only tlb --seed 1 -o "$o/tlb.json" >"$o/tlb.txt" 2>"$o/tlb.log"
echo "tlb stage rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
cat "$o/summary.txt" "$o/xcache.csv"; grep -E "^tlb" "$o/tlb.txt"
tar -C "$2" -czf "$2/page.tgz" page
