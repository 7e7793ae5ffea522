#!/usr/bin/env bash
# h200_tlb_curves.sh - the tlb stage (RUNS times, raw chases kept) and the
# raw translation-chase curves of bench/xchase_curve on a CUDA GPU: coarse
# (strides 2, 6, 32, 34, 64, 96, 128, 512, 1024 MiB; 2..32768 pages on a
# sqrt(2) grid) and fine around the second level's knee (32, 34, 96, 192
# MiB; 1024..16384 pages). Output: OUT/tlb/ (per run the stage table, log,
# profile and data/; curves.csv, fine.csv, summary.txt, gpu.txt) and
# OUT/tlb.tgz with all of it.
# Usage: scripts/h200_tlb_curves.sh BIN_DIR OUT [RUNS]
#   BIN_DIR holds a CUDA build's gpuxray and xchase_curve.
set -u
bin="${1:?usage: h200_tlb_curves.sh BIN_DIR OUT [RUNS]}"
out="${2:?usage: h200_tlb_curves.sh BIN_DIR OUT [RUNS]}"
runs="${3:-2}"
w="$out/tlb"
mkdir -p "$w"
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total \
        --format=csv 2>&1
    uptime
} >"$w/gpu.txt"
for r in $(seq 1 "$runs"); do
    mkdir -p "$w/run$r"
    t0=$(date +%s.%N)
    timeout 120 "$bin/gpuxray" discover --target cuda --only tlb --seed "$r" \
        --data "$w/run$r/data" -o "$w/run$r/tlb.json" >"$w/run$r/table.txt" 2>"$w/run$r/log.txt"
    rc=$?
    echo "run $r rc=$rc $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$w/summary.txt"
    grep -E '^tlb' "$w/run$r/table.txt" >>"$w/summary.txt"
done
t0=$(date +%s)
timeout 200 "$bin/xchase_curve" --target cuda 2 6 32 34 64 96 128 512 1024 \
    >"$w/curves.csv" 2>"$w/curves.err"
echo "curves rc=$? $(($(date +%s) - t0)) s" >>"$w/summary.txt"
t0=$(date +%s)
timeout 150 "$bin/xchase_curve" --target cuda --steps \
    1024,1280,1448,1536,1664,1792,1920,2048,2176,2304,2560,2896,3072,3584,4096,4608,5120,5793,6144,7168,8192,9216,10240,11585,13000,16384 \
    32 34 96 192 >"$w/fine.csv" 2>"$w/fine.err"
echo "fine rc=$? $(($(date +%s) - t0)) s" >>"$w/summary.txt"
tar -C "$out" -czf "$out/tlb.tgz" tlb
cat "$w/summary.txt"
