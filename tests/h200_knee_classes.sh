#!/usr/bin/env bash
# h200_knee_classes.sh - the H200's measured set index against its measured
# latency curve, no GPU needed: one slice's lines of a fresh allocation sorted
# into their 320 sets by eviction (data/nvidia-h200/setclass-2026-12-03,
# -03b: two chips) predict, with LRU near and far partitions of 16 ways, every
# point of the chase curve (data/nvidia-h200/loop/curve.csv) inside the
# classes' region within 5%, the knees included; the two chips' classes put
# their common lines into the same sets. An index that is not the chip's must
# fail the same check: an even one (a sharp knee) and a random one (too soft).
# See scripts/h200_knee_from_classes.py and docs/nvidia-h200.md ("The knee
# from the measured sets").
# Usage: bash tests/h200_knee_classes.sh [gpuxray]   (from the source dir; the binary is unused)
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
s=scripts/h200_knee_from_classes.py
curve=data/nvidia-h200/loop/curve.csv
a=data/nvidia-h200/setclass-2026-12-03/classes64.csv.gz
b=data/nvidia-h200/setclass-2026-12-03b/classes128.csv.gz
for f in "$s" "$curve" "$a" "$b"; do
  [ -f "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$s" "$curve" "$a" "$b" > "$T/out" 2>&1 ||
  { cat "$T/out"; echo "FAIL: the measured sets do not predict the curve within 5%"; exit 1; }
grep -E "worst|relabelling" "$T/out"
for c in balanced random; do
  if python3 "$s" --control "$c" "$curve" "$a" > "$T/$c" 2>&1; then
    cat "$T/$c"
    echo "FAIL: a $c set index passed the check: it cannot tell the chip's index"
    exit 1
  fi
  echo "control $c: $(grep -m1 worst "$T/$c" | sed 's/^ *//')"
done
echo "PASS"
