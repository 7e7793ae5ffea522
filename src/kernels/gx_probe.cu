/* gx_probe.cu - the CUDA kernels behind the cuda target's primitives
 * (Contract 2 of DESIGN.md): pointer chase, timed op sequence, prime+probe,
 * contention,
 * the device-side chain builder and an SM census. Built by nvcc to one
 * fatbin (sm_80, sm_86, sm_89, sm_90 + compute_90 PTX) that the C host
 * (src/target/cuda/) loads through the driver API; no C++ runtime is used.
 *
 * Notes:
 * - Loads bypass L1: ld.global.cg (cache at L2 only); stores st.global.cg.
 * - Timing is clock64 (%clock64) read by the thread that does the access,
 *   so on the same SM. A timed interval is [clock, access, consume the
 *   loaded value into shared memory, clock]: the shared store cannot issue
 *   before the load's value has arrived, so the second clock read sees the
 *   whole latency. The same interval around nothing (GX_KOP_NONE) is the
 *   timer overhead that every timed value includes.
 * - SM pinning: the host launches one block per SM (each block asks for
 *   more than half an SM's shared memory, so no SM holds two) and passes the
 *   wanted %smid; a block elsewhere leaves at once without touching memory,
 *   the block on the wanted SM claims the job with one atomic (so a second
 *   block that lands there later cannot run it too). At the end %smid is
 *   read again; a block that moved reports GX_ST_MOVED.
 * - Dependence: the chase walks pointers; seq and probe make each address
 *   depend on the previous loaded value through (value & zero), zero a
 *   kernel argument that the host sets to 0 (the compiler cannot fold it).
 * - Dead-store guard: the final pointer / last value is written to the
 *   result slots, so no chain can be optimised away (the asm is volatile
 *   as well).
 * - Bounds: every loop checks clock64 against a cycle budget from the host
 *   and stops with GX_ST_TIMEOUT when it runs out. */
#include "gx_kernels_abi.h"

typedef unsigned long long u64;

static __device__ __forceinline__ unsigned gx_smid(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

static __device__ __forceinline__ unsigned gx_nsmid(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
    return r;
}

static __device__ __forceinline__ u64 gx_clock(void)
{
    u64 r;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(r)::"memory");
    return r;
}

