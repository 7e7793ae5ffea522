#!/usr/bin/env bash
# h200_tlb.sh - the tlb stage on a CUDA GPU, RUNS times, raw data kept:
# each run writes the found profile, the stage table, its log and the raw
# chases (discover --data: every translation chase's stride, steps, rounds
# and mean, and the 3-granule curve). Everything is packed into OUT/h200_tlb.tar.gz with a summary
# in OUT/summary.txt. A run that fails stops the script (later runs would
# fail alike).
# Usage: scripts/h200_tlb.sh GPUXRAY OUT [RUNS] [SECONDS_PER_RUN]
set -u
bin="${1:?usage: h200_tlb.sh GPUXRAY OUT [RUNS] [SECONDS_PER_RUN]}"
out="${2:?usage: h200_tlb.sh GPUXRAY OUT [RUNS] [SECONDS_PER_RUN]}"
runs="${3:-3}"
limit="${4:-120}"
work="$(mktemp -d)"
mkdir -p "$out"
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total \
        --format=csv 2>&1
    uptime
} >"$work/gpu.txt"
summary="$out/summary.txt"
cp "$work/gpu.txt" "$summary"
for r in $(seq 1 "$runs"); do
    d="$work/run$r"
    mkdir -p "$d"
    t0=$(date +%s.%N)
    timeout "$limit" "$bin" discover --target cuda --only tlb --seed "$r" --data "$d/data" \
        -o "$d/tlb.json" >"$d/table.txt" 2>"$d/log.txt"
    rc=$?
    t1=$(date +%s.%N)
    {
        echo "== run $r: exit $rc, $(awk "BEGIN {print $t1 - $t0}") s"
        grep -E '^(tlb|timer)' "$d/table.txt"
        tail -3 "$d/log.txt"
    } >>"$summary"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        break
    fi
done
tar -C "$work" -czf "$out/h200_tlb.tar.gz" .
rm -rf "$work"
cat "$summary"
