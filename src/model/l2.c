/* l2.c - the L2 model of a profile (see l2.h): slices and sets chosen by the
 * profile's hashes, sectored set-associative storage, the uniform and
 * near-far topologies, timing and DRAM behind it.
 *
 * Models:
 * - Storage is ONE gx_cache of slices * sets_per_slice sets; the set of
 *   (global slice s, set k) is s * sets_per_slice + k. A slice's partition is
 *   s / (slices / partitions); its index within the partition s % spp.
 * - uniform: look up the line's slice; hit -> l2.hit_cycles; miss -> DRAM
 *   latency, the missed sector is filled.
 * - near-far: an SM's near partition is sm * partitions / sm_count. A line's
 *   home partition is its hash slice's partition. The far partition of a
 *   line seen from near partition n is its home when home != n, else
 *   (n + 1) % partitions (only matters for partitions > 2).
 *   * copy_to_near: every line an SM reads is filled into its near
 *     partition, at the same slice index within the partition, same set.
 *     A lookup goes near first (near_hit_cycles), then far (far_hit_cycles),
 *     then DRAM.
 *     - with victims_to_far (exclusive): a DRAM fill goes to near only; a
 *       line evicted from near is pushed into its far partition; a far hit
 *       moves the line (all its sectors) back to near.
 *     - without: a DRAM fill goes to the home partition AND near (a copy);
 *       the far lookup (home, or the next partition for a line homed near,
 *       which may hold a copy made by another SM) allocates nothing; a far
 *       hit copies the line's sectors into near.
 *   * no copy_to_near: a line lives in its home partition only; near or far
 *     latency depending on where home is (victims_to_far is ignored).
 * - Timing: latency = level latency + skew(sm, slice) + noise (+ the
 *   profile's far_stream_extra on a far hit that follows a far hit of the
 *   same SM: back-to-back line swaps, measured on an H200 whose chase over
 *   a footprint between the near and the combined capacity pays ~40 cycles
 *   per access more than an isolated far hit). The skew
 *   (on-chip distance) applies to every level, DRAM included, using the
 *   slice the request went to first (the near copy slice for copy_to_near,
 *   else the home slice). It is a fixed function of (sim.frames_seed, sm,
 *   slice), uniform in [0, sim.sm_slice_skew_cycles): a property of the
 *   (uniform cards with partitions: plus a partition-distance step of the
 *   full amplitude, see build_skew)
 *   chip, not of the run seed. Noise (opts.seed): gaussian jitter, outliers,
 *   background evictions of random lines (per l2 access, at the given rate).
 * - Stores and atomics allocate like loads (write-allocate, no write-back
 *   cost modelled).
 *
 * Notes:
 * - Performance: hashing by tables (build_fast_hash), no division in the hot
 *   path (per-slice home/index tables, fastmod for the set), gx_l2_locate +
 *   gx_l2_prefetch_loc so a caller that knows its next addresses hashes
 *   each once and hides the host's cache misses on the model's sets; the
 *   cache's hot path inlined (cache_internal.h) and specialised for the
 *   reference profiles' 16-way PLRU caches (access_fast,
 *   access_near_far_spec). Measured (callgrind, random 64 MiB trace, the
 *   whole trace-driven run with locate-ahead prefetching, instructions per
 *   access): seed-ampere-6mb 570 -> 282, hopper-like 818 -> 460; CPU time
 *   on one core of a loaded 2-core AMD EPYC VM: 27.8 -> 50.9 and 12 -> 15.5
 *   M accesses/s (bench/bench_hotpath.c). Every simulated outcome is
 *   unchanged (bench_hotpath --digest against the previous model).
 * - slice_accesses counts the HOME slice (the hash output) of every access:
 *   it is the hash's load on the slices.
 * - Hash outputs beyond slices / sets_per_slice are folded by modulo (a
 *   valid profile never produces them). */
#include "gpuxray/l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "gpuxray/dram.h"
#include "gpuxray/hash.h"
#include "noise.h"
#include "gpuxray/bits.h"

/* Address bits per hash table (see build_fast_hash). */
#define GX_HCHUNK_BITS 8

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
    /* run_fast's latencies by (SM, slice, outcome), built at its first
     * call (and again after gx_l2_set_dram); NULL until then */
    struct run_lat *rlat;
    uint64_t rlat_top; /* the bins it was built for: bins - 1 */
    int rlat_ok;
    uint64_t *rcnt;    /* the counting mode's accesses per rlat entry (0 between runs) */
    uint32_t rdirect;  /* runs left in the direct mode before the next try at counting */
};

/* The rules are the profile's (validate.c): the model trusts a profile that
 * passes them and re-checks nothing. */
static int check_profile(const gx_profile *p, gx_msg *msg)
{
    return gx_profile_check_model(p, msg);
}

/* Hash evaluation by tables (measured on the seed profile, sim target chase:
 * 15-18 -> 25 M accesses/s with the noise draw reduced to one rng call,
 * against per-mask parities without a popcnt instruction): the hashes are
 * linear over GF(2), so the bits of pa are the XOR of the bits of each of
 * its chunks; one table per 8-bit chunk of the address bits that some mask
 * touches, from the lowest such bit, and at least 4 of them (zeros beyond
 * the used bits) so that a locate is 4 lookups without a branch
 * (seed-ampere-6mb: bits 7..33, 4 tables of 2 KiB instead of 5 tables of
 * address bytes behind a switch on their count; 9-bit chunks, 3 tables of
 * 4 KiB and the 4th, ran no faster). Then the slice: the bits, or a table
 * (uint16) when the profile maps them; the set: the bits mod the modulo by
 * Lemire's fastmod (a table only for a range beyond sets_per_slice, which
 * check_profile rejects). Measured (callgrind, seed-ampere-6mb random
 * trace): gx_l2_locate 53 -> 44 instructions a call, with the loc stores.
 * Index functions of up to GX_HASH_MAX_MASKS (24) bits, and at most 1024
 * slices: the profile's rules (sets of 2^24 per slice are far beyond any
 * GPU). */
