/* ways_pools.c - the ways stage's slice-guided pools (stage_ways.c): when
 * same-offset lines are rarely congruent (hash bits above the page), each
 * target's pool is every line of a sample of pages that a slice predictor
 * puts in the target's slice class (density ~1/sets, independent of the
 * bits above the page); gx_ways_grow_pool adds pages to a kept set's pool
 * for the policy stage.
 *
 * The predictor: the slices stage's contention-labelled one when the slice
 * hash came from contention labels (ctx->slices.lpred: its classes are
 * slices, where the fingerprints' merge several, an H200's 1 to 6 a class,
 * a flat card's all of a partition), its pages identified in batches (one
 * labeller call for a batch); else the fingerprint predictor (the slices
 * stage's, or learned here), pages identified one by one, as before.
 *
 * Notes: a labelled identification only identifies pages of the components
 * the slices stage saw (no cube is labelled here); pages of others stay out
 * of the pools, and with fewer than half the pool pages identified the
 * fingerprint predictor serves instead (learnt here when the slices stage
 * decided by contention alone and kept none). Pages are identified through
 * infer_identify_pages (slice_use.c) where a batch suits the predictor. */
#include <stdlib.h>
#include <string.h>

#include "../infer_util.h"
#include "ways_pools.h"

/* ---- slice-guided pools ------------------------------------------------------ */

void guided_free(guided *g)
{
    if (g->sp && g->own_sp)
        gx_slicepred_free(g->sp);
    free(g->pages);
    free(g->id);
    free(g->pool);
    memset(g, 0, sizeof *g);
}

/* Pages per pool: a level of capacity C holds W congruent lines per
 * C / page pages (whatever W and the slice and set counts), so
 * GUIDED_CAP_FACTOR x C / page pages hold about that many times W. */
#define GUIDED_CAP_FACTOR 4u
#define GUIDED_MIN_PAGES 8u

static uint32_t guided_page_count(const gx_infer *ctx, uint64_t npages)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t cap = infer_first_capacity(ctx);
    uint64_t want = cap ? GUIDED_CAP_FACTOR * ((cap + page - 1) / page) + 4 : 64;
    if (want < GUIDED_MIN_PAGES)
        want = GUIDED_MIN_PAGES;
    if (want > npages)
        want = npages;
    return (uint32_t)want;
}

/* Pages probed at most, in pool-sized batches: pages of components the
 * slices stage did not see stay unidentified (an H200 showed each of the
 * count's 8 pages as its own component); one batch is one labeller call
 * (2 + 2C contention launches of n_pages x INFER_LABEL_LINES probes). */
#define GUIDED_LABEL_BATCHES 8u

/* The fingerprint predictor of the pools: the slices stage's, else one
 * learnt here with o (the slices stage decided by contention alone, or did
 * not run). */
static int fingerprint_pred(gx_infer *ctx, const gx_slicepred_opts *o, guided *g)
{
    if (ctx->slices.pred) {
        g->sp = ctx->slices.pred;
        return GX_OK;
    }
    int rc = gx_slicepred_learn(ctx->t, o, &g->sp, ctx->msg);
    g->own_sp = rc == GX_OK;
    return rc;
}

/* The pool pages identified by the labelled predictor in batches, the
 * identified ones compacted to the front of g->pages (g->id alike); with
 * fewer than half the pool identified, the fingerprint predictor takes
 * over (g->labelled = 0, nothing identified yet; learnt with o when the
 * slices stage kept none). */
static int labelled_identify(gx_infer *ctx, guided *g, uint64_t npages,
                             const gx_slicepred_opts *o)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t *bases = malloc(g->n_pages * sizeof *bases);
    gx_slicepred_page *pgs = malloc(g->n_pages * sizeof *pgs);
    gx_target_stats a, b;
    gx_target_get_stats(ctx->t, &a);
    int rc = bases && pgs ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    uint32_t got = 0;
    uint64_t scan = 0;
    for (uint32_t bt = 0; rc == GX_OK && bt < GUIDED_LABEL_BATCHES && got < g->n_pages &&
                          scan < npages;
         bt++) {
        size_t n = 0;
        for (; n < g->n_pages && scan + n < npages; n++)
            bases[n] = g->pages[scan + n] * page;
        uint32_t ok = 0;
        gx_msg m;
        rc = gx_slicepred_identify_pages(g->sp, bases, n, INFER_LABEL_LINES, pgs, &ok, &m);
        if (rc != GX_OK) {
            rc = gx_fail(ctx->msg, rc, "ways: %s", m.text);
            break;
        }
        for (size_t i = 0; i < n && got < g->n_pages; i++)
            if (pgs[i].component >= 0) {
                g->pages[got] = bases[i] / page;
                g->id[got++] = pgs[i];
            }
        scan += n;
    }
    free(bases);
    free(pgs);
    gx_target_get_stats(ctx->t, &b);
    g->label_calls = b.calls - a.calls;
    infer_progress(ctx, "ways: %u of %u pool pages identified by contention labels (%llu pages "
                        "probed, %llu calls)",
                   got, g->n_pages, (unsigned long long)scan, (unsigned long long)g->label_calls);
    if (rc != GX_OK)
        return rc;
    for (uint32_t i = got; i < g->n_pages; i++)
        g->id[i] = (gx_slicepred_page){.base = 0, .component = -1};
    g->n_ident = g->n_pages;
    if (2 * got >= g->n_pages)
        return GX_OK;
    /* too few pages of known components: the fingerprints' pools */
    g->labelled = 0;
    g->n_ident = 0;
    memset(g->id, 0, g->n_pages * sizeof *g->id);
    infer_progress(ctx, "ways: too few pool pages of the components contention saw: "
                        "fingerprint pools");
    return fingerprint_pred(ctx, o, g);
}

