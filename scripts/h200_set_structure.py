#!/usr/bin/env python3
"""h200_set_structure.py CLASSES.csv[.gz] [SLICE]

The structure of one L2 slice's set index from its congruence classes
(bench/slice_capacity --classes: rows slice,class,offset over a physically
contiguous region of 2 MiB pages). Prints, for SLICE (default 0):

1. the in-page translations d (x -> x xor d, both lines of the slice in one
   page) that map every class onto one class (a permutation of the sets):
   the slice-preserving kernel K of the slice hash acts on the sets;
2. the K-orbits of the sets, and the blocks: orbits that consecutive home
   cosets (x xor K, one home partition) of a page fill together;
3. pair-blocks: blocks that always follow each other; the segment length
   (in lines) over which a pair-block stays constant, and the purity of
   pair-block = f(floor((line - phase) / segment));
4. within one pair-block, the sets of two segments as the same 6-bit
   position XOR a constant per segment (distinct XORs per pair of segments);
5. the sequence f over the segments, and whether it is an affine function
   over Z_5 of the segment number's bits (with an unknown offset).

Example:
  scripts/h200_set_structure.py data/nvidia-h200/setclass-2026-12-03/classes64.csv.gz
"""
import collections
import csv
import gzip
import itertools
import sys

PAGE_SHIFT = 21
LINE_SHIFT = 7
PAGE_MASK = (1 << PAGE_SHIFT) - 1


def read_classes(path, want):
    opener = gzip.open if path.endswith(".gz") else open
    cof = {}
    with opener(path, "rt") as f:
        for r in csv.DictReader(f):
            if int(r["slice"]) == want:
                cof[int(r["offset"])] = int(r["class"])
    return cof


def consistent_translations(cof):
    """In-page XORs d whose class map is a function over all lines it applies to."""
    pages = collections.defaultdict(list)
    for o in cof:
        pages[o >> PAGE_SHIFT].append(o)
    maps, bad, uses = collections.defaultdict(dict), collections.Counter(), collections.Counter()
    for lines in pages.values():
        for a in lines:
            ca = cof[a]
            for b in lines:
                if a == b:
                    continue
                d = a ^ b
                uses[d] += 1
                if maps[d].setdefault(ca, cof[b]) != cof[b]:
                    bad[d] += 1
    n = len(cof)
    return sorted(d for d in uses if uses[d] == n and not bad[d]), uses, bad


def union_find():
    par = {}

    def find(a):
        while par.setdefault(a, a) != a:
            par[a] = par[par[a]]
            a = par[a]
        return a

    def join(a, b):
        par[find(a)] = find(b)

    return find, join


def span(vecs):
    s = [0]
    for v in vecs:
        s += [x ^ v for x in s]
    return s


def basis(vecs):
    out = []
    for v in vecs:
        w = v
        for b in out:
            w = min(w, w ^ b)
        if w:
            out.append(w)
    return out


def split_mask(pairs, bits):
    """The lowest-weight parity over `bits` that every pair (a, b) differs in."""
    for r in range(1, 6):
        for comb in itertools.combinations(bits, r):
            m = sum(1 << b for b in comb)
            if all(bin((a ^ b) & m).count("1") % 2 for a, b in pairs):
                return m
    return 0


def z5_affine_misfit(seq, nbits, offsets):
    """Least number of inconsistent equations of seq[n] = c + sum w_j bit_j(n + n0)
    over Z_5, over the offsets n0 and the labelings of the 5 symbols (up to
    affine maps)."""
    best = None
    inv = [0, 1, 3, 2, 4]
    for n0 in offsets:
        for perm in itertools.permutations([2, 3, 4]):
            lab = [0, 1] + list(perm)
            rows = [[1] + [((n + n0) >> j) & 1 for j in range(nbits)] + [lab[v]]
                    for n, v in enumerate(seq) if v >= 0]
            m, r = nbits + 1, 0
            for c in range(m):
                pr = next((i for i in range(r, len(rows)) if rows[i][c] % 5), None)
                if pr is None:
                    continue
                rows[r], rows[pr] = rows[pr], rows[r]
                iv = inv[rows[r][c] % 5]
                rows[r] = [(x * iv) % 5 for x in rows[r]]
                for i in range(len(rows)):
                    if i != r and rows[i][c] % 5:
                        f = rows[i][c]
                        rows[i] = [(x - f * y) % 5 for x, y in zip(rows[i], rows[r])]
                r += 1
            bad = sum(1 for i in range(r, len(rows)) if rows[i][m] % 5)
            if best is None or bad < best[0]:
                best = (bad, n0, lab)
    return best


