#!/usr/bin/env python3
"""h200_contend_table.py CSV[.gz] MASK...

Checks a slice hash's masks against contention classes: every line of a page
maps to a table entry (the parities of its in-page address under each mask);
the masks hold when every entry's lines fall in one class, and then a page's
class of every line follows from one line an entry. Input: bench/contend_classes
-o (rows page,line,class; page 0 grouped, the other pages joined to its classes,
so labels are shared) or part.csv (header sm,line,class,...: the first SM's
page). Prints per page: entries, those with more than one class, entries per
class, and for pages after the first whether their table is page 0's under an
XOR constant on the entry (the same labels). Exit 1 when an entry mixes classes.
Example: scripts/h200_contend_table.py data/nvidia-h200/contend-2026-12-02/part.csv.gz \\
  0x10100 0x10400 0x10800 0x1000 0x2000 0x14000 0x8000 0x20000 0x40000 0x80000 0x100000
"""
import collections
import csv
import gzip
import sys

LINE_BYTES = 128


def read_pages(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    pages = collections.defaultdict(dict)
    if rows and rows[0][0] == "sm":  # part.csv: the first SM's lines of one page
        head, body = rows[0], rows[1:]
        sm = body[0][head.index("sm")]
        for r in body:
            if r[head.index("sm")] == sm:
                pages[0][int(r[head.index("line")])] = int(r[head.index("class")])
    else:
        for r in rows:
            if len(r) >= 3:
                pages[int(r[0])][int(r[1])] = int(r[2])
    return pages


def table_of(lines, masks):
    entries = collections.defaultdict(set)
    for line, cls in lines.items():
        addr = line * LINE_BYTES
        e = sum((bin(addr & m).count("1") & 1) << i for i, m in enumerate(masks))
        entries[e].add(cls)
    return entries


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    masks = [int(m, 16) for m in sys.argv[2:]]
    pages = read_pages(sys.argv[1])
    mixed_any = 0
    first = None
    for p in sorted(pages):
        entries = table_of(pages[p], masks)
        mixed = sum(1 for c in entries.values() if len(c) > 1)
        mixed_any += mixed
        per_class = collections.Counter(next(iter(c)) for c in entries.values() if len(c) == 1)
        line = (f"page {p}: {len(pages[p])} lines, {len(entries)} entries, {mixed} with more than "
                f"one class, {len(per_class)} classes of {min(per_class.values())}-"
                f"{max(per_class.values())} entries")
        table = {e: next(iter(c)) for e, c in entries.items() if len(c) == 1}
        if first is None:
            first = table
        elif not mixed and len(table) == len(first):
            xs = [c for c in range(1 << len(masks))
                  if all(first.get(e ^ c) == v for e, v in table.items())]
            line += f"; page 0's table under XOR {hex(xs[0])}" if xs else "; not page 0's table under any XOR"
        print(line)
    return 1 if mixed_any else 0


if __name__ == "__main__":
    sys.exit(main())
