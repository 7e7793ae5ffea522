/* cuda.c - the cuda target (Contract 2 of DESIGN.md): answers discovery's
 * primitives with kernels (src/kernels/gx_probe.cu, embedded as a fatbin)
 * on a real GPU, driven from C through the CUDA driver API opened with
 * dlopen (cuda_driver.h), so one gpuxray binary runs with and without a GPU.
 *
 * Models / semantics:
 * - info: name, SM count, clock (CLOCK_RATE), the API's L2 size (a hint),
 *   page_bytes = the driver's minimum allocation granularity for device
 *   memory (cuMemGetAllocationGranularity, 2 MiB on sm_80..sm_90: the GPU's
 *   large page), max_arena_bytes = min(free memory / 2, 64 GiB).
 * - arena: plain cuMemAlloc of bytes + one page, its base aligned up to a
 *   page so arena offsets and page offsets agree. The new arena is allocated
 *   before the old one is freed, so it never reuses the previous arena's
 *   frames (older ones it may).
 * - chase: the offsets are uploaded and two kernels build the pointer chain
 *   in the arena ON THE DEVICE (word off[i] <- address of word off[i+1]),
 *   detecting duplicate offsets (a chain visits each word once a round:
 *   duplicates are rejected with GX_EINVAL). The chain is cached: the same
 *   offsets again are not rebuilt unless the arena changed or a seq stored
 *   into it. One thread on the wanted SM walks warm then timed steps with
 *   ld.global.cg; mean = cycles between the two clock64 reads / steps.
 *   The walk's end pointer is checked against the expected offset.
 * - seq: ops packed (gx_kernels_abi.h) and run in chunks of what fits in
 *   shared memory (ops + per-op cycles); the cache state carries over
 *   between chunk launches (a launch touches a few lines of its own).
 * - prime_probe: one block of GX_PP_THREADS threads on the wanted SM loads
 *   the prime set `rounds` times (a block barrier after each round), then
 *   thread 0 times the probes. Prime offsets that do not
 *   fit in shared memory are read from device memory during the prime (one
 *   extra line per 16 prime offsets passes through L2). Probes beyond one
 *   launch's capacity run in further launches without prime.
 * - SM choice: %smid values are learnt once by a census kernel at open;
 *   logical SM i is the i-th smallest %smid seen (the identity when the ids
 *   are 0..sm_count-1). Every probe block asks for more than half an SM's
 *   shared memory, so a launch of sm_count blocks puts one on each SM; the
 *   block on the wanted SM claims the job with the launch's ticket (never
 *   repeated, so nothing is cleared between launches), and one copy back
 *   brings the result slots and the cycles together.
 * - Bounds: each kernel gets a cycle budget (GX_CUDA_FIXED_CYCLES +
 *   GX_CUDA_CYCLES_PER_ACCESS per access; GX_CUDA_BUDGET_CYCLES in the
 *   environment overrides it, for tests) and stops itself with
 *   GX_ST_TIMEOUT; the host also polls with a wall-clock limit of twice the
 *   budget at the nominal clock + 5 s and gives the context up past it.
 *
 * - xchase: two windows (timed, thrashing), each a VA reservation (room
 *   for the longest chain of its stride when the driver grants it) whose
 *   touched granules are mapped (cuMemMap) onto one zeroed physical granule
 *   of its own; a window is kept while the stride stays and grows by
 *   mapping more granules. gx_xchase times every access (u16 cycles in
 *   shared memory, copied out after the run); timed rounds are split over
 *   launches of what shared memory holds, each later launch repeating one
 *   warm round. The thrashing block (claimed through res[AUX]) runs until
 *   the timed one is done.
 *
 * Notes: every driver call is checked; failures name the call and the
 * driver's error name and text. After a kernel fault or a host timeout the
 * context is unusable and every later call fails with GX_EDEVICE. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuxray/clock.h"

#include "../kernels/gx_kernels_abi.h"
#include "cuda_debug.h"
#include "cuda_driver.h"
#include "target_impl.h"

#ifdef GX_HAVE_KERNELS
extern const unsigned char gx_kernels_fatbin[];
extern const size_t gx_kernels_fatbin_bytes;
#endif

#define GX_CUDA_MAX_ARENA_BYTES (64ULL << 30)
#define GX_CUDA_DEFAULT_PAGE_BYTES (2ULL << 20)
#define GX_CUDA_CYCLES_PER_ACCESS 10000ULL
#define GX_CUDA_FIXED_CYCLES 20000000ULL
#define GX_CUDA_LINGER_CYCLES 200000ULL /* ~0.1 ms: keeps a launch's first wave on every SM */
#define GX_CUDA_PIN_ATTEMPTS 4
#define GX_CUDA_BUILD_GRID_MAX 8192u

/* A translation chase window: a VA reservation whose granules touched so
 * far are mapped onto one physical granule (handle) of its own. */
typedef struct cuda_xwin {
    CUmemGenericAllocationHandle h; /* 0: none yet */
    CUdeviceptr va;                 /* 0: no reservation */
    size_t bytes;                   /* reserved */
    uint64_t stride;
    uint64_t mapped;                /* granules mapped, from the start of the window */
    uint64_t *map_at;               /* their VAs (to unmap) */
    size_t map_cap;
} cuda_xwin;

typedef struct cuda_target {
    gx_cu_api api;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_chase, f_seq, f_pp, f_clear, f_link, f_census;
    CUfunction f_smem;      /* gx_smem_probe (gx_smem.cu) */
    CUfunction f_xchase;    /* gx_xchase */
    cuda_xwin xwin[2];      /* translation chase windows: timed, thrashing */
    CUdeviceptr d_flags;    /* xchase: thrasher running / timed done / sink */
    CUdeviceptr d_xcyc;     /* xchase: u16 cycles of one launch */
    size_t d_xcyc_bytes;
    uint16_t *h_xcyc;
    size_t h_xcyc_cap;
    uint32_t smem_probe_smem; /* its dynamic shared memory: header + the 64 KiB window */
    uint32_t sm_count;
    uint32_t *smid_map;     /* logical SM -> %smid */
    uint32_t pin_smem;      /* dynamic shared memory of every probe block */
    uint32_t pp_smem;       /* prime_probe's: all an SM allows a block (>= pin_smem), so
                               large prime sets stay in shared memory */
    int one_block_per_sm;   /* pin_smem keeps a second block off an SM */
    uint32_t pp_threads;
    double clock_hz;
    uint64_t budget_override; /* GX_CUDA_BUDGET_CYCLES, 0: none */
    uint64_t page_bytes;
    CUdeviceptr arena_raw, arena;
    CUdeviceptr d_out; /* result slots, then per-op cycles (u32): one copy back */
    size_t d_out_bytes;
    CUdeviceptr d_buf; /* offsets / packed ops going in */
    size_t d_buf_bytes;
    uint64_t *h_buf;
    size_t h_buf_cap;
    uint64_t *h_out; /* host copy of d_out */
    size_t h_out_cap; /* u64 words */
    uint64_t ticket;  /* claim tickets: never repeated */
    uint64_t launches, relaunches;
    uint64_t *chain; /* offsets of the chain now built in the arena */
    size_t chain_n, chain_cap;
    int chain_valid;
    int broken;
} cuda_target;

