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
 * - Timing: latency = level latency + skew(sm, slice) + noise. The skew
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
 *   path (per-slice home/index tables), gx_l2_locate + gx_l2_prefetch_loc
 *   so a caller that knows its next addresses hashes each once and hides
 *   the host's cache misses on the model's sets.
 * - slice_accesses counts the HOME slice (the hash output) of every access:
 *   it is the hash's load on the slices.
 * - Hash outputs beyond slices / sets_per_slice are folded by modulo (a
 *   valid profile never produces them). */
#include "gpuxray/l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "gpuxray/hash.h"
#include "noise.h"

struct gx_l2 {
    gx_topology topo;
    uint32_t slices, partitions, spp, sps, sm_count;
    uint64_t part_sets; /* sets of one partition: spp * sps */
    uint32_t line_shift, sector_shift, sector_mask;
    int copy_to_near, victims_to_far;
    gx_hash_fn slice_hash, set_hash; /* copies (tables owned) */
    /* Fast evaluation of both hashes (see build_fast_hash): the XOR of one
     * table entry per address byte gives slice bits (low 32) and set bits
     * (high 32); slice_lut / set_lut map those bits to the slice / set. */
    int n_hbytes;
    uint32_t hbyte0;
    uint64_t (*htab)[256];
    uint32_t *slice_lut, *set_lut;
    gx_cache *cache;
    int cspec; /* the cache takes the specialised hot path (cache_internal.h) */
    double hit_cycles, near_cycles, far_cycles, dram_cycles;
    double level_cycles[3]; /* by gx_l2_level: near, far, dram */
    float *skew; /* sm_count * slices, NULL when off */
    uint32_t *sm_part; /* near partition of each SM */
    uint16_t *s_home, *s_idx; /* per slice: partition, index within it (no division) */
    gx_noise noise;
    gx_l2_stats st; /* dram_accesses, slices, slice_accesses; levels in lcnt */
    uint64_t lcnt[2][3]; /* [level][gx_cache_outcome] */
    uint64_t *slice_acc;
};

static int copy_hash(gx_hash_fn *dst, const gx_hash_fn *src)
{
    *dst = *src;
    dst->table = NULL;
    if (src->table) {
        size_t n = (size_t)1 << src->n_masks;
        dst->table = malloc(n * sizeof *dst->table);
        if (!dst->table)
            return GX_ENOMEM;
        memcpy(dst->table, src->table, n * sizeof *dst->table);
    }
    return GX_OK;
}

static int log2u(uint64_t x)
{
    return x ? 63 - __builtin_clzll(x) : -1;
}

static int check_profile(const gx_profile *p, gx_msg *msg)
{
    if (!p->l2.present)
        return gx_fail(msg, GX_ECONFIG, "l2: absent (the model needs it)");
    if (!p->l2.line_bytes || !p->l2.sector_bytes || !p->l2.ways || !p->l2.slices ||
        !p->l2.sets_per_slice)
        return gx_fail(msg, GX_ECONFIG,
                       "l2: line_bytes, sector_bytes, ways, slices and sets_per_slice are required");
    uint32_t parts = p->l2.partitions ? p->l2.partitions : 1;
    if (p->l2.slices % parts)
        return gx_fail(msg, GX_ECONFIG, "l2.partitions: %u does not divide l2.slices %u", parts,
                       p->l2.slices);
    if (!p->l2.slice_hash.present || !p->l2.set_hash.present)
        return gx_fail(msg, GX_ECONFIG, "l2.hash: slice and set functions are required");
    if (gx_hash_range(&p->l2.slice_hash) > p->l2.slices)
        return gx_fail(msg, GX_ECONFIG, "l2.hash.slice: range %llu exceeds l2.slices %u",
                       (unsigned long long)gx_hash_range(&p->l2.slice_hash), p->l2.slices);
    if (gx_hash_range(&p->l2.set_hash) > p->l2.sets_per_slice)
        return gx_fail(msg, GX_ECONFIG, "l2.hash.set: range %llu exceeds l2.sets_per_slice %u",
                       (unsigned long long)gx_hash_range(&p->l2.set_hash), p->l2.sets_per_slice);
    if (!isfinite(p->memory.dram_latency_cycles))
        return gx_fail(msg, GX_ECONFIG, "memory.dram_latency_cycles: required by the model");
    if (!p->device.sm_count)
        return gx_fail(msg, GX_ECONFIG, "device.sm_count: required by the model");
    if (p->l2.topology == GX_TOPO_NEAR_FAR) {
        if (!isfinite(p->l2.near_hit_cycles) || !isfinite(p->l2.far_hit_cycles))
            return gx_fail(msg, GX_ECONFIG,
                           "l2.latency_cycles: near_hit and far_hit are required for near-far");
    } else if (p->l2.topology == GX_TOPO_UNIFORM) {
        if (!isfinite(p->l2.hit_cycles))
            return gx_fail(msg, GX_ECONFIG, "l2.latency_cycles.hit: required for uniform");
    } else {
        return gx_fail(msg, GX_ECONFIG, "l2.topology: required (uniform or near-far)");
    }
    return GX_OK;
}

