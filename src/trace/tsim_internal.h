/* tsim_internal.h - private to src/trace: the trace simulator's state,
 * shared by tsim.c (the one-thread run and the reports), tsim_par.c (the
 * threaded / sharded run), tsim_shard.c (partial statistics) and
 * tsim_merge.c (merging partials).
 *
 * Notes:
 * - Total cycles are kept as an exact fixed-point sum (gpuxray/cycsum.h),
 *   so threads and shards of a run add their parts and print the very total
 *   one thread prints. */
#ifndef GX_TSIM_INTERNAL_H
#define GX_TSIM_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "gpuxray/cycsum.h"
#include "gpuxray/l2.h"
#include "gpuxray/memsys.h"
#include "gpuxray/smem.h"
#include "gpuxray/trace.h"


/* One latency into a histogram of GX_TSIM_LAT_BINS rounded-cycle bins. */
static inline void gx_tsim_hist_add(uint64_t *hist, double lat)
{
    int64_t b = (int64_t)(lat + 0.5); /* latencies are far below 2^63 */
    uint64_t bin = b > 0 ? (uint64_t)b : 0;
    hist[bin < GX_TSIM_LAT_BINS - 1 ? bin : GX_TSIM_LAT_BINS - 1]++;
}

typedef struct gx_tsim_par gx_tsim_par; /* tsim_par.c */

/* What a run holds that is not in its own memory system: the L2 statistics
 * gathered from a threaded run's workers or from merged partials, and (merged
 * partials only, ms NULL) the translation and shared-memory reports. */
typedef struct gx_tsim_ext {
    gx_l2_level_stats level[2];
    uint64_t dram_accesses;
    uint32_t slices;
    uint64_t *slice_accesses; /* owned */
    int smem_on;              /* the partials' shared-memory model ran */
    char *xlate_json, *xlate_text, *smem_json, *smem_text; /* owned; NULL: none */
    uint64_t pages, frames;     /* merged partials: the pages the trace touched, frames */
    int usage_here;             /* pages, frames: a threaded run's (its worker placed them) */
    /* a shard's accesses split with other shards: index among the trace's
     * global accesses, the largest latency of this shard's sectors */
    uint64_t *span_index;       /* owned */
    double *span_lat;           /* owned */
    size_t nspans, cap_spans;
    uint32_t shard, shards, threads;
    int oom; /* out of memory during the split run: its statistics are wrong */
} gx_tsim_ext;

struct gx_tsim {
    gx_memsys *ms; /* NULL for merged partials (ext holds what it would) */
    gx_tsim_cfg cfg;
    int prefetch;
    char name[128];
    gx_topology topo;
    uint32_t partitions, slices, sm_count, sector_bytes;
    uint64_t page_bytes;
    /* stats */
    uint64_t accesses, op_count[3], bytes, l2_accesses;
    uint64_t other_count[GX_TRACE_OPS - 3]; /* SR, SW, MAP, INV: counted */
    gx_smem *smem;        /* shared memory (SR / SW records); NULL: not modelled */
    char smem_note[256];  /* why not */
    gx_cyc_sum total;     /* total cycles, fixed point (above) */
    double min_cycles, max_cycles;
    uint64_t *hist;
    /* translation on: the warp instruction being gathered */
    int xlate;
    double window;
    gx_memsys_req grp[GX_MEMSYS_MAX_GROUP];
    gx_memsys_res grp_res[GX_MEMSYS_MAX_GROUP];
    uint32_t grp_n, grp_warp;
    uint64_t grp_cycle;
    /* translation off: single-sector accesses gathered for gx_memsys_run_off */
    uint64_t *col_va;
    uint32_t *col_sm;
    uint64_t *col_cycle; /* translation on: the issue cycles of gx_memsys_run_alone's */
    /* threaded / sharded run (tsim_par.c) and what it or a merge gathered */
    gx_tsim_par *par;
    gx_tsim_ext *ext;
};

/* tsim.c: a record the L2 path does not model (counted; shared records to
 * the bank model); one access's latency into the statistics. */
void gx_tsim_other(gx_tsim *s, const gx_trace_rec *r);
void gx_tsim_account(gx_tsim *s, double lat);
/* tsim_par.c */
void gx_tsim_par_run(gx_tsim *s, const gx_trace_rec *rec, uint64_t n);
/* 1 when the split run takes column batches (threads of one shard). */
int gx_tsim_par_takes_cols(const gx_tsim *s);
void gx_tsim_par_run_cols(gx_tsim *s, const gx_trace_cols *c);
void gx_tsim_par_free(gx_tsim_par *p);
void gx_tsim_ext_free(gx_tsim_ext *e);

#endif