int guided_init(gx_infer *ctx, uint64_t npages, guided *g)
{
    memset(g, 0, sizeof *g);
    uint64_t page = ctx->info->page_bytes;
    gx_target_stats a, b;
    gx_target_get_stats(ctx->t, &a);
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = infer_line_bytes(ctx);
    o.page_bytes = page;
    o.region_offset = 0;
    o.region_bytes = npages * page;
    o.timer_noise_cycles = ctx->timer.have ? ctx->timer.noise : 0;
    o.seed = gx_rng_next(&ctx->rng);
    g->n_pages = guided_page_count(ctx, npages);
    g->pages = malloc(npages * sizeof *g->pages);
    g->id = calloc(g->n_pages, sizeof *g->id);
    if (!g->pages || !g->id)
        return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    int rc = GX_OK;
    if (ctx->slices.lpred && ctx->slices.lpred_generation == ctx->arena.generation) {
        g->sp = ctx->slices.lpred;
        g->labelled = 1;
    } else if ((rc = fingerprint_pred(ctx, &o, g)) != GX_OK) {
        return rc;
    }
    for (uint64_t p = 0; p < npages; p++)
        g->pages[p] = p;
    gx_rng_shuffle_u64(&ctx->rng, g->pages, npages);
    if (g->labelled && (rc = labelled_identify(ctx, g, npages, &o)) != GX_OK)
        return rc;
    gx_slicepred_summary sum;
    gx_slicepred_get_summary(g->sp, &sum);
    g->classes = sum.classes;
    gx_target_get_stats(ctx->t, &b);
    g->learn_accesses = b.accesses - a.accesses;
    return GX_OK;
}

/* Identify pool pages up to n (cached). A page that cannot be identified
 * within 1% of its lines is left out of the pools. */
static int guided_identify(gx_infer *ctx, guided *g, uint32_t n)
{
    uint64_t page = ctx->info->page_bytes;
    gx_target_stats a, b;
    gx_target_get_stats(ctx->t, &a);
    for (; g->n_ident < n && g->n_ident < g->n_pages; g->n_ident++) {
        uint64_t base = g->pages[g->n_ident] * page;
        int rc = infer_identify_pages(ctx, g->sp, &base, 1, &g->id[g->n_ident]);
        if (rc != GX_OK)
            return rc;
    }
    gx_target_get_stats(ctx->t, &b);
    g->learn_accesses += b.accesses - a.accesses;
    return GX_OK;
}

/* One target in a random pool page; its pool = every line of the pool
 * pages that the predictor puts in the target's slice class, in random
 * order. The density rises by the slice count over random lines, and it
 * does not depend on the hashes' bits above the page. */
int guided_set(gx_infer *ctx, gx_evx *ev, guided *g, uint32_t line, gx_evx_result *res,
               size_t *n_pool)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t lpp = page / line;
    int rc = guided_identify(ctx, g, g->n_pages);
    if (rc != GX_OK)
        return rc;
    /* target: a line of an identified page, predicted in a known class */
    uint32_t ti = 0;
    uint64_t target = 0;
    int cls = -1;
    for (int tries = 0; tries < 64 && cls < 0; tries++) {
        ti = (uint32_t)gx_rng_below(&ctx->rng, g->n_pages);
        if (g->id[ti].component < 0)
            continue;
        target = g->pages[ti] * page + gx_rng_below(&ctx->rng, lpp) * line;
        cls = gx_slicepred_predict(g->sp, &g->id[ti], target);
    }
    if (cls < 0)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: no identified page for a guided pool");
    size_t n = 0;
    for (uint32_t i = 0; i < g->n_pages; i++) {
        if (g->id[i].component < 0)
            continue;
        uint64_t base = g->pages[i] * page;
        for (uint64_t l = 0; l < lpp; l++) {
            uint64_t off = base + l * line;
            if (off == target || gx_slicepred_predict(g->sp, &g->id[i], off) != cls)
                continue;
            if (n == g->pool_cap) {
                size_t cap = g->pool_cap ? 2 * g->pool_cap : 4096;
                uint64_t *np = realloc(g->pool, cap * sizeof *np);
                if (!np)
                    return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
                g->pool = np;
                g->pool_cap = cap;
            }
            g->pool[n++] = off;
        }
    }
    if (n == 0)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: empty guided pool");
    gx_rng_shuffle_u64(&ctx->rng, g->pool, (uint64_t)n);
    *n_pool = n;
    return gx_evx_find(ev, target, g->pool, n, res);
}

