/* stage_levels.c - discovery stage 2: the latency levels one SM sees as its
 * footprint grows (l2.levels_from_one_sm), the DRAM latency, the topology,
 * and the hit / miss latencies and thresholds later stages use.
 *
 * Method (latency classes + residency, robust to the replacement policy):
 * 1. Probe pairs (infer_probe_pairs): time a line, then reload it twice; the
 *    difference ("delta") is the extra cost of wherever the line was, with
 *    the (SM, slice) skew cancelled. Cold (never-touched) lines give the
 *    DRAM delta and the pair noise; reloads of lines from several SMs give
 *    the skew spread and the fastest (SM, slice) hit latency, the base.
 * 2. Sweep nested footprints (x2 from 32 KiB): the first F / 256 blocks of
 *    a random permutation of the arena's 256 B blocks, one fixed random 32 B
 *    slot per block (one line and one sector per block whatever the line
 *    size; spread over every page, so hash bits above the page average out;
 *    nested, so lines a policy never evicts are always chain lines). Chase
 *    once (warm round + short timed part: the curve shown with --progress),
 *    then probe pairs on random chain lines: the fraction resident in the
 *    first level, and in any L2 level. Once F exceeds a level, the level is
 *    full of chain lines, so its resident fraction is C / F whatever the
 *    policy (LRU keeps the newest lines, MRU the oldest). Stop when less
 *    than a fifth is resident anywhere.
 * 3. Topology: at F = 1.4 x the first level's capacity every line still fits
 *    in a near + far L2, so the lines missing from the first level show the
 *    far level's delta; on a uniform L2 they show the DRAM delta.
 * 4. Capacity of a level (in lines): a rough maximum-likelihood estimate
 *    from the sweep, then a dedicated footprint ~30 % resident probed
 *    LV_CAP_PROBES times (re-chased between batches so the probes' own fills
 *    do not drain the level), then the likelihood of a common capacity over
 *    the footprints expected 12-50 % resident. Far vs DRAM deltas, when they
 *    are close, are split by a two-Gaussian mixture with known centres. The
 *    line size (infer_measure_line, stage_line.c) turns lines into bytes.
 *
 * Notes / assumptions:
 * - At most two L2 levels (near, far). Latencies are reported as the base:
 *   the fastest (SM, slice) pair, as profiles define them; the far and DRAM
 *   latencies are the base plus their skew-free deltas.
 * - ctx->hit_latency, miss_latency, dram_latency, hit_miss_threshold are in
 *   seq units (timer overhead and SM 0's typical skew included); the deltas
 *   (pair_noise, miss_delta, dram_delta) are skew-free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/changepoint.h"
#include "gpuxray/stats.h"
#include "../infer_util.h"

#define LV_BLOCK_BYTES 256u /* one random 32 B slot per block: one line, one sector */
#define LV_START_BYTES (32u << 10)
#define LV_MAX_POINTS 40
#define LV_TIMED_STEPS 2048u
#define LV_SWEEP_PROBES 48
#define LV_FAR_PROBES 96
#define LV_STREAM_CHASES 3 /* chases over the far plateau, for far_stream_extra */
/* the far plateau is measured only where the combined capacity leaves room
 * for one: at least this multiple of the first level (below, the footprint
 * halfway between them sits in the transitions at both ends) */
#define LV_STREAM_MIN_RATIO 1.3
#define LV_CAP_PROBES 3072
#define LV_COLD 40
#define LV_COLD_ATTEMPTS 3
#define LV_RANK_Z 3.5 /* far-test vs cold-line deltas: rank-test z for a separate level */
/* Far and DRAM deltas overlap line by line (per-line counts of far
 * residents are not trusted; level 2 comes from the chase curve) when their
 * centres lie less than this many combined sigmas apart,
 * sqrt(dram_sigma^2 + far_sigma^2): there each cluster puts more than ~4%
 * of its lines on the other side of the midpoint. One combined spread, not
 * a sum of per-cluster multiples: the far sigma comes from a few dozen
 * lines, and weighting its sampling error three times over flipped the
 * decision between two samples of one card. HBM's wide DRAM spread (an
 * H200: gap ~200 cycles, DRAM sigma 113-197) stays far inside it. */
#define LV_OVERLAP_SIGMAS 2.5
#define LV_COLD_STRIDE (32u << 10) /* cold lines this far apart: different DRAM rows */
#define LV_LINES 6       /* lines per SM for the skew */
#define LV_SM0_LINES 24  /* lines on SM 0 (its typical hit latency) */
#define LV_SMS 64        /* SMs sampled: many (SM, slice) pairs even with one slice */
#define LV_RELOADS 15
#define LV_R_LO 0.12
#define LV_R_HI 0.5

typedef struct lv_point {
    double f, y;  /* footprint bytes, chase mean cycles */
    int k;        /* probes kept (outliers dropped) */
    int n1;       /* of which in the first level */
    int n_nf, cap_nf;
    double *nf;   /* deltas of the others (far or DRAM) */
} lv_point;

typedef struct lv_state {
    gx_infer *ctx;
    size_t n;
    lv_point p[LV_MAX_POINTS];
    double dram_delta, far_delta, noise; /* skew-free deltas, pair sigma (of DRAM deltas) */
    double dram_low;                     /* 10th percentile of the cold-line deltas */
    double cold[LV_COLD];                /* the cold-line deltas */
    double far_noise; /* sigma of far deltas (on-chip: much tighter than DRAM's on HBM) */
    double thr1;                          /* delta below: first level */
    int near_far;
    uint64_t *blocks;  /* slot offsets of the work area's blocks, random order */
    size_t nblocks;
    uint64_t *chain, *probe;
    double *delta;
} lv_state;

/* The footprint's lines: the first n blocks of a random permutation of the
 * work area's blocks (nested: every footprint contains the smaller ones, so
 * lines a policy never evicts are always chain lines), one fixed 32 B slot
 * per block. Spread over every page of the arena, so hash bits above the
 * page average out. */