static int cu_fail(cuda_target *c, CUresult r, int code, const char *prefix, const char *what,
                   gx_msg *msg)
{
    char b[256];
    return gx_fail(msg, code, "%s%s failed: %s", prefix, what,
                   gx_cu_strerror(&c->api, r, b, sizeof b));
}

/* A checked driver call inside a primitive: GX_EDEVICE naming the call. */
#define CU_TRY(c, call, what, msg)                                                  \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != GX_CUDA_SUCCESS)                                                  \
            return cu_fail((c), r_, GX_EDEVICE, "cuda: ", (what), (msg));          \
    } while (0)

/* A checked driver call while opening: GX_ENODEV, "no usable CUDA device". */
#define CU_OPEN(c, call, what, msg)                                                 \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != GX_CUDA_SUCCESS)                                                  \
            return cu_fail((c), r_, GX_ENODEV, "no usable CUDA device: ", (what), (msg)); \
    } while (0)

static uint64_t budget_for(const cuda_target *c, uint64_t accesses)
{
    if (c->budget_override)
        return c->budget_override;
    if (accesses > (UINT64_MAX - GX_CUDA_FIXED_CYCLES) / GX_CUDA_CYCLES_PER_ACCESS)
        return UINT64_MAX;
    return GX_CUDA_FIXED_CYCLES + GX_CUDA_CYCLES_PER_ACCESS * accesses;
}

static int ensure_dev(cuda_target *c, CUdeviceptr *p, size_t *cap, size_t need, gx_msg *msg)
{
    if (*cap >= need)
        return GX_OK;
    size_t n = need < 2 * *cap ? 2 * *cap : need;
    if (n < 65536)
        n = 65536;
    if (*p)
        c->api.MemFree(*p);
    *p = 0;
    *cap = 0;
    CU_TRY(c, c->api.MemAlloc(p, n), "cuMemAlloc (scratch buffer)", msg);
    *cap = n;
    return GX_OK;
}

/* Grow a host array; pp points to the array pointer (any object type). */
static int ensure_host(void *pp, size_t *cap, size_t need, size_t elem, gx_msg *msg)
{
    if (*cap >= need)
        return GX_OK;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, need * elem);
    if (!q)
        return gx_fail(msg, GX_ENOMEM, "cuda: out of memory for %zu staging entries", need);
    memcpy(pp, &q, sizeof q);
    *cap = need;
    return GX_OK;
}

