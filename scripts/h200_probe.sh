#!/usr/bin/env bash
# h200_probe.sh - run on the GPU machine (device tool): validates the cuda
# target's primitives and measures raw data for discovery, with the
# cuda_probe program built beside gpuxray (bench/cuda_probe.c).
#
#   bash scripts/h200_probe.sh [BUILD_DIR] [OUT_DIR]     (defaults: build-cuda, $OUT)
#
# Writes to OUT_DIR: log.txt (everything printed, incl. `cuda_probe check`
# and the per-call cost table of `cuda_probe calls`),
# curve.csv (latency vs footprint from SM 0, 0.25..512 MiB, and from a
# second SM up to 128 MiB), seq.csv (timer overhead, miss then hit, sector /
# line A then A+d, store then load, first touch of a page), fingerprint.csv
# (per-line L2 hit latency of 8 pages' lines from 8 SMs), cross.csv (64
# fresh lines per pair loaded by SM 0 or SM n/2, then timed twice from every
# SM: which SMs share a near L2 partition), sass.txt (the
# sm_90 SASS of the timing kernels, when cuobjdump is there), clocks.csv
# (SM and memory clock every 0.5 s during the run, from nvidia-smi).
# Each step has its own time limit; a failing step does not stop the rest.
# Notes: reads clocks with nvidia-smi but never changes any GPU setting.
set -u
b=${1:-build-cuda}
out=${2:-${OUT:-out}}
mkdir -p "$out"
log="$out/log.txt"
probe="$b/cuda_probe"

step() { # step NAME LIMIT_S CMD...
  local name=$1 lim=$2
  shift 2
  echo "=== $name (limit ${lim}s): $*"
  local t0=$SECONDS
  timeout "$lim" "$@"
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s"
}

mon=
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu --format=csv,noheader -lms 500 \
    >"$out/clocks.csv" 2>&1 &
  mon=$!
fi

{
  echo "h200_probe.sh on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  uname -r
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  step info 30 "$probe" info
  step check 90 "$probe" check
  step calls 60 "$probe" calls
  step seq 60 "$probe" seq -o "$out/seq.csv"
  step curve_sm0 150 "$probe" curve --sm 0 --max-mib 512 -o "$out/curve.csv"
  step fingerprint 90 "$probe" fingerprint --sms 8 --reps 5 --pages 8 -o "$out/fingerprint.csv"
  step cross 60 "$probe" cross -o "$out/cross.csv"
  sm2=$("$probe" info 2>/dev/null | awk '/^sm_count:/ {print int($2 / 2)}')
  if [ -n "$sm2" ]; then
    step curve_sm$sm2 90 "$probe" curve --sm "$sm2" --max-mib 128 -o "$out/curve2.csv"
    if [ -s "$out/curve2.csv" ]; then
      tail -n +2 "$out/curve2.csv" >>"$out/curve.csv"
      rm -f "$out/curve2.csv"
    fi
  fi
  if command -v cuobjdump >/dev/null 2>&1 && [ -f "$b/gx_kernels.fatbin" ]; then
    cuobjdump -sass -arch sm_90 "$b/gx_kernels.fatbin" >"$out/sass.txt" 2>&1 ||
      echo "cuobjdump failed"
    echo "sass.txt: $(wc -l <"$out/sass.txt") lines"
  fi
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
  echo "--- summary"
  for f in "$out"/*.csv; do [ -f "$f" ] && echo "$(basename "$f"): $(wc -l <"$f") lines"; done
  if [ -f "$out/curve.csv" ]; then
    awk -F, 'NR > 1 {printf "sm %s %9.3f MiB %8.1f cycles\n", $1, $2 / 1048576, $6}' "$out/curve.csv"
  fi
} 2>&1 | tee "$log"
[ -n "$mon" ] && kill "$mon" 2>/dev/null
exit 0
