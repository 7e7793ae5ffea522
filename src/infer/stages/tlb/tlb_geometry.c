/* tlb_geometry.c - one TLB level's entries, ways and entry reach from
 * translation chases (method of docs/discovery.md, "tlb").
 *
 * Model assumed: a level of `sets` (a power of two) x `ways` entries, each
 * covering `reach` bytes of VA (a power of two multiple of the page), set
 * index (VA / reach) mod sets, or an index that spreads every power-of-two
 * stride of entries evenly over the sets (the xor index: the XOR of
 * VA / reach's log2(sets)-bit chunks), replacement that misses every
 * access of a cyclic chase longer than a set holds (LRU); the target's
 * chase window starts at a multiple of every reach x sets (the sim's at
 * 64 TiB). A chase's verdict (hit / miss, tlb_classify) is against the
 * level's own latency: an access that hits a nearer level is faster and
 * counts as a hit.
 *
 * Modulo steps (the first path):
 * 1. bytes: the knee of a chase over consecutive pages (stride = the
 *    granule, or the smallest power-of-two multiple that fits the
 *    primitive), bracketed around the curve's hint, then bisected to
 *    BYTES_PRECISION. Consecutive entries fill the sets evenly, so the knee
 *    lies between entries x reach and (entries + sets) x reach. When that
 *    chase never misses, the same at the curve's stride (knee_bytes).
 * 2. reach: the smallest candidate r (granule x 2^b up to TLB_MAX_REACH)
 *    whose predicted entry count E = bytes / r holds at stride 3r: a chase
 *    of 0.6 E pages hits and one of 1.5 E misses. At stride 3r the entries
 *    are 3 apart, an odd step that visits every set evenly, so the level
 *    holds exactly its entries; a candidate below the reach predicts too
 *    many entries (its 0.6 E misses), one above it is not reached first.
 *    Power-of-two strides alone cannot tell reach from sets: (r, sets) and
 *    (2r, sets / 2) fill alike.
 * 3. sets: at stride r x 2^m the chase uses sets / 2^m sets; a chase of
 *    1.5 E / 2^m pages misses while that still halves the capacity and
 *    hits once one set is all that is left (then the capacity is `ways`
 *    and stays). sets = 2^M, M the last m that halved.
 *    Rounding of the knee can stop this one halving early or late, so:
 * 4. ways: at stride r x 2^M the longest chase that hits, w. If w + 1
 *    pages miss only in part (more than PARTIAL_HITS of them hit: two
 *    sets, one overflowing), M + 1 and again.
 *    Then M is lowered while w + 1 pages at stride r x 2^(M - 1) still miss
 *    every access (one set there too): M is the first power of two at which
 *    the chase uses one set, exactly, and ways = w.
 * entries = sets x ways; consistent when it agrees with bytes / reach
 * within the knee's spread (1 + 1/ways) and CONSISTENCY.
 * 5. modulo check (sets > 1): ceil(MODULO_CHECK x entries) pages at stride
 *    2 x reach miss a modulo level (half its sets hold them) and hit one
 *    whose index spreads that stride evenly: index modulo, or the xor path.
 *
 * Xor path (when the modulo path finds no consistent level, or its check
 * hits). The capacity in pages at power-of-two strides s halves per
 * doubling of s below the reach and stays the entries from the reach up
 * (modulo: it halves on until one set is left), so:
 * X1. reach: the smallest r whose E holds: 0.6 E pages hit at stride 2r
 *     and 1.5 E miss at stride r (a smaller candidate holds 2 E or more
 *     at its stride); E = the knee's pages when the knee's stride is r or
 *     less, else bytes / r (find_reach_pow2).
 * X2. at stride r (the smallest power-of-two multiple past one page-table
 *     fetch: tlb_count_stride), counted in pages that miss (per-step medians
 *     over a threshold between the level and its clean miss, a chase that
 *     overflows every set: misses_at): the first length N0 with MISS_SEEN
 *     misses, bisected around E.
 * X3. past the capacity each page overflows one more set, whose ways + 1
 *     pages then miss: misses(E + x) = x (ways + 1) for x <= sets, every
 *     page from E + sets on (fully associative: from E + 1). Every count
 *     (X2's and one at N0 + N0 / SLOPE_SPAN) is fitted over ways 1..64 x
 *     a power-of-two number of sets and fully associative (best_fit);
 *     checked at E + sets / 2. index xor when sets > 1.
 * A level the modulo path finds fully associative is checked as well
 * (fa_check: E + 1 pages at the counts' stride all miss; an xor level of E
 * entries misses one set's ways + 1); else the xor path. */