static int build_fast_hash(gx_l2 *l2)
{
    const gx_hash_fn *sh = &l2->slice_hash, *th = &l2->set_hash;
    uint64_t used = 0;
    for (int i = 0; i < sh->n_masks; i++)
        used |= sh->masks[i];
    for (int i = 0; i < th->n_masks; i++)
        used |= th->masks[i];
    l2->hbit0 = used ? (uint32_t)__builtin_ctzll(used) : 0;
    uint32_t span = used ? 64 - (uint32_t)__builtin_clzll(used) - l2->hbit0 : 0;
    l2->n_hchunks = (int)((span + GX_HCHUNK_BITS - 1) / GX_HCHUNK_BITS);
    /* 8-byte entries: packing both into 32 bits halves the tables but
     * costs a shift and mask per locate; measured slower (44.3 against
     * 46.5 M accesses/s, seed-ampere-6mb random trace) */
    l2->htab = calloc(l2->n_hchunks > 4 ? (size_t)l2->n_hchunks : 4, sizeof *l2->htab);
    if (!l2->htab)
        return GX_ENOMEM;
    for (int i = 0; i < l2->n_hchunks; i++)
        for (uint64_t v = 0; v < (1u << GX_HCHUNK_BITS); v++) {
            uint32_t sh_bits = l2->hbit0 + GX_HCHUNK_BITS * (uint32_t)i;
            uint64_t pa = sh_bits < 64 ? v << sh_bits : 0;
            l2->htab[i][v] = gx_hash_bits(sh, pa) | gx_hash_bits(th, pa) << 32;
        }
    size_t ns = (size_t)1 << sh->n_masks, nt = (size_t)1 << th->n_masks;
    /* slice: the bits themselves unless a table maps them (check_profile:
     * range <= slices, so the fold by slices is the identity then) */
    if (sh->table || ns > l2->slices) { /* uint16 entries: slices <= 1024 (profile rule) */
        l2->slice_lut = malloc(ns * sizeof *l2->slice_lut);
        if (!l2->slice_lut)
            return GX_ENOMEM;
        for (size_t v = 0; v < ns; v++) {
            uint64_t x = sh->table ? sh->table[v] : v;
            l2->slice_lut[v] = (uint16_t)(x % l2->slices);
        }
    }
    /* set: bits mod modulo (no table: validation forbids set tables), or
     * the bits; folded by sets_per_slice (the identity for a valid range) */
    uint64_t range = th->modulo ? th->modulo : nt;
    if (range <= l2->sps) {
        l2->set_mod = (uint32_t)range;
        l2->set_mod_m = UINT64_MAX / l2->set_mod + 1;
    } else {
        l2->set_lut = malloc(nt * sizeof *l2->set_lut);
        if (!l2->set_lut)
            return GX_ENOMEM;
        for (size_t v = 0; v < nt; v++) {
            uint64_t x = th->modulo ? v % th->modulo : v;
            l2->set_lut[v] = (uint32_t)(x % l2->sps);
        }
    }
    return GX_OK;
}

static int build_skew(gx_l2 *l2, const gx_profile *p)
{
    double amp = p->sim.present ? p->sim.sm_slice_skew_cycles : 0;
    if (!(amp > 0))
        return GX_OK;
    size_t n = (size_t)l2->sm_count * l2->slices;
    l2->skew = malloc(n * sizeof *l2->skew);
    if (!l2->skew)
        return GX_ENOMEM;
    /* Uniform L2 with several partitions: on-chip distance to the slice's
     * partition adds the full amplitude when the slice is in another
     * partition than the SM's (an SM sits next to partition
     * sm * partitions / sm_count; the others are a crossbar hop away) on top
     * of the per-(SM, slice) random part in [0, amplitude). This is what
     * makes partitions visible in timing on a uniform card, as on real
     * chips. Near-far cards already show partitions as levels (near_hit vs
     * far_hit). */
    int part_term = l2->topo != GX_TOPO_NEAR_FAR && l2->partitions > 1;
    for (uint32_t sm = 0; sm < l2->sm_count; sm++) {
        uint32_t side = (uint32_t)((uint64_t)sm * l2->partitions / l2->sm_count);
        for (uint32_t s = 0; s < l2->slices; s++) {
            double v;
            if (part_term)
                v = gx_skew_cycles(p->sim.frames_seed, sm, s, amp) +
                    (s / l2->spp != side ? amp : 0.0);
            else
                v = gx_skew_cycles(p->sim.frames_seed, sm, s, amp);
            l2->skew[(size_t)sm * l2->slices + s] = (float)v;
        }
    }
    return GX_OK;
}

