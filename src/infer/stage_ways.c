/* stage_ways.c - discovery stage 4: minimal eviction sets and the
 * associativity (l2.ways) of the first level one SM sees.
 *
 * Method:
 * - Pools: the set and slice functions use physical bits above the page
 *   (unknown frames), so lines at the SAME offset in different pages are
 *   congruent with the target with a probability 2^-r (r = rank of the
 *   unobservable parts of the hashes), much denser than random lines
 *   (1 / (slices * sets)). A target is a random line of a random page; its
 *   pool is the same offset in every other page of the arena, in random
 *   order. The reduction only touches the prefix it needs (galloping), so
 *   a dense pool costs little and a sparse one can still use every page.
 * - Reduction and verification: evset.c (ordered-prefix binary search with
 *   voted eviction tests, then a pigeonhole overflow test that minimises
 *   and verifies the set: target + set overflows, no proper subset does).
 * - Several targets (at least WAYS_MIN_SETS, up to WAYS_MAX_SETS while they
 *   disagree); l2.ways = the majority minimal-set size; confidence from the
 *   agreement.
 * - Near-far: reloads are classified against the gap to the NEXT level
 *   (ctx->miss_latency, the far partition), so a line pushed from the near
 *   partition to the far one counts as evicted: the ways found are the near
 *   partition's, which is the L2 organisation (partitions are copies).
 *
 * Notes:
 * - ctx->evsets keep target + W congruent lines (W + 1 in all) for the sets
 *   and policy stages, valid while ctx->arena_generation ==
 *   ctx->evsets_generation.
 * - Cost bar (issue 3): at most W*ceil(log2 N) + 4W tests per set, N the
 *   pool; the report row gives the worst set's count against it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evset.h"
#include "infer_util.h"

#define WAYS_MIN_SETS 4
#define WAYS_MAX_SETS 8
#define WAYS_MAX_TRIES 12
#define WAYS_ARENA_MAX (8ull << 30)
#define WAYS_MIN_PAGES 16u

/* Work area for the pools: as many pages as the target allows (up to
 * WAYS_ARENA_MAX); only the pages a reduction needs are ever touched. */
static int ways_arena(gx_infer *ctx, uint64_t *npages)
{
    uint64_t page = ctx->info->page_bytes ? ctx->info->page_bytes : (2u << 20);
    uint64_t max = ctx->info->max_arena_bytes ? ctx->info->max_arena_bytes : WAYS_ARENA_MAX;
    uint64_t reserve = (INFER_FRESH_RESERVE_BYTES + page - 1) / page * page;
    uint64_t want = max > reserve + page ? max - reserve - page : max / 2;
    if (want > WAYS_ARENA_MAX)
        want = WAYS_ARENA_MAX;
    want = want / page * page;
    if (ctx->arena_work_bytes < want) {
        int rc = infer_arena_ensure(ctx, want);
        if (rc != GX_OK)
            return rc;
    }
    *npages = ctx->arena_work_bytes / page;
    if (*npages < WAYS_MIN_PAGES)
        return gx_fail(ctx->msg, GX_ERANGE, "ways: only %llu pages of arena (need %u)",
                       (unsigned long long)*npages, WAYS_MIN_PAGES);
    return GX_OK;
}

static uint32_t ceil_log2_u64(uint64_t x)
{
    uint32_t k = 0;
    while (k < 63 && ((uint64_t)1 << k) < x)
        k++;
    return k;
}

/* The majority value of v[0..n) and how many agree. */
static uint32_t majority(const uint32_t *v, int n, int *agree)
{
    uint32_t best = 0;
    int best_n = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < n; j++)
            c += v[j] == v[i];
        if (c > best_n || (c == best_n && v[i] < best)) {
            best = v[i];
            best_n = c;
        }
    }
    *agree = best_n;
    return best;
}

static void clear_evsets(gx_infer *ctx)
{
    for (int i = 0; i < ctx->n_evsets && i < GX_INFER_MAX_EVSETS; i++) {
        free(ctx->evsets[i].lines);
        ctx->evsets[i].lines = NULL;
    }
    ctx->n_evsets = 0;
}