static int make_blocks(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    size_t total = (size_t)(ctx->arena_work_bytes / LV_BLOCK_BYTES);
    s->blocks = malloc(total * sizeof *s->blocks);
    s->chain = malloc(total * sizeof *s->chain);
    if (!s->blocks || !s->chain)
        return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory for %zu blocks", total);
    for (size_t i = 0; i < total; i++)
        s->blocks[i] = (uint64_t)i * LV_BLOCK_BYTES +
                       gx_rng_below(&ctx->rng, LV_BLOCK_BYTES / INFER_MIN_LINE_BYTES) *
                           INFER_MIN_LINE_BYTES;
    gx_rng_shuffle_u64(&ctx->rng, s->blocks, total);
    s->nblocks = total;
    return GX_OK;
}

/* A chain over the first f / LV_BLOCK_BYTES blocks, random order, warm +
 * short timed chase. */
static int chase_footprint(lv_state *s, uint64_t f, double *y, size_t *n_out)
{
    gx_infer *ctx = s->ctx;
    size_t n = (size_t)(f / LV_BLOCK_BYTES);
    if (n < 2)
        n = 2;
    if (n > s->nblocks)
        n = s->nblocks;
    infer_chain_shuffle(&ctx->rng, s->blocks, n, s->chain);
    uint32_t warm = n < 4096 ? 2 : 1, rounds = 1;
    uint64_t steps = LV_TIMED_STEPS;
    if (n < LV_TIMED_STEPS) {
        rounds = (uint32_t)((LV_TIMED_STEPS + n - 1) / n);
        steps = 0;
    }
    *n_out = n;
    return infer_chase(ctx, s->chain, n, warm, rounds, steps, 0, y);
}

/* Re-walk the current chain once (restores the steady state after probes). */
static int rechase(lv_state *s, size_t n)
{
    double y = 0;
    return infer_chase(s->ctx, s->chain, n, 1, 1, 1, 0, &y);
}

/* Probe k random chain lines; classify the deltas into pt. */
static int probe_point(lv_state *s, size_t n, int k, lv_point *pt)
{
    gx_infer *ctx = s->ctx;
    if ((size_t)k > n)
        k = (int)n;
    infer_pick_distinct(&ctx->rng, s->chain, n, (size_t)k, s->probe);
    int rc = infer_probe_pairs(ctx, s->probe, (size_t)k, 0, NULL, s->delta);
    if (rc != GX_OK)
        return rc;
    if (pt->n_nf + k > pt->cap_nf) {
        int cap = pt->n_nf + k + 64;
        double *nf = realloc(pt->nf, (size_t)cap * sizeof *nf);
        if (!nf)
            return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
        pt->nf = nf;
        pt->cap_nf = cap;
    }
    double hi = s->dram_delta + fmax(6 * s->noise, 0.5 * s->dram_delta);
    for (int i = 0; i < k; i++) {
        double d = s->delta[i];
        if (d < -s->thr1 || d > hi)
            continue; /* an outlier in one of the three timings */
        pt->k++;
        if (d < s->thr1)
            pt->n1++;
        else
            pt->nf[pt->n_nf++] = d;
    }
    return GX_OK;
}

/* Two Gaussians with known centres a, b and sigma: weight of a (EM). */
static double mixture_weight(const double *x, size_t n, double a, double sa, double b, double sb)
{
    /* Two Gaussians with known centres and their own spreads: far hits are
     * tight (on-chip), DRAM deltas wide on real HBM. EM on the weight only. */
    if (n == 0)
        return 0;
    double w = 0.5;
    for (int it = 0; it < 200; it++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            double za = (x[i] - a) / sa, zb = (x[i] - b) / sb;
            double pa = w * exp(-0.5 * za * za) / sa, pb = (1 - w) * exp(-0.5 * zb * zb) / sb;
            if (pa + pb > 1e-300)
                sum += pa / (pa + pb);
            else
                sum += fabs(x[i] - a) / sa < fabs(x[i] - b) / sb;
        }
        double nw = sum / (double)n;
        if (fabs(nw - w) < 1e-7) {
            w = nw;
            break;
        }
        w = nw;
    }
    return w;
}

/* Resident fraction in the first level (0) or in any L2 level (1). */
static double resident(const lv_state *s, const lv_point *p, int level)
{
    if (p->k == 0)
        return NAN;
    if (level == 0 || !s->near_far)
        return (double)p->n1 / p->k;
    double w = mixture_weight(p->nf, (size_t)p->n_nf, s->far_delta,
                              fmax(s->far_noise > 0 ? s->far_noise : s->noise, 1.0),
                              s->dram_delta, fmax(s->noise, 1.0));
    return ((double)p->n1 + w * p->n_nf) / p->k;
}

/* Maximum likelihood of a common capacity c (in chain lines) over the
 * points whose expected resident fraction c_ref / lines lies in [lo, hi]
 * (c_ref <= 0: their measured fraction): resident counts are binomial with
 * p = c / lines at each point. Bisection on the score. */
static double mle_capacity(const lv_state *s, int level, double c_ref, double rlo, double rhi,
                           double *rel_sd, int verbose)
{
    double hs[LV_MAX_POINTS], ks[LV_MAX_POINTS], fs[LV_MAX_POINTS], fmin_pt = INFINITY;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        double lines = s->p[i].f / LV_BLOCK_BYTES;
        double r = resident(s, &s->p[i], level);
        double rsel = c_ref > 0 ? c_ref / lines : r;
        if (!(rsel >= rlo && rsel <= rhi) || s->p[i].k == 0)
            continue;
        hs[m] = r * s->p[i].k;
        ks[m] = s->p[i].k;
        fs[m] = lines;
        fmin_pt = fmin(fmin_pt, fs[m]);
        if (verbose)
            infer_progress(s->ctx, "levels: level %d, %.0f lines: %.0f of %.0f resident -> %.0f",
                           level + 1, fs[m], hs[m], ks[m], hs[m] / ks[m] * fs[m]);
        m++;
    }
    if (rel_sd)
        *rel_sd = NAN;
    if (m == 0)
        return NAN;
    double lo = 0, hi = fmin_pt;
    for (int it = 0; it < 100; it++) {
        double c = 0.5 * (lo + hi), score = 0;
        for (size_t i = 0; i < m; i++)
            score += hs[i] / c - (ks[i] - hs[i]) / (fs[i] - c);
        if (score > 0)
            lo = c;
        else
            hi = c;
    }
    double c = 0.5 * (lo + hi), info = 0;
    for (size_t i = 0; i < m; i++)
        info += hs[i] / (c * c) + (ks[i] - hs[i]) / ((fs[i] - c) * (fs[i] - c));
    if (rel_sd)
        *rel_sd = info > 0 ? 1 / sqrt(info) / c : NAN;
    return c;
}

