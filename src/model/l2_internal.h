/* l2_internal.h - private to the L2 model (src/model/l2.c, l2_run.c): the
 * L2's state, the hash evaluation both files use, and the specialised batch
 * run of l2_run.c. */
#ifndef GX_MODEL_L2_INTERNAL_H
#define GX_MODEL_L2_INTERNAL_H

#include <stdint.h>

#include "gpuxray/hash.h"
#include "gpuxray/l2.h"
#include "noise.h"

/* Address bits per hash table (see build_fast_hash). */
#define GX_HCHUNK_BITS 8
#define RUN_AHEAD 8 /* accesses located (hashed, sets prefetched) ahead; a power of two */

struct gx_l2 {
    gx_topology topo;
    uint32_t slices, partitions, spp, sps, sm_count;
    uint64_t part_sets; /* sets of one partition: spp * sps */
    uint32_t line_shift, sector_shift, sector_mask;
    int copy_to_near, victims_to_far;
    gx_hash_fn slice_hash, set_hash; /* copies (tables owned) */
    /* Fast evaluation of both hashes (see build_fast_hash): the XOR of one
     * table entry per 8-bit chunk of the address from bit hbit0 gives slice
     * bits (low 32) and set bits (high 32); slice_lut / set_lut or fastmod
     * map those bits to the slice / set. */
    int n_hchunks;
    uint32_t hbit0;
    uint64_t (*htab)[1u << GX_HCHUNK_BITS]; /* slice bits | set bits << 32 */
    uint16_t *slice_lut; /* NULL: the bits are the slice (no table) */
    uint32_t *set_lut;   /* NULL: the set is the bits mod set_mod (fastmod) */
    uint32_t set_mod;
    uint64_t set_mod_m;  /* Lemire's fastmod constant for set_mod */
    gx_cache *cache;
    int cspec; /* the cache takes the specialised hot path (cache_internal.h) */
    int nf;    /* near-far with several partitions (else one lookup, uniform) */
    int hfast; /* <= 4 hash tables, no set table: locate_s(fast) */
    int fast;  /* hfast, !nf, cspec, no noise: access_fast */
    double hit_cycles, near_cycles, far_cycles, dram_cycles;
    double level_cycles[3]; /* by gx_l2_level: near, far, dram */
    double far_stream_extra; /* cycles a far hit adds after a far hit (0: off) */
    uint8_t *last_far;       /* per SM: its previous access was a far hit */
    float *skew; /* sm_count * slices, NULL when off */
    uint32_t *sm_part; /* near partition of each SM */
    uint16_t *s_home, *s_idx; /* per slice: partition, index within it (no division) */
    gx_noise noise;
    /* Statistics: slices and slice_accesses in st. Near-far: levels in
     * lcnt, DRAM in st.dram_accesses. Otherwise every cache access is an
     * L2 access, so the cache's own outcome counts are the level's (and its
     * misses the DRAM accesses): no second count in the hot path. */
    gx_l2_stats st;
    uint64_t lcnt[2][3]; /* [level][gx_cache_outcome] */
    uint64_t *slice_acc;
    /* gx_l2_run_fast's latencies by (SM, slice, outcome), built at its first
     * call (and again after gx_l2_set_dram); NULL until then */
    struct run_lat *rlat;
    uint64_t rlat_top; /* the bins it was built for: bins - 1 */
    int rlat_ok;
    int rlat_plus;     /* built for gx_l2_run_plus: every latency extra + the L2's */
    double rlat_extra;
    uint64_t *rcnt;    /* the counting mode's accesses per rlat entry (0 between runs) */
    uint32_t rdirect;  /* runs left in the direct mode before the next try at counting */
};

/* Both hashes at once: slice (*s) and set within the slice (*k).
 * fast: the caller has checked l2->fast (at most 4 hash tables, no set
 * table), a compile-time constant in the specialised path. */
/* Both hashes' bits of pa (see build_fast_hash): slice bits (low 32), set
 * bits (high 32). */
static inline __attribute__((always_inline)) uint64_t locate_bits(const gx_l2 *l2, uint64_t pa,
                                                                 int fast)
{
    /* the address bits any mask touches are hbit0 .. hbit0 + 8 n_hchunks - 1
     * (x >> 63 at most: n_hchunks <= 8 and hbit0 + 8 (n_hchunks - 1) < 64) */
    const uint64_t m = (1u << GX_HCHUNK_BITS) - 1;
    const uint64_t x = pa >> l2->hbit0;
    /* at least 4 tables (zero beyond n_hchunks): 4 lookups without a branch */
    const uint64_t(*t)[1u << GX_HCHUNK_BITS] = l2->htab;
    uint64_t b = t[0][x & m] ^ t[1][(x >> GX_HCHUNK_BITS) & m] ^
                 t[2][(x >> (2 * GX_HCHUNK_BITS)) & m] ^ t[3][(x >> (3 * GX_HCHUNK_BITS)) & m];
    if (!fast && __builtin_expect(l2->n_hchunks > 4, 0))
        for (int i = 4; i < l2->n_hchunks; i++)
            b ^= t[i][(x >> (GX_HCHUNK_BITS * (uint32_t)i)) & m];
    return b;
}

static inline __attribute__((always_inline)) void locate_s(const gx_l2 *l2, uint64_t pa,
                                                           uint32_t *s, uint32_t *k, int fast)
{
    const uint64_t b = locate_bits(l2, pa, fast);
    uint32_t sb = (uint32_t)b, kb = (uint32_t)(b >> 32);
    *s = l2->slice_lut ? l2->slice_lut[sb] : sb;
    /* kb mod set_mod without a division (Lemire's fastmod, exact for 32-bit
     * operands): the 16 KiB table it replaces on the seed profile (4096
     * entries) crowded the hash tables out of the host's L1 cache (callgrind
     * +9 instructions per access, yet 43 -> 46 M accesses/s) */
    *k = !fast && l2->set_lut
             ? l2->set_lut[kb]
             : (uint32_t)(((unsigned __int128)(l2->set_mod_m * kb) * l2->set_mod) >> 64);
}

/* 1 when gx_l2_run may take the specialised run (l2->fast, sets and the
 * latency table within their bounds, the table built for the tally's bins
 * top = bins - 1, and with plus for gx_l2_run_plus's extra); builds the
 * table when needed (0 when it cannot be allocated: the general path then). */
int gx_l2_run_fast_ready(gx_l2 *l2, uint64_t top, int plus, double extra);
/* gx_l2_run_va's entries for gx_l2_run_fast: pa[i] = gx_frame_pa(m, va[i])
 * written by its locate pass (pa the run's pa). */
typedef struct gx_l2_va {
    const uint64_t *va;
    uint64_t *pa;
    gx_frame_memo *m;
} gx_l2_va;
/* The specialised batch run (l2->fast and gx_l2_run_fast_ready): gx_l2_run's
 * contract; returns the L2 accesses made. lw: the entries located by the
 * caller (NULL: here); v: the entries' PAs translated here (NULL: pa given). */
uint64_t gx_l2_run_fast(gx_l2 *l2, const uint64_t *pa, const uint64_t *lw, const gx_l2_va *v,
                        const uint32_t *sm, const uint32_t *rep, size_t n, gx_l2_tally *t);

#endif