static __device__ __forceinline__ u64 gx_ld_cg(const void *p)
{
    u64 v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned gx_ld_cg32(const void *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gx_st_cg(void *p, u64 v)
{
    asm volatile("st.global.cg.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* Shared-memory address (32-bit) of the sink word hdr[1], computed once per
 * kernel so that no address arithmetic (S2UR SR_CgaCtaId on sm_90) lands
 * inside a timed interval. */
static __device__ __forceinline__ unsigned gx_sink_addr(u64 *smem)
{
    return (unsigned)__cvta_generic_to_shared(smem + 1);
}

/* Consume v into shared memory: the store issues only once v has arrived. */
static __device__ __forceinline__ void gx_consume(unsigned sink, u64 v)
{
    asm volatile("st.shared.u64 [%0], %1;" ::"r"(sink), "l"(v) : "memory");
}

/* Spin for `cycles` without touching memory. */
static __device__ __forceinline__ void gx_linger(u64 cycles)
{
    const u64 t0 = gx_clock();
    while (gx_clock() - t0 < cycles) {
    }
}

/* True in every thread of the one block that runs the job: it sits on SM
 * want_smid and won the claim, i.e. it was the first to write this launch's
 * ticket (a number the host never repeats) into res[GX_R_CLAIM]. Other
 * blocks linger (optionally) and leave. */
static __device__ __forceinline__ bool gx_claim(u64 *res, unsigned want_smid, u64 linger,
                                                u64 ticket, volatile u64 *hdr)
{
    if (threadIdx.x == 0) {
        u64 mine = 0;
        if (gx_smid() == want_smid && atomicExch(&res[GX_R_CLAIM], ticket) != ticket)
            mine = 1;
        hdr[0] = mine;
        if (!mine && linger)
            gx_linger(linger);
    }
    __syncthreads();
    return hdr[0] != 0;
}

/* The end of a run of ops on the wanted SM: its status (GX_ST_MOVED when
 * the block no longer sits there), ops done, values timed, the SM and the
 * last value (dead-store guard) into the result slots. */
static __device__ __forceinline__ void gx_report_ops(u64 *res, u64 status, unsigned want_smid,
                                                     u64 done, u64 timed, u64 sink)
{
    if (status == GX_ST_OK && gx_smid() != want_smid)
        status = GX_ST_MOVED;
    res[GX_R_STATUS] = status;
    res[GX_R_STEPS] = done;
    res[GX_R_NTIMED] = timed;
    res[GX_R_SMID] = gx_smid();
    res[GX_R_SINK] = sink;
}

static __device__ __forceinline__ const u64 *gx_walk8(const u64 *p)
{
#pragma unroll
    for (int k = 0; k < 8; k++)
        p = (const u64 *)gx_ld_cg(p);
    return p;
}

/* Walk `steps` pointers from *pp; false when the budget ran out. */
static __device__ __forceinline__ bool gx_walk(const u64 **pp, u64 steps, u64 *left_out,
                                               u64 t_begin, u64 budget)
{
    const u64 *p = *pp;
    u64 left = steps;
    bool ok = true;
    while (left >= 8) {
        p = gx_walk8(p);
        left -= 8;
        if (gx_clock() - t_begin > budget) {
            ok = false;
            break;
        }
    }
    if (ok)
        while (left > 0) {
            p = (const u64 *)gx_ld_cg(p);
            left--;
        }
    *pp = p;
    *left_out = left;
    return ok;
}

/* One thread on SM want_smid walks warm_steps untimed, then timed_steps
 * between two clock64 reads. res[CYCLES] = cycles, res[STEPS] = timed
 * steps done, res[SINK] = final pointer. */
extern "C" __global__ void __launch_bounds__(GX_CHASE_THREADS)
    gx_chase(const u64 *start, u64 warm_steps, u64 timed_steps, unsigned want_smid, u64 linger,
             u64 budget, u64 *res, u64 ticket)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    if (!gx_claim(res, want_smid, linger, ticket, hdr) || threadIdx.x != 0)
        return;
    const unsigned sink = gx_sink_addr(gx_smem);
    const u64 t_begin = gx_clock();
    const u64 *p = start;
    u64 left = 0, t0 = 0, t1 = 0, status = GX_ST_OK;
    if (!gx_walk(&p, warm_steps, &left, t_begin, budget)) {
        status = GX_ST_TIMEOUT;
        left = timed_steps;
    } else {
        gx_consume(sink, (u64)p);
        t0 = gx_clock();
        if (!gx_walk(&p, timed_steps, &left, t_begin, budget))
            status = GX_ST_TIMEOUT;
        gx_consume(sink, (u64)p);
        t1 = gx_clock();
    }
    if (status == GX_ST_OK && gx_smid() != want_smid)
        status = GX_ST_MOVED;
    res[GX_R_STATUS] = status;
    res[GX_R_CYCLES] = t1 - t0;
    res[GX_R_STEPS] = timed_steps - left;
    res[GX_R_SMID] = gx_smid();
    res[GX_R_SINK] = (u64)p;
}

/* One timed access (or empty interval) of kind `kind` at a; returns the
 * cycles and updates *prev with the loaded value. */
static __device__ __forceinline__ unsigned gx_timed_op(unsigned kind, u64 *a, u64 *prev,
                                                       unsigned sink)
{
    u64 t0, t1;
    if (kind == GX_KOP_LOAD) {
        t0 = gx_clock();
        const u64 v = gx_ld_cg(a);
        gx_consume(sink, v);
        t1 = gx_clock();
        *prev = v;
    } else if (kind == GX_KOP_STORE) {
        t0 = gx_clock();
        gx_st_cg(a, *prev);
        gx_consume(sink, *prev);
        t1 = gx_clock();
    } else {
        t0 = gx_clock();
        gx_consume(sink, *prev);
        t1 = gx_clock();
    }
    const u64 d = t1 - t0;
    return d > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)d;
}

/* One thread on SM want_smid runs the n packed ops in order; each address
 * depends on the previous loaded value. cycles_out gets one u32 per timed
 * op (buffered in shared memory during the run). */
extern "C" __global__ void __launch_bounds__(GX_SEQ_THREADS)
    gx_seq(char *base, const u64 *ops, u64 n, unsigned want_smid, u64 linger, u64 zero,
           u64 budget, u64 *res, unsigned *cycles_out, u64 ticket)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    u64 *s_ops = gx_smem + GX_HDR_WORDS;
    unsigned *s_cyc = (unsigned *)(s_ops + n);
    if (!gx_claim(res, want_smid, linger, ticket, hdr))
        return;
    for (u64 i = threadIdx.x; i < n; i += blockDim.x)
        s_ops[i] = ops[i];
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    u64 prev = 0, status = GX_ST_OK, i = 0;
    unsigned nt = 0;
    const unsigned sink = gx_sink_addr(gx_smem);
    const u64 t_begin = gx_clock();
    for (; i < n; i++) {
        const u64 w = s_ops[i];
        const unsigned kind = (unsigned)(w >> GX_OPW_KIND_SHIFT) & 0xFFu;
        u64 *a = (u64 *)(base + (w & GX_OPW_OFFSET_MASK) + (prev & zero));
        const unsigned c = gx_timed_op(kind, a, &prev, sink);
        if (w & GX_OPW_TIMED_BIT)
            s_cyc[nt++] = c;
        if (gx_clock() - t_begin > budget) {
            status = GX_ST_TIMEOUT;
            i++;
            break;
        }
    }
    for (unsigned k = 0; k < nt; k++)
        cycles_out[k] = s_cyc[k];
    gx_report_ops(res, status, want_smid, i, nt, prev);
}

/* All threads of the block on SM want_smid load the prime offsets (any
 * order, ld.global.cg), `rounds` times over, each round ending with every
 * value consumed and a block barrier; then thread 0 times each probe in
 * order, each address dependent on the last value. Probe offsets (and prime
 * offsets when prime_in_smem) are copied to shared memory before the prime,
 * so reading them does not touch L2 afterwards. */
extern "C" __global__ void __launch_bounds__(GX_PP_THREADS)
    gx_prime_probe(char *base, const u64 *prime, u64 n_prime, unsigned prime_in_smem,
                   unsigned rounds, const u64 *probe, u64 n_probe, unsigned want_smid,
                   u64 linger, u64 zero, u64 budget, u64 *res, unsigned *cycles_out, u64 ticket)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    u64 *s_probe = gx_smem + GX_HDR_WORDS;
    u64 *s_prime = s_probe + n_probe;
    unsigned *s_cyc = (unsigned *)(s_prime + (prime_in_smem ? n_prime : 0));
    if (!gx_claim(res, want_smid, linger, ticket, hdr))
        return;
    if (threadIdx.x == 0)
        hdr[2] = 0; /* late flag */
    for (u64 i = threadIdx.x; i < n_probe; i += blockDim.x)
        s_probe[i] = probe[i];
    if (prime_in_smem)
        for (u64 i = threadIdx.x; i < n_prime; i += blockDim.x)
            s_prime[i] = prime[i];
    __syncthreads();
    const u64 t_begin = gx_clock();
    u64 acc = 0, done = 0;
    for (unsigned r = 0; r < rounds; r++) {
        for (u64 i = threadIdx.x; i < n_prime; i += blockDim.x) {
            /* offsets beyond shared memory: read evict-first (ld.global.cs), so
             * the offset lines that pass through L2 go before any line a test
             * watches (not yet measured on a chip) */
            const u64 off = prime_in_smem ? s_prime[i] : __ldcs(prime + i);
            acc += gx_ld_cg(base + off);
            done++;
            if ((done & 15) == 0 && gx_clock() - t_begin > budget) {
                hdr[2] = 1;
                break;
            }
        }
        if ((acc & zero) != 0) /* never true: every load of the round completes first */
            hdr[3] = acc;
        __syncthreads();
        if (hdr[2])
            break;
    }
    if (threadIdx.x != 0)
        return;
    u64 prev = 0, status = hdr[2] ? GX_ST_TIMEOUT : GX_ST_OK, i = 0;
    const unsigned sink = gx_sink_addr(gx_smem);
    if (status == GX_ST_OK)
        for (; i < n_probe; i++) {
            u64 *a = (u64 *)(base + s_probe[i] + (prev & zero));
            s_cyc[i] = gx_timed_op(GX_KOP_LOAD, a, &prev, sink);
            if (gx_clock() - t_begin > budget) {
                status = GX_ST_TIMEOUT;
                i++;
                break;
            }
        }
    for (u64 k = 0; k < i; k++)
        cycles_out[k] = s_cyc[k];
    gx_report_ops(res, status, want_smid, i, i, prev);
}