static int keep_evset(gx_infer *ctx, const gx_evx_result *r)
{
    if (ctx->n_evsets >= GX_INFER_MAX_EVSETS)
        return GX_OK;
    gx_evset *e = &ctx->evsets[ctx->n_evsets];
    e->lines = malloc(r->n * sizeof *e->lines);
    if (!e->lines)
        return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    memcpy(e->lines, r->lines, r->n * sizeof *e->lines);
    e->n = r->n;
    e->target = r->target;
    ctx->n_evsets++;
    return GX_OK;
}

typedef struct ways_run {
    uint32_t w[WAYS_MAX_SETS];
    uint64_t tests[WAYS_MAX_SETS], bar[WAYS_MAX_SETS];
    uint32_t used[WAYS_MAX_SETS];
    int n, failed, translated;
} ways_run;

/* One target: random page and line offset; pool = same offset elsewhere. */
/* One target: random page and line offset; pool = the same offset in every
 * other page. */
static int one_set(gx_infer *ctx, gx_evx *ev, uint64_t npages, uint32_t line, uint64_t *pool,
                   gx_evx_result *res)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t pt = gx_rng_below(&ctx->rng, npages);
    uint64_t off = gx_rng_below(&ctx->rng, page / line) * line;
    size_t n = 0;
    for (uint64_t p = 0; p < npages; p++)
        if (p != pt)
            pool[n++] = p * page + off;
    gx_rng_shuffle_u64(&ctx->rng, pool, (uint64_t)n);
    return gx_evx_find(ev, pt * page + off, pool, n, res);
}

/* Another set for free: XOR every offset of a found set (target and lines)
 * with the same in-page difference d. For XOR index functions, and for a
 * modulo whose page-above part is a per-page constant, the result is again
 * a target with a congruent set; the overflow tests verify it (minimality
 * included), so a hash for which it does not hold costs a few tests and
 * falls back to a full reduction. */
static int translated_set(gx_infer *ctx, gx_evx *ev, const gx_evset *base, uint32_t line,
                          gx_evx_result *res, int *got)
{
    *got = 0;
    uint64_t page = ctx->info->page_bytes;
    uint64_t lines_per_page = page / line;
    if (base->n == 0 || base->n > GX_EVX_MAX_WAYS || lines_per_page < 2)
        return GX_OK;
    uint64_t d = (1 + gx_rng_below(&ctx->rng, lines_per_page - 1)) * line;
    memset(res, 0, sizeof *res);
    uint64_t t0 = ev->tests, r0 = ev->trials;
    res->target = base->target ^ d;
    for (uint32_t i = 0; i < base->n; i++)
        res->lines[i] = base->lines[i] ^ d;
    res->n = base->n;
    int ok = 0;
    int rc = gx_evx_verify(ev, res->target, res->lines, res->n, &ok, &res->target_hit);
    res->tests = ev->tests - t0;
    res->trials = ev->trials - r0;
    res->verified = ok;
    *got = ok;
    return rc;
}

static void report(gx_infer *ctx, const ways_run *run, uint32_t w, int agree, double conf,
                   int in_profile, const gx_evx *ev, uint64_t npool)
{
    char v[128], m[128];
    uint64_t worst = 0, bar = 0;
    for (int i = 0; i < run->n; i++)
        if (run->w[i] == w && run->tests[i] > worst) {
            worst = run->tests[i];
            bar = run->bar[i];
        }
    snprintf(v, sizeof v, "%u", w);
    snprintf(m, sizeof m, "minimal eviction sets, %d of %d agree (%d by translation, %d failed)",
             agree, run->n, run->translated, run->failed);
    infer_report_row(ctx, "l2.ways", v, m, conf, in_profile);
    snprintf(v, sizeof v, "%llu (bar %llu)", (unsigned long long)worst,
             (unsigned long long)bar);
    snprintf(m, sizeof m, "worst set; pool %llu lines, %u warm + %u passes per trial",
             (unsigned long long)npool, ev->warm, ev->passes);
    infer_report_row(ctx, "eviction tests per set", v, m, NAN, 0);
}

