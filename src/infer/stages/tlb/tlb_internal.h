/* tlb_internal.h - private to the tlb stage (src/infer/stages/tlb/): the
 * translation-chase measurements (tlb_measure.c) and the stage's state.
 * Uses only the target interface (gx_target_xchase). */
#ifndef GX_INFER_TLB_INTERNAL_H
#define GX_INFER_TLB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/target.h"

/* A latency step smaller than this is not a translation level: above the
 * noise of a mean over thousands of per-step medians (well under a cycle),
 * below the ~10-cycle steps an H200 shows. */
#define TLB_JUMP_CYCLES 5.0
/* A test chase "hits" a level when its mean is within HIT of the level's
 * latency and "misses" when it is MISS above it; between: unsure (retried
 * with more rounds, then unknown). Half and all of the smallest step. */
#define TLB_HIT_CYCLES (TLB_JUMP_CYCLES / 2)
#define TLB_MISS_CYCLES TLB_JUMP_CYCLES
/* A step is slow for a level when its median lies this far over the
 * level's latency (four of the smallest steps: past the noise of a median
 * of three rounds); a chase with TLB_SLOW_FRACTION of its steps slow
 * misses the level however low its mean (one walk in every 16 pages when
 * each walk's fetch installs its 15 neighbours; 1/32 leaves room for 32). */
#define TLB_SLOW_CYCLES (4 * TLB_JUMP_CYCLES)
#define TLB_SLOW_FRACTION (1.0 / 32)

struct gx_infer;

typedef struct tlb_meter {
    struct gx_infer *ctx; /* every chase's mean is recorded (infer_data_append) when recording */
    gx_target *t;
    uint32_t sm;
    uint64_t granule; /* the target's allocation granule: the smallest stride used */
    double noise;     /* the timer stage's spread of one access (cycles); 0 unknown */
    double *buf;
    size_t cap;
    uint64_t chases; /* xchase calls made */
} tlb_meter;

enum { TLB_HIT = 0, TLB_MISS = 1, TLB_UNSURE = 2 };

void tlb_meter_init(tlb_meter *m, struct gx_infer *ctx, uint32_t sm, uint64_t granule);
void tlb_meter_free(tlb_meter *m);
/* The largest steps a chain of this stride may have (window and step limits). */
uint32_t tlb_max_steps(uint64_t stride);
/* Mean over the steps of each step's median over the timed rounds (a
 * miss repeats every round, an outlier does not), with at least
 * min_samples timed accesses (rounds chosen, odd, at least 3). */
int tlb_mean(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t min_samples, double *mean,
             gx_msg *msg);
/* The fraction of a chase's steps whose median over the rounds hits a
 * level of latency level_cycles (is under it + TLB_HIT_CYCLES): a count of
 * pages, not of cycles, so a miss's cost (a walk that costs more when more
 * pages are walked: page-walk caches) does not enter it. */
int tlb_hit_fraction(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t min_samples,
                     double level_cycles, double *frac, gx_msg *msg);
/* The steps of a chase of `rounds` timed rounds (odd, at most the
 * primitive's) whose median lies over `threshold`: the pages that miss a
 * level when the threshold lies between its latency and the next one's. */
int tlb_miss_count(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t rounds,
                   double threshold, uint32_t *miss, gx_msg *msg);
/* The same with a thrashing thread on thrash_sm. */
int tlb_mean_thrash(tlb_meter *m, uint64_t stride, uint32_t steps, uint32_t thrash_sm,
                    uint32_t thrash_steps, double *mean, gx_msg *msg);
/* Classify a chase against a level's latency: *verdict TLB_HIT / TLB_MISS,
 * retried with more samples while unsure; TLB_UNSURE at the end. */
int tlb_classify(tlb_meter *m, uint64_t stride, uint32_t steps, double level_cycles,
                 int *verdict, gx_msg *msg);

/* ---- one level's geometry (tlb_geometry.c) ---- */

/* Coalesced reach tried up to this: a page-walk cache's non-final entries
 * cover 512 MiB (Hopper's PD1) or 1 GiB (Vega's PDE1), so a plateau that
 * passes the reach test only there is a walk with cached upper levels, not
 * a TLB level. */
#define TLB_MAX_REACH (256ULL << 20)

typedef struct tlb_geom {
    double cycles;      /* the level's latency (a chase hitting it) */
    double next_cycles; /* the next plateau's latency (a chase missing it); 0 unknown */
    uint64_t bytes;     /* capacity knee in bytes at consecutive pages (approximate) */
    uint64_t knee_stride; /* the stride the knee was found at */
    uint64_t reach;     /* entry_bytes; 0 unknown */
    uint32_t sets, ways, entries; /* 0 unknown */
    int consistent;     /* sets x ways agrees with bytes / reach */
    int index;          /* GX_TLB_INDEX_MODULO / _XOR when established with sets > 1, else 0 */
    char why[160];      /* what stopped it, "" when complete */
} tlb_geom;

/* Geometry of the level whose chases take `cycles`, whose capacity at
 * `hint_stride` ends past hint_hit steps (the curve); next_cycles: the
 * next plateau's latency (0 none). xor_only: the xor path alone (a
 * plateau the curve did not show: tlb_stage.c). GX_OK with g->reach 0
 * when the plateau is not a TLB level (no reach passes the test); errors
 * are the target's. */
int tlb_geometry(tlb_meter *m, double cycles, double next_cycles, uint64_t hint_stride,
                 uint32_t hint_hit, int xor_only, tlb_geom *g, gx_msg *msg);
/* The latency of a chase that overflows a level at tlb_count_stride
 * (CLEAN_MISS x its entries: each page misses it and hits what lies past
 * it at that stride); NaN when the chase does not fit. */
int tlb_clean_miss(tlb_meter *m, const tlb_geom *g, double *cycles, gx_msg *msg);
/* The stride of the xor path's counts (tlb_geometry.c): the reach, or its
 * smallest power-of-two multiple past the neighbours of one page-table
 * fetch (16 granules), where a walk costs a walk. */
uint64_t tlb_count_stride(const tlb_meter *m, const tlb_geom *g);
/* The latency of a level found, from a chase that misses every level
 * before it and hits it (3/4 of its entries at a stride it spreads
 * evenly, past the neighbours of one page-table fetch): the curve's
 * plateau after an xor level mixes hits and misses (its odd stride fills
 * the hashed sets unevenly). NaN when the chase does not fit. */
int tlb_clean_cycles(tlb_meter *m, const tlb_geom *g, uint32_t samples, double *cycles,
                     gx_msg *msg);

/* ---- the translation page of allocated memory (tlb_page.c) ---- */

/* Report rows tlb.walk_bytes and tlb.translation_page from passes over the
 * arena with cold and warm translations; walk: the cycles a chase in the
 * window pays when every level misses (the walk plateau over the first
 * level's). Errors are the target's. */
int tlb_page(struct gx_infer *ctx, tlb_meter *m, double walk);

#endif