int gx_l2_new(const gx_profile *p, const gx_l2_opts *opts, gx_l2 **out, gx_msg *msg)
{
    *out = NULL;
    int rc = check_profile(p, msg);
    if (rc != GX_OK)
        return rc;
    gx_l2 *l2 = calloc(1, sizeof *l2);
    if (!l2)
        return gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    gx_l2_opts o = opts ? *opts : (gx_l2_opts){0, 0, 0};
    l2->topo = p->l2.topology;
    l2->slices = p->l2.slices;
    l2->partitions = p->l2.partitions ? p->l2.partitions : 1;
    l2->spp = l2->slices / l2->partitions;
    l2->sps = p->l2.sets_per_slice;
    l2->part_sets = (uint64_t)l2->spp * l2->sps;
    l2->sm_count = p->device.sm_count;
    l2->line_shift = (uint32_t)gx_log2_u64(p->l2.line_bytes);
    l2->sector_shift = (uint32_t)gx_log2_u64(p->l2.sector_bytes);
    l2->sector_mask = p->l2.line_bytes / p->l2.sector_bytes - 1;
    l2->copy_to_near = p->l2.near_far.copy_to_near > 0;
    l2->victims_to_far = l2->copy_to_near && p->l2.near_far.victims_to_far > 0;
    l2->hit_cycles = p->l2.hit_cycles;
    l2->near_cycles = isfinite(p->l2.near_hit_cycles) ? p->l2.near_hit_cycles : p->l2.hit_cycles;
    l2->far_cycles = isfinite(p->l2.far_hit_cycles) ? p->l2.far_hit_cycles : p->l2.hit_cycles;
    if (l2->topo == GX_TOPO_UNIFORM)
        l2->near_cycles = l2->far_cycles = l2->hit_cycles;
    l2->dram_cycles = p->memory.dram_latency_cycles;
    l2->level_cycles[GX_L2_NEAR] = l2->near_cycles;
    l2->level_cycles[GX_L2_FAR] = l2->far_cycles;
    l2->level_cycles[GX_L2_DRAM] = l2->dram_cycles;
    l2->far_stream_extra = l2->topo == GX_TOPO_NEAR_FAR && p->l2.far_stream_extra_cycles > 0
                               ? p->l2.far_stream_extra_cycles
                               : 0;
    gx_cache_cfg cc = {p->l2.line_bytes, p->l2.sector_bytes, p->l2.ways,
                       (uint64_t)l2->slices * l2->sps, p->l2.policy[0] ? p->l2.policy : "lru",
                       gx_mix64(o.seed ^ 0x9011c7ULL), l2->slices};
    rc = gx_cache_new(&cc, &l2->cache, msg);
    if (rc == GX_OK && (gx_hash_copy(&l2->slice_hash, &p->l2.slice_hash) != GX_OK ||
                        gx_hash_copy(&l2->set_hash, &p->l2.set_hash) != GX_OK))
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    l2->slice_acc = calloc(l2->slices, sizeof *l2->slice_acc);
    l2->sm_part = calloc(l2->sm_count, sizeof *l2->sm_part);
    if (l2->far_stream_extra > 0 && !(l2->last_far = calloc(l2->sm_count, 1)))
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    if (l2->sm_part && l2->topo == GX_TOPO_NEAR_FAR)
        for (uint32_t sm = 0; sm < l2->sm_count; sm++)
            l2->sm_part[sm] = (uint32_t)((uint64_t)sm * l2->partitions / l2->sm_count);
    l2->s_home = malloc(l2->slices * sizeof *l2->s_home);
    l2->s_idx = malloc(l2->slices * sizeof *l2->s_idx);
    if (l2->s_home && l2->s_idx)
        for (uint32_t sl = 0; sl < l2->slices; sl++) {
            l2->s_home[sl] = (uint16_t)(sl / l2->spp);
            l2->s_idx[sl] = (uint16_t)(sl % l2->spp);
        }
    if (rc == GX_OK && (!l2->slice_acc || !l2->sm_part || !l2->s_home || !l2->s_idx))
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    if (rc == GX_OK && (rc = build_fast_hash(l2)) != GX_OK)
        rc = gx_fail(msg, rc, "l2: out of memory");
    if (rc == GX_OK && o.skew && build_skew(l2, p) != GX_OK)
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    if (rc != GX_OK) {
        gx_l2_free(l2);
        return rc;
    }
    l2->cspec = gx_cspec_plru16(l2->cache);
    l2->nf = l2->topo == GX_TOPO_NEAR_FAR && l2->partitions > 1;
    int noise_on = o.noise && p->sim.present;
    gx_noise_init(&l2->noise, noise_on, p->sim.jitter_cycles, p->sim.outlier_rate,
                  p->sim.outlier_cycles, p->sim.background_evictions_per_kaccess,
                  gx_mix64(o.seed ^ 0x7015e0ULL));
    l2->hfast = l2->n_hchunks <= 4 && !l2->set_lut;
    l2->fast = l2->hfast && !l2->nf && l2->cspec && !l2->noise.on;
    l2->st.slices = l2->slices;
    l2->st.slice_accesses = l2->slice_acc;
    *out = l2;
    return GX_OK;
}

void gx_l2_free(gx_l2 *l2)
{
    if (!l2)
        return;
    gx_cache_free(l2->cache);
    free(l2->slice_hash.table);
    free(l2->set_hash.table);
    free(l2->htab);
    free(l2->slice_lut);
    free(l2->set_lut);
    free(l2->skew);
    free(l2->slice_acc);
    free(l2->sm_part);
    free(l2->last_far);
    free(l2->s_home);
    free(l2->s_idx);
    free(l2->rlat);
    free(l2->rcnt);
    free(l2);
}

uint32_t gx_l2_sm_partition(const gx_l2 *l2, uint32_t sm)
{
    return l2->sm_part[sm % l2->sm_count];
}

/* Both hashes at once: slice (*s) and set within the slice (*k). */
/* fast: the caller has checked l2->fast (at most 4 hash tables, no set
 * table), a compile-time constant in the specialised path. */
static inline __attribute__((always_inline)) void locate_s(const gx_l2 *l2, uint64_t pa,
                                                           uint32_t *s, uint32_t *k, int fast)
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

/* Both hashes at once: slice (*s) and set within the slice (*k). */
static inline void locate(const gx_l2 *l2, uint64_t pa, uint32_t *s, uint32_t *k)
{
    locate_s(l2, pa, s, k, 0);
}

static inline uint64_t set_id(const gx_l2 *l2, uint32_t part, uint32_t idx, uint32_t set)
{
    return (uint64_t)part * l2->part_sets + (uint64_t)idx * l2->sps + set;
}

static inline void count(gx_l2 *l2, gx_l2_level level, gx_cache_outcome o)
{
    l2->lcnt[level][o]++;
}

/* The partition that plays "far" for a line of home partition `home` seen
 * from partition `near`. */
static inline uint32_t far_part(const gx_l2 *l2, uint32_t home, uint32_t near)
{
    return home != near ? home : (near + 1 < l2->partitions ? near + 1 : 0);
}

/* Push a line evicted from partition `from` into the partition that holds
 * its victims (exclusive victim movement); whatever it evicts there leaves
 * the L2. spec: the cache's specialised path (l2->cspec), as a constant. */
static inline __attribute__((always_inline)) void
push_victim(gx_l2 *l2, const gx_cache_victim *v, uint32_t from, uint32_t idx, uint32_t k,
            int spec)
{
    if (!v->valid || l2->partitions < 2)
        return;
    /* the victim left the near set (from, idx, k): same idx and set, so
     * only its home is needed, and only with more than 2 partitions */
    uint32_t to = 1 - from;
    if (l2->partitions > 2) {
        uint32_t s, kk;
        locate(l2, v->line_addr << l2->line_shift, &s, &kk);
        to = far_part(l2, l2->s_home[s], from);
    }
    gx_cinsert_s(l2->cache, set_id(l2, to, idx, k), v->line_addr, v->sector_mask, NULL, spec);
}

/* Look in partition `part` for the line; on a hit (sector present) with
 * `move`, take the whole line out. Returns the outcome; *mask gets the
 * line's sectors when moved. */
static inline __attribute__((always_inline)) gx_cache_outcome
far_lookup(gx_l2 *l2, uint64_t fset, uint64_t line, uint32_t sector, int move, uint32_t *mask,
           int spec)
{
    gx_cache_outcome o;
    *mask = 0;
    if (move) {
        /* exclusive: the line leaves far whatever its sectors */
        uint32_t m = gx_cinvalidate_s(l2->cache, fset, line, spec);
        o = !m ? GX_CACHE_LINE_MISS : (m >> sector & 1u) ? GX_CACHE_HIT : GX_CACHE_SECTOR_MISS;
        *mask = m;
    } else {
        o = gx_caccess_s(l2->cache, fset, line, sector, 0, NULL, spec);
    }
    count(l2, GX_L2_FAR, o);
    return o;
}

