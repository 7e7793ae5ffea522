/* test_advise.c - the layout advisor on the seed card's profile: sector
 * efficiency of coalesced and column reads, the column walk at a
 * power-of-two pitch flagged (its warps' lines share slices) and padding
 * that spreads it, the option parsers, a trace read back into warp
 * instructions, and the persisting-window hit ratio with and without a
 * measured carve-out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/advise.h"
#include "gpuxray/hash.h"
#include "gpuxray/profile.h"
#include "testutil.h"

static gx_profile *seed(void)
{
    gx_profile *p = NULL;
    gx_msg msg;
    if (gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &msg) != GX_OK)
        fail_msg("%s", msg.text);
    return p;
}

static void cfg(gx_adv_cfg *c, const char *array, const char *pattern)
{
    gx_msg msg;
    memset(c, 0, sizeof *c);
    assert_int_equal(gx_adv_parse_array(array, c, &msg), GX_OK);
    assert_int_equal(gx_adv_parse_pattern(pattern, c, &msg), GX_OK);
    c->max_lanes = 1u << 20;
}

static void test_parse(void **state)
{
    (void)state;
    gx_adv_cfg c;
    gx_msg msg;
    memset(&c, 0, sizeof c);
    assert_int_equal(gx_adv_parse_array("rows=10,cols=20,elem=4,pitch=32", &c, &msg), GX_OK);
    assert_int_equal(c.rows, 10);
    assert_int_equal(c.pitch, 32);
    const char *bad[] = {"rows=10,cols=20", "rows=10,cols=20,elem=4,pitch=8", "rows=-1,cols=2,elem=4",
                         "rows=1,cols=2,elem=4,depth=3", "rows=1,cols=2,elem=256", "rows=,cols=2,elem=4",
                         "rows=99999999999,cols=99999999999,elem=4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gx_adv_parse_array(bad[i], &c, &msg), GX_EINVAL);
    assert_int_equal(gx_adv_parse_pattern("tile:16x32", &c, &msg), GX_OK);
    assert_int_equal(c.tile_h, 16);
    assert_int_equal(c.tile_w, 32);
    assert_int_equal(gx_adv_parse_pattern("tile:0x4", &c, &msg), GX_EINVAL);
    assert_int_equal(gx_adv_parse_pattern("diag", &c, &msg), GX_EINVAL);
}

static void test_sector_efficiency(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_adv_cfg c;
    gx_adv_result r;
    gx_msg msg;
    cfg(&c, "rows=256,cols=1024,elem=4", "row");
    assert_int_equal(gx_advise_array(p, &c, &r, &msg), GX_OK);
    assert_true(fabs(r.sector_efficiency - 1.0) < 1e-9); /* 32 lanes x 4 B = 4 whole sectors */
    assert_int_equal(r.lanes, 256 * 1024);
    assert_int_equal(r.sectors, 256 * 1024 * 4 / 32);
    cfg(&c, "rows=256,cols=1024,elem=4", "col");
    assert_int_equal(gx_advise_array(p, &c, &r, &msg), GX_OK);
    assert_true(fabs(r.sector_efficiency - 4.0 / 32) < 1e-9); /* one 4 B element per sector */
    cfg(&c, "rows=64,cols=64,elem=4", "tile:32x1"); /* a warp: one column of 32 rows */
    assert_int_equal(gx_advise_array(p, &c, &r, &msg), GX_OK);
    assert_int_equal(r.lanes, 64 * 64);
    assert_true(fabs(r.sector_efficiency - 4.0 / 32) < 1e-9);
    gx_profile_free(p);
}

static void test_padding(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_adv_cfg c;
    gx_adv_result before, after;
    gx_msg msg;
    uint32_t pad = 0;
    /* a column walk at a 16 KiB pitch: the seed's slice hash uses address
     * bits 7..20, and rows 16 KiB apart share most of them */
    cfg(&c, "rows=1024,cols=1024,elem=4,pitch=4096", "col");
    assert_int_equal(gx_advise_padding(p, &c, 64, 1u << 16, &pad, &before, &after, &msg), GX_OK);
    assert_true(before.wave_slice_imbalance > 3.0 * before.random_wave_slice_imbalance);
    assert_true(pad > 0 && pad <= 64);
    assert_true(after.wave_slice_imbalance < 0.5 * before.wave_slice_imbalance);
    assert_true(strstr(before.assumption, "placement") != NULL);
    /* coalesced rows are spread already: no padding */
    cfg(&c, "rows=1024,cols=1024,elem=4", "row");
    assert_int_equal(gx_advise_padding(p, &c, 32, 1u << 16, &pad, &before, &after, &msg), GX_OK);
    assert_int_equal(pad, 0);
    assert_true(before.wave_slice_imbalance < 1.5 * before.random_wave_slice_imbalance);
    gx_profile_free(p);
}

static void test_trace(void **state)
{
    (void)state;
    gx_profile *p = seed();
    const char *path = gx_test_tmp("advise.trace");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* warp 1: 32 lanes of 4 B, consecutive (4 sectors); warp 2: 2 lanes on
     * one sector; then an instruction alone */
    for (int l = 0; l < 32; l++)
        fprintf(f, "0 R %x 4 warp=1 lane=%d\n", 0x10000 + 4 * l, l);
    fprintf(f, "1 R 20000 4 warp=2 lane=0\n1 R 20004 4 warp=2 lane=1\n0 W 30000 32\n");
    fclose(f);
    gx_adv_result r;
    gx_msg msg;
    assert_int_equal(gx_advise_trace(p, path, 1, 0, &r, &msg), GX_OK);
    assert_int_equal(r.warp_insts, 3);
    assert_int_equal(r.lanes, 35);
    assert_int_equal(r.sectors, 4 + 1 + 1);
    assert_true(fabs(r.useful_bytes - (128 + 8 + 32)) < 1e-9);
    assert_int_equal(gx_advise_trace(p, "/nonexistent/advise.trace", 1, 0, &r, &msg) == GX_OK, 0);
    gx_profile_free(p);
}

static void test_persist(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_persist r;
    gx_msg msg;
    assert_int_equal(gx_advise_persist(p, 1 << 20, &r, &msg), GX_OK);
    assert_false(r.known);
    gx_profile_free(p);
    /* a profile that records the carve-out (an extra field is kept) */
    size_t n = 0;
    char *text = gx_test_slurp(gx_test_path("profiles/seed-ampere-6mb.json"), &n);
    char *at = strstr(text, "\"l2\": {");
    assert_non_null(at);
    char *mod = malloc(n + 64);
    size_t head = (size_t)(at - text) + strlen("\"l2\": {");
    memcpy(mod, text, head);
    sprintf(mod + head, "\"persisting_carveout_bytes\": 3145728, %s", text + head);
    assert_int_equal(gx_profile_parse(mod, "mod", &p, &msg), GX_OK);
    assert_int_equal(gx_advise_persist(p, 6u << 20, &r, &msg), GX_OK);
    assert_true(r.known);
    assert_true(fabs(r.hit_ratio - 0.5) < 1e-12);
    assert_int_equal(gx_advise_persist(p, 1u << 20, &r, &msg), GX_OK);
    assert_true(fabs(r.hit_ratio - 1.0) < 1e-12);
    assert_int_equal(gx_advise_persist(p, 0, &r, &msg), GX_EINVAL);
    gx_profile_free(p);
    free(mod);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),   cmocka_unit_test(test_sector_efficiency),
        cmocka_unit_test(test_padding), cmocka_unit_test(test_trace),
        cmocka_unit_test(test_persist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
