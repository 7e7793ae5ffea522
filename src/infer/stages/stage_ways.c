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
 * - Slice-guided pools: when the first target's whole same-offset pool does
 *   not evict (hash bits above the page make congruence rare), a slice
 *   predictor is learned (slicepredict.h), a sample of 4 x capacity / page
 *   pages is identified (at most 1% of each page's lines measured), and each
 *   pool is every line of those pages predicted in the target's slice class
 *   (density ~1/sets, independent of the bits above the page). When the
 *   slices stage learnt the hash from contention labels, its labelled
 *   predictor serves (its classes are slices, the fingerprints' may merge
 *   several): ways_pools.c.
 * - A failed target's cost is bounded (WAYS_TARGET_BUDGET_SETS); after
 *   WAYS_MAX_OVER_BUDGET targets given up at it the stage votes on the sets
 *   it has, and the l2.ways method text says so.
 * - Reduction and verification: evset.c (ordered-prefix binary search with
 *   voted eviction tests, then a pigeonhole overflow test that minimises
 *   and verifies the set: target + set overflows, no proper subset does).
 * - Several targets (at least WAYS_MIN_SETS, up to WAYS_MAX_SETS while they
 *   disagree); l2.ways = the majority minimal-set size; confidence from the
 *   agreement.
 * - Near-far: reloads are classified against the gap to the NEXT level
 *   (ctx->levels.miss_latency, the far partition), so a line pushed from the near
 *   partition to the far one counts as evicted: the ways found are the near
 *   partition's, which is the L2 organisation (partitions are copies).
 *
 * Notes:
 * - ctx->ways.evsets keep target + W congruent lines (W + 1 in all) for the sets
 *   and policy stages, valid while ctx->arena.generation ==
 *   ctx->ways.evsets_generation, each with the pool it came from (the policy
 *   stage needs W more congruent lines; gx_ways_grow_pool adds pages).
 * - A reduction's errors only inflate a set (see WAYS_MIN_SUPPORT): sets
 *   larger than the smallest are minimised once more before the vote.
 * - Cost bar (issue 3): at most W*ceil(log2 N) + 4W tests per set, N the
 *   pool; the report row gives the worst set's count against it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../evset/evset.h"
#include "ways_pools.h"
#include "gpuxray/slicepredict.h"
#include "../infer_util.h"
#include "gpuxray/bits.h"

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
    if (ctx->arena.work_bytes < want) {
        int rc = infer_arena_ensure(ctx, want);
        if (rc != GX_OK)
            return rc;
    }
    *npages = ctx->arena.work_bytes / page;
    if (*npages < WAYS_MIN_PAGES)
        return gx_fail(ctx->msg, GX_ERANGE, "ways: only %llu pages of arena (need %u)",
                       (unsigned long long)*npages, WAYS_MIN_PAGES);
    return GX_OK;
}

int gx_ways_arena_prepare(gx_infer *ctx)
{
    uint64_t npages = 0;
    return ways_arena(ctx, &npages);
}

/* Errors in a reduction only ever make a minimal set larger: a set of fewer
 * than W congruent lines never overflows with its target (pigeonhole, for
 * every policy), so no verified set is smaller than W, while a miss read as
 * a hit in one of the minimisation's overflow tests keeps a line that is
 * not needed (the H200 gives 17-line sets for 1 to 3 targets of 8, and 16
 * for the rest and for every policy test). So the smallest size that at
 * least half of the sets (and at least WAYS_MIN_SUPPORT) agree on is the
 * associativity when every other set is larger. */
#define WAYS_MIN_SUPPORT 3

