/* l2.h - the L2 model of a profile: slices and partitions chosen by the
 * profile's hashes, sectored set-associative storage per slice, the
 * uniform and near-far topologies, timing (level latency + per-(SM, slice)
 * skew + noise) and DRAM behind it.
 *
 * Notes: addresses here are PHYSICAL (placement.h maps virtual to physical).
 * See src/model/l2.c for the near-far fill/copy/victim rules. */
#ifndef GPUXRAY_L2_H
#define GPUXRAY_L2_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/cycsum.h"
#include "gpuxray/cache.h"
#include "gpuxray/dram.h"
#include "gpuxray/error.h"
#include "gpuxray/profile.h"

typedef struct gx_l2 gx_l2;

typedef enum gx_l2_level {
    GX_L2_NEAR = 0, /* the L2 (uniform) or the SM's own partition (near-far) */
    GX_L2_FAR = 1,  /* another partition (near-far only) */
    GX_L2_DRAM = 2
} gx_l2_level;

typedef enum gx_l2_op { GX_L2_READ = 0, GX_L2_WRITE = 1, GX_L2_ATOMIC = 2 } gx_l2_op;

typedef struct gx_l2_result {
    gx_l2_level level;          /* where the data came from */
    gx_cache_outcome outcome;   /* outcome in the first level looked up */
    uint32_t slice;             /* global slice id that served / was looked up first */
    double latency_cycles;      /* including skew and noise (when enabled) */
} gx_l2_result;

typedef struct gx_l2_opts {
    int noise;      /* apply the profile's sim.noise (jitter, outliers, background evictions) */
    int skew;       /* apply sim.sm_slice_skew_cycles */
    uint64_t seed;  /* noise and random-policy seed */
} gx_l2_opts;

typedef struct gx_l2_level_stats {
    uint64_t accesses, hits, sector_misses, line_misses;
} gx_l2_level_stats;

typedef struct gx_l2_stats {
    gx_l2_level_stats level[2]; /* [GX_L2_NEAR], [GX_L2_FAR] */
    uint64_t dram_accesses;
    uint32_t slices;
    const uint64_t *slice_accesses; /* slices entries; valid until the next access */
} gx_l2_stats;

/* The profile must validate and contain everything the model needs. */
int gx_l2_new(const gx_profile *p, const gx_l2_opts *opts, gx_l2 **out, gx_msg *msg);
void gx_l2_free(gx_l2 *l2);
void gx_l2_access(gx_l2 *l2, uint64_t pa, uint32_t sm, gx_l2_op op, gx_l2_result *r);
/* The same in two steps, so an address is hashed once when it is both
 * prefetched and accessed: gx_l2_access(pa) == gx_l2_locate(pa) then
 * gx_l2_access_loc(loc). */
typedef struct gx_l2_loc {
    uint64_t line_addr;
    uint32_t slice, set, sector; /* home slice, set within the slice, sector */
} gx_l2_loc;
void gx_l2_locate(const gx_l2 *l2, uint64_t pa, gx_l2_loc *loc);
void gx_l2_access_loc(gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm, gx_l2_op op,
                      gx_l2_result *r);
/* Hint that gx_l2_access_loc(l2, loc, sm, ...) comes soon (call it some 8
 * accesses ahead when the addresses are known, e.g. a trace or a chase):
 * no model state change, it only loads the sets into the host's caches
 * (gain measured in src/target/sim.c). */
void gx_l2_prefetch_loc(const gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm);
/* ---- batch run: a client's stream of single-sector accesses ----
 * The latency statistics of a run, accumulated in plain fields: total (the
 * latencies summed one after another, in access order), the smallest and
 * largest, and hist[min(round(latency), bins - 1)] (latencies rounded to
 * whole cycles, half up, negatives to 0). */
typedef struct gx_l2_tally {
    gx_cyc_sum total; /* exact, order-independent (cycsum.h) */
    double lo, hi;
    uint64_t *hist;
    uint32_t bins;   /* >= 1 */
    uint64_t sectors; /* L2 accesses made */
} gx_l2_tally;

/* One latency into t (the rule above; the batch run uses the same). */
static inline void gx_l2_tally_add(gx_l2_tally *t, double lat)
{
    gx_cyc_add(&t->total, lat);
    t->lo = lat < t->lo ? lat : t->lo;
    t->hi = lat > t->hi ? lat : t->hi;
    int64_t b = (int64_t)(lat + 0.5); /* latencies are far below 2^63 */
    uint64_t bin = b > 0 ? (uint64_t)b : 0;
    t->hist[bin < t->bins - 1 ? bin : t->bins - 1]++;
}

/* n entries in order, entry i: an access of the ONE sector holding pa[i]
 * from SM sm[i] (< sm_count), then rep[i] more of the same (rep NULL: none),
 * each a read for the model (stores and atomics allocate like loads):
 * exactly gx_l2_access of each, its latency into t.
 * The host-side speed-ups inside (sets located ahead and prefetched; an
 * access to the sector of the access just before it is a hit whose policy
 * update repeats the previous one's, accounted without a lookup where the
 * policy's hit update is idempotent) change no result. */
void gx_l2_run(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, const uint32_t *rep, size_t n,
               gx_l2_tally *t);
/* Location words, for a client that routes entries by home slice before
 * running them (a split run, tsim_par.c): w[i] for pa[i] from SM sm[i]
 * (< sm_count), its home slice
 * gx_l2_word_slice(w[i]) (the same as gx_l2_locate's) and, on the L2's
 * specialised path, the set it runs in, so gx_l2_run_located does not hash
 * again. */
void gx_l2_locate_words(const gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, uint64_t *w,
                        size_t n);
