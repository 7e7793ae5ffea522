/* test_cache.c - the sectored set-associative cache (cache.h): sector versus
 * line misses, filling only the missed sector, any set count, 1 and 64 ways,
 * every line/sector size, eviction through the policy, invalidate, insert
 * with victims, background eviction, flush, statistics, bad configurations;
 * random streams per run of sets (rng_groups): a randomized policy's
 * outcomes in one run of sets do not depend on accesses to another. */
#include <string.h>

#include "gpuxray/cache.h"
#include "gpuxray/error.h"
#include "gpuxray/policy.h"
#include "gpuxray/rng.h"
#include "testutil.h"

static gx_cache *mk(uint32_t line, uint32_t sector, uint32_t ways, uint64_t sets,
                    const char *policy)
{
    gx_cache_cfg cfg = {line, sector, ways, sets, policy, 1, 0};
    gx_cache *c = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_cache_new(&cfg, &c, &m);
    if (rc != GX_OK)
        print_error("gx_cache_new: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    assert_non_null(c);
    return c;
}

static void test_sector_vs_line_miss(void **state)
{
    (void)state;
    gx_cache *c = mk(128, 32, 4, 3, "lru");
    assert_int_equal(gx_cache_access(c, 0, 10, 0, 1, NULL), GX_CACHE_LINE_MISS);
    assert_int_equal(gx_cache_access(c, 0, 10, 0, 1, NULL), GX_CACHE_HIT);
    assert_int_equal(gx_cache_access(c, 0, 10, 1, 1, NULL), GX_CACHE_SECTOR_MISS);
    assert_int_equal(gx_cache_access(c, 0, 10, 1, 1, NULL), GX_CACHE_HIT);
    /* only the missed sectors were filled */
    assert_true(gx_cache_contains(c, 0, 10, 0));
    assert_true(gx_cache_contains(c, 0, 10, 1));
    assert_false(gx_cache_contains(c, 0, 10, 2));
    assert_false(gx_cache_contains(c, 0, 10, 3));
    /* a line miss fills only its sector */
    assert_int_equal(gx_cache_access(c, 1, 11, 3, 1, NULL), GX_CACHE_LINE_MISS);
    assert_true(gx_cache_contains(c, 1, 11, 3));
    assert_false(gx_cache_contains(c, 1, 11, 0));
    /* without allocate a miss changes nothing */
    assert_int_equal(gx_cache_access(c, 2, 12, 0, 0, NULL), GX_CACHE_LINE_MISS);
    assert_false(gx_cache_contains(c, 2, 12, 0));
    assert_int_equal(gx_cache_access(c, 1, 11, 2, 0, NULL), GX_CACHE_SECTOR_MISS);
    assert_false(gx_cache_contains(c, 1, 11, 2));
    gx_cache_stats s;
    gx_cache_get_stats(c, &s);
    assert_int_equal(s.accesses, 7);
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.sector_misses, 2);
    assert_int_equal(s.line_misses, 3);
    assert_int_equal(s.evictions, 0);
    gx_cache_reset_stats(c);
    gx_cache_get_stats(c, &s);
    assert_int_equal(s.accesses + s.hits + s.sector_misses + s.line_misses, 0);
    /* contents survive a stats reset */
    assert_true(gx_cache_contains(c, 0, 10, 1));
    gx_cache_free(c);
}

static void test_non_pow2_sets_independent(void **state)
{
    (void)state;
    const uint64_t sets = 48;
    gx_cache *c = mk(128, 32, 16, sets, "lru");
    for (uint64_t s = 0; s < sets; s++)
        for (uint64_t w = 0; w < 16; w++)
            assert_int_equal(gx_cache_access(c, s, s * 1000 + w, 0, 1, NULL), GX_CACHE_LINE_MISS);
    for (uint64_t s = 0; s < sets; s++)
        for (uint64_t w = 0; w < 16; w++)
            assert_int_equal(gx_cache_access(c, s, s * 1000 + w, 0, 1, NULL), GX_CACHE_HIT);
    /* thrashing set 47 leaves set 46 alone */
    for (uint64_t w = 100; w < 140; w++)
        gx_cache_access(c, 47, w, 0, 1, NULL);
    for (uint64_t w = 0; w < 16; w++)
        assert_true(gx_cache_contains(c, 46, 46 * 1000 + w, 0));
    gx_cache_free(c);
    /* an odd set count and an odd way count */
    c = mk(64, 64, 3, 7, "lru");
    for (uint64_t s = 0; s < 7; s++)
        for (uint64_t w = 0; w < 3; w++)
            gx_cache_access(c, s, s * 10 + w, 0, 1, NULL);
    for (uint64_t s = 0; s < 7; s++)
        for (uint64_t w = 0; w < 3; w++)
            assert_true(gx_cache_contains(c, s, s * 10 + w, 0));
    gx_cache_free(c);
}

