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
 * - contend: the hammered line is loaded once from an SM of every partition
 *   (the hammers keep it present), then the probes run in order on SM sm
 *   like seq's loads (one untimed, reps timed, the least reported; the
 *   hammered line touched again after each probe as the hammers would). A probe whose serving
 *   slice (gx_l2_serving_slice) is the hammered line's, both seen from sm,
 *   waits behind the hammers' requests in that slice's queue: each hammer
 *   SM sending its loads of the line to that slice keeps
 *   SIM_CONTEND_IN_FLIGHT loads a warp outstanding there, served at
 *   SIM_SLICE_REQUESTS_PER_CYCLE, so the wait is in_flight x warps x SMs /
 *   rate cycles, +-SIM_CONTEND_JITTER of it per timed load (a stated model
 *   choice: the H200 showed 1000-1400 cycles with 131 SMs x 8 warps,
 *   data/nvidia-h200/contend-2026-12-02).
 *
 * - xchase: the timed window at 64 TiB and the thrashing one 16 TiB above,
 *   each aliased (gx_vmem_alias) onto one frame of its own; the two
 *   threads alternate one access each (the thrashing one first); each timed
 *   access reports its latency + the timer overhead + jitter.
 *
 * Notes: a client of the memory system (memsys.h), which joins the parts;
 * the l2 runs with noise and skew on; all randomness comes from the
 * open seed (and the profile's frames_seed for placement), so the same seed
 * and the same calls give the same numbers. vmem keeps the arena's frames
 * in a flat table, so a chase costs one l2 access per step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/l2.h"
#include "gpuxray/memsys.h"
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
/* translation chase windows (target.h): above every arena a run makes, below
 * the 48-bit VA (256 TiB) of a four-level table of 4 KiB pages */
#define SIM_XWIN_TIMED (64ULL << 40)
#define SIM_XWIN_THRASH (SIM_XWIN_TIMED + GX_XCHASE_MAX_WINDOW_BYTES)
/* The chase knows its future addresses: each is hashed once (gx_l2_locate)
 * this many steps ahead and its sets loaded into the host's caches
 * (gx_l2_prefetch_loc). Measured on hopper-like (5 MB of model state, more
 * than the host's L2), 16-80 MiB chases: 5.3 -> 8.5 M accesses/s (CPU time,
 * loaded 2-core VM); distances 4-32 measured alike. */
#define CHASE_PREFETCH 8
/* contention model (contend, above) */
#define SIM_CONTEND_IN_FLIGHT 4.0          /* loads a hammering warp keeps outstanding */
#define SIM_SLICE_REQUESTS_PER_CYCLE 2.0   /* a slice's service rate */
#define SIM_CONTEND_JITTER 0.25            /* relative spread of one load's wait */

typedef struct sim_target {
    gx_profile *prof;
    gx_memsys *ms;
    gx_l2 *l2;   /* the memsys's L2 */
    gx_vmem *vm; /* the memsys's virtual memory */
    uint64_t seed, arenas, va_base, page_bytes;
    int xlate;    /* the profile has a tlb section: accesses go through translation */
    double clock; /* cycles so far (translation's issue times: one access after another) */
    double overhead_cycles;
    gx_noise timer; /* jitter of timer readings */
    gx_rng rng;     /* prime order, prime SMs */
    gx_rng crng;    /* contention jitter (a stream of its own: contend leaves rng as it was) */
    uint32_t *near_sms; /* scratch: SMs of one partition */
    sim_smem *smem;     /* shared memory (sim_smem.c) */
} sim_target;

static void sim_close(void *impl)
{
    sim_target *s = impl;
    if (!s)
        return;
    gx_memsys_free(s->ms);
    gx_profile_free(s->prof);
    free(s->near_sms);
    sim_smem_close(s->smem);
    free(s);
}

static int sim_arena(void *impl, uint64_t bytes, gx_msg *msg)
{
    sim_target *s = impl;
    uint64_t va_base = (s->arenas + 1) * SIM_VA_STRIDE;
    uint64_t pseed = gx_mix64(s->prof->sim.frames_seed ^ gx_mix64(s->seed) ^
                              gx_mix64((s->arenas + 1) * 0x9e3779b97f4a7c15ULL));
    int rc = gx_vmem_arena(s->vm, va_base, bytes, pseed, msg);
    if (rc != GX_OK)
        return rc;
    s->arenas++;
    s->va_base = va_base;
    return GX_OK;
}

static inline uint64_t translate(sim_target *s, uint64_t off)
{
    return gx_vmem_pa(s->vm, s->va_base + off);
}

static double timer_reading(sim_target *s)
{
    return s->overhead_cycles + gx_noise_jitter(&s->timer);
}

/* One load or store of the target's memory: its latency (with translation:
 * a warp instruction of one request, issued when the previous one is done). */
static double mem_access(sim_target *s, uint64_t off, uint32_t sm, gx_l2_op op)
{
    if (s->xlate) {
        gx_memsys_req q = {s->va_base + off, sm, 1, (uint8_t)op};
        gx_memsys_res r;
        gx_memsys_access_group(s->ms, &q, 1, s->clock, &r);
        s->clock += r.latency_cycles;
        return r.latency_cycles;
    }
    uint64_t sectors = 0;
    return gx_memsys_access_off(s->ms, s->va_base + off, 1, sm, op, NULL, &sectors);
}

/* A chase with translation: every step through mem_access. */
static double chase_translated(sim_target *s, const gx_chase_req *req, uint64_t warm,
                               uint64_t steps)
{
    double sum = 0;
    size_t at = 0;
    for (uint64_t k = 0; k < warm + steps; k++) {
        double lat = mem_access(s, req->offsets[at], req->sm, GX_L2_READ);
        if (k >= warm)
            sum += lat;
        if (++at == req->n)
            at = 0;
    }
    return sum;
}

static int sim_chase(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg)
{
    (void)msg;
    sim_target *s = impl;
    /* frames are placed in offset order (as the chain is laid out), before
     * the chase looks ahead */
    for (size_t i = 0; i < req->n; i++)
        (void)translate(s, req->offsets[i]);
    uint64_t steps = (uint64_t)req->timed_rounds * req->n;
    if (req->max_timed_steps && req->max_timed_steps < steps)
        steps = req->max_timed_steps;
    uint64_t warm = (uint64_t)req->warm_rounds * req->n;
    if (s->xlate) {
        *mean_cycles = (chase_translated(s, req, warm, steps) + timer_reading(s)) / (double)steps;
        return GX_OK;
    }
    double sum = 0;
    uint64_t sectors = 0;
    gx_l2_loc ring[CHASE_PREFETCH]; /* located, prefetched, not yet accessed */
    uint64_t va[CHASE_PREFETCH];
    uint8_t have[CHASE_PREFETCH];
    size_t ahead = 0;
    for (uint32_t d = 0; d < CHASE_PREFETCH; d++) {
        va[d] = s->va_base + req->offsets[ahead];
        have[d] = (uint8_t)gx_memsys_locate_ahead(s->ms, va[d], req->sm, &ring[d]);
        if (++ahead == req->n)
            ahead = 0;
    }
    for (uint64_t k = 0; k < warm + steps; k++) {
        uint32_t slot = (uint32_t)(k % CHASE_PREFETCH);
        double lat = gx_memsys_access_off(s->ms, va[slot], 1, req->sm, GX_L2_READ,
                                          have[slot] ? &ring[slot] : NULL, &sectors);
        if (k >= warm)
            sum += lat;
        va[slot] = s->va_base + req->offsets[ahead];
        have[slot] = (uint8_t)gx_memsys_locate_ahead(s->ms, va[slot], req->sm, &ring[slot]);
        if (++ahead == req->n)
            ahead = 0;
    }
    *mean_cycles = (sum + timer_reading(s)) / (double)steps;
    return GX_OK;
}

static int sim_seq(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
                   gx_msg *msg)
{
    (void)msg;
    sim_target *s = impl;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind == GX_OP_NONE) {
            if (ops[i].timed)
                cycles[j++] = timer_reading(s);
            continue;
        }
        double lat = mem_access(s, ops[i].offset, sm,
                                ops[i].kind == GX_OP_STORE ? GX_L2_WRITE : GX_L2_READ);
        if (ops[i].timed)
            cycles[j++] = lat + s->overhead_cycles;
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
    if (n_prime) {
        uint64_t *order = malloc(n_prime * sizeof *order);
        if (!order)
            return gx_fail(msg, GX_ENOMEM, "sim: out of memory for %zu prime accesses", n_prime);
        memcpy(order, prime, n_prime * sizeof *order);
        for (uint32_t round = 0; round < rounds; round++) {
            gx_rng_shuffle_u64(&s->rng, order, n_prime);
            for (size_t i = 0; i < n_prime; i++) {
                uint32_t psm = s->near_sms[gx_rng_below(&s->rng, n_near)];
                (void)mem_access(s, order[i], psm, GX_L2_READ);
            }
        }
        free(order);
    }
    for (size_t i = 0; i < n_probe; i++) {
        cycles[i] = mem_access(s, probe[i], sm, GX_L2_READ) + s->overhead_cycles;
    }
    return GX_OK;
}

