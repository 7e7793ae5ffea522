#!/usr/bin/env python3
"""h200_measured_sets.py MODEL.json SLICES.json CLASSES.csv[.gz] OUT.json

Puts the H200's measured slices and set index into the model profile:
- from SLICES.json (a discovery profile of the chip whose slices stage found
  them by contention, e.g. data/nvidia-h200/discovery/dev29_run1/profile.json):
  l2.slices, l2.partitions and l2.hash.slice (masks + a table of the slice
  within a partition: the near partition holds every line an SM reads, so
  timing gives the slice within a partition, docs/profile-format.md);
- from CLASSES (bench/slice_capacity --classes or the sets stage: one
  slice's lines of a fresh allocation sorted into their sets by eviction,
  rows slice,class,offset): l2.sets_per_slice and l2.hash.set as a table
  over the line bits 7..7+WINDOW_BITS-1 (a 2^WINDOW_BITS-line window of
  the address, repeating above it). The set of a line is the set the slice's
  measured lines take in offset order, at the line's rank among the lines
  of its slice in the window: the r-th line of every slice goes where the
  r-th measured line of slice 0 went. Measured for slice 0 only; for the
  others it is a rule for the sets' loads, not line for line (slice 1's
  measured lines match it for 65%, yet fill their sets alike over every
  prefix: docs/nvidia-h200.md, "The knee from the measured sets").
Everything else of MODEL.json (latencies, levels, noise, skew, tlb, smem) is
kept; capacity_bytes follows the new geometry, and the provenance note says
what is measured. Writes OUT.json whole or not at all.
"""
import csv
import gzip
import json
import os
import sys

WINDOW_BITS = 20  # 128 MiB of 128-byte lines: past the DRAM knee (~64 MiB), where the sets decide
LINE_SHIFT = 7


def parity(x):
    return bin(x).count("1") & 1


def classes_by_offset(path, slice_id="0"):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = [(int(r["offset"]), int(r["class"])) for r in csv.DictReader(f)
                if r["slice"] == slice_id]
    rows.sort()
    labels = {}
    seq = []
    for _, c in rows:
        seq.append(labels.setdefault(c, len(labels)))
    return seq, len(labels)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    model = json.load(open(sys.argv[1]))
    meas = json.load(open(sys.argv[2]))
    seq, sets = classes_by_offset(sys.argv[3])
    out = sys.argv[4]
    ml = meas["l2"]
    sh = ml.get("hash", {}).get("slice")
    if not sh or not sh.get("table") or not ml.get("slices") or not ml.get("partitions"):
        sys.exit("h200_measured_sets: %s has no slices, partitions and slice table" % sys.argv[2])
    masks = [int(m, 16) for m in sh["masks"]]
    table = sh["table"]
    spp = ml["slices"] // ml["partitions"]
    if max(table) >= spp:
        sys.exit("h200_measured_sets: the slice table is not one of the slice within a partition")
    rank = [0] * spp
    set_table = []
    for line in range(1 << WINDOW_BITS):
        pa = line << LINE_SHIFT
        v = 0
        for i, m in enumerate(masks):
            v |= parity(pa & m) << i
        s = table[v]
        r = rank[s]
        rank[s] += 1
        if r >= len(seq):
            sys.exit("h200_measured_sets: the classes hold %d lines of the slice, the window "
                     "needs %d" % (len(seq), r + 1))
        set_table.append(seq[r])
    l2 = model["l2"]
    l2["slices"] = ml["slices"]
    l2["partitions"] = ml["partitions"]
    l2["sets_per_slice"] = sets
    l2["capacity_bytes"] = ml["slices"] * sets * l2["ways"] * l2["line_bytes"]
    l2["hash"] = {
        "slice": {"masks": sh["masks"], "table": table,
                  "note": "measured by contention (%s)" % os.path.basename(os.path.dirname(sys.argv[2]))},
        "set": {"masks": ["0x%x" % (1 << (LINE_SHIFT + j)) for j in range(WINDOW_BITS)],
                "table": set_table,
                "note": "the measured sets of one slice's lines by rank (scripts/h200_measured_sets.py)"},
    }
    # the chip's large allocations are physically contiguous, and two of
    # them (two chips) began at the same place of the indexes: the model's
    # arenas take consecutive frames from an aligned start (placement.c)
    model.setdefault("sim", {})["contiguous_frames"] = True
    prov = model.setdefault("provenance", {})
    note = prov.get("note", "")
    # what h200_model_profile.py said was assumed, or this script's own
    # note on a second run, is replaced
    cut = min((i for i in (note.find("; the noise is assumed"), note.find("; slices (")) if i >= 0),
              default=-1)
    prov["note"] = ((note[:cut] if cut >= 0 else note) +
                    "; the noise is assumed from profiles/hopper-like.json "
                    "(scripts/h200_model_profile.py); slices (%d) and partitions and the slice "
                    "hash measured by contention (%s), sets per slice (%d) and the set index from "
                    "the congruence classes of one slice's %d lines (%s), every slice taken to "
                    "fill its sets by rank as that one does; consecutive frames from an aligned "
                    "start, as the chip's large allocations (scripts/h200_measured_sets.py)"
                    % (ml["slices"], sys.argv[2], sets, len(seq), sys.argv[3]))
    # the two tables on one line each (1 + 2^20 entries: a line an entry
    # would make the file a million lines)
    big = {}
    for k in ("slice", "set"):
        key = "@@%s_table@@" % k
        big[key] = json.dumps(l2["hash"][k]["table"], separators=(",", ":"))
        l2["hash"][k]["table"] = key
    text = json.dumps(model, indent=2)
    for key, val in big.items():
        text = text.replace('"%s"' % key, val)
    with open(out + ".tmp", "w") as f:
        f.write(text + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