static void test_one_and_64_ways(void **state)
{
    (void)state;
    gx_cache_victim v;
    gx_cache *c = mk(128, 128, 1, 4, "lru");
    assert_int_equal(gx_cache_access(c, 2, 5, 0, 1, &v), GX_CACHE_LINE_MISS);
    assert_false(v.valid);
    assert_int_equal(gx_cache_access(c, 2, 6, 0, 1, &v), GX_CACHE_LINE_MISS);
    assert_true(v.valid);
    assert_int_equal(v.line_addr, 5);
    assert_int_equal(v.sector_mask, 1);
    assert_false(gx_cache_contains(c, 2, 5, 0));
    gx_cache_free(c);

    c = mk(128, 32, 64, 2, "lru");
    for (uint64_t i = 0; i < 64; i++)
        assert_int_equal(gx_cache_access(c, 1, 1000 + i, 0, 1, &v), GX_CACHE_LINE_MISS);
    for (uint64_t i = 0; i < 64; i++)
        assert_int_equal(gx_cache_access(c, 1, 1000 + i, 0, 1, NULL), GX_CACHE_HIT);
    /* the 65th line evicts the least recently used one: 1000 */
    assert_int_equal(gx_cache_access(c, 1, 5000, 2, 1, &v), GX_CACHE_LINE_MISS);
    assert_true(v.valid);
    assert_int_equal(v.line_addr, 1000);
    gx_cache_stats s;
    gx_cache_get_stats(c, &s);
    assert_int_equal(s.evictions, 1);
    gx_cache_free(c);
}

static void test_line_and_sector_sizes(void **state)
{
    (void)state;
    for (uint32_t line = 32; line <= 256; line *= 2) {
        for (uint32_t sector = line; sector >= 8 && line / sector <= 32; sector /= 2) {
            uint32_t n = line / sector;
            gx_cache *c = mk(line, sector, 4, 5, "lru");
            assert_int_equal(gx_cache_access(c, 3, 77, 0, 1, NULL), GX_CACHE_LINE_MISS);
            for (uint32_t k = 1; k < n; k++)
                assert_int_equal(gx_cache_access(c, 3, 77, k, 1, NULL), GX_CACHE_SECTOR_MISS);
            for (uint32_t k = 0; k < n; k++)
                assert_int_equal(gx_cache_access(c, 3, 77, k, 1, NULL), GX_CACHE_HIT);
            uint32_t full = n == 32 ? 0xffffffffu : ((1u << n) - 1);
            assert_int_equal(gx_cache_invalidate(c, 3, 77), full);
            gx_cache_free(c);
        }
    }
}

static void test_policy_eviction(void **state)
{
    (void)state;
    gx_cache_victim v;
    gx_cache *c = mk(128, 32, 4, 1, "lru");
    for (uint64_t l = 1; l <= 4; l++)
        gx_cache_access(c, 0, l, 0, 1, NULL);
    gx_cache_access(c, 0, 1, 0, 1, NULL);  /* 1 is now most recent */
    gx_cache_access(c, 0, 2, 1, 1, NULL);  /* a sector miss counts as a use of line 2 */
    gx_cache_access(c, 0, 5, 0, 1, &v);
    assert_true(v.valid);
    assert_int_equal(v.line_addr, 3);
    gx_cache_free(c);

    c = mk(128, 32, 4, 1, "fifo");
    for (uint64_t l = 1; l <= 4; l++)
        gx_cache_access(c, 0, l, 0, 1, NULL);
    gx_cache_access(c, 0, 1, 0, 1, NULL); /* a hit does not save it under FIFO */
    gx_cache_access(c, 0, 5, 0, 1, &v);
    assert_true(v.valid);
    assert_int_equal(v.line_addr, 1);
    gx_cache_free(c);
}

