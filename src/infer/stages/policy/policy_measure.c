/* policy_measure.c - the policy stage's measurements: the lines of the
 * universe U (an eviction set's W lines and lines congruent with them, from
 * its pool, grown through the slices stage's predictor when it runs dry),
 * the access programs over U (fixed, active and statistical ones) and their
 * runs on the target, each timed access classified hit / miss / unsure.
 * Assumes the ways stage's eviction sets in the current arena. */
#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"

void pol_free_data(pol_data *d)
{
    for (int p = 0; p < POL_MAX_PROGS; p++) {
        free(d->prog[p].id);
        free(d->prog[p].timed);
    }
    for (int r = 0; r < d->n_runs; r++)
        free(d->run[r].obs);
}

/* ---- lines ---------------------------------------------------------------- */

/* Candidates for B: the set's pool (lines predicted in its target's slice
 * class) from index `from` on, or, for a same-offset pool (NULL), the
 * target's offset in every page; lines already in U left out, shuffled. */
static int candidates(gx_infer *ctx, const gx_evset *es, size_t from, const pol_data *d,
                      uint64_t **out, size_t *n_out)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t npages = page ? ctx->arena.work_bytes / page : 0;
    size_t cap = es->pool ? (es->n_pool > from ? es->n_pool - from : 0) : (size_t)npages;
    uint64_t *cand = malloc((cap ? cap : 1) * sizeof *cand);
    if (!cand)
        return gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
    size_t nc = 0;
    for (size_t p = 0; p < cap; p++) {
        uint64_t x = es->pool ? es->pool[from + p] : p * page + es->target % page;
        int used = 0;
        for (uint32_t i = 0; i <= d->w && !used; i++)
            used = d->u[i] == x;
        if (!used)
            cand[nc++] = x;
    }
    gx_rng_shuffle_u64(&ctx->rng, cand, (uint64_t)nc);
    *out = cand;
    *n_out = nc;
    return GX_OK;
}

/* B = W lines of cand congruent with A's target (probed against A), which
 * must form a minimal eviction set of the target too (a probe that
 * mistook a line would make every prediction wrong): verified, and searched
 * again further down the candidates when it fails. *ok = 1 when found. */
static int find_b(gx_evx *ev, const pol_data *d, const uint64_t *cand, size_t nc, uint64_t *b,
                  int *ok)
{
    uint32_t w = d->w;
    int rc = GX_OK;
    size_t from = 0;
    *ok = 0;
    for (int attempt = 0; rc == GX_OK && !*ok && attempt < POL_B_ATTEMPTS && from < nc;
         attempt++) {
        size_t got = 0;
        size_t before = from;
        rc = gx_evx_more_congruent(ev, d->u + 1, w, cand + from, nc - from, w, b, &got);
        if (rc != GX_OK || got < w)
            break;
        /* continue after the last line taken */
        for (size_t i = from; i < nc; i++)
            if (cand[i] == b[w - 1]) {
                from = i + 1;
                break;
            }
        if (from == before)
            from = nc;
        rc = gx_evx_verify(ev, d->u[0], b, w, ok, NULL);
    }
    return rc;
}

/* A = es's target + its minimal eviction set, B searched in the given
 * candidates; on success U = A + B. */
static int try_set(gx_infer *ctx, gx_evx *ev, const gx_evset *es, size_t from, pol_data *d,
                   int *ok)
{
    *ok = 0;
    d->w = es->n;
    d->u[0] = es->target;
    memcpy(d->u + 1, es->lines, es->n * sizeof *es->lines);
    uint64_t *cand = NULL;
    size_t nc = 0;
    int rc = candidates(ctx, es, from, d, &cand, &nc);
    if (rc == GX_OK)
        rc = find_b(ev, d, cand, nc, d->u + es->n + 1, ok);
    free(cand);
    return rc;
}

/* Pages a set's pool spans (0 for a same-offset pool: it holds none of
 * their class lines). */