/* The tail of failed targets. A reduction that settles costs
 * W log2 N + 4W tests at the trial length of the last success; a target
 * that does not settle restarts with 2x warm and 1.5x passes rounds a trial
 * (evset.c), 3x then 9x the cost, up to 4 attempts: an H200's 3 failed
 * targets cost 42 G accesses, 150 times its 4 good sets' 0.27 G (dev30 run
 * 3, 83 s). A set's cost also follows the pool prefix its reduction
 * needs (an H200's 5373-26088 lines, 4.9x; a sim card's 53-179 for sets 1
 * and 2). A target may cost WAYS_TARGET_BUDGET_SETS times the costliest
 * set found so far: 4x for that spread, times 4 for one restart at 3x (the
 * 9x one does not fit; the first target has no budget: nothing to measure
 * it by), a failure's tail cut from ~200 sets' cost to 16; and after
 * WAYS_MAX_OVER_BUDGET targets given up at that budget the stage decides
 * with the sets it has (at least WAYS_MIN_SUPPORT; the vote's rule). */
#define WAYS_TARGET_BUDGET_SETS 16u
#define WAYS_MAX_OVER_BUDGET 2

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

/* The ways: the majority, or the smallest size half of the sets agree on
 * when every set disagreeing with it is larger (see WAYS_MIN_SUPPORT).
 * *agree = sets of that size; *only_larger = 1 when no set is smaller. */
static uint32_t ways_choice(const uint32_t *v, int n, int *agree, int *only_larger)
{
    uint32_t w = majority(v, n, agree);
    uint32_t lo = w;
    for (int i = 0; i < n; i++)
        if (v[i] < lo)
            lo = v[i];
    int c = 0;
    for (int i = 0; i < n; i++)
        c += v[i] == lo;
    if (lo != w && c >= WAYS_MIN_SUPPORT && 2 * c >= n) {
        w = lo;
        *agree = c;
    }
    *only_larger = 1;
    for (int i = 0; i < n; i++)
        if (v[i] < w)
            *only_larger = 0;
    return w;
}

static void clear_evsets(gx_infer *ctx)
{
    for (int i = 0; i < ctx->ways.n_evsets && i < GX_INFER_MAX_EVSETS; i++) {
        free(ctx->ways.evsets[i].lines);
        free(ctx->ways.evsets[i].pool);
        memset(&ctx->ways.evsets[i], 0, sizeof ctx->ways.evsets[i]);
    }
    ctx->ways.n_evsets = 0;
    ctx->ways.pool_pred = NULL;
}

/* Keep a found set with (a copy of) the pool it came from: the policy stage
 * needs W more lines congruent with it. pool NULL: a same-offset pool (the
 * policy stage rebuilds it); xor: the pool's lines translated like the set. */
static int keep_evset(gx_infer *ctx, const gx_evx_result *r, const uint64_t *pool, size_t n_pool,
                      uint64_t xor)
{
    if (ctx->ways.n_evsets >= GX_INFER_MAX_EVSETS)
        return GX_OK;
    gx_evset *e = &ctx->ways.evsets[ctx->ways.n_evsets];
    memset(e, 0, sizeof *e);
    e->lines = malloc(r->n * sizeof *e->lines);
    if (pool && n_pool)
        e->pool = malloc(n_pool * sizeof *e->pool);
    if (!e->lines || (pool && n_pool && !e->pool)) {
        free(e->lines);
        free(e->pool);
        memset(e, 0, sizeof *e);
        return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    }
    memcpy(e->lines, r->lines, r->n * sizeof *e->lines);
    for (size_t i = 0; e->pool && i < n_pool; i++)
        e->pool[i] = pool[i] ^ xor;
    e->n_pool = e->pool ? n_pool : 0;
    e->pool_used = r->pool_used;
    e->n = r->n;
    e->target = r->target;
    ctx->ways.n_evsets++;
    return GX_OK;
}

typedef struct ways_run {
    uint32_t w[WAYS_MAX_SETS];
    uint64_t tests[WAYS_MAX_SETS], bar[WAYS_MAX_SETS];
    uint32_t used[WAYS_MAX_SETS];
    int n, failed, translated;
    int reminimised;          /* sets a second minimisation made smaller */
    int guided;               /* pools from slice-predicted lines (see guided_set) */
    int guided_failed;        /* the slice predictor could not be learned */
    uint64_t guided_pages, guided_accesses;
    uint32_t guided_classes;
    int guided_labelled;      /* the pools' classes from the contention labels */
    uint64_t max_set_accesses; /* the costliest reduction that gave a set */
    int over_budget;          /* targets given up at their budget (WAYS_TARGET_BUDGET_SETS) */
    int stopped;              /* no more targets after WAYS_MAX_OVER_BUDGET of them */
    uint64_t max_pool;
} ways_run;