/* Capacity of a level (in footprint bytes: lines x LV_BLOCK_BYTES): a rough
 * estimate from the sweep, then a dedicated point where about 30 % of the
 * chain is resident, probed LV_CAP_PROBES times in batches (re-chased
 * between batches), then the likelihood over the points expected in range. */
static int level_capacity(lv_state *s, int level, double *cap, double *rel_sd)
{
    *cap = NAN;
    *rel_sd = NAN;
    double rough = mle_capacity(s, level, 0, 0.06, 0.75, NULL, 0);
    if (!isfinite(rough) || s->n >= LV_MAX_POINTS)
        return GX_OK;
    double lines = rough / 0.3;
    if (lines * LV_BLOCK_BYTES > (double)s->ctx->arena_work_bytes)
        lines = (double)s->ctx->arena_work_bytes / LV_BLOCK_BYTES;
    lv_point *bp = &s->p[s->n];
    memset(bp, 0, sizeof *bp);
    bp->f = floor(lines) * LV_BLOCK_BYTES;
    size_t n = 0;
    int rc = chase_footprint(s, (uint64_t)bp->f, &bp->y, &n);
    if (rc != GX_OK)
        return rc;
    s->n++;
    int batch = (int)(rough / 48);
    batch = batch < 16 ? 16 : batch > LV_CAP_PROBES ? LV_CAP_PROBES : batch;
    for (int guard = 0; rc == GX_OK && bp->k < LV_CAP_PROBES && guard < 128; guard++) {
        rc = probe_point(s, n, batch, bp);
        if (rc == GX_OK && bp->k < LV_CAP_PROBES)
            rc = rechase(s, n);
    }
    if (rc != GX_OK)
        return rc;
    /* keep the sweep order (sorted by footprint) */
    for (size_t i = s->n - 1; i > 0 && s->p[i - 1].f > s->p[i].f; i--) {
        lv_point t = s->p[i];
        s->p[i] = s->p[i - 1];
        s->p[i - 1] = t;
    }
    double c = mle_capacity(s, level, rough, LV_R_LO, LV_R_HI, rel_sd, 1);
    *cap = c * LV_BLOCK_BYTES;
    return GX_OK;
}

typedef struct lv_skew {
    double base_hit;     /* fastest (SM, slice) pair hit latency, profile units */
    double sm0_hit_seq;  /* median hit latency of SM 0's lines, seq units */
    double spread;       /* 95th - 5th percentile of per-pair hit medians */
} lv_skew;

static int measure_skew(gx_infer *ctx, const uint64_t *lines_at, size_t nlines, lv_skew *sk)
{
    uint32_t nsm = ctx->info->sm_count < LV_SMS ? ctx->info->sm_count : LV_SMS;
    double med[LV_SM0_LINES + LV_SMS * LV_LINES], sm0[LV_SM0_LINES];
    size_t k = 0;
    for (uint32_t j = 0; j < nsm; j++) {
        uint32_t sm = (uint32_t)((uint64_t)j * ctx->info->sm_count / nsm);
        int nl = j == 0 ? LV_SM0_LINES : LV_LINES;
        for (int i = 0; i < nl; i++) {
            uint64_t off = lines_at[gx_rng_below(&ctx->rng, nlines)];
            int rc = infer_reload_latency(ctx, off, sm, LV_RELOADS, &med[k]);
            if (rc != GX_OK)
                return rc;
            if (j == 0)
                sm0[i] = med[k];
            k++;
        }
    }
    sk->base_hit = gx_percentile(med, k, 1) - ctx->timer_overhead;
    sk->spread = gx_percentile(med, k, 95) - gx_percentile(med, k, 5);
    sk->sm0_hit_seq = gx_median(sm0, LV_SM0_LINES);
    return GX_OK;
}

/* Cold pairs: DRAM delta and the pair noise. */
static int measure_cold(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    uint64_t offs[LV_COLD];
    double d[LV_COLD];
    /* Cold lines far apart (LV_COLD_STRIDE), taken from the END of the
     * never-touched reserve (which then ends before them): consecutive fresh
     * blocks would share DRAM rows, and on real HBM a row-buffer hit is much
     * faster than the random access a DRAM latency should describe. The
     * page they sit in is TLB-warmed first through a block that is not used. */
    const uint64_t stride = LV_COLD_STRIDE;
    if (ctx->fresh_end < ctx->fresh_next + (LV_COLD + 2) * stride)
        return gx_fail(ctx->msg, GX_ERANGE, "levels: the never-touched reserve is too small");
    uint64_t top = ctx->fresh_end - stride;
    uint64_t page = ctx->info->page_bytes ? ctx->info->page_bytes : 4096;
    uint64_t warmed = ~(uint64_t)0;
    for (int i = 0; i < LV_COLD; i++) {
        offs[i] = top - (uint64_t)i * stride;
        if (offs[i] / page != warmed) {
            warmed = offs[i] / page;
            uint64_t sentinel = warmed * page + INFER_FRESH_BLOCK_BYTES;
            if (sentinel % stride == top % stride) /* never one of the cold lines */
                sentinel += INFER_FRESH_BLOCK_BYTES;
            gx_seq_op op = {.offset = sentinel, .kind = GX_OP_LOAD, .timed = 0};
            double dummy = 0;
            int rc = infer_seq_timed(ctx, &op, 1, 0, &dummy);
            if (rc != GX_OK)
                return rc;
        }
    }
    ctx->fresh_end = offs[LV_COLD - 1] / page * page; /* the rest stays fresh below */
    if (ctx->fresh_end < ctx->fresh_next)
        ctx->fresh_end = ctx->fresh_next;
    int rc = infer_probe_pairs(ctx, offs, LV_COLD, 0, NULL, d);
    if (rc != GX_OK)
        return rc;
    s->dram_delta = gx_median(d, LV_COLD);
    s->noise = fmax(1.4826 * gx_mad(d, LV_COLD), 1.0);
    s->dram_low = gx_percentile(d, LV_COLD, 10);
    memcpy(s->cold, d, sizeof s->cold);
    return GX_OK;
}

