#!/usr/bin/env bash
# h200_loop.sh - closing the loop on a real GPU (issue 4); skipped (77)
# without one. Two checks, their output goes to docs/nvidia-h200.md:
# 1. the chase curve measured now (cuda_probe curve, one SM, up to 128 MiB)
#    against the sim target running profiles/nvidia-h200-model.json: within
#    5% at every footprint, the knees included (see h200_curve_model.sh);
# 2. the slice hash on a freshly allocated 2 MiB region (bench/hash_loop.c):
#    every line's class predicted from at most 1% of the region's lines
#    equals a full fresh measurement of it.
# Only meaningful on the chip the model describes (an NVIDIA H200).
# Usage: bash tests/h200_loop.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: h200_loop.sh /path/to/gpuxray}
dir=$(dirname "$gx")
probe="$dir/cuda_probe"
loop="$dir/hash_loop"
[ -x "$probe" ] && [ -x "$loop" ] || { echo "FAIL: cuda_probe or hash_loop not built"; exit 1; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! info=$("$probe" info 2>&1); then
  echo "SKIP: no usable CUDA GPU here"
  exit 77
fi
case "$info" in
  *H200*) ;;
  *) echo "SKIP: the model describes an NVIDIA H200; this GPU is another ($info)"; exit 77 ;;
esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
"$probe" curve --target cuda --max-mib 128 -o "$T/curve.csv" 2>"$T/curve.log" || fail=1
if [ $fail -eq 0 ]; then
  bash tests/h200_curve_model.sh "$gx" "$T/curve.csv" || fail=1
fi
"$loop" --target cuda --pages 1 || fail=1
exit $fail
