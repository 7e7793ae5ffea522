/* cuda_xchase.c - the cuda target's translation chase: two windows (timed,
 * thrashing), each a VA reservation whose touched granules are mapped onto
 * one zeroed physical granule of its own (cuMemMap) and stay mapped for the
 * chains of every stride; every access timed in shared memory, rounds split
 * over launches. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* ---- translation chase --------------------------------------------------- */

#define XWIN_ALIGN (1ULL << 40) /* 1 TiB */

/* Reserve window w's VA: all a chain may span (GX_XCHASE_MAX_WINDOW_BYTES),
 * XWIN_ALIGN-aligned when the driver allows (a chain then starts on a whole
 * block of sets x reach of any TLB level, as a hashed set index needs to
 * spread its pages evenly), else granule-aligned; else `need` bytes alone. */
static int xwin_reserve(cuda_target *c, cuda_xwin *w, uint64_t need, gx_msg *msg)
{
    const uint64_t g = c->page_bytes;
    uint64_t want = (GX_XCHASE_MAX_WINDOW_BYTES + g + g - 1) / g * g;
    if (want < need)
        want = (need + g - 1) / g * g;
    CUdeviceptr va = 0;
    if (c->api.MemAddressReserve(&va, want, XWIN_ALIGN, 0, 0) != GX_CUDA_SUCCESS &&
        c->api.MemAddressReserve(&va, want, g, 0, 0) != GX_CUDA_SUCCESS) {
        want = (need + g - 1) / g * g;
        CU_TRY(c, c->api.MemAddressReserve(&va, want, g, 0, 0),
               "cuMemAddressReserve (xchase window)", msg);
    }
    const size_t words = (size_t)((want / g + 63) / 64);
    uint64_t *bits = calloc(words, sizeof *bits);
    if (!bits) {
        c->api.MemAddressFree(va, want);
        return gx_fail(msg, GX_ENOMEM, "cuda: out of memory for the xchase window's map");
    }
    free(w->bits);
    w->bits = bits;
    w->va = va;
    w->bytes = want;
    return GX_OK;
}

/* Make window w hold steps pages at stride (mapped onto its zeroed physical
 * granule). The window serves chains of every stride: a granule once
 * mapped stays mapped (w->bits) until the target closes, so a stage that
 * changes strides maps each granule once (mapping one costs tens of
 * microseconds; a chain has up to 32768). A chain's TLB hits and misses do
 * not depend on which other granules of the window are mapped: it touches
 * only its own pages, whose entries a walk fills alike whether their
 * neighbours' PTEs are valid or not. */
static int xwin_prepare(cuda_target *c, cuda_xwin *w, uint64_t stride, uint64_t steps,
                        gx_msg *msg)
{
    const uint64_t g = c->page_bytes;
    int rc;
    if (!w->h) {
        gx_cu_alloc_prop prop;
        memset(&prop, 0, sizeof prop);
        prop.type = GX_CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = GX_CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = c->dev;
        CU_TRY(c, c->api.MemCreate(&w->h, g, &prop, 0), "cuMemCreate (xchase granule)", msg);
    }
    const uint64_t need = (steps - 1) * stride + g;
    if (w->va && w->bytes < need) /* a window of one chain's size (the driver's limit) */
        cuda_xwin_drop(c, w, 0);
    if (!w->va && (rc = xwin_reserve(c, w, need, msg)) != GX_OK)
        return rc;
    gx_cu_access_desc acc = {{GX_CU_MEM_LOCATION_TYPE_DEVICE, c->dev},
                             GX_CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    for (uint64_t i = 0; i < steps; i++) {
        uint64_t k = i * stride / g; /* the granule of step i (8-byte loads never cross one) */
        if (w->bits[k / 64] >> (k % 64) & 1u)
            continue;
        if ((rc = cuda_ensure_host(&w->map_at, &w->map_cap, w->mapped + 1, sizeof *w->map_at,
                                   msg)) != GX_OK)
            return rc;
        CUdeviceptr at = w->va + k * g;
        CU_TRY(c, c->api.MemMap(at, g, 0, w->h, 0), "cuMemMap (xchase window)", msg);
        w->map_at[w->mapped++] = at;
        w->bits[k / 64] |= 1ULL << (k % 64);
        CU_TRY(c, c->api.MemSetAccess(at, g, &acc, 1), "cuMemSetAccess (xchase window)", msg);
        if (w->mapped == 1)
            CU_TRY(c, c->api.MemsetD8(at, 0, g), "cuMemsetD8 (xchase granule)", msg);
    }
    return GX_OK;
}

/* One launch: warm rounds then `timed` rounds; cycles into h_xcyc. */
static int xchase_launch(cuda_target *c, const gx_xchase_req *req, uint64_t warm, uint64_t timed,
                         gx_msg *msg)
{
    int rc;
    const uint64_t n = (uint64_t)req->steps * timed;
    if ((rc = cuda_ensure_dev(c, &c->d_xcyc, &c->d_xcyc_bytes, n * sizeof(uint16_t),
        msg)) != GX_OK ||
        (rc = cuda_ensure_host(&c->h_xcyc, &c->h_xcyc_cap, n, sizeof(uint16_t), msg)) != GX_OK ||
        (rc = cuda_ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    uint64_t stride = req->stride_bytes, steps = req->steps, zero = 0, linger = 0, ticket = 0;
    uint64_t tstride = req->thrash_stride_bytes, tsteps = req->thrash_steps;
    uint64_t budget = cuda_budget_for(c, (warm + timed) * steps);
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
        if ((rc = cuda_launch(c, c->f_xchase, "gx_xchase", grid, GX_CHASE_THREADS, c->pin_smem,
                              params, tsteps ? 2 * budget : budget, msg)) != GX_OK ||
            (rc = cuda_read_out(c, 0, msg)) != GX_OK)
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
int cuda_xchase(void *impl, const gx_xchase_req *req, double *cycles, gx_msg *msg)
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
