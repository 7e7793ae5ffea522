#!/usr/bin/env python3
"""h200_tlb_section.py CURVES.csv FINE.csv PROFILE.json [PROFILE.json ...]

Writes the `tlb` section of the H200 profiles (profiles/nvidia-h200.json,
the measured one, and profiles/nvidia-h200-model.json, the simulable one)
from the raw translation-chase curves of bench/xchase_curve
(data/nvidia-h200/tlb/curves-2026-12-02/) and the SM x SM interference runs
(data/nvidia-h200/tlb/share-2026-12-02/). docs/nvidia-h200.md ("TLB") says
how each field was read; in short:

- Latencies come from the curves here: plateau means at 32 MiB apart (every
  page its own 32 MiB entry): 2-16 pages (first level), 23-2048 (second),
  2304-8192 (third), 9216 on (the walk). Their differences are each level's
  hit latency (the first's adds to every access and is 0 here: a chase
  cannot tell it from the L2 hit) and miss_cycles.
- The geometry is read off the same curves and checked by replaying them on
  the model (tests/h200_tlb_model.sh, every point within 5%):
  * L1: 16 entries, fully associative, 32 MiB each (the tlb stage, 3 runs).
  * L2: 2048 entries = 256 sets x 8 ways of 32 MiB, xor index (the fold of
    VA / 32 MiB in 8-bit chunks): 2048 pages hit at every power-of-two
    stride from 32 MiB to 1 GiB, 2176 = 2048 + 128 miss 53% (128 sets of 9
    pages: 1152 / 2176), 2304 all; conflicts from ~724 pages at 96 MiB.
  * L3: 8192 entries = 1024 sets x 8 ways of 32 MiB, set bit 0 = bit 0 of
    VA / 32 MiB and bits 1-9 = the 9-bit fold of VA / 64 MiB: it holds 8192
    pages 32 MiB apart but 4096 at every power-of-two stride of 64 MiB or
    more (one half of the sets), and its gradual misses at 34, 96 and 192
    MiB fit within 1.3%.
  * hit_fills_entry: a chase over consecutive 2 MiB granules stays at the
    first level's cost up to 32768 granules, and one 6 MiB apart past the
    second level's reach costs ~20 cycles, not the third level's 89: a hit
    deeper down fills the nearer levels with the whole 32 MiB entry.
  * Sharing (share-2026-12-02, diag-2026-12-02): L1 per SM (no SM disturbs
    it), L2 shared by SMs 0, 1, 48 and 49 of those tried (4 SMs, not
    contiguous in the SM order, which the model's domains are: the profile
    keeps the TPC of 2 that the tlb stage finds), L3 by every SM tried (the
    GPU).
- Not measured (model inputs only): the walker's count and queue (a
  dependent chase has one walk in flight), the page table's levels (Hopper's
  five levels over 2 MiB pages: [1, 9, 9, 9, 8, 9] bits, NVIDIA's open kernel
  driver), 8-byte PTEs with 128-byte fetches (16 PTEs: one walk fills a
  32 MiB entry), the walk as five fixed-cost reads (walk / 5; the walk costs
  5% more at 1 GiB apart than at 32 MiB: the fixed walk is the mean over
  the strides, so 32 MiB comes out 2% slow and 1 GiB 3% fast).
"""
import csv
import json
import sys

MiB = 1 << 20


def plateau(rows, stride, lo, hi):
    v = [m for (s, n), m in rows.items() if s == stride and lo <= n <= hi]
    if not v:
        sys.exit(f"h200_tlb_section: no points at {stride >> 20} MiB, {lo}-{hi} pages")
    return sum(v) / len(v)


def level(name, entries, ways, sharing, hit, miss, index=None, masks=None):
    d = {"name": name, "entries": entries, "ways": ways, "entry_bytes": 32 * MiB,
         "sharing": sharing, "hit_latency_cycles": hit, "miss_cycles": miss, "policy": "lru",
         "outstanding_misses": 0}
    if index:
        d["index"] = index
    if masks:
        d["set_masks"] = masks
    return d


def fold_masks(bits, shift, chunks):
    """Masks of the fold of (e >> shift) in `bits`-bit chunks, as masks over e."""
    return [sum(1 << (shift + i + bits * c) for c in range(chunks)) for i in range(bits)]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rows = {}
    for f in sys.argv[1:3]:
        for r in csv.DictReader(open(f)):
            rows[(int(r["stride_bytes"]), int(r["steps"]))] = float(r["mean"])
    s = 32 * MiB
    base = plateau(rows, s, 2, 16)
    l2hit = plateau(rows, s, 23, 2048)
    l3hit = plateau(rows, s, 2304, 8192)
    # the walk costs more the further apart the pages (810 at 32 MiB, 853 at
    # 1 GiB: page-walk caches); the model's fixed walk is its mean over the
    # power-of-two strides measured, at chains every level misses
    walks = [plateau(rows, k * MiB, 16384, 32768) for k in (32, 64, 128, 512, 1024)]
    walk = sum(walks) / len(walks)
    r1 = lambda x: round(x, 1)
    # VA / 32 MiB spans 57 - 25 = 32 bits: 4 chunks of 8, 4 of 9 (above bit 0)
    l3_masks = [1] + fold_masks(9, 1, 4)
    tlb = {
        "sms_per_tpc": 2,
        "sms_per_gpc": None,
        "hit_fills_entry": True,
        "page_table": {"page_sizes": [4096, 65536, 2 * MiB], "default_page_bytes": 2 * MiB,
                       "regions": [], "level_bits": [1, 9, 9, 9, 8, 9], "pte_bytes": 8},
        "levels": [
            level("L1", 16, 16, "sm", 0, r1(l2hit - base)),
            level("L2", 2048, 8, "tpc", r1(l2hit - base), r1(l3hit - l2hit), "xor"),
            level("L3", 8192, 8, "gpu", r1(l3hit - l2hit), r1(walk - l3hit), "xor", l3_masks),
        ],
        "walker": {"fetch_bytes": 128, "walkers": 8, "queue_entries": 0,
                   "fixed_read_cycles": r1((walk - l3hit) / 5), "pwc": None,
                   "neighbour_pwc": None,
                   "note": "measured: the walk's cost (five fixed reads of walk / 5); assumed: "
                           "walkers, queue, page-table levels, PTE and fetch bytes "
                           "(scripts/h200_tlb_section.py)"},
        "coalescer": {"window_cycles": 0, "max_granule_bytes": 2 * MiB,
                      "size_predictor_bits": 4, "predict_small_bytes": 4096,
                      "predict_large_bytes": 2 * MiB, "neighbour_predictor_bits": 4,
                      "line_group_pages": 16},
    }
    for path in sys.argv[3:]:
        p = json.load(open(path))
        p["tlb"] = tlb
        with open(path + ".tmp", "w") as f:
            json.dump(p, f, indent=2)
            f.write("\n")
        import os
        os.replace(path + ".tmp", path)
    print(f"base {base:.1f}, L2 hit +{l2hit - base:.1f}, L3 hit +{l3hit - l2hit:.1f}, "
          f"walk +{walk - l3hit:.1f}")


if __name__ == "__main__":
    main()
