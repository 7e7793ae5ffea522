#!/usr/bin/env bash
# sets_capacity.sh - the sets stage's last fallback (src/infer/stages/sets/
# sets_capacity.c): sets per slice from one slice's capacity. On
# tests/data/hopper-320-contiguous.json (near-far, victims to far, LRU, 64
# slices, 320 sets a slice by a modulo index over bits 13..26, consecutive
# physical frames as an H200's large allocations) the in-page methods leave
# the count out and discovery --only sets must write sets_per_slice and
# l2.capacity_bytes equal to the truth, from a knee of 320 x 32 lines. On
# the same profile with random frames (tests/data/hopper-320-random.json)
# the knee is soft and refused; the congruence classes of the slice's lines
# (gx_setclass_partition) must then sort every line into exactly the truth's
# 320 sets, and the count and capacity match the truth; the in-page methods'
# rows before it read as tries (superseded), not as fields left out.
# Usage: bash tests/sets_capacity.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: sets_capacity.sh /path/to/gpuxray}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
c=tests/data/hopper-320-contiguous.json
r=tests/data/hopper-320-random.json
"$gx" discover --target "sim:$c" --only sets -o "$T/c.json" >"$T/c.txt" 2>"$T/c.err"
grep -q "^l2.sets_per_slice  *320 .*congruence classes" "$T/c.txt" || {
  echo "FAIL: no capacity-derived count on $c:"; grep -E "^l2.sets" "$T/c.txt"; fail=1; }
"$gx" compare "$c" "$T/c.json" >"$T/cmp.txt" 2>&1
for f in l2.sets_per_slice l2.capacity_bytes; do
  grep -q "^$f  *[0-9]*  *[0-9]*  *match" "$T/cmp.txt" || {
    echo "FAIL: $f not matched:"; grep "^$f" "$T/cmp.txt"; fail=1; }
done
"$gx" discover --target "sim:$r" --only sets -o "$T/r.json" >"$T/r.txt" 2>"$T/r.err"
grep -q "^l2.sets_per_slice  *320 .*congruence classes" "$T/r.txt" || {
  echo "FAIL: no count from congruence classes after the soft knee on $r:"
  grep -E "^l2.sets" "$T/r.txt"; fail=1; }
# the in-page methods' rows before the classes' count are labelled as tries,
# not as fields left out; the set hash is named once as left out
if grep -E "^l2.sets_per_slice .* LOW " "$T/r.txt" >/dev/null ||
   ! grep -E "^l2.sets_per_slice .* tried .*a later row decides" "$T/r.txt" >/dev/null; then
  echo "FAIL: the in-page count not labelled as tried:"; grep -E "^l2.sets" "$T/r.txt"; fail=1
fi
n=$(grep -o "l2.hash.set" <(grep "left out of the profile as unsure" "$T/r.err") | wc -l)
[ "$n" -eq 1 ] || { echo "FAIL: l2.hash.set named $n times as left out:"; cat "$T/r.err"; fail=1; }
"$gx" compare "$r" "$T/r.json" >"$T/rcmp.txt" 2>&1
for f in l2.sets_per_slice l2.capacity_bytes; do
  grep -q "^$f  *[0-9]*  *[0-9]*  *match" "$T/rcmp.txt" || {
    echo "FAIL: random frames: $f not matched:"; grep "^$f" "$T/rcmp.txt"; fail=1; }
done
[ $fail -eq 0 ] && echo "sets_capacity: ok"
exit $fail
