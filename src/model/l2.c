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
#include "gpuxray/bits.h"
#include "gpuxray/dram.h"
#include "l2_internal.h"

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
 * Lemire's fastmod, or a table when the profile gives one (the generic
 * path: a measured index, e.g. profiles/nvidia-h200-model.json's).
 * Measured (callgrind, seed-ampere-6mb random trace): gx_l2_locate 53 -> 44
 * instructions a call, with the loc stores.
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
    /* set: a table of the bits (uint32: the profile's rule keeps its
     * entries below sets_per_slice), the bits mod modulo, or the bits;
     * folded by sets_per_slice (the identity for a valid range). A table
     * takes the generic path (hfast needs no set_lut) */
    uint64_t range = th->modulo ? th->modulo : nt;
    if (th->table) {
        l2->set_lut = malloc(nt * sizeof *l2->set_lut);
        if (!l2->set_lut)
            return GX_ENOMEM;
        for (size_t v = 0; v < nt; v++)
            l2->set_lut[v] = th->table[v] % l2->sps;
    } else if (range <= l2->sps) {
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

/* Both hashes at once: slice (*s) and set within the slice (*k); any L2. */
static inline void locate(const gx_l2 *l2, uint64_t pa, uint32_t *s, uint32_t *k)
{
    locate_s(l2, pa, s, k, 0);
}

uint32_t gx_l2_serving_slice(const gx_l2 *l2, uint64_t pa, uint32_t sm)
{
    uint32_t home, set;
    locate(l2, pa, &home, &set);
    if (l2->nf && l2->copy_to_near)
        return gx_l2_sm_partition(l2, sm) * l2->spp + l2->s_idx[home];
    return home;
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
    l2->rlat_ok = 0; /* gx_l2_run_fast's table holds the DRAM latency */
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
/* batch run (gx_l2_run): the general path here, the specialised one in
 * l2_run.c */

/* Any L2: each access located RUN_AHEAD ahead, its set prefetched, then
 * gx_l2_access_loc (== gx_l2_access: locating is pure). */
static uint64_t run_generic(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm,
                            const uint32_t *rep, size_t n, int plus, double extra,
                            gx_l2_tally *t)
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
            gx_l2_tally_add(t, plus ? extra + r.latency_cycles : r.latency_cycles);
        }
        made += nr;
    }
    return made;
}

void gx_l2_run(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, const uint32_t *rep, size_t n,
               gx_l2_tally *t)
{
    if (gx_l2_run_fast_ready(l2, t->bins - 1, 0, 0)) /* l2_run.c */
        t->sectors += gx_l2_run_fast(l2, pa, NULL, NULL, sm, rep, n, t);
    else /* the general path (also when the table could not be allocated) */
        t->sectors += run_generic(l2, pa, sm, rep, n, 0, 0, t);
}

void gx_l2_run_va(gx_l2 *l2, const uint64_t *va, uint64_t *pa, const uint32_t *sm,
                  const uint32_t *rep, size_t n, gx_frame_memo *m, gx_l2_tally *t)
{
    if (gx_l2_run_fast_ready(l2, t->bins - 1, 0, 0)) { /* translated while located */
        const gx_l2_va lv = {va, pa, m};
        t->sectors += gx_l2_run_fast(l2, pa, NULL, &lv, sm, rep, n, t);
        return;
    }
    for (size_t i = 0; i < n; i++)
        pa[i] = gx_frame_pa(m, va[i]);
    t->sectors += run_generic(l2, pa, sm, rep, n, 0, 0, t);
}

void gx_l2_run_located(gx_l2 *l2, const uint64_t *pa, const uint64_t *lw, const uint32_t *sm,
                       const uint32_t *rep, size_t n, gx_l2_tally *t)
{
    if (gx_l2_run_fast_ready(l2, t->bins - 1, 0, 0)) /* the words hold the sets (l2_run.c) */
        t->sectors += gx_l2_run_fast(l2, pa, lw, NULL, sm, rep, n, t);
    else
        t->sectors += run_generic(l2, pa, sm, rep, n, 0, 0, t);
}

int gx_l2_run_located_ready(gx_l2 *l2, uint64_t bins)
{
    return bins >= 1 && gx_l2_run_fast_ready(l2, bins - 1, 0, 0);
}

void gx_l2_run_plus(gx_l2 *l2, const uint64_t *pa, const uint32_t *sm, size_t n, double extra,
                    gx_l2_tally *t)
{
    if (gx_l2_run_fast_ready(l2, t->bins - 1, 1, extra)) /* the table holds extra + lat */
        t->sectors += gx_l2_run_fast(l2, pa, NULL, NULL, sm, NULL, n, t);
    else
        t->sectors += run_generic(l2, pa, sm, NULL, n, 1, extra, t);
}
