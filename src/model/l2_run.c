/* l2_run.c - the L2's specialised batch run (gx_l2_run on the straight
 * path: uniform topology, no noise, the 16-way tree PLRU / plru-rand cache
 * instance, at most 4 hash tables), split from l2.c along its seam: the
 * same model, sector for sector and draw for draw, as gx_l2_access on each
 * access (tests/test_l2.c checks it against single accesses). The notes of
 * gx_l2_run_fast below say how; l2.c keeps the general path. */
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "gpuxray/bits.h"
#include "l2_internal.h"

/* What gx_l2_run_fast adds to the tally for one access of a given (SM, home
 * slice, outcome): the latency (level + skew, as finish() in l2.c computes
 * it), the fixed-point amount gx_cyc_add adds for it, and its histogram bin
 * (gx_l2_tally_add's rule for bins - 1 = l2->rlat_top). The latency of an
 * access on the fast path depends on nothing else, so the per-access
 * arithmetic of gx_l2_tally_add becomes a table read. */
/* gx_l2_run_fast's outcome of a repeat of the sector before (a hit, no lookup) */
#define RUN_REPEAT 3

typedef struct run_lat {
    gx_cyc_sum inc; /* gx_cyc_add(&0, lat) (0 for NaN, whole cycles beyond 2^31) */
    double lat;
    uint32_t bin;   /* min(round(lat) half up, negatives 0; rlat_top) (bins are uint32) */
    uint32_t slice; /* the entry's home slice (the counting mode's slice count) */
} run_lat;

static uint64_t tally_bin(double lat, uint64_t top)
{
    int64_t b = (int64_t)(lat + 0.5); /* as gx_l2_tally_add */
    uint64_t bin = b > 0 ? (uint64_t)b : 0;
    return bin < top ? bin : top;
}

/* One entry of l2->rlat for latency lat. */
static run_lat run_lat_of(double lat, uint64_t top, uint32_t slice)
{
    run_lat e = {{0}, lat, (uint32_t)tally_bin(lat, top), slice};
    gx_cyc_add(&e.inc, lat);
    return e;
}

/* l2->rlat: entry (sm * slices + slice) * 4 + o for every SM and slice, o
 * the outcome or RUN_REPEAT (a hit); bins clamped to top; with plus, every
 * latency extra + the L2's (gx_l2_run_plus: the sum its caller forms). */
static int build_run_lat(gx_l2 *l2, uint64_t top, int plus, double extra)
{
    const size_t rows = (size_t)l2->sm_count * l2->slices;
    if (!l2->rlat && !(l2->rlat = malloc(rows * 4 * sizeof *l2->rlat)))
        return GX_ENOMEM;
    if (!l2->rcnt && !(l2->rcnt = calloc(rows * 4, sizeof *l2->rcnt)))
        return GX_ENOMEM;
    const double hitc = l2->level_cycles[GX_L2_NEAR], dramc = l2->level_cycles[GX_L2_DRAM];
    for (size_t r = 0; r < rows; r++) {
        const double skew = l2->skew ? (double)l2->skew[r] : 0.0;
        /* as finish() in l2.c: the skew added only when there is one */
        const uint32_t sl = (uint32_t)(r % l2->slices);
        const double hl = l2->skew ? hitc + skew : hitc, ml = l2->skew ? dramc + skew : dramc;
        const run_lat hit = run_lat_of(plus ? extra + hl : hl, top, sl);
        const run_lat miss = run_lat_of(plus ? extra + ml : ml, top, sl);
        run_lat *e = &l2->rlat[4 * r];
        e[GX_CACHE_HIT] = hit;
        e[GX_CACHE_SECTOR_MISS] = miss;
        e[GX_CACHE_LINE_MISS] = miss;
        e[RUN_REPEAT] = hit;
    }
    l2->rlat_top = top;
    l2->rlat_plus = plus;
    l2->rlat_extra = extra;
    l2->rlat_ok = 1;
    return GX_OK;
}

#define RUN_BLOCK 512 /* entries per block (4 KiB of locations on the stack) */
#define RUN_DIRTY 4096 /* the counting mode's entries between folds (16 KiB) */
#define RUN_DIRECT_RUNS 16 /* runs in the direct mode after a run of ~1 access an entry */
/* (SM, slice) rows of l2->rlat at most (40 MiB with the counts; the largest
 * card of the generator, 132 SMs x 1024 slices, takes 21 MiB); beyond,
 * the general path */
#define RUN_LAT_MAX_ROWS (1u << 18)

/* A block's location word per entry: the set's block offset in the cache
 * ((s * sps + k) * GX_CSPEC_BLOCK, so a lookup adds it to the cache's
 * memory: no multiply; measured 185.2 -> 184.2 instructions an access,
 * random 64 MiB binary) in bits 0-31, home
 * slice in bits 32-41, once looked up the outcome (or RUN_REPEAT) in bits
 * 42-43, the entry's row of l2->rlat (sm * slices + slice) in bits 44-61
 * (gx_l2_run_fast_ready checks that offsets fit 32 bits and rows 18; slices
 * are <= 1024, a profile rule). RUN_LOC_ENTRY: the entry's index into
 * l2->rlat, 4 * row + outcome, one shift (the outcome below the row: a
 * shift and a mask less an access in the statistics pass); RUN_LOC_ROW4:
 * 4 * row, the row's first entry (its outcomes follow). */
