/* rng.h - small, fast, seeded pseudo-random generator (xoshiro256**,
 * seeded through splitmix64). Every random choice in the project (noise,
 * placement, random policies, generators, discovery pools) goes through it,
 * so a seed reproduces a run exactly. Not for cryptography. */
#ifndef GPUXRAY_RNG_H
#define GPUXRAY_RNG_H

#include <stdint.h>

typedef struct gx_rng {
    uint64_t s[4];
} gx_rng;

void gx_rng_seed(gx_rng *r, uint64_t seed);
uint64_t gx_rng_next(gx_rng *r);
/* Uniform in [0, n); n > 0. Unbiased (Lemire's multiply-shift with retry). */
uint64_t gx_rng_below(gx_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double gx_rng_uniform(gx_rng *r);
/* Standard normal (Box-Muller). */
double gx_rng_normal(gx_rng *r);
/* Fisher-Yates shuffle of n uint64 values. */
void gx_rng_shuffle_u64(gx_rng *r, uint64_t *v, uint64_t n);
/* A 64-bit mix of x (splitmix64 finaliser): deterministic hashing of ids. */
uint64_t gx_mix64(uint64_t x);

#endif
