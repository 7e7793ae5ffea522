/* generate.c - random valid hidden profiles for the holdout proof (see
 * generate.h for the ranges).
 *
 * Notes:
 * - All choices come from one gx_rng seeded from the seed, so a seed names
 *   a profile. Invalid combinations (capacity out of range, too many hash
 *   bits for the observable address range) are rejected and redrawn from
 *   the same stream, which keeps the result deterministic.
 * - The observable parts (line bits .. bit 20, below the 2 MiB page) of all
 *   slice and set masks together are linearly independent over GF(2): then
 *   every (slice, set) pair is reachable inside every page, and the whole
 *   capacity is usable. Bits above the page are added to some masks (slice
 *   masks, and set masks of power-of-two set counts) as the unobservable
 *   component a real physical address contributes.
 * - Set masks for a modulo are ceil(log2(sets)) + 2 bits, so the residues
 *   are within 25% of uniform. A non-power-of-two slice count uses
 *   k = ceil(log2(4 * slices)) bits (fewer when the bit budget is tight) and
 *   a shuffled table in which every slice appears floor or ceil(2^k/slices)
 *   times. */
#include "gpuxray/generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/policy.h"
#include "gpuxray/rng.h"
#include "gpuxray/bits.h"
#include "gpuxray/smem.h"
#include "generate_internal.h"

void gx_generate_opts_default(gx_generate_opts *o)
{
    o->min_capacity_bytes = 256u << 10;
    o->max_capacity_bytes = 8u << 20;
    o->max_slices = 128;
    o->unobservable_bits = 1;
    o->policy = NULL;
    o->mode = GX_GEN_CLASSIC;
    o->translation = 0;
}

void gx_generate_opts_wide(gx_generate_opts *o)
{
    gx_generate_opts_default(o);
    o->max_capacity_bytes = 64u << 20;
    o->max_slices = 160;
    o->mode = GX_GEN_WIDE;
}

int gx_generate_mode_parse(const char *s)
{
    if (s && !strcmp(s, "classic"))
        return GX_GEN_CLASSIC;
    if (s && !strcmp(s, "wide"))
        return GX_GEN_WIDE;
    return -1;
}

/* A mask whose observable part (weight in [wmin, wmax], bits lo..OBS_HI) is
 * independent of basis; optionally with 1-3 unobservable bits. 0 = failed. */
static uint64_t new_mask(gx_rng *r, uint64_t basis[64], int lo, int wmin, int wmax, int high)
{
    for (int tries = 0; tries < 200; tries++) {
        int w = (int)urange(r, (uint64_t)wmin, (uint64_t)wmax);
        uint64_t m = random_bits(r, lo, OBS_HI, w);
        uint64_t copy[64];
        memcpy(copy, basis, sizeof copy);
        if (!basis_add(copy, m))
            continue;
        memcpy(basis, copy, sizeof copy);
        if (high)
            m |= random_bits(r, HIGH_LO, HIGH_HI, (int)urange(r, 1, 3));
        return m;
    }
    return 0;
}

/* The slice count of shape s, whose topology and partitions are drawn:
 * per partition a power of two half the time, else any count, up to maxs /
 * partitions (at least 1); a uniform card then takes 1, 2 or 4 partitions
 * that divide its slices. */
void gx_gen_slice_count(gx_rng *r, uint32_t maxs, shape *s)
{
    uint32_t per_max = maxs / s->partitions;
    if (per_max < 1)
        per_max = 1;
    uint32_t per;
    if (gx_rng_uniform(r) < 0.5) {
        int top = 0;
        while (((uint32_t)2 << top) <= per_max)
            top++;
        per = (uint32_t)1 << urange(r, 0, (uint64_t)top);
    } else {
        per = (uint32_t)urange(r, 1, per_max);
    }
    s->slices = per * s->partitions;
    if (s->topo == GX_TOPO_UNIFORM) {
        /* partitions 1, 2 or 4, dividing the slices */
        uint32_t opts[3], n = 0;
        for (uint32_t p = 1; p <= 4; p *= 2)
            if (s->slices % p == 0)
                opts[n++] = p;
        s->partitions = opts[gx_rng_below(r, n)];
    }
}

