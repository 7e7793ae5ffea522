#!/usr/bin/env python3
"""h200_hash.py - slice classes and the page structure of the H200 L2 hash,
from data/nvidia-h200/hash/ (bench/cuda_hashprobe.c). Standard library only.

  python3 scripts/h200_hash.py [DATA_DIR]     (default data/nvidia-h200/hash)

Steps (numbers printed as it goes, about 6 minutes on one core):
 1. granule and 512-byte pairing: distance of a granule's 32-SM fingerprint
    to that of the granule 256 B / 512 B away;
 2. classes: units = granule pairs (g, g^512 B) averaged; single-linkage
    components of page 0 at 7 cycles, split by k-means into ~43-unit
    classes (94 atomic classes), then merged pairwise while the same-class
    pairs (g, g^512 B) of pages 0-7 disagree, until < 0.08 % disagree;
 3. every page labelled with per-(page, SM) drift offsets removed;
 4. structure: per-bit flips, XOR translation between pages, components;
 5. prediction of arena B (fresh allocation) pages from 81 random units
    (162 lines, < 1 % of 16384) against the full measurement.
Notes: a "unit" index i holds address bit 8 in bit 0 and address bits
10..20 in bits 1..11 (address bit 9 never changes the class).
"""
import collections, gzip, math, os, random, statistics, sys

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join("data", "nvidia-h200", "hash")
NG, NS, NU = 8192, 32, 4096


def load(name):
    b = gzip.open(os.path.join(D, name + ".u8.gz")).read()
    return b, len(b) // (NG * NS)


def vec(b, p, g, lo=0, hi=NS):
    o = (p * NG + g) * NS
    return b[o + lo:o + hi]
def comps(X,t):
    n=len(X); par=list(range(n))
    def f(i):
        while par[i]!=i:
            par[i]=par[par[i]]; i=par[i]
        return i
    for i in range(n):
        xi=X[i]
        for j in range(i):
            if math.dist(xi,X[j])<t:
                ri,rj=f(i),f(j)
                if ri!=rj: par[ri]=rj
    return [f(i) for i in range(n)]

def kmeans(X,K,iters=20,seed=1,restarts=5):
    best=None
    for r in range(restarts):
        rnd=random.Random(seed+r)
        C=[X[rnd.randrange(len(X))]]
        while len(C)<K:
            D=[min(math.dist(x,c) for c in C)**2 for x in X]
            s=sum(D); z=rnd.random()*s; acc=0
            for i,w in enumerate(D):
                acc+=w
                if acc>=z: break
            C.append(X[i])
        for it in range(iters):
            lab=[min(range(K),key=lambda k:math.dist(x,C[k])) for x in X]
            S=[[0.0]*len(X[0]) for _ in range(K)];N=[0]*K
            for x,l in zip(X,lab):
                N[l]+=1; s=S[l]
                for j,v in enumerate(x): s[j]+=v
            C=[tuple(v/N[k] for v in S[k]) if N[k] else C[k] for k in range(K)]
        sse=sum(math.dist(x,C[l])**2 for x,l in zip(X,lab))
        if best is None or sse<best[0]: best=(sse,C,lab)
    return best[1],best[2]
def nearest(X,C):
    lab=[];marg=[];res=[]
    for x in X:
        d=sorted((math.dist(x,c),k) for k,c in enumerate(C))
        lab.append(d[0][1]);res.append(d[0][0]);marg.append(d[1][0]-d[0][0])
    return lab,res,marg
def units(b,p,lo=0,hi=32):
    U=[]
    for g in range(NG):
        if g&2: continue
        x=vec(b,p,g,lo,hi); y=vec(b,p,g^2,lo,hi)
        U.append(tuple((u+v)/2 for u,v in zip(x,y)))
    return U
def means(X,lab,K):
    S=[[0.0]*len(X[0]) for _ in range(K)];N=[0]*K
    for x,l in zip(X,lab):
        N[l]+=1; s=S[l]
        for j,v in enumerate(x): s[j]+=v
    return [tuple(v/N[k] for v in S[k]) for k in range(K) if N[k]],N


def meta_pages(key):
    for line in open(os.path.join(D, "meta.txt")):
        if line.startswith(key + " "):
            return [int(x) for x in line.split()[1:]]
    return []


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def step_granule(a):
    X0 = [tuple(vec(a, 0, g)) for g in range(NG)]
    X45 = [tuple(vec(a, 45, g)) for g in range(NG)]
    for name, d in (("256 B (bit 8)", 1), ("512 B (bit 9)", 2)):
        v = [math.dist(X0[g], X0[g ^ d]) for g in range(NG) if not g & d]
        print("  distance to the granule %s away: min %.1f median %.1f max %.1f" % (name, min(v), pct(v, .5), max(v)))
    v = [math.dist(X0[g], X45[g]) for g in range(NG)]
    print("  same granule re-measured 16 s later: min %.1f median %.1f max %.1f" % (min(v), pct(v, .5), max(v)))


