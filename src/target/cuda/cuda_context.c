/* cuda_context.c - the cuda target's context, memory and launches: checked
 * driver calls, kernel budgets, device and host buffers grown on demand, a
 * launch and its wait (a host wall-clock limit over the kernel's own cycle
 * budget), the pinned launch that claims the wanted SM's block by ticket,
 * the result slots, and the arena (cuMemAlloc aligned up to a page). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

int cuda_fail(cuda_target *c, CUresult r, int code, const char *prefix, const char *what,
              gx_msg *msg)
{
    char b[256];
    return gx_fail(msg, code, "%s%s failed: %s", prefix, what,
                   gx_cu_strerror(&c->api, r, b, sizeof b));
}


uint64_t cuda_budget_for(const cuda_target *c, uint64_t accesses)
{
    if (c->budget_override)
        return c->budget_override;
    if (accesses > (UINT64_MAX - GX_CUDA_FIXED_CYCLES) / GX_CUDA_CYCLES_PER_ACCESS)
        return UINT64_MAX;
    return GX_CUDA_FIXED_CYCLES + GX_CUDA_CYCLES_PER_ACCESS * accesses;
}

int cuda_ensure_dev(cuda_target *c, CUdeviceptr *p, size_t *cap, size_t need, gx_msg *msg)
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
int cuda_ensure_host(void *pp, size_t *cap, size_t need, size_t elem, gx_msg *msg)
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
            return cuda_fail(c, r, GX_EDEVICE, "cuda: ", what, msg);
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

int cuda_launch(cuda_target *c, CUfunction f, const char *name, unsigned grid, unsigned block,
                unsigned smem, void **params, uint64_t budget, gx_msg *msg)
{
    CUresult r = c->api.LaunchKernel(f, grid, 1, 1, block, 1, 1, smem, NULL, params, NULL);
    if (r != GX_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuLaunchKernel(%s)", name);
        return cuda_fail(c, r, GX_EDEVICE, "cuda: ", what, msg);
    }
    double limit = 5.0 + 2.0 * (double)budget / c->clock_hz;
    return wait_kernel(c, name, limit, msg);
}

/* Make d_out (and its host copy) hold the result slots and n_cycles u32. */
int cuda_ensure_out(cuda_target *c, size_t n_cycles, gx_msg *msg)
{
    const size_t bytes = GX_R_SLOTS * sizeof(uint64_t) + (n_cycles + 1) * sizeof(uint32_t);
    int rc = cuda_ensure_dev(c, &c->d_out, &c->d_out_bytes, bytes, msg);
    if (rc == GX_OK)
        rc = cuda_ensure_host(&c->h_out, &c->h_out_cap, (bytes + 7) / 8, sizeof(uint64_t), msg);
    return rc;
}

/* Copy back the result slots and n_cycles u32 after them (into h_out). */
int cuda_read_out(cuda_target *c, size_t n_cycles, gx_msg *msg)
{
    CU_TRY(c, c->api.MemcpyDtoH(c->h_out, c->d_out,
                                GX_R_SLOTS * sizeof(uint64_t) + n_cycles * sizeof(uint32_t)),
           "cuMemcpyDtoH (results)", msg);
    return GX_OK;
}

const uint32_t *cuda_out_cycles(const cuda_target *c)
{
    return (const uint32_t *)(const void *)(c->h_out + GX_R_SLOTS);
}

/* Launch a pinned kernel until the block on SM `sm` ran it; then h_out
 * holds its result slots and n_cycles cycle values. *linger, *smid and
 * *ticket point into the kernel's parameters. */
int cuda_run_pinned(cuda_target *c, CUfunction f, const char *name, unsigned threads,
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
        if ((rc = cuda_launch(c, f, name, grid, threads, smem, params, budget, msg)) != GX_OK)
            return rc;
        if ((rc = cuda_read_out(c, n_cycles, msg)) != GX_OK)
            return rc;
        if (c->h_out[GX_R_CLAIM] == *ticket && c->h_out[GX_R_STATUS] != GX_ST_MOVED)
            return GX_OK;
    }
    return gx_fail(msg, GX_EDEVICE,
                   "cuda: kernel %s did not run on SM %u (%%smid %u) in %d launches "
                   "(is another process using the GPU?)",
                   name, sm, *smid, GX_CUDA_PIN_ATTEMPTS);
}

int cuda_check_usable(cuda_target *c, gx_msg *msg)
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
void cuda_xwin_drop(cuda_target *c, cuda_xwin *w, int all)
{
    if (!c->api.MemUnmap)
        return;
    for (uint64_t k = 0; k < w->mapped; k++)
        c->api.MemUnmap(w->map_at[k], c->page_bytes);
    w->mapped = 0;
    if (w->bits)
        memset(w->bits, 0, (size_t)((w->bytes / c->page_bytes + 63) / 64) * sizeof *w->bits);
    if (w->va)
        c->api.MemAddressFree(w->va, w->bytes);
    w->va = 0;
    w->bytes = 0;
    if (all && w->h) {
        c->api.MemRelease(w->h);
        w->h = 0;
    }
}

void cuda_close(void *impl)
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
            cuda_xwin_drop(c, &c->xwin[w], 1);
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
    for (int w = 0; w < 2; w++) {
        free(c->xwin[w].map_at);
        free(c->xwin[w].bits);
    }
    free(c);
}

/* ---- arena ------------------------------------------------------------ */

int cuda_arena(void *impl, uint64_t bytes, gx_msg *msg)
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
        return cuda_fail(c, r, GX_ENOMEM, "cuda: ", what, msg);
    }
    free_dev(c, &c->arena_raw);
    c->arena_raw = raw;
    c->arena = (raw + c->page_bytes - 1) / c->page_bytes * c->page_bytes;
    return GX_OK;
}
