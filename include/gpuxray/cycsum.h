/* cycsum.h - an exact, order-independent sum of latencies in cycles.
 *
 * Notes:
 * - Every latency is rounded once to a multiple of 2^-GX_CYC_FRAC_BITS
 *   cycles and the integers are added, so the total does not depend on the
 *   order of the additions. That lets threads and shards of a trace run
 *   (and the L2's batch run) add their parts and print the very total one
 *   thread prints: a sum of doubles rounds at every step, in an order a
 *   split run cannot keep. The error per access is below 2^-32 cycles;
 *   latencies of 2^31 cycles or more are counted in whole cycles; NaN is not
 *   a latency (ignored).
 * - Its cost (callgrind, 1 M random 4-byte reads, seed card with plru, one
 *   thread, whole run): 591 -> 608 M instructions against a sum of doubles
 *   (12 of them in gx_cyc_add); a first version with two 64-bit halves and
 *   rounding to nearest cost 615 M. */
#ifndef GPUXRAY_CYCSUM_H
#define GPUXRAY_CYCSUM_H

#include <math.h>
#include <stdint.h>

#define GX_CYC_FRAC_BITS 32             /* fraction bits of the fixed-point total */
#define GX_CYC_SCALE 4294967296.0       /* 2^GX_CYC_FRAC_BITS */
#define GX_CYC_FAST_LIMIT 2147483648.0  /* |latency| below 2^31: scaled, it fits an int64 */
#define GX_CYC_WHOLE_LIMIT 4.0e18       /* larger latencies are clamped here (int64 range) */

/* value = v / 2^GX_CYC_FRAC_BITS cycles; 128 bits (a GCC / Clang type): the
 * hot loops add with one add-with-carry. */
typedef struct gx_cyc_sum {
    __int128 v;
} gx_cyc_sum;

static inline void gx_cyc_add(gx_cyc_sum *a, double lat)
{
    /* truncated toward zero: any fixed rounding keeps the sum order-free */
    if (__builtin_expect(fabs(lat) < GX_CYC_FAST_LIMIT, 1)) {
        a->v += (int64_t)(lat * GX_CYC_SCALE);
        return;
    }
    if (lat != lat) /* NaN: not a latency */
        return;
    double w = lat > GX_CYC_WHOLE_LIMIT ? GX_CYC_WHOLE_LIMIT
                                        : lat < -GX_CYC_WHOLE_LIMIT ? -GX_CYC_WHOLE_LIMIT : lat;
    a->v += (__int128)(int64_t)w * ((__int128)1 << GX_CYC_FRAC_BITS); /* whole cycles */
}

static inline void gx_cyc_merge(gx_cyc_sum *a, const gx_cyc_sum *b)
{
    a->v += b->v;
}

static inline double gx_cyc_value(const gx_cyc_sum *a)
{
    return (double)a->v / GX_CYC_SCALE;
}

/* The two 64-bit halves (partial statistics), and back. */
static inline int64_t gx_cyc_hi(const gx_cyc_sum *a)
{
    return (int64_t)(a->v >> 64);
}

static inline uint64_t gx_cyc_lo(const gx_cyc_sum *a)
{
    return (uint64_t)a->v;
}

static inline gx_cyc_sum gx_cyc_from(int64_t hi, uint64_t lo)
{
    gx_cyc_sum a = {(__int128)((unsigned __int128)(uint64_t)hi << 64 | lo)};
    return a;
}

/* lat added n times (one latency repeated: a run's repeats of one sector). */
static inline void gx_cyc_add_n(gx_cyc_sum *a, double lat, uint64_t n)
{
    if (__builtin_expect(fabs(lat) < GX_CYC_FAST_LIMIT, 1)) {
        a->v += (__int128)(int64_t)(lat * GX_CYC_SCALE) * (__int128)n;
        return;
    }
    for (uint64_t i = 0; i < n; i++)
        gx_cyc_add(a, lat);
}

#endif
