/* gx_smem.cu - the shared-memory probe kernel behind the cuda target's
 * smem_probe (target.h): one warp's dependent chain of shared-memory loads
 * with given lane offsets and width, timed with clock64. Included by
 * gx_probe.cu (the fatbin's one translation unit), whose helpers (claim,
 * clock, sink) it uses.
 *
 * Notes:
 * - The window (GX_SMEM_WINDOW_BYTES after the header words) is zeroed
 *   first, so every load returns 0 and the next address = the lane's
 *   offset + that value: the compiler cannot fold it, the hardware cannot
 *   issue a load before the previous one returned.
 * - 32-, 64- and 128-bit loads are ld.shared.u32 / .v2.u32 / .v4.u32; only
 *   the first register feeds the chain (a load's registers are written
 *   back together).
 * - The active lanes run the chain together (lanes outside `active` skip
 *   it), so each load is one warp instruction over exactly those lanes.
 * - The timed loop has no budget check (it would add to every access): it
 *   is bounded by reps (<= 65536) x the slowest access (a 32-way conflict of
 *   128-bit loads, well under 10^4 cycles), and the host's wall-clock limit
 *   still applies. */

static __device__ __forceinline__ unsigned gx_lds32(unsigned a)
{
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned gx_lds64(unsigned a)
{
    unsigned x, y;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(a) : "memory");
    return x + (y & 0u); /* y & 0 folds away: only x feeds the chain */
}

static __device__ __forceinline__ unsigned gx_lds128(unsigned a)
{
    unsigned x, y, z, w;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                 : "r"(a)
                 : "memory");
    return x + ((y | z | w) & 0u);
}

static __device__ __forceinline__ void gx_consume32(unsigned sink, unsigned v)
{
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(sink), "r"(v) : "memory");
}

/* warm untimed loads, then reps timed ones between two clock reads */
#define GX_SMEM_CHAIN(LOAD)                                                 \
    do {                                                                    \
        for (unsigned r = 0; r < warm; r++)                                 \
            a = a0 + LOAD(a);                                               \
        gx_consume32(sink, a);                                              \
        t0 = gx_clock();                                                    \
        for (unsigned r = 0; r < reps; r++)                                 \
            a = a0 + LOAD(a);                                               \
        gx_consume32(sink, a);                                              \
        t1 = gx_clock();                                                    \
    } while (0)

/* One warp on SM want_smid: res[CYCLES] = cycles of the reps timed loads,
 * res[STEPS] = reps, res[SINK] = the final address (dead-store guard). */
extern "C" __global__ void __launch_bounds__(32)
    gx_smem_probe(const unsigned *lane_off, unsigned active, unsigned width, unsigned reps,
                  unsigned want_smid, u64 linger, u64 *res, u64 ticket)
{
    extern __shared__ u64 gx_smem[];
    volatile u64 *hdr = gx_smem;
    if (!gx_claim(res, want_smid, linger, ticket, hdr))
        return;
    const unsigned lane = threadIdx.x;
    unsigned *win = (unsigned *)(gx_smem + GX_HDR_WORDS);
    for (unsigned i = lane; i < GX_SMEM_WINDOW_BYTES / 4; i += 32)
        win[i] = 0;
    const unsigned off = lane_off[lane];
    __syncwarp();
    const unsigned sink = gx_sink_addr(gx_smem);
    const unsigned a0 = (unsigned)__cvta_generic_to_shared(win) + off;
    const unsigned warm = reps < 32 ? reps : 32;
    unsigned a = a0;
    u64 t0 = 0, t1 = 0;
    if ((active >> lane) & 1u) {
        if (width == 16)
            GX_SMEM_CHAIN(gx_lds128);
        else if (width == 8)
            GX_SMEM_CHAIN(gx_lds64);
        else
            GX_SMEM_CHAIN(gx_lds32);
        if (lane == (unsigned)(__ffs(active) - 1)) {
            res[GX_R_STATUS] = gx_smid() == want_smid ? GX_ST_OK : GX_ST_MOVED;
            res[GX_R_CYCLES] = t1 - t0;
            res[GX_R_STEPS] = reps;
            res[GX_R_SMID] = gx_smid();
            res[GX_R_SINK] = a;
        }
    }
}
