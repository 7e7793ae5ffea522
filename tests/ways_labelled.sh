#!/usr/bin/env bash
# ways_labelled.sh - the ways stage's slice-guided pools from the slices
# stage's contention-labelled predictor (discover --only slices,ways on the
# sim target), on tests/data/near-far-flat-frames.json: near-far with copies
# in the near partition, 16 slices a partition at the same distance from
# every SM (fingerprints see one class), a slice hash with frame bits (lines
# at one offset of different pages rarely congruent: same-offset pools do
# not evict). The hash must come from the contention labels, the ways must
# be 16 from pools the contention labels predicted (one slice a pool, where
# the fingerprints' one class made every line of a page a candidate: 591 M
# accesses against 21 M), within an access bound well below the
# fingerprints' pools. Seed 2: whether the same-offset pool evicts depends on
# the first target, and since the slices stage decides by contention first
# seed 1's does (3 of 4 sets by translation, 19.9 M accesses, no pools);
# seed 2's does not (guided pools from the labels, 15.2 M accesses).
# Usage: bash tests/ways_labelled.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: ways_labelled.sh /path/to/gpuxray}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
p=tests/data/near-far-flat-frames.json
"$gx" discover --target "sim:$p" --seed 2 --only slices,ways -o "$T/f.json" >"$T/d.out" 2>"$T/d.err"
"$gx" compare "$p" "$T/f.json" >"$T/c.out" 2>&1
v=$(awk '$1 == "l2.ways" { for (i = 2; i <= NF; i++) if ($i ~ /^(match|mismatch|missing)$/) { print $i; exit } }' "$T/c.out")
[ "$v" = match ] || { echo "FAIL: l2.ways $v ($(grep '^l2.ways ' "$T/c.out"))"; fail=1; }
grep -q "^l2.hash.slice .*from contention labels" "$T/d.out" ||
  { echo "FAIL: the hash does not come from the contention labels (the test's premise)"; fail=1; }
grep -q "^l2.ways .*slice-guided pools (contention labels)" "$T/d.out" ||
  { echo "FAIL: the ways' pools are not the contention labels' ($(grep '^l2.ways ' "$T/d.out"))"; fail=1; }
# the fingerprints' pools cost 591 M accesses on this profile (seed 1), the labels' 21 M (15 M
# at seed 2)
acc=$(awk '$1 == "ways" && $2 == "ok" { print $4 }' "$T/d.out")
{ [ -n "$acc" ] && [ "$acc" -lt 100000000 ]; } ||
  { echo "FAIL: ways cost ${acc:-?} accesses (want < 100 M)"; fail=1; }
[ $fail -eq 0 ] && echo "ok: ways 16 from contention-labelled pools, $acc accesses"
exit $fail
