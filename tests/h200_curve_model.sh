#!/usr/bin/env bash
# h200_curve_model.sh - closing the loop on the H200, the part that needs no
# GPU: the sim target, given profiles/nvidia-h200-model.json (built from the
# measured profiles/nvidia-h200.json by scripts/h200_model_profile.py, with
# the slices measured by contention and the set index from the measured
# congruence classes by scripts/h200_measured_sets.py), walks the same random
# pointer chains over the same footprints as the chase curve measured on the
# H200 (data/nvidia-h200/loop/curve.csv, one SM, 128-byte steps, up to 128 MiB
# here) and must land within 5% of every measured point, both knees included
# (docs/nvidia-h200.md, "Closing the loop").
# Usage: bash tests/h200_curve_model.sh /path/to/gpuxray [MEASURED.csv]   (from the source dir;
# MEASURED.csv defaults to the committed curve)
set -u
gx=${1:?usage: h200_curve_model.sh /path/to/gpuxray}
probe="$(dirname "$gx")/cuda_probe"
model=profiles/nvidia-h200-model.json
measured=${2:-data/nvidia-h200/loop/curve.csv}
[ -x "$probe" ] || { echo "FAIL: $probe not built (bench/cuda_probe.c)"; exit 1; }
[ -f "$model" ] && [ -f "$measured" ] || { echo "FAIL: $model or $measured missing"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$gx" validate "$model" || { echo "FAIL: $model does not validate"; exit 1; }
"$probe" curve --target "sim:$model" --max-mib 128 -o "$T/sim.csv" 2>"$T/sim.log" ||
  { echo "FAIL: the sim curve failed"; cat "$T/sim.log"; exit 1; }
awk -F, '
  NR == FNR { if (FNR > 1) meas[$2] = $6; next }
  FNR > 1 && ($2 in meas) {
    n++; e = 100 * ($6 - meas[$2]) / meas[$2]; a = e < 0 ? -e : e
    st = a <= 5 ? "ok" : "FAIL"
    if (a > worst) worst = a
    if (st == "FAIL") bad++
    printf "%9.2f MiB  measured %6.1f  sim %6.1f  %+5.1f%%  %s\n", $2 / 1048576, meas[$2], $6, e, st
  }
  END {
    printf "%d points; worst %.1f%%; %d over 5%%\n", n, worst, bad
    exit (n < 20 || bad > 0)
  }' "$measured" "$T/sim.csv"
