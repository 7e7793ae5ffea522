/* gen_pages.c - the `pages` trace pattern: a page-walk workload of count
 * pages of page_bytes from base (see gx_gen_pattern in trace.h).
 *
 * Models: first the MAP records of the mapped pages, one per run of
 * consecutive mapped pages (all of them in one record when unmapped_every
 * is 0; with K > 1, page k is left unmapped when k % K == K - 1, so runs
 * are K - 1 pages); then one access at the start of each mapped page, in
 * the chosen order, skipping unmapped pages (their entries are the invalid
 * neighbours a walker's fetch returns).
 *
 * Notes:
 * - strided: S columns of the pages taken as rows of S: 0, S, 2S, ..., then
 *   1, 1 + S, ...: every page once (a permutation for any S).
 * - random: a seeded bijection of [0, 2^k) (k the bits of count), odd
 *   multiplications and xor-shifts modulo 2^k, walking the cycle until a
 *   value below count (cycle walking): every page once, no table held. */
#include <string.h>

#include "gen_pages.h"
#include "gpuxray/bits.h"

#define MAX_PAGE_BYTES (1ULL << 39) /* 512 GiB, the largest page a walker installs */

int gx_gen_pages_check(const gx_gen_cfg *c, gx_msg *msg)
{
    if (!gx_is_pow2_u64(c->page_bytes) || c->page_bytes < 4096 || c->page_bytes > MAX_PAGE_BYTES)
        return gx_fail(msg, GX_EINVAL, "--page-size %llu: a power of two from 4KiB to 512GiB",
                       (unsigned long long)c->page_bytes);
    if (!c->count)
        return gx_fail(msg, GX_EINVAL, "--count: the number of pages is required for pages");
    if (c->count > UINT64_MAX / c->page_bytes || c->base > UINT64_MAX - c->count * c->page_bytes)
        return gx_fail(msg, GX_EINVAL, "--base + --count pages overflows the address space");
    if (c->base % c->page_bytes)
        return gx_fail(msg, GX_EINVAL, "--base %#llx: not aligned to --page-size",
                       (unsigned long long)c->base);
    if (c->unmapped_every == 1)
        return gx_fail(msg, GX_EINVAL, "--unmapped-every 1 would leave no page mapped");
    if ((unsigned)c->page_order > GX_PAGES_RANDOM)
        return gx_fail(msg, GX_EINVAL, "unknown page order %d", (int)c->page_order);
    if (c->page_order == GX_PAGES_STRIDED && !c->page_stride)
        return gx_fail(msg, GX_EINVAL, "--stride: at least 1 page for the strided order");
    if (c->size_bytes < 1 || c->size_bytes > GX_TRACE_MAX_SIZE)
        return gx_fail(msg, GX_EINVAL, "--size %u: must be 1..%d bytes", c->size_bytes,
                       GX_TRACE_MAX_SIZE);
    return GX_OK;
}

static int mapped(const gx_gen_cfg *c, uint64_t k)
{
    return c->unmapped_every < 2 || k % c->unmapped_every != c->unmapped_every - 1;
}

static uint64_t map_runs(const gx_gen_cfg *c)
{
    if (c->unmapped_every < 2)
        return 1;
    uint64_t k = c->unmapped_every;
    return c->count / k + (c->count % k ? 1 : 0); /* every block of K has K - 1 >= 1 mapped */
}

uint64_t gx_gen_pages_records(const gx_gen_cfg *c)
{
    uint64_t unmapped = c->unmapped_every < 2 ? 0 : c->count / c->unmapped_every;
    return map_runs(c) + c->count - unmapped;
}

/* A bijection of [0, 2^bits) seeded by seed. */
static uint64_t permute_pow2(uint64_t x, uint32_t bits, uint64_t seed)
{
    uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    uint32_t sh = bits / 2 ? bits / 2 : 1;
    for (int round = 0; round < 3; round++) {
        x = (x * (gx_mix64(seed + (uint64_t)round) | 1)) & mask;
        x ^= x >> sh;
        x = (x + gx_mix64(seed ^ (uint64_t)round)) & mask;
    }
    return x;
}

/* The page visited at access position i. */
static uint64_t page_at(gx_gen *g, uint64_t i)
{
    const gx_gen_cfg *c = &g->cfg;
    switch (c->page_order) {
    case GX_PAGES_STRIDED: {
        uint64_t p = g->pg_r + g->pg_k * c->page_stride;
        if (++g->pg_k * c->page_stride + g->pg_r >= c->count) {
            g->pg_k = 0;
            g->pg_r++;
        }
        return p;
    }
    case GX_PAGES_RANDOM: {
        uint32_t bits = (uint32_t)gx_log2_ceil_u64(c->count);
        uint64_t x = i;
        do
            x = permute_pow2(x, bits, c->seed);
        while (x >= c->count);
        return x;
    }
    default:
        return i;
    }
}

void gx_gen_pages_next(gx_gen *g, gx_trace_rec *r)
{
    const gx_gen_cfg *c = &g->cfg;
    memset(r, 0, sizeof *r);
    if (g->pg_run < map_runs(c)) {
        uint64_t run = c->unmapped_every < 2 ? c->count : c->unmapped_every - 1;
        uint64_t first = g->pg_run * (c->unmapped_every < 2 ? 0 : c->unmapped_every);
        if (first + run > c->count)
            run = c->count - first;
        r->op = GX_TRACE_MAP;
        r->addr = c->base + first * c->page_bytes;
        r->arg = run * c->page_bytes;
        r->size = (uint16_t)gx_log2_u64(c->page_bytes);
        g->pg_run++;
        return;
    }
    uint64_t p;
    do
        p = page_at(g, g->pg_i++);
    while (!mapped(c, p));
    r->addr = c->base + p * c->page_bytes;
    r->size = (uint16_t)c->size_bytes;
}