/* shared memory: the bank model of sim_smem.c */
static int sim_smem_probe_op(void *impl, const gx_smem_probe_req *req, double *cycles,
                             gx_msg *msg)
{
    return sim_smem_probe(((sim_target *)impl)->smem, req, cycles, msg);
}

/* Translation chase (target.h): the timed window and the thrashing one at
 * fixed places above the arenas, both aliased onto one physical frame. */
static double xchase_access(sim_target *s, uint64_t va, uint32_t sm)
{
    if (s->xlate) {
        gx_memsys_req q = {va, sm, 1, (uint8_t)GX_L2_READ};
        gx_memsys_res r;
        gx_memsys_access_group(s->ms, &q, 1, s->clock, &r);
        s->clock += r.latency_cycles;
        return r.latency_cycles;
    }
    uint64_t sectors = 0;
    return gx_memsys_access_off(s->ms, va, 1, sm, GX_L2_READ, NULL, &sectors);
}

static inline uint64_t xchase_va(uint64_t base, uint64_t stride, uint32_t i)
{
    return base + (uint64_t)i * stride;
}

static int sim_xchase(void *impl, const gx_xchase_req *req, double *cycles, gx_msg *msg)
{
    (void)msg;
    sim_target *s = impl;
    uint32_t at = 0, th = 0;
    const uint32_t rounds = req->warm_rounds + req->timed_rounds;
    for (uint32_t r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < req->steps; i++) {
            if (req->thrash_steps) {
                (void)xchase_access(s, xchase_va(SIM_XWIN_THRASH, req->thrash_stride_bytes, th),
                                    req->thrash_sm);
                if (++th == req->thrash_steps)
                    th = 0;
            }
            double lat = xchase_access(s, xchase_va(SIM_XWIN_TIMED, req->stride_bytes, i),
                                       req->sm);
            if (r >= req->warm_rounds)
                cycles[at++] = lat + timer_reading(s);
        }
    }
    return GX_OK;
}