#define RUN_LOC_OFF(x) ((uint32_t)(x))
#define RUN_LOC_SLICE(x) ((uint32_t)((x) >> 32) & 0x3ffu)
#define RUN_LOC_ENTRY(x) ((uint32_t)((x) >> 42))
#define RUN_LOC_ROW4(x) (RUN_LOC_ENTRY(x) & ~3u)
#define RUN_LOC_OUT(x) (RUN_LOC_ENTRY(x) & 3u)
/* The word of set s * sps + k, slice s, SM sm: sm * RUN_LOC_SMK(slices) +
 * s * RUN_LOC_SK(sps) + k * GX_CSPEC_BLOCK (no carries: each field within
 * its bits) */
#define RUN_LOC_SMK(slices) ((uint64_t)(slices) << 44)
#define RUN_LOC_SK(sps) \
    (((uint64_t)1 << 44) + ((uint64_t)1 << 32) + (uint64_t)(sps) * GX_CSPEC_BLOCK)
#define RUN_LOC_OUT_SHIFT 42

/* The policy's constants for run_lookup16, in the caller's locals: keep /
 * setm the touch masks (bits & keep | setm), the victim's rng the slice's
 * stream (rngs[s & rmask]: rmask 0 when the cache has one stream). */
typedef struct run_pol {
    uint64_t keep[16], setm[16]; /* ~clear[w], set[w] of gx_policy_fast */
    uint16_t lm_top[128], lm_low[256]; /* gx_policy_fast's leaf masks (16 ways) */
    gx_rng *rngs;
    uint32_t rmask;
    uint64_t thr;
    int rand_on, rand_always;
} run_pol;

/* plru-rand's random victim (gx_pf_rng_below16), out of line: inlined, the
 * compiler kept the state of the draw before it in registers for it, which
 * spilled the common path's values. */
static __attribute__((noinline)) uint32_t run_random_way(gx_rng *r)
{
    return gx_pf_rng_below16(r);
}

/* One lookup (and fill on a miss) of line in the 16-way PLRU set at blk, the
 * work of gx_caccess_nc_s for GX_CSPEC_PLRU16: the same ways, masks and
 * policy state, the same draws. Returns the outcome; *cold counts a fill
 * of an invalid way (every other line miss evicts: the caller derives the
 * evictions, one count less a miss). */
static inline __attribute__((always_inline)) gx_cache_outcome
run_lookup16(uint8_t *blk, uint64_t line, uint32_t bit, uint64_t x, const run_pol *pol,
             uint64_t *cold, int prand)
{
    const gx_cview v = {blk, blk + GX_CSPEC_OFF_MASKS, blk + GX_CSPEC_OFF_STATE,
                        blk + GX_CSPEC_OFF_USED, (uint64_t *)(void *)(blk + GX_CSPEC_OFF_TAGS),
                        0};
    uint64_t *const st = (uint64_t *)v.st;
    const uint8_t fp = gx_cfingerprint(line);
    size_t w = 16; /* none */
#ifdef __SSE2__
    /* gx_cv_find with the common case first: no fingerprint matches (a line
     * miss: one branch to the fill, not two) */
    uint32_t cand = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_load_si128((const __m128i *)(const void *)v.fps),
                       _mm_set1_epi8((char)fp)));
    if (__builtin_expect(cand != 0, 0))
        for (; cand; cand &= cand - 1)
            if (v.tags[(uint32_t)__builtin_ctz(cand)] == line) {
                w = (uint32_t)__builtin_ctz(cand);
                break;
            }
#else
    const int fw = gx_cv_find(&v, 16, 0xffff, line, fp, GX_CSPEC_PLRU16);
    w = fw >= 0 ? (size_t)fw : 16;
#endif
    if (w < 16) {
        const uint32_t m = v.masks[w];
        *st = (*st & pol->keep[w]) | pol->setm[w];
        if (m & bit)
            return GX_CACHE_HIT;
        v.masks[w] = (uint8_t)(m | bit);
        return GX_CACHE_SECTOR_MISS;
    }
    size_t u = 0;
    uint64_t bits;
    if (__builtin_expect(*v.used < 16, 0)) { /* as gx_cv_fill: the first invalid way */
        for (u = 0; u < 16 && v.tags[u] != GX_TAG_INVALID; u++)
            ;
        (*v.used)++;
        (*cold)++;
        bits = *st;
    } else { /* gx_pf_plru_victim_s, ways16 */
        const uint32_t s = RUN_LOC_SLICE(x); /* the entry's home slice */
        gx_rng *r = pol->rngs + (prand ? s : s & pol->rmask);
        const int rnd = prand ? gx_pf_rng_next(r) < pol->thr
                              : pol->rand_on && (pol->rand_always || gx_pf_rng_next(r) < pol->thr);
        if (rnd)
            u = run_random_way(r);
        /* the set's policy bits read after the draw, not held across it (the
         * draw's registers spilled them: 176.8 -> 175.9 instructions an access) */
        bits = *st;
        if (!rnd)
            u = (uint32_t)__builtin_ctz((uint32_t)pol->lm_top[(bits >> 1) & 0x7f] &
                                        pol->lm_low[(bits >> 8) & 0xff]);
    }
    *st = (bits & pol->keep[u]) | pol->setm[u];
    v.tags[u] = line;
    v.fps[u] = fp;
    v.masks[u] = (uint8_t)bit;
    return GX_CACHE_LINE_MISS;
}