/* Minimise a set once more: one pass of single removals, each an overflow
 * test in fresh random orders; a line whose removal still overflows was
 * kept only because one test of the first minimisation read a miss as a
 * hit, and drops out. By monotonicity one pass suffices: a line needed in
 * the larger set is needed in every subset that still overflows. */
static int reminimise(gx_evx *ev, gx_evset *es, int *changed)
{
    *changed = 0;
    uint32_t n = es->n;
    if (n < 2 || n > GX_EVX_MAX_WAYS)
        return GX_OK;
    double hit = 0, ref[GX_EVX_MAX_WAYS], gref[GX_EVX_MAX_WAYS];
    uint64_t g[GX_EVX_MAX_WAYS];
    int rc = gx_evx_hit_latency(ev, es->target, 5, &hit);
    if (rc == GX_OK)
        rc = gx_evx_ref_latencies(ev, es->lines, n, ref);
    for (uint32_t i = 0; rc == GX_OK && i < n;) {
        uint32_t k = 0;
        for (uint32_t j = 0; j < n; j++)
            if (j != i) {
                g[k] = es->lines[j];
                gref[k++] = ref[j];
            }
        int ovf = 0;
        if ((rc = gx_evx_overflows(ev, es->target, hit, g, gref, k, 0, &ovf, NULL)) != GX_OK)
            break;
        if (!ovf) {
            i++;
            continue;
        }
        memcpy(es->lines, g, k * sizeof *g);
        memcpy(ref, gref, k * sizeof *gref);
        n = k;
        *changed = 1;
    }
    es->n = n;
    return rc;
}

/* Sets larger than the smallest found are minimised once more (errors only
 * inflate a set, see WAYS_MIN_SUPPORT); run->w follows. */
static int reminimise_larger(gx_infer *ctx, gx_evx *ev, ways_run *run)
{
    uint32_t lo = UINT32_MAX;
    for (int i = 0; i < run->n; i++)
        if (run->w[i] < lo)
            lo = run->w[i];
    int rc = GX_OK;
    for (int i = 0; rc == GX_OK && i < run->n && i < ctx->ways.n_evsets; i++) {
        if (run->w[i] <= lo || ctx->ways.evsets[i].n != run->w[i])
            continue;
        int changed = 0;
        rc = reminimise(ev, &ctx->ways.evsets[i], &changed);
        if (rc == GX_OK && changed) {
            infer_progress(ctx, "ways: set %d minimised again: %u -> %u lines", i + 1, run->w[i],
                           ctx->ways.evsets[i].n);
            run->w[i] = ctx->ways.evsets[i].n;
            run->reminimised++;
        }
    }
    return rc;
}

/* One target: random page and line offset; pool = the same offset in every
 * other page. *n_pool = the pool's size. */
static int one_set(gx_infer *ctx, gx_evx *ev, uint64_t npages, uint32_t line, uint64_t *pool,
                   gx_evx_result *res, size_t *n_pool)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t pt = gx_rng_below(&ctx->rng, npages);
    uint64_t off = gx_rng_below(&ctx->rng, page / line) * line;
    size_t n = 0;
    for (uint64_t p = 0; p < npages; p++)
        if (p != pt)
            pool[n++] = p * page + off;
    gx_rng_shuffle_u64(&ctx->rng, pool, (uint64_t)n);
    *n_pool = n;
    return gx_evx_find(ev, pt * page + off, pool, n, res);
}

/* Another set for free: XOR every offset of a found set (target and lines)
 * with the same in-page difference d. For XOR index functions, and for a
 * modulo whose page-above part is a per-page constant, the result is again
 * a target with a congruent set; the overflow tests verify it (minimality
 * included), so a hash for which it does not hold costs a few tests and
 * falls back to a full reduction. */