/* Contention (target.h): see the notes at the top. */
static int sim_contend(void *impl, const gx_contend_req *req, double *cycles, gx_msg *msg)
{
    (void)msg;
    sim_target *s = impl;
    const uint32_t nsm = s->prof->device.sm_count, parts = s->prof->l2.partitions;
    const uint64_t hpa = translate(s, req->hammer_offset);
    const uint32_t hslice = gx_l2_serving_slice(s->l2, hpa, req->sm);
    uint32_t same = 0, near_hammer = req->sm;
    for (uint32_t k = 0; k < nsm; k++) {
        if (k == req->sm)
            continue;
        if (gx_l2_serving_slice(s->l2, hpa, k) == hslice)
            same++;
        if (near_hammer == req->sm &&
            gx_l2_sm_partition(s->l2, k) == gx_l2_sm_partition(s->l2, req->sm))
            near_hammer = k;
    }
    if (req->hammer_warps) /* the hammers keep the line present wherever they read it */
        for (uint32_t p = 0, k = 0; p < (parts ? parts : 1) && k < nsm; k++)
            if (k != req->sm && gx_l2_sm_partition(s->l2, k) == p) {
                (void)mem_access(s, req->hammer_offset, k, GX_L2_READ);
                p++;
            }
    const double wait = SIM_CONTEND_IN_FLIGHT * req->hammer_warps * same /
                        SIM_SLICE_REQUESTS_PER_CYCLE;
    for (size_t i = 0; i < req->n_probes; i++) {
        const uint64_t off = req->probes[i];
        const int queued = wait > 0 && gx_l2_serving_slice(s->l2, translate(s, off), req->sm) ==
                                           hslice;
        (void)mem_access(s, off, req->sm, GX_L2_READ);
        double least = INFINITY;
        for (uint32_t r = 0; r < req->reps; r++) {
            double c = mem_access(s, off, req->sm, GX_L2_READ) + s->overhead_cycles;
            if (queued)
                c += wait * (1.0 + SIM_CONTEND_JITTER * (2.0 * gx_rng_uniform(&s->crng) - 1.0));
            least = c < least ? c : least;
        }
        cycles[i] = least;
        if (req->hammer_warps && near_hammer != req->sm)
            (void)mem_access(s, req->hammer_offset, near_hammer, GX_L2_READ);
    }
    return GX_OK;
}

static const gx_target_ops sim_ops = {
    .close = sim_close,
    .arena = sim_arena,
    .chase = sim_chase,
    .seq = sim_seq,
    .prime_probe = sim_prime_probe,
    .smem_probe = sim_smem_probe_op,
    .xchase = sim_xchase,
    .contend = sim_contend,
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
    s->overhead_cycles = isfinite(p->timer_overhead_cycles) ? p->timer_overhead_cycles : 0;
    gx_memsys_cfg mc = {1, 1, gx_mix64(seed ^ 0x11a2b3ULL), 0, SIM_PHYS_BYTES};
    rc = gx_memsys_new(p, &mc, &s->ms, msg);
    if (rc == GX_OK) {
        s->l2 = gx_memsys_l2(s->ms);
        s->vm = gx_memsys_vmem(s->ms);
        s->xlate = gx_memsys_translating(s->ms);
        gx_vmem_alias(s->vm, SIM_XWIN_TIMED, 2 * GX_XCHASE_MAX_WINDOW_BYTES,
                      (uint32_t)__builtin_ctzll(GX_XCHASE_MAX_WINDOW_BYTES), SIM_XWIN_TIMED);
    }
    if (rc == GX_OK && !(s->near_sms = malloc(p->device.sm_count * sizeof *s->near_sms)))
        rc = gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    if (rc != GX_OK) {
        sim_close(s);
        return rc;
    }
    gx_noise_init(&s->timer, p->sim.present, p->sim.jitter_cycles, 0, 0, 0,
                  gx_mix64(seed ^ 0x7173e5ULL));
    gx_rng_seed(&s->rng, gx_mix64(seed ^ 0x9a1e5ULL));
    gx_rng_seed(&s->crng, gx_mix64(seed ^ 0xc0117e5dULL));
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