static inline __attribute__((always_inline)) void
access_near_far_s(gx_l2 *l2, uint32_t s, uint32_t k, uint64_t line, uint32_t sector, uint32_t sm,
                  gx_l2_result *r, int spec)
{
    uint32_t home = l2->s_home[s], idx = l2->s_idx[s];
    uint32_t near = l2->sm_part[sm];
    uint32_t bit = 1u << sector;
    gx_cache_victim v = {0, 0, 0};
    if (!l2->copy_to_near && home != near) {
        /* the line lives at home, which is far from this SM */
        uint64_t hset = set_id(l2, home, idx, k);
        r->slice = s;
        r->outcome = gx_caccess_s(l2->cache, hset, line, sector, 0, NULL, spec);
        count(l2, GX_L2_FAR, r->outcome);
        if (r->outcome == GX_CACHE_HIT) {
            r->level = GX_L2_FAR;
            return;
        }
        r->level = GX_L2_DRAM;
        l2->st.dram_accesses++;
        gx_cinsert_s(l2->cache, hset, line, bit, NULL, spec);
        return;
    }
    uint64_t nset = set_id(l2, near, idx, k);
    r->slice = near * l2->spp + idx;
    r->outcome = gx_caccess_s(l2->cache, nset, line, sector, 0, NULL, spec);
    count(l2, GX_L2_NEAR, r->outcome);
    if (r->outcome == GX_CACHE_HIT) {
        r->level = GX_L2_NEAR;
        return;
    }
    uint32_t fill = bit;
    r->level = GX_L2_DRAM;
    if (l2->copy_to_near) {
        uint64_t fset = set_id(l2, far_part(l2, home, near), idx, k);
        uint32_t m = 0;
        if (far_lookup(l2, fset, line, sector, l2->victims_to_far, &m, spec) == GX_CACHE_HIT)
            r->level = GX_L2_FAR;
        fill |= m;
    }
    if (r->level == GX_L2_DRAM) {
        l2->st.dram_accesses++;
        if (l2->copy_to_near && !l2->victims_to_far && home != near) {
            /* point of coherence: the home partition gets the line too */
            gx_cinsert_s(l2->cache, set_id(l2, home, idx, k), line, bit, NULL, spec);
        }
    }
    gx_cinsert_s(l2->cache, nset, line, fill, &v, spec);
    if (l2->victims_to_far)
        push_victim(l2, &v, near, idx, k, spec);
}

/* The two instances: the cache's specialised path and the general one.
 * Measured (hopper-like, random 64 MiB trace, callgrind; with the inline
 * insert / invalidate / prefetch of cache_internal.h): 642 -> 458
 * instructions per access of the whole run, 12 -> 15.5 M accesses/s (CPU
 * time, one core of a loaded 2-core VM). */
static __attribute__((noinline)) void access_near_far_spec(gx_l2 *l2, uint32_t s, uint32_t k,
                                                           uint64_t line, uint32_t sector,
                                                           uint32_t sm, gx_l2_result *r)
{
    access_near_far_s(l2, s, k, line, sector, sm, r, GX_CSPEC_PLRU16);
}

static __attribute__((noinline)) void access_near_far(gx_l2 *l2, uint32_t s, uint32_t k,
                                                      uint64_t line, uint32_t sector,
                                                      uint32_t sm, gx_l2_result *r)
{
    access_near_far_s(l2, s, k, line, sector, sm, r, 0);
}

void gx_l2_locate(const gx_l2 *l2, uint64_t pa, gx_l2_loc *loc)
{
    uint32_t s, k;
    if (l2->hfast)
        locate_s(l2, pa, &s, &k, 1);
    else
        locate(l2, pa, &s, &k);
    loc->line_addr = pa >> l2->line_shift;
    loc->slice = s;
    loc->set = k;
    loc->sector = (uint32_t)(pa >> l2->sector_shift) & l2->sector_mask;
}

/* The latency of an access served by `level` from slice r->slice (skew and
 * noise included). */
static inline __attribute__((always_inline)) void finish(gx_l2 *l2, uint32_t sm,
                                                         gx_l2_result *r, int noise)
{
    double lat = l2->level_cycles[r->level];
    if (l2->last_far) { /* back-to-back far hits of one SM (near-far swaps) */
        uint8_t far = r->level == GX_L2_FAR;
        if (far && l2->last_far[sm])
            lat += l2->far_stream_extra;
        l2->last_far[sm] = far;
    }
    if (l2->skew)
        lat += (double)l2->skew[(size_t)sm * l2->slices + r->slice];
    if (noise && l2->noise.on) {
        uint32_t evictions = 0;
        lat += gx_noise_access(&l2->noise, &evictions);
        for (; evictions; evictions--)
            gx_cache_evict_random(l2->cache, &l2->noise.rng);
    }
    r->latency_cycles = lat;
}

/* One access of (line, sector) in home slice s, set k: the body of
 * gx_l2_access and gx_l2_access_loc, inlined into both. */
static inline __attribute__((always_inline)) void
access_at(gx_l2 *l2, uint64_t line, uint32_t s, uint32_t k, uint32_t sector, uint32_t sm,
          gx_l2_result *r)
{
    if (__builtin_expect(sm >= l2->sm_count, 0))
        sm %= l2->sm_count; /* rare: callers pass valid SMs */
    l2->slice_acc[s]++;
    if (l2->nf) {
        if (l2->cspec)
            access_near_far_spec(l2, s, k, line, sector, sm, r);
        else
            access_near_far(l2, s, k, line, sector, sm, r);
    } else {
        uint64_t set = (uint64_t)s * l2->sps + k;
        gx_cache_outcome o = l2->cspec
                                 ? gx_caccess_s(l2->cache, set, line, sector, 1, NULL,
                                                GX_CSPEC_PLRU16)
                                 : gx_caccess(l2->cache, set, line, sector, 1, NULL);
        r->slice = s;
        r->outcome = o;
        r->level = o == GX_CACHE_HIT ? GX_L2_NEAR : GX_L2_DRAM;
    }
    finish(l2, sm, r, 1);
}

/* access_at for l2->fast (uniform, the specialised cache path, no noise):
 * the hot path of `gpuxray sim` on the reference profiles, with no test of
 * topology, cache kind or noise per access, and no level counts besides the
 * cache's own (see the struct). Measured (callgrind, seed-ampere-6mb random
 * trace): 233 -> 221 instructions per access of the whole run. */