static int translated_set(gx_infer *ctx, gx_evx *ev, const gx_evset *base, uint32_t line,
                          gx_evx_result *res, int *got, uint64_t *xor)
{
    *got = 0;
    *xor = 0;
    uint64_t page = ctx->info->page_bytes;
    uint64_t lines_per_page = page / line;
    if (base->n == 0 || base->n > GX_EVX_MAX_WAYS || lines_per_page < 2)
        return GX_OK;
    uint64_t d = (1 + gx_rng_below(&ctx->rng, lines_per_page - 1)) * line;
    *xor = d;
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
                   int in_profile, const gx_evx *ev)
{
    char v[128], m[256];
    uint64_t worst = 0, bar = 0;
    for (int i = 0; i < run->n; i++)
        if (run->w[i] == w && run->tests[i] > worst) {
            worst = run->tests[i];
            bar = run->bar[i];
        }
    snprintf(v, sizeof v, "%u", w);
    char budget[96] = "";
    if (run->over_budget)
        snprintf(budget, sizeof budget, ", %d at the budget of %ux the costliest set%s",
                 run->over_budget, WAYS_TARGET_BUDGET_SETS,
                 run->stopped ? ": decided on the sets found" : "");
    snprintf(m, sizeof m,
             "minimal eviction sets, %d of %d agree (%d by translation, %d failed%s, %d "
             "re-minimised)%s",
             agree, run->n, run->translated, run->failed, budget, run->reminimised,
             run->guided ? (run->guided_labelled ? "; slice-guided pools (contention labels)"
                                                 : "; slice-guided pools")
                         : "");
    infer_report_row(ctx, "l2.ways", v, m, conf, in_profile);
    for (int i = 0; i < run->n; i++) /* report data: one trial per eviction set */
        infer_data_append(ctx, "ways", "trials",
                          json_pack("{s:i,s:I,s:I,s:i}", "ways", (int)run->w[i], "tests",
                                    (json_int_t)run->tests[i], "bar", (json_int_t)run->bar[i],
                                    "pool_used", (int)run->used[i]));
    infer_data_set(ctx, "ways", "method",
                   json_string("minimal eviction sets reduced from a congruent pool (group "
                               "testing); a set's size is the associativity"));
    /* each kept set: its target, then its lines (built only when recording) */
    for (int i = 0; infer_recording(ctx) && i < ctx->ways.n_evsets; i++) {
        json_t *a = json_array();
        json_array_append_new(a, json_integer((json_int_t)ctx->ways.evsets[i].target));
        for (uint32_t j = 0; j < ctx->ways.evsets[i].n; j++)
            json_array_append_new(a, json_integer((json_int_t)ctx->ways.evsets[i].lines[j]));
        infer_data_append(ctx, "ways", "evsets", a);
    }
    infer_data_set(ctx, "ways", "failed", json_integer(run->failed));
    infer_data_set(ctx, "ways", "translated", json_integer(run->translated));
    infer_data_set(ctx, "ways", "over_budget", json_integer(run->over_budget));
    snprintf(v, sizeof v, "%llu (bar %llu)", (unsigned long long)worst,
             (unsigned long long)bar);
    snprintf(m, sizeof m, "worst set; pools up to %llu lines, %u warm + %u passes per trial",
             (unsigned long long)run->max_pool, ev->warm, ev->passes);
    infer_report_row(ctx, "eviction tests per set", v, m, NAN, 0);
    if (run->guided) {
        snprintf(v, sizeof v, "%u classes, %llu pages", run->guided_classes,
                 (unsigned long long)run->guided_pages);
        snprintf(m, sizeof m,
                 "same-offset pool did not evict: pools of lines predicted in the target's "
                 "slice by %s (%llu accesses to learn and identify)",
                 run->guided_labelled ? "contention labels" : "fingerprints",
                 (unsigned long long)run->guided_accesses);
        infer_report_row(ctx, "ways pool", v, m, NAN, 0);
    }
}

/* One more minimal set: translated from the first, else a full reduction
 * (same-offset pool, or slice-guided once a same-offset pool failed to
 * evict). */
