#!/usr/bin/env bash
# slices_first.sh - the slices stage decides by contention first (discover
# --only slices on the sim target, which has the contention probe): the
# count, the hash from the contention labels and the partitions from the
# contention classes' latencies, with no fingerprint predictor. For each
# profile the stage must report the method "contention first", spend fewer
# than 300 calls outside its contention launches (the class latencies and
# the cross test; the fingerprint predictor alone costs 816 calls on the
# seed card and 7156 on hopper-like), write its hash from the contention
# labels, and find the truth's slices and partitions (and its slice hash
# where the truth has no bits above the page that the compare's per-page
# offsets miss within a partition: hopper-like's do):
# - profiles/hopper-like.json: near-far, copies in the near partition (the
#   cross test: 60 classes x 2);
# - profiles/seed-ampere-6mb.json: uniform, 2 partitions (contiguous SM
#   runs; the labelled predictor relabelled by group), a linear hash;
# - gen-profile --seed 1: uniform, 2 partitions, 102 slices, a table hash;
# - gen-profile --mode wide --seed 1: near-far, home visible (classes
#   grouped by the SMs that see them fast), 50 slices.
# Usage: bash tests/slices_first.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: slices_first.sh /path/to/gpuxray}
. "$(dirname "$0")/lib/compare.sh" # T, fail, verdict
"$gx" gen-profile --seed 1 -o "$T/c1.json" >/dev/null 2>&1 || { echo "FAIL: gen-profile"; exit 1; }
"$gx" gen-profile --seed 1 --mode wide -o "$T/w1.json" >/dev/null 2>&1 || { echo "FAIL: gen-profile wide"; exit 1; }

# check NAME PROFILE FIELDS...
check() {
  local name=$1 p=$2 bad=0
  shift 2
  "$gx" discover --target "sim:$p" --only slices -o "$T/$name.f.json" >"$T/$name.out" 2>"$T/$name.err"
  "$gx" compare "$p" "$T/$name.f.json" >"$T/$name.c" 2>&1
  grep -q "^slices method  *contention first" "$T/$name.out" ||
    { echo "FAIL: $name: not decided by contention first ($(grep '^slices method' "$T/$name.out"))"; bad=1; }
  grep -q "^l2.hash.slice .*from contention labels" "$T/$name.out" ||
    { echo "FAIL: $name: the hash does not come from the contention labels"; bad=1; }
  local calls a b
  calls=$(awk '$1 == "slices" && $2 == "ok" { print $3; exit }' "$T/$name.out")
  read -r a b < <(sed -n 's/^contention launches *\([0-9]*\) + \([0-9]*\) .*/\1 \2/p' "$T/$name.out")
  case "${calls:-x}${a:-x}${b:-x}" in *[!0-9]*) calls=999999 a=0 b=0 ;; esac
  local other=$((calls - a - b))
  [ "$other" -lt 300 ] ||
    { echo "FAIL: $name: $other calls outside contention (calls $calls, launches $a + $b; want < 300)"; bad=1; }
  for f in "$@"; do
    v=$(verdict "$T/$name.c" "$f")
    [ "$v" = match ] || { echo "FAIL: $name: $f $v ($(grep "^$f " "$T/$name.c"))"; bad=1; }
  done
  [ $bad -eq 0 ] && echo "ok: $name: contention first, $other calls besides $a + $b launches"
  [ $bad -eq 0 ] || fail=1
}
check hopper profiles/hopper-like.json l2.slices l2.partitions
check seed profiles/seed-ampere-6mb.json l2.slices l2.partitions l2.hash.slice
check gen1 "$T/c1.json" l2.slices l2.partitions l2.hash.slice
check wide1 "$T/w1.json" l2.slices l2.partitions
exit $fail
