/* walker.h - the page-table walker (tlb.walker): bounded walkers with a
 * queue, a page-walk cache (PWC) of non-final entries and a neighbour PWC
 * of the valid final entries a fetch returned.
 *
 * Notes:
 * - A walk goes from the root down. At each level the walker knows the
 *   entry's address (the parent's content) and probes the PWC (levels that
 *   can point to a table), then the neighbour PWC (levels that can hold a
 *   final entry); a hit costs that cache's hit latency. Otherwise it reads
 *   the aligned fetch_bytes block holding the entry, through `read` (the L2
 *   and DRAM of the memory system) or at tlb.walker.fixed_read_cycles.
 * - Insertion is deferred until the entry is read: a non-final entry goes
 *   into the PWC (never a final one); after a final entry's read, the other
 *   valid final entries of the same block go into the neighbour PWC and
 *   invalid ones are skipped and counted.
 * - An invalid entry ends the walk: a fault.
 * - Invalidation empties both PWCs. */
#ifndef GPUXRAY_WALKER_H
#define GPUXRAY_WALKER_H

#include <stdint.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/vmem.h"

#define GX_WALK_LAT_BUCKETS 24 /* bucket 0: [0, 1) cycles; bucket b: [2^(b-1), 2^b) */

typedef struct gx_walker gx_walker;

/* A page-table read of the block at pa for a walk on behalf of sm; returns
 * its latency in cycles. */
typedef double (*gx_walker_read_fn)(void *ctx, uint64_t pa, uint32_t sm);

typedef struct gx_walk {
    int fault;               /* the VA is unmapped */
    uint64_t page_base, page_bytes;
    double queue_cycles;     /* waiting for a walker (and for a queue slot) */
    double walk_cycles;      /* the walk itself: PWC hits and reads */
    int leaf_read;           /* the final entry came from a page-table read (a real walk) */
    int n_neighbours;        /* valid final entries of the leaf fetch, the requested one excluded */
    /* the neighbours, in address order: filled by the walk, or (nb_lazy) by
     * gx_walk_neighbours from a block of alike entries: entry j's VA
     * nb_first_va + (j << nb_shift), j < nb_count except nb_skip (the
     * requested page), each nb_bytes */
    uint64_t neighbour_va[GX_VMEM_MAX_FETCH];
    uint64_t neighbour_bytes[GX_VMEM_MAX_FETCH];
    int nb_lazy;
    uint32_t nb_count, nb_skip, nb_shift;
    uint64_t nb_first_va, nb_bytes;
} gx_walk;

/* Fill w's neighbour_va / neighbour_bytes when the walk left them to be
 * (nb_lazy); before they are read. */
void gx_walk_neighbours(gx_walk *w);

typedef struct gx_walker_stats {
    uint64_t walks, faults;
    uint64_t pwc_accesses, pwc_hits, pwc_misses, pwc_insertions, pwc_invalidations;
    uint64_t pwc2_accesses, pwc2_hits, pwc2_misses, pwc2_insertions, pwc2_invalidations;
    uint64_t pwc2_invalid_neighbours_skipped;
    uint64_t page_table_reads;
    uint64_t reads_by_level[GX_MAX_PT_LEVELS], pwc_hits_by_level[GX_MAX_PT_LEVELS];
    uint64_t queued_walks;   /* walks that waited for a walker */
    uint64_t queue_retries;  /* walks that found the queue full and retried */
    double queue_cycles, walk_cycles; /* totals */
    uint64_t lat_hist[GX_WALK_LAT_BUCKETS]; /* queue + walk cycles per walk */
} gx_walker_stats;

/* line_bytes: the L2 line (fetch_bytes may not exceed it). */
int gx_walker_new(const gx_tlb_cfg *t, gx_vmem *vm, uint32_t line_bytes, gx_walker_read_fn read,
                  void *ctx, uint64_t seed, gx_walker **out, gx_msg *msg);
void gx_walker_free(gx_walker *w);
/* Walk for va, requested at cycle t. */
void gx_walker_walk(gx_walker *w, uint64_t va, uint32_t sm, double t, gx_walk *out);
void gx_walker_invalidate(gx_walker *w);
void gx_walker_get_stats(const gx_walker *w, gx_walker_stats *s);

#endif
