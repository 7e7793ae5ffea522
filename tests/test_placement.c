/* test_placement.c - virtual-to-physical placement (placement.h): frames are
 * seeded (same seed, same frames), unique, inside the physical space, keep
 * the offset within the page, and a reset gives fresh frames; in contiguous
 * mode an arena's pages (1 TiB-aligned, touched in any order) get
 * consecutive frames from a start that each reset redraws. */
#include <stdlib.h>
#include <string.h>

#include "gpuxray/placement.h"
#include "testutil.h"
#include "gpuxray/bits.h"

#define PAGE (2ULL << 20)
#define PHYS (64ULL << 30)

static gx_placement *mk(uint64_t page, uint64_t phys, uint64_t seed)
{
    gx_placement *pl = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_placement_new(page, phys, seed, &pl, &m), GX_OK);
    assert_non_null(pl);
    return pl;
}

static void test_deterministic_per_seed(void **state)
{
    (void)state;
    gx_placement *a = mk(PAGE, PHYS, 42), *b = mk(PAGE, PHYS, 42), *c = mk(PAGE, PHYS, 43);
    int differ = 0;
    for (uint64_t i = 0; i < 200; i++) {
        uint64_t va = (1ULL << 40) + i * PAGE + (i * 136) % PAGE;
        uint64_t pa = gx_placement_translate(a, va);
        assert_int_equal(pa, gx_placement_translate(b, va));
        differ += pa != gx_placement_translate(c, va);
        /* the same page again: the same frame */
        assert_int_equal(gx_placement_translate(a, va), pa);
    }
    assert_true(differ > 190);
    gx_placement_free(a);
    gx_placement_free(b);
    gx_placement_free(c);
}

static void test_unique_frames_offsets(void **state)
{
    (void)state;
    const uint64_t n = 4096; /* 8 GiB of pages */
    gx_placement *pl = mk(PAGE, PHYS, 7);
    uint64_t *f = malloc(n * sizeof *f);
    assert_non_null(f);
    uint64_t hi_bits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off = (i * 4104) % PAGE & ~7ULL;
        uint64_t pa = gx_placement_translate(pl, i * PAGE + off);
        assert_int_equal(pa & (PAGE - 1), off); /* offset within the page kept */
        assert_true(pa < PHYS);
        f[i] = pa / PAGE;
        hi_bits |= pa;
    }
    qsort(f, n, sizeof *f, gx_cmp_u64);
    for (uint64_t i = 1; i < n; i++)
        assert_true(f[i] != f[i - 1]);
    /* frames spread over the whole space: the top address bit (35) is used */
    assert_true(hi_bits >> 35 & 1);
    free(f);
    gx_placement_free(pl);

    /* a tiny space: every frame used exactly once */
    pl = mk(4096, 8 * 4096, 1);
    uint64_t seen = 0;
    for (uint64_t i = 0; i < 8; i++)
        seen |= 1ULL << (gx_placement_translate(pl, i * 4096) / 4096);
    assert_int_equal(seen, 0xff);
    gx_placement_free(pl);
}

static void test_reset(void **state)
{
    (void)state;
    gx_placement *a = mk(PAGE, PHYS, 5), *b = mk(PAGE, PHYS, 9);
    uint64_t before[64];
    for (uint64_t i = 0; i < 64; i++)
        before[i] = gx_placement_translate(a, i * PAGE);
    gx_placement_reset(a, 9); /* forgets everything; as new with seed 9 */
    int differ = 0;
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t pa = gx_placement_translate(a, i * PAGE);
        assert_int_equal(pa, gx_placement_translate(b, i * PAGE));
        differ += pa != before[i];
    }
    assert_true(differ > 60);
    gx_placement_free(a);
    gx_placement_free(b);
}

static void test_contiguous(void **state)
{
    (void)state;
    gx_placement *a = mk(PAGE, PHYS, 5);
    gx_placement_set_contiguous(a, 1);
    uint64_t base = 3ULL << 40, first[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        /* touched from the last page down: the frames follow the VA, not the order */
        uint64_t pa0 = 0;
        for (uint64_t i = 200; i-- > 0;) {
            uint64_t pa = gx_placement_translate(a, base + i * PAGE + 128 * i);
            assert_int_equal(pa % PAGE, 128 * i);
            if (i == 0)
                pa0 = pa;
        }
        for (uint64_t i = 0; i < 200; i++)
            assert_int_equal(gx_placement_translate(a, base + i * PAGE), pa0 + i * PAGE);
        assert_true(pa0 + 200 * PAGE <= PHYS);
        first[round] = pa0;
        gx_placement_reset(a, 77);
    }
    assert_true(first[0] != first[1]);
    gx_placement_free(a);
}

static void test_bad_args(void **state)
{
    (void)state;
    gx_placement *pl = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_placement_new(3000, PHYS, 1, &pl, &m), GX_EINVAL);
    assert_null(pl);
    assert_non_null(strstr(m.text, "page_bytes"));
    assert_int_equal(gx_placement_new(PAGE, PAGE + 4096, 1, &pl, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "phys_bytes"));
    assert_int_equal(gx_placement_new(PAGE, 0, 1, &pl, &m), GX_EINVAL);
    assert_null(pl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_per_seed),
        cmocka_unit_test(test_unique_frames_offsets),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