static void test_invalidate_insert(void **state)
{
    (void)state;
    gx_cache_victim v;
    gx_cache *c = mk(128, 32, 2, 2, "lru");
    gx_cache_insert(c, 0, 40, 0x5, &v);
    assert_false(v.valid);
    assert_true(gx_cache_contains(c, 0, 40, 0));
    assert_false(gx_cache_contains(c, 0, 40, 1));
    assert_true(gx_cache_contains(c, 0, 40, 2));
    gx_cache_insert(c, 0, 40, 0x2, &v); /* merge */
    assert_false(v.valid);
    assert_true(gx_cache_contains(c, 0, 40, 1));
    gx_cache_insert(c, 0, 41, 0x1, &v);
    assert_false(v.valid);
    gx_cache_insert(c, 0, 42, 0x8, &v); /* full: 40 is older */
    assert_true(v.valid);
    assert_int_equal(v.line_addr, 40);
    assert_int_equal(v.sector_mask, 0x7);
    assert_int_equal(gx_cache_invalidate(c, 0, 41), 0x1);
    assert_int_equal(gx_cache_invalidate(c, 0, 41), 0);
    assert_false(gx_cache_contains(c, 0, 41, 0));
    /* the freed way is used before anything is evicted */
    assert_int_equal(gx_cache_access(c, 0, 43, 0, 1, &v), GX_CACHE_LINE_MISS);
    assert_false(v.valid);
    assert_true(gx_cache_contains(c, 0, 42, 3));
    /* statistics count accesses only */
    gx_cache_stats s;
    gx_cache_get_stats(c, &s);
    assert_int_equal(s.accesses, 1);
    assert_int_equal(s.evictions, 1);
    gx_cache_free(c);
}

static void test_evict_random_and_flush(void **state)
{
    (void)state;
    gx_cache *c = mk(128, 128, 8, 16, "plru-rand:0.5");
    for (uint64_t s = 0; s < 16; s++)
        for (uint64_t w = 0; w < 8; w++)
            gx_cache_access(c, s, s * 100 + w, 0, 1, NULL);
    gx_rng r;
    gx_rng_seed(&r, 3);
    for (int i = 0; i < 40; i++)
        gx_cache_evict_random(c, &r);
    int present = 0;
    for (uint64_t s = 0; s < 16; s++)
        for (uint64_t w = 0; w < 8; w++)
            present += gx_cache_contains(c, s, s * 100 + w, 0);
    assert_int_equal(present, 128 - 40);
    gx_cache_flush(c);
    present = 0;
    for (uint64_t s = 0; s < 16; s++)
        for (uint64_t w = 0; w < 8; w++)
            present += gx_cache_contains(c, s, s * 100 + w, 0);
    assert_int_equal(present, 0);
    /* an empty cache loses nothing */
    gx_cache_evict_random(c, &r);
    assert_int_equal(gx_cache_access(c, 0, 1, 0, 1, NULL), GX_CACHE_LINE_MISS);
    gx_cache_free(c);
}

