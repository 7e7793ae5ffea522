/* test_hopper_like.c - profiles/hopper-like.json reproduces, through the sim
 * target's chase primitive, what one thread on one SM of an H200 measures
 * when it walks a random cyclic pointer chain (128-byte steps) over a
 * growing footprint: every measured point within 5%.
 *
 * Notes: each point is a fresh arena, a random cyclic permutation of its
 * lines, two warm rounds, then a timed chase of 200000 steps (the H200
 * numbers are means over one chase of at least 200000 steps). Under the
 * sanitizers a subset of the points is checked, with fewer steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "testutil.h"

#define PROFILE "profiles/hopper-like.json"

/* MiB: mean cycles per access measured on an H200 (one SM, one thread). */
static const struct {
    double mib, cycles;
    int in_subset;
} h200[] = {
    {0.25, 281, 1}, {0.5, 281, 0}, {1, 281, 0},   {2, 281, 0},   {4, 281, 0},
    {8, 281, 0},    {16, 281, 0},  {24, 281, 1},  {28, 292, 0},  {32, 427, 1},
    {36, 526, 0},   {40, 526, 1},  {44, 526, 0},  {48, 526, 0},  {52, 526, 0},
    {56, 536, 0},   {60, 599, 0},  {64, 666, 1},  {72, 684, 0},  {80, 684, 0},
    {96, 684, 1},   {128, 684, 0}, {256, 684, 0}, {512, 689, 0},
};

static gx_target *open_hopper(uint64_t seed)
{
    return gx_test_open_sim(gx_test_path(PROFILE), seed);
}

static double chase_mib(gx_target *t, gx_rng *r, double mib, uint32_t sm, uint64_t steps)
{
    uint64_t bytes = (uint64_t)(mib * 1048576.0);
    size_t n = bytes / 128;
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, bytes, &m), GX_OK);
    uint64_t *o = malloc(n * sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < n; i++)
        o[i] = i * 128;
    gx_rng_shuffle_u64(r, o, n);
    gx_chase_req q = {o, n, 2, (uint32_t)((steps + n - 1) / n), steps, sm};
    double mean = NAN;
    int rc = gx_target_chase(t, &q, &mean, &m);
    if (rc != GX_OK)
        print_error("chase: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    free(o);
    return mean;
}

static void test_profile_valid(void **state)
{
    (void)state;
    gx_profile *p = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_profile_load(gx_test_path(PROFILE), &p, &m);
    if (rc != GX_OK)
        print_error("%s\n", m.text);
    assert_int_equal(rc, GX_OK);
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    assert_string_equal(p->provenance.kind, "reference");
    assert_int_equal(p->l2.topology, GX_TOPO_NEAR_FAR);
    assert_int_equal(p->device.api_l2_bytes, 62914560);
    assert_int_equal(p->device.sm_count, 132);
    assert_int_equal(p->device.sm_clock_mhz, 1980);
    assert_int_equal(p->l2.partitions, 2);
    assert_int_equal(p->l2.n_levels, 2);
    gx_profile_free(p);
}

static void check_curve(uint64_t seed, uint32_t sm, int subset, uint64_t steps)
{
    gx_target *t = open_hopper(seed);
    gx_rng r;
    gx_rng_seed(&r, seed * 31 + 7);
    int bad = 0;
    for (size_t i = 0; i < sizeof h200 / sizeof h200[0]; i++) {
        if (subset && !h200[i].in_subset)
            continue;
        double got = chase_mib(t, &r, h200[i].mib, sm, steps);
        double err = (got - h200[i].cycles) / h200[i].cycles;
        print_message("  %7.2f MiB: model %6.1f  H200 %4.0f  %+5.1f%%\n", h200[i].mib, got,
                      h200[i].cycles, 100 * err);
        if (fabs(err) > 0.05) {
            print_error("%.2f MiB: %.1f cycles is not within 5%% of %.0f\n", h200[i].mib, got,
                        h200[i].cycles);
            bad++;
        }
    }
    gx_target_close(t);
    assert_int_equal(bad, 0);
}

static void test_h200_curve(void **state)
{
    (void)state;
    if (gx_test_sanitizer())
        check_curve(1, 0, 1, 50000);
    else
        check_curve(1, 0, 0, 200000);
}

/* Another seed (other frames, other noise) and an SM of the other partition. */
static void test_h200_curve_other_sm(void **state)
{
    (void)state;
    check_curve(2, 100, 1, gx_test_sanitizer() ? 50000 : 200000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_valid),
        cmocka_unit_test(test_h200_curve),
        cmocka_unit_test(test_h200_curve_other_sm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
