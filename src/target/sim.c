/* sim.c - the sim target (Contract 2): answers discovery's primitives from
 * the model of a profile (l2.h), with its noise, like a GPU would.
 *
 * Models:
 * - info tells only what cudaGetDeviceProperties would: name, SM count,
 *   clock, the API's L2 size, the page size; nothing about slices, sets,
 *   hashes or latencies leaves the model.
 * - arena(bytes): a fresh virtual range whose 2 MiB (memory.page_bytes)
 *   pages get physical frames through a fresh seeded placement on first
 *   touch (seed = f(sim.frames_seed, open seed, arena counter)), within a
 *   64 GiB physical space.
 * - chase: one thread's dependent loads; the result is the mean of the
 *   per-access latencies over the timed steps plus one timer reading's
 *   overhead (timer.overhead_cycles + jitter) divided by the timed steps
 *   (one clock pair around the whole timed chain).
 * - seq: each op runs in order on SM sm; a timed load/store reports its
 *   latency + the timer overhead; a timed GX_OP_NONE reports the timer
 *   overhead + jitter only. Stores write-allocate like loads (the model
 *   has no write-back cost).
 * - prime_probe: each round of prime accesses runs in a fresh seeded
 *   shuffled order (many threads, order not guaranteed), each from an SM (seeded choice) that
 *   shares the target SM's near partition; then the probes run in order on
 *   SM sm, each timed (latency + timer overhead).
 *
 * Notes: the l2 runs with noise and skew on; all randomness comes from the
 * open seed (and the profile's frames_seed for placement), so the same seed
 * and the same calls give the same numbers. Translations are cached per
 * arena page (a flat array) so a chase costs one l2 access per step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/l2.h"
#include "gpuxray/placement.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "../model/noise.h"
#include "sim_smem.h"
#include "target_impl.h"

#define SIM_PHYS_BYTES (64ULL << 30)
_Static_assert(GX_PROFILE_MAX_PAGE_BYTES <= SIM_PHYS_BYTES,
               "a valid profile's page must fit the simulated frames");
#define SIM_MAX_ARENA_BYTES (8ULL << 30)
#define SIM_VA_STRIDE (1ULL << 40) /* each arena starts at a new TiB */
#define NO_FRAME UINT64_MAX
/* The chase knows its future addresses: each is hashed once (gx_l2_locate)
 * this many steps ahead and its sets loaded into the host's caches
 * (gx_l2_prefetch_loc). Measured on hopper-like (5 MB of model state, more
 * than the host's L2), 16-80 MiB chases: 5.3 -> 8.5 M accesses/s (CPU time,
 * loaded 2-core VM); distances 4-32 measured alike. */
#define CHASE_PREFETCH 8

typedef struct sim_target {
    gx_profile *prof;
    gx_l2 *l2;
    gx_placement *pl;
    uint64_t seed, arenas, va_base, page_bytes, page_shift;
    uint64_t *frames; /* per arena page: physical page base, NO_FRAME until touched */
    uint64_t npages;
    double overhead_cycles;
    gx_noise timer; /* jitter of timer readings */
    gx_rng rng;     /* prime order, prime SMs */
    uint32_t *near_sms; /* scratch: SMs of one partition */
    sim_smem *smem;     /* shared memory (sim_smem.c) */
} sim_target;

static void sim_close(void *impl)
{
    sim_target *s = impl;
    if (!s)
        return;
    gx_l2_free(s->l2);
    gx_placement_free(s->pl);
    gx_profile_free(s->prof);
    free(s->frames);
    free(s->near_sms);
    sim_smem_close(s->smem);
    free(s);
}