/* A set's block into the host's caches (gx_cprefetch_s, GX_CSPEC_PLRU16). */
static inline void run_prefetch(const uint8_t *blk)
{
    for (size_t o = 0; o < GX_CSPEC_BLOCK; o += 64)
        __builtin_prefetch(blk + o, 1, 3);
}

/* The counting mode's state (gx_l2_run_fast): accesses per l2->rlat entry,
 * the entries that went from 0, in the order of their first access. */
typedef struct run_count {
    uint64_t *cnt;
    uint32_t *dirty;
    size_t nd;
} run_count;

/* The lookups of one block in order (gx_l2_run_fast's second pass), the set of
 * the entry RUN_AHEAD ahead prefetched, each entry's outcome put into its
 * location word, or with rc (an entry without repeats after it, the
 * counting mode) counted at once: the statistics pass's count of the entry
 * (l2->rlat index 4 * row + outcome) done here, the word left as it is.
 * With rc, a repeat of the sector before is looked up, not tested for (in
 * a block without folded repeats it is rare: different SMs or sizes): the
 * lookup finds the sector in the way the access before touched, a hit
 * whose touch repeats that one, and a hit counts as a repeat does (the
 * same latency entry, the same outcome count): the same statistics, no
 * test an access (measured 170.9 -> 165.0 instructions an access, random
 * 64 MiB binary).
 * Returns the sector number of the block's last access (the next block's
 * "access before"). lsh, ssh, smk: constants in the reference cards'
 * instance. */
static inline __attribute__((always_inline)) uint64_t
run_lookups_s(uint8_t *mem, const uint64_t *bp, uint64_t *loc, size_t bn, uint64_t rsec,
              uint32_t ssh, uint32_t lsh, uint32_t smk, const run_pol *pol, uint64_t *cold,
              int prand, run_count *rc)
{
    uint64_t ev = 0; /* fills of invalid ways */
    uint64_t *const cnt = rc ? rc->cnt : NULL;
    uint32_t *const dirty = rc ? rc->dirty : NULL;
    size_t nd = rc ? rc->nd : 0;
    for (size_t q = 0; q < bn && q < RUN_AHEAD; q++)
        run_prefetch(mem + RUN_LOC_OFF(loc[q]));
    size_t j;
/* Entry j's lookup (or repeat), its outcome into loc[j] or counted. */
#define RUN_ENTRY()                                                                        \
    do {                                                                                   \
        const uint64_t p = bp[j], x = loc[j];                                              \
        uint32_t o = RUN_REPEAT;                                                           \
        if (rc || (p >> ssh) != rsec) {                                                    \
            rsec = p >> ssh;                                                               \
            o = run_lookup16(mem + RUN_LOC_OFF(x), p >> lsh, 1u << ((uint32_t)rsec & smk), \
                             x, pol, &ev, prand);                                          \
        }                                                                                  \
        if (rc) {                                                                          \
            const uint64_t e = (x >> RUN_LOC_OUT_SHIFT) | o;                               \
            if (!cnt[e]++)                                                                 \
                dirty[nd++] = (uint32_t)e;                                                 \
        } else {                                                                           \
            loc[j] = x | (uint64_t)o << RUN_LOC_OUT_SHIFT;                                 \
        }                                                                                  \
    } while (0)
    /* the prefetch RUN_AHEAD ahead without a test, then the block's tail */
    for (j = 0; j + RUN_AHEAD < bn; j++) {
        run_prefetch(mem + RUN_LOC_OFF(loc[j + RUN_AHEAD]));
        RUN_ENTRY();
    }
    for (; j < bn; j++)
        RUN_ENTRY();
#undef RUN_ENTRY
    *cold += ev;
    if (rc)
        rc->nd = nd;
    return rsec;
}

/* Out of line, each with its own registers (inlined into gx_l2_run_fast, the
 * statistics' locals spilled the rng state on every victim): the
 * reference cards' 128-byte lines of four 32-byte sectors, with plru-rand:P
 * (0 < P < 1) and a stream a slice (run_pol_prand: the policy's tests and
 * the stream's mask constants; measured 227.5 -> 219.4 instructions an
 * access, random 64 MiB binary), any policy of them, and any line. */