static uint32_t pool_pages(const gx_infer *ctx, const gx_evset *es)
{
    uint64_t page = ctx->info->page_bytes;
    uint64_t npages = page ? ctx->arena.work_bytes / page : 0;
    uint8_t *seen = es->pool && npages ? calloc(npages, 1) : NULL;
    uint32_t n = 0;
    for (size_t i = 0; seen && i < es->n_pool; i++) {
        uint64_t p = es->pool[i] / page;
        if (p < npages && !seen[p]) {
            seen[p] = 1;
            n++;
        }
    }
    free(seen);
    return n;
}

/* U = target + eviction set + W more congruent lines (B). The ways stage's
 * pools hold only a few W congruent lines (their reduction took W of them),
 * so a pool can run dry: then the first set's pool grows by more pages of
 * its target's slice class (each round doubles its pages, POL_GROW_ROUNDS
 * rounds at most), and at last every other kept set is tried with its own
 * pool. *used = the set U was built on. */
int pol_gather_lines(gx_infer *ctx, gx_evx *ev, pol_data *d, int *used)
{
    gx_evset *es = &ctx->ways.evsets[0];
    int ok = 0;
    int rc = try_set(ctx, ev, es, 0, d, &ok);
    for (int g = 0; rc == GX_OK && !ok && g < POL_GROW_ROUNDS; g++) {
        uint32_t pages = pool_pages(ctx, es);
        uint32_t more = pages > POL_GROW_MIN_PAGES ? pages : POL_GROW_MIN_PAGES;
        size_t from = es->pool ? es->n_pool : 0, added = 0;
        gx_msg keep = *ctx->msg;
        int grc = gx_ways_grow_pool(ctx, es, more, &added);
        if (grc == GX_EUNSURE) {
            *ctx->msg = keep;
            break;
        }
        if ((rc = grc) != GX_OK || added == 0)
            break;
        infer_progress(ctx, "policy: pool of set 1 grown by %zu lines (%u pages)", added, more);
        rc = try_set(ctx, ev, es, from, d, &ok);
    }
    *used = 0;
    for (int i = 1; rc == GX_OK && !ok && i < ctx->ways.n_evsets && i < GX_INFER_MAX_EVSETS; i++) {
        if (ctx->ways.evsets[i].n != ctx->ways.evsets[0].n)
            continue;
        *used = i;
        rc = try_set(ctx, ev, &ctx->ways.evsets[i], 0, d, &ok);
    }
    if (rc != GX_OK)
        return rc;
    if (!ok)
        return gx_fail(ctx->msg, GX_EUNSURE,
                       "policy: no %u extra congruent lines forming a minimal eviction set "
                       "(%d sets tried, the first one's pool grown)",
                       d->w, ctx->ways.n_evsets);
    d->nu = 2 * d->w + 1;
    return gx_evx_ref_latencies(ev, d->u, d->nu, d->ref);
}

/* ---- programs ----------------------------------------------------------------- */

static int prog_put(pol_prog *p, uint32_t id, int timed)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        uint32_t *i2 = realloc(p->id, cap * sizeof *i2);
        if (!i2)
            return GX_ENOMEM;
        p->id = i2;
        uint8_t *t2 = realloc(p->timed, cap);
        if (!t2)
            return GX_ENOMEM;
        p->timed = t2;
        p->cap = cap;
    }
    p->id[p->n] = id;
    p->timed[p->n] = (uint8_t)timed;
    p->n_timed += (size_t)timed;
    p->n++;
    return GX_OK;
}

static void prog_clear(pol_prog *p)
{
    p->n = p->n_timed = 0;
}

/* B rounds, each in a fresh random order (drawn once: part of the program,
 * replayed identically by the simulation), then (fill_a) A in order, timed.
 * Shuffled rounds make the state after the reset depend far less on what
 * the set held before (measured: QLRU and bit-PLRU variants go from
 * hundreds of possible states to 1-3). */
