/* test_facache.c - the fully associative LRU cache of the walker's
 * page-walk caches (src/model/walker/facache.h): a hand-derived LRU
 * sequence on more entries than the policy registry's 64 ways (hits,
 * evictions in LRU order, a touch by insert, flush), the same hit/miss
 * stream as a one-set gx_cache with lru on random sequences for 1..64 ways,
 * and an insertion batch equal to single insertions; the neighbour PWC's
 * run-keeping form (src/model/walker/fablock.h) against it: the same hits,
 * misses and counts on random probes, insertions, fetch-block batches
 * (ascending, partly present, larger than the cache, as lists and as
 * gx_fablock_insert_run's blocks) and flushes. */
#include <stdlib.h>

#include "gpuxray/cache.h"
#include "gpuxray/policy.h"
#include "gpuxray/rng.h"
#include "model/walker/fablock.h"
#include "model/walker/facache.h"
#include "testutil.h"

#define BIG 80 /* entries: above GX_POLICY_MAX_WAYS */

/* A key shaped like a page-table key (index above the low 6 bits). */
static uint64_t key(uint64_t i)
{
    return i << 6 | 3u;
}

static void test_hand_lru_big(void **state)
{
    (void)state;
    assert_true(BIG > GX_POLICY_MAX_WAYS);
    gx_facache *c = gx_facache_new(BIG);
    assert_non_null(c);
    for (uint64_t i = 0; i < BIG; i++) {
        assert_false(gx_facache_probe(c, key(i)));
        gx_facache_insert(c, key(i));
    }
    assert_int_equal(gx_facache_count(c), BIG);
    /* recency, least recent first: 0 1 2 .. 79 */
    assert_true(gx_facache_probe(c, key(0)));  /* 1 2 .. 79 0 */
    gx_facache_insert(c, key(BIG));            /* evicts 1: 2 .. 79 0 80 */
    assert_false(gx_facache_probe(c, key(1)));
    assert_true(gx_facache_probe(c, key(2)));  /* 3 .. 79 0 80 2 */
    gx_facache_insert(c, key(BIG + 1));        /* evicts 3 */
    gx_facache_insert(c, key(BIG + 2));        /* evicts 4: 5 .. 79 0 80 2 81 82 */
    assert_false(gx_facache_probe(c, key(3)));
    assert_false(gx_facache_probe(c, key(4)));
    gx_facache_insert(c, key(5));              /* present: a touch, 6 is the oldest now */
    gx_facache_insert(c, key(BIG + 3));        /* evicts 6 */
    assert_false(gx_facache_probe(c, key(6)));
    uint64_t held[] = {0, 2, 5, 7, BIG - 1, BIG, BIG + 1, BIG + 2, BIG + 3};
    for (size_t k = 0; k < sizeof held / sizeof *held; k++)
        assert_true(gx_facache_probe(c, key(held[k])));
    assert_int_equal(gx_facache_count(c), BIG);
    /* after the probes above the oldest are 8, 9, ..: two insertions evict them */
    gx_facache_insert(c, key(1000));
    gx_facache_insert(c, key(1001));
    assert_false(gx_facache_probe(c, key(8)));
    assert_false(gx_facache_probe(c, key(9)));
    assert_true(gx_facache_probe(c, key(10)));
    gx_facache_flush(c);
    assert_int_equal(gx_facache_count(c), 0);
    assert_false(gx_facache_probe(c, key(0)));
    assert_false(gx_facache_probe(c, key(1000)));
    gx_facache_insert(c, key(1000));
    assert_true(gx_facache_probe(c, key(1000)));
    assert_int_equal(gx_facache_count(c), 1);
    gx_facache_free(c);
}

/* Random probes, insertions (single and batched) and flushes on a
 * gx_facache and a one-set gx_cache with lru: identical hit/miss streams. */
static void compare_ways(uint32_t ways, uint64_t seed)
{
    gx_cache_cfg cc = {32, 32, ways, 1, "lru", 1, 0};
    gx_cache *ref = NULL;
    assert_int_equal(gx_cache_new(&cc, &ref, NULL), GX_OK);
    gx_facache *fa = gx_facache_new(ways);
    assert_non_null(fa);
    gx_rng r;
    gx_rng_seed(&r, seed);
    uint64_t universe = 2u * ways + 3u, hits = 0, misses = 0;
    for (int op = 0; op < 20000; op++) {
        uint64_t u = gx_rng_below(&r, 1000);
        if (u < 2) {
            gx_cache_flush(ref);
            gx_facache_flush(fa);
        } else if (u < 500) {
            uint64_t k = key(gx_rng_below(&r, universe));
            int want = gx_cache_access(ref, 0, k, 0, 0, NULL) == GX_CACHE_HIT;
            assert_int_equal(gx_facache_probe(fa, k), want);
            hits += (uint64_t)want;
            misses += (uint64_t)!want;
        } else if (u < 900) {
            uint64_t k = key(gx_rng_below(&r, universe));
            gx_cache_insert(ref, 0, k, 1u, NULL);
            gx_facache_insert(fa, k);
        } else {
            uint64_t keys[16];
            uint32_t n = (uint32_t)gx_rng_below(&r, 16) + 1;
            for (uint32_t j = 0; j < n; j++) {
                keys[j] = key(gx_rng_below(&r, universe));
                gx_cache_insert(ref, 0, keys[j], 1u, NULL);
            }
            gx_facache_insert_keys(fa, keys, n);
        }
    }
    /* the stream exercised both outcomes */
    assert_true(hits > 0);
    assert_true(misses > 0);
    gx_cache_free(ref);
    gx_facache_free(fa);
}

