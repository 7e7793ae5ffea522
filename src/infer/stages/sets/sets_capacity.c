/* sets_capacity.c - the sets stage's last fallback: sets per slice from the
 * capacity of ONE slice seen from one SM (bench/slice_capacity measured it
 * on an H200: docs/nvidia-h200.md), when no earlier method established it.
 *
 * Method (gx_target_contend and gx_target_chase only):
 * - Per-set reach R from the levels stage: one level (uniform) R = ways; two
 *   levels whose last holds about twice the first (near-far with the near
 *   partition's victims kept in the far one: the far level adds a copy of
 *   the slice's sets) R = 2 x ways; any other ratio: not established.
 * - Expected knee K = sets_est x R, sets_est = the levels' capacity over
 *   slices x ways x line (the stage's estimate): it only places the scan.
 * - The lines of one slice: every line of the work area's first pages
 *   joined by contention to the slice of line 0 (sc_join_lines, one class),
 *   in address order, until SETSCAP_SPAN x K lines (at most
 *   SETSCAP_MAX_PAGES pages).
 * - Chases (random cyclic order, SM 0) over prefixes of N lines: the
 *   plateau P at SETSCAP_LOW x K (every set below its reach), the miss
 *   level M over all the lines gathered, then a scan from SETSCAP_LOW x K in
 *   steps of K / SETSCAP_STEPS: f(N) = (mean - P) / (M - P). The knee lies
 *   between the last flat point (f <= SETSCAP_FLAT, every earlier one flat)
 *   and the next; bisection between them to one line, a step being a miss
 *   when its rise exceeds half of one overflowing set's ((R + 1) x (M - P)
 *   / N) or SETSCAP_NOISE_SIGMAS spreads of the flat points, the larger;
 *   the lines that rise takes at the scan's mean rate come off the knee.
 * - Written only when the knee is sharp (the rise from the last flat point
 *   to f >= SETSCAP_FULL takes at most SETSCAP_SHARP_FRAC of N: consecutive
 *   lines of a slice spread evenly over its sets, as physically contiguous
 *   pages make them), the knee is within SETSCAP_KNEE_TOL x R of a multiple
 *   of R (sets = knee / R) and slices x sets x ways x line agrees with the
 *   levels (sets_write_sets); otherwise "not established" with the numbers.
 *
 * - When the knee does not establish the count: the congruence classes of
 *   the first SETSCAP_CLASS_LINES x sets_est of those lines
 *   (gx_setclass_partition, src/infer/evset/setclass.h): minimal eviction
 *   sets and cyclic runs sort every line into its set. Written when every
 *   line ends in a class (no set of the prefix is missed: each holds more
 *   than ways lines; the last few may be one set, see by_classes), no class
 *   reaches SETSCAP_CLASS_MERGED x the mean (two sets taken for one), and the capacity
 *   cross-check agrees; sets = the classes. On an H200 (2 slices x 64
 *   pages, bench/slice_capacity --classes) every line fell into exactly 320
 *   classes of 68-72 lines, where the knee read 315-316.
 *
 * Notes: random frames spread a slice's lines over its sets unevenly
 * (binomially), so the first sets overflow well before the knee and the
 * rise is soft: the method refuses there. Costs: 2 + 4 x pages contention
 * launches (sc_join_lines with one class: 2 baselines + 2 hammered, each
 * over a page's lines), about (SETSCAP_SPAN - SETSCAP_LOW) x SETSCAP_STEPS
 * + log2(K / SETSCAP_STEPS) + 2 chases of 4 rounds over up to SETSCAP_SPAN
 * x K lines; the stage's report row says what it spent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"

#include "../../evset/setclass.h"
#include "../../slice/slice_contend.h"
#include "sets_internal.h"

#define SETSCAP_SPAN 1.5  /* lines gathered: 1.5 x the expected knee (the rise ends by
                             K (1 + 1/R); room for an estimate 30% low) */