static void pick_slices(gx_rng *r, const gx_generate_opts *o, shape *s)
{
    uint32_t maxs = o->max_slices ? o->max_slices : 128;
    if (gx_rng_uniform(r) < 0.4) {
        s->topo = GX_TOPO_NEAR_FAR;
        s->partitions = gx_rng_uniform(r) < 0.7 ? 2 : 4;
        if (s->partitions > maxs)
            s->partitions = 2;
    } else {
        s->topo = GX_TOPO_UNIFORM;
        s->partitions = 1;
    }
    gx_gen_slice_count(r, maxs, s);
}

/* Draw a shape; 0 when it breaks a constraint (the caller redraws). */
static int pick_shape(gx_rng *r, const gx_generate_opts *o, shape *s)
{
    memset(s, 0, sizeof *s);
    s->line = gx_rng_uniform(r) < 0.5 ? 64 : 128;
    uint32_t sec_opts[3] = {32, 64, s->line}, n_sec = s->line > 64 ? 3 : 2;
    s->sector = sec_opts[gx_rng_below(r, n_sec)];
    s->ways = (uint32_t)urange(r, 2, 32);
    pick_slices(r, o, s);
    const int line_bits = gx_log2_ceil_u64(s->line);
    const int obs = OBS_HI - line_bits + 1;
    const int budget = obs - 2; /* keep room for independence (see notes) */
    /* capacity target, log-uniform */
    double lo = log((double)o->min_capacity_bytes), hi = log((double)o->max_capacity_bytes);
    double target = exp(drange(r, lo, hi));
    double sets_f = target / ((double)s->slices * s->ways * s->line);
    s->modulo = gx_rng_uniform(r) < 0.4;
    if (s->modulo) {
        uint64_t sets = (uint64_t)llround(sets_f);
        if (sets < 5)
            sets = 5;
        if (gx_is_pow2_u64(sets)) /* move off the power of two, staying below the next */
            sets += urange(r, 1, sets / 4 > 1 ? sets / 4 : 1);
        s->sets = (uint32_t)sets;
        s->n_set = gx_log2_ceil_u64(sets) + 2;
    } else {
        int k = (int)lround(log2(sets_f > 1 ? sets_f : 1));
        if (k < 2)
            k = 2;
        s->sets = (uint32_t)1 << k;
        s->n_set = k;
    }
    if (gx_is_pow2_u64(s->slices)) {
        s->k_slice = gx_log2_ceil_u64(s->slices);
    } else { /* 2^k >= 4 * slices when the bit budget allows, at least 2 * slices */
        s->k_slice = gx_log2_ceil_u64(4 * (uint64_t)s->slices);
        int min_k = gx_log2_ceil_u64(s->slices) + 1;
        while (s->k_slice > min_k && s->k_slice + s->n_set > budget)
            s->k_slice--;
    }
    if (s->k_slice + s->n_set > budget || s->n_set > GX_MAX_MASKS)
        return 0;
    uint64_t cap = (uint64_t)s->slices * s->sets * s->ways * s->line;
    if (cap < o->min_capacity_bytes || cap > o->max_capacity_bytes || s->sets < 4)
        return 0;
    return 1;
}

/* The balanced table of a non-power-of-two slice count: 2^k entries, every
 * slice floor or ceil(2^k / slices) times, shuffled. 0, or -1 out of memory. */
int gx_gen_slice_table(gx_rng *r, uint32_t slices, int k, gx_hash_fn *sh)
{
    size_t n = (size_t)1 << k;
    uint64_t *v = malloc(n * sizeof *v);
    sh->table = malloc(n * sizeof *sh->table);
    if (!v || !sh->table) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = i % slices;
    gx_rng_shuffle_u64(r, v, n);
    for (size_t i = 0; i < n; i++)
        sh->table[i] = (uint32_t)v[i];
    free(v);
    return 0;
}