static void test_same_as_gx_cache_lru(void **state)
{
    (void)state;
    const uint32_t ways[] = {1, 2, 3, 7, 16, 31, 32, 48, 63, GX_POLICY_MAX_WAYS};
    for (size_t i = 0; i < sizeof ways / sizeof *ways; i++)
        compare_ways(ways[i], 100 + i);
}

/* A batch like a walk's neighbours: the entries of one aligned block of
 * 2^bits (the level and class of key()), ascending, one of them skipped. */
static uint32_t block_batch(gx_rng *r, uint64_t blocks, uint32_t bits, uint64_t *keys)
{
    uint64_t b = gx_rng_below(r, blocks), skip = gx_rng_below(r, 1u << bits);
    uint32_t n = 0;
    for (uint64_t j = 0; j < (1u << bits); j++)
        if (j != skip || gx_rng_below(r, 4) == 0)
            keys[n++] = key((b << bits) + j);
    return n;
}

static void compare_fablock(uint32_t entries, uint32_t gbits, uint64_t seed)
{
    gx_facache *ref = gx_facache_new(entries);
    gx_fablock *fb = gx_fablock_new(entries, gbits);
    assert_non_null(ref);
    assert_non_null(fb);
    gx_rng r;
    gx_rng_seed(&r, seed);
    const uint64_t blocks = 3u * entries / 16u + 3u, universe = blocks << 4;
    uint64_t hits = 0, misses = 0;
    for (int op = 0; op < 30000; op++) {
        uint64_t u = gx_rng_below(&r, 1000), keys[64];
        if (u < 2) {
            gx_facache_flush(ref);
            gx_fablock_flush(fb);
        } else if (u < 450) {
            uint64_t k = key(gx_rng_below(&r, universe));
            int want = gx_facache_probe(ref, k);
            assert_int_equal(gx_fablock_probe(fb, k), want);
            hits += (uint64_t)want;
            misses += (uint64_t)!want;
        } else if (u < 650) {
            uint64_t k = key(gx_rng_below(&r, universe));
            gx_facache_insert(ref, k);
            gx_fablock_insert(fb, k);
        } else if (u < 800) {
            uint32_t n = block_batch(&r, blocks, 4, keys);
            gx_facache_insert_keys(ref, keys, n);
            gx_fablock_insert_keys(fb, keys, n);
        } else if (u < 900) { /* a block as gx_fablock_insert_run gets it */
            uint32_t bits = 1 + (uint32_t)gx_rng_below(&r, 6), n = 1u << bits;
            uint64_t first = key(gx_rng_below(&r, universe >> bits) << bits);
            uint32_t skip = (uint32_t)gx_rng_below(&r, n + 1), nk = 0;
            for (uint32_t j = 0; j < n; j++)
                if (j != skip)
                    keys[nk++] = first + ((uint64_t)j << 6);
            gx_facache_insert_keys(ref, keys, nk);
            gx_fablock_insert_run(fb, first, n, skip);
        } else {
            uint32_t n = (uint32_t)gx_rng_below(&r, 16) + 1;
            for (uint32_t j = 0; j < n; j++)
                keys[j] = key(gx_rng_below(&r, universe));
            gx_facache_insert_keys(ref, keys, n);
            gx_fablock_insert_keys(fb, keys, n);
        }
        assert_int_equal(gx_fablock_count(fb), gx_facache_count(ref));
    }
    assert_true(hits > 0);
    assert_true(misses > 0);
    gx_facache_free(ref);
    gx_fablock_free(fb);
}

static void test_fablock_same_as_facache(void **state)
{
    (void)state;
    const uint32_t entries[] = {1, 2, 3, 7, 15, 16, 17, 40, 64, 256};
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++)
        for (uint32_t g = 1; g <= 6; g++)
            compare_fablock(entries[i], g, 300 + 10 * i + g);
    assert_null(gx_fablock_new(0, 4));
    assert_null(gx_fablock_new(16, 7));
}

static void test_bad_size(void **state)
{
    (void)state;
    assert_null(gx_facache_new(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_lru_big),
        cmocka_unit_test(test_same_as_gx_cache_lru),
        cmocka_unit_test(test_fablock_same_as_facache),
        cmocka_unit_test(test_bad_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
