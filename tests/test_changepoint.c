/* test_changepoint.c - the plateau / change-point finder of the levels stage
 * (src/infer/core/changepoint.c) on synthetic latency curves: one plateau, two
 * plateaus, noise, outliers, and the log-x crossing. */
#include <math.h>

#include "gpuxray/rng.h"
#include "infer/core/changepoint.h"
#include "testutil.h"

/* A rising curve: plateaus at levels[k] up to breaks[k] (index), smooth
 * transitions of `width` points between them, gaussian noise, outliers. */
static void make_curve(double *y, size_t n, const double *levels, const size_t *breaks,
                       size_t nlev, size_t width, double noise, gx_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        double v = levels[nlev - 1];
        for (size_t k = 0; k + 1 < nlev; k++) {
            if (i <= breaks[k]) {
                v = levels[k];
                break;
            }
            if (i < breaks[k] + width + 1) {
                double f = (double)(i - breaks[k]) / (double)(width + 1);
                v = levels[k] + f * (levels[k + 1] - levels[k]);
                break;
            }
        }
        y[i] = v + noise * gx_rng_normal(r);
    }
}

static void test_one_plateau_then_dram(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 3);
    double y[30];
    double lv[] = {210, 430};
    size_t br[] = {14};
    make_curve(y, 30, lv, br, 2, 3, 1.0, &r);
    cp_segment p[8];
    size_t np = cp_plateaus(y, 30, 8.0, 3, p, 8);
    assert_int_equal(np, 2);
    assert_true(fabs(p[0].level - 210) < 3);
    assert_true(fabs(p[1].level - 430) < 3);
    assert_true(p[0].first == 0);
    assert_true(p[0].last >= 12 && p[0].last <= 15);
    assert_true(p[1].first >= 17);
}

static void test_two_plateaus(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 5);
    double y[40];
    double lv[] = {281, 526, 684};
    size_t br[] = {12, 22};
    make_curve(y, 40, lv, br, 3, 2, 2.0, &r);
    cp_segment p[8];
    size_t np = cp_plateaus(y, 40, 12.0, 3, p, 8);
    assert_int_equal(np, 3);
    assert_true(fabs(p[0].level - 281) < 4);
    assert_true(fabs(p[1].level - 526) < 4);
    assert_true(fabs(p[2].level - 684) < 4);
}

static void test_noise_makes_no_plateau(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 11);
    double y[25];
    double lv[] = {300};
    make_curve(y, 25, lv, NULL, 1, 0, 3.0, &r);
    cp_segment p[8];
    size_t np = cp_plateaus(y, 25, 12.0, 3, p, 8);
    assert_int_equal(np, 1); /* noise below tol: one plateau, not several */
    assert_true(p[0].first == 0 && p[0].last == 24);
}

static void test_outliers(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 13);
    double y[30];
    double lv[] = {210, 430};
    size_t br[] = {15};
    make_curve(y, 30, lv, br, 2, 2, 1.0, &r);
    y[5] += 300;  /* a +3000-cycle outlier diluted in a chase */
    y[24] -= 150;
    cp_segment p[8];
    size_t np = cp_plateaus(y, 30, 8.0, 3, p, 8);
    assert_int_equal(np, 2);
    assert_true(fabs(p[0].level - 210) < 3);
    assert_true(p[0].first == 0 && p[0].last >= 14);
    assert_true(fabs(p[1].level - 430) < 3);
}

static void test_segment_exact_steps(void **state)
{
    (void)state;
    double y[] = {1, 1, 1, 1, 5, 5, 5, 9, 9, 9, 9};
    cp_segment s[8];
    size_t ns = cp_segment_l1(y, 11, 1.0, s, 8);
    assert_int_equal(ns, 3);
    assert_true(s[0].first == 0 && s[0].last == 3 && s[0].level == 1);
    assert_true(s[1].first == 4 && s[1].last == 6 && s[1].level == 5);
    assert_true(s[2].first == 7 && s[2].last == 10 && s[2].level == 9);
    /* a huge penalty: one piece */
    assert_int_equal(cp_segment_l1(y, 11, 1e9, s, 8), 1);
    assert_int_equal(cp_segment_l1(y, 0, 1.0, s, 8), 0);
}

static void test_crossing(void **state)
{
    (void)state;
    double x[] = {1, 2, 4, 8, 16};
    double y[] = {10, 10, 10, 30, 30};
    double c = cp_crossing_logx(x, y, 5, 0, 20);
    assert_true(fabs(c - sqrt(32.0)) < 1e-9); /* halfway in log between 4 and 8 */
    assert_true(isnan(cp_crossing_logx(x, y, 5, 0, 50)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_plateau_then_dram), cmocka_unit_test(test_two_plateaus),
        cmocka_unit_test(test_noise_makes_no_plateau), cmocka_unit_test(test_outliers),
        cmocka_unit_test(test_segment_exact_steps),  cmocka_unit_test(test_crossing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