int gx_stage_ways(gx_infer *ctx)
{
    uint32_t line = ctx->line_bytes ? ctx->line_bytes : 128;
    uint64_t npages = 0;
    int rc = ways_arena(ctx, &npages);
    if (rc != GX_OK)
        return rc;
    gx_evx ev;
    if ((rc = gx_evx_init(&ev, ctx, 0)) != GX_OK)
        return rc;
    uint64_t *pool = malloc((size_t)npages * sizeof *pool);
    if (!pool) {
        gx_evx_free(&ev);
        return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    }
    clear_evsets(ctx);
    ways_run run;
    memset(&run, 0, sizeof run);
    gx_msg keep;
    keep.text[0] = '\0';
    uint32_t w = 0;
    int agree = 0;
    for (int t = 0; t < WAYS_MAX_TRIES && run.n < WAYS_MAX_SETS; t++) {
        gx_evx_result res;
        int got = 0;
        if (run.n > 0 && ctx->n_evsets > 0 &&
            (rc = translated_set(ctx, &ev, &ctx->evsets[0], line, &res, &got)) != GX_OK)
            break;
        if (got) {
            run.translated++;
            rc = GX_OK;
        } else {
            rc = one_set(ctx, &ev, npages, line, pool, &res);
        }
        if (rc == GX_EUNSURE) {
            run.failed++;
            snprintf(keep.text, sizeof keep.text, "%s", ctx->msg->text);
            rc = GX_OK;
            continue;
        }
        if (rc != GX_OK)
            break;
        run.w[run.n] = res.n;
        run.tests[run.n] = res.tests;
        run.bar[run.n] = (uint64_t)res.n * ceil_log2_u64(npages - 1) + 4ull * res.n;
        run.used[run.n] = res.pool_used;
        run.n++;
        if ((rc = keep_evset(ctx, &res)) != GX_OK)
            break;
        infer_progress(ctx, "ways: set %d: %u lines (%llu tests, prefix %u of %llu)", run.n,
                       res.n, (unsigned long long)res.tests, res.pool_used,
                       (unsigned long long)(npages - 1));
        w = majority(run.w, run.n, &agree);
        if (run.n >= WAYS_MIN_SETS && agree == run.n)
            break;
    }
    free(pool);
    if (rc != GX_OK) {
        gx_evx_free(&ev);
        return rc;
    }
    if (run.n < 3) {
        gx_evx_free(&ev);
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: only %d eviction sets found (%s)", run.n,
                       keep.text[0] ? keep.text : "no reason");
    }
    w = majority(run.w, run.n, &agree);
    double frac = (double)agree / run.n;
    double conf = frac >= 1.0 ? 0.999 : frac >= 0.75 ? 0.9 : frac;
    int in_profile = frac >= 0.75;
    /* keep only the sets of the majority size, first */
    int k = 0;
    for (int i = 0; i < ctx->n_evsets; i++) {
        if (ctx->evsets[i].n == w)
            ctx->evsets[k++] = ctx->evsets[i];
        else
            free(ctx->evsets[i].lines);
    }
    ctx->n_evsets = k;
    ctx->evsets_generation = ctx->arena_generation;
    ctx->ways_gap = ev.gap;
    ctx->ways = in_profile ? w : 0;
    if (in_profile) {
        ctx->out->l2.present = 1;
        ctx->out->l2.ways = w;
        gx_profile_set_confidence(ctx->out, "l2.ways", conf);
    }
    report(ctx, &run, w, agree, conf, in_profile, &ev, npages - 1);
    infer_progress(ctx, "ways: %u (%d of %d sets agree)", w, agree, run.n);
    gx_evx_free(&ev);
    if (!in_profile)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: minimal sets disagree (%d of %d say %u)",
                       agree, run.n, w);
    return GX_OK;
}
