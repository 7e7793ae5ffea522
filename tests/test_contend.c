/* test_contend.c - the contention primitive (gx_target_contend) on the sim
 * target.
 * - Arguments outside the primitive's limits are refused with a message
 *   (no probes, reps 0 or above the limit, too many warps, an SM or an
 *   offset out of range, no arena).
 * - hammer_warps 0 slows nothing: two unhammered launches agree within the
 *   timer's jitter on a quiet profile.
 * - With hammering, the hammered line slows itself by more than its hit
 *   latency, and of 512 lines on the 64-slice seed card a few (the
 *   hammered line's slice) slow by more than half of that, not one in
 *   eight. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/target.h"
#include "testutil.h"

static void test_arguments(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(gx_test_path("profiles/seed-ampere-6mb.json"), 1);
    double c[4];
    uint64_t probes[4] = {0, 128, 256, 384};
    gx_msg m;
    gx_contend_req q = {0, 8, probes, 4, 4, 0};
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_EINVAL); /* no arena yet */
    assert_int_equal(gx_target_arena(t, 2u << 20, &m), GX_OK);
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_OK);
    q.n_probes = 0;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_EINVAL);
    q.n_probes = 4;
    q.reps = 0;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    q.reps = GX_CONTEND_MAX_REPS + 1;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    q.reps = 4;
    q.hammer_warps = GX_CONTEND_MAX_WARPS + 1;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    assert_non_null(strstr(m.text, "warps"));
    q.hammer_warps = 8;
    q.sm = 100000;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    q.sm = 0;
    q.hammer_offset = 4u << 20;
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    q.hammer_offset = 0;
    probes[2] = 3; /* not 8-byte aligned */
    assert_int_equal(gx_target_contend(t, &q, c, &m), GX_ERANGE);
    gx_target_close(t);
}

static void test_hammering_slows_one_slice(void **state)
{
    (void)state;
    gx_target *t = gx_test_open_sim(gx_test_path("profiles/seed-ampere-6mb.json"), 1);
    gx_msg m;
    assert_int_equal(gx_target_arena(t, 2u << 20, &m), GX_OK);
    enum { N = 512 };
    uint64_t probes[N];
    for (int i = 0; i < N; i++)
        probes[i] = (uint64_t)i * 128;
    double base[N], hot[N];
    gx_contend_req q = {0, 0, probes, N, 4, 0};
    assert_int_equal(gx_target_contend(t, &q, base, &m), GX_OK);
    double again[N];
    assert_int_equal(gx_target_contend(t, &q, again, &m), GX_OK);
    for (int i = 0; i < N; i++)
        assert_true(fabs(base[i] - again[i]) < 50); /* no hammering: nothing queues */
    q.hammer_warps = 8;
    assert_int_equal(gx_target_contend(t, &q, hot, &m), GX_OK);
    const double self = hot[0] - base[0];
    assert_true(self > 200); /* the hammered line waits behind the hammers */
    int slowed = 0;
    for (int i = 0; i < N; i++)
        slowed += hot[i] - base[i] > self / 2;
    /* the seed card has 64 slices: about N / 64 lines share the hammered one's */
    assert_true(slowed >= 2);
    assert_true(slowed < N / 8);
    gx_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_hammering_slows_one_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