/* 1 when the words hold the sets too (the specialised path: routing by
 * them costs the worker no second hash). */
int gx_l2_words_hold_sets(const gx_l2 *l2);
static inline uint32_t gx_l2_word_slice(uint64_t w)
{
    return (uint32_t)(w >> 32) & 0x3ffu; /* slices <= 1024 (a profile rule) */
}
/* gx_l2_run of entries located by gx_l2_locate_words (lw[i] for pa[i], from
 * an L2 of the same profile): the same model, the same results. */
void gx_l2_run_located(gx_l2 *l2, const uint64_t *pa, const uint64_t *lw, const uint32_t *sm,
                       const uint32_t *rep, size_t n, gx_l2_tally *t);
/* gx_l2_run (no repeats) whose accesses each come after a translation of
 * extra cycles: every latency lat goes into t as extra + lat (the sum the
 * translated path forms, memsys.c); the L2's own model is gx_l2_run's. */
void gx_l2_run_plus(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, size_t n, double extra,
                    gx_l2_tally *t);

/* ---- VA -> PA on the way in: gx_l2_run_va ----
 * A client's direct-mapped memo of frames (memsys.c): slot VFN &
 * (GX_FRAME_MEMO - 1) holds the VFN (tag, va >> shift) and the frame's
 * distance from its page (delta, mod 2^64: PA = VA + delta); miss(m, va)
 * fills va's slot (the client's translation: asked in access order, for a
 * frame new to the memo only). */
#define GX_FRAME_MEMO 64 /* a power of two */
typedef struct gx_frame_memo gx_frame_memo;
struct gx_frame_memo {
    uint64_t tag[GX_FRAME_MEMO], delta[GX_FRAME_MEMO];
    uint32_t shift;
    void (*miss)(gx_frame_memo *m, uint64_t va);
    void *ctx; /* the client's, for miss */
};

/* The PA of va by the memo (miss asked for a frame new to it). */
static inline uint64_t gx_frame_pa(gx_frame_memo *m, uint64_t va)
{
    const uint64_t vfn = va >> m->shift;
    const uint32_t j = (uint32_t)vfn & (GX_FRAME_MEMO - 1);
    if (__builtin_expect(m->tag[j] != vfn, 0))
        m->miss(m, va);
    return va + m->delta[j];
}

/* gx_l2_run of pa[i] = gx_frame_pa(m, va[i]) (written to pa, n entries),
 * the translations made in access order: the same results as translating
 * every entry first, then gx_l2_run (the L2 never asks the memo). On the
 * specialised path the translation is part of the pass that locates the
 * sets (no pass of its own). */
void gx_l2_run_va(gx_l2 *l2, const uint64_t *va, uint64_t *pa, const uint32_t *sm,
                  const uint32_t *rep, size_t n, gx_frame_memo *m, gx_l2_tally *t);

/* gx_l2_locate_words of pa[i] = gx_frame_pa(m, va[i]) (written to pa, the
 * translations made in order), in one pass with the translation on the
 * specialised path (as gx_l2_run_va locates). */
void gx_l2_locate_words_va(const gx_l2 *l2, const uint64_t *va, uint64_t *pa, gx_frame_memo *m,
                           const uint32_t *sm, uint64_t *w, size_t n);

/* A split run's locating pass (gx_l2_words_hold_sets(l2) required): the
 * entries of gx_l2_locate_words_va (translated in order by m), each
 * written to output 1 when self[its home slice] is 1, else to output 0, in
 * order: an output's entry i is its PA at out[i] and its word at
 * out[d + i]. Returns the entries of output 1 (output 0 has the rest).
 * Each output takes writes at up to n places. */
size_t gx_l2_locate_split(const gx_l2 *l2, const uint64_t *va, gx_frame_memo *m,
                          const uint32_t *sm, const uint8_t *self, size_t n, uint64_t *out0,
                          uint64_t *out1, size_t d);
/* 1 when gx_l2_run_located into a tally of `bins` bins takes the
 * specialised run, which reads no SM column (the words hold the rows);
 * builds its latency table when needed (0: out of memory, or not that
 * path). */
int gx_l2_run_located_ready(gx_l2 *l2, uint64_t bins);
/* Slice `slice`'s state (its sets' ways, sector masks and policy state, its
 * replacement stream) copied from src into dst, two L2s of one profile on
 * the specialised path (gx_l2_words_hold_sets): a split run moves a slice
 * between the copies of the thread that owned it and the one that takes it
 * over. Statistics stay where they were counted. GX_EINVAL when the two
 * differ in layout. */
int gx_l2_copy_slice(gx_l2 *dst, const gx_l2 *src, uint32_t slice);

/* The DRAM behind this L2 (dram.h): its latency replaces the profile's
 * memory.dram_latency_cycles the L2 starts with (the same number today; the
 * memory system assembly, memsys.h, joins the two). */
void gx_l2_set_dram(gx_l2 *l2, const gx_dram *dram);
/* Empty every cache (no stats change). */
void gx_l2_flush(gx_l2 *l2);
void gx_l2_get_stats(const gx_l2 *l2, gx_l2_stats *s);
void gx_l2_reset_stats(gx_l2 *l2);
/* The partition an SM sits next to (near-far); 0 for uniform. */
uint32_t gx_l2_sm_partition(const gx_l2 *l2, uint32_t sm);
/* The slice an access of SM sm to pa goes to first: near-far with copies in
 * the near partition, the slice of the line's index within a partition in
 * sm's near partition; otherwise the line's home slice. No state change. */
uint32_t gx_l2_serving_slice(const gx_l2 *l2, uint64_t pa, uint32_t sm);

#endif