#define SETSCAP_LOW 0.75  /* plateau and scan start: every set at 3/4 of its reach */
#define SETSCAP_STEPS 64u /* scan step K / 64: 5 x R lines at R = 32 on the H200's 320 sets */
#define SETSCAP_FLAT 0.02 /* f at most this: still the plateau */
#define SETSCAP_FULL 0.9  /* f at least this: the miss level reached */
#define SETSCAP_SHARP_FRAC 0.12 /* the rise within 12% of N: an even spread rises within
                                   N / R (3.1% at R = 32) plus a scan step; the H200 took
                                   8.4% (10240 -> ~11100, slicecap-2026-12-02), random
                                   frames in the sim ~20% */
#define SETSCAP_MIN_FLAT 4u     /* flat scan points before the rise (the plateau is seen) */
#define SETSCAP_NOISE_SIGMAS 4.0 /* a bisection step's rise above the flat points' spread */
#define SETSCAP_MIN_GAP_NOISES 10.0 /* M - P at least this many timer noises */
#define SETSCAP_KNEE_TOL 0.15   /* the knee within 0.15 x R of a multiple of R: the lag's
                                   correction leaves a few lines (the sim's contiguous
                                   320 x 32: 4 lines, 0.125 R); an H200 read knees 6-15 lines
                                   off a multiple of 32 (315, 315, 316 sets) where
                                   bench/slice_capacity saw no miss up to 320 x 32: sets
                                   filled unevenly, the first miss early, the count not exact */
#define SETSCAP_RATIO_TOL 0.25  /* last / first level capacity within 0.25 of 2: the
                                   H200's levels read 1.83-1.92 in ten discoveries (the
                                   far plateau ends before the whole L2) */
