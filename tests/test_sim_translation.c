/* test_sim_translation.c - the sim target with address translation
 * (profiles/gem5-vega.json: the seed card plus gem5's Vega TLBs, 4 KiB
 * pages): a chase pays exactly the translation the TLB levels cost.
 * - 16 pages (64 KiB): after the warm rounds every step hits the 32-entry L1
 *   TLB: each step costs its 1-cycle hit more than on the seed card (same
 *   seed, same frames; the warm-up walks' page-table reads take noise draws
 *   of their own, so the timed steps' jitter is drawn differently: within
 *   0.01 cycles of 1 over 40000 steps).
 * - 512 pages (2 MiB, inside the L2): a random chain over 512 pages misses
 *   the 32-entry L1 (LRU over uniformly random pages: hit rate 32/512) and
 *   hits the shared 4096-entry L2 TLB: 1 + (1 - 1/16) 69 = 65.7 cycles more
 *   a step on average. */
#include <math.h>
#include <stdlib.h>

#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "testutil.h"

static double chase(const char *profile, uint64_t bytes)
{
    gx_target *t = gx_test_open_sim(gx_test_path(profile), 3);
    gx_msg m;
    assert_int_equal(gx_target_arena(t, bytes, &m), GX_OK);
    size_t n = bytes / 128;
    uint64_t *o = malloc(n * sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < n; i++)
        o[i] = i * 128;
    gx_rng r;
    gx_rng_seed(&r, 11);
    gx_rng_shuffle_u64(&r, o, n);
    const uint64_t steps = 40000;
    gx_chase_req q = {o, n, 2, (uint32_t)((steps + n - 1) / n), steps, 0};
    double mean = 0;
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_OK);
    free(o);
    gx_target_close(t);
    return mean;
}

static void test_l1_hits_cost_their_latency(void **state)
{
    (void)state;
    double plain = chase("profiles/seed-ampere-6mb.json", 64 * 1024);
    double vega = chase("profiles/gem5-vega.json", 64 * 1024);
    if (!(fabs(vega - plain - 1.0) < 0.01))
        print_error("plain %.6f vega %.6f\n", plain, vega);
    assert_true(fabs(vega - plain - 1.0) < 0.01);
}

static void test_l2_tlb_hits(void **state)
{
    (void)state;
    double plain = chase("profiles/seed-ampere-6mb.json", 2 << 20);
    double vega = chase("profiles/gem5-vega.json", 2 << 20);
    double d = vega - plain;
    if (!(d > 60 && d < 70))
        print_error("translation per step %.2f, expected about 65.7\n", d);
    assert_true(d > 60 && d < 70);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l1_hits_cost_their_latency),
        cmocka_unit_test(test_l2_tlb_hits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