/* Contention (target.h gx_target_contend). The block on SM want_smid that
 * wins the claim measures: it waits `settle` cycles for the other blocks to
 * start, then thread 0 loads each probe once untimed and `reps` times timed
 * (each address dependent on the last value); cycles_out[i] = the least of
 * probe i's timed loads. Every other block (the host launches one per SM)
 * hammers: its first hammer_warps warps load the hammered line back to back,
 * four 4-byte loads in flight a warp (the first four words at
 * hammer_off), until the measurer raises the stop word
 * (res[GX_R_AUX] = ticket | GX_CONTEND_STOP_BIT, a value no other kernel
 * writes there) or the budget runs out, and adds its loads to
 * res[GX_R_CYCLES] (the host zeroes both slots before the launch). */
extern "C" __global__ void __launch_bounds__(GX_SEQ_THREADS)
    gx_contend(char *base, u64 hammer_off, unsigned hammer_warps, const u64 *probe, u64 n_probe,
               unsigned reps, unsigned want_smid, u64 settle, u64 zero, u64 budget, u64 *res,
               unsigned *cycles_out, u64 ticket)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    const u64 stop = ticket | GX_CONTEND_STOP_BIT;
    const u64 t_begin = gx_clock();
    if (threadIdx.x == 0) {
        u64 mine = 0;
        if (gx_smid() == want_smid && atomicExch(&res[GX_R_CLAIM], ticket) != ticket)
            mine = 1;
        hdr[0] = mine;
    }
    __syncthreads();
    if (!hdr[0]) {
        const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        if (threadIdx.x == 0)
            atomicAdd(&res[GX_R_STEPS], 1ull); /* started (the host zeroed the slot) */
        if (warp >= hammer_warps)
            return;
        const unsigned *h = (const unsigned *)(base + hammer_off);
        volatile u64 *flag = (volatile u64 *)&res[GX_R_AUX];
        unsigned acc = 0;
        const unsigned z = (unsigned)zero;
        unsigned it = 1;
        for (;; it++) {
            const unsigned *a = h + (acc & z);
            acc += gx_ld_cg32(a) + gx_ld_cg32(a + 1) + gx_ld_cg32(a + 2) + gx_ld_cg32(a + 3);
            if ((it & 63) == 0 && (*flag == stop || gx_clock() - t_begin > budget))
                break;
        }
        if ((acc & z) != 0) /* never true */
            hdr[3] = acc;
        if (lane == 0)
            atomicAdd(&res[GX_R_CYCLES], (u64)it * 4u);
        return;
    }
    if (threadIdx.x != 0)
        return;
    /* wait until every other block has started (or `settle` cycles) */
    {
        volatile u64 *started = (volatile u64 *)&res[GX_R_STEPS];
        const u64 t0 = gx_clock();
        while (*started < gridDim.x - 1 && gx_clock() - t0 < settle)
            ;
    }
    /* each timed load: clock, load, the value folded into the next address
     * (and.b64 with zero: the clock read after it waits for the value), clock */
    u64 dep = 0, status = GX_ST_OK, i = 0;
    for (; i < n_probe; i++) {
        const char *a = base + __ldcs(probe + i);
        u64 v = gx_ld_cg(a + dep);
        asm volatile("and.b64 %0, %1, %2;" : "=l"(dep) : "l"(v), "l"(zero) : "memory");
        u64 least = ~0ull;
        for (unsigned r = 0; r < reps; r++) {
            const u64 t0 = gx_clock();
            v = gx_ld_cg(a + dep);
            asm volatile("and.b64 %0, %1, %2;" : "=l"(dep) : "l"(v), "l"(zero) : "memory");
            const u64 t = gx_clock() - t0 + dep;
            least = t < least ? t : least;
        }
        cycles_out[i] = least > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)least;
        if (gx_clock() - t_begin > budget) {
            status = GX_ST_TIMEOUT;
            i++;
            break;
        }
    }
    atomicExch(&res[GX_R_AUX], stop);
    gx_report_ops(res, status, want_smid, i, i, dep);
}