/* Level 2 from the chase curve, for near-far cards where far and DRAM deltas
 * overlap line by line (on an H200, HBM row-buffer hits are as fast as far
 * hits, so per-line classification cannot count far residents). The chase
 * mean rises from the far plateau to the DRAM plateau as the footprint
 * passes the combined capacity; the capacity is where it crosses halfway
 * (bracketed on a grid of multiples of the first level, then bisected).
 * *c2 in chain lines; *sd the relative half-width of the final bracket. */
static int curve_capacity2(lv_state *s, double c1, double *c2, double *sd)
{
    static const double mult[] = {1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.5};
    enum { NM = sizeof mult / sizeof mult[0] };
    double x[NM], y[NM];
    size_t k = 0, n = 0;
    *c2 = NAN;
    *sd = NAN;
    for (size_t i = 0; i < NM; i++) {
        double lines = floor(c1 * mult[i]);
        if (lines > (double)s->nblocks)
            break;
        x[k] = lines;
        int rc = chase_footprint(s, (uint64_t)lines * LV_BLOCK_BYTES, &y[k], &n);
        if (rc != GX_OK)
            return rc;
        k++;
    }
    if (k < 4)
        return GX_OK;
    double lo_y = y[0], hi_y = y[k - 1], mid = 0.5 * (lo_y + hi_y);
    if (!(hi_y - lo_y > 8 * s->far_noise / sqrt((double)LV_TIMED_STEPS) + 5))
        return GX_OK;
    size_t b = 0;
    while (b + 1 < k && !(y[b] < mid && y[b + 1] >= mid))
        b++;
    if (b + 1 >= k)
        return GX_OK;
    double a = x[b], z = x[b + 1];
    for (int it = 0; it < 3; it++) { /* bisection on the bracket */
        double m = floor(0.5 * (a + z)), ym = 0;
        int rc = chase_footprint(s, (uint64_t)m * LV_BLOCK_BYTES, &ym, &n);
        if (rc != GX_OK)
            return rc;
        if (ym < mid)
            a = m;
        else
            z = m;
    }
    *c2 = 0.5 * (a + z);
    *sd = 0.5 * (z - a) / *c2;
    infer_progress(s->ctx, "levels: level 2 from the chase curve: far %.0f, DRAM %.0f, halfway at "
                   "%.0f lines (+-%.1f%%)", lo_y, hi_y, *c2, 100 * *sd);
    return GX_OK;
}

/* The chase's mean step over the far plateau: median of LV_STREAM_CHASES
 * chases, each over every line of a contiguous region (in a fresh random
 * cyclic order) halfway between the first level and the combined capacity.
 * Every line of a contiguous region: each set holds as many chain lines as
 * the next (a chain of random lines overfills some sets before others,
 * which mixes DRAM misses or near hits into the plateau). Every step is a
 * far hit that follows a far hit, so its excess over the near plateau + the
 * far delta of isolated far hits is the extra cost of far hits back to
 * back (the model's far_stream_extra). *far_delta: the median delta of the
 * chase's next lines (the oldest: all in the far level), probed in pairs
 * after each chase: 3 x 96 far samples where the topology test's random
 * lines at 1.4x the first level give ~35. The chase: 2048 steps per chase,
 * where a 64-load seq stream (its loop leaves gaps a chase does not have)
 * read +6 and +39 on two runs of one chip (it is gone). c1, c2 in lines. *y = NaN when
 * the levels leave no plateau between them. The random stream is restored
 * after: later stages draw what they drew without this measurement. */
static int far_stream_chase(lv_state *s, double c1, double c2, uint32_t line, double *y,
                            double *far_delta)
{
    gx_infer *ctx = s->ctx;
    *y = NAN;
    *far_delta = NAN;
    if (!line || !isfinite(c1) || !isfinite(c2) || c2 < LV_STREAM_MIN_RATIO * c1)
        return GX_OK;
    size_t n = (size_t)(0.5 * (c1 + c2));
    if ((uint64_t)n * line > ctx->arena_work_bytes)
        return GX_OK;
    uint64_t *chain = malloc(n * sizeof *chain);
    if (!chain)
        return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    double ys[LV_STREAM_CHASES], fd[LV_STREAM_CHASES * LV_FAR_PROBES];
    size_t nfd = 0, k = n / 8 < LV_FAR_PROBES ? n / 8 : LV_FAR_PROBES;
    double hi = 0.5 * (s->far_delta + s->dram_delta);
    gx_rng keep = ctx->rng;
    int rc = GX_OK;
    for (int i = 0; rc == GX_OK && i < LV_STREAM_CHASES; i++) {
        infer_chain_strided(&ctx->rng, 0, line, n, chain);
        rc = infer_chase(ctx, chain, n, 2, 1, LV_TIMED_STEPS, 0, &ys[i]);
        /* isolated far hits of the same lines: the chase's next ones (the
         * oldest, in the far level) */
        size_t pos = n > LV_TIMED_STEPS ? LV_TIMED_STEPS : 0;
        for (size_t j = 0; j < k; j++)
            s->probe[j] = chain[(pos + j) % n];
        if (rc == GX_OK && (rc = infer_probe_pairs(ctx, s->probe, k, 0, NULL, s->delta)) == GX_OK)
            for (size_t j = 0; j < k; j++)
                if (s->delta[j] >= s->thr1 && s->delta[j] < hi)
                    fd[nfd++] = s->delta[j];
    }
    ctx->rng = keep;
    free(chain);
    if (rc == GX_OK) {
        *y = gx_median(ys, LV_STREAM_CHASES);
        /* most of them must be far hits, or the footprint was not a plateau */
        if (nfd >= (size_t)LV_STREAM_CHASES * k / 2 && nfd >= 8)
            *far_delta = gx_median(fd, nfd);
    }
    return rc;
}