static __attribute__((noinline)) uint64_t
run_lookups_128_32_prand(uint8_t *mem, const uint64_t *bp, uint64_t *loc, size_t bn,
                         uint64_t rsec, const run_pol *pol, uint64_t *cold)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, 5, 7, 3, pol, cold, 1, NULL);
}

/* The same, counted in the lookups (the counting mode's block without
 * repeats: random traces; measured 184.2 -> 180.4 instructions an access, random
 * 64 MiB binary). */
static __attribute__((noinline)) uint64_t
run_lookups_128_32_prand_count(uint8_t *mem, const uint64_t *bp, uint64_t *loc, size_t bn,
                               uint64_t rsec, const run_pol *pol, uint64_t *cold,
                               run_count *rc)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, 5, 7, 3, pol, cold, 1, rc);
}

#if GX_HOST_V3
/* The same code compiled for x86-64-v3 hosts (AVX2, BMI1/2: the
 * fingerprint's broadcast one instruction, shifts and rotates without
 * the flags or a copy), taken when the host has them (gx_host_v3;
 * measured 157.9 -> 153.0 instructions an access, random 64 MiB binary). */
static __attribute__((noinline)) GX_TARGET_V3 uint64_t
run_lookups_128_32_prand_count_v3(uint8_t *mem, const uint64_t *bp, uint64_t *loc, size_t bn,
                                  uint64_t rsec, const run_pol *pol, uint64_t *cold,
                                  run_count *rc)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, 5, 7, 3, pol, cold, 1, rc);
}
#endif

static __attribute__((noinline)) uint64_t run_lookups_128_32(uint8_t *mem, const uint64_t *bp,
                                                              uint64_t *loc, size_t bn,
                                                              uint64_t rsec, const run_pol *pol,
                                                              uint64_t *cold)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, 5, 7, 3, pol, cold, 0, NULL);
}

static __attribute__((noinline)) uint64_t run_lookups(uint8_t *mem, const uint64_t *bp,
                                                       uint64_t *loc, size_t bn, uint64_t rsec,
                                                       uint32_t ssh, uint32_t lsh, uint32_t smk,
                                                       const run_pol *pol, uint64_t *cold)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, ssh, lsh, smk, pol, cold, 0, NULL);
}

/* The policy plru-rand:P with 0 < P < 1 and one rng stream a slice: the
 * victim's draw always made, the stream the slice's (run_lookup16's prand). */
static int run_pol_prand(const run_pol *pol)
{
    return pol->rand_on && !pol->rand_always && pol->rmask == UINT32_MAX;
}

/* The fields locate_s(fast) and a location word read, copied into a local
 * (the stores of a locating pass may alias the L2's: reloaded each entry
 * otherwise). */
static inline __attribute__((always_inline)) void hash_fields(gx_l2 *h, const gx_l2 *l2)
{
    h->hbit0 = l2->hbit0;
    h->htab = l2->htab;
    h->slice_lut = l2->slice_lut;
    h->set_lut = NULL;
    h->set_mod = l2->set_mod;
    h->set_mod_m = l2->set_mod_m;
    h->n_hchunks = l2->n_hchunks;
    h->slices = l2->slices;
    h->sps = l2->sps;
}

/* The PA of va by the memo fm of shift fsh (gx_frame_pa, the shift in the
 * caller's local: a locating pass's stores may alias the memo's). */
static inline __attribute__((always_inline)) uint64_t memo_pa(gx_frame_memo *fm, uint32_t fsh,
                                                             uint64_t va)
{
    const uint64_t vfn = va >> fsh;
    const uint32_t i = (uint32_t)vfn & (GX_FRAME_MEMO - 1);
    if (__builtin_expect(fm->tag[i] != vfn, 0))
        fm->miss(fm, va);
    return va + fm->delta[i];
}

/* The location word of p from SM sm by the hash fields h (RUN_LOC_ words;
 * smk, sk, mm, db: the constants of run_locate_h), its home slice in *s. */
static inline __attribute__((always_inline)) uint64_t loc_word(const gx_l2 *h, uint64_t p,
                                                              uint32_t sm, uint64_t smk,
                                                              uint64_t sk, uint64_t mm,
                                                              uint64_t db, uint32_t *s)
{
    const uint64_t b = locate_bits(h, p, 1);
    const uint32_t sb = (uint32_t)b, kb = (uint32_t)(b >> 32);
    *s = h->slice_lut ? h->slice_lut[sb] : sb;
    return sm * smk + *s * sk + (uint64_t)(((unsigned __int128)(mm * kb) * db) >> 64);
}

/* The location words of n entries from h (run_locate's copy of the L2's
 * hash fields). */