static inline __attribute__((always_inline)) void
access_fast(gx_l2 *l2, uint64_t line, uint32_t s, uint32_t k, uint32_t sector, uint32_t sm,
            gx_l2_result *r)
{
    if (__builtin_expect(sm >= l2->sm_count, 0))
        sm %= l2->sm_count;
    l2->slice_acc[s]++;
    gx_cache_outcome o = gx_caccess_s(l2->cache, (uint64_t)s * l2->sps + k, line, sector, 1,
                                      NULL, GX_CSPEC_PLRU16);
    r->slice = s;
    r->outcome = o;
    r->level = o == GX_CACHE_HIT ? GX_L2_NEAR : GX_L2_DRAM;
    finish(l2, sm, r, 0);
}

void gx_l2_access_loc(gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm, gx_l2_op op,
                      gx_l2_result *r)
{
    (void)op; /* write-allocate: stores and atomics behave like loads */
    if (l2->fast)
        access_fast(l2, loc->line_addr, loc->slice, loc->set, loc->sector, sm, r);
    else
        access_at(l2, loc->line_addr, loc->slice, loc->set, loc->sector, sm, r);
}

void gx_l2_access(gx_l2 *l2, uint64_t pa, uint32_t sm, gx_l2_op op, gx_l2_result *r)
{
    (void)op;
    uint32_t s, k;
    uint64_t line = pa >> l2->line_shift;
    uint32_t sector = (uint32_t)(pa >> l2->sector_shift) & l2->sector_mask;
    if (l2->fast) {
        locate_s(l2, pa, &s, &k, 1);
        access_fast(l2, line, s, k, sector, sm, r);
    } else {
        if (l2->hfast)
            locate_s(l2, pa, &s, &k, 1);
        else
            locate(l2, pa, &s, &k);
        access_at(l2, line, s, k, sector, sm, r);
    }
}

void gx_l2_prefetch_loc(const gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm)
{
    uint32_t s = loc->slice, k = loc->set;
    if (l2->nf && l2->copy_to_near) {
        uint32_t home = l2->s_home[s], idx = l2->s_idx[s];
        uint32_t near = l2->sm_part[sm < l2->sm_count ? sm : sm % l2->sm_count];
        uint64_t nset = set_id(l2, near, idx, k);
        uint64_t fset = set_id(l2, far_part(l2, home, near), idx, k);
        if (l2->cspec) {
            gx_cprefetch_s(l2->cache, nset, GX_CSPEC_PLRU16);
            gx_cprefetch_s(l2->cache, fset, GX_CSPEC_PLRU16);
        } else {
            gx_cprefetch_s(l2->cache, nset, 0);
            gx_cprefetch_s(l2->cache, fset, 0);
        }
        return;
    }
    if (l2->cspec)
        gx_cprefetch_s(l2->cache, (uint64_t)s * l2->sps + k, GX_CSPEC_PLRU16);
    else
        gx_cprefetch_s(l2->cache, (uint64_t)s * l2->sps + k, 0);
}

void gx_l2_set_dram(gx_l2 *l2, const gx_dram *dram)
{
    l2->dram_cycles = gx_dram_latency_cycles(dram);
    l2->level_cycles[GX_L2_DRAM] = l2->dram_cycles;
    l2->rlat_ok = 0; /* run_fast's table holds the DRAM latency */
}

void gx_l2_flush(gx_l2 *l2)
{
    gx_cache_flush(l2->cache);
}

void gx_l2_get_stats(const gx_l2 *l2, gx_l2_stats *s)
{
    *s = l2->st;
    for (int l = 0; l < 2; l++) {
        s->level[l].hits = l2->lcnt[l][GX_CACHE_HIT];
        s->level[l].sector_misses = l2->lcnt[l][GX_CACHE_SECTOR_MISS];
        s->level[l].line_misses = l2->lcnt[l][GX_CACHE_LINE_MISS];
    }
    if (!l2->nf) { /* one cache access per L2 access (see the struct) */
        gx_cache_stats cs;
        gx_cache_get_stats(l2->cache, &cs);
        s->level[GX_L2_NEAR].hits = cs.hits;
        s->level[GX_L2_NEAR].sector_misses = cs.sector_misses;
        s->level[GX_L2_NEAR].line_misses = cs.line_misses;
        s->dram_accesses = cs.sector_misses + cs.line_misses;
    }
    for (int l = 0; l < 2; l++)
        s->level[l].accesses =
            s->level[l].hits + s->level[l].sector_misses + s->level[l].line_misses;
}

void gx_l2_reset_stats(gx_l2 *l2)
{
    memset(l2->lcnt, 0, sizeof l2->lcnt);
    gx_cache_reset_stats(l2->cache);
    l2->st.dram_accesses = 0;
    memset(l2->slice_acc, 0, l2->slices * sizeof *l2->slice_acc);
}

/* ------------------------------------------------------------------ */
/* batch run (gx_l2_run) */

#define RUN_AHEAD 8 /* accesses located (hashed, sets prefetched) ahead; a power of two */

/* Any L2: each access located RUN_AHEAD ahead, its set prefetched, then
 * gx_l2_access_loc (== gx_l2_access: locating is pure). */
static uint64_t run_generic(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm,
                            const uint32_t *rep, size_t n, gx_l2_tally *t)
{
    gx_l2_loc ring[RUN_AHEAD];
    uint64_t made = 0;
    for (size_t i = 0; i < n && i < RUN_AHEAD; i++) {
        gx_l2_locate(l2, pa[i], &ring[i]);
        gx_l2_prefetch_loc(l2, &ring[i], sm[i]);
    }
    for (size_t i = 0; i < n; i++) {
        const size_t slot = i & (RUN_AHEAD - 1);
        gx_l2_loc loc = ring[slot];
        if (i + RUN_AHEAD < n) {
            gx_l2_locate(l2, pa[i + RUN_AHEAD], &ring[slot]);
            gx_l2_prefetch_loc(l2, &ring[slot], sm[i + RUN_AHEAD]);
        }
        gx_l2_result r;
        const uint64_t nr = 1 + (uint64_t)(rep ? rep[i] : 0);
        for (uint64_t j = 0; j < nr; j++) {
            gx_l2_access_loc(l2, &loc, sm[i], GX_L2_READ, &r);
            gx_l2_tally_add(t, r.latency_cycles);
        }
        made += nr;
    }
    return made;
}