#define SETSCAP_MAX_PAGES 128u  /* pages joined at most (2 MiB pages: 256 MiB) */
#define SETSCAP_REPS 4u         /* timed loads a contention probe (bench/slice_capacity's) */
#define SETSCAP_ROUNDS 2u       /* warm and timed rounds of a chase */
#define SETSCAP_STREAM 0x5e75ca9ull /* the fallback's own random stream */
#define SETSCAP_CLASS_LINES 24.0 /* lines a set (of the estimate) the classes sort: 1.5 x
                                   16 ways, so with an estimate up to ~25% low every set of
                                   an even spread still holds more than ways lines to be
                                   evicted by (the H200's estimate ~290 of 320: ~22 a set);
                                   the classes' cost grows with the lines */
#define SETSCAP_CLASS_MERGED 1.6 /* the largest class below 1.6 x the mean: two sets taken
                                    for one would hold about twice the mean; one set of an
                                    uneven spread (random frames in the sim) ~1.3 x, the
                                    H200's 72 of 69.75 1.03 x */

typedef struct setscap {
    gx_infer *ctx;
    gx_rng rng;
    uint64_t *lines, *chain; /* the slice's lines in address order; a chase's order */
    size_t n;
    uint32_t pages, launches, chases;
    double plateau, miss, spread; /* P, M, the flat points' spread (cycles) */
} setscap;

/* Per-set reach from the levels (see Method): 0 when the levels say neither. */
static uint32_t reach_from_levels(const gx_infer *ctx)
{
    const gx_levels_result *lv = &ctx->levels;
    if (lv->n == 1)
        return ctx->ways.ways;
    if (lv->n != 2 || !lv->level[0].capacity_bytes)
        return 0;
    double r = (double)lv->level[1].capacity_bytes / (double)lv->level[0].capacity_bytes;
    return fabs(r - 2.0) <= SETSCAP_RATIO_TOL ? 2 * ctx->ways.ways : 0;
}

/* The lines of pages 0.. that line 0's slice holds, until `want` of them
 * (resumed at the first page not yet joined: a second call adds to the
 * first's lines). */
static int gather(setscap *c, size_t want, gx_msg *m)
{
    gx_infer *ctx = c->ctx;
    const uint64_t page = ctx->info->page_bytes;
    const size_t nl = (size_t)(page / ctx->line.line_bytes);
    uint64_t pages = ctx->arena.work_bytes / page;
    if (pages > SETSCAP_MAX_PAGES)
        pages = SETSCAP_MAX_PAGES;
    sc_opts o = {ctx->line.line_bytes, 0, GX_CONTEND_MAX_WARPS, SETSCAP_REPS};
    sc_partition *p = calloc(1, sizeof *p);
    uint64_t *buf = malloc(nl * sizeof *buf), zero = 0;
    int *cls = malloc(nl * sizeof *cls);
    if (!c->lines)
        c->lines = malloc((size_t)pages * nl * sizeof *c->lines);
    int rc = p && buf && cls && c->lines ? GX_OK : gx_fail(m, GX_ENOMEM, "out of memory");
    double base[2] = {0, 0};
    gx_contend_req q = {0, 0, &zero, 1, SETSCAP_REPS, 0};
    gx_target_stats t0, t1;
    gx_target_get_stats(ctx->t, &t0);
    for (int i = 0; rc == GX_OK && i < 2; i++)
        rc = gx_target_contend(ctx->t, &q, &base[i], m);
    p->classes = 1;
    p->first_base[0] = fmin(base[0], base[1]);
    for (uint64_t pg = c->pages; rc == GX_OK && pg < pages && c->n < want; pg++) {
        size_t none = 0, twice = 0;
        sc_page_lines(pg * page, ctx->line.line_bytes, nl, buf);
        rc = sc_join_lines(ctx->t, &o, p, buf, nl, cls, &none, &twice, m);
        c->pages++;
        for (size_t i = 0; rc == GX_OK && i < nl; i++)
            if (cls[i] == 0)
                c->lines[c->n++] = buf[i];
    }
    gx_target_get_stats(ctx->t, &t1);
    c->launches += (uint32_t)(t1.calls - t0.calls);
    free(p);
    free(buf);
    free(cls);
    return rc;
}

/* Mean cycles of a chase over the first n lines in a fresh random cyclic order. */
static int chase(setscap *c, size_t n, double *mean)
{
    infer_chain_shuffle(&c->rng, c->lines, n, c->chain);
    c->chases++;
    return infer_chase(c->ctx, c->chain, n, SETSCAP_ROUNDS, SETSCAP_ROUNDS, 0, 0, mean);
}

/* The flat points' plateau (median) and spread (MAD x 1.4826). */
static void flat_stats(setscap *c, const double *v, size_t n)
{
    c->plateau = gx_median(v, n);
    c->spread = 1.4826 * gx_mad(v, n);
}

/* The scan (see Method): *flat the last flat N, *full the first N at the
 * miss level (0: not reached), *nflat flat points before the rise. */
static int scan(setscap *c, size_t lo, size_t step, size_t *flat, size_t *full, size_t *nflat)
{
    double fv[SETSCAP_STEPS * 2];
    *flat = *full = *nflat = 0;
    int rising = 0;
    for (size_t n = lo; n <= c->n && *nflat < SETSCAP_STEPS * 2; n += step) {
        double mean;
        int rc = chase(c, n, &mean);
        if (rc != GX_OK)
            return rc;
        double f = (mean - c->plateau) / (c->miss - c->plateau);
        if (!rising && f <= SETSCAP_FLAT) {
            *flat = n;
            fv[(*nflat)++] = mean;
            continue;
        }
        rising = 1;
        if (f >= SETSCAP_FULL) {
            *full = n;
            break;
        }
    }
    if (*nflat)
        flat_stats(c, fv, *nflat);
    return GX_OK;
}

/* The largest N in [lo, hi) whose chase shows no overflowing set; *thr the
 * rise that counted as a miss there. */
static int bisect(setscap *c, uint32_t reach, size_t lo, size_t hi, size_t *knee, double *thr)
{
    *thr = 0;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        double mean;
        int rc = chase(c, mid, &mean);
        if (rc != GX_OK)
            return rc;
        double one_set = (reach + 1.0) * (c->miss - c->plateau) / (double)mid;
        *thr = fmax(0.5 * one_set, SETSCAP_NOISE_SIGMAS * c->spread);
        if (mean - c->plateau > *thr)
            hi = mid;
        else
            lo = mid;
    }
    *knee = lo;
    return GX_OK;
}

