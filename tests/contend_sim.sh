#!/usr/bin/env bash
# contend_sim.sh - the contention primitive (gx_target_contend) on the sim
# target: bench/contend_classes groups one page's lines by contention alone
# and must find exactly as many classes as the model has slices serving one
# SM (near-far with copies: the slices of one partition; otherwise all), every
# class coming back from a second member, and the lines of two more pages all
# joining page 0's classes, once each. Then bad input: an unknown option, a
# bad --line, and a cuda target without a GPU, each a clear exit code.
# Usage: bash tests/contend_sim.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: contend_sim.sh /path/to/gpuxray}
cc="$(dirname "$gx")/contend_classes"
[ -x "$cc" ] || { echo "FAIL: contend_classes not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
# expected classes: read from the profile (a test may know the truth; the tool does not)
expect() {
  python3 - "$1" <<'PY'
import json, sys
l2 = json.load(open(sys.argv[1]))["l2"]
nf = l2.get("topology") == "near-far" and l2.get("partitions", 1) > 1
copies = nf and (l2.get("near_far") or {}).get("copy_to_near")
print(l2["slices"] // l2["partitions"] if copies else l2["slices"])
PY
}
for p in seed-ampere-6mb hopper-like nvidia-h200-model; do
  want=$(expect "profiles/$p.json")
  if ! "$cc" --target "sim:profiles/$p.json" --pages 3 -o "$T/$p.csv" >"$T/$p.out" 2>"$T/$p.err"; then
    echo "FAIL: $p: contend_classes exit $? ($(tail -1 "$T/$p.err"))"; fail=1; continue
  fi
  got=$(sed -n 's/^page 0: \([0-9]*\) classes.*/\1/p' "$T/$p.out")
  [ "$got" = "$want" ] || { echo "FAIL: $p: $got classes, the model serves one SM from $want slices"; fail=1; }
  grep -q "$want of $want classes come back exactly" "$T/$p.out" ||
    { echo "FAIL: $p: a class did not come back from a second member"; fail=1; }
  for pg in 1 2; do
    grep -q "^page $pg: 0 lines in none of page 0.s classes, 0 in two" "$T/$p.out" ||
      { echo "FAIL: $p: page $pg has lines in no class of page 0"; fail=1; }
  done
  rows=$(wc -l <"$T/$p.csv")
  [ "$rows" -eq $((3 * 16384)) ] || { echo "FAIL: $p: $rows CSV rows, want $((3 * 16384))"; fail=1; }
  echo "ok: $p: $got classes"
done
"$cc" --bogus 1 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: unknown option: exit $rc, want 2"; fail=1; }
"$cc" --target sim:profiles/hopper-like.json --line 100 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --line 100: exit $rc, want 2"; fail=1; }
if ! command -v nvidia-smi >/dev/null 2>&1; then
  "$cc" --target cuda >/dev/null 2>"$T/nogpu.err"; rc=$?
  [ $rc -eq 3 ] && grep -q "CUDA" "$T/nogpu.err" ||
    { echo "FAIL: cuda without a GPU: exit $rc ($(cat "$T/nogpu.err"))"; fail=1; }
fi
exit $fail