/* Chain builder, pass 1: zero every chain word. */
extern "C" __global__ void __launch_bounds__(GX_BUILD_THREADS)
    gx_chain_clear(char *base, const u64 *off, u64 n)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        *(u64 *)(base + off[i]) = 0;
}

/* Chain builder, pass 2: word off[i] <- address of word off[i+1 mod n]. A
 * word written twice (duplicate offset) is reported with GX_ST_DUP. */
extern "C" __global__ void __launch_bounds__(GX_BUILD_THREADS)
    gx_chain_link(char *base, const u64 *off, u64 n, u64 *res)
{
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const u64 next = i + 1 == n ? 0 : i + 1;
        const u64 old = atomicExch((u64 *)(base + off[i]), (u64)(base + off[next]));
        if (old != 0) {
            res[GX_R_STATUS] = GX_ST_DUP;
            res[GX_R_AUX] = off[i];
        }
    }
}

/* SM census: each block counts itself under its %smid, then lingers so the
 * first wave covers every SM. */
extern "C" __global__ void gx_census(unsigned *seen, u64 linger)
{
    if (threadIdx.x != 0)
        return;
    const unsigned id = gx_smid();
    atomicAdd(&seen[id < GX_CENSUS_IDS ? id : GX_CENSUS_OVERFLOW], 1u);
    atomicMax(&seen[GX_CENSUS_NSMID], gx_nsmid());
    gx_linger(linger);
}