/* Measure and decide; *sets 0 with the reason in how when not established. */
static int measure(setscap *c, uint32_t reach, double sets_est, uint32_t *sets, char *how,
                   size_t hn)
{
    gx_infer *ctx = c->ctx;
    gx_msg m;
    size_t k_est = (size_t)(sets_est * reach), step = k_est / SETSCAP_STEPS;
    size_t lo = (size_t)(SETSCAP_LOW * (double)k_est), flat, full, nflat, knee;
    *sets = 0;
    int rc = gather(c, (size_t)(SETSCAP_SPAN * (double)k_est), &m);
    if (rc == GX_ENOMEM)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (rc != GX_OK) {
        snprintf(how, hn, "contention: %.150s", m.text);
        return GX_OK;
    }
    if (c->n < (size_t)(SETSCAP_SPAN * (double)k_est) || !step) {
        snprintf(how, hn, "%zu lines of a slice in %u pages: fewer than %.1f x %zu", c->n,
                 c->pages, SETSCAP_SPAN, k_est);
        return GX_OK;
    }
    if (!(c->chain = malloc(c->n * sizeof *c->chain)))
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    if ((rc = chase(c, lo, &c->plateau)) != GX_OK || (rc = chase(c, c->n, &c->miss)) != GX_OK)
        return rc;
    double noise = fmax(ctx->timer.noise, 0.5);
    if (c->miss - c->plateau < SETSCAP_MIN_GAP_NOISES * noise) {
        snprintf(how, hn, "no miss level: %.1f cycles at %zu lines, %.1f at %zu", c->plateau, lo,
                 c->miss, c->n);
        return GX_OK;
    }
    if ((rc = scan(c, lo, step, &flat, &full, &nflat)) != GX_OK)
        return rc;
    if (nflat < SETSCAP_MIN_FLAT || !full) {
        snprintf(how, hn, "no knee: %zu flat points from %zu lines, miss level %s", nflat, lo,
                 full ? "reached" : "not reached");
        return GX_OK;
    }
    double width = (double)(full - flat) / (double)flat, thr;
    if ((rc = bisect(c, reach, flat, flat + step, &knee, &thr)) != GX_OK)
        return rc;
    /* a miss is seen only once the rise passes thr: the lines it took at the
     * rise's mean rate (the scan's) come off the knee */
    double rate = SETSCAP_FULL * (c->miss - c->plateau) / (double)(full - flat);
    size_t lag = (size_t)(thr / rate + 0.5);
    knee = lag < knee - flat ? knee - lag : flat;
    uint32_t s = (uint32_t)((double)knee / reach + 0.5);
    double off = fabs((double)knee - (double)s * reach);
    snprintf(how, hn, "one slice: %.0f cycles to %zu lines (-%zu lag), %.0f past; rise %.1f%% of N; %u x %u%s",
             c->plateau, knee, lag, c->miss, 100 * width, s, reach,
             width > SETSCAP_SHARP_FRAC ? ": soft, not established"
             : off > SETSCAP_KNEE_TOL * reach ? ": not a multiple, not established" : "");
    if (width <= SETSCAP_SHARP_FRAC && off <= SETSCAP_KNEE_TOL * reach)
        *sets = s;
    return GX_OK;
}

/* The count from the congruence classes of the gathered lines' prefix
 * (see Method); *sets 0 with the reason in how when not established. */
