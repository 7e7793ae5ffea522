/* noise.h - internal to the model: the seeded timing noise of a simulated
 * GPU (gaussian jitter, rare large outliers, background evictions) and the
 * deterministic per-(SM, slice) latency skew. Used by l2.c and the sim
 * target. */
#ifndef GPUXRAY_MODEL_NOISE_H
#define GPUXRAY_MODEL_NOISE_H

#include <stdint.h>

#include "gpuxray/rng.h"

#define GX_NOISE_TABLE 4096 /* 12 bits */
#define GX_NOISE_P_BITS 26
#define GX_NOISE_P_MASK ((1ULL << GX_NOISE_P_BITS) - 1)

typedef struct gx_noise {
    int on;
    double jitter_cycles;     /* gaussian sigma */
    double outlier_cycles;    /* added to an outlier */
    uint64_t outlier_thresh;  /* outlier when 26 random bits < thresh */
    uint64_t evict_thresh;    /* background eviction when 26 random bits < thresh */
    uint32_t evict_whole;     /* whole evictions per access (rates above 1000/kaccess) */
    gx_rng rng;
    float gauss[GX_NOISE_TABLE]; /* standard normal quantiles at (i + 0.5) / N */
} gx_noise;

/* on = 0 gives a noise object that adds nothing. */
void gx_noise_init(gx_noise *n, int on, double jitter_cycles, double outlier_rate,
                   double outlier_cycles, double evictions_per_kaccess, uint64_t seed);
/* The noise of one access: jitter plus (rarely) an outlier, in cycles, and
 * the number of background evictions due with it (*evictions, usually 0).
 * One rng draw: bits 52..63 pick the gaussian quantile, bits 26..51 decide
 * an outlier, bits 0..25 an eviction (probability resolution 2^-26). */
static inline double gx_noise_access(gx_noise *n, uint32_t *evictions)
{
    if (!n->on) {
        *evictions = 0;
        return 0.0;
    }
    uint64_t r = gx_rng_next(&n->rng);
    double v = n->jitter_cycles * (double)n->gauss[r >> 52];
    if (((r >> 26) & GX_NOISE_P_MASK) < n->outlier_thresh)
        v += n->outlier_cycles;
    *evictions = n->evict_whole + ((r & GX_NOISE_P_MASK) < n->evict_thresh ? 1u : 0u);
    return v;
}
/* Jitter only (timer readings). */
static inline double gx_noise_jitter(gx_noise *n)
{
    if (!n->on)
        return 0.0;
    return n->jitter_cycles * (double)n->gauss[gx_rng_next(&n->rng) >> 52];
}

/* Deterministic skew in [0, amplitude) for (sm, slice) given a chip seed. */
double gx_skew_cycles(uint64_t chip_seed, uint32_t sm, uint32_t slice, double amplitude);

#endif
