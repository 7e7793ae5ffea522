#!/usr/bin/env bash
# slices_contend.sh - the slices stage at contention resolution (discover
# --only slices on the sim target):
# 1. tests/data/near-far-flat-skew.json: near-far with copies in the near
#    partition, 16 slices a partition all at the same distance from every SM
#    (no skew): fingerprints see one class a partition, contention 16. The
#    count must be 32 and the hash learnt from the contention labels must be
#    written and match the truth within a partition (compare samples fresh
#    addresses: the prediction of pages never measured), every held-out line
#    of the learnt pages agreeing.
# 2. a wide profile whose reference page shows 46 of its 50 slices (gen-profile
#    --mode wide --seed 1): the count's rounds grow the classes to 50.
# Usage: bash tests/slices_contend.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: slices_contend.sh /path/to/gpuxray}
. "$(dirname "$0")/lib/compare.sh" # T, fail, verdict

p=tests/data/near-far-flat-skew.json
if ! "$gx" discover --target "sim:$p" --only slices -o "$T/f.json" >"$T/d.out" 2>&1; then
  grep -q "profile written" "$T/d.out" || { echo "FAIL: flat skew: discover failed ($(tail -1 "$T/d.out"))"; fail=1; }
fi
"$gx" compare "$p" "$T/f.json" >"$T/c.out" 2>&1
for f in l2.slices l2.partitions l2.hash.slice; do
  v=$(verdict "$T/c.out" "$f")
  [ "$v" = match ] || { echo "FAIL: flat skew: $f $v ($(grep "^$f " "$T/c.out"))"; fail=1; }
done
grep -q "^l2.hash.slice .*from contention labels" "$T/d.out" ||
  { echo "FAIL: flat skew: the hash does not come from the contention labels"; fail=1; }
chk=$(sed -n 's/^slice hash check *\([0-9]*\)\/\([0-9]*\) held-out.*contention labels.*/\1 \2/p' "$T/d.out")
set -- $chk
{ [ $# -eq 2 ] && [ "$1" = "$2" ] && [ "$2" -ge 200 ]; } ||
  { echo "FAIL: flat skew: held-out check '$chk' (want all of >= 200 agreeing)"; fail=1; }
[ $fail -eq 0 ] && echo "ok: flat skew: 32 slices, hash by contention, $chk held-out lines"

"$gx" gen-profile --seed 1 --mode wide -o "$T/w.json" >/dev/null 2>&1 || { echo "FAIL: gen-profile"; exit 1; }
"$gx" discover --target "sim:$T/w.json" --only slices -o "$T/wf.json" >"$T/w.out" 2>&1
"$gx" compare "$T/w.json" "$T/wf.json" >"$T/wc.out" 2>&1
v=$(verdict "$T/wc.out" l2.slices)
[ "$v" = match ] || { echo "FAIL: wide seed 1: l2.slices $v ($(grep "^l2.slices " "$T/wc.out"))"; fail=1; }
grep -q "^l2.slices .*contention classes (46 in" "$T/w.out" ||
  { echo "FAIL: wide seed 1: the reference page no longer shows 46 classes (the test's premise)"; fail=1; }
[ "$v" = match ] && echo "ok: wide seed 1: $(awk '$1 == "l2.slices" { print $3 }' "$T/wc.out") slices by grown classes"
exit $fail