static inline __attribute__((always_inline)) void run_locate_h(const gx_l2 *h,
                                                              const uint64_t *pa,
                                                              const uint32_t *sm, uint64_t *w,
                                                              size_t n, const gx_l2_va *v)
{
    /* v: each PA translated here first (gx_frame_pa, in order), written to
     * v->pa (the memo's shift in a local: the stores may alias it) */
    const uint64_t *const va = v ? v->va : NULL;
    uint64_t *const pw = v ? v->pa : NULL;
    gx_frame_memo *const fm = v ? v->m : NULL;
    const uint32_t fsh = v ? fm->shift : 0;
    const uint64_t smk = RUN_LOC_SMK(h->slices), sk = RUN_LOC_SK(h->sps);
    /* the set's block offset k * GX_CSPEC_BLOCK by locate_s's fastmod with
     * the block's bytes in the last multiply: ((M kb mod 2^64) * (d B)) >>
     * 64 = r B + floor(B c kb / 2^64) for kb = q d + r, c = M d - 2^64 < d
     * (0 for d a power of two), and B c kb < 2^64 as d B <= 2^32
     * (gx_l2_words_hold_sets: slices * sps * B within 32 bits, d <= sps):
     * exactly r B, no multiply by B (measured 160.9 -> 157.9 instructions
     * an access, random 64 MiB binary) */
    const uint64_t mm = h->set_mod_m, db = (uint64_t)h->set_mod * GX_CSPEC_BLOCK;
    for (size_t j = 0; j < n; j++) {
        uint64_t p;
        if (v) {
            p = memo_pa(fm, fsh, va[j]);
            pw[j] = p;
        } else {
            p = pa[j];
        }
        uint32_t s;
        w[j] = loc_word(h, p, sm[j], smk, sk, mm, db, &s);
    }
}

/* gx_l2_locate_split's pass over the hash fields h: each VA translated
 * (the memo, in order) and located as run_locate_h does, the entry (PA at
 * q, word at q + d) written to both outputs at their next places and the
 * place advanced in its owner's (self[s] of its slice s: 1 the second
 * output), so each output's entries come out in order with no branch an
 * entry. One distance d for both outputs keeps three pointers live, not
 * four arrays and two counts (those spilled to the stack: 51 -> 48
 * instructions an entry, callgrind, random 64 MiB binary). */
static inline __attribute__((always_inline)) size_t
run_locate_split_h(const gx_l2 *h, const uint64_t *va, gx_frame_memo *fm, const uint32_t *sm,
                   const uint8_t *self, size_t n, uint64_t *q0, uint64_t *q1, size_t d)
{
    const uint32_t fsh = fm->shift;
    const uint64_t smk = RUN_LOC_SMK(h->slices), sk = RUN_LOC_SK(h->sps);
    const uint64_t mm = h->set_mod_m, db = (uint64_t)h->set_mod * GX_CSPEC_BLOCK;
    uint64_t *const q1_0 = q1;
    for (size_t j = 0; j < n; j++) {
        const uint64_t p = memo_pa(fm, fsh, va[j]);
        uint32_t s;
        const uint64_t x = loc_word(h, p, sm[j], smk, sk, mm, db, &s);
        const size_t o = self[s];
        q0[0] = p;
        q0[d] = x;
        q1[0] = p;
        q1[d] = x;
        q1 += o;
        q0 += o ^ 1u;
    }
    return (size_t)(q1 - q1_0);
}

static inline __attribute__((always_inline)) size_t
run_locate_split_s(const gx_l2 *l2, const uint64_t *va, gx_frame_memo *fm, const uint32_t *sm,
                   const uint8_t *self, size_t n, uint64_t *q0, uint64_t *q1, size_t d)
{
    gx_l2 h; /* as run_locate_s: the fields in locals */
    hash_fields(&h, l2);
    if (h.slice_lut)
        return run_locate_split_h(&h, va, fm, sm, self, n, q0, q1, d);
    h.slice_lut = NULL;
    return run_locate_split_h(&h, va, fm, sm, self, n, q0, q1, d);
}

static __attribute__((noinline)) size_t
run_locate_split_g(const gx_l2 *l2, const uint64_t *va, gx_frame_memo *fm, const uint32_t *sm,
                   const uint8_t *self, size_t n, uint64_t *q0, uint64_t *q1, size_t d)
{
    return run_locate_split_s(l2, va, fm, sm, self, n, q0, q1, d);
}

#if GX_HOST_V3
static __attribute__((noinline)) GX_TARGET_V3 size_t
run_locate_split_v3(const gx_l2 *l2, const uint64_t *va, gx_frame_memo *fm, const uint32_t *sm,
                    const uint8_t *self, size_t n, uint64_t *q0, uint64_t *q1, size_t d)
{
    return run_locate_split_s(l2, va, fm, sm, self, n, q0, q1, d);
}
#endif

size_t gx_l2_locate_split(const gx_l2 *l2, const uint64_t *va, gx_frame_memo *m,
                          const uint32_t *sm, const uint8_t *self, size_t n, uint64_t *out0,
                          uint64_t *out1, size_t d)
{
#if GX_HOST_V3
    if (gx_host_v3())
        return run_locate_split_v3(l2, va, m, sm, self, n, out0, out1, d);
#endif
    return run_locate_split_g(l2, va, m, sm, self, n, out0, out1, d);
}