static void test_bad_config(void **state)
{
    (void)state;
    const struct {
        uint32_t line, sector, ways;
        uint64_t sets;
        const char *policy;
        const char *field;
    } bad[] = {
        {48, 16, 4, 4, "lru", "line_bytes"},   {512, 32, 4, 4, "lru", "line_bytes"},
        {16, 16, 4, 4, "lru", "line_bytes"},   {128, 24, 4, 4, "lru", "sector_bytes"},
        {128, 256, 4, 4, "lru", "sector_bytes"}, {256, 4, 4, 4, "lru", "sector_bytes"},
        {128, 32, 0, 4, "lru", "ways"},        {128, 32, 65, 4, "lru", "ways"},
        {128, 32, 4, 0, "lru", "sets"},        {128, 32, 4, 4, "no-such-policy", "no-such-policy"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gx_cache_cfg cfg = {bad[i].line, bad[i].sector, bad[i].ways, bad[i].sets, bad[i].policy, 0, 0};
        gx_cache *c = (gx_cache *)&cfg;
        gx_msg m;
        gx_msg_clear(&m);
        assert_int_not_equal(gx_cache_new(&cfg, &c, &m), GX_OK);
        assert_null(c);
        assert_non_null(strstr(m.text, bad[i].field));
    }
}

/* The cache's inlined fast path (plru, 16 ways, 4 sectors, specialised) must
 * give the same hit/miss outcomes as the policy registry's reference
 * implementation (gx_policy_set) for every deterministic candidate and
 * several way counts: one set, whole-line sectors, random line ids. */
static void test_fast_path_matches_registry(void **state)
{
    (void)state;
    const uint32_t ways_list[] = {2, 4, 7, 16, 32};
    for (size_t c = 0; c < gx_policy_candidate_count(); c++) {
        const char *spec = gx_policy_candidate(c);
        gx_policy pol;
        assert_int_equal(gx_policy_from_spec(spec, &pol, NULL), GX_OK);
        if (pol.ops->randomized)
            continue;
        for (size_t w = 0; w < sizeof ways_list / sizeof ways_list[0]; w++) {
            uint32_t ways = ways_list[w];
            gx_cache_cfg cfg = {128, 32, ways, 1, spec, 1, 0};
            gx_cache *cache = NULL;
            gx_policy_set *ref = NULL;
            assert_int_equal(gx_cache_new(&cfg, &cache, NULL), GX_OK);
            assert_int_equal(gx_policy_set_new(spec, ways, 1, &ref, NULL), GX_OK);
            gx_rng r;
            gx_rng_seed(&r, 11 + ways);
            for (int i = 0; i < 3000; i++) {
                uint64_t line = gx_rng_below(&r, ways + ways / 2 + 1);
                /* all four sectors once per line visit keep the line = one policy access */
                gx_cache_outcome o = gx_cache_access(cache, 0, line, 0, 1, NULL);
                int hit_ref = gx_policy_set_access(ref, line);
                if ((o != GX_CACHE_LINE_MISS) != hit_ref)
                    fail_msg("%s, %u ways, access %d: cache %d, registry %d", spec, ways, i,
                             (int)o, hit_ref);
            }
            gx_cache_free(cache);
            gx_policy_set_free(ref);
        }
    }
}

/* plru-rand and random over 4 runs of 8 sets: run 0's outcomes are the same
 * whether or not other runs are accessed in between (one stream each). */
static void test_rng_groups(void **state)
{
    (void)state;
    const char *pols[2] = {"random", "plru-rand:0.25"};
    for (int pi = 0; pi < 2; pi++) {
        gx_cache *c[2];
        for (int k = 0; k < 2; k++) {
            gx_cache_cfg cfg = {128, 128, 4, 32, pols[pi], 7, 4};
            gx_msg m;
            assert_int_equal(gx_cache_new(&cfg, &c[k], &m), GX_OK);
        }
        gx_rng r;
        gx_rng_seed(&r, 99);
        unsigned misses = 0;
        for (int i = 0; i < 20000; i++) {
            uint64_t set = gx_rng_below(&r, 8), line = gx_rng_below(&r, 40);
            gx_cache_outcome a = gx_cache_access(c[0], set, line, 0, 1, NULL);
            /* the second cache also sees accesses to runs 1-3 first */
            uint64_t other = 8 + gx_rng_below(&r, 24);
            gx_cache_access(c[1], other, gx_rng_below(&r, 40), 0, 1, NULL);
            gx_cache_outcome b = gx_cache_access(c[1], set, line, 0, 1, NULL);
            assert_int_equal(a, b);
            misses += a != GX_CACHE_HIT;
        }
        assert_true(misses > 1000); /* the sets overflowed: victims were drawn */
        gx_cache_free(c[0]);
        gx_cache_free(c[1]);
    }
    /* the runs must divide the sets */
    gx_cache_cfg bad = {128, 128, 4, 30, "random", 7, 4};
    gx_cache *c = NULL;
    gx_msg m;
    assert_int_equal(gx_cache_new(&bad, &c, &m), GX_EINVAL);
    assert_null(c);
    assert_non_null(strstr(m.text, "random streams"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sector_vs_line_miss),
        cmocka_unit_test(test_non_pow2_sets_independent),
        cmocka_unit_test(test_one_and_64_ways),
        cmocka_unit_test(test_line_and_sector_sizes),
        cmocka_unit_test(test_policy_eviction),
        cmocka_unit_test(test_invalidate_insert),
        cmocka_unit_test(test_evict_random_and_flush),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_fast_path_matches_registry),
        cmocka_unit_test(test_rng_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
