/* test_h200_smem.c - closing the loop on the H200's shared memory, the
 * part that needs no GPU: the bank model of the measured profile's smem
 * section (profiles/nvidia-h200.json, written by the `smem` stage on the
 * chip) must reproduce every point of the cost-versus-stride curve measured
 * there (data/nvidia-h200/smem/curve.csv, bench/smem_curve.c: 32-, 64- and
 * 128-bit accesses at every stride, the k-way sweep, broadcast) within 5%;
 * and the simulable model profile carries the same section. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/profile.h"
#include "gpuxray/smem.h"

#define CURVE_REL_TOL 0.05 /* the bar */

static void load_cfg(const char *rel, gx_smem_cfg *c)
{
    gx_profile *p = NULL;
    gx_msg m;
    if (gx_profile_load(gx_test_path(rel), &p, &m) != GX_OK)
        fail_msg("%s: %s", rel, m.text);
    assert_int_equal(gx_smem_cfg_from_profile(p, c, &m), GX_OK);
    assert_int_equal(gx_smem_cfg_validate(c, 1, &m), GX_OK);
    gx_profile_free(p);
}

static void test_model_reproduces_measured_curve(void **state)
{
    (void)state;
    gx_smem_cfg c;
    load_cfg("profiles/nvidia-h200.json", &c);
    FILE *f = fopen(gx_test_path("data/nvidia-h200/smem/curve.csv"), "r");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    int n = 0, widths[17] = {0};
    double worst = 0;
    unsigned w, stride, lanes;
    double cycles, raw, spread;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(sscanf(line, "%u,%u,%u,%lf,%lf,%lf", &w, &stride, &lanes, &cycles, &raw,
                                &spread),
                         6);
        assert_true(w == 4 || w == 8 || w == 16);
        assert_true(lanes >= 1 && lanes <= 32);
        uint32_t addr[GX_SMEM_LANES];
        for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
            addr[i] = i * stride;
        gx_smem_cost k;
        uint32_t active = lanes == 32 ? UINT32_MAX : (1u << lanes) - 1u;
        assert_int_equal(gx_smem_warp_cost(&c, addr, active, w, &k, NULL), GX_OK);
        double err = fabs(k.cycles - cycles) / cycles;
        if (err > worst)
            worst = err;
        if (err > CURVE_REL_TOL)
            fail_msg("%u-bit, stride %u, %u lanes: measured %.2f, model %.2f (%u transfers)",
                     8 * w, stride, lanes, cycles, k.cycles, k.transfers);
        widths[w]++;
        n++;
    }
    fclose(f);
    printf("H200 smem curve: %d points (%d/%d/%d at 32/64/128 bits), worst %.2f%%\n", n,
           widths[4], widths[8], widths[16], 100 * worst);
    assert_true(widths[4] >= 64 && widths[8] >= 32 && widths[16] >= 16);
}

static void test_model_profile_carries_the_section(void **state)
{
    (void)state;
    gx_smem_cfg meas, model;
    load_cfg("profiles/nvidia-h200.json", &meas);
    load_cfg("profiles/nvidia-h200-model.json", &model);
    gx_smem_field_cmp cmp[GX_SMEM_FIELDS];
    assert_int_equal(gx_smem_cfg_compare(&meas, &model, cmp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_reproduces_measured_curve),
        cmocka_unit_test(test_model_profile_carries_the_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