/* the shared-memory probe (its own file, one translation unit) */
#include "gx_smem.cu"

/* ---- translation chase (gx_target_xchase) ----
 * The timed thread (the block on want_smid, claimed through res[CLAIM])
 * waits until the thrashing thread runs (flags[0], when thrash_steps > 0),
 * then loads base + i * stride (+ the previous value & zero: a dependent
 * chain) for i = 0 .. steps - 1, warm_rounds untimed rounds, then
 * timed_rounds rounds each access between two clock64 reads, the cycles
 * (saturated to 16 bits) kept in shared memory and copied out at the end
 * (no timed round touches any other memory); then it raises flags[1]. The
 * thrashing thread (the block on thrash_smid, claimed through res[AUX])
 * raises flags[0] and chases its own window until flags[1] (polled every
 * GX_XTHRASH_POLL steps) or its budget. */
#define GX_XTHRASH_POLL 64

static __device__ __forceinline__ u64 gx_ld_volatile(const u64 *p)
{
    u64 v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ void gx_xthrash(const char *base, u64 stride, u64 steps, u64 zero, u64 budget,
                                  u64 *flags)
{
    atomicExch(&flags[0], 1ull);
    const u64 t_begin = gx_clock();
    u64 prev = 0, i = 0, n = 0;
    while (gx_clock() - t_begin < budget) {
        prev = gx_ld_cg(base + i * stride + (prev & zero));
        if (++i == steps)
            i = 0;
        if (++n % GX_XTHRASH_POLL == 0 && gx_ld_volatile(&flags[1]))
            break;
    }
    flags[2] = prev;
}

extern "C" __global__ void __launch_bounds__(GX_CHASE_THREADS)
    gx_xchase(const char *base, u64 stride, u64 steps, u64 warm_rounds, u64 timed_rounds,
              unsigned want_smid, u64 linger, u64 zero, u64 budget, u64 *res,
              unsigned short *cycles_out, u64 ticket, const char *tbase, u64 tstride,
              u64 tsteps, unsigned thrash_smid, u64 *flags)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    unsigned short *s_cyc = (unsigned short *)(gx_smem + GX_HDR_WORDS);
    if (threadIdx.x == 0) {
        u64 role = 0;
        const unsigned me = gx_smid();
        if (me == want_smid && atomicExch(&res[GX_R_CLAIM], ticket) != ticket)
            role = 1;
        else if (tsteps && me == thrash_smid && atomicExch(&res[GX_R_AUX], ticket) != ticket)
            role = 2;
        hdr[0] = role;
        if (!role && linger)
            gx_linger(linger);
    }
    __syncthreads();
    if (hdr[0] == 2 && threadIdx.x == 0)
        gx_xthrash(tbase, tstride, tsteps, zero, budget, flags);
    if (hdr[0] != 1)
        return;
    if (threadIdx.x == 0) {
        const unsigned sink = gx_sink_addr(gx_smem);
        const u64 t_begin = gx_clock();
        u64 status = GX_ST_OK, prev = 0, done = 0;
        if (tsteps)
            while (!gx_ld_volatile(&flags[0]))
                if (gx_clock() - t_begin > budget) {
                    status = GX_ST_TIMEOUT;
                    break;
                }
        for (u64 r = 0; status == GX_ST_OK && r < warm_rounds + timed_rounds; r++) {
            for (u64 i = 0; i < steps; i++) {
                const char *a = base + i * stride + (prev & zero);
                const u64 t0 = gx_clock();
                const u64 v = gx_ld_cg(a);
                gx_consume(sink, v);
                const u64 t1 = gx_clock();
                prev = v;
                if (r >= warm_rounds) {
                    const u64 d = t1 - t0;
                    s_cyc[done++] = d > 0xFFFFull ? (unsigned short)0xFFFF : (unsigned short)d;
                }
            }
            if (gx_clock() - t_begin > budget)
                status = GX_ST_TIMEOUT;
        }
        if (tsteps)
            atomicExch(&flags[1], 1ull);
        if (status == GX_ST_OK && gx_smid() != want_smid)
            status = GX_ST_MOVED;
        res[GX_R_STATUS] = status;
        res[GX_R_STEPS] = done;
        res[GX_R_SMID] = gx_smid();
        res[GX_R_SINK] = prev;
        hdr[1] = done;
    }
    __syncthreads();
    const u64 n = hdr[1];
    for (u64 k = threadIdx.x; k < n; k += blockDim.x)
        cycles_out[k] = s_cyc[k];
}
