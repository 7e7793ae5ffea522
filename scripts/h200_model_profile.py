#!/usr/bin/env python3
"""h200_model_profile.py MEASURED.json REPORT.txt REFERENCE.json OUT.json

Builds a simulable model of the measured H200 (profiles/nvidia-h200-model.json)
from the profile that `gpuxray discover --target cuda` wrote and its report.

Every field discovery measured with confidence comes from the measured
profile: line, sector, ways, partitions, policy, topology, near/far hit and
DRAM latencies, timer overhead, levels, the shared memory (smem). The per-(SM, slice) skew amplitude
comes from the report's "hit skew over (SM, slice)" row (its 95th - 5th
percentile spread, i.e. 0.9 of a uniform amplitude).

Discovery leaves out what it could not establish on this chip (slice count:
the fingerprints merge slices; sets per slice and the set hash: the slice
hash uses 11 of the 14 in-page line bits, so one page holds only 8 lines of
a slice). The model takes those from REFERENCE.json (profiles/hopper-like.json:
60 slices x 256 sets x 16 ways x 128 B per partition, an H200-like table
slice hash), scaled so that one partition holds the measured first level.
The provenance note records which fields are measured and which assumed.
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    meas = json.load(open(sys.argv[1]))
    report = open(sys.argv[2]).read()
    ref = json.load(open(sys.argv[3]))
    out = sys.argv[4]
    ml, rl = meas["l2"], ref["l2"]
    for key in ("line_bytes", "sector_bytes", "ways", "partitions", "policy", "topology"):
        if ml.get(key) in (None, "", 0):
            sys.exit(f"h200_model_profile: the measured profile lacks l2.{key}")
    m = re.search(r"^hit skew over \(SM, slice\)\s+(\d+)", report, re.M)
    if not m:
        sys.exit("h200_model_profile: the report has no 'hit skew over (SM, slice)' row")
    spread = float(m.group(1))

    model = json.loads(json.dumps(ref))  # deep copy: geometry, hashes, noise
    model["name"] = "nvidia-h200-model"
    l2 = model["l2"]
    for key in ("line_bytes", "sector_bytes", "ways", "partitions", "policy", "topology"):
        l2[key] = ml[key]
    lat = ml["latency_cycles"]
    l2["latency_cycles"] = {"hit": None, "near_hit": lat["near_hit"], "far_hit": lat["far_hit"]}
    if lat.get("far_stream_extra") is not None:
        l2["latency_cycles"]["far_stream_extra"] = lat["far_stream_extra"]
    l2["levels_from_one_sm"] = ml["levels_from_one_sm"]
    # one partition holds the measured first level: sets per slice from it
    spp = rl["slices"] // rl["partitions"]
    level1 = ml["levels_from_one_sm"][0]["capacity_bytes"]
    sets = max(1, round(level1 / (spp * ml["ways"] * ml["line_bytes"])))
    if sets & (sets - 1):  # keep the reference's XOR set index: a power of two
        sets = 1 << (sets.bit_length() - 1) if sets < 1.5 * (1 << (sets.bit_length() - 1)) \
            else 1 << sets.bit_length()
    l2["sets_per_slice"] = sets
    l2["capacity_bytes"] = rl["slices"] * sets * ml["ways"] * ml["line_bytes"]
    model["memory"]["dram_latency_cycles"] = meas["memory"]["dram_latency_cycles"]
    model["timer"]["overhead_cycles"] = meas["timer"]["overhead_cycles"]
    model["sim"]["sm_slice_skew_cycles"] = round(spread / 0.9, 1)
    if meas.get("smem"):  # shared memory: measured as a whole (stage smem)
        model["smem"] = meas["smem"]
    model["confidence"] = {}
    model["provenance"] = {
        "kind": "reference",
        "tool_version": meas["provenance"].get("tool_version", ""),
        "note": (
            "model of the measured H200 (profiles/nvidia-h200.json, discovery seed %s): line, "
            "sector, ways, partitions, policy, topology, near/far/DRAM latencies (with the extra "
            "cost of far hits back to back), timer overhead, levels and the smem section are measured; the per-(SM, slice) skew amplitude is the measured 95-5 "
            "percentile hit spread (%g cycles) / 0.9; slices (%d), the slice and set hashes and "
            "the noise are assumed from profiles/hopper-like.json (discovery could not establish "
            "them on this chip, see docs/nvidia-h200.md), sets per slice (%d) so that one "
            "partition holds the measured first level (scripts/h200_model_profile.py)"
            % (meas["provenance"].get("seed"), spread, rl["slices"], sets)
        ),
    }
    with open(out + ".tmp", "w") as f:
        json.dump(model, f, indent=2)
        f.write("\n")
    import os
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
