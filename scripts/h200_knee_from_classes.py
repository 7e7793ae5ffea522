#!/usr/bin/env python3
"""h200_knee_from_classes.py CURVE.csv CLASSES.csv[.gz] [CLASSES2.csv[.gz] ...]

What the measured set index predicts of the latency-versus-footprint curve.
CLASSES are one L2 slice's lines of a fresh allocation sorted into their sets
by eviction (bench/slice_capacity --classes: rows slice,class,offset, the
offset in the allocation); CURVE is the chase curve measured on the chip
(bench/cuda_probe curve: rows sm,footprint_bytes,...,mean_cycles, one SM, a
random cyclic chain over the first footprint_bytes of a fresh allocation).

Model (nothing fitted to the knees):
- A random cyclic chain over F bytes puts, in each set of the slice, the
  lines of the slice below F that the classes give it: n(set, F).
- LRU over a cycle keeps all of a set's lines when they fit and none when
  they do not: the near partition (WAYS ways) serves the lines of sets with
  n <= WAYS; the far partition (the near one's victims, WAYS more ways, an
  exclusive pair as the profile's near-far with victims_to_far) serves those
  of sets with WAYS < n <= 2 WAYS; the rest go to DRAM. Measured on the chip:
  16 ways, lru, near-far (docs/nvidia-h200.md, "Parameters").
- The three latencies are the curve's own plateaus (medians of its points
  below 0.7 x, between 1.35 x and 1.8 x, and above 4 x the near level's
  capacity, 320 sets x WAYS x the slice count x 128 B, taken as 29.375 MiB
  from the measured 47 x 320 x 16 x 128 B): they set the levels, not where
  or how softly the curve moves between them.
- Every slice is taken to load its sets as the one in CLASSES does (slices 0
  and 1 of the same allocation give the same fractions).

Prints one row a footprint inside the classes' region (error of the
prediction against the measurement) and, with several CLASSES, whether their
common lines fall into the same sets under one relabelling (two allocations,
or two chips). Exit 1 when any footprint's error exceeds --bar percent
(default 5) or the classes disagree.

--control balanced|random replaces the measured sets by an index that is not
the chip's, as a check that the comparison can fail: `balanced` gives the
slice's r-th line (offset order) set r mod S (every set filled evenly: a sharp
knee), `random` a seeded uniform set a line (the unevenness of a hash).
"""
import argparse
import collections
import csv
import gzip
import random
import statistics
import sys

NEAR_CAPACITY = 47 * 320 * 16 * 128  # bytes: the near level the classes' sets make


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(f))


def slice_lines(path):
    """{slice: [(offset, class)] in offset order}"""
    out = collections.defaultdict(list)
    for r in rows(path):
        out[r["slice"]].append((int(r["offset"]), int(r["class"])))
    for v in out.values():
        v.sort()
    return out


def plateaus(curve):
    pts = [(int(r["footprint_bytes"]), float(r["mean_cycles"])) for r in curve]

    def med(lo, hi):
        v = [m for f, m in pts if lo * NEAR_CAPACITY <= f < hi * NEAR_CAPACITY]
        if not v:
            sys.exit("h200_knee_from_classes: the curve has no point between %.2f and %.2f x "
                     "the near capacity" % (lo, hi))
        return statistics.median(v)

    return med(0, 0.7), med(1.35, 1.8), med(4, float("inf"))


def fractions(lines, footprint, ways):
    """(near, far) shares of the chain's lines of this slice below footprint"""
    n = collections.Counter(c for off, c in lines if off < footprint)
    total = sum(n.values())
    near = sum(k for k in n.values() if k <= ways)
    far = sum(k for k in n.values() if ways < k <= 2 * ways)
    return near / total, far / total, max(n.values())


def agree(a, b):
    """lines of a and b at the same offsets; of them, those whose class in b is
    the image of their class in a under one relabelling; and whether that
    relabelling is one to one"""
    cb = dict(b)
    img = collections.defaultdict(collections.Counter)
    for off, c in a:
        if off in cb:
            img[c][cb[off]] += 1
    common = sum(sum(v.values()) for v in img.values())
    good = sum(v.most_common(1)[0][1] for v in img.values())
    one_to_one = len({v.most_common(1)[0][0] for v in img.values()}) == len(img)
    return common, good, one_to_one


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[2])
    ap.add_argument("curve")
    ap.add_argument("classes", nargs="+")
    ap.add_argument("--ways", type=int, default=16)
    ap.add_argument("--bar", type=float, default=5.0)
    ap.add_argument("--control", choices=("balanced", "random"))
    a = ap.parse_args()
    curve = rows(a.curve)
    near_c, far_c, dram_c = plateaus(curve)
    print("plateaus from the curve: near %.1f, far %.1f, DRAM %.1f cycles" % (near_c, far_c, dram_c))
    ok = True
    sets = [slice_lines(p) for p in a.classes]
    if a.control:
        rng = random.Random(1)
        for by_slice in sets:
            for sl, lines in by_slice.items():
                n = len({c for _, c in lines})
                by_slice[sl] = [(off, k % n if a.control == "balanced" else rng.randrange(n))
                                for k, (off, _) in enumerate(lines)]
    for path, by_slice in zip(a.classes, sets):
        for sl, lines in sorted(by_slice.items()):
            region = lines[-1][0]
            worst = 0.0
            print("%s slice %s: %d lines, %d sets, region %.1f MiB" %
                  (path, sl, len(lines), len({c for _, c in lines}), region / 2**20))
            for r in curve:
                f = int(r["footprint_bytes"])
                if f > region or f < 0.5 * NEAR_CAPACITY:
                    continue
                near, far, most = fractions(lines, f, a.ways)
                pred = near * near_c + far * far_c + (1 - near - far) * dram_c
                meas = float(r["mean_cycles"])
                err = 100 * (pred / meas - 1)
                worst = max(worst, abs(err))
                print("  %7.1f MiB  most in a set %3d  near %.3f far %.3f  predicted %6.1f"
                      "  measured %6.1f  %+5.1f%%" % (f / 2**20, most, near, far, pred, meas, err))
            print("  worst %.1f%% (bar %.1f%%)" % (worst, a.bar))
            ok &= worst <= a.bar
    for i in range(1, len(sets)):
        for sl in sorted(set(sets[0]) & set(sets[i])):
            common, good, bij = agree(sets[0][sl], sets[i][sl])
            print("%s and %s, slice %s: %d common lines, %d in the same set under one "
                  "relabelling%s" % (a.classes[0], a.classes[i], sl, common, good,
                                     "" if bij else " (NOT one to one)"))
            ok &= common > 0 and good == common and bij
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