/* What run_fast adds to the tally for one access of a given (SM, home
 * slice, outcome): the latency (level + skew, as finish() computes it), the
 * fixed-point amount gx_cyc_add adds for it, and its histogram bin
 * (gx_l2_tally_add's rule for bins - 1 = l2->rlat_top). The latency of an
 * access on the fast path depends on nothing else, so the per-access
 * arithmetic of gx_l2_tally_add becomes a table read. */
#define RUN_REPEAT 3 /* run_fast's outcome of a repeat of the sector before (a hit, no lookup) */

typedef struct run_lat {
    gx_cyc_sum inc; /* gx_cyc_add(&0, lat) (0 for NaN, whole cycles beyond 2^31) */
    double lat;
    uint32_t bin;   /* min(round(lat) half up, negatives 0; rlat_top) (bins are uint32) */
    uint32_t slice; /* the entry's home slice (the counting mode's slice count) */
} run_lat;

static uint64_t tally_bin(double lat, uint64_t top)
{
    int64_t b = (int64_t)(lat + 0.5); /* as gx_l2_tally_add */
    uint64_t bin = b > 0 ? (uint64_t)b : 0;
    return bin < top ? bin : top;
}

/* One entry of l2->rlat for latency lat. */
static run_lat run_lat_of(double lat, uint64_t top, uint32_t slice)
{
    run_lat e = {{0}, lat, (uint32_t)tally_bin(lat, top), slice};
    gx_cyc_add(&e.inc, lat);
    return e;
}

/* l2->rlat: entry (sm * slices + slice) * 4 + o for every SM and slice, o
 * the outcome or RUN_REPEAT (a hit); bins clamped to top. */
static int build_run_lat(gx_l2 *l2, uint64_t top)
{
    const size_t rows = (size_t)l2->sm_count * l2->slices;
    if (!l2->rlat && !(l2->rlat = malloc(rows * 4 * sizeof *l2->rlat)))
        return GX_ENOMEM;
    if (!l2->rcnt && !(l2->rcnt = calloc(rows * 4, sizeof *l2->rcnt)))
        return GX_ENOMEM;
    const double hitc = l2->level_cycles[GX_L2_NEAR], dramc = l2->level_cycles[GX_L2_DRAM];
    for (size_t r = 0; r < rows; r++) {
        const double skew = l2->skew ? (double)l2->skew[r] : 0.0;
        /* as finish(): the skew added only when there is one */
        const uint32_t sl = (uint32_t)(r % l2->slices);
        const run_lat hit = run_lat_of(l2->skew ? hitc + skew : hitc, top, sl);
        const run_lat miss = run_lat_of(l2->skew ? dramc + skew : dramc, top, sl);
        run_lat *e = &l2->rlat[4 * r];
        e[GX_CACHE_HIT] = hit;
        e[GX_CACHE_SECTOR_MISS] = miss;
        e[GX_CACHE_LINE_MISS] = miss;
        e[RUN_REPEAT] = hit;
    }
    l2->rlat_top = top;
    l2->rlat_ok = 1;
    return GX_OK;
}

#define RUN_BLOCK 512 /* entries per block (4 KiB of locations on the stack) */
#define RUN_DIRTY 4096 /* the counting mode's entries between folds (16 KiB) */
#define RUN_DIRECT_RUNS 16 /* runs in the direct mode after a run of ~1 access an entry */
/* (SM, slice) rows of l2->rlat at most (40 MiB with the counts; the largest
 * card of the generator, 132 SMs x 1024 slices, takes 21 MiB); beyond,
 * the general path */
#define RUN_LAT_MAX_ROWS (1u << 18)

/* A block's location word per entry: set (s * sps + k) in bits 0-31, home
 * slice in bits 32-61, and once looked up the outcome (or RUN_REPEAT) in
 * bits 62-63 (run_fast checks that sets fit 32 bits; slices are <= 1024). */
#define RUN_LOC_SET(x) ((uint32_t)(x))
#define RUN_LOC_SLICE(x) ((uint32_t)((x) >> 32) & 0x3fffffffu)
#define RUN_LOC_OUT_SHIFT 62

/* The policy's constants for run_lookup16, in the caller's locals: keep /
 * setm the touch masks (bits & keep | setm), the victim's rng the slice's
 * stream (rngs[s & rmask]: rmask 0 when the cache has one stream). */
typedef struct run_pol {
    uint64_t keep[16], setm[16]; /* ~clear[w], set[w] of gx_policy_fast */
    uint16_t lm_top[128], lm_low[256]; /* gx_policy_fast's leaf masks (16 ways) */
    gx_rng *rngs;
    uint32_t rmask;
    uint64_t thr;
    int rand_on, rand_always;
} run_pol;

/* plru-rand's random victim (gx_pf_rng_below16), out of line: inlined, the
 * compiler kept the state of the draw before it in registers for it, which
 * spilled the common path's values. */
static __attribute__((noinline)) uint32_t run_random_way(gx_rng *r)
{
    return gx_pf_rng_below16(r);
}

/* One lookup (and fill on a miss) of line in the 16-way PLRU set at blk, the
 * work of gx_caccess_nc_s for GX_CSPEC_PLRU16: the same ways, masks and
 * policy state, the same draws. Returns the outcome; *evicted counts a
 * victim. */
static inline __attribute__((always_inline)) gx_cache_outcome
run_lookup16(uint8_t *blk, uint64_t line, uint32_t bit, uint32_t s, const run_pol *pol,
             uint64_t *evicted)
{
    const gx_cview v = {blk, blk + GX_CSPEC_OFF_MASKS, blk + GX_CSPEC_OFF_STATE,
                        blk + GX_CSPEC_OFF_USED, (uint64_t *)(void *)(blk + GX_CSPEC_OFF_TAGS),
                        0};
    uint64_t *const st = (uint64_t *)v.st;
    const uint8_t fp = gx_cfingerprint(line);
    int w = gx_cv_find(&v, 16, 0xffff, line, fp, GX_CSPEC_PLRU16);
    if (w >= 0) {
        const uint32_t m = v.masks[w];
        *st = (*st & pol->keep[w]) | pol->setm[w];
        if (m & bit)
            return GX_CACHE_HIT;
        v.masks[w] = (uint8_t)(m | bit);
        return GX_CACHE_SECTOR_MISS;
    }
    uint32_t u;
    if (__builtin_expect(*v.used < 16, 0)) { /* as gx_cv_fill: the first invalid way */
        for (u = 0; u < 16 && v.tags[u] != GX_TAG_INVALID; u++)
            ;
        (*v.used)++;
    } else { /* gx_pf_plru_victim_s, ways16 */
        const uint64_t bits = *st;
        gx_rng *r = pol->rngs + (s & pol->rmask);
        if (pol->rand_on && (pol->rand_always || gx_pf_rng_next(r) < pol->thr))
            u = run_random_way(r);
        else
            u = (uint32_t)__builtin_ctz((uint32_t)pol->lm_top[(bits >> 1) & 0x7f] &
                                        pol->lm_low[(bits >> 8) & 0xff]);
        (*evicted)++;
    }
    *st = (*st & pol->keep[u]) | pol->setm[u];
    v.tags[u] = line;
    v.fps[u] = fp;
    v.masks[u] = (uint8_t)bit;
    return GX_CACHE_LINE_MISS;
}