def swizzled_value_fit(f, lab, sh, npb, max_err=6):
    """f(n) = value(N') mod npb, N = n + n0, N' = N with its low b = log2(sh) bits
    mapped by a GF(2) matrix (columns cols), the bits from b up as they are:
    labels along the shift's cycle (+1 a step) scaled by sh mod npb. Depth-first
    over the columns, at most max_err of the sh residues wrong. Returns the
    best (errors, n0, cols) or None."""
    b = sh.bit_length() - 1
    mul = sh % npb
    best = None
    for n0 in range(sh):
        g = collections.defaultdict(collections.Counter)
        for n, x in enumerate(f):
            if x >= 0:
                t = n + n0
                g[t % sh][(mul * lab[x] - mul * (t // sh)) % npb] += 1
        e = {m: c.most_common(1)[0][0] for m, c in g.items()}
        for c0 in range(npb):
            t = {m: (v - c0) % npb for m, v in e.items()}
            if t.get(0, 0) != 0:
                continue
            found = []

            def dfs(j, cols, errs):
                if j == b:
                    found.append((errs, list(cols)))
                    return
                for vj in range(sh):
                    if vj % npb != t.get(1 << j, vj % npb):
                        continue
                    err = errs
                    for m in range(1 << j, 1 << (j + 1)):
                        val = vj
                        for i in range(j):
                            if m >> i & 1:
                                val ^= cols[i]
                        if m in t and val % npb != t[m]:
                            err += 1
                            if err > max_err:
                                break
                    if err <= max_err:
                        cols.append(vj)
                        dfs(j + 1, cols, err)
                        cols.pop()
                    if len(found) > 50:
                        return

            dfs(0, [], 0)
            for errs, cols in found:
                if best is None or errs < best[0]:
                    best = (errs, n0, cols)
    return best


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    want = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    cof = read_classes(sys.argv[1], want)
    offs = sorted(cof)
    classes = sorted(set(cof.values()))
    print(f"slice {want}: {len(offs)} lines, {len(classes)} classes, "
          f"{len(set(o >> PAGE_SHIFT for o in offs))} pages")

    # 1. translations acting on the sets
    good, uses, bad = consistent_translations(cof)
    kern = basis(good)
    print(f"1. {len(good)} in-page XORs map every line's class onto one class: "
          f"{' '.join(hex(d) for d in good)}; basis K = {' '.join(hex(d) for d in kern)}")
    partial = sorted((d for d in uses if uses[d] >= 200 and not bad[d] and d not in good),
                     key=lambda d: -uses[d])[:8]
    print("   others consistent where they apply (partner partition, other table entries): " +
          " ".join(f"{hex(d)}({uses[d]})" for d in partial))

    # 2. K-orbits and blocks
    find, join = union_find()
    for o in offs:
        for d in kern:
            if o ^ d in cof:
                join(cof[o], cof[o ^ d])
    orbit_of = {c: find(c) for c in classes}
    orbit_id = {r: i for i, r in enumerate(sorted(set(orbit_of.values())))}
    ks = span(kern)
    coset = {}
    for o in offs:
        coset.setdefault(min(o ^ d for d in ks), orbit_id[orbit_of[cof[o]]])
    # home partition: the parity that splits the pairs of cosets sharing an orbit in a page
    by_op = collections.defaultdict(list)
    for b, orb in coset.items():
        by_op[(orb, b >> PAGE_SHIFT)].append(b & PAGE_MASK)
    pairs = [tuple(v) for v in by_op.values() if len(v) == 2]
    home_mask = split_mask(pairs, list(range(LINE_SHIFT, PAGE_SHIFT)))
    home = sorted(b for b in coset if bin(b & home_mask).count("1") % 2 == 0)
    print(f"2. {len(orbit_id)} K-orbits of {len(classes) // max(1, len(orbit_id))} sets; "
          f"{len(coset)} cosets of {len(ks)} lines; the pairs of a page's cosets on one "
          f"orbit split by the parity {hex(home_mask)} (home partition): {len(home)} home cosets")
    seq = [coset[b] for b in home]
    fj, jj = union_find()
    co = collections.Counter(frozenset((a, b)) for a, b in zip(seq, seq[1:]) if a != b)
    # orbits that follow each other at least N/140 times (N home cosets; on
    # the 64-page classes: 10 of 1394) are of one block
    join_at = len(seq) / 140.0
    for k, v in co.items():
        if v >= join_at:
            a, b = tuple(k)
            jj(a, b)
    block_of = {o: fj(o) for o in orbit_id.values()}
    blocks = sorted(set(block_of.values()))
    sizes = collections.Counter(collections.Counter(block_of.values()).values())
    print(f"   {len(blocks)} blocks (orbits consecutive home cosets fill together), "
          f"orbits a block: {dict(sizes)}")

    # 3. pair-blocks and segments
    bseq = [block_of[o] for o in seq]
    adj = collections.Counter()
    runs = [k for k, _ in itertools.groupby(bseq)]
    for a, b in zip(runs, runs[1:]):
        adj[(a, b)] += 1
    partner = {}
    for (a, b), v in adj.most_common():
        if a not in partner and b not in partner:
            partner[a], partner[b] = b, a
    pair_of = {b: min(b, partner.get(b, b)) for b in blocks}
    pblocks = sorted(set(pair_of.values()))
    pb_index = {p: i for i, p in enumerate(pblocks)}
    pseq = [pb_index[pair_of[b]] for b in bseq]
    lines = [b >> LINE_SHIFT for b in home]
    # a segment holds one pair-block: per cosets (its sets over the coset's lines)
    per = len(classes) // max(1, len(pblocks)) // max(1, len(ks))
    expect = (lines[-1] - lines[0]) * per / max(1, len(home))
    best = None
    for seg in range(int(0.8 * expect), int(1.25 * expect) + 1, 16):
        for phase in range(0, seg, max(16, seg // 64)):
            g = collections.defaultdict(collections.Counter)
            for L, p in zip(lines, pseq):
                g[(L - phase) // seg][p] += 1
            pur = sum(c.most_common(1)[0][1] for c in g.values())
            if best is None or pur > best[0]:
                best = (pur, seg, phase)
    pur, seg, phase = best
    print(f"3. {len(pblocks)} pair-blocks of {len(classes) // max(1, len(pblocks))} sets; "
          f"pair-block = f(floor((line - {phase}) / {seg})) for {pur} of {len(home)} home "
          f"cosets ({100.0 * pur / len(home):.1f}%)")
    g = collections.defaultdict(collections.Counter)
    for L, p in zip(lines, pseq):
        g[(L - phase) // seg][p] += 1
    f = [g[n].most_common(1)[0][0] if n in g else -1 for n in range(max(g) + 1)]
    print("   f over the segments: " + "".join("ABCDEFGHIJ"[v] if v >= 0 else "?" for v in f))

    # 4. one pair-block's sets in two segments: position XOR a constant
    kbits = kern[:3] if len(kern) >= 3 else kern
    byseg = collections.defaultdict(list)
    for b in home:
        byseg[((b >> LINE_SHIFT) - phase) // seg].append(b)

    def table(n):
        cs = byseg[n]
        if len(cs) != per:
            return None
        out = {}
        for pos, b in enumerate(cs):
            for k in range(len(ks)):
                d = 0
                for j, v in enumerate(kbits):
                    if k >> j & 1:
                        d ^= v
                out[pos * len(ks) + k] = cof.get(b ^ d)
        return out

    xor_counts = collections.Counter()
    for p in range(len(pblocks)):
        ns = [n for n in range(len(f)) if f[n] == p and table(n)]
        if len(ns) < 2:
            continue
        ref = table(ns[0])
        lbl = {c: i for i, c in ref.items()}
        for n in ns[1:]:
            t = table(n)
            if set(t.values()) != set(ref.values()):
                continue
            xor_counts[len(set(lbl[c] ^ i for i, c in t.items()))] += 1
    print("4. segments of one pair-block: distinct XORs between their position tables "
          f"(1 = the same 6-bit labels XOR a constant): {dict(sorted(xor_counts.items()))}")

    # 5. f's balance, periodicity (any shift, any relabelling), and affinity
    cnt = collections.Counter(v for v in f if v >= 0)
    shifts = []
    for sh in range(1, len(f) - 20):
        m = collections.defaultdict(collections.Counter)
        for i in range(len(f) - sh):
            if f[i] >= 0 and f[i + sh] >= 0:
                m[f[i]][f[i + sh]] += 1
        tot = sum(sum(c.values()) for c in m.values())
        shifts.append((sum(c.most_common(1)[0][1] for c in m.values()) / max(1, tot), sh))
    agree, sh = max(shifts)
    print(f"5. f takes each pair-block {min(cnt.values())}-{max(cnt.values())} times; the best "
          f"shift with a relabelling (f(n + s) = p(f(n))) agrees {100 * agree:.0f}% (s = {sh})")
    # power-of-two shifts: is f(n + s) = p(f(n)) with p one cycle through every pair-block
    # (then, labelled along the cycle, f(n + s) = f(n) + 1 mod 5)?
    for sh in (2 ** k for k in range(3, 10)):
        if sh > len(f) // 2:
            break
        m = collections.defaultdict(collections.Counter)
        for i in range(len(f) - sh):
            if f[i] >= 0 and f[i + sh] >= 0:
                m[f[i]][f[i + sh]] += 1
        tot = sum(sum(c.values()) for c in m.values())
        p = {a: c.most_common(1)[0][0] for a, c in m.items()}
        agree = sum(c[p[a]] for a, c in m.items()) / max(1, tot)
        seen, a = [], 0
        while a in p and a not in seen:
            seen.append(a)
            a = p[a]
        cyc = len(seen) == len(pblocks) and a == 0
        print(f"   shift {sh}: f(n + {sh}) = p(f(n)) for {100 * agree:.0f}% of {tot} pairs"
              f"{', p one cycle: ' + '->'.join('ABCDEFGHIJ'[x] for x in seen) if cyc else ''}")
        if cyc and agree > 0.6:
            # labelled along the cycle: f(n) - floor(n / sh) as one function of n mod sh
            lab = {a: i for i, a in enumerate(seen)}
            npb = len(pblocks)
            best = 0.0
            for n0 in range(sh):
                g = collections.defaultdict(collections.Counter)
                for n, x in enumerate(f):
                    if x >= 0:
                        g[(n + n0) % sh][(lab[x] - (n + n0) // sh) % npb] += 1
                best = max(best, sum(c.most_common(1)[0][1] for c in g.values()) /
                           max(1, sum(sum(c.values()) for c in g.values())))
            print(f"   labelled along it, f(n) - floor(n / {sh}) mod {npb} is one function of "
                  f"n mod {sh} for {100 * best:.0f}% of the segments (best phase)")
            fit = swizzled_value_fit(f, lab, sh, npb)
            if fit:
                errs, n0, cols = fit
                print(f"   f(n) = value(N') mod {npb} (labels scaled so that +{sh} adds {sh} mod "
                      f"{npb}), N = n + {n0}, N' = N with its low {sh.bit_length() - 1} bits "
                      f"mapped over GF(2), bit j -> {' '.join(hex(c) for c in cols)}: "
                      f"{errs} of {sh} residues wrong")
    # is f an affine Z_5 function of the segment number's bits?
    if len(pblocks) == 5:
        bad, n0, lab = z5_affine_misfit(f, (len(f) + 511).bit_length(), range(0, 512))
        rows = sum(1 for v in f if v >= 0)
        print(f"   f = c + sum w_j bit_j(n + n0) over Z_5: at best {bad} of {rows} equations "
              f"inconsistent (n0 = {n0}): not affine in the bits")


if __name__ == "__main__":
    main()
