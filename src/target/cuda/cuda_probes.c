/* cuda_probes.c - the cuda target's probe primitives on device memory: the
 * pointer chase (chain built on the device, cached while the arena and
 * offsets stay), seq (ops in chunks of what shared memory holds),
 * prime + probe (one block primes, thread 0 times the probes), the
 * shared-memory bank probe and contention (thread 0 times the probes while
 * the blocks on every other SM hammer one line). Each runs on the wanted SM through run_pinned. */
#include <string.h>

#include "cuda_internal.h"

/* ---- chase ------------------------------------------------------------ */

static int build_chain(cuda_target *c, const uint64_t *off, size_t n, gx_msg *msg)
{
    int rc;
    if (c->chain_valid && c->chain_n == n && memcmp(c->chain, off, n * sizeof *off) == 0)
        return GX_OK;
    c->chain_valid = 0;
    if ((rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, n * sizeof *off, msg)) != GX_OK)
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
    uint64_t budget = cuda_budget_for(c, n);
    if ((rc = cuda_launch(c, c->f_clear, "gx_chain_clear", grid, GX_BUILD_THREADS, 0, p_clear,
                          budget, msg)) != GX_OK)
        return rc;
    if ((rc = cuda_launch(c, c->f_link, "gx_chain_link", grid, GX_BUILD_THREADS, 0, p_link, budget,
                          msg)) != GX_OK)
        return rc;
    if ((rc = cuda_read_out(c, 0, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_DUP)
        return gx_fail(msg, GX_EINVAL,
                       "cuda: chase offsets must be distinct 8-byte words, but offset %llu appears "
                       "more than once (a pointer chain visits each word once a round; use seq "
                       "for repeated accesses)",
                       (unsigned long long)res[GX_R_AUX]);
    if ((rc = cuda_ensure_host(&c->chain, &c->chain_cap, n, sizeof *off, msg)) != GX_OK)
        return rc;
    memcpy(c->chain, off, n * sizeof *off);
    c->chain_n = n;
    c->chain_valid = 1;
    return GX_OK;
}

int cuda_chase(void *impl, const gx_chase_req *req, double *mean_cycles, gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = cuda_check_usable(c, msg)) != GX_OK)
        return rc;
    if ((rc = build_chain(c, req->offsets, req->n, msg)) != GX_OK)
        return rc;
    const uint64_t n = req->n;
    uint64_t warm = (uint64_t)req->warm_rounds * n;
    uint64_t timed = (uint64_t)req->timed_rounds * n;
    if (req->max_timed_steps && req->max_timed_steps < timed)
        timed = req->max_timed_steps;
    CUdeviceptr start = c->arena + req->offsets[0];
    uint64_t budget = cuda_budget_for(c, warm + timed), linger = 0, ticket = 0;
    uint32_t smid = 0;
    void *params[] = {&start, &warm, &timed, &smid, &linger, &budget, &c->d_out, &ticket};
    if ((rc = cuda_run_pinned(c, c->f_chase, "gx_chase", GX_CHASE_THREADS, c->pin_smem, req->sm,
                              params, &linger, &smid, &ticket, budget, 0, msg)) != GX_OK)
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
    const uint32_t *cyc = cuda_out_cycles(c);
    for (size_t k = 0; k < nt; k++)
        out[k] = (double)cyc[k];
}

