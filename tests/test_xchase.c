/* test_xchase.c - the translation chase primitive (gx_target_xchase) on
 * the sim target, the generator's translation draws and the tlb stage.
 * - Arguments outside the primitive's limits are refused with a message.
 * - gem5-vega mapped at 2 MiB pages (L1 TLB 32 entries per SM, 1 cycle; L2
 *   4096 shared, 69; L3 8192 shared, 150): 16 pages 2 MiB apart hit the L1
 *   TLB (2 MiB pages: consecutive pages fill consecutive sets); 64 pages miss
 *   it (a cyclic chase longer than a fully associative LRU level) and hit
 *   the L2 TLB: the per-step median is 69 cycles more.
 * - Interference: SM 1 thrashing 20000 pages moves SM 0's L2-TLB hits (a
 *   chase of 3/4 of its entries: with the thrashing pages in between, each
 *   set sees more pages than its ways) to L3 hits (the L2 TLB is shared),
 *   but not SM 0's L1-TLB hits (per SM).
 * - Without a tlb section a long chase costs what a short one does.
 * - gen-profile's translation leaves every other field as it was.
 * - The tlb stage recovers two generated hierarchies field by field. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/generate.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"
#include "testutil.h"

#define TWO_MIB (2ULL << 20)

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of every timed access of a chase of steps pages stride apart. */
static double median_chase(gx_target *t, uint64_t stride, uint32_t steps, uint32_t thrash_sm,
                           uint32_t thrash_steps)
{
    const uint32_t rounds = 5;
    double *c = malloc((size_t)steps * rounds * sizeof *c);
    assert_non_null(c);
    gx_xchase_req q = {stride, steps, 1, rounds, 0, thrash_steps, thrash_sm, stride};
    gx_msg m;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_OK);
    qsort(c, (size_t)steps * rounds, sizeof *c, cmp_d);
    double med = c[(size_t)steps * rounds / 2];
    free(c);
    return med;
}

/* gem5-vega with every VA at 2 MiB pages. */
static const char *vega_2mib(void)
{
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/gem5-vega.json"), &p, &m), GX_OK);
    p->tlb.default_page_bytes = TWO_MIB;
    const char *path = gx_test_tmp("vega-2mib.json");
    assert_int_equal(gx_profile_save(p, path, &m), GX_OK);
    gx_profile_free(p);
    return path;
}

static void test_arguments(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(gx_test_path("profiles/gem5-vega.json"), 1);
    double c[4];
    gx_msg m;
    gx_xchase_req q = {1000, 4, 1, 1, 0, 0, 0, 0};
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "multiple"));
    q.stride_bytes = TWO_MIB;
    q.steps = 0;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_ERANGE);
    q.steps = 4;
    q.timed_rounds = 0;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_ERANGE);
    q.timed_rounds = 1;
    q.stride_bytes = GX_XCHASE_MAX_WINDOW_BYTES / 2;
    q.steps = 3;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_ERANGE);
    q.stride_bytes = TWO_MIB;
    q.steps = 4;
    q.thrash_steps = 4;
    q.thrash_sm = 0;
    q.thrash_stride_bytes = TWO_MIB;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "differ"));
    q.thrash_sm = 1;
    assert_int_equal(gx_target_xchase(t, &q, c, &m), GX_OK);
    gx_target_close(t);
}

static void test_levels_cost_their_latency(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(vega_2mib(), 2);
    double l1 = median_chase(t, TWO_MIB, 16, 0, 0), l2 = median_chase(t, TWO_MIB, 64, 0, 0);
    if (!(fabs(l2 - l1 - 69) < 3))
        print_error("L1-TLB hits %.1f, L2-TLB hits %.1f (expected 69 more)\n", l1, l2);
    assert_true(fabs(l2 - l1 - 69) < 3);
    gx_target_close(t);
}

