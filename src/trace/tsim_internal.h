/* tsim_internal.h - private to src/trace: the trace simulator's state,
 * shared by tsim.c (the one-thread run and the reports), tsim_par.c (the
 * threaded / sharded run), tsim_shard.c (partial statistics) and
 * tsim_merge.c (merging partials).
 *
 * Notes:
 * - Total cycles are kept as an exact fixed-point sum (gx_cyc_sum): every
 *   latency is rounded once to a multiple of 2^-GX_CYC_FRAC_BITS cycles and
 *   the integers are added, so the total does not depend on the order of
 *   the additions. That is what lets threads and shards of a run add their
 *   parts and print the very total one thread prints (a sum of doubles
 *   rounds at every step, in an order a split run cannot keep). The error
 *   per access is below 2^-32 cycles; latencies of 2^31 cycles or more
 *   are counted in whole cycles. Its cost (callgrind, 1 M random 4-byte
 *   reads, seed card with plru, one thread, whole run): 591 -> 608 M
 *   instructions against a sum of doubles (12 of them in gx_cyc_add); a
 *   first version with two 64-bit halves and rounding to nearest cost 615 M. */
#ifndef GX_TSIM_INTERNAL_H
#define GX_TSIM_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "gpuxray/l2.h"
#include "gpuxray/memsys.h"
#include "gpuxray/smem.h"
#include "gpuxray/trace.h"

#define GX_CYC_FRAC_BITS 32             /* fraction bits of the fixed-point total */
#define GX_CYC_SCALE 4294967296.0       /* 2^GX_CYC_FRAC_BITS */
#define GX_CYC_FAST_LIMIT 2147483648.0  /* |latency| below 2^31: scaled, it fits an int64 */
#define GX_CYC_WHOLE_LIMIT 4.0e18       /* larger latencies are clamped here (int64 range) */

/* value = v / 2^GX_CYC_FRAC_BITS cycles; 128 bits (a GCC / Clang type): the
 * hot loops add with one add-with-carry. */
typedef struct gx_cyc_sum {
    __int128 v;
} gx_cyc_sum;

static inline void gx_cyc_add(gx_cyc_sum *a, double lat)
{
    /* truncated toward zero: any fixed rounding keeps the sum order-free */
    if (__builtin_expect(fabs(lat) < GX_CYC_FAST_LIMIT, 1)) {
        a->v += (int64_t)(lat * GX_CYC_SCALE);
        return;
    }
    if (lat != lat) /* NaN: not a latency */
        return;
    double w = lat > GX_CYC_WHOLE_LIMIT ? GX_CYC_WHOLE_LIMIT
                                        : lat < -GX_CYC_WHOLE_LIMIT ? -GX_CYC_WHOLE_LIMIT : lat;
    a->v += (__int128)(int64_t)w * ((__int128)1 << GX_CYC_FRAC_BITS); /* whole cycles */
}

static inline void gx_cyc_merge(gx_cyc_sum *a, const gx_cyc_sum *b)
{
    a->v += b->v;
}

static inline double gx_cyc_value(const gx_cyc_sum *a)
{
    return (double)a->v / GX_CYC_SCALE;
}

/* The two 64-bit halves (partial statistics), and back. */
static inline int64_t gx_cyc_hi(const gx_cyc_sum *a)
{
    return (int64_t)(a->v >> 64);
}

static inline uint64_t gx_cyc_lo(const gx_cyc_sum *a)
{
    return (uint64_t)a->v;
}

static inline gx_cyc_sum gx_cyc_from(int64_t hi, uint64_t lo)
{
    gx_cyc_sum a = {(__int128)((unsigned __int128)(uint64_t)hi << 64 | lo)};
    return a;
}

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
void gx_tsim_par_free(gx_tsim_par *p);
void gx_tsim_ext_free(gx_tsim_ext *e);

#endif
