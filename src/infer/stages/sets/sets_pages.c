/* sets_pages.c - the sets stage's cross-page part: the sets of T's slice
 * counted over the arena's pages, for set indexes whose masks reach above
 * the page (l2.sets_per_slice where one page shows only part of the sets).
 *
 * Models: a line's set is F(V x xor c_P): V linear over the line's in-page
 * offset x (the masks' observable parts), c_P what the bits above the page
 * add for page P, F the identity (XOR index) or value mod m. The target's
 * pages sit at frames it does not tell (the sim draws each page's frame at
 * random; a GPU driver may place an allocation contiguously, but nothing
 * here assumes it), so c_P is one unknown constant per page: the bits above
 * the page are unobservable except through it. When the masks' observable
 * parts are dependent (or zero), one page holds lines of only some sets of
 * a slice, and no function over the page's bits writes the index; the count
 * of sets still follows from congruences between lines of different pages.
 *
 * Method (a linear slice hash: T's slice in page P is x_P xor span(K), x_P
 * any line of P that the slices stage's predictor puts in T's slice):
 * - Cells: Z = the differences that keep T's class whole (sets_class_span)
 *   flip no value bit, so in every page the lines x xor span(Z) are
 *   congruent. With 2^dim Z > W, W lines of a cell are an eviction set of
 *   any other line of it (checked by an overflow test per new class).
 * - Census: the cells of T's page, then of every other page, are assigned
 *   to the classes known so far (one probe pass of the unassigned cells'
 *   representatives against each class's eviction set); a cell that none
 *   evicts starts a class. Stopped when enough pages in a row brought no
 *   new class that a missed one is improbable (each page's cells hit
 *   about cells/classes of the classes: SETS_PAGES_MISS after that many),
 *   or at the probe budget, or when the arena's pages run out (then not
 *   complete).
 * - The count is checked by sets_write_sets against the levels' capacity.
 *
 * Notes: the masks are not written: with dependent observable parts no
 * profile can state them (Contract 1: masks nonzero, independent, 2^masks
 * or modulo sets), so l2.hash.set stays absent with the reason. Needs the
 * slices stage's predictor. Costs: classes x pages probe passes at most,
 * bounded by SETS_PAGES_BUDGET line loads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* cells per page classified at most (2^dim(K/Z)): more is a page that
 * shows its sets by itself, which the in-page path handles */
#define SETS_PAGES_MAX_CELLS 1024
/* classes at most (SETS_MAX_CLASSES: what any part of the stage counts) */
#define SETS_PAGES_MAX_CLASSES SETS_MAX_CLASSES
/* probability that a class no page showed so far exists after the pages
 * in a row without a new one: the stop rule's bar */
#define SETS_PAGES_MISS 0.01
/* at least this many pages in a row without a new class, whatever the
 * coverage estimate says (it rests on the classes found so far) */
#define SETS_PAGES_MIN_STALE 6
/* line loads of the census at most (a probe pass walks the eviction set
 * 4W + 8 times): bounds its cost on L2s of thousands of sets */
#define SETS_PAGES_BUDGET 150000000.0

typedef struct census {
    uint64_t *evs;   /* class j's eviction set: evs[j * w ..] (arena offsets) */
    uint32_t n, w;
    double loads;    /* line loads spent (estimate from probe passes) */
} census;

/* The first line of the identified page pg that the predictor puts in
 * class cls; 1 when found (*x in-page). */
static int page_anchor(sets_ctx *s, const gx_slicepred *sp, const gx_slicepred_page *pg,
                       int cls, uint64_t *x)
{
    if (pg->component < 0)
        return 0;
    for (uint64_t off = 0; off < s->page; off += s->line)
        if (gx_slicepred_predict(sp, pg, pg->base + off) == cls) {
            *x = off;
            return 1;
        }
    return 0;
}

