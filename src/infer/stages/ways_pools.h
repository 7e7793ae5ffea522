/* ways_pools.h - private to the ways stage (stage_ways.c): its slice-guided
 * pools (ways_pools.c), the lines of a sample of pages that a slice
 * predictor puts in the target's slice class. */
#ifndef GX_INFER_STAGES_WAYS_POOLS_H
#define GX_INFER_STAGES_WAYS_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "../evset/evset.h"
#include "gpuxray/slicepredict.h"

/* State of the slice-guided mode: a slice predictor (the slices stage's,
 * or learned here when that stage did not run), the pool pages (a random
 * sample of the arena) and their identification, cached across targets. */
typedef struct guided {
    gx_slicepred *sp;
    int own_sp;                 /* sp learned here (freed here) */
    int labelled;               /* sp is the slices stage's contention-labelled predictor */
    uint64_t *pages;            /* page numbers of the pool pages */
    gx_slicepred_page *id;      /* their identification (component -1: failed) */
    uint32_t n_pages, n_ident;  /* pool pages, pages identified so far */
    uint64_t *pool;
    size_t pool_cap;
    uint64_t learn_accesses;    /* what learning and identification cost */
    uint64_t label_calls;       /* target calls of the labelled identification */
    uint32_t classes;
} guided;

/* Choose (or learn) the predictor and draw the pool pages. */
int guided_init(gx_infer *ctx, uint64_t npages, guided *g);
void guided_free(guided *g);
/* One target in a random identified pool page and its pool (g->pool,
 * *n_pool lines, random order) reduced: gx_evx_find's result. */
int guided_set(gx_infer *ctx, gx_evx *ev, guided *g, uint32_t line, gx_evx_result *res,
               size_t *n_pool);

#endif
