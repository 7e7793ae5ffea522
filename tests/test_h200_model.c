/* test_h200_model.c - the model of the measured H200
 * (profiles/nvidia-h200-model.json, scripts/h200_model_profile.py) is a
 * valid, simulable profile, and discovery's levels stage recovers from it
 * what it measured on the chip: near-far, the two levels, and the extra
 * cost of far hits back to back (l2.latency_cycles.far_stream_extra, 39
 * cycles measured); on hopper-like, which has no such cost, it reports none.
 * The curve half of the loop is tests/h200_curve_model.sh. */
#include <math.h>
#include <stdio.h>

#include "gpuxray/discover.h"
#include "gpuxray/profile.h"
#include "testutil.h"

static void test_model_levels(void **state)
{
    (void)state;
    gx_profile *truth = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_profile_load(gx_test_path("profiles/nvidia-h200-model.json"), &truth, &m),
                     GX_OK);
    assert_true(truth->l2.far_stream_extra_cycles > 0);
    gx_profile *f = gx_test_discover(gx_test_path("profiles/nvidia-h200-model.json"), "levels", 3,
                                     NULL);
    assert_int_equal(f->l2.topology, GX_TOPO_NEAR_FAR);
    assert_int_equal(f->l2.n_levels, 2);
    double x = f->l2.far_stream_extra_cycles, t = truth->l2.far_stream_extra_cycles;
    print_message("far_stream_extra: found %.0f, truth %.0f\n", x, t);
    assert_true(isfinite(x));
    assert_true(fabs(x - t) <= 0.25 * t);
    assert_true(fabs(f->l2.far_hit_cycles - truth->l2.far_hit_cycles) <=
                0.05 * truth->l2.far_hit_cycles);
    gx_profile_free(f);
    gx_profile_free(truth);
}

static void test_hopper_like_has_none(void **state)
{
    (void)state;
    gx_profile *f = gx_test_discover(gx_test_path("profiles/hopper-like.json"), "levels", 3, NULL);
    assert_int_equal(f->l2.topology, GX_TOPO_NEAR_FAR);
    assert_true(isnan(f->l2.far_stream_extra_cycles));
    gx_profile_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_levels),
        cmocka_unit_test(test_hopper_like_has_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
