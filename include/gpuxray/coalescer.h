/* coalescer.h - the translation request coalescer (tlb.coalescer) and its
 * two predictors, one pair per SM.
 *
 * Notes:
 * - Page-size predictor: a saturating counter of size_predictor_bits bits,
 *   starting at 0; it predicts predict_large_bytes when the counter is at
 *   or above half its range (2^(bits-1)), else predict_small_bytes. A
 *   returned size >= predict_large_bytes counts up, a smaller one down.
 *   From saturation, a change of page size costs exactly 2^(bits-1)
 *   mispredicted groups (the hysteresis).
 * - Sizes are compared at their grouping granule: min(size,
 *   max_granule_bytes) (a 1 GiB page is grouped by 2 MiB chunks: a group
 *   never serialises a huge range).
 * - Neighbour predictor: a saturating counter of neighbour_predictor_bits;
 *   it widens groups to line_group_pages pages (one fetch block) at or
 *   above half range; a group that needed a real walk (a page-table read
 *   of its final entry) counts up, a TLB hit counts down, a walk answered
 *   by the page-walk caches does not train it. */
#ifndef GPUXRAY_COALESCER_H
#define GPUXRAY_COALESCER_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef struct gx_coalescer gx_coalescer;

typedef struct gx_coalescer_stats {
    uint64_t uncoalesced_accesses; /* requests before merging */
    uint64_t coalesced_accesses;   /* translation requests after merging (re-coalesced included) */
    uint64_t size_predictions, size_mispredictions;
    uint64_t line_coalesce_decisions; /* groups widened to several pages of one fetch block */
} gx_coalescer_stats;

int gx_coalescer_new(const gx_tlb_cfg *t, uint32_t sm_count, gx_coalescer **out, gx_msg *msg);
void gx_coalescer_free(gx_coalescer *c);
double gx_coalescer_window(const gx_coalescer *c);
/* The grouping granule of a page size. */
uint64_t gx_coalescer_granule(const gx_coalescer *c, uint64_t page_bytes);
/* The predicted page size for sm's next group. */
uint64_t gx_coalescer_predict(const gx_coalescer *c, uint32_t sm);
/* Train by the size a translation returned; 1 when it was mispredicted. */
int gx_coalescer_train_size(gx_coalescer *c, uint32_t sm, uint64_t predicted, uint64_t real);
/* Pages per group when the neighbour predictor widens, else 1. */
uint32_t gx_coalescer_group_pages(const gx_coalescer *c, uint32_t sm);
/* real_walk: 1 a page-table read of the final entry, 0 a TLB hit. */
void gx_coalescer_train_neighbour(gx_coalescer *c, uint32_t sm, int real_walk);
/* An instruction of one request after its translation (tlb_hit, leaf_read,
 * fault and the real page size, as translated at the size predicted before
 * it): the neighbour predictor trained on a TLB hit or a leaf read, the size
 * predictor on a translation without fault, and counted as one uncoalesced
 * and one coalesced access; what predict, train_neighbour, train_size and
 * count do for it, in one call. */
void gx_coalescer_alone(gx_coalescer *c, uint32_t sm, int tlb_hit, int leaf_read, int fault,
                        uint64_t real);
/* gx_coalescer_alone(c, sm[i], 1, 0, 0, real[i]) for i = 0 .. n - 1 in
 * order: n instructions of one request, each a TLB hit. */
void gx_coalescer_alone_hits(gx_coalescer *c, const uint32_t *sm, const uint64_t *real,
                             size_t n);
void gx_coalescer_count(gx_coalescer *c, uint64_t uncoalesced, uint64_t coalesced,
                        uint64_t widened);
void gx_coalescer_get_stats(const gx_coalescer *c, gx_coalescer_stats *s);

#endif
