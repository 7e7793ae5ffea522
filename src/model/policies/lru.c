/* lru.c - true LRU: evict the way used least recently.
 *
 * Notes:
 * - State: one byte per way, its recency rank (0 = most recently used,
 *   ways-1 = least), a permutation of 0..ways-1 at all times; 64 bytes for
 *   64 ways. A touch ranks every younger way one older: a fixed-length,
 *   branch-free loop the compiler vectorises.
 * - Initial ranks are the way numbers, so an empty set fills 0, 1, 2, ...
 *   in the same order the cache fills invalid ways.
 * - An invalidated way becomes the least recently used.
 * - rank helpers are shared with fifo.c (FIFO = LRU without hit updates). */
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "policy_internal.h"

/* Ways in multiples of 16 (the 32- and 64-way TLB levels and page-walk
 * caches of the translation model) take 16 ranks per SSE2 instruction; the
 * scalar loops are not vectorised at -O2. Same results. Measured (callgrind,
 * random 64 MiB trace over 4 KiB pages with gem5's Vega TLBs, instructions
 * per access of the whole run): see docs/performance.md, "Translation
 * throughput". */
#ifdef __SSE2__
#define RANK_SIMD 1
#else
#define RANK_SIMD 0
#endif

size_t gx_rank_state_bytes(uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    return ((size_t)ways + 7u) & ~(size_t)7u;
}

void gx_rank_init(void *st, uint32_t ways, const gx_policy_params *p)
{
    (void)p;
    uint8_t *r = st;
    for (uint32_t w = 0; w < ways; w++)
        r[w] = (uint8_t)w;
}

void gx_rank_touch(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)p;
    uint8_t *r = st;
    uint8_t mine = r[way];
#if RANK_SIMD
    if (!(ways & 15)) {
        /* ranks are < 64: signed byte compares are exact; r < mine adds 1 */
        const __m128i m = _mm_set1_epi8((char)mine);
        for (uint32_t w = 0; w < ways; w += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(r + w));
            v = _mm_sub_epi8(v, _mm_cmplt_epi8(v, m));
            _mm_storeu_si128((__m128i *)(r + w), v);
        }
        r[way] = 0;
        return;
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        r[w] = (uint8_t)(r[w] + (r[w] < mine));
    r[way] = 0;
}

uint32_t gx_rank_victim(void *st, uint32_t ways, const gx_policy_params *p, gx_rng *rng)
{
    (void)p;
    (void)rng;
    const uint8_t *r = st;
    uint32_t oldest = ways - 1, v = 0;
#if RANK_SIMD
    if (!(ways & 15)) { /* the one way of rank ways - 1 (ranks are a permutation) */
        const __m128i o = _mm_set1_epi8((char)oldest);
        for (uint32_t w = 0; w < ways; w += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(r + w));
            int bits = _mm_movemask_epi8(_mm_cmpeq_epi8(x, o));
            if (bits)
                return w + (uint32_t)__builtin_ctz((unsigned)bits);
        }
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        v = r[w] == oldest ? w : v;
    return v;
}

void gx_rank_invalidate(void *st, uint32_t ways, uint32_t way, const gx_policy_params *p)
{
    (void)p;
    uint8_t *r = st;
    uint8_t mine = r[way];
    for (uint32_t w = 0; w < ways; w++)
        r[w] = (uint8_t)(r[w] - (r[w] > mine));
    r[way] = (uint8_t)(ways - 1);
}

static int lru_parse(const char *args, gx_policy_params *p, gx_msg *msg)
{
    (void)p;
    return gx_policy_parse_none("lru", args, msg);
}

const gx_policy_ops gx_policy_lru_ops = {
    .family = "lru",
    .help = "lru: true least-recently-used (no arguments)",
    .parse = lru_parse,
    .state_bytes = gx_rank_state_bytes,
    .init = gx_rank_init,
    .on_hit = gx_rank_touch,
    .on_fill = gx_rank_touch,
    .victim = gx_rank_victim,
    .on_invalidate = gx_rank_invalidate,
    .randomized = 0,
    .format_args = NULL,
};