/* Topology test at F = 1.4 x the first level: far delta or DRAM delta? */
static int far_test(lv_state *s, double cap1, char *why, size_t why_len)
{
    gx_infer *ctx = s->ctx;
    uint64_t f = (uint64_t)(1.4 * cap1) / LV_BLOCK_BYTES * LV_BLOCK_BYTES;
    size_t n = 0;
    double y = 0;
    if (f > ctx->arena_work_bytes)
        f = ctx->arena_work_bytes / LV_BLOCK_BYTES * LV_BLOCK_BYTES;
    int rc = chase_footprint(s, f, &y, &n);
    if (rc == GX_OK)
        rc = chase_footprint(s, f, &y, &n); /* two passes: exclusive levels settle */
    if (rc != GX_OK)
        return rc;
    /* First the chase's next lines: the oldest, which a recency policy has
     * pushed out of the first level (into the far level, or DRAM); random
     * chain lines are mostly first-level hits at this footprint (an H200
     * left 15-38 of 96 for the test, mixing far and DRAM: far deltas of
     * 186-246 over six runs). A policy that keeps old lines (MRU-like)
     * leaves fewer than half of them missing: then random lines too. */
    int k = LV_FAR_PROBES > (int)n ? (int)n : LV_FAR_PROBES;
    size_t pos = n >= LV_TIMED_STEPS ? (size_t)(LV_TIMED_STEPS % n) : 0;
    /* the random lines are drawn first, probed only when needed (after the
     * oldest ones in the probe array) */
    uint64_t *rnd = s->probe + k;
    infer_pick_distinct(&ctx->rng, s->chain, n, (size_t)k, rnd);
    for (int j = 0; j < k; j++)
        s->probe[j] = s->chain[(pos + (size_t)j) % n];
    if ((rc = infer_probe_pairs(ctx, s->probe, (size_t)k, 0, NULL, s->delta)) != GX_OK)
        return rc;
    double x[2 * LV_FAR_PROBES];
    size_t m = 0;
    double hi = s->dram_delta + fmax(6 * s->noise, 0.5 * s->dram_delta);
    for (int i = 0; i < k; i++)
        if (s->delta[i] >= s->thr1 && s->delta[i] <= hi)
            x[m++] = s->delta[i];
    if (2 * m < (size_t)k) {
        if ((rc = infer_probe_pairs(ctx, rnd, (size_t)k, 0, NULL, s->delta)) != GX_OK)
            return rc;
        for (int i = 0; i < k; i++)
            if (s->delta[i] >= s->thr1 && s->delta[i] <= hi)
                x[m++] = s->delta[i];
        k *= 2;
    }
    if (m < 6) {
        snprintf(why, why_len, "only %zu of %d lines missed the first level at 1.4x", m, k);
        s->near_far = 0;
        return GX_OK;
    }
    double med = gx_median(x, m);
    s->far_noise = fmax(1.4826 * gx_mad(x, m), 1.0);
    /* standard error of the difference of the two medians, each from its
     * own sample's spread (on HBM the DRAM deltas spread far wider than
     * far-partition hits do) */
    double se_dram = 1.25 * s->noise / sqrt((double)LV_COLD);
    double se_far = 1.25 * s->far_noise / sqrt((double)m);
    double se = sqrt(se_dram * se_dram + se_far * se_far);
    double need = fmax(5 * se, 0.04 * s->dram_delta);
    /* or a rank test (Mann-Whitney): the far-test deltas lie below the
     * cold-line deltas far beyond chance, whatever the shape of the DRAM
     * spread (HBM row hits and misses make it bimodal, and its MAD then
     * overstates the uncertainty of its median) */
    double u = 0;
    for (size_t i = 0; i < m; i++)
        for (int j = 0; j < LV_COLD; j++)
            u += x[i] < s->cold[j] ? 1.0 : x[i] == s->cold[j] ? 0.5 : 0.0;
    double mn = (double)m * LV_COLD;
    double z = (u - 0.5 * mn) / sqrt(mn * ((double)m + LV_COLD + 1) / 12.0);
    s->near_far = s->dram_delta - med > need ||
                  (z >= LV_RANK_Z && s->dram_delta - med > 0.1 * s->dram_delta);
    s->far_delta = med;
    snprintf(why, why_len, "misses at 1.4x C1: delta %.0f vs DRAM %.0f (%zu lines, rank z %.1f)",
             med, s->dram_delta, m, z);
    return GX_OK;
}

static void write_profile(gx_infer *ctx, double dram, double conf_lat, double conf_lv)
{
    gx_profile *p = ctx->out;
    p->l2.present = 1;
    if (conf_lv >= 0.9) {
        p->l2.n_levels = ctx->n_levels;
        for (int i = 0; i < ctx->n_levels; i++)
            p->l2.levels[i] = ctx->levels[i];
        gx_profile_set_confidence(p, "l2.levels_from_one_sm", conf_lv);
    }
    if (conf_lat < 0.9)
        return;
    p->l2.topology = ctx->topology;
    p->memory.dram_latency_cycles = dram;
    if (ctx->topology == GX_TOPO_UNIFORM) {
        p->l2.hit_cycles = ctx->levels[0].latency_cycles;
    } else {
        p->l2.near_hit_cycles = ctx->levels[0].latency_cycles;
        p->l2.far_hit_cycles = ctx->levels[1].latency_cycles;
        if (ctx->far_stream_extra > 0) {
            p->l2.far_stream_extra_cycles = round(ctx->far_stream_extra);
            gx_profile_set_confidence(p, "l2.latency_cycles.far_stream_extra", conf_lat);
        }
    }
    const char *keys[] = {"l2.topology", "memory.dram_latency_cycles",
                          ctx->topology == GX_TOPO_UNIFORM ? "l2.latency_cycles.hit"
                                                           : "l2.latency_cycles.near_hit",
                          ctx->topology == GX_TOPO_UNIFORM ? NULL : "l2.latency_cycles.far_hit"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i])
            gx_profile_set_confidence(p, keys[i], conf_lat);
}