static int by_classes(setscap *c, double sets_est, uint32_t *sets, char *how, size_t hn)
{
    gx_infer *ctx = c->ctx;
    size_t n = (size_t)(SETSCAP_CLASS_LINES * sets_est);
    gx_msg gm;
    int grc = gather(c, n, &gm);
    if (grc == GX_ENOMEM)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    *sets = 0;
    if (grc != GX_OK) {
        snprintf(how, hn, "contention: %.150s", gm.text);
        return GX_OK;
    }
    n = n < c->n ? n : c->n;
    int32_t *cls = malloc((n ? n : 1) * sizeof *cls);
    if (!cls)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    gx_setclass_result res;
    gx_msg m;
    size_t most = (size_t)(2 * sets_est) + 64; /* classes at most: past it, not one set each */
    int rc = gx_setclass_partition(ctx->t, c->lines, n, 0, ctx->ways.ways, most, &c->rng, cls,
                                   &res, &m);
    free(cls);
    if (rc == GX_ENOMEM)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (rc != GX_OK) {
        snprintf(how, hn, "classes: %.150s", m.text);
        return GX_OK;
    }
    const double mean = res.classes ? (double)(n - res.unassigned) / (double)res.classes : 0;
    int even = res.classes && (double)res.max_size < SETSCAP_CLASS_MERGED * mean;
    /* a last set of at most ways + 1 lines cannot be evicted by its own lines; when the
     * classes are one set each, the few lines left are one set if they are at least as many
     * as the smallest class less a third (two sets would hold half as many each) */
    int tail = even && res.unassigned && res.unassigned <= (size_t)ctx->ways.ways + 1 &&
               3 * res.unassigned >= 2 * res.min_size;
    size_t count = res.classes + (tail ? 1 : 0);
    if (res.unassigned && !tail)
        snprintf(how, hn, "classes: %zu of %zu lines left after %zu classes (%zu..%zu lines), "
                 "not established", res.unassigned, n, res.classes, res.min_size, res.max_size);
    else
        snprintf(how, hn, "every one of %zu lines of one slice in one of %zu congruence classes "
                 "(%zu..%zu lines%s, %zu tries unsure, %llu launches)%s", n, count,
                 res.min_size, res.max_size, tail ? ", the last by elimination" : "", res.unsure,
                 (unsigned long long)res.launches, even ? "" : ": uneven, not established");
    if ((!res.unassigned || tail) && even)
        *sets = (uint32_t)count;
    return GX_OK;
}

int sets_capacity(sets_ctx *s, int rc)
{
    gx_infer *ctx = s->ctx;
    if (rc == GX_ENOMEM || ctx->out->l2.sets_per_slice)
        return rc;
    uint32_t reach = reach_from_levels(ctx);
    uint64_t cap = ctx->levels.l2_capacity;
    char how[256];
    if (!reach || !cap || !ctx->slices.slices || !ctx->line.line_bytes || !ctx->info->page_bytes) {
        snprintf(how, sizeof how, "no per-set reach from the levels (%d levels) or no capacity",
                 ctx->levels.n);
        infer_report_row(ctx, "l2.sets_per_slice (capacity)", "unknown", how, 0.5, 0);
        return rc;
    }
    double sets_est = (double)cap / ((double)ctx->slices.slices * ctx->ways.ways *
                                     ctx->line.line_bytes);
    setscap c;
    memset(&c, 0, sizeof c);
    c.ctx = ctx;
    gx_rng peek = ctx->rng; /* a stream of its own: the context's stays where it was */
    gx_rng_seed(&c.rng, gx_mix64(gx_rng_next(&peek) ^ SETSCAP_STREAM));
    gx_target_stats t0, t1;
    gx_target_get_stats(ctx->t, &t0);
    uint32_t sets = 0;
    /* the classes first (exact where they establish the count), the knee after */
    char cls_how[256] = "";
    int mrc = by_classes(&c, sets_est, &sets, cls_how, sizeof cls_how);
    if (mrc == GX_OK && !sets) {
        mrc = measure(&c, reach, sets_est, &sets, how, sizeof how);
        char knee[160];
        snprintf(knee, sizeof knee, "%.159s", how);
        snprintf(how, sizeof how, "%.90s; knee: %.150s", cls_how, knee);
    } else {
        snprintf(how, sizeof how, "%s", cls_how);
    }
    gx_target_get_stats(ctx->t, &t1);
    free(c.lines);
    free(c.chain);
    if (mrc != GX_OK)
        return mrc == GX_ENOMEM ? mrc : rc;
    infer_progress(ctx, "sets (capacity): %s; %u contention launches, %u chases, %llu accesses",
                   how, c.launches, c.chases, (unsigned long long)(t1.accesses - t0.accesses));
    if (!sets) {
        infer_report_row(ctx, "l2.sets_per_slice (capacity)", "unknown", how, 0.5, 0);
        return rc;
    }
    uint64_t none[1] = {0};
    sets_write_sets(ctx, NULL, sets, none, 0, 0, s->lo, s->hi, 0.95, 0.2, how);
    return ctx->out->l2.sets_per_slice == sets ? GX_OK : rc;
}
