#!/bin/bash
# h200_three.sh - one device call: three whole discoveries of the H200 (seeds
# 1-3) with their raw data, each row of the profile and each stage's cost in
# one summary (issue 12 items 1 and 5: the discrete fields agree over three
# runs, far_stream_extra within 5 cycles, the wall time at most 60 s).
# Output: $OUT/summary.txt and $OUT/three.tgz (each run's stdout, stderr,
# profile and --data folder).
# usage: copy it beside a CUDA build's gpuxray in a carried folder (e.g.
# .dev-h200/), then `bash .dev-h200/h200_three.sh`.
D=$(dirname "$0"); O=${OUT:-/tmp/out}; W=/tmp/h200_three/three; mkdir -p "$W" "$O"
G=$D/gpuxray
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv; uptime; nproc; } > "$W/gpu.txt" 2>&1
cat "$W/gpu.txt" > "$O/summary.txt"
for s in 1 2 3; do
  t=$(date +%s.%N)
  timeout 170 "$G" discover --target cuda --seed $s --data "$W/run$s" -o "$W/run$s.json" > "$W/run$s.txt" 2> "$W/run$s.log"
  rc=$?
  echo "discover seed $s rc=$rc $(awk "BEGIN{print $(date +%s.%N) - $t}") s" >> "$O/summary.txt"
  grep -E "^(timer noise|l2\.|ways pool|tlb\.|[a-z]+ +(ok|fail|skip)|total)" "$W/run$s.txt" | cut -c1-230 >> "$O/summary.txt"
  tail -3 "$W/run$s.log" >> "$O/summary.txt"
done
tar czf "$O/three.tgz" -C /tmp/h200_three three
cat "$O/summary.txt"