/* Wait for the default stream with a wall-clock limit. */
static int wait_kernel(cuda_target *c, const char *name, double limit_s, gx_msg *msg)
{
    const double t0 = gx_monotonic_seconds();
    unsigned long polls = 0;
    for (;;) {
        CUresult r = c->api.StreamQuery(NULL);
        if (r == GX_CUDA_SUCCESS)
            return GX_OK;
        if (r != GX_CUDA_ERROR_NOT_READY) {
            c->broken = 1;
            char what[96];
            snprintf(what, sizeof what, "kernel %s (cuStreamQuery)", name);
            return cu_fail(c, r, GX_EDEVICE, "cuda: ", what, msg);
        }
        if (gx_monotonic_seconds() - t0 > limit_s) {
            c->broken = 1;
            return gx_fail(msg, GX_ETIMEOUT,
                           "cuda: kernel %s still running after %.1f s (host wall-clock limit); "
                           "the GPU context is given up",
                           name, limit_s);
        }
        if (++polls > 4096) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

static int launch(cuda_target *c, CUfunction f, const char *name, unsigned grid, unsigned block,
                  unsigned smem, void **params, uint64_t budget, gx_msg *msg)
{
    CUresult r = c->api.LaunchKernel(f, grid, 1, 1, block, 1, 1, smem, NULL, params, NULL);
    if (r != GX_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuLaunchKernel(%s)", name);
        return cu_fail(c, r, GX_EDEVICE, "cuda: ", what, msg);
    }
    double limit = 5.0 + 2.0 * (double)budget / c->clock_hz;
    return wait_kernel(c, name, limit, msg);
}

/* Make d_out (and its host copy) hold the result slots and n_cycles u32. */
static int ensure_out(cuda_target *c, size_t n_cycles, gx_msg *msg)
{
    const size_t bytes = GX_R_SLOTS * sizeof(uint64_t) + (n_cycles + 1) * sizeof(uint32_t);
    int rc = ensure_dev(c, &c->d_out, &c->d_out_bytes, bytes, msg);
    if (rc == GX_OK)
        rc = ensure_host(&c->h_out, &c->h_out_cap, (bytes + 7) / 8, sizeof(uint64_t), msg);
    return rc;
}

/* Copy back the result slots and n_cycles u32 after them (into h_out). */
static int read_out(cuda_target *c, size_t n_cycles, gx_msg *msg)
{
    CU_TRY(c, c->api.MemcpyDtoH(c->h_out, c->d_out,
                                GX_R_SLOTS * sizeof(uint64_t) + n_cycles * sizeof(uint32_t)),
           "cuMemcpyDtoH (results)", msg);
    return GX_OK;
}

static const uint32_t *out_cycles(const cuda_target *c)
{
    return (const uint32_t *)(const void *)(c->h_out + GX_R_SLOTS);
}

/* Launch a pinned kernel until the block on SM `sm` ran it; then h_out
 * holds its result slots and n_cycles cycle values. *linger, *smid and
 * *ticket point into the kernel's parameters. */
static int run_pinned(cuda_target *c, CUfunction f, const char *name, unsigned threads,
                      unsigned smem, uint32_t sm, void **params, uint64_t *linger,
                      uint32_t *smid, uint64_t *ticket, uint64_t budget, size_t n_cycles,
                      gx_msg *msg)
{
    int rc;
    *smid = c->smid_map[sm];
    for (int attempt = 0; attempt < GX_CUDA_PIN_ATTEMPTS; attempt++) {
        unsigned grid = c->sm_count;
        if (!c->one_block_per_sm || attempt >= 2)
            grid *= 4;
        *linger = (attempt == 0 && c->one_block_per_sm) ? 0 : GX_CUDA_LINGER_CYCLES;
        *ticket = ++c->ticket;
        c->launches++;
        if (attempt)
            c->relaunches++;
        if ((rc = launch(c, f, name, grid, threads, smem, params, budget, msg)) != GX_OK)
            return rc;
        if ((rc = read_out(c, n_cycles, msg)) != GX_OK)
            return rc;
        if (c->h_out[GX_R_CLAIM] == *ticket && c->h_out[GX_R_STATUS] != GX_ST_MOVED)
            return GX_OK;
    }
    return gx_fail(msg, GX_EDEVICE,
                   "cuda: kernel %s did not run on SM %u (%%smid %u) in %d launches "
                   "(is another process using the GPU?)",
                   name, sm, *smid, GX_CUDA_PIN_ATTEMPTS);
}

static int check_usable(cuda_target *c, gx_msg *msg)
{
    if (c->broken)
        return gx_fail(msg, GX_EDEVICE,
                       "cuda: the GPU context is unusable after an earlier kernel failure or timeout");
    if (!c->arena)
        return gx_fail(msg, GX_EINVAL, "cuda: no arena");
    CU_TRY(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    return GX_OK;
}

static void free_dev(cuda_target *c, CUdeviceptr *p)
{
    if (*p)
        c->api.MemFree(*p);
    *p = 0;
}

/* Unmap a window's granules and free its reservation (and, with all, its
 * physical granule). Errors are ignored: this only gives memory back. */
static void xwin_drop(cuda_target *c, cuda_xwin *w, int all)
{
    if (!c->api.MemUnmap)
        return;
    for (uint64_t k = 0; k < w->mapped; k++)
        c->api.MemUnmap(w->map_at[k], c->page_bytes);
    w->mapped = 0;
    if (w->va)
        c->api.MemAddressFree(w->va, w->bytes);
    w->va = 0;
    w->bytes = 0;
    if (all && w->h) {
        c->api.MemRelease(w->h);
        w->h = 0;
    }
}

static void cuda_close(void *impl)
{
    cuda_target *c = impl;
    if (!c)
        return;
    if (c->api.lib) {
        if (c->ctx)
            c->api.CtxSetCurrent(c->ctx);
        free_dev(c, &c->arena_raw);
        free_dev(c, &c->d_out);
        free_dev(c, &c->d_buf);
        for (int w = 0; w < 2; w++)
            xwin_drop(c, &c->xwin[w], 1);
        free_dev(c, &c->d_flags);
        free_dev(c, &c->d_xcyc);
        if (c->mod)
            c->api.ModuleUnload(c->mod);
        if (c->ctx)
            c->api.DevicePrimaryCtxRelease(c->dev);
        gx_cu_api_unload(&c->api);
    }
    free(c->smid_map);
    free(c->h_buf);
    free(c->h_out);
    free(c->chain);
    free(c->h_xcyc);
    for (int w = 0; w < 2; w++)
        free(c->xwin[w].map_at);
    free(c);
}

/* ---- arena ------------------------------------------------------------ */

static int cuda_arena(void *impl, uint64_t bytes, gx_msg *msg)
{
    cuda_target *c = impl;
    if (c->broken)
        return gx_fail(msg, GX_EDEVICE, "cuda: the GPU context is unusable after an earlier failure");
    CU_TRY(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    c->chain_valid = 0;
    CUdeviceptr raw = 0;
    const size_t want = (size_t)(bytes + c->page_bytes);
    CUresult r = c->api.MemAlloc(&raw, want);
    if (r != GX_CUDA_SUCCESS && c->arena_raw) {
        /* not enough memory for old and new at once: give the old one back */
        free_dev(c, &c->arena_raw);
        c->arena = 0;
        r = c->api.MemAlloc(&raw, want);
    }
    if (r != GX_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes) for the arena", want);
        return cu_fail(c, r, GX_ENOMEM, "cuda: ", what, msg);
    }
    free_dev(c, &c->arena_raw);
    c->arena_raw = raw;
    c->arena = (raw + c->page_bytes - 1) / c->page_bytes * c->page_bytes;
    return GX_OK;
}

/* ---- chase ------------------------------------------------------------ */

static int build_chain(cuda_target *c, const uint64_t *off, size_t n, gx_msg *msg)
{
    int rc;
    if (c->chain_valid && c->chain_n == n && memcmp(c->chain, off, n * sizeof *off) == 0)
        return GX_OK;
    c->chain_valid = 0;
    if ((rc = ensure_dev(c, &c->d_buf, &c->d_buf_bytes, n * sizeof *off, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, off, n * sizeof *off), "cuMemcpyHtoD (chase offsets)",
           msg);
    CU_TRY(c, c->api.MemsetD8(c->d_out, 0, GX_R_SLOTS * sizeof(uint64_t)),
           "cuMemsetD8 (results)", msg);
    uint64_t n64 = n;
    size_t blocks = (n + GX_BUILD_THREADS - 1) / GX_BUILD_THREADS;
    unsigned grid = blocks > GX_CUDA_BUILD_GRID_MAX ? GX_CUDA_BUILD_GRID_MAX : (unsigned)blocks;
    void *p_clear[] = {&c->arena, &c->d_buf, &n64};
    void *p_link[] = {&c->arena, &c->d_buf, &n64, &c->d_out};
    uint64_t budget = budget_for(c, n);
    if ((rc = launch(c, c->f_clear, "gx_chain_clear", grid, GX_BUILD_THREADS, 0, p_clear, budget,
                     msg)) != GX_OK)
        return rc;
    if ((rc = launch(c, c->f_link, "gx_chain_link", grid, GX_BUILD_THREADS, 0, p_link, budget,
                     msg)) != GX_OK)
        return rc;
    if ((rc = read_out(c, 0, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_DUP)
        return gx_fail(msg, GX_EINVAL,
                       "cuda: chase offsets must be distinct 8-byte words, but offset %llu appears "
                       "more than once (a pointer chain visits each word once a round; use seq "
                       "for repeated accesses)",
                       (unsigned long long)res[GX_R_AUX]);
    if ((rc = ensure_host(&c->chain, &c->chain_cap, n, sizeof *off, msg)) != GX_OK)
        return rc;
    memcpy(c->chain, off, n * sizeof *off);
    c->chain_n = n;
    c->chain_valid = 1;
    return GX_OK;
}

static int cuda_chase(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = check_usable(c, msg)) != GX_OK)
        return rc;
    if ((rc = build_chain(c, req->offsets, req->n, msg)) != GX_OK)
        return rc;
    const uint64_t n = req->n;
    uint64_t warm = (uint64_t)req->warm_rounds * n;
    uint64_t timed = (uint64_t)req->timed_rounds * n;
    if (req->max_timed_steps && req->max_timed_steps < timed)
        timed = req->max_timed_steps;
    CUdeviceptr start = c->arena + req->offsets[0];
    uint64_t budget = budget_for(c, warm + timed), linger = 0, ticket = 0;
    uint32_t smid = 0;
    void *params[] = {&start, &warm, &timed, &smid, &linger, &budget, &c->d_out, &ticket};
    if ((rc = run_pinned(c, c->f_chase, "gx_chase", GX_CHASE_THREADS, c->pin_smem, req->sm, params,
                         &linger, &smid, &ticket, budget, 0, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_TIMEOUT)
        return gx_fail(msg, GX_ETIMEOUT,
                       "cuda: chase on SM %u stopped by its budget of %llu cycles after %llu of "
                       "%llu timed steps",
                       req->sm, (unsigned long long)budget, (unsigned long long)res[GX_R_STEPS],
                       (unsigned long long)timed);
    const uint64_t expect = c->arena + req->offsets[(warm + timed) % n];
    if (res[GX_R_SINK] != expect || res[GX_R_STEPS] != timed) {
        c->chain_valid = 0;
        return gx_fail(msg, GX_EDEVICE,
                       "cuda: chase ended at arena offset %lld after %llu timed steps, expected "
                       "offset %llu after %llu (chain corrupted?)",
                       (long long)(res[GX_R_SINK] - c->arena), (unsigned long long)res[GX_R_STEPS],
                       (unsigned long long)(expect - c->arena), (unsigned long long)timed);
    }
    *mean_cycles = (double)res[GX_R_CYCLES] / (double)timed;
    return GX_OK;
}

/* ---- seq ---------------------------------------------------------------- */

static size_t seq_capacity(const cuda_target *c)
{
    return (c->pin_smem - GX_HDR_BYTES) / (sizeof(uint64_t) + sizeof(uint32_t));
}

static void copy_cycles(const cuda_target *c, size_t nt, double *out)
{
    const uint32_t *cyc = out_cycles(c);
    for (size_t k = 0; k < nt; k++)
        out[k] = (double)cyc[k];
}

static int seq_chunk(cuda_target *c, const gx_seq_op *ops, size_t m, uint32_t sm, double *cycles,
                     size_t *n_timed, gx_msg *msg)
{
    int rc;
    if ((rc = ensure_host(&c->h_buf, &c->h_buf_cap, m, sizeof *c->h_buf, msg)) != GX_OK)
        return rc;
    size_t nt = 0;
    for (size_t i = 0; i < m; i++) {
        uint64_t w = ops[i].offset & GX_OPW_OFFSET_MASK;
        w |= (uint64_t)ops[i].kind << GX_OPW_KIND_SHIFT;
        if (ops[i].timed) {
            w |= GX_OPW_TIMED_BIT;
            nt++;
        }
        c->h_buf[i] = w;
    }
    if ((rc = ensure_dev(c, &c->d_buf, &c->d_buf_bytes, m * sizeof(uint64_t), msg)) != GX_OK)
        return rc;
    if ((rc = ensure_out(c, m, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, c->h_buf, m * sizeof(uint64_t)),
           "cuMemcpyHtoD (seq ops)", msg);
    uint64_t m64 = m, zero = 0, linger = 0, budget = budget_for(c, m), ticket = 0;
    uint32_t smid = 0;
    CUdeviceptr d_cyc = c->d_out + GX_R_SLOTS * sizeof(uint64_t);
    void *params[] = {&c->arena, &c->d_buf, &m64,      &smid,  &linger,
                      &zero,     &budget,   &c->d_out, &d_cyc, &ticket};
    if ((rc = run_pinned(c, c->f_seq, "gx_seq", GX_SEQ_THREADS, c->pin_smem, sm, params, &linger,
                         &smid, &ticket, budget, nt, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_TIMEOUT)
        return gx_fail(msg, GX_ETIMEOUT,
                       "cuda: seq on SM %u stopped by its budget of %llu cycles after %llu of %zu ops",
                       sm, (unsigned long long)budget, (unsigned long long)res[GX_R_STEPS], m);
    if (res[GX_R_STEPS] != m || res[GX_R_NTIMED] != nt)
        return gx_fail(msg, GX_EDEVICE, "cuda: seq ran %llu of %zu ops and timed %llu of %zu",
                       (unsigned long long)res[GX_R_STEPS], m,
                       (unsigned long long)res[GX_R_NTIMED], nt);
    copy_cycles(c, nt, cycles);
    *n_timed = nt;
    return GX_OK;
}

static int cuda_seq(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
                    gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = check_usable(c, msg)) != GX_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (ops[i].kind == GX_OP_STORE)
            c->chain_valid = 0; /* stores may overwrite chain words */
    const size_t cap = seq_capacity(c);
    size_t done = 0, j = 0;
    while (done < n) {
        size_t m = n - done < cap ? n - done : cap, nt = 0;
        if ((rc = seq_chunk(c, ops + done, m, sm, cycles + j, &nt, msg)) != GX_OK)
            return rc;
        done += m;
        j += nt;
    }
    return GX_OK;
}

/* ---- prime + probe ------------------------------------------------------ */

static int pp_chunk(cuda_target *c, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                    const uint64_t *probe, size_t m, uint32_t sm, double *cycles, gx_msg *msg)
{
    int rc;
    const size_t room = c->pp_smem - GX_HDR_BYTES;
    const int in_smem = m * 12 + n_prime * 8 <= room;
    const size_t words = m + n_prime;
    if ((rc = ensure_dev(c, &c->d_buf, &c->d_buf_bytes, words * sizeof(uint64_t), msg)) != GX_OK)
        return rc;
    if ((rc = ensure_out(c, m, msg)) != GX_OK)
        return rc;
    if (m)
        CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, probe, m * sizeof(uint64_t)),
               "cuMemcpyHtoD (probe offsets)", msg);
    if (n_prime)
        CU_TRY(c, c->api.MemcpyHtoD(c->d_buf + m * sizeof(uint64_t), prime,
                                    n_prime * sizeof(uint64_t)),
               "cuMemcpyHtoD (prime offsets)", msg);
    CUdeviceptr d_probe = c->d_buf, d_prime = c->d_buf + m * sizeof(uint64_t);
    uint64_t np = n_prime, m64 = m, zero = 0, linger = 0, ticket = 0;
    uint64_t budget = budget_for(c, n_prime * rounds + m);
    uint32_t in = in_smem ? 1u : 0u, smid = 0, nr = n_prime ? rounds : 1u;
    CUdeviceptr d_cyc = c->d_out + GX_R_SLOTS * sizeof(uint64_t);
    void *params[] = {&c->arena, &d_prime, &np,     &in,       &nr,    &d_probe, &m64,
                      &smid,     &linger,  &zero,   &budget,   &c->d_out, &d_cyc, &ticket};
    if ((rc = run_pinned(c, c->f_pp, "gx_prime_probe", c->pp_threads, c->pp_smem, sm, params,
                         &linger, &smid, &ticket, budget, m, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_TIMEOUT)
        return gx_fail(msg, GX_ETIMEOUT,
                       "cuda: prime_probe on SM %u stopped by its budget of %llu cycles "
                       "(%zu prime x %u rounds, %llu of %zu probes done)",
                       sm, (unsigned long long)budget, n_prime, nr,
                       (unsigned long long)res[GX_R_STEPS], m);
    if (res[GX_R_STEPS] != m)
        return gx_fail(msg, GX_EDEVICE, "cuda: prime_probe timed %llu of %zu probes",
                       (unsigned long long)res[GX_R_STEPS], m);
    copy_cycles(c, m, cycles);
    return GX_OK;
}

static int cuda_prime_probe(void *impl, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                            const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                            gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = check_usable(c, msg)) != GX_OK)
        return rc;
    const size_t cap = (c->pp_smem - GX_HDR_BYTES) / 12;
    size_t done = 0;
    do { /* the first launch primes; probes beyond one launch's room follow without prime */
        size_t m = n_probe - done < cap ? n_probe - done : cap;
        if ((rc = pp_chunk(c, done ? NULL : prime, done ? 0 : n_prime, rounds, probe + done, m,
                           sm, cycles ? cycles + done : NULL, msg)) != GX_OK)
            return rc;
        done += m;
    } while (done < n_probe);
    return GX_OK;
}

/* ---- shared memory ------------------------------------------------------ */

_Static_assert(GX_SMEM_WINDOW_BYTES == GX_SMEM_PROBE_WINDOW,
               "the kernel's window is the primitive's window");

/* One warp's dependent shared-memory loads (gx_smem.cu): the 32 lane
 * offsets go in through d_buf, the cycles of the reps timed loads come back
 * in the result slots. Needs no arena. */
static int cuda_smem_probe(void *impl, const gx_smem_probe_req *req, double *cycles,
                           gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if (c->broken)
        return gx_fail(msg, GX_EDEVICE, "cuda: the GPU context is unusable after an earlier failure");
    if (!c->smem_probe_smem)
        return gx_fail(msg, GX_EUNSUPPORTED,
                       "cuda: a block cannot have the %u-byte shared-memory probe window",
                       GX_SMEM_PROBE_WINDOW);
    CU_TRY(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    if ((rc = ensure_dev(c, &c->d_buf, &c->d_buf_bytes, sizeof req->lane_offsets, msg)) != GX_OK ||
        (rc = ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, req->lane_offsets, sizeof req->lane_offsets),
           "cuMemcpyHtoD (lane offsets)", msg);
    uint32_t active = req->active, width = req->width_bytes, reps = req->reps, smid = 0;
    uint64_t linger = 0, ticket = 0;
    void *params[] = {&c->d_buf, &active, &width, &reps, &smid, &linger, &c->d_out, &ticket};
    uint64_t budget = budget_for(c, (uint64_t)reps * 32u);
    if ((rc = run_pinned(c, c->f_smem, "gx_smem_probe", 32, c->smem_probe_smem, req->sm, params,
                         &linger, &smid, &ticket, budget, 0, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STEPS] != reps)
        return gx_fail(msg, GX_EDEVICE, "cuda: smem_probe ran %llu of %u timed loads",
                       (unsigned long long)res[GX_R_STEPS], reps);
    *cycles = (double)res[GX_R_CYCLES] / (double)reps;
    return GX_OK;
}

/* ---- translation chase --------------------------------------------------- */

/* Make window w hold steps pages at stride (mapped, zeroed physical granule). */
static int xwin_prepare(cuda_target *c, cuda_xwin *w, uint64_t stride, uint64_t steps,
                        gx_msg *msg)
{
    const uint64_t g = c->page_bytes;
    if (!w->h) {
        gx_cu_alloc_prop prop;
        memset(&prop, 0, sizeof prop);
        prop.type = GX_CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = GX_CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = c->dev;
        CU_TRY(c, c->api.MemCreate(&w->h, g, &prop, 0), "cuMemCreate (xchase granule)", msg);
    }
    const uint64_t need = (steps - 1) * stride + g;
    if (w->va && (w->stride != stride || w->bytes < need))
        xwin_drop(c, w, 0);
    if (!w->va) {
        /* room for the longest chain of this stride, else just this one */
        uint64_t max = (uint64_t)(GX_XCHASE_MAX_WINDOW_BYTES / stride);
        if (max > GX_XCHASE_MAX_STEPS)
            max = GX_XCHASE_MAX_STEPS;
        uint64_t want = ((max - 1) * stride + g + g - 1) / g * g;
        CUdeviceptr va = 0;
        if (c->api.MemAddressReserve(&va, want, g, 0, 0) != GX_CUDA_SUCCESS) {
            want = (need + g - 1) / g * g;
            CU_TRY(c, c->api.MemAddressReserve(&va, want, g, 0, 0),
                   "cuMemAddressReserve (xchase window)", msg);
        }
        w->va = va;
        w->bytes = want;
        w->stride = stride;
    }
    gx_cu_access_desc acc = {{GX_CU_MEM_LOCATION_TYPE_DEVICE, c->dev},
                             GX_CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    uint64_t last = w->mapped ? (w->map_at[w->mapped - 1] - w->va) / g : UINT64_MAX;
    for (uint64_t i = 0; i < steps; i++) {
        uint64_t k = i * stride / g; /* the granule of step i (8-byte loads never cross one) */
        if (last != UINT64_MAX && k <= last)
            continue;
        int rc = ensure_host(&w->map_at, &w->map_cap, w->mapped + 1, sizeof *w->map_at, msg);
        if (rc != GX_OK)
            return rc;
        CUdeviceptr at = w->va + k * g;
        CU_TRY(c, c->api.MemMap(at, g, 0, w->h, 0), "cuMemMap (xchase window)", msg);
        w->map_at[w->mapped++] = at;
        CU_TRY(c, c->api.MemSetAccess(at, g, &acc, 1), "cuMemSetAccess (xchase window)", msg);
        if (w->mapped == 1)
            CU_TRY(c, c->api.MemsetD8(at, 0, g), "cuMemsetD8 (xchase granule)", msg);
        last = k;
    }
    return GX_OK;
}

/* One launch: warm rounds then `timed` rounds; cycles into h_xcyc. */
static int xchase_launch(cuda_target *c, const gx_xchase_req *req, uint64_t warm, uint64_t timed,
                         gx_msg *msg)
{
    int rc;
    const uint64_t n = (uint64_t)req->steps * timed;
    if ((rc = ensure_dev(c, &c->d_xcyc, &c->d_xcyc_bytes, n * sizeof(uint16_t), msg)) != GX_OK ||
        (rc = ensure_host(&c->h_xcyc, &c->h_xcyc_cap, n, sizeof(uint16_t), msg)) != GX_OK ||
        (rc = ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    uint64_t stride = req->stride_bytes, steps = req->steps, zero = 0, linger = 0, ticket = 0;
    uint64_t tstride = req->thrash_stride_bytes, tsteps = req->thrash_steps;
    uint64_t budget = budget_for(c, (warm + timed) * steps);
    uint32_t smid = c->smid_map[req->sm], tsmid = tsteps ? c->smid_map[req->thrash_sm] : 0;
    CUdeviceptr base = c->xwin[0].va, tbase = tsteps ? c->xwin[1].va : 0;
    void *params[] = {&base,   &stride, &steps, &warm,   &timed,  &smid,    &linger,
                      &zero,   &budget, &c->d_out, &c->d_xcyc, &ticket, &tbase, &tstride,
                      &tsteps, &tsmid,  &c->d_flags};
    for (int attempt = 0; attempt < GX_CUDA_PIN_ATTEMPTS; attempt++) {
        CU_TRY(c, c->api.MemsetD8(c->d_flags, 0, 4 * sizeof(uint64_t)), "cuMemsetD8 (flags)",
               msg);
        unsigned grid = c->sm_count * (!c->one_block_per_sm || attempt >= 2 ? 4u : 1u);
        linger = (attempt == 0 && c->one_block_per_sm) ? 0 : GX_CUDA_LINGER_CYCLES;
        ticket = ++c->ticket;
        c->launches++;
        if (attempt)
            c->relaunches++;
        if ((rc = launch(c, c->f_xchase, "gx_xchase", grid, GX_CHASE_THREADS, c->pin_smem,
                         params, tsteps ? 2 * budget : budget, msg)) != GX_OK ||
            (rc = read_out(c, 0, msg)) != GX_OK)
            return rc;
        const uint64_t *res = c->h_out;
        if (res[GX_R_CLAIM] != ticket || res[GX_R_STATUS] == GX_ST_MOVED ||
            (tsteps && res[GX_R_AUX] != ticket))
            continue;
        if (res[GX_R_STATUS] == GX_ST_TIMEOUT)
            return gx_fail(msg, GX_ETIMEOUT, "cuda: xchase on SM %u stopped by its budget of "
                           "%llu cycles", req->sm, (unsigned long long)budget);
        if (res[GX_R_STEPS] != n)
            return gx_fail(msg, GX_EDEVICE, "cuda: xchase timed %llu of %llu accesses",
                           (unsigned long long)res[GX_R_STEPS], (unsigned long long)n);
        CU_TRY(c, c->api.MemcpyDtoH(c->h_xcyc, c->d_xcyc, n * sizeof(uint16_t)),
               "cuMemcpyDtoH (xchase cycles)", msg);
        return GX_OK;
    }
    return gx_fail(msg, GX_EDEVICE,
                   "cuda: gx_xchase did not run on SM %u%s in %d launches (is another process "
                   "using the GPU?)",
                   req->sm, tsteps ? " and the thrashing SM" : "", GX_CUDA_PIN_ATTEMPTS);
}

/* Timed rounds split over launches of what shared memory holds (u16 each);
 * each launch after the first repeats one warm round. */
static int cuda_xchase(void *impl, const gx_xchase_req *req, double *cycles, gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if (c->broken)
        return gx_fail(msg, GX_EDEVICE, "cuda: the GPU context is unusable after an earlier failure");
    if (!c->api.MemCreate || !c->api.MemAddressReserve || !c->api.MemMap ||
        !c->api.MemSetAccess || !c->api.MemUnmap || !c->api.MemAddressFree ||
        !c->api.MemRelease || !c->f_xchase)
        return gx_fail(msg, GX_EUNSUPPORTED,
                       "cuda: xchase needs the driver's virtual memory management (cuMemMap)");
    CU_TRY(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    const uint64_t cap = (c->pin_smem - GX_HDR_BYTES) / sizeof(uint16_t);
    if (req->steps > cap)
        return gx_fail(msg, GX_ERANGE, "cuda: xchase of %u steps: one round's cycles pass the "
                       "%llu a block's shared memory holds", req->steps, (unsigned long long)cap);
    if (!c->d_flags)
        CU_TRY(c, c->api.MemAlloc(&c->d_flags, 4 * sizeof(uint64_t)), "cuMemAlloc (flags)", msg);
    if ((rc = xwin_prepare(c, &c->xwin[0], req->stride_bytes, req->steps, msg)) != GX_OK)
        return rc;
    if (req->thrash_steps &&
        (rc = xwin_prepare(c, &c->xwin[1], req->thrash_stride_bytes, req->thrash_steps, msg)) !=
            GX_OK)
        return rc;
    const uint64_t per = cap / req->steps;
    uint64_t done = 0, warm = req->warm_rounds;
    while (done < req->timed_rounds) {
        uint64_t t = req->timed_rounds - done < per ? req->timed_rounds - done : per;
        if ((rc = xchase_launch(c, req, warm, t, msg)) != GX_OK)
            return rc;
        const uint64_t n = t * req->steps;
        for (uint64_t k = 0; k < n; k++)
            cycles[done * req->steps + k] = (double)c->h_xcyc[k];
        done += t;
        warm = 1;
    }
    return GX_OK;
}

static const gx_target_ops cuda_ops = {
    .close = cuda_close,
    .arena = cuda_arena,
    .chase = cuda_chase,
    .seq = cuda_seq,
    .prime_probe = cuda_prime_probe,
    .smem_probe = cuda_smem_probe,
    .xchase = cuda_xchase,
};

int gx_cuda_target_counters(const gx_target *t, uint64_t *launches, uint64_t *relaunches)
{
    if (!t || t->ops != &cuda_ops)
        return GX_EINVAL;
    const cuda_target *c = t->impl;
    *launches = c->launches;
    *relaunches = c->relaunches;
    return GX_OK;
}

/* ---- open --------------------------------------------------------------- */

#ifdef GX_HAVE_KERNELS

static int get_attr(cuda_target *c, int attr, int *v)
{
    *v = 0;
    return c->api.DeviceGetAttribute(v, attr, c->dev) == GX_CUDA_SUCCESS && *v > 0;
}

/* Shared memory per probe block: more than half an SM's, so that no SM
 * ever holds two probe blocks; then a launch of sm_count blocks puts one
 * block on every SM. */
static int setup_pinning(cuda_target *c, gx_msg *msg)
{
    int per_sm = 0, optin = 0, reserved = 0;
    c->pin_smem = 48 * 1024;
    c->one_block_per_sm = 0;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_SM, &per_sm) &&
        get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN, &optin)) {
        get_attr(c, GX_CU_ATTR_RESERVED_SMEM_PER_BLOCK, &reserved);
        uint32_t want = ((uint32_t)per_sm / 2 + 1024u + 127u) & ~127u;
        if (want <= (uint32_t)optin) {
            c->pin_smem = want;
            c->one_block_per_sm = 1;
        } else {
            c->pin_smem = (uint32_t)optin;
        }
    }
    /* prime offsets read from device memory pass through L2 (one line per
     * 16 offsets, every round) and can evict what a test watches: give
     * prime_probe all the shared memory a block may have */
    c->pp_smem = c->pin_smem;
    if (c->one_block_per_sm && (uint32_t)optin > c->pin_smem)
        c->pp_smem = (uint32_t)optin / 128u * 128u;
    CUfunction fs[] = {c->f_chase, c->f_seq, c->f_pp, c->f_census, c->f_xchase};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        CU_OPEN(c,
                c->api.FuncSetAttribute(fs[i], GX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)(fs[i] == c->f_pp ? c->pp_smem : c->pin_smem)),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", msg);
    int maxt = 0;
    CU_OPEN(c, c->api.FuncGetAttribute(&maxt, GX_CU_FUNC_MAX_THREADS_PER_BLOCK, c->f_pp),
            "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", msg);
    c->pp_threads = maxt >= GX_PP_THREADS ? GX_PP_THREADS : (uint32_t)maxt / 32u * 32u;
    if (c->pp_threads == 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: gx_prime_probe cannot run a warp");
    (void)reserved;
    return GX_OK;
}

/* The shared-memory probe's block: the header and the 64 KiB window, and
 * at least pin_smem (one block per SM); the API's sizes go into info. */
static int setup_smem_probe(cuda_target *c, gx_target_info *info, gx_msg *msg)
{
    int per_sm = 0, optin = 0;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_SM, &per_sm))
        info->smem_sm_bytes = (uint64_t)per_sm;
    if (get_attr(c, GX_CU_ATTR_MAX_SMEM_PER_BLOCK_OPTIN, &optin))
        info->smem_block_bytes = (uint64_t)optin;
    uint32_t want = GX_HDR_BYTES + GX_SMEM_PROBE_WINDOW;
    if (want < c->pin_smem)
        want = c->pin_smem;
    c->smem_probe_smem = 0;
    if (optin <= 0 || want > (uint32_t)optin)
        return GX_OK; /* smem_probe answers GX_EUNSUPPORTED */
    CU_OPEN(c,
            c->api.FuncSetAttribute(c->f_smem, GX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)want),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, gx_smem_probe)", msg);
    c->smem_probe_smem = want;
    return GX_OK;
}

/* Learn the %smid values: launch blocks that each count their SM and linger
 * so that the first wave lands on every SM. */
static int census(cuda_target *c, gx_msg *msg)
{
    int rc;
    const size_t bytes = GX_CENSUS_SLOTS * sizeof(uint32_t);
    uint32_t *seen = calloc(GX_CENSUS_SLOTS, sizeof *seen);
    c->smid_map = calloc(c->sm_count, sizeof *c->smid_map);
    if (!seen || !c->smid_map) {
        free(seen);
        return gx_fail(msg, GX_ENOMEM, "out of memory for the SM census");
    }
    rc = ensure_dev(c, &c->d_buf, &c->d_buf_bytes, bytes, msg);
    uint32_t found = 0;
    for (int attempt = 0; rc == GX_OK && attempt < 3 && found < c->sm_count; attempt++) {
        CUresult r = c->api.MemsetD8(c->d_buf, 0, bytes);
        if (r != GX_CUDA_SUCCESS) {
            rc = cu_fail(c, r, GX_ENODEV, "no usable CUDA device: ", "cuMemsetD8 (census)", msg);
            break;
        }
        uint64_t linger = GX_CUDA_LINGER_CYCLES << attempt;
        void *params[] = {&c->d_buf, &linger};
        unsigned grid = c->sm_count * (c->one_block_per_sm ? 2u : 8u) << attempt;
        if ((rc = launch(c, c->f_census, "gx_census", grid, 32, c->pin_smem, params,
                         budget_for(c, grid), msg)) != GX_OK)
            break;
        r = c->api.MemcpyDtoH(seen, c->d_buf, bytes);
        if (r != GX_CUDA_SUCCESS) {
            rc = cu_fail(c, r, GX_ENODEV, "no usable CUDA device: ", "cuMemcpyDtoH (census)", msg);
            break;
        }
        found = 0;
        for (uint32_t id = 0; id < GX_CENSUS_IDS; id++)
            if (seen[id])
                found++;
    }
    if (rc == GX_OK && (found != c->sm_count || seen[GX_CENSUS_OVERFLOW]))
        rc = gx_fail(msg, GX_ENODEV,
                     "no usable CUDA device: the SM census saw %u SM ids (%u beyond %d) for %u "
                     "SMs (is another process using the GPU?)",
                     found, seen[GX_CENSUS_OVERFLOW], GX_CENSUS_IDS, c->sm_count);
    if (rc == GX_OK) {
        uint32_t k = 0;
        for (uint32_t id = 0; id < GX_CENSUS_IDS; id++)
            if (seen[id])
                c->smid_map[k++] = id;
    }
    free(seen);
    return rc;
}

static int load_module(cuda_target *c, int cc_major, int cc_minor, gx_msg *msg)
{
    CUresult r = c->api.ModuleLoadData(&c->mod, gx_kernels_fatbin);
    if (r != GX_CUDA_SUCCESS) {
        char b[256];
        return gx_fail(msg, GX_ENODEV,
                       "no usable CUDA device: cuModuleLoadData failed: %s (the embedded kernels "
                       "are for sm_80..sm_90 + compute_90 PTX; this GPU is sm_%d%d)",
                       gx_cu_strerror(&c->api, r, b, sizeof b), cc_major, cc_minor);
    }
    static const struct {
        const char *name;
        size_t off;
    } fn[] = {
        {"gx_chase", offsetof(cuda_target, f_chase)},
        {"gx_seq", offsetof(cuda_target, f_seq)},
        {"gx_prime_probe", offsetof(cuda_target, f_pp)},
        {"gx_chain_clear", offsetof(cuda_target, f_clear)},
        {"gx_chain_link", offsetof(cuda_target, f_link)},
        {"gx_census", offsetof(cuda_target, f_census)},
        {"gx_smem_probe", offsetof(cuda_target, f_smem)},
        {"gx_xchase", offsetof(cuda_target, f_xchase)},
    };
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        CUfunction f = NULL;
        char what[96];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", fn[i].name);
        CU_OPEN(c, c->api.ModuleGetFunction(&f, c->mod, fn[i].name), what, msg);
        memcpy((char *)c + fn[i].off, &f, sizeof f);
    }
    return GX_OK;
}

static int fill_info(cuda_target *c, gx_target_info *info, gx_msg *msg)
{
    int v = 0;
    CU_OPEN(c, c->api.DeviceGetName(info->name, (int)sizeof info->name, c->dev), "cuDeviceGetName",
            msg);
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_MULTIPROCESSOR_COUNT, c->dev),
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", msg);
    if (v <= 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: it reports %d SMs", v);
    c->sm_count = (uint32_t)v;
    info->sm_count = c->sm_count;
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_CLOCK_RATE, c->dev),
            "cuDeviceGetAttribute(CLOCK_RATE)", msg);
    info->sm_clock_mhz = v > 0 ? (uint32_t)(v / 1000) : 0;
    c->clock_hz = v > 0 ? 1000.0 * v : 1e9;
    CU_OPEN(c, c->api.DeviceGetAttribute(&v, GX_CU_ATTR_L2_CACHE_SIZE, c->dev),
            "cuDeviceGetAttribute(L2_CACHE_SIZE)", msg);
    info->api_l2_bytes = v > 0 ? (uint64_t)v : 0;

    gx_cu_alloc_prop prop;
    memset(&prop, 0, sizeof prop);
    prop.type = GX_CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = GX_CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = c->dev;
    size_t gran = 0;
    if (c->api.MemGetAllocationGranularity(&gran, &prop, GX_CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
            GX_CUDA_SUCCESS ||
        gran == 0 || (gran & (gran - 1)) != 0)
        gran = GX_CUDA_DEFAULT_PAGE_BYTES; /* the GPU's large page on sm_80..sm_90 */
    c->page_bytes = gran;
    info->page_bytes = gran;

    size_t free_b = 0, total_b = 0;
    CU_OPEN(c, c->api.MemGetInfo(&free_b, &total_b), "cuMemGetInfo", msg);
    uint64_t max = (uint64_t)free_b / 2;
    if (max > GX_CUDA_MAX_ARENA_BYTES)
        max = GX_CUDA_MAX_ARENA_BYTES;
    max = max / gran * gran;
    if (max < gran)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: only %zu bytes of device memory free",
                       free_b);
    info->max_arena_bytes = max;
    return GX_OK;
}

static int open_device(cuda_target *c, int device, gx_target_info *info, gx_msg *msg)
{
    int rc;
    if ((rc = gx_cu_api_load(&c->api, msg)) != GX_OK)
        return rc;
    CU_OPEN(c, c->api.Init(0), "cuInit", msg);
    int count = 0;
    CU_OPEN(c, c->api.DeviceGetCount(&count), "cuDeviceGetCount", msg);
    if (count <= 0)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: the driver found no CUDA devices");
    if (device >= count)
        return gx_fail(msg, GX_ENODEV, "no usable CUDA device: cuda:%d requested but %d device%s found",
                       device, count, count == 1 ? "" : "s");
    CU_OPEN(c, c->api.DeviceGet(&c->dev, device), "cuDeviceGet", msg);
    int major = 0, minor = 0;
    CU_OPEN(c, c->api.DeviceGetAttribute(&major, GX_CU_ATTR_CC_MAJOR, c->dev),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", msg);
    CU_OPEN(c, c->api.DeviceGetAttribute(&minor, GX_CU_ATTR_CC_MINOR, c->dev),
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", msg);
    CU_OPEN(c, c->api.DevicePrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain", msg);
    CU_OPEN(c, c->api.CtxSetCurrent(c->ctx), "cuCtxSetCurrent", msg);
    if ((rc = fill_info(c, info, msg)) != GX_OK)
        return rc;
    if ((rc = load_module(c, major, minor, msg)) != GX_OK)
        return rc;
    if ((rc = setup_pinning(c, msg)) != GX_OK)
        return rc;
    if ((rc = setup_smem_probe(c, info, msg)) != GX_OK)
        return rc;
    if ((rc = ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    if ((rc = census(c, msg)) != GX_OK)
        return rc;
    const char *b = getenv("GX_CUDA_BUDGET_CYCLES");
    if (b && *b)
        c->budget_override = strtoull(b, NULL, 0);
    return GX_OK;
}

int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg)
{
    cuda_target *c = calloc(1, sizeof *c);
    if (!c)
        return gx_fail(msg, GX_ENOMEM, "out of memory opening the cuda target");
    memset(info, 0, sizeof *info);
    int rc = open_device(c, device, info, msg);
    if (rc != GX_OK) {
        cuda_close(c);
        return rc;
    }
    *ops = &cuda_ops;
    *impl = c;
    return GX_OK;
}

#else /* !GX_HAVE_KERNELS */

int gx_cuda_target_open(int device, const gx_target_ops **ops, void **impl,
                        gx_target_info *info, gx_msg *msg)
{
    (void)device;
    (void)ops;
    (void)impl;
    (void)info;
    (void)cuda_ops;
    return gx_fail(msg, GX_ENODEV,
                   "no usable CUDA device: gpuxray was built without CUDA kernels (nvcc not found)");
}

#endif