static int prog_reset(pol_prog *p, const pol_data *d, gx_rng *r, int fill_a)
{
    int rc = GX_OK;
    uint64_t b[GX_EVX_MAX_WAYS];
    for (uint32_t i = 0; i < d->w; i++)
        b[i] = d->border[i];
    for (int k = 0; k < POL_RESET_ROUNDS; k++) {
        gx_rng_shuffle_u64(r, b, d->w);
        for (uint32_t i = 0; i < d->w && rc == GX_OK; i++)
            rc = prog_put(p, (uint32_t)b[i], 0);
    }
    for (uint32_t i = 0; fill_a && i <= d->w && rc == GX_OK; i++)
        rc = prog_put(p, i, 1);
    return rc;
}

/* Random segments: each over a random subset of m lines of U, m in
 * [mlo, mhi]; optionally "hot" re-accesses of the segment's first line. */
static int prog_segments(pol_prog *p, const pol_data *d, gx_rng *r, int segs, size_t seg_len,
                         uint32_t mlo, uint32_t mhi, double hot)
{
    uint64_t t[POL_MAX_U];
    int rc = GX_OK;
    for (int s = 0; s < segs && rc == GX_OK; s++) {
        uint32_t m = mlo + (uint32_t)gx_rng_below(r, mhi - mlo + 1);
        if (m > d->nu)
            m = d->nu;
        for (uint32_t i = 0; i < d->nu; i++)
            t[i] = i;
        gx_rng_shuffle_u64(r, t, d->nu);
        for (size_t k = 0; k < seg_len && rc == GX_OK; k++) {
            uint32_t id = (uint32_t)t[gx_rng_below(r, m)];
            if (hot > 0 && gx_rng_uniform(r) < hot)
                id = (uint32_t)t[0];
            rc = prog_put(p, id, 1);
        }
    }
    return rc;
}