/* gx_l2_run_fast's first pass (l2->fast): the location words of n entries
 * (with v, of the PAs it translates: gx_l2_run_va, the VA -> PA pass of
 * memsys.c folded into this one: measured 151.5 -> 149.7 instructions an
 * access, random 64 MiB binary; with the x86-64-v3 copy 146.7).
 * Out of line, the hash's fields copied into locals (the stores to w may
 * alias the L2's; reloaded each entry before), the slice table's test
 * outside the loop (measured 212.5 -> 207.5 instructions an access,
 * random 64 MiB binary). */
static inline __attribute__((always_inline)) void run_locate_s(const gx_l2 *l2,
                                                              const uint64_t *pa,
                                                              const uint32_t *sm, uint64_t *w,
                                                              size_t n, const gx_l2_va *v)
{
    gx_l2 h; /* the fields locate_s(fast) reads, and the word's */
    hash_fields(&h, l2);
    if (h.slice_lut) {
        if (v)
            run_locate_h(&h, pa, sm, w, n, v);
        else
            run_locate_h(&h, pa, sm, w, n, NULL);
    } else {
        h.slice_lut = NULL; /* a constant in these copies of the loop */
        if (v)
            run_locate_h(&h, pa, sm, w, n, v);
        else
            run_locate_h(&h, pa, sm, w, n, NULL);
    }
}

static __attribute__((noinline)) void run_locate_g(const gx_l2 *l2, const uint64_t *pa,
                                                   const uint32_t *sm, uint64_t *w, size_t n,
                                                   const gx_l2_va *v)
{
    run_locate_s(l2, pa, sm, w, n, v);
}

#if GX_HOST_V3
/* The same for x86-64-v3 hosts (gx_host_v3: shifts by a register without
 * CL, so the memo's shift and the hash's do not take turns in it). */
static __attribute__((noinline)) GX_TARGET_V3 void
run_locate_v3(const gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, uint64_t *w, size_t n,
              const gx_l2_va *v)
{
    run_locate_s(l2, pa, sm, w, n, v);
}
#endif

/* run_locate_g, or its x86-64-v3 copy when v3 (gx_host_v3). */
static void run_locate(const gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, uint64_t *w,
                       size_t n, const gx_l2_va *v, int v3)
{
#if GX_HOST_V3
    if (v3) {
        run_locate_v3(l2, pa, sm, w, n, v);
        return;
    }
#endif
    (void)v3;
    run_locate_g(l2, pa, sm, w, n, v);
}

/* l2->fast (uniform, no noise, the 16-way PLRU instance): the straight
 * path of `gpuxray sim`, a block of entries (RUN_BLOCK) at a time in three
 * passes, each with few live values (one loop holding everything spilled
 * the policy's rng state on every victim):
 * - locate: set, slice and latency-table row of each entry (hashed once,
 *   as gx_l2_locate; or the caller's words, gx_l2_locate_words);
 * - lookups in order (run_lookups_s). An access to the sector of the
 *   access just before it (no L2 access between them) is a repeat: it
 *   finds the line in the same way with the sector present (the previous
 *   access hit it or filled it), so it is a hit, and its policy update,
 *   the tree-PLRU touch of that way, is idempotent ((bits & ~clear[w]) |
 *   set[w] twice is once): no lookup;
 * - statistics: each latency's fixed-point amount, value and bin come from
 *   l2->rlat by (SM, slice, outcome). Counting mode: an access adds 1 to
 *   its entry's count (l2->rcnt), an entry's first access notes it, and
 *   the noted entries are folded in that order (count times the amount,
 *   the bin and the extremes once) before the list fills and at the end.
 *   Direct mode, for runs of about one access an entry (many SMs): each
 *   access added in locals. Both give gx_l2_tally_add's statistics exactly:
 *   the total is an integer sum, the histogram counts, and the extremes
 *   keep the first of equal values in both orders (an entry's first access
 *   comes first). The outcome counts are folded into the cache at the end.
 * Measured (callgrind, whole `gpuxray sim` process, 1 M 4-byte reads on
 * seed-ampere-6mb, instructions an access): random 64 MiB 330 -> 246,
 * random 1 MiB 276 -> 198, stream 83 -> 68; docs/performance.md ("The
 * single-thread loop"). lw (NULL: located here): the entries' location
 * words, found before by gx_l2_locate_words (a split run's calling thread
 * locates to route, so the worker does not hash again). */
