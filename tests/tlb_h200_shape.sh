#!/usr/bin/env bash
# tlb_h200_shape.sh - the tlb stage on a hand-written H200-shaped
# translation hierarchy (docs/nvidia-h200.md, "TLB"): L1 16 entries fully
# associative, 32 MiB each, per SM; L2 2048 = 256 sets x 8 ways with the xor
# index, 32 MiB each, +10 cycles; L3 4096 = 512 sets x 8 ways xor, 64 MiB
# each, +89 cycles; walks at a fixed cost. The card is
# profiles/seed-ampere-6mb.json with this tlb section added (built here);
# `gpuxray discover --target sim:... --only tlb` must find every level's
# entries, ways, entry_bytes, index and sharing exactly and its latencies
# within 5 % (the holdout's rule). An xor level may have fewer ways than
# the level before (8 behind 16): the case a modulo-only stage missed.
# usage: bash tests/tlb_h200_shape.sh path/to/gpuxray
set -u
GX=${1:?usage: tlb_h200_shape.sh path/to/gpuxray}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=$ROOT/profiles/seed-ampere-6mb.json
[ -f "$BASE" ] || { echo "skip: $BASE missing" >&2; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 needed to write the JSON" >&2; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

python3 - "$BASE" "$T/h200tlb.json" <<'PY' || { echo "FAIL: writing the profile" >&2; exit 1; }
import json, sys
p = json.load(open(sys.argv[1]))
MiB = 1 << 20
def level(name, entries, ways, reach, sharing, hit, miss, index=None):
    l = {"name": name, "entries": entries, "ways": ways, "entry_bytes": reach,
         "sharing": sharing, "hit_latency_cycles": hit, "miss_cycles": miss, "policy": "lru"}
    if index:
        l["index"] = index
    return l
p["name"] = "seed Ampere 6MB with an H200-shaped tlb (simulated)"
p["tlb"] = {
    "sms_per_gpc": 14,
    "page_table": {"page_sizes": [4096, 65536, 2 * MiB], "default_page_bytes": 2 * MiB,
                   "level_bits": [1, 9, 9, 9, 8, 9], "pte_bytes": 8},
    "levels": [level("L1", 16, 16, 32 * MiB, "sm", 0, 10),
               level("L2", 2048, 8, 32 * MiB, "gpc", 10, 89, "xor"),
               level("L3", 4096, 8, 64 * MiB, "gpu", 89, None, "xor")],
    "walker": {"fetch_bytes": 64, "walkers": 32, "queue_entries": 0,
               "fixed_read_cycles": 100, "pwc": None, "neighbour_pwc": None},
    "coalescer": {"window_cycles": 0, "max_granule_bytes": 2 * MiB},
}
p.pop("confidence", None)
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
"$GX" validate "$T/h200tlb.json" || { echo "FAIL: the profile does not validate" >&2; exit 1; }
"$GX" discover --target "sim:$T/h200tlb.json" --only tlb --progress -o "$T/found.json" \
    >"$T/out.txt" 2>&1 || { cat "$T/out.txt"; echo "FAIL: discover" >&2; exit 1; }
cat "$T/out.txt"
python3 - "$T/h200tlb.json" "$T/found.json" <<'PY'
import json, sys
truth = json.load(open(sys.argv[1]))["tlb"]
found = (json.load(open(sys.argv[2])).get("tlb") or {})
fl = found.get("levels") or []
bad = []
if len(fl) != len(truth["levels"]):
    bad.append("levels: %d found, %d in the truth" % (len(fl), len(truth["levels"])))
for i, t in enumerate(truth["levels"]):
    f = fl[i] if i < len(fl) else {}
    for k in ("entries", "ways", "entry_bytes", "sharing"):
        if f.get(k) != t[k]:
            bad.append("levels[%d].%s: found %r, truth %r" % (i, k, f.get(k), t[k]))
    # the index: xor as in the truth; a fully associative level has none
    if f.get("index") != t.get("index"):
        bad.append("levels[%d].index: found %r, truth %r" % (i, f.get("index"), t.get("index")))
    lat = [("miss_cycles", t["miss_cycles"])]
    if i > 0:
        lat.append(("hit_latency_cycles", t["hit_latency_cycles"]))
    for k, want in lat:
        if want is None:
            continue
        got = f.get(k)
        if got is None or abs(got - want) > 0.05 * want:
            bad.append("levels[%d].%s: found %r, truth %r" % (i, k, got, want))
if found.get("sms_per_gpc") != truth["sms_per_gpc"]:
    bad.append("sms_per_gpc: found %r, truth %r" % (found.get("sms_per_gpc"), truth["sms_per_gpc"]))
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
rc=$?
# the found section runs in the model (tlb_write_model completed it): the
# card with the found tlb section simulates a page-walk trace
python3 - "$T/h200tlb.json" "$T/found.json" "$T/run.json" <<'PY' || rc=1
import json, sys
p = json.load(open(sys.argv[1]))
p["tlb"] = json.load(open(sys.argv[2]))["tlb"]
json.dump(p, open(sys.argv[3], "w"), indent=1)
PY
"$GX" trace gen pages --count 2000 --page-size 2MiB --order random -o "$T/pg.txt" 2>/dev/null ||
    { echo "FAIL: trace gen pages" >&2; rc=1; }
if ! "$GX" sim --profile "$T/run.json" --trace "$T/pg.txt" --json --quiet -o "$T/sim.json" \
    2>"$T/sim.err"; then
    echo "FAIL: sim on the found tlb section: $(cat "$T/sim.err")" >&2
    rc=1
elif ! grep -q '"pageTableReads"' "$T/sim.json"; then
    echo "FAIL: sim on the found tlb section: no translation statistics" >&2
    rc=1
fi
[ $rc -eq 0 ] && echo "tlb_h200_shape: ok (every level found exactly; sim runs the found section)"
exit $rc