#include <math.h>
#include <stdio.h>

#include "gpuxray/profile.h"
#include "tlb_internal.h"

#define BYTES_PRECISION 64  /* knee bisected to 1/64 of its steps */
#define HIT_FRACTION 0.6    /* of the predicted entries: must hit (the knee overestimates
                               by up to 1/ways: 0.6 x 1.5 < 1) */
#define MISS_FRACTION 1.5   /* of the predicted entries: every set holds ways + 1 or more */
#define CONSISTENCY 0.1     /* relative slack between sets x ways and bytes / reach */
#define MAX_SET_FIXES 2     /* halvings added when ways + 1 pages miss only in part */
#define PARTIAL_HITS 0.25  /* of w + 1 pages hitting: one set overflowing in two leaves
                              about half hitting, one set none */
#define TLB_SAMPLES_EXACT 8192
/* The modulo check: ceil(MODULO_CHECK x entries) pages at stride 2 x reach
 * miss a modulo level (half its sets hold them: 3/2 x ways pages per set
 * used, over ways + 1 from 2 ways up) and hit an index that spreads the
 * stride evenly (3/4 of the ways per set). */
#define MODULO_CHECK 0.75
/* Counting misses (xor path): a chase misses from MISS_SEEN pages missing
 * (a few noisy medians tolerated; the first pages past the capacity make
 * ways + 1 each miss); per-step medians of enough rounds (count_rounds)
 * that a hit's median lies COUNT_Z of its spreads under the threshold (one
 * step in millions misread), at least COUNT_MIN_ROUNDS; the first length
 * that misses is bisected to 1/FIRST_MISS_PRECISION of itself, and the
 * slope of the misses taken over N0 / SLOPE_SPAN pages past it: both
 * inside the sets >= capacity / 64 pages past the capacity of a level of
 * up to 64 ways, where each page adds ways + 1 misses. */
#define MISS_SEEN 4
#define COUNT_Z 5.0
#define COUNT_MIN_ROUNDS 5
#define FIRST_MISS_PRECISION 256
#define SLOPE_SPAN 128
#define COUNT_MIN_GRANULES 16
/* tlb_clean_cycles: this fraction of the entries at tlb_count_stride (every
 * set 3/4 full; every level before holds at most 1/4 of the entries at
 * that stride: the generator's and the stage's growth of 4) */
#define CLEAN_FRACTION 0.75
/* clean_miss: pages per entry (past E + sets from 2 ways up, with the
 * knee's overshoot: every set overflowed) */
#define CLEAN_MISS 2.25
#define PWC_MAX_LINES 256 /* the generator's page-walk caches (16-256 entries) */
#define FA_SLACK 2 /* pages of a fully associative level's all-miss chase misread */
/* best_fit's candidates: the generator's and the model's ways (at most 64),
 * capacities within this factor of the first length that misses. */
#define FIT_MAX_WAYS 64
#define FIT_RANGE 1.5
/* The exact capacity is bracketed from bytes / reach within this relative
 * distance (the knee's 1/64 precision and its overshoot of up to 1/ways),
 * widened by doubling when the bracket fails. */
#define CAPACITY_BRACKET 0.125
/* The slope check: misses at capacity + sets / 2 within this relative
 * slack of sets / 2 x (ways + 1) (medians of a few rounds: a step or two of
 * noise). */
#define SLOPE_SLACK 0.1

static int verdict_at(tlb_meter *m, uint64_t stride, uint32_t n, double cyc, int *v,
                      gx_msg *msg)
{
    if (n < 1)
        n = 1;
    if (n > tlb_max_steps(stride)) {
        *v = TLB_UNSURE;
        return GX_OK;
    }
    return tlb_classify(m, stride, n, cyc, v, msg);
}