uint64_t gx_l2_run_fast(gx_l2 *l2, const uint64_t *pa, const uint64_t *lw, const gx_l2_va *v,
                        const uint32_t *sm, const uint32_t *rep, size_t n, gx_l2_tally *t)
{
    const uint32_t ssh = l2->sector_shift, lsh = l2->line_shift, smk = l2->sector_mask;
    const int ref = ssh == 5 && lsh == 7 && smk == 3;
    gx_cache *const c = l2->cache;
    uint8_t *const mem = c->mem;
    const run_lat *const rl = l2->rlat;
    uint64_t *const hist = t->hist, *const sacc = l2->slice_acc;
    run_pol pol;
    for (uint32_t w = 0; w < 16; w++) {
        pol.keep[w] = ~c->pf.clear[w];
        pol.setm[w] = c->pf.set[w];
    }
    memcpy(pol.lm_top, c->pf.lm_top, sizeof pol.lm_top);
    memcpy(pol.lm_low, c->pf.lm_low, sizeof pol.lm_low);
    /* the rng group of set s * sps + k is slice s (gx_l2_new: one group a slice) */
    pol.rngs = c->rngs ? c->rngs : &c->rng;
    pol.rmask = c->rngs ? UINT32_MAX : 0;
    pol.thr = c->pf.rand_thr;
    pol.rand_on = c->pf.rand_on;
    pol.rand_always = c->pf.rand_always;
    const int prand = run_pol_prand(&pol);
    const int v3 = gx_host_v3();
    (void)v3; /* without GX_HOST_V3, no other copy */
    gx_cyc_sum total = t->total;
    double lo = t->lo, hi = t->hi;
    uint64_t oc[4] = {0, 0, 0, 0}, cold = 0, folded = 0;
    uint64_t rsec = UINT64_MAX; /* sector number (pa >> ssh) of the access before */
    uint64_t loc[RUN_BLOCK];    /* RUN_LOC_ words */
    /* the counting mode: accesses per entry in l2->rcnt, the entries that
     * went from 0 in dirty[], in the order of their first access */
    const int counting = l2->rdirect == 0;
    uint64_t *const cnt = l2->rcnt;
    uint32_t dirty[RUN_DIRTY];
    size_t nd = 0, distinct = 0;
/* Entries dirty[0 .. nd) into the statistics, each with its count, in the
 * order of their first access (the extremes keep the first of equal
 * values, as one access after another does); their counts back to 0. */
#define RUN_FOLD()                                                                         \
    for (size_t q = 0; q < nd; q++) {                                                      \
        const uint32_t i = dirty[q];                                                       \
        const uint64_t k = cnt[i];                                                         \
        const run_lat *const e = &rl[i];                                                   \
        cnt[i] = 0;                                                                        \
        total.v += e->inc.v * (__int128)k;                                                 \
        lo = e->lat < lo ? e->lat : lo;                                                    \
        hi = e->lat > hi ? e->lat : hi;                                                    \
        hist[e->bin] += k;                                                                 \
        oc[i & 3] += k;                                                                    \
        sacc[e->slice] += k;                                                               \
    }
    for (size_t b0 = 0; b0 < n; b0 += RUN_BLOCK) {
        const size_t bn = n - b0 < RUN_BLOCK ? n - b0 : RUN_BLOCK;
        const uint64_t *const bp = pa + b0;
        const uint32_t *const bm = sm + b0;
        const uint32_t *const br = rep ? rep + b0 : NULL;
        if (lw) { /* located by the caller (gx_l2_locate_words) */
            memcpy(loc, lw + b0, bn * sizeof *loc);
        } else if (v) { /* bp[] translated here */
            const gx_l2_va bv = {v->va + b0, v->pa + b0, v->m};
            run_locate(l2, bp, bm, loc, bn, &bv, v3);
        } else {
            run_locate(l2, bp, bm, loc, bn, NULL, v3);
        }
        if (counting && !br && ref && prand) { /* counted in the lookups */
            if (nd > RUN_DIRTY - 2 * RUN_BLOCK) { /* as below: the same folds */
                RUN_FOLD();
                distinct += nd;
                nd = 0;
            }
            run_count rc = {cnt, dirty, nd};
#if GX_HOST_V3
            if (v3)
                rsec = run_lookups_128_32_prand_count_v3(mem, bp, loc, bn, rsec, &pol, &cold,
                                                         &rc);
            else
#endif
                rsec = run_lookups_128_32_prand_count(mem, bp, loc, bn, rsec, &pol, &cold, &rc);
            nd = rc.nd;
            continue;
        }
        rsec = ref && prand ? run_lookups_128_32_prand(mem, bp, loc, bn, rsec, &pol, &cold)
               : ref        ? run_lookups_128_32(mem, bp, loc, bn, rsec, &pol, &cold)
                     : run_lookups(mem, bp, loc, bn, rsec, ssh, lsh, smk, &pol, &cold);
        if (counting) {
            if (nd > RUN_DIRTY - 2 * RUN_BLOCK) { /* room for this block's new entries */
                RUN_FOLD();
                distinct += nd;
                nd = 0;
            }
            for (size_t j = 0; j < bn; j++) {
                const uint64_t x = loc[j];
                const uint32_t e = RUN_LOC_ENTRY(x);
                const uint64_t nrep = br ? br[j] : 0;
                if (!cnt[e]++)
                    dirty[nd++] = e;
                if (nrep) { /* hits: entry i (the hit's) */
                    const uint32_t i = e & ~3u;
                    folded += nrep;
                    if (!cnt[i])
                        dirty[nd++] = i;
                    cnt[i] += nrep;
                }
            }
            continue;
        }
        for (size_t j = 0; j < bn; j++) {
            /* a repeat's location is the access before's (the same sector) */
            const uint64_t x = loc[j];
            const uint32_t s = RUN_LOC_SLICE(x), o = RUN_LOC_OUT(x);
            const run_lat *const e = &rl[RUN_LOC_ROW4(x)];
            const uint64_t nrep = br ? br[j] : 0; /* repeats of the sector after this access */
            total.v += e[o].inc.v;
            lo = e[o].lat < lo ? e[o].lat : lo;
            hi = e[o].lat > hi ? e[o].lat : hi;
            hist[e[o].bin]++;
            oc[o]++;
            sacc[s] += 1 + nrep;
            if (nrep) { /* hits of latency e[0], as gx_cyc_add_n adds them */
                folded += nrep;
                total.v += e->inc.v * (__int128)nrep;
                lo = e->lat < lo ? e->lat : lo;
                hi = e->lat > hi ? e->lat : hi;
                hist[e->bin] += nrep;
                oc[GX_CACHE_HIT] += nrep;
            }
        }
    }
    if (counting) {
        RUN_FOLD();
        distinct += nd;
        /* about one access an entry: the direct mode costs less */
        if (2 * distinct > n)
            l2->rdirect = RUN_DIRECT_RUNS;
    } else {
        l2->rdirect--;
    }
    for (int o = 0; o < 3; o++)
        c->outcomes[o] += oc[o];
    c->outcomes[GX_CACHE_HIT] += oc[RUN_REPEAT];
    c->evictions += oc[GX_CACHE_LINE_MISS] - cold; /* each other line miss evicts */
    t->total = total;
    t->lo = lo;
    t->hi = hi;
    return n + folded;
}

