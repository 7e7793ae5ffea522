/* memsys.h - the memory system of a profile as ONE assembly: the only
 * place the model's parts are joined (src/model/memsys.c).
 *
 *   access (SM, warp instruction, VA, size, op, cycle)
 *     -> coalescer -> TLB levels -> walker (PWC, neighbour PWC)   \  (a) translation
 *     -> vmem (page table: VA -> PA, page size; frame placement)  /
 *     -> L2 (gx_l2: slices, sets, topology, timing)               \  (b) physical
 *     -> DRAM (gx_dram)                                           /
 *
 * Built once from a validated profile. Clients (the sim target, the trace
 * simulator) use the assembly and never wire parts themselves.
 *
 * Independence of the parts (for a client that shards work):
 * - (a) translation depends only on the VA stream (and, when page-table
 *   reads go through the memory, on (b) for the walker's reads: with
 *   tlb.walker.fixed_read_cycles set, (a) touches nothing of (b)).
 * - (b) is the physical access of each sector. The L2's state of one slice
 *   is independent of every other slice's (uniform topology; near-far
 *   couples the slices of one index in every partition, which a line moves
 *   between), so (b) may be sharded by home slice (gx_l2_locate) when the
 *   per-access order within a slice is kept. A randomized replacement
 *   policy (plru-rand, random) draws from one random stream per slice
 *   (gx_cache_cfg.rng_groups), so it splits too. Except: noise (sim.noise)
 *   draws from ONE random stream for the whole L2, and
 *   l2.latency_cycles.far_stream_extra depends on the SM's previous access
 *   in any slice: sharding either changes the results (gpuxray/tsimpar.h
 *   refuses to).
 * - vmem's placement assigns frames in first-touch order: a sharded client
 *   translates in trace order (or pre-places) to keep the same frames. */
#ifndef GPUXRAY_MEMSYS_H
#define GPUXRAY_MEMSYS_H

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "gpuxray/coalescer.h"
#include "gpuxray/error.h"
#include "gpuxray/l2.h"
#include "gpuxray/profile.h"
#include "gpuxray/tlb.h"
#include "gpuxray/vmem.h"
#include "gpuxray/walker.h"

typedef struct gx_memsys gx_memsys;

typedef struct gx_memsys_cfg {
    int noise;            /* the profile's sim.noise in the L2 */
    int skew;             /* per-(SM, slice) skew in the L2 */
    uint64_t seed;        /* noise and randomized policies */
    uint64_t frames_seed; /* frame placement */
    uint64_t phys_bytes;  /* physical space of the frames */
} gx_memsys_cfg;

int gx_memsys_new(const gx_profile *p, const gx_memsys_cfg *cfg, gx_memsys **out, gx_msg *msg);
void gx_memsys_free(gx_memsys *ms);

/* The parts a client drives directly on its hot path: the L2 for (b), the
 * virtual memory for VA -> PA when translation is off. */
gx_l2 *gx_memsys_l2(gx_memsys *ms);
/* The per-SM shared memory (smem.h), owned by memsys; NULL when the
 * profile's smem section cannot run the bank model, with the reason in
 * gx_memsys_smem_note ("" otherwise). */
struct gx_smem *gx_memsys_smem(gx_memsys *ms);
const char *gx_memsys_smem_note(const gx_memsys *ms);
gx_vmem *gx_memsys_vmem(gx_memsys *ms);

/* Translation off (no tlb section), the hot path of a trace or a chase:
 * look ahead at an access to come: 1 and *loc (its first sector located,
 * its sets prefetched into the host's caches) when its frame is already
 * placed; 0 otherwise (nothing done: a look-ahead never places a frame, so
 * frames are placed in access order and results never change). */
int gx_memsys_locate_ahead(gx_memsys *ms, uint64_t va, uint32_t sm, gx_l2_loc *loc);
/* One access, translation off: every sector of [va, va + size) (size >= 1;
 * an access that wraps the address space stops at its end), each sector's
 * VA placed by vmem and looked up in the L2, all issued together. loc: the
 * first sector's location from gx_memsys_locate_ahead, or NULL. Returns the
 * largest latency; *sectors += the L2 accesses made. */
double gx_memsys_access_off(gx_memsys *ms, uint64_t va, uint32_t size, uint32_t sm,
                            gx_l2_op op, const gx_l2_loc *loc, uint64_t *sectors);

