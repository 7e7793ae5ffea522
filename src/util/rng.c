/* rng.c - xoshiro256** seeded by splitmix64. See rng.h. */
#include "gpuxray/rng.h"

#include <math.h>

uint64_t gx_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void gx_rng_seed(gx_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = gx_mix64(x);
    }
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gx_rng_next(gx_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t gx_rng_below(gx_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    for (;;) {
        unsigned __int128 m = (unsigned __int128)gx_rng_next(r) * n;
        uint64_t lo = (uint64_t)m;
        if (lo >= n || lo >= (uint64_t)(-n) % n)
            return (uint64_t)(m >> 64);
    }
}

double gx_rng_uniform(gx_rng *r)
{
    return (double)(gx_rng_next(r) >> 11) * 0x1.0p-53;
}

double gx_rng_normal(gx_rng *r)
{
    double u1 = gx_rng_uniform(r);
    double u2 = gx_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void gx_rng_shuffle_u64(gx_rng *r, uint64_t *v, uint64_t n)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = gx_rng_below(r, i);
        uint64_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}