/* A set's block into the host's caches (gx_cprefetch_s, GX_CSPEC_PLRU16). */
static inline void run_prefetch(const uint8_t *blk)
{
    for (size_t o = 0; o < GX_CSPEC_BLOCK; o += 64)
        __builtin_prefetch(blk + o, 1, 3);
}

/* The lookups of one block in order (run_fast's second pass), the set of
 * the entry RUN_AHEAD ahead prefetched, each entry's outcome put into its
 * location word. Returns the sector number of the block's last access
 * (the next block's "access before"). lsh, ssh, smk: constants in the
 * reference cards' instance. */
static inline __attribute__((always_inline)) uint64_t
run_lookups_s(uint8_t *mem, const uint64_t *bp, uint64_t *loc, size_t bn, uint64_t rsec,
              uint32_t ssh, uint32_t lsh, uint32_t smk, const run_pol *pol, uint64_t *evicted)
{
    uint64_t ev = 0;
    for (size_t q = 0; q < bn && q < RUN_AHEAD; q++)
        run_prefetch(mem + (uint64_t)RUN_LOC_SET(loc[q]) * GX_CSPEC_BLOCK);
    size_t j;
/* Entry j's lookup (or repeat), its outcome into loc[j]. */
#define RUN_ENTRY()                                                                        \
    do {                                                                                   \
        const uint64_t p = bp[j], x = loc[j];                                              \
        if ((p >> ssh) == rsec) {                                                          \
            loc[j] = x | (uint64_t)RUN_REPEAT << RUN_LOC_OUT_SHIFT;                        \
            break;                                                                         \
        }                                                                                  \
        rsec = p >> ssh;                                                                   \
        const gx_cache_outcome o =                                                         \
            run_lookup16(mem + (uint64_t)RUN_LOC_SET(x) * GX_CSPEC_BLOCK, p >> lsh,        \
                         1u << ((uint32_t)rsec & smk), RUN_LOC_SLICE(x), pol, &ev);        \
        loc[j] = x | (uint64_t)o << RUN_LOC_OUT_SHIFT;                                     \
    } while (0)
    /* the prefetch RUN_AHEAD ahead without a test, then the block's tail */
    for (j = 0; j + RUN_AHEAD < bn; j++) {
        run_prefetch(mem + (uint64_t)RUN_LOC_SET(loc[j + RUN_AHEAD]) * GX_CSPEC_BLOCK);
        RUN_ENTRY();
    }
    for (; j < bn; j++)
        RUN_ENTRY();
#undef RUN_ENTRY
    *evicted += ev;
    return rsec;
}

/* Out of line, each with its own registers (inlined into run_fast, the
 * statistics' locals spilled the rng state on every victim): the
 * reference cards' 128-byte lines of four 32-byte sectors, and any. */
static __attribute__((noinline)) uint64_t run_lookups_128_32(uint8_t *mem, const uint64_t *bp,
                                                              uint64_t *loc, size_t bn,
                                                              uint64_t rsec, const run_pol *pol,
                                                              uint64_t *evicted)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, 5, 7, 3, pol, evicted);
}

static __attribute__((noinline)) uint64_t run_lookups(uint8_t *mem, const uint64_t *bp,
                                                       uint64_t *loc, size_t bn, uint64_t rsec,
                                                       uint32_t ssh, uint32_t lsh, uint32_t smk,
                                                       const run_pol *pol, uint64_t *evicted)
{
    return run_lookups_s(mem, bp, loc, bn, rsec, ssh, lsh, smk, pol, evicted);
}

/* l2->fast (uniform, no noise, the 16-way PLRU instance): the straight
 * path of `gpuxray sim`, a block of entries (RUN_BLOCK) at a time in three
 * passes, each with few live values (one loop holding everything spilled
 * the policy's rng state on every victim):
 * - locate: set and slice of each entry (hashed once, as gx_l2_locate);
 * - lookups in order (run_lookups_s). An access to the sector of the
 *   access just before it (no L2 access between them) is a repeat: it
 *   finds the line in the same way with the sector present (the previous
 *   access hit it or filled it), so it is a hit, and its policy update,
 *   the tree-PLRU touch of that way, is idempotent ((bits & ~clear[w]) |
 *   set[w] twice is once): no lookup;
 * - statistics: each latency's fixed-point amount, value and bin come from
 *   l2->rlat by (SM, slice, outcome). Counting mode: an access adds 1 to
 *   its entry's count (l2->rcnt), an entry's first access notes it, and
 *   the noted entries are folded in that order (count times the amount,
 *   the bin and the extremes once) before the list fills and at the end.
 *   Direct mode, for runs of about one access an entry (many SMs): each
 *   access added in locals. Both give gx_l2_tally_add's statistics exactly:
 *   the total is an integer sum, the histogram counts, and the extremes
 *   keep the first of equal values in both orders (an entry's first access
 *   comes first). The outcome counts are folded into the cache at the end.
 * Measured (callgrind, whole `gpuxray sim` process, 1 M 4-byte reads on
 * seed-ampere-6mb, instructions an access): random 64 MiB 330 -> 246,
 * random 1 MiB 276 -> 198, stream 83 -> 68; docs/performance.md ("The
 * single-thread loop"). */
