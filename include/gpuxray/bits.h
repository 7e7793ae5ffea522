/* bits.h - the small integer helpers every module needs: power-of-two test,
 * base-2 logarithms, bit scans and a qsort comparator for uint64_t.
 *
 * Notes:
 * - One definition each, so a rule ("a power of two", "log2 of a line")
 *   means the same thing in the validator, the model, discovery and tests.
 * - Logarithm rules (x is a uint64_t):
 *     gx_log2_u64(x)       floor(log2(x)) for x >= 1; 0 for x == 0 (so a
 *                          caller never shifts by a negative amount).
 *                          Exact for powers of two: gx_log2_u64(1 << k) == k.
 *     gx_log2_exact_u64(x) k when x == 2^k, else -1 (not a power of two, or 0).
 *     gx_log2_ceil_u64(x)  the least k with 2^k >= x: 0 for x <= 1, 64 for
 *                          x > 2^63.
 * - gx_is_pow2_u64(0) is 0: zero is not a power of two.
 * - Header-only (static inline): these sit on hot paths of the model. */
#ifndef GPUXRAY_BITS_H
#define GPUXRAY_BITS_H

#include <stdint.h>

static inline int gx_is_pow2_u64(uint64_t x)
{
    return x && !(x & (x - 1));
}

static inline int gx_log2_u64(uint64_t x)
{
    return x ? 63 - __builtin_clzll(x) : 0;
}

static inline int gx_log2_exact_u64(uint64_t x)
{
    return gx_is_pow2_u64(x) ? __builtin_ctzll(x) : -1;
}

static inline int gx_log2_ceil_u64(uint64_t x)
{
    return x <= 1 ? 0 : 64 - __builtin_clzll(x - 1);
}

/* x86-64 with GCC or Clang (GX_HOST_V3 1): a hot loop may have a second
 * copy compiled for x86-64-v3 hosts (GX_TARGET_V3: AVX2, BMI1/2, POPCNT),
 * called when gx_host_v3() says the host has them; the same results, only
 * the instructions differ. Elsewhere one copy (gx_host_v3() is 0). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GX_HOST_V3 1
#define GX_TARGET_V3 __attribute__((target("avx2,bmi,bmi2,popcnt")))
#else
#define GX_HOST_V3 0
#define GX_TARGET_V3
#endif

/* 1 when the host runs GX_TARGET_V3 code (the compiler's cpu model, set up
 * before main: no state here; a few instructions, for a caller that asks
 * once a batch). */
static inline int gx_host_v3(void)
{
#if GX_HOST_V3
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
    return 0;
#endif
}

/* gx_host_v3 with a PEXT of a few cycles: not AMD Zen 1 or 2, whose
 * microcoded PEXT takes tens of cycles or more (for a copy that uses it). */
static inline int gx_host_v3_pext(void)
{
#if GX_HOST_V3
    return gx_host_v3() && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
#else
    return 0;
#endif
}

/* Lowest / highest set bit index; -1 for 0. */
static inline int gx_low_bit_u64(uint64_t x)
{
    return x ? __builtin_ctzll(x) : -1;
}

static inline int gx_high_bit_u64(uint64_t x)
{
    return x ? 63 - __builtin_clzll(x) : -1;
}

/* qsort comparator: ascending uint64_t. */
static inline int gx_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#endif
