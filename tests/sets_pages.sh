#!/usr/bin/env bash
# sets_pages.sh - the sets stage's cross-page census (src/infer/stages/sets/
# sets_pages.c) on a generated profile whose set masks reach above the page
# (wide mode, a modulo index whose masks' in-page parts have rank 3 of 5: one
# page holds lines of only some sets of a slice): discovery --only sets must
# count the sets over the arena's pages, write l2.sets_per_slice and the
# capacity equal to the truth's, say so in its report row, and write no set
# masks (no profile can state them over the page's bits).
# Usage: bash tests/sets_pages.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: sets_pages.sh /path/to/gpuxray}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$gx" gen-profile --seed 8 --mode wide >"$T/truth.json" || { echo "FAIL: gen-profile"; exit 1; }
"$gx" discover --target "sim:$T/truth.json" --only sets -o "$T/found.json" >"$T/table.txt" 2>&1
grep -q "classes over [0-9]* pages" "$T/table.txt" || {
  echo "FAIL: no cross-page count in the report:"; grep -E "sets" "$T/table.txt"; exit 1; }
python3 - "$T/truth.json" "$T/found.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["l2"]
f = json.load(open(sys.argv[2]))["l2"]
# a test may read the truth; discovery does not
def check(k):
    if f.get(k) != t[k]:
        print("FAIL: %s found %s, truth %s" % (k, f.get(k), t[k])); sys.exit(1)
# the truth's set masks must reach above the page with dependent in-page parts,
# or this test no longer tests the cross-page path
ms = [int(m, 16) & ((1 << 21) - 1) for m in t["hash"]["set"]["masks"]]
basis = []
for x in ms:
    for y in basis:
        x = min(x, x ^ y)
    if x:
        basis.append(x)
if len(basis) == len(ms):
    print("FAIL: the profile's set masks are independent within the page"); sys.exit(1)
check("sets_per_slice")
check("capacity_bytes")
if (f.get("hash") or {}).get("set"):
    print("FAIL: set masks written from a cross-page count"); sys.exit(1)
print("ok: %d sets per slice counted over pages" % f["sets_per_slice"])
PY
