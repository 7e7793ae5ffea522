#!/usr/bin/env python3
"""h200_contend_table.py PART.csv.gz MASK...

Checks a slice hash's masks against contention classes: every line of the
page (part.csv.gz from bench/contend_classes: sm,line,class,...) maps to a
table entry (the parities of the line address under each mask); the masks
hold when every entry's lines fall in one class. Prints the number of
entries, those with more than one class and the entries per class.
Example: scripts/h200_contend_table.py data/nvidia-h200/contend-2026-12-02/part.csv.gz \
  0x10100 0x10400 0x10800 0x1000 0x2000 0x14000 0x8000 0x20000 0x40000 0x80000 0x100000
"""
import collections
import csv
import gzip
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    masks = [int(m, 16) for m in sys.argv[2:]]
    with gzip.open(sys.argv[1], "rt") as f:
        rows = list(csv.DictReader(f))
    sm = rows[0]["sm"]
    entries = collections.defaultdict(set)
    for r in rows:
        if r["sm"] != sm:
            continue
        addr = int(r["line"]) * 128
        e = sum((bin(addr & m).count("1") & 1) << i for i, m in enumerate(masks))
        entries[e].add(int(r["class"]))
    mixed = sum(1 for c in entries.values() if len(c) > 1)
    per_class = collections.Counter(next(iter(c)) for c in entries.values() if len(c) == 1)
    print(f"sm {sm}: {len(entries)} entries, {mixed} with more than one class, "
          f"{len(per_class)} classes of {min(per_class.values())}-{max(per_class.values())} entries")
    return 1 if mixed else 0


if __name__ == "__main__":
    sys.exit(main())