static void test_interference(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(vega_2mib(), 3);
    double l2 = median_chase(t, TWO_MIB, 3072, 0, 0);
    double l2_thrashed = median_chase(t, TWO_MIB, 3072, 1, 20000);
    double l1 = median_chase(t, TWO_MIB, 16, 0, 0);
    double l1_thrashed = median_chase(t, TWO_MIB, 16, 1, 20000);
    if (!(l2_thrashed > l2 + 100 && fabs(l1_thrashed - l1) < 3))
        print_error("L2 %.1f -> %.1f, L1 %.1f -> %.1f\n", l2, l2_thrashed, l1, l1_thrashed);
    assert_true(l2_thrashed > l2 + 100);
    assert_true(fabs(l1_thrashed - l1) < 3);
    gx_target_close(t);
}

static void test_no_translation_is_flat(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(gx_test_path("profiles/seed-ampere-6mb.json"), 4);
    double a = median_chase(t, 3 * TWO_MIB, 8, 0, 0), b = median_chase(t, 3 * TWO_MIB, 8192, 0, 0);
    assert_true(fabs(a - b) < 3);
    gx_target_close(t);
}

static void test_generator_keeps_other_fields(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gx_generate_opts o;
        gx_generate_opts_default(&o);
        gx_profile *plain = gx_generate_profile(seed, &o);
        o.translation = 1;
        gx_profile *xl = gx_generate_profile(seed, &o);
        assert_non_null(plain);
        assert_non_null(xl);
        assert_int_equal(plain->tlb.present, 0);
        assert_int_equal(xl->tlb.present, 1);
        assert_true(xl->tlb.n_levels >= 1 && xl->tlb.n_levels <= 3);
        xl->tlb.present = 0;
        gx_msg m;
        const char *pa = gx_test_tmp("gen-plain.json"), *pb = gx_test_tmp("gen-xl.json");
        assert_int_equal(gx_profile_save(plain, pa, &m), GX_OK);
        assert_int_equal(gx_profile_save(xl, pb, &m), GX_OK);
        char *a = gx_test_slurp(pa, NULL), *b = gx_test_slurp(pb, NULL);
        assert_non_null(a);
        assert_non_null(b);
        assert_string_equal(a, b);
        free(a);
        free(b);
        gx_profile_free(plain);
        gx_profile_free(xl);
    }
}

static void test_stage_recovers_hierarchies(void **state)
{
    (void)state;
    for (uint64_t seed = 2; seed <= 3; seed++) {
        gx_generate_opts o;
        gx_generate_opts_default(&o);
        o.translation = 1;
        gx_profile *truth = gx_generate_profile(seed, &o);
        assert_non_null(truth);
        gx_msg m;
        const char *path = gx_test_tmp("tlb-truth.json");
        assert_int_equal(gx_profile_save(truth, path, &m), GX_OK);
        gx_profile *found = gx_test_discover(path, "tlb", seed, NULL);
        assert_int_equal(found->tlb.present, 1);
        assert_int_equal(found->tlb.n_levels, truth->tlb.n_levels);
        for (int j = 0; j < truth->tlb.n_levels; j++) {
            const gx_tlb_level_cfg *a = &truth->tlb.levels[j], *b = &found->tlb.levels[j];
            assert_int_equal(b->entries, a->entries);
            assert_int_equal(b->ways, a->ways);
            assert_int_equal(b->entry_bytes, a->entry_bytes);
            assert_int_equal(b->sharing, a->sharing);
            if (j)
                assert_true(fabs(b->hit_latency_cycles - a->hit_latency_cycles) <
                            0.05 * a->hit_latency_cycles);
        }
        gx_profile_free(truth);
        gx_profile_free(found);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_levels_cost_their_latency),
        cmocka_unit_test(test_interference),
        cmocka_unit_test(test_no_translation_is_flat),
        cmocka_unit_test(test_generator_keeps_other_fields),
        cmocka_unit_test(test_stage_recovers_hierarchies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