static int sim_arena(void *impl, uint64_t bytes, gx_msg *msg)
{
    sim_target *s = impl;
    uint64_t np = (bytes + s->page_bytes - 1) >> s->page_shift;
    uint64_t *f = malloc((size_t)np * sizeof *f);
    if (!f)
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory for an arena of %llu bytes",
                       (unsigned long long)bytes);
    for (uint64_t i = 0; i < np; i++)
        f[i] = NO_FRAME;
    free(s->frames);
    s->frames = f;
    s->npages = np;
    s->arenas++;
    s->va_base = s->arenas * SIM_VA_STRIDE;
    uint64_t pseed = gx_mix64(s->prof->sim.frames_seed ^ gx_mix64(s->seed) ^
                              gx_mix64(s->arenas * 0x9e3779b97f4a7c15ULL));
    gx_placement_reset(s->pl, pseed);
    return GX_OK;
}

static inline uint64_t translate(sim_target *s, uint64_t off)
{
    uint64_t pg = off >> s->page_shift;
    if (s->frames[pg] == NO_FRAME)
        s->frames[pg] = gx_placement_translate(s->pl, s->va_base + (pg << s->page_shift));
    return s->frames[pg] | (off & (s->page_bytes - 1));
}

static double timer_reading(sim_target *s)
{
    return s->overhead_cycles + gx_noise_jitter(&s->timer);
}

static int sim_chase(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg)
{
    sim_target *s = impl;
    uint64_t *pa = malloc(req->n * sizeof *pa);
    if (!pa)
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory for a chase of %zu offsets", req->n);
    for (size_t i = 0; i < req->n; i++)
        pa[i] = translate(s, req->offsets[i]);
    uint64_t steps = (uint64_t)req->timed_rounds * req->n;
    if (req->max_timed_steps && req->max_timed_steps < steps)
        steps = req->max_timed_steps;
    uint64_t warm = (uint64_t)req->warm_rounds * req->n;
    double sum = 0;
    gx_l2_result r;
    gx_l2_loc ring[CHASE_PREFETCH]; /* located, prefetched, not yet accessed */
    size_t ahead = 0;
    for (uint32_t d = 0; d < CHASE_PREFETCH; d++) {
        gx_l2_locate(s->l2, pa[ahead], &ring[d]);
        gx_l2_prefetch_loc(s->l2, &ring[d], req->sm);
        if (++ahead == req->n)
            ahead = 0;
    }
    for (uint64_t k = 0; k < warm + steps; k++) {
        gx_l2_loc *slot = &ring[k % CHASE_PREFETCH];
        gx_l2_access_loc(s->l2, slot, req->sm, GX_L2_READ, &r);
        if (k >= warm)
            sum += r.latency_cycles;
        gx_l2_locate(s->l2, pa[ahead], slot);
        gx_l2_prefetch_loc(s->l2, slot, req->sm);
        if (++ahead == req->n)
            ahead = 0;
    }
    free(pa);
    *mean_cycles = (sum + timer_reading(s)) / (double)steps;
    return GX_OK;
}

static int sim_seq(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
                   gx_msg *msg)
{
    (void)msg;
    sim_target *s = impl;
    size_t j = 0;
    gx_l2_result r;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind == GX_OP_NONE) {
            if (ops[i].timed)
                cycles[j++] = timer_reading(s);
            continue;
        }
        gx_l2_access(s->l2, translate(s, ops[i].offset), sm,
                     ops[i].kind == GX_OP_STORE ? GX_L2_WRITE : GX_L2_READ, &r);
        if (ops[i].timed)
            cycles[j++] = r.latency_cycles + s->overhead_cycles;
    }
    return GX_OK;
}

static int sim_prime_probe(void *impl, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                           const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                           gx_msg *msg)
{
    sim_target *s = impl;
    uint32_t part = gx_l2_sm_partition(s->l2, sm), n_near = 0;
    for (uint32_t k = 0; k < s->prof->device.sm_count; k++)
        if (gx_l2_sm_partition(s->l2, k) == part)
            s->near_sms[n_near++] = k;
    gx_l2_result r;
    if (n_prime) {
        uint64_t *order = malloc(n_prime * sizeof *order);
        if (!order)
            return gx_fail(msg, GX_ENOMEM, "sim: out of memory for %zu prime accesses", n_prime);
        memcpy(order, prime, n_prime * sizeof *order);
        for (uint32_t round = 0; round < rounds; round++) {
            gx_rng_shuffle_u64(&s->rng, order, n_prime);
            for (size_t i = 0; i < n_prime; i++) {
                uint32_t psm = s->near_sms[gx_rng_below(&s->rng, n_near)];
                gx_l2_access(s->l2, translate(s, order[i]), psm, GX_L2_READ, &r);
            }
        }
        free(order);
    }
    for (size_t i = 0; i < n_probe; i++) {
        gx_l2_access(s->l2, translate(s, probe[i]), sm, GX_L2_READ, &r);
        cycles[i] = r.latency_cycles + s->overhead_cycles;
    }
    return GX_OK;
}