/* Step 1 at strides of `base` (doubled until the knee fits the primitive):
 * g->bytes = the longest chase that hits x its stride. */
static int knee_bytes_at(tlb_meter *m, double cyc, uint64_t base, uint64_t hint_stride,
                         uint32_t hint_hit, tlb_geom *g, gx_msg *msg)
{
    uint64_t stride = base;
    double hint_bytes = (double)hint_hit * (double)hint_stride;
    while (4.0 * hint_bytes / (double)stride > (double)tlb_max_steps(stride)) {
        if (stride > GX_XCHASE_MAX_WINDOW_BYTES / 4) {
            snprintf(g->why, sizeof g->why, "capacity beyond one chase's window");
            return GX_OK;
        }
        stride *= 2;
    }
    uint32_t max = tlb_max_steps(stride);
    uint32_t n = (uint32_t)fmax(1.0, hint_bytes / (double)stride / 2);
    uint32_t lo = 0, hi = 0;
    int v, rc;
    while (!hi) { /* upward until a miss */
        if ((rc = verdict_at(m, stride, n, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v == TLB_UNSURE && n < max) { /* in the knee's spread: one step further */
            n = n + n / 8 + 1;
            continue;
        }
        if (v == TLB_MISS || n >= max) {
            if (v != TLB_MISS) {
                snprintf(g->why, sizeof g->why, "no end within %u pages", max);
                return GX_OK;
            }
            hi = n;
        } else {
            lo = n;
            n = n * 2 > max ? max : n * 2;
        }
    }
    while (!lo) { /* downward until a hit */
        n = hi / 2;
        if (!n) {
            snprintf(g->why, sizeof g->why, "even one page misses");
            return GX_OK;
        }
        if ((rc = verdict_at(m, stride, n, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v == TLB_HIT)
            lo = n;
        else
            hi = n;
    }
    while (hi - lo > 1 && (hi - lo) * BYTES_PRECISION > lo) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((rc = verdict_at(m, stride, mid, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v == TLB_HIT)
            lo = mid;
        else
            hi = mid; /* unsure counts as the knee's start */
    }
    g->bytes = (uint64_t)lo * stride;
    g->knee_stride = stride;
    return GX_OK;
}

/* Step 1: consecutive granules; when the chase never misses there (a walk
 * helped by the neighbours of the previous walk's fetch can cost less
 * than a hit in this level), the curve's stride: its knee gives the bytes
 * for an entry reach of at least that stride, and a smaller reach then
 * fails the consistency of step 4. */
static int knee_bytes(tlb_meter *m, double cyc, uint64_t hint_stride, uint32_t hint_hit,
                      tlb_geom *g, gx_msg *msg)
{
    int rc = knee_bytes_at(m, cyc, m->granule, hint_stride, hint_hit, g, msg);
    if (rc != GX_OK || g->bytes || hint_stride == m->granule)
        return rc;
    g->why[0] = '\0';
    return knee_bytes_at(m, cyc, hint_stride, hint_stride, hint_hit, g, msg);
}

/* The smallest reach r (granule x 2^b up to TLB_MAX_REACH) whose entry
 * count E holds: HIT_FRACTION x E pages hit at stride hit_mult x r and
 * MISS_FRACTION x E miss at stride miss_mult x r. E is bytes / r, or with
 * by_knee bytes / max(r, the knee's stride) (then g->bytes becomes E x r). */
static int search_reach(tlb_meter *m, double cyc, tlb_geom *g, uint32_t hit_mult,
                        uint32_t miss_mult, int by_knee, const char *why, gx_msg *msg)
{
    for (uint64_t r = m->granule; r <= TLB_MAX_REACH; r *= 2) {
        uint64_t per = by_knee && g->knee_stride > r ? g->knee_stride : r;
        double e = (double)g->bytes / (double)per;
        if (e < 1)
            break;
        uint32_t n1 = (uint32_t)floor(HIT_FRACTION * e), n2 = (uint32_t)ceil(MISS_FRACTION * e);
        if (n2 <= n1)
            n2 = n1 + 1;
        int v1, v2, rc;
        if ((rc = verdict_at(m, hit_mult * r, n1, cyc, &v1, msg)) != GX_OK)
            return rc;
        if (v1 != TLB_HIT)
            continue;
        if ((rc = verdict_at(m, miss_mult * r, n2, cyc, &v2, msg)) != GX_OK)
            return rc;
        if (v2 == TLB_MISS) {
            g->reach = r;
            if (by_knee)
                g->bytes = (uint64_t)llround(e * (double)r);
            return GX_OK;
        }
    }
    snprintf(g->why, sizeof g->why, "no entry reach up to %llu MiB holds its entry count%s",
             (unsigned long long)(TLB_MAX_REACH >> 20), why);
    return GX_OK;
}

/* Step 2: the smallest reach whose entry count holds at stride 3 x reach. */
static int find_reach(tlb_meter *m, double cyc, tlb_geom *g, gx_msg *msg)
{
    return search_reach(m, cyc, g, 3, 3, 0, "", msg);
}

/* Step 4 at one stride: the longest chase that hits, bisected in [1, about
 * 1.25 x the capacity e_here predicts + 2]; *w 0 (g->why) when unsure. */
static int ways_at(tlb_meter *m, double cyc, uint64_t stride, double e_here, uint32_t *w,
                   tlb_geom *g, gx_msg *msg)
{
    int v, rc;
    *w = 0;
    uint32_t lo = 1, hi = (uint32_t)ceil(1.25 * e_here) + 2;
    if ((rc = verdict_at(m, stride, hi, cyc, &v, msg)) != GX_OK)
        return rc;
    if (v != TLB_MISS) {
        snprintf(g->why, sizeof g->why, "ways: %u pages in one set still hit", hi);
        return GX_OK;
    }
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((rc = verdict_at(m, stride, mid, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v == TLB_UNSURE) {
            snprintf(g->why, sizeof g->why, "ways: unsure at %u pages in one set", mid);
            return GX_OK;
        }
        if (v == TLB_HIT)
            lo = mid;
        else
            hi = mid;
    }
    *w = lo;
    return GX_OK;
}

/* Steps 3 and 4. */
static int sets_and_ways(tlb_meter *m, double cyc, tlb_geom *g, gx_msg *msg)
{
    const double e = (double)g->bytes / (double)g->reach;
    int v, rc, M = -1;
    for (int k = 1; (double)(1ULL << (k - 1)) <= e; k++) {
        uint32_t n = (uint32_t)ceil(MISS_FRACTION * e / (double)(1ULL << k));
        if (n < 2)
            n = 2;
        if ((rc = verdict_at(m, g->reach << k, n, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v == TLB_UNSURE) {
            snprintf(g->why, sizeof g->why, "sets: unsure at stride reach x %llu",
                     1ULL << k);
            return GX_OK;
        }
        if (v == TLB_HIT) {
            M = k - 1;
            break;
        }
    }
    if (M < 0) {
        snprintf(g->why, sizeof g->why, "sets: the capacity never stopped halving");
        return GX_OK;
    }
    uint32_t w = 0;
    for (int fix = 0; fix <= MAX_SET_FIXES; fix++) {
        if ((rc = ways_at(m, cyc, g->reach << M, e / (double)(1ULL << M), &w, g, msg)) != GX_OK ||
            !w)
            return rc;
        /* one set holds w: w + 1 pages miss every access; two sets hold w
         * between them: w + 1 pages hit about half (then one more halving).
         * Counted in pages that hit, not in cycles: a walk of more pages
         * can cost more (page-walk caches), so an all-miss chase of other
         * length is no reference for the cycles of this one. */
        double hits;
        if ((rc = tlb_hit_fraction(m, g->reach << M, w + 1, TLB_SAMPLES_EXACT, cyc, &hits,
                                   msg)) != GX_OK)
            return rc;
        if (hits <= PARTIAL_HITS)
            break;
        M++;
        if (fix == MAX_SET_FIXES) {
            snprintf(g->why, sizeof g->why, "sets: %u pages never fill one set", w + 1);
            return GX_OK;
        }
    }
    /* the smallest power of two that is still one set: w + 1 pages at the
     * stride below miss every access only when it is one set too */
    while (M > 0) {
        if ((rc = verdict_at(m, g->reach << (M - 1), w + 1, cyc, &v, msg)) != GX_OK)
            return rc;
        if (v != TLB_MISS)
            break;
        M--;
    }
    uint32_t lo = w;
    g->ways = lo;
    g->sets = 1u << M;
    g->entries = g->sets * g->ways;
    double ent = g->entries;
    g->consistent = ent <= e * (1 + CONSISTENCY) + 1 &&
                    e <= ent * (1 + 1.0 / g->ways) * (1 + CONSISTENCY) + 1;
    return GX_OK;
}

/* The modulo check of a level found with sets > 1 (at stride 2 x reach):
 * *modulo 1 when ceil(MODULO_CHECK x entries) pages miss, 0 when they hit
 * (the index spreads power-of-two strides evenly: not modulo), -1 unsure. */
static int modulo_check(tlb_meter *m, double cyc, const tlb_geom *g, int *modulo, gx_msg *msg)
{
    int v, rc;
    *modulo = -1;
    if ((rc = verdict_at(m, 2 * g->reach, (uint32_t)ceil(MODULO_CHECK * g->entries), cyc, &v,
                         msg)) != GX_OK)
        return rc;
    if (v != TLB_UNSURE)
        *modulo = v == TLB_MISS;
    return GX_OK;
}

/* The stride of the miss counts: the reach (consecutive entries), or the
 * smallest power-of-two multiple of it at least COUNT_MIN_GRANULES
 * granules, where every page's leaf page-table entry lies in a fetch of
 * its own (a fetch of up to 128 bytes holds 16 entries of 8 bytes): a
 * walk that hits a neighbour page-walk cache filled by the previous
 * page's walk costs a few cycles, under any threshold. An index that
 * spreads power-of-two strides evenly fills its sets alike at both. */
uint64_t tlb_count_stride(const tlb_meter *m, const tlb_geom *g)
{
    uint64_t s = g->reach;
    while (s < COUNT_MIN_GRANULES * m->granule)
        s *= 2;
    return s;
}

/* Rounds whose per-step median lies COUNT_Z of its spreads under the
 * threshold d cycles over the level: a median of R samples of a gaussian
 * jitter of sigma (the timer stage's noise: a repeated L2 hit, the same
 * line a translation chase reads) spreads sqrt(pi / 2) sigma / sqrt(R). */
static uint32_t count_rounds(const tlb_meter *m, double d)
{
    double sigma = m->noise > 0 ? m->noise : 0;
    double r = ceil(pow(COUNT_Z * 1.2533 * sigma / d, 2));
    if (!(r >= COUNT_MIN_ROUNDS))
        r = COUNT_MIN_ROUNDS;
    return r > GX_XCHASE_MAX_ROUNDS - 1 ? GX_XCHASE_MAX_ROUNDS - 1 : (uint32_t)r | 1u;
}

/* Pages of a chase at tlb_count_stride that miss the level (a count of
 * pages, not of cycles: a walk's cost varies with the pages walked):
 * per-step medians (count_rounds) over the midpoint between the level's
 * latency and the next plateau's (TLB_SLOW_CYCLES over the level when
 * that is unknown or farther). A chase of at most PWC_MAX_LINES pages
 * has every leaf page-table line in a page-walk cache of that size, so
 * the last level's misses may cost a cache hit, a few cycles: there any
 * step TLB_HIT_CYCLES over the level misses (with the rounds that
 * needs; such chases are short). */
static int misses_at(tlb_meter *m, const tlb_geom *g, uint32_t n, uint32_t *miss, gx_msg *msg)
{
    const uint64_t stride = tlb_count_stride(m, g);
    double step = g->next_cycles - g->cycles;
    double d = step > 2 * TLB_HIT_CYCLES && step < 2 * TLB_SLOW_CYCLES ? step / 2
                                                                       : TLB_SLOW_CYCLES;
    if (n <= PWC_MAX_LINES) /* a walk may cost a page-walk cache's hit: any slower step */
        d = TLB_HIT_CYCLES;
    /* never nearer than the most rounds keep COUNT_Z spreads of a median */
    double d_min = COUNT_Z * 1.2533 * m->noise / sqrt(GX_XCHASE_MAX_ROUNDS - 1);
    if (d < d_min)
        d = d_min;
    return tlb_miss_count(m, stride, n, count_rounds(m, d), g->cycles + d, miss, msg);
}

/* The check of a level the modulo path found fully associative: its
 * entries + 1 pages at tlb_count_stride all miss (but FA_SLACK); an xor level
 * of that capacity misses only the ways + 1 of one set (at most half of
 * them: two or more sets). *fa 1 when they do. */
static int fa_check(tlb_meter *m, const tlb_geom *g, int *fa, gx_msg *msg)
{
    uint32_t miss, n = g->entries + 1;
    *fa = 1;
    if (n > tlb_max_steps(tlb_count_stride(m, g)))
        return GX_OK;
    int rc = misses_at(m, g, n, &miss, msg);
    if (rc == GX_OK)
        *fa = miss + FA_SLACK >= n;
    return rc;
}

/* The latency past the level at tlb_count_stride: a chase of CLEAN_MISS x
 * bytes / reach pages (every set overflowed: each page misses the level
 * and hits what lies past it at that stride) replaces the curve's next
 * plateau as g->next_cycles, the reference of the miss counts: after an
 * xor level the curve's odd stride mixes hits and misses, and a deeper
 * level's plateau may not show at all. */
int tlb_clean_miss(tlb_meter *m, const tlb_geom *g, double *cycles, gx_msg *msg)
{
    const uint64_t stride = tlb_count_stride(m, g);
    double e = g->entries ? g->entries : (double)g->bytes / (double)g->reach;
    uint32_t n = (uint32_t)ceil(CLEAN_MISS * e);
    *cycles = NAN;
    if (n > tlb_max_steps(stride))
        return GX_OK;
    return tlb_mean(m, stride, n, TLB_SAMPLES_EXACT, cycles, msg);
}

static int clean_miss(tlb_meter *m, tlb_geom *g, gx_msg *msg)
{
    double v;
    int rc = tlb_clean_miss(m, g, &v, msg);
    if (rc == GX_OK && v > g->cycles + TLB_HIT_CYCLES)
        g->next_cycles = v;
    return rc;
}

/* Xor step 1: the smallest reach r whose entry count E holds: 0.6 E pages
 * hit at stride 2r and 1.5 E miss at stride r. An index that spreads
 * power-of-two strides of entries evenly holds E pages at every stride
 * from its reach up, and E x reach / s at a stride s below it: a smaller
 * candidate's 1.5 E hit (twice E or more at its stride), every larger one
 * passes. E: the knee's pages when the knee's stride is r or below (the
 * capacity in pages no longer changes there), else bytes / r. */
static int find_reach_pow2(tlb_meter *m, double cyc, tlb_geom *g, gx_msg *msg)
{
    return search_reach(m, cyc, g, 2, 1, 1, " at 3 or 1-2 x the reach", msg);
}

/* Miss counts of the xor path: chase length -> pages that missed. */
#define MAX_COUNTS 48
typedef struct counts {
    uint32_t n[MAX_COUNTS], miss[MAX_COUNTS];
    int k;
} counts;

static int count_at(tlb_meter *m, const tlb_geom *g, counts *c, uint32_t n, uint32_t *miss,
                    gx_msg *msg)
{
    int rc = misses_at(m, g, n, miss, msg);
    if (rc == GX_OK && c->k < MAX_COUNTS) {
        c->n[c->k] = n;
        c->miss[c->k++] = *miss;
    }
    return rc;
}

/* Xor step 2: the first length that misses: the smallest N (bracketed
 * around bytes / reach, then bisected to 1/FIRST_MISS_PRECISION) with at
 * least MISS_SEEN pages missing at tlb_count_stride, where every set fills
 * evenly; *n0 0 when no bracket holds. Every count lands in c. */
static int first_miss(tlb_meter *m, const tlb_geom *g, counts *c, uint32_t *n0, gx_msg *msg)
{
    const uint32_t max = tlb_max_steps(tlb_count_stride(m, g));
    const double e = (double)g->bytes / (double)g->reach;
    uint32_t lo = 0, hi = 0, miss;
    int rc;
    *n0 = 0;
    for (double d = CAPACITY_BRACKET; !lo && d < 1; d *= 2) {
        uint32_t n = (uint32_t)floor(e * (1 - d));
        if (n < 1)
            n = 1;
        if ((rc = count_at(m, g, c, n, &miss, msg)) != GX_OK)
            return rc;
        if (miss < MISS_SEEN)
            lo = n;
    }
    for (double d = CAPACITY_BRACKET; lo && !hi && d < 4; d *= 2) {
        uint32_t n = (uint32_t)ceil(e * (1 + d)) + MISS_SEEN;
        if (n > max)
            break;
        if ((rc = count_at(m, g, c, n, &miss, msg)) != GX_OK)
            return rc;
        if (miss >= MISS_SEEN)
            hi = n;
    }
    if (!lo || !hi)
        return GX_OK;
    while (hi - lo > 1 && (hi - lo) * FIRST_MISS_PRECISION > hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((rc = count_at(m, g, c, mid, &miss, msg)) != GX_OK)
            return rc;
        if (miss < MISS_SEEN)
            lo = mid;
        else
            hi = mid;
    }
    *n0 = hi;
    return GX_OK;
}

/* The misses a level of e entries and w ways predicts for n pages. */
static double predicted_misses(uint32_t e, uint32_t w, uint32_t n)
{
    if (n <= e)
        return 0;
    double over = (double)(n - e) * (w + 1);
    return over < n ? over : n;
}

/* Total distance of the counts from a geometry's prediction. */
static double fit_error(const counts *c, uint32_t e, uint32_t w)
{
    double err = 0;
    for (int i = 0; i < c->k; i++)
        err += fabs(c->miss[i] - predicted_misses(e, w, c->n[i]));
    return err;
}

/* The best fit over candidate geometries: ways 1..FIT_MAX_WAYS with
 * e = ways x 2^k (k >= 1 sets bits), and fully associative (ways = e),
 * e within FIT_RANGE of the first length that misses. */
static void best_fit(const counts *c, uint32_t n0, uint32_t *e_out, uint32_t *w_out)
{
    double best = INFINITY;
    *e_out = *w_out = 0;
    const double lo = n0 / FIT_RANGE, hi = n0 * FIT_RANGE;
    for (uint32_t w = 1; w <= FIT_MAX_WAYS; w++)
        for (uint64_t e = 2ULL * w; (double)e <= hi; e *= 2) {
            if ((double)e < lo)
                continue;
            double err = fit_error(c, (uint32_t)e, w);
            if (err < best) {
                best = err;
                *e_out = (uint32_t)e;
                *w_out = w;
            }
        }
    for (uint32_t e = (uint32_t)ceil(lo); (double)e <= hi && e < n0; e++) {
        double err = fit_error(c, e, e);
        if (err < best) {
            best = err;
            *e_out = *w_out = e;
        }
    }
}

/* Xor step 3: ways and entries from the pages that miss past the capacity
 * E at tlb_count_stride. The first page past it overflows one set: its
 * ways + 1 pages miss every round (LRU, cyclic); each further page one
 * more set, so E + x pages miss x (ways + 1) for x <= sets, every page from
 * E + sets on (fully associative: every page from E + 1). The counts of
 * step 2 and one at N0 + N0 / SLOPE_SPAN (the slope) are fitted over the
 * candidate geometries (best_fit: a few misread pages move no candidate
 * past the true one), then checked at E + sets / 2 (within SLOPE_SLACK). */
static int xor_ways(tlb_meter *m, tlb_geom *g, counts *c, uint32_t n0, gx_msg *msg)
{
    const uint32_t max = tlb_max_steps(tlb_count_stride(m, g));
    uint32_t w, e, m2, x = n0 / SLOPE_SPAN > 1 ? n0 / SLOPE_SPAN : 1;
    int rc;
    if (n0 + x > max) {
        snprintf(g->why, sizeof g->why, "ways: %u pages pass one chase", n0 + x);
        return GX_OK;
    }
    if ((rc = count_at(m, g, c, n0 + x, &m2, msg)) != GX_OK)
        return rc;
    best_fit(c, n0, &e, &w);
    if (!e) {
        snprintf(g->why, sizeof g->why, "ways: no geometry fits the misses past %u pages", n0);
        return GX_OK;
    }
    const uint32_t sets = e / w, half = sets / 2;
    if (half >= 2 && e + half <= max) {
        if ((rc = count_at(m, g, c, e + half, &m2, msg)) != GX_OK)
            return rc;
        double want = (double)half * (w + 1);
        if (fabs(m2 - want) > SLOPE_SLACK * want + FA_SLACK) {
            snprintf(g->why, sizeof g->why, "ways: %u pages miss at %u + %u, %u ways predict %.0f",
                     m2, e, half, w, want);
            return GX_OK;
        }
    }
    g->ways = w;
    g->sets = sets;
    g->entries = e;
    g->index = sets > 1 ? GX_TLB_INDEX_XOR : 0;
    double b = (double)g->bytes / (double)g->reach;
    g->consistent = e <= b * (1 + CONSISTENCY) + 1 && b <= e * (1 + CONSISTENCY) + 1;
    return GX_OK;
}

/* The path for an index that spreads every power-of-two stride of entries
 * evenly (xor; fully associative too): reach at 2 x reach, the exact
 * capacity at stride = reach, ways from the misses just past it. */
static int xor_geometry(tlb_meter *m, double cyc, tlb_geom *g, gx_msg *msg)
{
    g->reach = 0;
    g->sets = g->ways = g->entries = 0;
    g->consistent = 0;
    g->index = 0;
    g->why[0] = '\0';
    int rc = find_reach_pow2(m, cyc, g, msg);
    if (rc != GX_OK || !g->reach)
        return rc;
    if ((rc = clean_miss(m, g, msg)) != GX_OK)
        return rc;
    counts c;
    c.k = 0;
    uint32_t n0;
    if ((rc = first_miss(m, g, &c, &n0, msg)) != GX_OK)
        return rc;
    if (!n0) {
        snprintf(g->why, sizeof g->why, "no capacity near %.0f pages at stride reach",
                 (double)g->bytes / (double)g->reach);
        return GX_OK;
    }
    return xor_ways(m, g, &c, n0, msg);
}

int tlb_clean_cycles(tlb_meter *m, const tlb_geom *g, uint32_t samples, double *cycles,
                     gx_msg *msg)
{
    uint32_t n = (uint32_t)ceil(CLEAN_FRACTION * g->entries);
    uint64_t stride = tlb_count_stride(m, g);
    if (n < 1 || n > tlb_max_steps(stride)) {
        *cycles = NAN;
        return GX_OK;
    }
    return tlb_mean(m, stride, n, samples, cycles, msg);
}

int tlb_geometry(tlb_meter *m, double cycles, double next_cycles, uint64_t hint_stride,
                 uint32_t hint_hit, int xor_only, tlb_geom *g, gx_msg *msg)
{
    g->cycles = cycles;
    g->next_cycles = next_cycles;
    g->bytes = g->reach = g->knee_stride = 0;
    g->sets = g->ways = g->entries = 0;
    g->consistent = 0;
    g->index = 0;
    g->why[0] = '\0';
    int rc = knee_bytes(m, cycles, hint_stride, hint_hit, g, msg);
    if (rc != GX_OK || !g->bytes)
        return rc;
    if (xor_only)
        return xor_geometry(m, cycles, g, msg);
    if ((rc = find_reach(m, cycles, g, msg)) != GX_OK)
        return rc;
    if (g->reach && (rc = sets_and_ways(m, cycles, g, msg)) != GX_OK)
        return rc;
    if (g->entries && g->consistent && g->sets == 1) {
        int fa;
        if ((rc = fa_check(m, g, &fa, msg)) != GX_OK || fa)
            return rc;
    }
    if (g->entries && g->consistent && g->sets > 1) {
        int modulo;
        if ((rc = modulo_check(m, cycles, g, &modulo, msg)) != GX_OK)
            return rc;
        /* 1: established as modulo; -1: unsure: the geometry stands, the
         * index stays absent */
        if (modulo > 0)
            g->index = GX_TLB_INDEX_MODULO;
        if (modulo != 0)
            return GX_OK;
    }
    return xor_geometry(m, cycles, g, msg);
}