/* Hash evaluation by tables (measured on the seed profile, sim target chase:
 * 15-18 -> 25 M accesses/s with the noise draw reduced to one rng call,
 * against per-mask parities without a popcnt instruction): the hashes are linear over GF(2), so the
 * bits of pa are the XOR of the bits of each of its bytes; one 256-entry
 * table per address byte that any mask touches. Then a lookup table from
 * the bits to the slice (table or identity, folded into range) and to the
 * set (modulo or identity). Index functions of up to 24 bits (validation's
 * limit for tables; sets of 2^24 per slice are far beyond any GPU). */
static int build_fast_hash(gx_l2 *l2)
{
    const gx_hash_fn *sh = &l2->slice_hash, *th = &l2->set_hash;
    if (sh->n_masks > 24 || th->n_masks > 24)
        return GX_EUNSUPPORTED;
    uint64_t used = 0;
    for (int i = 0; i < sh->n_masks; i++)
        used |= sh->masks[i];
    for (int i = 0; i < th->n_masks; i++)
        used |= th->masks[i];
    l2->hbyte0 = used ? (uint32_t)__builtin_ctzll(used) / 8 : 0;
    l2->n_hbytes = used ? (int)((63 - (uint32_t)__builtin_clzll(used)) / 8 - l2->hbyte0 + 1) : 0;
    l2->htab = calloc(l2->n_hbytes ? (size_t)l2->n_hbytes : 1, sizeof *l2->htab);
    size_t ns = (size_t)1 << sh->n_masks, nt = (size_t)1 << th->n_masks;
    l2->slice_lut = malloc(ns * sizeof *l2->slice_lut);
    l2->set_lut = malloc(nt * sizeof *l2->set_lut);
    if (!l2->htab || !l2->slice_lut || !l2->set_lut)
        return GX_ENOMEM;
    for (int i = 0; i < l2->n_hbytes; i++)
        for (uint64_t v = 0; v < 256; v++) {
            uint64_t pa = v << (8 * (l2->hbyte0 + (uint32_t)i));
            l2->htab[i][v] = gx_hash_bits(sh, pa) | gx_hash_bits(th, pa) << 32;
        }
    for (size_t v = 0; v < ns; v++) {
        uint64_t x = sh->table ? sh->table[v] : v;
        l2->slice_lut[v] = (uint32_t)(x % l2->slices);
    }
    for (size_t v = 0; v < nt; v++) {
        uint64_t x = th->modulo ? v % th->modulo : v;
        l2->set_lut[v] = (uint32_t)(x % l2->sps);
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
    l2->line_shift = (uint32_t)log2u(p->l2.line_bytes);
    l2->sector_shift = (uint32_t)log2u(p->l2.sector_bytes);
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
    gx_cache_cfg cc = {p->l2.line_bytes, p->l2.sector_bytes, p->l2.ways,
                       (uint64_t)l2->slices * l2->sps, p->l2.policy[0] ? p->l2.policy : "lru",
                       gx_mix64(o.seed ^ 0x9011c7ULL)};
    rc = gx_cache_new(&cc, &l2->cache, msg);
    if (rc == GX_OK && (copy_hash(&l2->slice_hash, &p->l2.slice_hash) != GX_OK ||
                        copy_hash(&l2->set_hash, &p->l2.set_hash) != GX_OK))
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    l2->slice_acc = calloc(l2->slices, sizeof *l2->slice_acc);
    l2->sm_part = calloc(l2->sm_count, sizeof *l2->sm_part);
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
        rc = gx_fail(msg, rc, rc == GX_ENOMEM ? "l2: out of memory"
                                              : "l2.hash: more than 24 masks in an index function");
    if (rc == GX_OK && o.skew && build_skew(l2, p) != GX_OK)
        rc = gx_fail(msg, GX_ENOMEM, "l2: out of memory");
    if (rc != GX_OK) {
        gx_l2_free(l2);
        return rc;
    }
    l2->cspec = getenv("GX_NOSPEC") ? 0 : gx_cspec_plru16(l2->cache);
    int noise_on = o.noise && p->sim.present;
    gx_noise_init(&l2->noise, noise_on, p->sim.jitter_cycles, p->sim.outlier_rate,
                  p->sim.outlier_cycles, p->sim.background_evictions_per_kaccess,
                  gx_mix64(o.seed ^ 0x7015e0ULL));
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
    free(l2->s_home);
    free(l2->s_idx);
    free(l2);
}

uint32_t gx_l2_sm_partition(const gx_l2 *l2, uint32_t sm)
{
    return l2->sm_part[sm % l2->sm_count];
}

/* Both hashes at once: slice (*s) and set within the slice (*k). */
static inline void locate(const gx_l2 *l2, uint64_t pa, uint32_t *s, uint32_t *k)
{
    /* the address bytes any mask touches are hbyte0 .. hbyte0 + n_hbytes - 1 */
    const uint64_t(*t)[256] = l2->htab;
    uint64_t x = pa >> (8 * l2->hbyte0), b = 0;
    switch (l2->n_hbytes) {
    case 8: b ^= t[7][(x >> 56) & 0xff]; /* fall through */
    case 7: b ^= t[6][(x >> 48) & 0xff]; /* fall through */
    case 6: b ^= t[5][(x >> 40) & 0xff]; /* fall through */
    case 5: b ^= t[4][(x >> 32) & 0xff]; /* fall through */
    case 4: b ^= t[3][(x >> 24) & 0xff]; /* fall through */
    case 3: b ^= t[2][(x >> 16) & 0xff]; /* fall through */
    case 2: b ^= t[1][(x >> 8) & 0xff];  /* fall through */
    case 1: b ^= t[0][x & 0xff];         /* fall through */
    default: break;
    }
    *s = l2->slice_lut[(uint32_t)b];
    *k = l2->set_lut[(uint32_t)(b >> 32)];
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
 * the L2. */
static void push_victim(gx_l2 *l2, const gx_cache_victim *v, uint32_t from, uint32_t idx,
                        uint32_t k)
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
    gx_cache_insert(l2->cache, set_id(l2, to, idx, k), v->line_addr, v->sector_mask, NULL);
}

/* Look in partition `part` for the line; on a hit (sector present) with
 * `move`, take the whole line out. Returns the outcome; *mask gets the
 * line's sectors when moved. */
static gx_cache_outcome far_lookup(gx_l2 *l2, uint64_t fset, uint64_t line, uint32_t sector,
                                   int move, uint32_t *mask)
{
    gx_cache_outcome o;
    *mask = 0;
    if (move) {
        /* exclusive: the line leaves far whatever its sectors */
        uint32_t m = gx_cache_invalidate(l2->cache, fset, line);
        o = !m ? GX_CACHE_LINE_MISS : (m >> sector & 1u) ? GX_CACHE_HIT : GX_CACHE_SECTOR_MISS;
        *mask = m;
    } else {
        o = gx_caccess(l2->cache, fset, line, sector, 0, NULL);
    }
    count(l2, GX_L2_FAR, o);
    return o;
}

static void access_near_far(gx_l2 *l2, uint32_t s, uint32_t k, uint64_t line, uint32_t sector,
                            uint32_t sm, gx_l2_result *r)
{
    uint32_t home = l2->s_home[s], idx = l2->s_idx[s];
    uint32_t near = l2->sm_part[sm];
    uint32_t bit = 1u << sector;
    gx_cache_victim v;
    if (!l2->copy_to_near && home != near) {
        /* the line lives at home, which is far from this SM */
        uint64_t hset = set_id(l2, home, idx, k);
        r->slice = s;
        r->outcome = gx_caccess(l2->cache, hset, line, sector, 0, NULL);
        count(l2, GX_L2_FAR, r->outcome);
        if (r->outcome == GX_CACHE_HIT) {
            r->level = GX_L2_FAR;
            return;
        }
        r->level = GX_L2_DRAM;
        l2->st.dram_accesses++;
        gx_cache_insert(l2->cache, hset, line, bit, NULL);
        return;
    }
    uint64_t nset = set_id(l2, near, idx, k);
    r->slice = near * l2->spp + idx;
    r->outcome = gx_caccess(l2->cache, nset, line, sector, 0, NULL);
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
        if (far_lookup(l2, fset, line, sector, l2->victims_to_far, &m) == GX_CACHE_HIT)
            r->level = GX_L2_FAR;
        fill |= m;
    }
    if (r->level == GX_L2_DRAM) {
        l2->st.dram_accesses++;
        if (l2->copy_to_near && !l2->victims_to_far && home != near) {
            /* point of coherence: the home partition gets the line too */
            gx_cache_insert(l2->cache, set_id(l2, home, idx, k), line, bit, NULL);
        }
    }
    gx_cache_insert(l2->cache, nset, line, fill, &v);
    if (l2->victims_to_far)
        push_victim(l2, &v, near, idx, k);
}

