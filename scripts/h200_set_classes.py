#!/usr/bin/env python3
"""h200_set_classes.py CLASSES.csv[.gz] [LINES.csv[.gz]]

What the congruence classes of one L2 slice (bench/slice_capacity --classes,
rows slice,class,offset) say about the set index: class sizes (a set's lines
in the region), lines a class holds in each 2 MiB page, the XOR of two lines
of one class in one page (the pairs), the GF(2) rank of the XORs of a
class's lines (a linear set bit would leave a rank below the bits'), and the
classes two pages share (consecutive sets per page would share few). Only
the classes found before the unassigned lines ran low are read (the last
ones may merge sets): those up to the first of more than 1.1 x the median.
With LINES (bench/slice_capacity --lines): the region's lines of the slice,
so the sets = lines / mean class size.
Example: scripts/h200_set_classes.py data/nvidia-h200/setclass-2026-12-03/classes.csv.gz \\
  data/nvidia-h200/setclass-2026-12-03/lines.csv.gz
"""
import collections
import csv
import gzip
import random
import sys

PAGE_SHIFT = 21
LINE_SHIFT = 7


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(f))


def rank(vecs):
    basis = {}
    for v in vecs:
        while v:
            h = v.bit_length() - 1
            if h not in basis:
                basis[h] = v
                break
            v ^= basis[h]
    return len(basis)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    by_slice = collections.defaultdict(lambda: collections.defaultdict(list))
    order = collections.defaultdict(list)
    for r in rows(sys.argv[1]):
        s, k = int(r["slice"]), int(r["class"])
        if k not in by_slice[s]:
            order[s].append(k)
        by_slice[s][k].append(int(r["offset"]))
    lines = collections.Counter()
    if len(sys.argv) == 3:
        for r in rows(sys.argv[2]):
            lines[int(r["slice"])] += 1
    for s, cl in sorted(by_slice.items()):
        sizes = [len(cl[k]) for k in order[s]]
        med = sorted(sizes)[len(sizes) // 2]
        good = []
        for k in order[s]:
            if len(cl[k]) > 1.1 * med:
                break
            good.append(sorted(cl[k]))
        n = sum(len(v) for v in good)
        print(f"slice {s}: {len(sizes)} classes, {len(good)} read (sizes "
              f"{dict(sorted(collections.Counter(len(v) for v in good).items()))}), mean "
              f"{n / len(good):.2f}" + (f"; {lines[s]} lines / mean = {lines[s] * len(good) / n:.1f} sets"
                                        if lines[s] else ""))
        if len(good) == len(sizes) and lines[s] == n:
            print(f"  every line in one of {len(good)} classes: {len(good)} sets")
        per_page = collections.Counter()
        pairs = collections.Counter()
        pages = collections.defaultdict(set)
        for i, v in enumerate(good):
            pg = collections.defaultdict(list)
            for a in v:
                pg[a >> PAGE_SHIFT].append(a)
                pages[a >> PAGE_SHIFT].add(i)
            per_page.update(len(x) for x in pg.values())
            for x in pg.values():
                for a in range(len(x)):
                    for b in range(a + 1, len(x)):
                        pairs[x[a] ^ x[b]] += 1
        print(f"  lines of a class in a page it touches: {dict(sorted(per_page.items()))}")
        print("  most common XOR of two lines of a class in one page: " +
              " ".join(f"{d:#x}:{c}" for d, c in pairs.most_common(8)))
        hi = max(a for v in good for a in v).bit_length()
        random.seed(1)
        ranks = collections.Counter(
            rank([(a ^ v[0]) >> LINE_SHIFT for a in random.sample(v, min(len(v), 30))])
            for v in good for _ in range(4))
        print(f"  GF(2) rank of a class's XORs over bits {LINE_SHIFT}..{hi - 1} (30 lines, 4 draws "
              f"a class): {dict(sorted(ranks.items()))} (full: {hi - LINE_SHIFT})")
        np_ = max(pages) + 1
        m = sum(len(x) for x in pages.values()) / np_
        for d in (1, 2, 4):
            ov = [len(pages[p] & pages[p + d]) for p in range(np_ - d)]
            print(f"  classes pages p and p+{d} share: {sum(ov) / len(ov):.1f} "
                  f"(of {m:.1f} a page; independent pages: {m * m / len(good):.1f})")


if __name__ == "__main__":
    main()