/* A batch of accesses, translation off, each within ONE sector ((va mod
 * sector) + size <= sector bytes; the caller sends the others through
 * gx_memsys_access_off) from SM sm[i] (< sm_count), entry i followed by
 * rep[i] more accesses of its sector (rep NULL: none): VA -> PA by vmem in
 * access order (frames placed as gx_memsys_access_off places them), then
 * the L2's batch run (gx_l2_run); every latency into t. The same results,
 * access for access, as gx_memsys_access_off on each. */
void gx_memsys_run_off(gx_memsys *ms, const uint64_t *va, const uint32_t *sm,
                       const uint32_t *rep, size_t n, gx_l2_tally *t);

/* ---- the whole path, translation on or off ----
 * Timing with translation: an access's latency = its translation cycles +
 * the largest latency of its sectors' L2 accesses. Translation cycles = the
 * hit latencies of the TLB levels looked up (a hit at level j costs levels
 * 0..j; a miss of every level costs them all), + waiting for a free
 * outstanding-miss slot of a level, + the walk (waiting for a walker, PWC
 * hits, page-table reads through the L2/DRAM or at fixed_read_cycles),
 * + for a request re-coalesced after a misprediction (or a widened group's
 * other page), its own translation started when the group's returned. An
 * unmapped access is a fault: counted, no L2 access, its latency the
 * translation cycles. */
typedef struct gx_memsys_req {
    uint64_t va;
    uint32_t sm;
    uint32_t size; /* bytes, >= 1 */
    uint8_t op;    /* gx_l2_op */
} gx_memsys_req;

typedef struct gx_memsys_res {
    double latency_cycles;     /* translation + physical */
    double translation_cycles;
    uint64_t sectors;          /* L2 accesses made */
    int fault;
} gx_memsys_res;

#define GX_MEMSYS_MAX_GROUP 256 /* requests of one warp instruction at most */

int gx_memsys_translating(const gx_memsys *ms);
/* The coalescer's issue window (cycles; 0 without translation). */
double gx_memsys_window(const gx_memsys *ms);
/* One warp instruction: n (1..GX_MEMSYS_MAX_GROUP) requests of ONE SM
 * issued together at cycle t. Without translation each request is
 * gx_memsys_access_off. res[i] receives request i's outcome. */
void gx_memsys_access_group(gx_memsys *ms, const gx_memsys_req *req, uint32_t n, double t,
                            gx_memsys_res *res);
/* Translation on (gx_memsys_translating): n instructions of ONE request
 * each, request i a read of va[i] within one L2 sector from SM sm[i]
 * (< sm_count), issued at cycle[i] (0: when the one before is done, the
 * total so far): exactly gx_memsys_access_group of each in order (op and
 * size do not change the model), each latency and its sectors into t
 * (faults: the translation cycles, no sector). */
void gx_memsys_run_alone(gx_memsys *ms, const uint64_t *va, const uint32_t *sm,
                         const uint64_t *cycle, size_t n, gx_l2_tally *t);
/* A trace's MAP record: [va, va + bytes) at page_bytes (see gx_vmem_map).
 * GX_EINVAL (counted as a rejected map) when it cannot be mapped. */
int gx_memsys_map(gx_memsys *ms, uint64_t va, uint64_t bytes, uint64_t page_bytes,
                  gx_msg *msg);
/* A trace's INVALIDATE record: every TLB level and both page-walk caches
 * are emptied (a shootdown; the range is not narrowed down). */
void gx_memsys_invalidate(gx_memsys *ms, uint64_t va, uint64_t bytes);

typedef struct gx_translation_stats {
    int n_levels;
    char level_name[GX_MAX_TLB_LEVELS][16];
    gx_tlb_stats level[GX_MAX_TLB_LEVELS];
    int n_sizes;
    uint64_t sizes[GX_MAX_PAGE_SIZES];
    gx_walker_stats walker;
    gx_coalescer_stats coalescer;
    uint64_t accesses, faults, maps, maps_rejected, invalidations;
    uint64_t miss_slot_stalls; /* lookups that waited for an outstanding-miss slot */
    double translation_cycles; /* total over accesses */
} gx_translation_stats;

/* 0 when translation is off (s zeroed). */
int gx_memsys_get_translation_stats(const gx_memsys *ms, gx_translation_stats *s);
/* The "translation" object (JSON, keys under gem5's names where gem5 has
 * one) / its text lines; nothing when translation is off. */
int gx_memsys_write_translation_json(const gx_memsys *ms, FILE *f);
int gx_memsys_write_translation_text(const gx_memsys *ms, FILE *f);

#endif