/* Lines of one identified page predicted in class cls, appended to *pool. */
static int append_class_lines(gx_infer *ctx, const gx_slicepred *sp, const gx_slicepred_page *pg,
                              int cls, uint64_t skip, uint64_t **pool, size_t *n, size_t *cap)
{
    uint64_t page = ctx->info->page_bytes;
    uint32_t line = infer_line_bytes(ctx);
    for (uint64_t l = 0; l < page / line; l++) {
        uint64_t off = pg->base + l * line;
        if (off == skip || gx_slicepred_predict(sp, pg, off) != cls)
            continue;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 4096;
            uint64_t *np = realloc(*pool, c * sizeof *np);
            if (!np)
                return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
            *pool = np;
            *cap = c;
        }
        (*pool)[(*n)++] = off;
    }
    return GX_OK;
}

/* Pages a labelled grow identifies in one call: twice those it needs (pages
 * of components the slices stage did not see stay out), at least 8. */
#define GROW_LABEL_FACTOR 2u
#define GROW_LABEL_MIN 8u

int gx_ways_grow_pool(gx_infer *ctx, gx_evset *es, uint32_t n_new, size_t *added)
{
    *added = 0;
    uint64_t page = ctx->info->page_bytes;
    uint32_t line = infer_line_bytes(ctx);
    uint64_t npages = page ? ctx->arena.work_bytes / page : 0;
    gx_slicepred *sp = ctx->ways.pool_pred ? ctx->ways.pool_pred : infer_slice_pred(ctx);
    if (!sp || npages == 0 || page < line)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: no slice predictor to grow a pool with");
    const int labelled = gx_slicepred_is_labelled(sp);
    gx_slicepred_page tp;
    uint64_t tb = es->target / page * page;
    int rc = infer_identify_pages(ctx, sp, &tb, 1, &tp);
    if (rc != GX_OK)
        return rc;
    if (tp.component < 0)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: the target's page: not identified");
    int cls = gx_slicepred_predict(sp, &tp, es->target);
    uint8_t *covered = calloc(npages, 1);
    uint64_t *order = malloc(npages * sizeof *order);
    size_t chunk = 1; /* pages a call identifies */
    if (labelled)
        chunk = (size_t)n_new * GROW_LABEL_FACTOR > GROW_LABEL_MIN
                    ? (size_t)n_new * GROW_LABEL_FACTOR
                    : GROW_LABEL_MIN;
    uint64_t *bases = malloc(chunk * sizeof *bases);
    gx_slicepred_page *pgs = malloc(chunk * sizeof *pgs);
    if (!covered || !order || !bases || !pgs) {
        free(covered);
        free(order);
        free(bases);
        free(pgs);
        return gx_fail(ctx->msg, GX_ENOMEM, "ways: out of memory");
    }
    /* pages whose predicted lines the pool holds already (none for a
     * same-offset pool: those held one line of every page) */
    for (size_t i = 0; i < es->n_pool; i++)
        if (es->pool[i] / page < npages)
            covered[es->pool[i] / page] = 1;
    size_t n = 0;
    for (uint64_t p = 0; p < npages; p++)
        if (!covered[p])
            order[n++] = p;
    gx_rng_shuffle_u64(&ctx->rng, order, (uint64_t)n);
    size_t np = es->n_pool, cap = es->n_pool;
    uint32_t got = 0, calls = 0;
    for (size_t i = 0; rc == GX_OK && i < n && got < n_new && cls >= 0 &&
                       (!labelled || calls < GUIDED_LABEL_BATCHES);
         calls++) {
        size_t k = 0;
        for (; k < chunk && i < n; k++, i++)
            bases[k] = order[i] * page;
        rc = infer_identify_pages(ctx, sp, bases, k, pgs);
        for (size_t j = 0; rc == GX_OK && j < k && got < n_new; j++) {
            if (pgs[j].component < 0)
                continue;
            got++;
            rc = append_class_lines(ctx, sp, &pgs[j], cls, es->target, &es->pool, &np, &cap);
        }
    }
    free(covered);
    free(order);
    free(bases);
    free(pgs);
    if (rc != GX_OK)
        return rc;
    if (cls < 0)
        return gx_fail(ctx->msg, GX_EUNSURE, "ways: the target's slice class is unknown");
    *added = np - es->n_pool;
    es->n_pool = np;
    return GX_OK;
}
