/* test_stats.c - the statistics helpers, checked against hand-computed
 * values (an off-by-one median goes unnoticed for years otherwise). */
#include <math.h>

#include "gpuxray/error.h"
#include "gpuxray/rng.h"
#include "gpuxray/stats.h"
#include "testutil.h"

static void test_median_odd_even(void **state)
{
    (void)state;
    double odd[] = {5, 1, 3};
    assert_true(gx_median(odd, 3) == 3.0);
    double even[] = {4, 1, 3, 2};
    assert_true(gx_median(even, 4) == 2.5);
    double one[] = {7};
    assert_true(gx_median(one, 1) == 7.0);
    assert_true(isnan(gx_median(one, 0)));
    /* input untouched */
    assert_true(odd[0] == 5 && odd[1] == 1 && odd[2] == 3);
}

static void test_percentile(void **state)
{
    (void)state;
    double v[] = {10, 20, 30, 40, 50};
    assert_true(gx_percentile(v, 5, 0) == 10);
    assert_true(gx_percentile(v, 5, 100) == 50);
    assert_true(gx_percentile(v, 5, 50) == 30);
    assert_true(fabs(gx_percentile(v, 5, 25) - 20) < 1e-12);
    assert_true(fabs(gx_percentile(v, 5, 10) - 14) < 1e-12);
}

static void test_mad_mean_stddev(void **state)
{
    (void)state;
    double v[] = {1, 1, 2, 2, 4, 6, 9};
    assert_true(gx_mad(v, 7) == 1.0); /* median 2; deviations 1 1 0 0 2 4 7 -> 1 */
    assert_true(fabs(gx_mean(v, 7) - 25.0 / 7.0) < 1e-12);
    double w[] = {2, 4, 4, 4, 5, 5, 7, 9};
    assert_true(fabs(gx_stddev(w, 8) - sqrt(32.0 / 7.0)) < 1e-12);
    assert_true(gx_min(w, 8) == 2 && gx_max(w, 8) == 9);
}

static void test_split_threshold(void **state)
{
    (void)state;
    double v[200];
    gx_rng r;
    gx_rng_seed(&r, 1);
    for (int i = 0; i < 200; i++)
        v[i] = (i % 3 ? 210 : 430) + 4 * gx_rng_normal(&r);
    double sep = 0;
    double thr = gx_split_threshold(v, 200, &sep);
    assert_true(thr > 250 && thr < 400);
    assert_true(sep > 10);
    double flat[] = {3, 3, 3};
    assert_true(isnan(gx_split_threshold(flat, 3, NULL)));
}

static void test_rng_below_uniform(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 42);
    int counts[6] = {0};
    for (int i = 0; i < 60000; i++)
        counts[gx_rng_below(&r, 6)]++;
    for (int i = 0; i < 6; i++)
        assert_true(counts[i] > 9500 && counts[i] < 10500);
    gx_rng a, b;
    gx_rng_seed(&a, 7);
    gx_rng_seed(&b, 7);
    for (int i = 0; i < 100; i++)
        assert_true(gx_rng_next(&a) == gx_rng_next(&b));
}

static void test_error_table(void **state)
{
    (void)state;
    assert_string_equal(gx_errname(GX_EINVAL), "GX_EINVAL");
    assert_string_equal(gx_strerror(GX_ENODEV), "target unavailable");
    assert_string_equal(gx_strerror(12345), "unknown error");
    gx_msg m;
    assert_int_equal(gx_fail(&m, GX_EPARSE, "line %d", 3), GX_EPARSE);
    assert_string_equal(m.text, "line 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_odd_even), cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_mad_mean_stddev), cmocka_unit_test(test_split_threshold),
        cmocka_unit_test(test_rng_below_uniform), cmocka_unit_test(test_error_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