static int seq_chunk(cuda_target *c, const gx_seq_op *ops, size_t m, uint32_t sm, double *cycles,
                     size_t *n_timed, gx_msg *msg)
{
    int rc;
    if ((rc = cuda_ensure_host(&c->h_buf, &c->h_buf_cap, m, sizeof *c->h_buf, msg)) != GX_OK)
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
    if ((rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, m * sizeof(uint64_t), msg)) != GX_OK)
        return rc;
    if ((rc = cuda_ensure_out(c, m, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, c->h_buf, m * sizeof(uint64_t)),
           "cuMemcpyHtoD (seq ops)", msg);
    uint64_t m64 = m, zero = 0, linger = 0, budget = cuda_budget_for(c, m), ticket = 0;
    uint32_t smid = 0;
    CUdeviceptr d_cyc = c->d_out + GX_R_SLOTS * sizeof(uint64_t);
    void *params[] = {&c->arena, &c->d_buf, &m64,      &smid,  &linger,
                      &zero,     &budget,   &c->d_out, &d_cyc, &ticket};
    if ((rc = cuda_run_pinned(c, c->f_seq, "gx_seq", GX_SEQ_THREADS, c->pin_smem, sm, params,
                              &linger, &smid, &ticket, budget, nt, msg)) != GX_OK)
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

int cuda_seq(void *impl, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
             gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = cuda_check_usable(c, msg)) != GX_OK)
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
    if ((rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, words * sizeof(uint64_t),
        msg)) != GX_OK) return rc;
    if ((rc = cuda_ensure_out(c, m, msg)) != GX_OK)
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
    uint64_t budget = cuda_budget_for(c, n_prime * rounds + m);
    uint32_t in = in_smem ? 1u : 0u, smid = 0, nr = n_prime ? rounds : 1u;
    CUdeviceptr d_cyc = c->d_out + GX_R_SLOTS * sizeof(uint64_t);
    void *params[] = {&c->arena, &d_prime, &np,     &in,       &nr,    &d_probe, &m64,
                      &smid,     &linger,  &zero,   &budget,   &c->d_out, &d_cyc, &ticket};
    if ((rc = cuda_run_pinned(c, c->f_pp, "gx_prime_probe", c->pp_threads, c->pp_smem, sm, params,
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

int cuda_prime_probe(void *impl, const uint64_t *prime, size_t n_prime, uint32_t rounds,
                     const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                     gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    if ((rc = cuda_check_usable(c, msg)) != GX_OK)
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
int cuda_smem_probe(void *impl, const gx_smem_probe_req *req, double *cycles,
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
    if ((rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, sizeof req->lane_offsets,
        msg)) != GX_OK || (rc = cuda_ensure_out(c, 0, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, req->lane_offsets, sizeof req->lane_offsets),
           "cuMemcpyHtoD (lane offsets)", msg);
    uint32_t active = req->active, width = req->width_bytes, reps = req->reps, smid = 0;
    uint64_t linger = 0, ticket = 0;
    void *params[] = {&c->d_buf, &active, &width, &reps, &smid, &linger, &c->d_out, &ticket};
    uint64_t budget = cuda_budget_for(c, (uint64_t)reps * 32u);
    if ((rc = cuda_run_pinned(c, c->f_smem, "gx_smem_probe", 32, c->smem_probe_smem, req->sm,
                              params, &linger, &smid, &ticket, budget, 0, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STEPS] != reps)
        return gx_fail(msg, GX_EDEVICE, "cuda: smem_probe ran %llu of %u timed loads",
                       (unsigned long long)res[GX_R_STEPS], reps);
    *cycles = (double)res[GX_R_CYCLES] / (double)reps;
    return GX_OK;
}

/* ---- contention ----------------------------------------------------------- */

/* The longest the measurer waits for every hammering block to start: ~1 ms,
 * ten times what a launch's blocks take to reach every SM */
#define CONTEND_SETTLE_CYCLES (10 * GX_CUDA_LINGER_CYCLES)

/* One launch of gx_contend over all probes (their offsets through d_buf,
 * the least of each one's timed loads back in the result slots). */
int cuda_contend(void *impl, const gx_contend_req *req, double *cycles, gx_msg *msg)
{
    cuda_target *c = impl;
    int rc;
    const size_t n = req->n_probes;
    if ((rc = cuda_check_usable(c, msg)) != GX_OK ||
        (rc = cuda_ensure_dev(c, &c->d_buf, &c->d_buf_bytes, n * sizeof(uint64_t), msg)) != GX_OK ||
        (rc = cuda_ensure_out(c, n, msg)) != GX_OK)
        return rc;
    CU_TRY(c, c->api.MemcpyHtoD(c->d_buf, req->probes, n * sizeof(uint64_t)),
           "cuMemcpyHtoD (contention probes)", msg);
    uint64_t hammer = req->hammer_offset, n64 = n, settle = CONTEND_SETTLE_CYCLES, zero = 0;
    uint64_t linger = 0, ticket = 0;
    uint64_t budget = cuda_budget_for(c, (uint64_t)n * (req->reps + 1u)) + settle;
    uint32_t warps = req->hammer_warps, reps = req->reps, smid = 0;
    CUdeviceptr d_cyc = c->d_out + GX_R_SLOTS * sizeof(uint64_t);
    void *params[] = {&c->arena, &hammer, &warps, &c->d_buf, &n64,      &reps,  &smid,
                      &settle,   &zero,   &budget, &c->d_out, &d_cyc, &ticket};
    (void)linger;
    _Static_assert(GX_R_CYCLES == GX_R_STEPS - 1, "the hammers' two slots are adjacent");
    CU_TRY(c, c->api.MemsetD8(c->d_out + GX_R_CYCLES * sizeof(uint64_t), 0, 2 * sizeof(uint64_t)),
           "cuMemsetD8 (hammer counts)", msg);
    if ((rc = cuda_run_pinned(c, c->f_contend, "gx_contend", GX_SEQ_THREADS, c->pin_smem, req->sm,
                              params, &linger, &smid, &ticket, budget, n, msg)) != GX_OK)
        return rc;
    const uint64_t *res = c->h_out;
    if (res[GX_R_STATUS] == GX_ST_TIMEOUT)
        return gx_fail(msg, GX_ETIMEOUT,
                       "cuda: contend on SM %u stopped by its budget of %llu cycles after %llu of "
                       "%zu probes",
                       req->sm, (unsigned long long)budget, (unsigned long long)res[GX_R_STEPS], n);
    if (res[GX_R_STEPS] != n)
        return gx_fail(msg, GX_EDEVICE, "cuda: contend timed %llu of %zu probes",
                       (unsigned long long)res[GX_R_STEPS], n);
    c->hammer_loads = res[GX_R_CYCLES];
    if (warps && c->hammer_loads == 0)
        return gx_fail(msg, GX_EDEVICE, "cuda: contend on SM %u: no hammering warp ran", req->sm);
    const uint32_t *cyc = cuda_out_cycles(c);
    for (size_t i = 0; i < n; i++)
        cycles[i] = (double)cyc[i];
    return GX_OK;
}
