/* noise.c - seeded timing noise and the per-(SM, slice) skew (see noise.h).
 *
 * Models: jitter is gaussian (a 4096-entry quantile table indexed by 12
 * random bits: exact quantiles, tails cut at about 3.5 sigma, no log/cos in
 * the hot path); an outlier adds a fixed large cost with a given
 * probability; background evictions happen with probability rate/1000 per
 * access. The skew stands for on-chip distance: a hash of (chip seed, SM,
 * slice) mapped uniformly to [0, amplitude), fixed for a chip.
 *
 * Notes: probabilities are thresholds on 26 random bits (resolution 1.5e-8). */
#include "noise.h"

#include <math.h>
#include <string.h>

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* Inverse of the standard normal CDF by bisection (setup only). */
static double normal_quantile(double p)
{
    double lo = -10.0, hi = 10.0;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (normal_cdf(mid) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static uint64_t prob_thresh(double p)
{
    if (!(p > 0))
        return 0;
    if (p >= 1)
        return GX_NOISE_P_MASK + 1;
    return (uint64_t)llround(p * (double)(GX_NOISE_P_MASK + 1));
}

void gx_noise_init(gx_noise *n, int on, double jitter_cycles, double outlier_rate,
                   double outlier_cycles, double evictions_per_kaccess, uint64_t seed)
{
    memset(n, 0, sizeof *n);
    n->on = on;
    n->jitter_cycles = isfinite(jitter_cycles) && jitter_cycles > 0 ? jitter_cycles : 0;
    n->outlier_cycles = isfinite(outlier_cycles) ? outlier_cycles : 0;
    n->outlier_thresh = prob_thresh(isfinite(outlier_rate) ? outlier_rate : 0);
    double e = isfinite(evictions_per_kaccess) && evictions_per_kaccess > 0
                   ? evictions_per_kaccess / 1000.0 : 0;
    n->evict_whole = (uint32_t)floor(e);
    n->evict_thresh = prob_thresh(e - floor(e));
    gx_rng_seed(&n->rng, seed);
    if (on)
        for (int i = 0; i < GX_NOISE_TABLE; i++)
            n->gauss[i] = (float)normal_quantile((i + 0.5) / GX_NOISE_TABLE);
}

double gx_skew_cycles(uint64_t chip_seed, uint32_t sm, uint32_t slice, double amplitude)
{
    if (!(amplitude > 0))
        return 0;
    uint64_t h = gx_mix64(gx_mix64(chip_seed ^ 0x5ce3a11dULL) ^ ((uint64_t)sm << 32 | slice));
    return amplitude * (double)(h >> 11) * 0x1.0p-53;
}