static int make_hashes(gx_rng *r, const gx_generate_opts *o, const shape *s, gx_profile *p)
{
    uint64_t basis[64] = {0};
    const int line_bits = gx_log2_ceil_u64(s->line);
    gx_hash_fn *sh = &p->l2.slice_hash, *st = &p->l2.set_hash;
    sh->present = 1;
    sh->n_masks = s->k_slice;
    sh->obs_lo = line_bits;
    sh->obs_hi = OBS_HI;
    const int obs = OBS_HI - line_bits + 1;
    for (int i = 0; i < s->k_slice; i++) {
        int high = o->unobservable_bits && gx_rng_uniform(r) < 0.3;
        int wmax = obs < 10 ? obs : 10;
        sh->masks[i] = new_mask(r, basis, line_bits, 2, wmax, high);
        if (!sh->masks[i])
            return 0;
    }
    if (!gx_is_pow2_u64(s->slices) && gx_gen_slice_table(r, s->slices, s->k_slice, sh) != 0)
        return -1;
    st->present = 1;
    st->n_masks = s->n_set;
    st->modulo = s->modulo ? s->sets : 0;
    /* set masks: mostly above the lowest line bits, weight 1-4 (1-2 for a modulo) */
    int set_lo = line_bits + 2;
    for (int i = 0; i < s->n_set; i++) {
        int high = !s->modulo && o->unobservable_bits && gx_rng_uniform(r) < 0.25;
        st->masks[i] = new_mask(r, basis, set_lo, 1, s->modulo ? 2 : 4, high);
        if (!st->masks[i])
            return 0;
    }
    return 1;
}

static void pick_timing(gx_rng *r, const shape *s, gx_profile *p)
{
    double hit = floor(drange(r, 150, 300));
    double far = NAN;
    if (s->topo == GX_TOPO_NEAR_FAR) {
        far = floor(hit * drange(r, 1.5, 2.2));
        p->l2.near_hit_cycles = hit;
        p->l2.far_hit_cycles = far;
        p->l2.n_levels = 2;
        p->l2.levels[0].capacity_bytes = p->l2.capacity_bytes / s->partitions;
        p->l2.levels[0].latency_cycles = hit;
        p->l2.levels[1].capacity_bytes = p->l2.capacity_bytes;
        p->l2.levels[1].latency_cycles = far;
        p->l2.near_far.copy_to_near = 1;
        p->l2.near_far.victims_to_far = 1;
    } else {
        p->l2.hit_cycles = hit;
        p->l2.n_levels = 1;
        p->l2.levels[0].capacity_bytes = p->l2.capacity_bytes;
        p->l2.levels[0].latency_cycles = hit;
    }
    double dram = floor(hit * drange(r, 1.6, 3.0));
    if (!isnan(far) && dram < far * 1.15)
        dram = floor(far * 1.15) + 1;
    p->memory.dram_latency_cycles = dram;
    p->timer_overhead_cycles = floor(drange(r, 8, 40));
    /* noise: none (15%) to heavy */
    p->sim.present = 1;
    double level = gx_rng_uniform(r) < 0.15 ? 0.0 : gx_rng_uniform(r);
    p->sim.jitter_cycles = floor(level * 8 * 2 + 0.5) / 2;
    p->sim.outlier_rate = level > 0 ? 0.002 * gx_rng_uniform(r) : 0;
    p->sim.outlier_cycles = level > 0 ? floor(drange(r, 1000, 4000)) : 0;
    p->sim.background_evictions_per_kaccess = level > 0 ? 0.5 * gx_rng_uniform(r) : 0;
    double skew_lo = fmax(3 * p->sim.jitter_cycles, 4);
    p->sim.sm_slice_skew_cycles = floor(drange(r, skew_lo, 60) * 2) / 2;
    p->sim.frames_seed = gx_rng_next(r) >> 16;
}

/* The hidden shared memory, from its own rng stream (seeded from the seed
 * alone), so every other field stays what it was before smem existed:
 * 16/32/64 banks of 4 or 8 B; lane groups of the whole warp (512 B, as an
 * H200), the bank row or half of it (at least 64 B); broadcast on 3 in
 * 4; latency 18-60 cycles, 1-8 cycles per extra transfer (half-cycle
 * steps); the API sizes of four generations' cards. */
static int draw_smem(uint64_t seed, gx_profile *p, gx_msg *msg)
{
    static const uint32_t sm_kib[4] = {64, 100, 164, 228};
    gx_rng r;
    gx_rng_seed(&r, gx_mix64(seed ^ 0x736d656d62616e6bULL));
    gx_smem_cfg c;
    gx_smem_cfg_clear(&c);
    c.present = 1;
    c.banks = 16u << gx_rng_below(&r, 3);
    c.bank_bytes = 4u << gx_rng_below(&r, 2);
    uint32_t row = c.banks * c.bank_bytes, pick = (uint32_t)gx_rng_below(&r, 3);
    c.transfer_bytes = pick == 0 ? GX_SMEM_MAX_TRANSFER : pick == 1 || row < 128 ? row : row / 2;
    c.broadcast = gx_rng_below(&r, 4) != 0;
    c.latency_cycles = floor(drange(&r, 18, 60));
    c.conflict_cycles = floor(drange(&r, 1, 8) * 2) / 2;
    uint32_t k = sm_kib[gx_rng_below(&r, 4)];
    c.sm_bytes = (uint64_t)k << 10;
    c.block_bytes = k == 64 ? 48u << 10 : (uint64_t)(k - 1) << 10;
    return gx_smem_cfg_to_profile(p, &c, msg);
}

