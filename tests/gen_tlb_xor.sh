#!/usr/bin/env bash
# gen_tlb_xor.sh - the generator's translation hierarchies with the xor set
# index (src/profile/generate_tlb.c): `gpuxray gen-profile --tlb` for 60
# seeds, every profile valid, some levels xor (of the levels with sets,
# between a quarter and two thirds: about 40 % drawn), every level with sets
# written "modulo" or "xor" and a fully associative one without an index,
# a level with sets after an xor level xor too, and at least one xor level
# with fewer ways than the level before (the H200's shape).
# usage: bash tests/gen_tlb_xor.sh path/to/gpuxray
set -u
GX=${1:?usage: gen_tlb_xor.sh path/to/gpuxray}
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 needed to read the JSON" >&2; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for i in $(seq 1 60); do
    "$GX" gen-profile --seed "$i" --tlb -o "$T/p$i.json" || { echo "FAIL: gen-profile $i" >&2; exit 1; }
done
"$GX" validate "$T"/p*.json >"$T/validate.txt" 2>&1 || {
    grep -v ': ok$' "$T/validate.txt" >&2
    echo "FAIL: a generated profile does not validate" >&2
    exit 1
}
python3 - "$T" <<'PY'
import glob, json, sys
sets_levels = xor = fewer = 0
bad = []
for f in sorted(glob.glob(sys.argv[1] + "/p*.json")):
    levels = json.load(open(f))["tlb"]["levels"]
    for j, l in enumerate(levels):
        fa = l["entries"] == l["ways"]
        idx = l.get("index")
        if fa and idx is not None:
            bad.append("%s level %d: fully associative with index %r" % (f, j, idx))
        if not fa:
            sets_levels += 1
            if idx not in ("modulo", "xor"):
                bad.append("%s level %d: index %r" % (f, j, idx))
            xor += idx == "xor"
        if j and levels[j - 1].get("index") == "xor" and not fa and idx != "xor":
            bad.append("%s level %d: a modulo level after an xor level" % (f, j))
        if j and idx == "xor" and l["ways"] < levels[j - 1]["ways"]:
            fewer += 1
share = xor / sets_levels if sets_levels else 0
if not 0.25 <= share <= 2 / 3:
    bad.append("xor share %.2f of %d levels with sets" % (share, sets_levels))
if not fewer:
    bad.append("no xor level with fewer ways than the level before")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
print("levels with sets %d, xor %d (%.0f %%), xor with fewer ways than before %d"
      % (sets_levels, xor, 100 * share, fewer))
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "gen_tlb_xor: ok"
exit $rc
