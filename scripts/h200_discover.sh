#!/usr/bin/env bash
# h200_discover.sh BUILD_DIR OUT_DIR [RUNS] [LIMIT_S] - run the unchanged
# discovery pipeline on the first CUDA GPU RUNS times (default 3, seeds
# 1..RUNS; each run stopped after LIMIT_S seconds, default 200), with
# progress logs, and the SM/memory clocks sampled by nvidia-smi meanwhile.
# Reads clocks only; never changes any GPU setting. Outputs per run r:
# run<r>.json (measured profile), run<r>.txt (table and stage costs),
# run<r>.log (progress); clocks.csv.
set -u
build=${1:?usage: h200_discover.sh BUILD_DIR OUT_DIR [RUNS]}
out=${2:?usage: h200_discover.sh BUILD_DIR OUT_DIR [RUNS]}
runs=${3:-3}
limit=${4:-200}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu --format=csv,noheader -lms 1000 \
  >"$out/clocks.csv" 2>&1 &
smi=$!
for r in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  timeout -s INT "$limit" "$build/gpuxray" discover --target cuda --seed "$r" --progress -o "$out/run$r.json" \
    >"$out/run$r.txt" 2>"$out/run$r.log"
  rc=$?
  end=$(date +%s.%N)
  echo "run $r: exit $rc, wall $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s" | tee -a "$out/runs.txt"
done
kill $smi 2>/dev/null
exit 0
