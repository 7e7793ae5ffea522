/* slice_use.c - the slices stage's slice predictor as the later stages
 * (ways, policy, sets) use it: which one (infer_slice_pred) and page
 * identification at the cost that suits it (infer_identify_pages).
 *
 * Notes:
 * - A contention-labelled predictor labels through contention launches
 *   (2 + 2C launches a labeller call, whatever the number of lines: slice
 *   contend.h), so its pages are identified in batches, one call for all;
 *   a fingerprint predictor measures 4 lines a round from its SMs, page by
 *   page.
 * - The labelled predictor holds arena offsets (its labeller's classes and
 *   memo): it serves only on the arena it was learnt on. */
#include <stdlib.h>
#include <string.h>

#include "gpuxray/slicepredict.h"
#include "../infer_util.h"

struct gx_slicepred *infer_slice_pred(const gx_infer *ctx)
{
    if (ctx->slices.lpred && ctx->slices.lpred_generation == ctx->arena.generation)
        return ctx->slices.lpred;
    return ctx->slices.pred;
}

int infer_identify_pages(gx_infer *ctx, struct gx_slicepred *sp, const uint64_t *bases, size_t n,
                         struct gx_slicepred_page *pgs)
{
    gx_msg m;
    uint32_t ok = 0;
    if (gx_slicepred_is_labelled(sp)) {
        int rc = gx_slicepred_identify_pages(sp, bases, n, INFER_LABEL_LINES, pgs, &ok, &m);
        return rc == GX_OK ? GX_OK : gx_fail(ctx->msg, rc, "slice pages: %s", m.text);
    }
    uint32_t max_lines = (uint32_t)(ctx->info->page_bytes / infer_line_bytes(ctx) / 100);
    if (max_lines < 16)
        max_lines = 16;
    for (size_t i = 0; i < n; i++) {
        memset(&pgs[i], 0, sizeof pgs[i]);
        int rc = gx_slicepred_identify(sp, bases[i], max_lines, &pgs[i], &m);
        if (rc == GX_EUNSURE)
            pgs[i].component = -1;
        else if (rc != GX_OK)
            return gx_fail(ctx->msg, rc, "slice pages: %s", m.text);
    }
    return GX_OK;
}

int infer_page_ids_init(gx_infer *ctx, infer_page_ids *c, struct gx_slicepred *sp,
                        const uint64_t *bases, size_t n)
{
    memset(c, 0, sizeof *c);
    c->sp = sp;
    c->bases = bases;
    c->n = n;
    c->pgs = malloc((n ? n : 1) * sizeof *c->pgs);
    c->have = calloc(n ? n : 1, 1);
    if (c->pgs && c->have)
        return GX_OK;
    infer_page_ids_free(c);
    return gx_fail(ctx->msg, GX_ENOMEM, "slice pages: out of memory");
}

void infer_page_ids_free(infer_page_ids *c)
{
    free(c->pgs);
    free(c->have);
    memset(c, 0, sizeof *c);
}

int infer_page_id(gx_infer *ctx, infer_page_ids *c, size_t i, const gx_slicepred_page **pg)
{
    *pg = NULL;
    if (i >= c->n)
        return gx_fail(ctx->msg, GX_EINVAL, "slice pages: page %zu of %zu", i, c->n);
    if (!c->have[i]) {
        /* labelled: this page and the next ones in one call; else this one */
        size_t k = gx_slicepred_is_labelled(c->sp) ? INFER_LABEL_BATCH : 1;
        if (k > c->n - i)
            k = c->n - i;
        int rc = infer_identify_pages(ctx, c->sp, c->bases + i, k, c->pgs + i);
        if (rc != GX_OK)
            return rc;
        memset(c->have + i, 1, k);
    }
    *pg = &c->pgs[i];
    return GX_OK;
}