void gx_l2_locate(const gx_l2 *l2, uint64_t pa, gx_l2_loc *loc)
{
    uint32_t s, k;
    locate(l2, pa, &s, &k);
    loc->line_addr = pa >> l2->line_shift;
    loc->slice = s;
    loc->set = k;
    loc->sector = (uint32_t)(pa >> l2->sector_shift) & l2->sector_mask;
}

/* One access of (line, sector) in home slice s, set k: the body of
 * gx_l2_access and gx_l2_access_loc, inlined into both. The uniform case
 * inlines the cache lookup and fill (cache_internal.h). */
static inline __attribute__((always_inline)) void
access_at(gx_l2 *l2, uint64_t line, uint32_t s, uint32_t k, uint32_t sector, uint32_t sm,
          gx_l2_result *r)
{
    if (__builtin_expect(sm >= l2->sm_count, 0))
        sm %= l2->sm_count; /* rare: callers pass valid SMs */
    l2->slice_acc[s]++;
    if (l2->topo == GX_TOPO_NEAR_FAR && l2->partitions > 1) {
        access_near_far(l2, s, k, line, sector, sm, r);
    } else {
        uint64_t set = (uint64_t)s * l2->sps + k;
        gx_cache_outcome o = l2->cspec
                                 ? gx_caccess_s(l2->cache, set, line, sector, 1, NULL,
                                                GX_CSPEC_PLRU16)
                                 : gx_caccess(l2->cache, set, line, sector, 1, NULL);
        r->slice = s;
        r->outcome = o;
        count(l2, GX_L2_NEAR, o);
        r->level = o == GX_CACHE_HIT ? GX_L2_NEAR : GX_L2_DRAM;
        l2->st.dram_accesses += o != GX_CACHE_HIT;
    }
    double lat = l2->level_cycles[r->level];
    if (l2->skew)
        lat += (double)l2->skew[(size_t)sm * l2->slices + r->slice];
    if (l2->noise.on) {
        uint32_t evictions = 0;
        lat += gx_noise_access(&l2->noise, &evictions);
        for (; evictions; evictions--)
            gx_cache_evict_random(l2->cache, &l2->noise.rng);
    }
    r->latency_cycles = lat;
}