int pol_base_programs(gx_infer *ctx, pol_data *d)
{
    uint32_t w = d->w;
    uint64_t tmp[GX_EVX_MAX_WAYS];
    for (uint32_t i = 0; i < w; i++)
        tmp[i] = w + 1 + i;
    gx_rng_shuffle_u64(&ctx->rng, tmp, w);
    for (uint32_t i = 0; i < w; i++)
        d->border[i] = (uint32_t)tmp[i];
    int rc = GX_OK;
    /* (1) random segments over W+1 .. 2W+1 lines */
    pol_prog *p = &d->prog[0];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 1);
    if (rc == GX_OK)
        rc = prog_segments(p, d, &ctx->rng, POL_SEGMENTS, 3 * (size_t)(w + 1), w + 1, 2 * w + 1,
                           0);
    /* (2) cyclic over A */
    p = &d->prog[1];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 1);
    for (int r = 0; rc == GX_OK && r < POL_CYCLIC_ROUNDS; r++)
        for (uint32_t i = 0; i <= w && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    /* (3) round robin over exactly W lines */
    p = &d->prog[2];
    if (rc == GX_OK)
        rc = prog_reset(p, d, &ctx->rng, 0);
    for (int r = 0; rc == GX_OK && r < POL_CYCLIC_ROUNDS; r++)
        for (uint32_t i = 0; i < w && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    d->n_progs = POL_BASE_PROGS;
    return rc == GX_OK ? GX_OK : gx_fail(ctx->msg, rc, "policy: out of memory");
}

/* A random program for the discrimination search. */
int pol_random_program(pol_prog *p, const pol_data *d, gx_rng *r)
{
    prog_clear(p);
    uint32_t w = d->w;
    int rc = prog_reset(p, d, r, 1);
    int kind = (int)gx_rng_below(r, 3);
    uint32_t mlo = w + 1, mhi = w + 1 + (uint32_t)gx_rng_below(r, w + 1);
    double hot = kind == 1 ? 0.2 + 0.4 * gx_rng_uniform(r) : 0;
    size_t seg = (size_t)(w + 1) * (1 + gx_rng_below(r, 4));
    int segs = (int)((size_t)(24 * (w + 1)) / seg) + 1;
    if (kind == 2) { /* cyclic walks over W+1 .. W+3 lines with random detours */
        for (int s = 0; s < 6 && rc == GX_OK; s++) {
            uint32_t m = w + 1 + (uint32_t)gx_rng_below(r, 3);
            if (m > d->nu)
                m = d->nu;
            uint64_t t[POL_MAX_U];
            for (uint32_t i = 0; i < d->nu; i++)
                t[i] = i;
            gx_rng_shuffle_u64(r, t, d->nu);
            for (int rr = 0; rr < 4 && rc == GX_OK; rr++)
                for (uint32_t i = 0; i < m && rc == GX_OK; i++) {
                    rc = prog_put(p, (uint32_t)t[i], 1);
                    if (rc == GX_OK && gx_rng_uniform(r) < 0.15)
                        rc = prog_put(p, (uint32_t)t[gx_rng_below(r, m)], 1);
                }
        }
        return rc;
    }
    if (rc == GX_OK)
        rc = prog_segments(p, d, r, segs, seg, mlo, mhi, hot);
    return rc;
}

/* Programs for telling randomized policies apart by their hit rates: cyclic
 * walks over W+2 and W+3 lines, random accesses over W+2 .. W+4, cyclic
 * over W+1 again (more samples). */
int pol_stat_program(pol_prog *p, const pol_data *d, gx_rng *r, int kind)
{
    prog_clear(p);
    uint32_t w = d->w;
    int rc = prog_reset(p, d, r, 1);
    uint32_t m = kind == 0 ? w + 2 : kind == 1 ? w + 3 : kind == 2 ? w + 4 : w + 1;
    if (m > d->nu)
        m = d->nu;
    if (kind == 2)
        return rc == GX_OK ? prog_segments(p, d, r, 16, 4 * (size_t)(w + 1), w + 2, m, 0) : rc;
    for (int k = 0; rc == GX_OK && k < 2 * POL_CYCLIC_ROUNDS; k++)
        for (uint32_t i = 0; i < m && rc == GX_OK; i++)
            rc = prog_put(p, i, 1);
    return rc;
}

/* ---- measurement ---------------------------------------------------------------- */

int pol_run_program(gx_infer *ctx, gx_evx *ev, pol_data *d, int prog, int runs)
{
    pol_prog *pg = &d->prog[prog];
    gx_seq_op *ops = calloc(pg->n, sizeof *ops);
    double *cyc = calloc(pg->n_timed ? pg->n_timed : 1, sizeof *cyc);
    int rc = ops && cyc ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
    for (size_t i = 0; rc == GX_OK && i < pg->n; i++) {
        ops[i].offset = d->u[pg->id[i]];
        ops[i].kind = GX_OP_LOAD;
        ops[i].timed = pg->timed[i];
    }
    for (int r = 0; rc == GX_OK && r < runs && d->n_runs < POL_MAX_RUNS; r++) {
        pol_run *run = &d->run[d->n_runs];
        run->prog = prog;
        run->obs = calloc(pg->n_timed ? pg->n_timed : 1, sizeof *run->obs);
        if (!run->obs) {
            rc = gx_fail(ctx->msg, GX_ENOMEM, "policy: out of memory");
            break;
        }
        d->n_runs++;
        pg->runs++;
        if ((rc = infer_seq_timed(ctx, ops, pg->n, ev->sm, cyc)) != GX_OK)
            break;
        size_t t = 0;
        for (size_t i = 0; i < pg->n; i++)
            if (pg->timed[i]) {
                run->obs[t] = (int8_t)gx_evx_classify(ev, cyc[t], d->ref[pg->id[i]]);
                t++;
            }
        d->total_timed += pg->n_timed;
    }
    free(ops);
    free(cyc);
    return rc;
}