/* Class c->n's eviction set: W lines of the cell of y (in page pb), as
 * the first W nonzero points of span(Z), else of span(Z less one
 * direction): Z comes from T's class alone, and a direction that keeps
 * that class whole by chance splits other cells (*ovf = 0: none evicts y). */
static int cell_evset(sets_ctx *s, census *c, uint64_t pb, uint64_t y, const gx_gf2_basis *z,
                      int *ovf)
{
    uint64_t *e = c->evs + (size_t)c->n * c->w, zb[64];
    *ovf = 0;
    for (int skip = -1; skip < z->n && !*ovf; skip++) {
        int nz = 0;
        for (int i = 0; i < z->n; i++)
            if (i != skip)
                zb[nz++] = z->v[i];
        if (nz >= 63 || ((uint64_t)1 << nz) <= c->w)
            continue;
        for (uint32_t q = 0; q < c->w; q++)
            e[q] = pb + (y ^ sets_span_point(zb, nz, (uint64_t)q + 1));
        int rc = sets_set_overflows(s, pb + y - s->base, e, c->w, ovf);
        c->loads += (4.0 * c->w + 8.0) * c->w;
        if (rc != GX_OK)
            return rc;
    }
    return GX_OK;
}

/* Assign the cells of page pb (representatives rep[i], in-page) to the
 * known classes, starting classes for the rest. *fresh: classes started.
 * Returns GX_OK, or GX_EUNSURE when a cell does not evict its own line
 * (the cells are not congruent: the census does not apply). */
static int census_page(sets_ctx *s, census *c, uint64_t pb, const uint64_t *rep, size_t nrep,
                       const gx_gf2_basis *z, int *fresh)
{
    uint64_t *offs = malloc(nrep * sizeof *offs);
    uint8_t *ev = malloc(nrep), *done = calloc(nrep, 1);
    int rc = offs && ev && done ? GX_OK : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    const double pass = (4.0 * c->w + 8.0) * c->w;
    size_t left = nrep;
    *fresh = 0;
    for (uint32_t j = 0; rc == GX_OK && left > 0; j++) {
        if (j == c->n) {
            /* the first unassigned cell starts a class: W of its lines */
            size_t i0 = 0;
            while (done[i0])
                i0++;
            if (c->n >= SETS_PAGES_MAX_CLASSES) {
                rc = GX_ERANGE;
                break;
            }
            int ovf = 0;
            if ((rc = cell_evset(s, c, pb, rep[i0], z, &ovf)) != GX_OK)
                break;
            if (!ovf) {
                rc = GX_EUNSURE;
                break;
            }
            done[i0] = 1;
            left--;
            c->n++;
            (*fresh)++;
        }
        size_t np = 0;
        for (size_t i = 0; i < nrep; i++)
            if (!done[i])
                offs[np++] = pb + rep[i] - s->base;
        if (np == 0)
            break;
        const uint64_t *e = c->evs + (size_t)j * c->w;
        if ((rc = sets_probe_offsets(s, e, c->w, offs, np, np, ev)) != GX_OK)
            break;
        c->loads += pass;
        for (size_t i = 0, p = 0; i < nrep; i++)
            if (!done[i] && ev[p++]) {
                done[i] = 1;
                left--;
            }
    }
    free(offs);
    free(ev);
    free(done);
    return rc;
}

/* Pages in a row without a new class after which a missed class has
 * probability below SETS_PAGES_MISS: each page's cells show about
 * min(1, cells / classes) of any class. */
static uint32_t stale_needed(size_t cells, uint32_t classes)
{
    double hit = classes ? (double)cells / classes : 1;
    if (hit >= 1)
        return SETS_PAGES_MIN_STALE;
    double n = ceil(log(SETS_PAGES_MISS) / log(1 - hit));
    return n < SETS_PAGES_MIN_STALE ? SETS_PAGES_MIN_STALE : (uint32_t)n;
}

/* The census's cells: Z and the representatives T xor span(K / Z) of one
 * page (in-page, relative to its anchor 0). 0 when it does not apply. */