static void report(gx_infer *ctx, const lv_skew *sk, double dram, double conf,
                   double conf_lv, size_t points, const char *why, const double *rel_sd,
                   const char *low)
{
    char v[128], m[200], b[32];
    int in = conf >= 0.9;
    v[0] = 0;
    for (int i = 0; i < ctx->n_levels; i++) {
        size_t len = strlen(v);
        snprintf(v + len, sizeof v - len, "%s%s @ %.0f", i ? ", " : "",
                 infer_fmt_bytes(ctx->levels[i].capacity_bytes, b, sizeof b),
                 ctx->levels[i].latency_cycles);
    }
    snprintf(m, sizeof m, "residency of %zu nested chains (+-%.0f%%), latency classes%s",
             points, 100 * rel_sd[ctx->n_levels - 1], low);
    infer_report_row(ctx, "l2.levels_from_one_sm", v, m, conf_lv, conf_lv >= 0.9);
    infer_report_row(ctx, "l2.topology", gx_topology_name(ctx->topology), why, conf, in);
    if (ctx->topology == GX_TOPO_UNIFORM) {
        snprintf(v, sizeof v, "%.0f", ctx->levels[0].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.hit", v,
                         "1st pct of reload medians over SMs x lines", conf, in);
    } else {
        snprintf(v, sizeof v, "%.0f", ctx->levels[0].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.near_hit", v,
                         "1st pct of reload medians over SMs x lines", conf, in);
        snprintf(v, sizeof v, "%.0f", ctx->levels[1].latency_cycles);
        infer_report_row(ctx, "l2.latency_cycles.far_hit", v,
                         "near hit + skew-free delta of far lines", conf, in);
        if (isfinite(ctx->far_stream_extra)) {
            snprintf(v, sizeof v, "%.0f", ctx->far_stream_extra);
            infer_report_row(ctx, "l2.latency_cycles.far_stream_extra", v,
                             "chase over every line of a region between the levels (far hits "
                             "back to back) minus near plateau and isolated far delta",
                             ctx->far_stream_extra > 0 ? conf : NAN,
                             in && ctx->far_stream_extra > 0);
        }
    }
    snprintf(v, sizeof v, "%.0f", dram);
    snprintf(m, sizeof m, "hit + skew-free delta of %d cold lines (pair sigma %.1f)", LV_COLD,
             ctx->pair_noise);
    infer_report_row(ctx, "memory.dram_latency_cycles", v, m, conf, in);
    snprintf(v, sizeof v, "%.0f", ctx->chase_hit_latency);
    infer_report_row(ctx, "first plateau seen by a chase", v,
                     "chase mean per access from SM 0 (base + SM 0's mean skew)", NAN, 0);
    snprintf(v, sizeof v, "%.0f", sk->spread);
    infer_report_row(ctx, "hit skew over (SM, slice)", v, "95th - 5th pct of reload medians",
                     NAN, 0);
}

static double interp_half(const lv_state *s, int level)
{
    /* first footprint where the resident fraction falls below 1/2: ~2 C */
    for (size_t i = 1; i < s->n; i++) {
        double r0 = resident(s, &s->p[i - 1], level), r1 = resident(s, &s->p[i], level);
        if (r0 >= 0.5 && r1 < 0.5) {
            double t = (r0 - 0.5) / (r0 - r1);
            return 0.5 * exp(log(s->p[i - 1].f) + t * (log(s->p[i].f) - log(s->p[i - 1].f)));
        }
    }
    return NAN;
}

static int count_below(const lv_point *p, double cut)
{
    int c = 0;
    for (int i = 0; i < p->n_nf; i++)
        c += p->nf[i] < cut;
    return c;
}

/* Report data (series "curve"): the sweep's points, the chase curve's
 * plateaus, the levels, the cold lines' DRAM deltas. Copies only. */
static void record_curve(lv_state *s, const cp_segment *pl, size_t np, const double *caps,
                         uint32_t line)
{
    gx_infer *ctx = s->ctx;
    if (!infer_recording(ctx))
        return;
    infer_data_set(ctx, "curve", "method",
                   json_string("one thread on SM 0 chases a random cyclic chain over one random "
                               "32 B slot per 256 B block of nested footprints (x2 from 32 KiB); "
                               "mean cycles per access; probe pairs on random chain lines count "
                               "those still in the first level"));
    infer_data_set(ctx, "curve", "sm", json_integer(0));
    infer_data_set(ctx, "curve", "timed_steps", json_integer(LV_TIMED_STEPS));
    infer_data_set(ctx, "curve", "block_bytes", json_integer(LV_BLOCK_BYTES));
    for (size_t i = 0; i < s->n; i++) {
        const lv_point *p = &s->p[i];
        infer_data_append(ctx, "curve", "points",
                          json_pack("{s:f,s:o,s:i,s:o}", "footprint_bytes", p->f, "cycles",
                                    infer_json_num(p->y), "probes", p->k, "resident_first",
                                    infer_json_num(p->k ? (double)p->n1 / p->k : NAN)));
    }
    for (size_t i = 0; i < np; i++)
        infer_data_append(ctx, "curve", "plateaus",
                          json_pack("{s:I,s:I,s:o,s:o}", "first", (json_int_t)pl[i].first,
                                    "last", (json_int_t)pl[i].last, "cycles",
                                    infer_json_num(pl[i].level), "spread",
                                    infer_json_num(pl[i].spread)));
    for (int l = 0; l < (s->near_far ? 2 : 1); l++)
        if (isfinite(caps[l]) && line)
            infer_data_append(ctx, "curve", "levels",
                              json_pack("{s:f}", "capacity_bytes",
                                        caps[l] / LV_BLOCK_BYTES * line));
    for (int i = 0; i < LV_COLD; i++)
        infer_data_append(ctx, "curve", "dram_deltas", infer_json_num(s->cold[i]));
}