void gx_l2_access_loc(gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm, gx_l2_op op,
                      gx_l2_result *r)
{
    (void)op; /* write-allocate: stores and atomics behave like loads */
    access_at(l2, loc->line_addr, loc->slice, loc->set, loc->sector, sm, r);
}

void gx_l2_access(gx_l2 *l2, uint64_t pa, uint32_t sm, gx_l2_op op, gx_l2_result *r)
{
    (void)op;
    uint32_t s, k;
    locate(l2, pa, &s, &k);
    access_at(l2, pa >> l2->line_shift, s, k, (uint32_t)(pa >> l2->sector_shift) & l2->sector_mask,
              sm, r);
}

void gx_l2_prefetch_loc(const gx_l2 *l2, const gx_l2_loc *loc, uint32_t sm)
{
    uint32_t s = loc->slice, k = loc->set;
    if (l2->topo == GX_TOPO_NEAR_FAR && l2->copy_to_near && l2->partitions > 1) {
        uint32_t home = l2->s_home[s], idx = l2->s_idx[s];
        uint32_t near = l2->sm_part[sm < l2->sm_count ? sm : sm % l2->sm_count];
        gx_cache_prefetch(l2->cache, set_id(l2, near, idx, k));
        gx_cache_prefetch(l2->cache, set_id(l2, far_part(l2, home, near), idx, k));
        return;
    }
    gx_cache_prefetch(l2->cache, (uint64_t)s * l2->sps + k);
}

void gx_l2_prefetch(const gx_l2 *l2, uint64_t pa, uint32_t sm)
{
    gx_l2_loc loc;
    gx_l2_locate(l2, pa, &loc);
    gx_l2_prefetch_loc(l2, &loc, sm);
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
        s->level[l].accesses =
            s->level[l].hits + s->level[l].sector_misses + s->level[l].line_misses;
    }
}

void gx_l2_reset_stats(gx_l2 *l2)
{
    memset(l2->lcnt, 0, sizeof l2->lcnt);
    l2->st.dram_accesses = 0;
    memset(l2->slice_acc, 0, l2->slices * sizeof *l2->slice_acc);
}