/* Was the table built for (top, plus, extra)? extra compared bit for bit. */
static int run_lat_for(const gx_l2 *l2, uint64_t top, int plus, double extra)
{
    return l2->rlat_ok && l2->rlat_top == top && l2->rlat_plus == plus &&
           (!plus || !memcmp(&l2->rlat_extra, &extra, sizeof extra));
}

int gx_l2_run_fast_ready(gx_l2 *l2, uint64_t top, int plus, double extra)
{
    /* set offsets in 32 bits (RUN_LOC_OFF), a table of bounded size
     * (entries numbered in 32 bits), built for the tally's bins */
    return gx_l2_words_hold_sets(l2) &&
           (run_lat_for(l2, top, plus, extra) || build_run_lat(l2, top, plus, extra) == GX_OK);
}

/* The words of RUN_LOC_OFF / RUN_LOC_SLICE (gx_l2_locate_words' contract:
 * the set within the cache, the home slice; l2.h). */
int gx_l2_words_hold_sets(const gx_l2 *l2)
{
    return l2->fast && (uint64_t)l2->slices * l2->sps * GX_CSPEC_BLOCK <= UINT32_MAX &&
           l2->slices <= 1024 &&
           (uint64_t)l2->sm_count * l2->slices <= RUN_LAT_MAX_ROWS;
}

void gx_l2_locate_words(const gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, uint64_t *w,
                        size_t n)
{
    if (gx_l2_words_hold_sets(l2)) {
        run_locate(l2, pa, sm, w, n, NULL, gx_host_v3());
        return;
    }
    for (size_t j = 0; j < n; j++) { /* the slice only: gx_l2_run_located relocates */
        gx_l2_loc loc;
        gx_l2_locate(l2, pa[j], &loc);
        w[j] = (uint64_t)loc.slice << 32;
    }
}

void gx_l2_locate_words_va(const gx_l2 *l2, const uint64_t *va, uint64_t *pa, gx_frame_memo *m,
                           const uint32_t *sm, uint64_t *w, size_t n)
{
    if (gx_l2_words_hold_sets(l2)) {
        const gx_l2_va v = {va, pa, m};
        run_locate(l2, NULL, sm, w, n, &v, gx_host_v3());
        return;
    }
    for (size_t j = 0; j < n; j++)
        pa[j] = gx_frame_pa(m, va[j]);
    gx_l2_locate_words(l2, pa, sm, w, n);
}

int gx_l2_copy_slice(gx_l2 *dst, const gx_l2 *src, uint32_t slice)
{
    const gx_cache *cs = src->cache;
    gx_cache *cd = dst->cache;
    if (!gx_l2_words_hold_sets(dst) || !gx_l2_words_hold_sets(src) || slice >= src->slices ||
        dst->slices != src->slices || dst->sps != src->sps || cd->sets != cs->sets ||
        cd->block != cs->block || !cd->rngs != !cs->rngs ||
        (cs->rngs && (cs->sets_per_rng != src->sps || cd->sets_per_rng != cs->sets_per_rng)))
        return GX_EINVAL;
    /* the slice's sets are slice * sps .. + sps - 1 (RUN_LOC_SK), one
     * block each; its stream is group `slice` (one group a slice) */
    const size_t bytes = (size_t)src->sps * cs->block;
    memcpy(cd->mem + (size_t)slice * bytes, cs->mem + (size_t)slice * bytes, bytes);
    if (cs->rngs)
        cd->rngs[slice] = cs->rngs[slice];
    return GX_OK;
}