static size_t census_cells(const sets_ctx *s, const uint64_t *ct, size_t nct, gx_gf2_basis *z,
                           uint64_t *rep)
{
    sets_class_span(ct, nct, s->toff, z);
    if (z->n >= 63 || ((uint64_t)1 << z->n) <= s->w)
        return 0;
    uint64_t qb[64];
    int nq = 0;
    gx_gf2_basis b = *z;
    for (int i = 0; i < s->k; i++)
        if (gx_gf2_basis_add(&b, s->kb[i]))
            qb[nq++] = s->kb[i];
    if (nq > 10 || ((size_t)1 << nq) > SETS_PAGES_MAX_CELLS)
        return 0;
    size_t n = (size_t)1 << nq;
    for (size_t c = 0; c < n; c++)
        rep[c] = sets_span_point(qb, nq, c);
    return n;
}

int sets_pages_census(sets_ctx *s, const uint64_t *ct, size_t nct, uint32_t *m_out,
                      int *complete, uint32_t *pages_out)
{
    gx_infer *ctx = s->ctx;
    *m_out = 0;
    *complete = 0;
    *pages_out = 0;
    gx_slicepred *sp = infer_slice_pred(ctx);
    if (!sp || ctx->slices.hash.table || !ct || nct == 0 || s->w > GX_EVX_MAX_WAYS)
        return GX_OK;
    gx_gf2_basis z;
    uint64_t rel[SETS_PAGES_MAX_CELLS], rep[SETS_PAGES_MAX_CELLS];
    size_t ncell = census_cells(s, ct, nct, &z, rel);
    gx_slicepred_page pga;
    if (ncell == 0 || !sets_identify_target_page(s, &pga))
        return GX_OK;
    int cls = gx_slicepred_predict(sp, &pga, s->base + s->toff);
    if (cls < 0)
        return GX_OK;
    census c = {malloc((size_t)SETS_PAGES_MAX_CLASSES * s->w * sizeof(uint64_t)), 0, s->w, 0};
    if (!c.evs)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    uint64_t npages = gx_target_arena_bytes(ctx->t) / s->page, pa = s->base / s->page;
    uint32_t stale = 0, pages = 0;
    /* the other pages, in the order the census visits them */
    uint64_t *bases = malloc((size_t)(npages ? npages : 1) * sizeof *bases);
    infer_page_ids ids;
    memset(&ids, 0, sizeof ids);
    int rc = bases ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (uint64_t i = 1; rc == GX_OK && i < npages; i++)
        bases[i - 1] = (pa + i) % npages * s->page;
    if (rc == GX_OK)
        rc = infer_page_ids_init(ctx, &ids, sp, bases, (size_t)(npages ? npages - 1 : 0));
    for (uint64_t i = 0; i < npages && rc == GX_OK; i++) {
        uint64_t pi = (pa + i) % npages, pb = pi * s->page, x = s->toff;
        const gx_slicepred_page *pg = NULL;
        if (pi != pa && (infer_page_id(ctx, &ids, (size_t)(i - 1), &pg) != GX_OK ||
                         !page_anchor(s, sp, pg, cls, &x)))
            continue;
        for (size_t q = 0; q < ncell; q++)
            rep[q] = x ^ rel[q];
        int fresh = 0;
        rc = census_page(s, &c, pb, rep, ncell, &z, &fresh);
        pages++;
        stale = fresh ? 0 : stale + 1;
        if (rc == GX_OK && stale >= stale_needed(ncell, c.n)) {
            *complete = 1;
            break;
        }
        if (c.loads > SETS_PAGES_BUDGET)
            break;
    }
    if (rc == GX_EUNSURE || rc == GX_ERANGE)
        rc = GX_OK; /* not applicable: nothing counted */
    else if (rc == GX_OK)
        *m_out = c.n;
    *pages_out = pages;
    infer_page_ids_free(&ids);
    free(bases);
    free(c.evs);
    return rc;
}