int gx_generate(uint64_t seed, const gx_generate_opts *o, gx_profile **out, gx_msg *msg)
{
    gx_generate_opts d;
    if (!o) {
        gx_generate_opts_default(&d);
        o = &d;
    }
    if (!out)
        return gx_fail(msg, GX_EINVAL, "gx_generate: out is NULL");
    *out = NULL;
    const int wide = o->mode == GX_GEN_WIDE;
    gx_rng r; /* each mode its own stream: a seed names one profile per mode */
    gx_rng_seed(&r, gx_mix64(seed ^ (wide ? 0x776964656e6572ULL : 0x6e6572617465ULL)));
    for (int attempt = 0; attempt < 100000; attempt++) {
        shape s;
        if (!(wide ? gx_gen_wide_shape(&r, o, &s) : pick_shape(&r, o, &s)))
            continue;
        gx_profile *p = gx_profile_new();
        if (!p)
            return gx_fail(msg, GX_ENOMEM, "gx_generate: out of memory");
        int h = wide ? gx_gen_wide_hashes(&r, &s, p) : make_hashes(&r, o, &s, p);
        if (h <= 0) {
            gx_profile_free(p);
            if (h < 0)
                return gx_fail(msg, GX_ENOMEM, "gx_generate: out of memory");
            continue;
        }
        snprintf(p->name, sizeof p->name, "gen-%llu", (unsigned long long)seed);
        strcpy(p->provenance.kind, "simulated");
        snprintf(p->provenance.target, sizeof p->provenance.target, "generator");
        p->provenance.seed = seed;
        p->provenance.seed_given = 1;
        snprintf(p->device.name, sizeof p->device.name, "generated GPU %llu (simulated)",
                 (unsigned long long)seed);
        p->device.sm_count = (uint32_t)urange(&r, 16, 132);
        p->device.sm_clock_mhz = (uint32_t)urange(&r, 1000, 2000);
        p->memory.page_bytes = PAGE_BYTES;
        p->l2.present = 1;
        p->l2.line_bytes = s.line;
        p->l2.sector_bytes = s.sector;
        p->l2.ways = s.ways;
        p->l2.slices = s.slices;
        p->l2.partitions = s.partitions;
        p->l2.sets_per_slice = s.sets;
        p->l2.capacity_bytes = (uint64_t)s.slices * s.sets * s.ways * s.line;
        p->device.api_l2_bytes = p->l2.capacity_bytes;
        p->l2.topology = s.topo;
        const char *pol = o->policy;
        if (!pol) {
            size_t nc = gx_policy_candidate_count();
            pol = nc ? gx_policy_candidate((size_t)gx_rng_below(&r, nc)) : "lru";
        }
        snprintf(p->l2.policy, sizeof p->l2.policy, "%s", pol);
        pick_timing(&r, &s, p);
        if (wide)
            gx_gen_wide_levels(&s, p);
        int src = draw_smem(seed, p, msg);
        if (src != GX_OK) {
            gx_profile_free(p);
            return src;
        }
        if (o->translation && !gx_generate_tlb(seed, p)) {
            gx_profile_free(p);
            return gx_fail(msg, GX_ERANGE, "gx_generate: seed %llu: no translation hierarchy",
                           (unsigned long long)seed);
        }
        gx_msg vm;
        gx_msg_clear(&vm);
        int rc = gx_profile_validate(p, &vm);
        if (rc != GX_OK) {
            gx_profile_free(p);
            return gx_fail(msg, rc, "gx_generate: seed %llu gave an invalid profile: %s",
                           (unsigned long long)seed, vm.text);
        }
        *out = p;
        return GX_OK;
    }
    return gx_fail(msg, GX_ERANGE, "gx_generate: no valid profile within the options");
}

gx_profile *gx_generate_profile(uint64_t seed, const gx_generate_opts *o)
{
    gx_profile *p = NULL;
    if (gx_generate(seed, o, &p, NULL) != GX_OK)
        return NULL;
    return p;
}