static int next_set(gx_infer *ctx, gx_evx *ev, ways_run *run, guided *g, uint64_t npages,
                    uint64_t *pool, gx_evx_result *res, size_t *n_pool, uint64_t *xor)
{
    uint32_t line = infer_line_bytes(ctx);
    int got = 0, rc;
    *n_pool = npages - 1;
    *xor = 0;
    if (run->n > 0 && ctx->ways.n_evsets > 0 &&
        (rc = translated_set(ctx, ev, &ctx->ways.evsets[0], line, res, &got, xor)) != GX_OK)
        return rc;
    if (got) {
        run->translated++;
        return GX_OK;
    }
    if (!run->guided) {
        uint32_t warm = ev->warm, passes = ev->passes;
        rc = one_set(ctx, ev, npages, line, pool, res, n_pool);
        /* no congruent lines in the pool, or (before any set was found) a
         * reduction that never settled: same-offset pools do not serve */
        if (rc != GX_EUNSURE || (!res->no_pool && run->n > 0))
            return rc;
        /* a pool without congruent lines says nothing about trial lengths:
         * undo the restart's escalation */
        ev->warm = warm;
        ev->passes = passes;
        /* same-offset lines are rarely congruent (hash bits above the
         * page): switch to slice-guided pools for good */
        infer_progress(ctx, "ways: same-offset pool %s; slice-guided pools from now on",
                       res->no_pool ? "does not evict" : "gave no consistent set");
        if ((rc = guided_init(ctx, npages, g)) != GX_OK) {
            run->guided_failed = 1;
            return rc == GX_EUNSURE ? gx_fail(ctx->msg, GX_EUNSURE,
                                              "ways: same-offset pools do not evict and the "
                                              "slice predictor failed (%s)", ctx->msg->text)
                                    : rc;
        }
        run->guided = 1;
        run->guided_classes = g->classes;
        run->guided_labelled = g->labelled;
    }
    rc = guided_set(ctx, ev, g, line, res, n_pool);
    run->guided_pages = g->n_ident;
    run->guided_accesses = g->learn_accesses;
    return rc;
}