static uint64_t run_fast(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm,
                         const uint32_t *rep, size_t n, gx_l2_tally *t)
{
    const uint32_t ssh = l2->sector_shift, lsh = l2->line_shift, smk = l2->sector_mask;
    const int ref = ssh == 5 && lsh == 7 && smk == 3;
    const uint32_t slices = l2->slices, sps = l2->sps;
    gx_cache *const c = l2->cache;
    uint8_t *const mem = c->mem;
    const run_lat *const rl = l2->rlat;
    uint64_t *const hist = t->hist, *const sacc = l2->slice_acc;
    run_pol pol;
    for (uint32_t w = 0; w < 16; w++) {
        pol.keep[w] = ~c->pf.clear[w];
        pol.setm[w] = c->pf.set[w];
    }
    memcpy(pol.lm_top, c->pf.lm_top, sizeof pol.lm_top);
    memcpy(pol.lm_low, c->pf.lm_low, sizeof pol.lm_low);
    /* the rng group of set s * sps + k is slice s (gx_l2_new: one group a slice) */
    pol.rngs = c->rngs ? c->rngs : &c->rng;
    pol.rmask = c->rngs ? UINT32_MAX : 0;
    pol.thr = c->pf.rand_thr;
    pol.rand_on = c->pf.rand_on;
    pol.rand_always = c->pf.rand_always;
    gx_cyc_sum total = t->total;
    double lo = t->lo, hi = t->hi;
    uint64_t oc[4] = {0, 0, 0, 0}, evicted = 0, folded = 0;
    uint64_t rsec = UINT64_MAX; /* sector number (pa >> ssh) of the access before */
    uint64_t loc[RUN_BLOCK];    /* RUN_LOC_ words */
    /* the counting mode: accesses per entry in l2->rcnt, the entries that
     * went from 0 in dirty[], in the order of their first access */
    const int counting = l2->rdirect == 0;
    uint64_t *const cnt = l2->rcnt;
    uint32_t dirty[RUN_DIRTY];
    size_t nd = 0, distinct = 0;
/* Entries dirty[0 .. nd) into the statistics, each with its count, in the
 * order of their first access (the extremes keep the first of equal
 * values, as one access after another does); their counts back to 0. */
#define RUN_FOLD()                                                                         \
    for (size_t q = 0; q < nd; q++) {                                                      \
        const uint32_t i = dirty[q];                                                       \
        const uint64_t k = cnt[i];                                                         \
        const run_lat *const e = &rl[i];                                                   \
        cnt[i] = 0;                                                                        \
        total.v += e->inc.v * (__int128)k;                                                 \
        lo = e->lat < lo ? e->lat : lo;                                                    \
        hi = e->lat > hi ? e->lat : hi;                                                    \
        hist[e->bin] += k;                                                                 \
        oc[i & 3] += k;                                                                    \
        sacc[e->slice] += k;                                                               \
    }
    for (size_t b0 = 0; b0 < n; b0 += RUN_BLOCK) {
        const size_t bn = n - b0 < RUN_BLOCK ? n - b0 : RUN_BLOCK;
        const uint64_t *const bp = pa + b0;
        const uint32_t *const bm = sm + b0;
        const uint32_t *const br = rep ? rep + b0 : NULL;
        for (size_t j = 0; j < bn; j++) {
            uint32_t s, k;
            locate_s(l2, bp[j], &s, &k, 1);
            loc[j] = (uint64_t)s << 32 | (s * sps + k);
        }
        rsec = ref ? run_lookups_128_32(mem, bp, loc, bn, rsec, &pol, &evicted)
                   : run_lookups(mem, bp, loc, bn, rsec, ssh, lsh, smk, &pol, &evicted);
        if (counting) {
            if (nd > RUN_DIRTY - 2 * RUN_BLOCK) { /* room for this block's new entries */
                RUN_FOLD();
                distinct += nd;
                nd = 0;
            }
            for (size_t j = 0; j < bn; j++) {
                const uint64_t x = loc[j];
                const uint32_t o = (uint32_t)(x >> RUN_LOC_OUT_SHIFT);
                const uint32_t i = 4 * (bm[j] * slices + RUN_LOC_SLICE(x));
                const uint64_t nrep = br ? br[j] : 0;
                if (!cnt[i + o]++)
                    dirty[nd++] = i + o;
                if (nrep) { /* hits: entry i (the hit's) */
                    folded += nrep;
                    if (!cnt[i])
                        dirty[nd++] = i;
                    cnt[i] += nrep;
                }
            }
            continue;
        }
        for (size_t j = 0; j < bn; j++) {
            /* a repeat's location is the access before's (the same sector) */
            const uint64_t x = loc[j];
            const uint32_t s = RUN_LOC_SLICE(x), o = (uint32_t)(x >> RUN_LOC_OUT_SHIFT);
            const run_lat *const e = &rl[4 * ((size_t)bm[j] * slices + s)];
            const uint64_t nrep = br ? br[j] : 0; /* repeats of the sector after this access */
            total.v += e[o].inc.v;
            lo = e[o].lat < lo ? e[o].lat : lo;
            hi = e[o].lat > hi ? e[o].lat : hi;
            hist[e[o].bin]++;
            oc[o]++;
            sacc[s] += 1 + nrep;
            if (nrep) { /* hits of latency e[0], as gx_cyc_add_n adds them */
                folded += nrep;
                total.v += e->inc.v * (__int128)nrep;
                lo = e->lat < lo ? e->lat : lo;
                hi = e->lat > hi ? e->lat : hi;
                hist[e->bin] += nrep;
                oc[GX_CACHE_HIT] += nrep;
            }
        }
    }
    if (counting) {
        RUN_FOLD();
        distinct += nd;
        /* about one access an entry: the direct mode costs less */
        if (2 * distinct > n)
            l2->rdirect = RUN_DIRECT_RUNS;
    } else {
        l2->rdirect--;
    }
    for (int o = 0; o < 3; o++)
        c->outcomes[o] += oc[o];
    c->outcomes[GX_CACHE_HIT] += oc[RUN_REPEAT];
    c->evictions += evicted;
    t->total = total;
    t->lo = lo;
    t->hi = hi;
    return n + folded;
}

void gx_l2_run(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, const uint32_t *rep, size_t n,
               gx_l2_tally *t)
{
    /* run_fast: sets numbered in 32 bits (RUN_LOC_SET), a table of bounded
     * size (entries numbered in 32 bits), built for the tally's bins */
    const uint64_t top = t->bins - 1;
    if (l2->fast && (uint64_t)l2->slices * l2->sps <= UINT32_MAX &&
        (uint64_t)l2->sm_count * l2->slices <= RUN_LAT_MAX_ROWS &&
        ((l2->rlat_ok && l2->rlat_top == top) || build_run_lat(l2, top) == GX_OK))
        t->sectors += run_fast(l2, pa, sm, rep, n, t);
    else /* the general path (also when the table could not be allocated) */
        t->sectors += run_generic(l2, pa, sm, rep, n, t);
}