static int run_levels(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    uint64_t work = ctx->arena_work_bytes;
    lv_skew sk;
    int rc = measure_cold(s);
    if (rc == GX_OK)
        rc = make_blocks(s);
    if (rc != GX_OK)
        return rc;
    /* skew on lines every chain contains (the first blocks) */
    if ((rc = measure_skew(ctx, s->blocks, LV_START_BYTES / LV_BLOCK_BYTES, &sk)) != GX_OK)
        return rc;
    /* Cold lines: first-level threshold = half the DRAM delta, at most a
     * quarter of the hit latency (a far level costs at least half a hit
     * more). The hit side of a delta is as tight as the reload jitter;
     * s->noise is the spread of DRAM deltas, which on real HBM is wide (row
     * hits and misses, refresh: ~75 cycles on an H200) and must not veto a
     * threshold that sits far below the DRAM cluster. Require the threshold
     * to clear both the hit jitter and the DRAM cluster's lower tail. An
     * unsure answer is measured again on fresh lines (an H200 just out of
     * idle once showed a spread of 130 cycles on its first 40 cold lines). */
    for (int attempt = 0;; attempt++) {
        if (attempt > 0 && (rc = measure_cold(s)) != GX_OK)
            return rc;
        s->thr1 = fmin(0.5 * s->dram_delta, 0.25 * sk.base_hit);
        double hit_noise =
            fmin(1.5 * fmax(ctx->have_timer ? ctx->timer_noise : 2.0, 1.0), s->noise);
        /* the cluster's lower tail: from the spread when it is unimodal, or
         * measured (HBM's row hits and misses make it wide and skewed) */
        int tail_clear = s->dram_delta - s->thr1 >= 2.5 * s->noise ||
                         s->dram_low - s->thr1 >= fmax(3 * hit_noise, 0.25 * s->dram_delta);
        if (s->thr1 >= 3 * hit_noise && tail_clear) {
            infer_progress(ctx, "levels: DRAM delta %.0f (spread %.1f), first-level threshold %.0f",
                           s->dram_delta, s->noise, s->thr1);
            break;
        }
        infer_progress(ctx, "levels: DRAM delta %.0f (10th pct %.0f) too close to the pair noise "
                            "%.1f%s",
                       s->dram_delta, s->dram_low, s->noise, attempt + 1 < LV_COLD_ATTEMPTS ? ", again" : "");
        if (attempt + 1 >= LV_COLD_ATTEMPTS)
            return gx_fail(ctx->msg, GX_EUNSURE,
                           "levels: DRAM delta %.0f too close to the pair noise %.1f (%d attempts)",
                           s->dram_delta, s->noise, LV_COLD_ATTEMPTS);
    }
    /* sweep */
    for (double f = LV_START_BYTES; f <= (double)work && s->n < LV_MAX_POINTS; f *= 2) {
        lv_point *pt = &s->p[s->n];
        memset(pt, 0, sizeof *pt);
        pt->f = f;
        size_t n = 0;
        if ((rc = chase_footprint(s, (uint64_t)f, &pt->y, &n)) != GX_OK)
            return rc;
        if ((rc = probe_point(s, n, LV_SWEEP_PROBES, pt)) != GX_OK)
            return rc;
        s->n++;
        double r1 = resident(s, pt, 0);
        double rall = r1 + (double)count_below(pt, s->dram_delta - fmax(4 * s->noise,
                                                                       0.1 * s->dram_delta)) /
                               (pt->k ? pt->k : 1);
        infer_progress(ctx, "levels: %8.0f KiB chase %.1f, resident first %.2f, any %.2f",
                       f / 1024, pt->y, r1, rall);
        if (s->n >= 3 && r1 < LV_R_LO && rall < 0.2)
            break;
    }
    double c1_rough = interp_half(s, 0);
    if (!isfinite(c1_rough))
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "levels: the first level never fell below half resident (up to %.0f KiB)",
                       s->n ? s->p[s->n - 1].f / 1024 : 0.0);
    char why[160];
    if ((rc = far_test(s, c1_rough, why, sizeof why)) != GX_OK)
        return rc;
    /* the far level's points: re-probe the sweep points with the mixture */
    int nl = s->near_far ? 2 : 1;
    double caps[2] = {NAN, NAN}, sds[2] = {NAN, NAN};
    if (s->near_far) {
        /* extend the sweep until the far level is also mostly gone */
        while (s->n < LV_MAX_POINTS && resident(s, &s->p[s->n - 1], 1) > 0.2 &&
               s->p[s->n - 1].f * 2 <= (double)work) {
            lv_point *pt = &s->p[s->n];
            memset(pt, 0, sizeof *pt);
            pt->f = s->p[s->n - 1].f * 2;
            size_t n = 0;
            if ((rc = chase_footprint(s, (uint64_t)pt->f, &pt->y, &n)) != GX_OK)
                return rc;
            if ((rc = probe_point(s, n, LV_SWEEP_PROBES, pt)) != GX_OK)
                return rc;
            s->n++;
        }
    }
    int overlap = s->near_far && s->dram_delta - s->far_delta <
                                     LV_OVERLAP_SIGMAS * hypot(s->noise, s->far_noise);
    int by_curve = 0;
    for (int l = 0; l < nl; l++)
        if ((rc = level_capacity(s, l, &caps[l], &sds[l])) != GX_OK)
            return rc;
    if (overlap && isfinite(caps[0])) {
        double c2 = NAN, sd2 = NAN;
        if ((rc = curve_capacity2(s, caps[0] / LV_BLOCK_BYTES, &c2, &sd2)) != GX_OK)
            return rc;
        if (isfinite(c2)) {
            caps[1] = c2 * LV_BLOCK_BYTES;
            sds[1] = sd2;
            by_curve = 1;
        }
    }
    /* chase curve: the first plateau's level (for the report and later stages) */
    double ys[LV_MAX_POINTS];
    for (size_t i = 0; i < s->n; i++)
        ys[i] = s->p[i].y;
    cp_segment pl[4];
    size_t np = cp_plateaus(ys, s->n, fmax(0.025 * ys[0], 3.0), 2, pl, 4);
    double chase1 = np > 0 && pl[0].first == 0 ? pl[0].level : ys[0];
    /* pair_noise: the spread of a hit-side delta (reload jitter), used for
     * unsure bands around hit/miss thresholds; dram_noise: the spread of
     * DRAM deltas (wide on real HBM), used for bounds on the miss side */
    ctx->dram_noise = s->noise;
    ctx->pair_noise = fmin(s->noise, 1.5 * fmax(ctx->have_timer ? ctx->timer_noise : 2.0, 1.0));
    ctx->dram_delta = s->dram_delta;
    ctx->miss_delta = s->near_far ? s->far_delta : s->dram_delta;
    /* capacities are in lines (one line per 256 B block): the line size
     * turns them into bytes */
    uint32_t line = 0;
    double lconf = 0;
    char lhow[160] = "";
    if (isfinite(caps[0])) {
        rc = infer_measure_line(ctx, s->blocks, s->nblocks, caps[0] / LV_BLOCK_BYTES, &line,
                                &lconf, lhow, sizeof lhow);
        if (rc != GX_OK && rc != GX_EUNSURE)
            return rc;
        if (rc == GX_EUNSURE) {
            snprintf(lhow, sizeof lhow, "%.150s", ctx->msg->text);
            line = 0;
        }
        rc = GX_OK;
    }
    ctx->line_bytes = line;
    ctx->line_conf = lconf;
    /* A chase over the far plateau is a stream of far hits: each costs the
     * chase's near plateau + the far delta, unless back-to-back far hits
     * (line swaps) cost more, as on an H200 (+~40 cycles). */
    ctx->far_stream_extra = NAN;
    if (s->near_far && line) {
        double ystream = NAN, fdelta = NAN;
        if ((rc = far_stream_chase(s, caps[0] / LV_BLOCK_BYTES, caps[1] / LV_BLOCK_BYTES, line,
                                   &ystream, &fdelta)) != GX_OK)
            return rc;
        double extra = ystream - chase1 - fdelta;
        /* the far delta itself: these lines are all far hits, where the
         * topology test's at 1.4x a rough first level can mix in DRAM
         * misses (an H200: 186-246 over eight runs, against 186-200 here) */
        if (isfinite(fdelta)) {
            s->far_delta = fdelta;
            ctx->miss_delta = fdelta;
        }
        double floor_c = fmax(8.0, 0.05 * s->far_delta);
        if (isfinite(extra))
            ctx->far_stream_extra = extra > floor_c ? extra : 0.0;
        infer_progress(ctx, "levels: far hits back to back: chase %.1f over the far plateau vs "
                       "%.1f near + %.0f far delta: extra %.1f",
                       ystream, chase1, fdelta, extra);
    }
    snprintf(ctx->line_how, sizeof ctx->line_how, "%s", lhow);
    record_curve(s, pl, np, caps, line);
    ctx->n_levels = nl;
    for (int l = 0; l < nl; l++) {
        double bytes = caps[l] / LV_BLOCK_BYTES * line;
        ctx->levels[l].capacity_bytes =
            isfinite(bytes) && line ? (uint64_t)llround(bytes / 1024.0) * 1024u : 0;
        ctx->levels[l].latency_cycles =
            round(sk.base_hit + (l == 0 ? 0 : s->far_delta));
    }
    ctx->topology = nl > 1 ? GX_TOPO_NEAR_FAR : GX_TOPO_UNIFORM;
    ctx->l2_capacity = ctx->levels[nl - 1].capacity_bytes;
    ctx->hit_latency = sk.sm0_hit_seq;
    ctx->miss_latency = sk.sm0_hit_seq + ctx->miss_delta;
    ctx->dram_latency = ctx->dram_seq_latency = sk.sm0_hit_seq + s->dram_delta;
    ctx->chase_hit_latency = chase1;
    ctx->hit_miss_threshold = 0.5 * (ctx->hit_latency + ctx->miss_latency);
    ctx->have_levels = 1;
    double dram = round(sk.base_hit + s->dram_delta);

    /* confidence: latencies and topology need a clear far test; the levels
     * list needs well-measured capacities and the line size too */
    double conf_lat = 0.99, conf_lv = 0.99;
    char low[96] = "";
    if (overlap && !by_curve) {
        conf_lat = 0.6;
        snprintf(low, sizeof low, "; far and DRAM deltas too close");
    } else if (by_curve) {
        conf_lat = 0.9;
        snprintf(low, sizeof low, "; far level from the chase curve (far/DRAM overlap per line)");
    }
    for (int l = 0; l < nl; l++)
        if (!ctx->levels[l].capacity_bytes || !(sds[l] < 0.05)) {
            conf_lv = 0.5;
            snprintf(low, sizeof low, "; level %d capacity +-%.0f%%", l + 1, 100 * sds[l]);
        }
    if (lconf < 0.9) {
        conf_lv = fmin(conf_lv, 0.5);
        snprintf(low, sizeof low, "; line size unsure");
    }
    conf_lv = fmin(conf_lv, conf_lat);
    write_profile(ctx, dram, conf_lat, conf_lv);
    report(ctx, &sk, dram, conf_lat, conf_lv, s->n, why, sds, low);
    return GX_OK;
}

int gx_stage_levels(gx_infer *ctx)
{
    if (!ctx->have_timer)
        return gx_fail(ctx->msg, GX_EINVAL, "levels needs the timer stage");
    int rc = infer_arena_default(ctx);
    if (rc != GX_OK)
        return rc;
    lv_state *s = calloc(1, sizeof *s);
    if (!s)
        return gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    s->ctx = ctx;
    s->probe = malloc(LV_CAP_PROBES * sizeof *s->probe);
    s->delta = malloc(LV_CAP_PROBES * sizeof *s->delta);
    if (!s->probe || !s->delta)
        rc = gx_fail(ctx->msg, GX_ENOMEM, "levels: out of memory");
    else
        rc = run_levels(s);
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i].nf);
    free(s->chain);
    free(s->blocks);
    free(s->probe);
    free(s->delta);
    free(s);
    return rc;
}
