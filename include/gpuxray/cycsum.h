/* cycsum.h - an exact, order-independent sum of latencies in cycles.
 *
 * Notes:
 * - Every latency is rounded once to a multiple of 2^-GX_CYC_FRAC_BITS
 *   cycles and the integers are added (a 128-bit two's-complement
 *   accumulator), so the total does not depend on the order of the
 *   additions. That lets threads and shards of a trace run (and the L2's
 *   batch run) add their parts and print the very total one thread prints: a
 *   sum of doubles rounds at every step, in an order a split run cannot keep.
 * - The error per access is at most 2^-33 cycles; latencies of 2^31 cycles
 *   or more are counted in whole cycles; NaN is not a latency (ignored). */
#ifndef GPUXRAY_CYCSUM_H
#define GPUXRAY_CYCSUM_H

#include <math.h>
#include <stdint.h>

#define GX_CYC_FRAC_BITS 32             /* fraction bits of the fixed-point total */
#define GX_CYC_SCALE 4294967296.0       /* 2^GX_CYC_FRAC_BITS */
#define GX_CYC_FAST_LIMIT 2147483648.0  /* |latency| below 2^31: scaled, it fits an int64 */
#define GX_CYC_WHOLE_LIMIT 4.0e18       /* larger latencies are clamped here (int64 range) */

/* value = (hi * 2^64 + lo) / 2^GX_CYC_FRAC_BITS cycles (two's complement) */
typedef struct gx_cyc_sum {
    uint64_t lo;
    int64_t hi;
} gx_cyc_sum;

static inline void gx_cyc_add_fixed(gx_cyc_sum *a, int64_t v)
{
    uint64_t u = (uint64_t)v, old = a->lo;
    a->lo = old + u;
    a->hi += (int64_t)(a->lo < old) - (int64_t)(v < 0);
}

static inline void gx_cyc_add(gx_cyc_sum *a, double lat)
{
    if (__builtin_expect(fabs(lat) < GX_CYC_FAST_LIMIT, 1)) {
        double x = lat * GX_CYC_SCALE;
        gx_cyc_add_fixed(a, (int64_t)(x + (x >= 0 ? 0.5 : -0.5)));
        return;
    }
    if (lat != lat) /* NaN: not a latency */
        return;
    double w = lat > GX_CYC_WHOLE_LIMIT ? GX_CYC_WHOLE_LIMIT
                                        : lat < -GX_CYC_WHOLE_LIMIT ? -GX_CYC_WHOLE_LIMIT : lat;
    int64_t c = (int64_t)w; /* whole cycles, shifted up by the fraction bits */
    gx_cyc_sum d = {(uint64_t)c << GX_CYC_FRAC_BITS, c >> GX_CYC_FRAC_BITS};
    uint64_t old = a->lo;
    a->lo += d.lo;
    a->hi += d.hi + (int64_t)(a->lo < old);
}

static inline void gx_cyc_merge(gx_cyc_sum *a, const gx_cyc_sum *b)
{
    uint64_t old = a->lo;
    a->lo += b->lo;
    a->hi += b->hi + (int64_t)(a->lo < old);
}

static inline double gx_cyc_value(const gx_cyc_sum *a)
{
    return (double)a->hi * GX_CYC_SCALE +
           (double)a->lo / GX_CYC_SCALE;
}

/* The fixed-point value of lat as gx_cyc_add would add it, for adding one
 * latency many times (gx_cyc_add_fixed); only for |lat| < GX_CYC_FAST_LIMIT. */
static inline int64_t gx_cyc_fixed(double lat)
{
    double x = lat * GX_CYC_SCALE;
    return (int64_t)(x + (x >= 0 ? 0.5 : -0.5));
}

#endif
