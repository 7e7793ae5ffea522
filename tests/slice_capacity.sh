#!/usr/bin/env bash
# slice_capacity.sh - bench/slice_capacity on the sim target: the lines of one
# slice found by contention alone across 32 pages, then chased in prefixes;
# the chase must stay at the hit plateau while the prefix fits the slice's
# sets x ways and rise within a few steps past it (the knee that gives the
# sets per slice on a GPU, docs/nvidia-h200.md). hopper-like: near-far with
# copies, 256 sets x 16 ways a slice (read from the profile: a test may know
# the truth; the bench does not). Then bad input: an unknown option and a
# bad --pages, each exit 2. Then --classes (the congruence classes).
# Usage: bash tests/slice_capacity.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: slice_capacity.sh /path/to/gpuxray}
sc="$(dirname "$gx")/slice_capacity"
[ -x "$sc" ] || { echo "FAIL: slice_capacity not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
p=profiles/hopper-like.json
if ! "$sc" --target "sim:$p" --pages 32 --slices 1 --step 256 -o "$T/c.csv" >"$T/out" 2>"$T/err"; then
  echo "FAIL: slice_capacity exit $? ($(tail -1 "$T/err"))"; exit 1
fi
python3 - "$p" "$T/c.csv" <<'PY' || fail=1
import csv, json, sys
l2 = json.load(open(sys.argv[1]))["l2"]
cap = l2["sets_per_slice"] * l2["ways"]
rows = [(int(r["chain"]), float(r["mean_cycles"])) for r in csv.DictReader(open(sys.argv[2]))]
flat = [m for n, m in rows if n <= cap // 2]
far = [m for n, m in rows if 1.4 * cap <= n <= 1.8 * cap]
if not flat or not far:
    sys.exit(f"FAIL: the chase did not reach 1.8 x the slice's {cap} lines ({rows[-1][0]})")
lo, hi = sum(flat) / len(flat), sum(far) / len(far)
onset = next((n for n, m in rows if m > lo + 0.25 * (hi - lo)), None)
print(f"hit plateau {lo:.1f}, past the slice {hi:.1f}, onset at {onset} lines; "
      f"the slice holds {cap}")
if hi - lo < 100 or onset is None or not (0.9 * cap <= onset <= 1.15 * cap):
    sys.exit(f"FAIL: onset {onset} is not the slice's capacity {cap}")
PY
# --classes: congruence classes by minimal eviction sets, each one set of the
# truth (hopper-320-contiguous: bits 13..26 of the physical address modulo
# 320, frames consecutive from an unknown first frame: the test tries each),
# and about lines / sets of them a class
q=tests/data/hopper-320-contiguous.json
if ! "$sc" --target "sim:$q" --pages 16 --slices 1 --step 1048576 --classes 6 \
     --classes-csv "$T/cls.csv" >"$T/cout" 2>"$T/cerr"; then
  echo "FAIL: slice_capacity --classes exit $? ($(tail -1 "$T/cerr"))"; fail=1
else
python3 - "$T/cls.csv" <<'PY' || fail=1
import collections, csv, sys
cl = collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    cl[int(r["class"])].append(int(r["offset"]))
if len(cl) != 6:
    sys.exit(f"FAIL: {len(cl)} classes, want 6")
def pure(c):  # every class in one set, for the first frame's bits c
    return all(len({(((a >> 13) + c) & 0x3FFF) % 320 for a in v}) == 1 for v in cl.values())
firsts = [c for c in range(0, 1 << 14, 256) if pure(c)]
sizes = sorted(len(v) for v in cl.values())
want = 16 * 512 / 320  # 16 pages of 2 MiB, 2 lines of the slice an 8 KiB block, 320 sets
print(f"classes: {len(cl)} of {sizes[0]}..{sizes[-1]} lines, one set each: {bool(firsts)}")
if not firsts or sizes[0] < want - 3 or sizes[-1] > want + 3:
    sys.exit(f"FAIL: classes not one set each or sizes {sizes} not about {want}")
PY
fi
"$sc" --target "sim:$p" --bogus 1 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: unknown option exit $rc, want 2"; fail=1; }
"$sc" --target "sim:$p" --pages 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --pages 0 exit $rc, want 2"; fail=1; }
[ $fail -eq 0 ] && echo "slice_capacity: ok"
exit $fail
