/* levels_curve.c - the levels stage's footprint sweep and capacities: the
 * nested footprints' lines (one fixed 32 B slot per 256 B block of a random
 * permutation), a chase over a footprint, probe pairs on its lines, and each
 * level's capacity from the resident fractions (a two-latency mixture per
 * point, a maximum-likelihood fit of C / F over the points). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "levels_internal.h"

/* The footprint's lines: the first n blocks of a random permutation of the
 * work area's blocks (nested: every footprint contains the smaller ones, so
 * lines a policy never evicts are always chain lines), one fixed 32 B slot
 * per block. Spread over every page of the arena, so hash bits above the
 * page average out. */
int lv_make_blocks(lv_state *s)
{
    gx_infer *ctx = s->ctx;
    size_t total = (size_t)(ctx->arena.work_bytes / LV_BLOCK_BYTES);
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
int lv_chase_footprint(lv_state *s, uint64_t f, double *y, size_t *n_out)
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
int lv_probe_point(lv_state *s, size_t n, int k, lv_point *pt)
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
double lv_resident(const lv_state *s, const lv_point *p, int level)
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
        double r = lv_resident(s, &s->p[i], level);
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
int lv_level_capacity(lv_state *s, int level, double *cap, double *rel_sd)
{
    *cap = NAN;
    *rel_sd = NAN;
    double rough = mle_capacity(s, level, 0, 0.06, 0.75, NULL, 0);
    if (!isfinite(rough) || s->n >= LV_MAX_POINTS)
        return GX_OK;
    double lines = rough / 0.3;
    if (lines * LV_BLOCK_BYTES > (double)s->ctx->arena.work_bytes)
        lines = (double)s->ctx->arena.work_bytes / LV_BLOCK_BYTES;
    lv_point *bp = &s->p[s->n];
    memset(bp, 0, sizeof *bp);
    bp->f = floor(lines) * LV_BLOCK_BYTES;
    size_t n = 0;
    int rc = lv_chase_footprint(s, (uint64_t)bp->f, &bp->y, &n);
    if (rc != GX_OK)
        return rc;
    s->n++;
    int batch = (int)(rough / 48);
    batch = batch < 16 ? 16 : batch > LV_CAP_PROBES ? LV_CAP_PROBES : batch;
    for (int guard = 0; rc == GX_OK && bp->k < LV_CAP_PROBES && guard < 128; guard++) {
        rc = lv_probe_point(s, n, batch, bp);
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