/* shared memory: the bank model of sim_smem.c */
static int sim_smem_probe_op(void *impl, const gx_smem_probe_req *req, double *cycles,
                             gx_msg *msg)
{
    return sim_smem_probe(((sim_target *)impl)->smem, req, cycles, msg);
}

static const gx_target_ops sim_ops = {
    .close = sim_close,
    .arena = sim_arena,
    .chase = sim_chase,
    .seq = sim_seq,
    .prime_probe = sim_prime_probe,
    .smem_probe = sim_smem_probe_op,
};

static int check_runnable(const gx_profile *p, const char *path, gx_msg *msg)
{
    if (strcmp(p->provenance.kind, "reference") != 0 &&
        strcmp(p->provenance.kind, "simulated") != 0)
        return gx_fail(msg, GX_ECONFIG,
                       "%s: provenance.kind '%s' cannot be simulated (need reference or simulated)",
                       path, p->provenance.kind);
    /* page_bytes (a power of two, at most the 64 GiB of frames) and sm_count:
     * the profile's rules, applied by gx_l2_new (gx_profile_check_model) */
    return GX_OK;
}

int gx_sim_target_open(const char *profile_path, uint64_t seed, const gx_target_ops **ops,
                       void **impl, gx_target_info *info, gx_msg *msg)
{
    gx_profile *p = NULL;
    int rc = gx_profile_load(profile_path, &p, msg);
    if (rc != GX_OK)
        return rc;
    if ((rc = check_runnable(p, profile_path, msg)) != GX_OK) {
        gx_profile_free(p);
        return rc;
    }
    sim_target *s = calloc(1, sizeof *s);
    if (!s) {
        gx_profile_free(p);
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    }
    s->prof = p;
    s->seed = seed;
    s->page_bytes = p->memory.page_bytes;
    s->page_shift = (uint64_t)__builtin_ctzll(s->page_bytes);
    s->overhead_cycles = isfinite(p->timer_overhead_cycles) ? p->timer_overhead_cycles : 0;
    gx_l2_opts lo = {1, 1, gx_mix64(seed ^ 0x11a2b3ULL)};
    rc = gx_l2_new(p, &lo, &s->l2, msg);
    if (rc == GX_OK)
        rc = gx_placement_new(s->page_bytes, SIM_PHYS_BYTES, 0, &s->pl, msg);
    if (rc == GX_OK && !(s->near_sms = malloc(p->device.sm_count * sizeof *s->near_sms)))
        rc = gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    if (rc != GX_OK) {
        sim_close(s);
        return rc;
    }
    gx_noise_init(&s->timer, p->sim.present, p->sim.jitter_cycles, 0, 0, 0,
                  gx_mix64(seed ^ 0x7173e5ULL));
    gx_rng_seed(&s->rng, gx_mix64(seed ^ 0x9a1e5ULL));
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", p->device.name);
    info->sm_count = p->device.sm_count;
    info->sm_clock_mhz = p->device.sm_clock_mhz;
    info->api_l2_bytes = p->device.api_l2_bytes;
    info->page_bytes = s->page_bytes;
    info->max_arena_bytes = SIM_MAX_ARENA_BYTES;
    if ((rc = sim_smem_open(p, seed, &s->smem, info, msg)) != GX_OK) {
        sim_close(s);
        return rc;
    }
    *ops = &sim_ops;
    *impl = s;
    return GX_OK;
}