int gx_stage_ways(gx_infer *ctx)
{
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
    guided g;
    memset(&g, 0, sizeof g);
    gx_msg keep;
    keep.text[0] = '\0';
    int no_pool_run = 0;
    uint32_t w = 0;
    int agree = 0;
    for (int t = 0; t < WAYS_MAX_TRIES && run.n < WAYS_MAX_SETS; t++) {
        gx_evx_result res;
        memset(&res, 0, sizeof res);
        size_t n_pool = 0;
        int translated_before = run.translated;
        uint64_t xor = 0;
        uint32_t warm = ev.warm, passes = ev.passes;
        ev.budget_accesses = WAYS_TARGET_BUDGET_SETS * run.max_set_accesses;
        rc = next_set(ctx, &ev, &run, &g, npages, pool, &res, &n_pool, &xor);
        if (rc == GX_EUNSURE && res.over_budget) {
            run.over_budget++;
            infer_progress(ctx, "ways: target %d given up at its budget (%llu accesses)", t + 1,
                           (unsigned long long)res.accesses);
        }
        if (rc == GX_EUNSURE && run.over_budget >= WAYS_MAX_OVER_BUDGET &&
            run.n >= WAYS_MIN_SUPPORT) {
            /* the tail is bounded: decide with the sets found */
            run.failed++;
            run.stopped = 1;
            snprintf(keep.text, sizeof keep.text, "%s", ctx->msg->text);
            rc = GX_OK;
            break;
        }
        if (rc == GX_EUNSURE) {
            /* a target that failed even with longer trials says nothing for
             * them: the next one starts where the last success stood (an
             * H200 kept a failed target's 4x longer trials for every later
             * set: 4.0-7.9 G accesses in ways against 0.4 G without) */
            ev.warm = warm;
            ev.passes = passes;
            run.failed++;
            snprintf(keep.text, sizeof keep.text, "%s", ctx->msg->text);
            rc = GX_OK;
            /* even guided pools do not evict (twice running, so one page
             * the predictor got wrong does not end the stage): no point in
             * more */
            no_pool_run = res.no_pool && run.guided ? no_pool_run + 1 : 0;
            if (no_pool_run >= 2 || run.guided_failed)
                break;
            continue;
        }
        if (rc != GX_OK)
            break;
        run.w[run.n] = res.n;
        run.tests[run.n] = res.tests;
        run.bar[run.n] = (uint64_t)res.n * (uint64_t)gx_log2_ceil_u64(n_pool) + 4ull * res.n;
        run.used[run.n] = res.pool_used;
        if (res.accesses > run.max_set_accesses)
            run.max_set_accesses = res.accesses;
        if (n_pool > run.max_pool)
            run.max_pool = n_pool;
        run.n++;
        /* the pool it came from: a guided pool (copied), the first set's
         * pool translated like the set, or same-offset (NULL) */
        int translated = run.translated != translated_before;
        const uint64_t *kp = NULL;
        size_t kn = 0;
        if (translated && ctx->ways.n_evsets > 0) {
            kp = ctx->ways.evsets[0].pool;
            kn = ctx->ways.evsets[0].n_pool;
        } else if (run.guided && g.pool) {
            kp = g.pool;
            kn = n_pool;
        }
        if ((rc = keep_evset(ctx, &res, kp, kn, translated ? xor : 0)) != GX_OK)
            break;
        no_pool_run = 0;
        infer_progress(ctx, "ways: set %d: %u lines (%llu tests, prefix %u of %llu)", run.n,
                       res.n, (unsigned long long)res.tests, res.pool_used,
                       (unsigned long long)n_pool);
        w = majority(run.w, run.n, &agree);
        if (run.n >= WAYS_MIN_SETS && agree == run.n)
            break;
    }
    free(pool);
    /* the pools' slice classes: the policy stage grows them with the same */
    ctx->ways.pool_pred = run.guided && g.labelled ? g.sp : ctx->slices.pred;
    guided_free(&g);
    if (rc != GX_OK) {
        gx_evx_free(&ev);
        return rc;
    }
    if (run.n < 3) {
        gx_evx_free(&ev);
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: only %d eviction sets found (%s)", run.n,
                       keep.text[0] ? keep.text : "no reason");
    }
    if ((rc = reminimise_larger(ctx, &ev, &run)) != GX_OK) {
        gx_evx_free(&ev);
        return rc;
    }
    int only_larger = 0;
    w = ways_choice(run.w, run.n, &agree, &only_larger);
    double frac = (double)agree / run.n;
    /* three quarters agree, or half with every other set larger (errors
     * only inflate a minimal set) */
    int clear = frac >= 0.75 || (only_larger && agree >= WAYS_MIN_SUPPORT && 2 * agree >= run.n);
    double conf = frac >= 1.0 ? 0.999 : clear ? 0.9 : frac;
    int in_profile = clear;
    /* keep only the sets of the majority size (with their pools), first */
    int k = 0;
    for (int i = 0; i < ctx->ways.n_evsets; i++) {
        if (ctx->ways.evsets[i].n == w) {
            ctx->ways.evsets[k++] = ctx->ways.evsets[i];
        } else {
            free(ctx->ways.evsets[i].lines);
            free(ctx->ways.evsets[i].pool);
        }
    }
    for (int i = k; i < ctx->ways.n_evsets; i++)
        memset(&ctx->ways.evsets[i], 0, sizeof ctx->ways.evsets[i]);
    ctx->ways.n_evsets = k;
    ctx->ways.evsets_generation = ctx->arena.generation;
    ctx->ways.ways = in_profile ? w : 0;
    if (in_profile) {
        ctx->out->l2.present = 1;
        ctx->out->l2.ways = w;
        gx_profile_set_confidence(ctx->out, "l2.ways", conf);
    }
    report(ctx, &run, w, agree, conf, in_profile, &ev);
    infer_progress(ctx, "ways: %u (%d of %d sets agree)", w, agree, run.n);
    gx_evx_free(&ev);
    if (!in_profile)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: minimal sets disagree (%d of %d say %u)",
                       agree, run.n, w);
    return GX_OK;
}