def step_classes(a):
    X = units(a, 0)
    lab = comps(X, 7.0)
    groups = collections.defaultdict(list)
    for i, l in enumerate(lab):
        groups[l].append(X[i])
    C = []
    for G in groups.values():
        k = max(1, round(len(G) / 43))
        C += [means(G, [0] * len(G), 1)[0][0]] if k == 1 else kmeans(G, k)[0]
    print("  page 0: %d single-linkage components, %d atomic classes after splitting by size" % (len(groups), len(C)))
    P = range(8)
    Gx, Gid = [], []
    for p in P:
        for g in range(NG):
            Gx.append(tuple(vec(a, p, g)))
            Gid.append((p, g))
    idx = {k: i for i, k in enumerate(Gid)}
    while True:
        l, _, _ = nearest(Gx, C)
        C, N = means(Gx, l, len(C))
        l, _, _ = nearest(Gx, C)
        cnt = collections.Counter(l)
        conf, dis, tot = collections.Counter(), 0, 0
        for i, (p, g) in enumerate(Gid):
            if g & 2:
                continue
            j = idx[(p, g ^ 2)]
            tot += 1
            if l[i] != l[j]:
                dis += 1
                conf[tuple(sorted((l[i], l[j])))] += 1
        print("  %3d classes: (g, g^512B) label disagreement %.4f" % (len(C), dis / tot))
        if dis / tot < 0.0008 or not conf:
            break
        (c1, c2), m = max(conf.items(), key=lambda kv: kv[1] / (cnt[kv[0][0]] + cnt[kv[0][1]]))
        n1, n2 = cnt[c1], cnt[c2]
        new = tuple((x * n1 + y * n2) / (n1 + n2) for x, y in zip(C[c1], C[c2]))
        C = [c for k, c in enumerate(C) if k not in (c1, c2)] + [new]
    sizes = collections.Counter(round(cnt[k] / len(P) / 86) for k in range(len(C)))
    print("  resolved classes: %d; size in atomic units (1/94 of a page) -> count: %s" % (len(C), dict(sorted(sizes.items()))))
    return C


def label(buf, p, C):
    X = units(buf, p)
    off = [0.0] * NS
    for _ in range(3):
        Xc = [tuple(v - o for v, o in zip(x, off)) for x in X]
        l, _, _ = nearest(Xc, C)
        off = [off[s] + statistics.fmean(Xc[i][s] - C[l[i]][s] for i in range(len(X))) for s in range(NS)]
    Xg = [tuple(v - o for v, o in zip(vec(buf, p, g), off)) for g in range(NG)]
    gl, _, _ = nearest(Xg, C)
    self9 = sum(1 for g in range(NG) if not g & 2 and gl[g] == gl[g ^ 2]) / (NG / 2)
    return l, self9


def main():
    a, npa = load("a")
    b, npb = load("b")
    pa, pb = meta_pages("pages_a"), meta_pages("pages_b")
    print("1. granule")
    step_granule(a)
    print("2. classes")
    C = step_classes(a)
    print("3. labels")
    LA, LB, s9a, s9b = {}, {}, [], []
    for p in range(npa):
        LA[p], s = label(a, p, C)
        s9a.append(s)
    for p in range(npb):
        LB[p], s = label(b, p, C)
        s9b.append(s)
    print("  repeat of arena A page 0 (16 s later): %.4f of units same class" % (sum(x == y for x, y in zip(LA[0], LA[npa - 1])) / NU))
    print("  self-consistency (g, g^512B same class) per page: A min %.4f mean %.4f; B min %.4f mean %.4f"
          % (min(s9a), statistics.fmean(s9a), min(s9b), statistics.fmean(s9b)))
    print("4. structure")
    for p in (0, 1):
        print("  page %d, same class after flipping address bit:" % pa[p],
              " ".join("%d:%.2f" % (8 if i == 0 else 9 + i, sum(LA[p][u] == LA[p][u ^ (1 << i)] for u in range(NU)) / NU) for i in range(12)))
    lib = [LA[p] for p in range(npa - 1)]
    inv = [collections.defaultdict(list) for _ in lib]
    for t, L in enumerate(lib):
        for v, c in enumerate(L):
            inv[t][c].append(v)

    def vote(meas, t):
        votes = collections.Counter()
        for u, c in meas:
            for v in inv[t][c]:
                votes[u ^ v] += 1
        return votes.most_common(1)[0]

    rnd = random.Random(7)
    comp, nc = [-1] * len(lib), 0
    for i in range(len(lib)):
        if comp[i] >= 0:
            continue
        comp[i] = nc
        meas = [(u, lib[i][u]) for u in rnd.sample(range(NU), 81)]
        for j in range(i + 1, len(lib)):
            if comp[j] < 0 and vote(meas, j)[1] >= 75:
                comp[j] = nc
        nc += 1
    print("  components (pages that are XOR translates of each other) among %d pages: %d" % (len(lib), nc))
    for c in range(nc):
        m = [pa[i] for i in range(len(lib)) if comp[i] == c]
        if len(m) > 1:
            print("    same component:", m, "differences mod 47:", [(x - m[0]) % 47 for x in m])
    res = collections.Counter(p % 47 for p in pa[:-1])
    print("  residues mod 47 present in the library: %d of 47" % len(res))
    print("5. prediction of arena B pages from 81 units (162 lines)")
    shift = None
    for p in range(npb):
        meas = [(u, LB[p][u]) for u in rnd.sample(range(NU), 81)]
        (x, m), t = max(((vote(meas, t), t) for t in range(len(lib))), key=lambda z: z[0][1])
        if m < 81 - 4:
            print("  B page %2d: no library component fits (best %d/81); residue (p+%s) mod 47 = %s"
                  % (p, m, shift, None if shift is None else (p + shift) % 47))
            continue
        shift = (pa[t] - p) % 47
        pred = [collections.Counter() for _ in range(NU)]
        for j in range(len(lib)):
            if comp[j] == comp[t]:
                xj, _ = vote(meas, j)
                for u in range(NU):
                    pred[u][lib[j][u ^ xj]] += 1
        P = [c.most_common(1)[0][0] for c in pred]
        ok = sum(P[u] == LB[p][u] for u in range(NU))
        print("  B page %2d: component of A page %4d (residue %2d = (p+%d) mod 47), %d/81 fit; predicted = measured on %.4f of units (%d differ), page self-consistency %.4f"
              % (p, pa[t], pa[t] % 47, shift, m, ok / NU, NU - ok, s9b[p]))


if __name__ == "__main__":
    main()
