/* test_smem.c - the shared-memory bank model and its profile section:
 * the classic examples (a 32 x 32 float tile read by column: 32-way; padded
 * to 33 columns: conflict-free; stride 2 words: 2-way; every lane on one
 * word: one transfer with broadcast, 32 without; 64- and 128-bit accesses
 * in half and quarter warps), statistics per SM, the JSON section's round
 * trip and validation messages, and the generator's draw. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gpuxray/discover.h"
#include "gpuxray/generate.h"
#include "gpuxray/target.h"
#include "gpuxray/profile.h"
#include "gpuxray/smem.h"

static gx_smem_cost cost_of(const gx_smem_cfg *c, uint32_t stride, uint32_t width)
{
    uint32_t a[GX_SMEM_LANES];
    for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
        a[i] = i * stride;
    gx_smem_cost k;
    assert_int_equal(gx_smem_warp_cost(c, a, UINT32_MAX, width, &k, NULL), GX_OK);
    return k;
}

static void test_classic_tile(void **state)
{
    (void)state;
    gx_smem_cfg c;
    gx_smem_cfg_default(&c); /* 32 x 4 B, 128-byte transfers, broadcast, 30 + 2 */
    gx_smem_cost k = cost_of(&c, 32 * 4, 4);  /* column of a 32 x 32 float tile */
    assert_int_equal(k.degree, 32);
    assert_int_equal(k.transfers, 32);
    assert_true(fabs(k.cycles - (30 + 31 * 2)) < 1e-9);
    k = cost_of(&c, 33 * 4, 4);                /* padded to 33 columns */
    assert_int_equal(k.degree, 1);
    assert_true(fabs(k.cycles - 30) < 1e-9);
    k = cost_of(&c, 8, 4);
    assert_int_equal(k.degree, 2);
    k = cost_of(&c, 0, 4);                     /* one word: broadcast */
    assert_int_equal(k.transfers, 1);
    /* the whole warp in one group (an H200): the banks' width alone splits
     * wide accesses, and one word serves every lane at any width */
    k = cost_of(&c, 8, 8);                     /* 64-bit contiguous: 2 words per bank */
    assert_int_equal(k.groups, 1);
    assert_int_equal(k.transfers, 2);
    k = cost_of(&c, 16, 16);                   /* 128-bit contiguous: 4 */
    assert_int_equal(k.transfers, 4);
    k = cost_of(&c, 0, 16);
    assert_int_equal(k.transfers, 1);
    k = cost_of(&c, 24, 8);                    /* 64-bit at 24 B: 2 words per bank */
    assert_int_equal(k.transfers, 2);
    /* 128-byte groups: half warps for 64-bit, quarters for 128-bit */
    c.transfer_bytes = 128;
    k = cost_of(&c, 8, 8);
    assert_int_equal(k.groups, 2);
    assert_int_equal(k.transfers, 2);
    assert_int_equal(k.degree, 1);
    k = cost_of(&c, 0, 16);                    /* one word, but four quarters */
    assert_int_equal(k.transfers, 4);
    k = cost_of(&c, 32, 16);                   /* 128-bit at 32 B: 2-way in each quarter */
    assert_int_equal(k.transfers, 8);
    c.broadcast = 0;
    k = cost_of(&c, 0, 4);
    assert_int_equal(k.transfers, 32);
}

static void test_wide_banks_and_masks(void **state)
{
    (void)state;
    gx_smem_cfg c;
    gx_smem_cfg_default(&c);
    c.banks = 16;
    c.bank_bytes = 8;
    gx_smem_cost k = cost_of(&c, 4, 4); /* two lanes per 8-byte word, merged */
    assert_int_equal(k.transfers, 1);
    k = cost_of(&c, 12, 4);             /* words floor(1.5 i): 32 words on 16 banks */
    assert_int_equal(k.degree, 2);
    c.broadcast = 0;
    k = cost_of(&c, 4, 4);              /* no merging: each bank serves its word to 2 lanes */
    assert_int_equal(k.degree, 2);
    uint32_t a[GX_SMEM_LANES] = {0};
    assert_int_equal(gx_smem_warp_cost(&c, a, 0, 4, &k, NULL), GX_OK);
    assert_int_equal(k.transfers, 0);
    assert_true(k.cycles == 0);
    gx_msg m;
    assert_int_equal(gx_smem_warp_cost(&c, a, 1, 32, &k, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "width"));
}

static void test_stats_per_sm(void **state)
{
    (void)state;
    gx_smem_cfg c;
    gx_smem_cfg_default(&c);
    gx_smem *s = NULL;
    assert_int_equal(gx_smem_new(&c, 4, &s, NULL), GX_OK);
    uint32_t a[GX_SMEM_LANES];
    for (uint32_t i = 0; i < GX_SMEM_LANES; i++)
        a[i] = i * 128;
    assert_int_equal(gx_smem_access(s, 1, 0, a, UINT32_MAX, 4, NULL, NULL), GX_OK);
    assert_int_equal(gx_smem_access(s, 2, 1, a, 0x3u, 4, NULL, NULL), GX_OK);
    gx_smem_stats st;
    gx_smem_get_stats(s, UINT32_MAX, &st);
    assert_int_equal(st.accesses, 2);
    assert_int_equal(st.reads, 1);
    assert_int_equal(st.writes, 1);
    assert_int_equal(st.by_degree[32], 1);
    assert_int_equal(st.by_degree[2], 1);
    assert_int_equal(st.conflicted, 2);
    assert_true(fabs(st.cycles - (92 + 32)) < 1e-9);
    gx_smem_get_stats(s, 1, &st);
    assert_int_equal(st.accesses, 1);
    gx_msg m;
    assert_int_equal(gx_smem_access(s, 4, 0, a, 1, 4, NULL, &m), GX_ERANGE);
    gx_smem_free(s);
}

static void test_section_round_trip(void **state)
{
    (void)state;
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m),
                     GX_OK);
    gx_smem_cfg c, back;
    assert_int_equal(gx_smem_cfg_from_profile(p, &c, &m), GX_OK);
    assert_int_equal(c.present, 0);
    char *plain = gx_profile_to_json(p);
    assert_non_null(plain);
    assert_null(strstr(plain, "\"smem\"")); /* an absent section is left out */
    free(plain);
    gx_profile_free(p);
    p = gx_profile_new(); /* a measured profile may leave fields absent */
    assert_non_null(p);
    snprintf(p->name, sizeof p->name, "round trip");
    snprintf(p->provenance.kind, sizeof p->provenance.kind, "measured");
    gx_smem_cfg_default(&c);
    c.conflict_cycles = NAN; /* absent fields travel as null (a measured profile) */
    assert_int_equal(gx_smem_cfg_to_profile(p, &c, &m), GX_OK);
    char *json = gx_profile_to_json(p);
    assert_non_null(json);
    gx_profile *q = NULL;
    assert_int_equal(gx_profile_parse(json, "round trip", &q, &m), GX_OK);
    assert_int_equal(gx_smem_cfg_from_profile(q, &back, &m), GX_OK);
    gx_smem_field_cmp cmp[GX_SMEM_FIELDS];
    assert_int_equal(gx_smem_cfg_compare(&c, &back, cmp), 0);
    assert_int_equal(cmp[5].verdict, -1); /* conflict_cycles absent in both */
    assert_true(isnan(back.conflict_cycles));
    free(json);
    gx_profile_free(q);
    gx_profile_free(p);
}

static void test_section_rules(void **state)
{
    (void)state;
    static const struct {
        const char *section, *field;
    } bad[] = {
        {"{\"banks\": 24}", "smem.banks"},
        {"{\"bank_bytes\": 2}", "smem.bank_bytes"},
        {"{\"transfer_bytes\": 1024}", "smem.transfer_bytes"},
        {"{\"transfer_bytes\": 96}", "smem.transfer_bytes"},
        {"{\"broadcast\": 1}", "smem.broadcast"},
        {"{\"latency_cycles\": -3}", "smem.latency_cycles"},
        {"{\"block_bytes\": 2048, \"sm_bytes\": 1024}", "smem.block_bytes"},
        {"[1]", "smem"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"format\": \"gpuxray-profile\", \"version\": 1, \"name\": \"x\", "
                 "\"provenance\": {\"kind\": \"measured\"}, \"smem\": %s}",
                 bad[i].section);
        gx_profile *p = NULL;
        gx_msg m;
        gx_msg_clear(&m);
        assert_int_not_equal(gx_profile_parse(text, "rules", &p, &m), GX_OK);
        if (!strstr(m.text, bad[i].field))
            fail_msg("%s: '%s' does not name %s", bad[i].section, m.text, bad[i].field);
        gx_profile_free(p);
    }
    gx_smem_cfg c;
    gx_smem_cfg_clear(&c);
    c.present = 1;
    c.banks = 32;
    gx_msg m;
    assert_int_equal(gx_smem_cfg_validate(&c, 1, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "smem.bank_bytes"));
}

static void test_generator_draws(void **state)
{
    (void)state;
    unsigned banks[3] = {0}, bytes8 = 0, bc_off = 0, half = 0, warp = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        gx_profile *p = gx_generate_profile(seed, NULL);
        assert_non_null(p);
        gx_smem_cfg c;
        assert_int_equal(gx_smem_cfg_from_profile(p, &c, NULL), GX_OK);
        assert_int_equal(gx_smem_cfg_validate(&c, 1, NULL), GX_OK);
        assert_true(c.banks >= 16 && c.banks <= 64);
        banks[c.banks == 16 ? 0 : c.banks == 32 ? 1 : 2]++;
        bytes8 += c.bank_bytes == 8;
        bc_off += c.broadcast == 0;
        half += c.transfer_bytes < c.banks * c.bank_bytes;
        warp += c.transfer_bytes == GX_SMEM_MAX_TRANSFER;
        assert_true(c.conflict_cycles >= 1 && c.conflict_cycles <= 8);
        gx_profile_free(p);
    }
    assert_true(banks[0] > 20 && banks[1] > 20 && banks[2] > 20);
    assert_true(bytes8 > 50 && bc_off > 20 && half > 20 && warp > 20);
}

static void test_trace_records_grouped(void **state)
{
    (void)state;
    gx_smem_cfg c;
    gx_smem_cfg_default(&c);
    gx_smem *s = NULL;
    assert_int_equal(gx_smem_new(&c, 2, &s, NULL), GX_OK);
    /* a column of a 32 x 32 float tile, lanes given, SM 1's records in between */
    for (uint32_t i = 0; i < 32; i++) {
        assert_int_equal(gx_smem_record(s, 0, 7, i, 0, (uint64_t)i * 128, 4, NULL), GX_OK);
        if (i == 10)
            assert_int_equal(gx_smem_record(s, 1, 7, 0, 1, 0, 4, NULL), GX_OK);
    }
    /* no lanes given (all 0): lanes in record order; a different warp id closes */
    for (uint32_t i = 0; i < 32; i++)
        assert_int_equal(gx_smem_record(s, 0, 8, 0, 0, (uint64_t)i * 132, 4, NULL), GX_OK);
    gx_smem_stats st;
    gx_smem_get_stats(s, 0, &st); /* the open instruction counts as closed */
    assert_int_equal(st.accesses, 2);
    assert_int_equal(st.by_degree[32], 1);
    assert_int_equal(st.by_degree[1], 1);
    assert_int_equal(st.lanes, 64);
    /* warp 0: an instruction alone; a 33rd lane opens the next; oversize counted */
    assert_int_equal(gx_smem_record(s, 1, 0, 3, 0, 0, 32, NULL), GX_OK);
    gx_smem_flush(s);
    gx_smem_get_stats(s, 1, &st);
    assert_int_equal(st.accesses, 2);
    assert_int_equal(st.writes, 1);
    assert_int_equal(gx_smem_oversize(s), 1);
    gx_smem_get_stats(s, UINT32_MAX, &st);
    assert_int_equal(st.accesses, 4);
    assert_true(fabs(st.cycles - (92 + 30 + 30 + 30)) < 1e-9);
    gx_msg m;
    assert_int_equal(gx_smem_record(s, 2, 1, 0, 0, 0, 4, &m), GX_ERANGE);
    assert_int_equal(gx_smem_record(s, 0, 1, 0, 0, 0, 0, &m), GX_EINVAL);
    char buf[2048];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    assert_int_equal(gx_smem_write_json(s, f), GX_OK);
    fclose(f);
    json_error_t je;
    json_t *o = json_loads(buf, 0, &je);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "accesses")), 4);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "by_degree"), "32")), 1);
    json_decref(o);
    gx_smem_free(s);
}

static void test_tile_advice(void **state)
{
    (void)state;
    gx_smem_cfg c;
    gx_smem_cfg_default(&c);
    gx_smem_tile t;
    gx_smem_tile_advice a;
    assert_int_equal(gx_smem_tile_parse("32x32,elem=4", &t, NULL), GX_OK);
    assert_int_equal(gx_smem_tile_advise(&c, &t, &a, NULL), GX_OK);
    assert_int_equal(a.before[0].max_degree, 1);
    assert_int_equal(a.before[1].max_degree, 32); /* the classic transposed read */
    assert_int_equal(a.best_pad, 1);               /* ... and the classic 32 x 33 fix */
    assert_int_equal(a.after[1].max_degree, 1);
    assert_true(fabs(a.saved_cycles - 32 * 62) < 1e-9);
    assert_int_equal(a.extra_bytes, 32 * 4);
    /* 64-bit elements: one element of padding leaves the two transfers the width needs */
    assert_int_equal(gx_smem_tile_parse("32x32,elem=8,read=col", &t, NULL), GX_OK);
    assert_int_equal(gx_smem_tile_advise(&c, &t, &a, NULL), GX_OK);
    assert_int_equal(a.before[1].max_degree, 32);
    assert_int_equal(a.best_pad, 1);
    assert_int_equal(a.after[1].transfers, 2 * a.after[1].warp_accesses);
    assert_int_equal(a.before[0].warp_accesses, 0); /* the row read was not asked */
    /* a pitch that is conflict-free already needs nothing */
    assert_int_equal(gx_smem_tile_parse("32x32,elem=4,pad=1", &t, NULL), GX_OK);
    assert_int_equal(gx_smem_tile_advise(&c, &t, &a, NULL), GX_OK);
    assert_int_equal(a.best_pad, 1);
    assert_int_equal(a.extra_bytes, 0);
    assert_true(a.saved_cycles == 0);
    static const char *bad[] = {"32", "0x4,elem=4", "32x32", "32x32,elem=3x", "32x32,elem=32",
                                "32x32,elem=4,read=diag", "4096x8192,elem=4", "x32,elem=4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gx_msg m;
        assert_int_not_equal(gx_smem_tile_parse(bad[i], &t, &m), GX_OK);
        assert_non_null(strstr(m.text, "--smem-tile"));
    }
}

/* Discover seed-ampere with its smem section = cfg. */
static int discover_with(const gx_smem_cfg *cfg, gx_smem_cfg *found_cfg)
{
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m),
                     GX_OK);
    assert_int_equal(gx_smem_cfg_to_profile(p, cfg, &m), GX_OK);
    const char *path = gx_test_tmp("smem-section.json");
    assert_int_equal(gx_profile_save(p, path, &m), GX_OK);
    gx_profile_free(p);
    gx_target *t = gx_test_open_sim(path, 3);
    gx_discover_opts opts = {.only = "smem", .seed = 3, .progress = NULL};
    gx_profile *found = NULL;
    int rc = gx_discover(t, &opts, &found, NULL, &m);
    gx_target_close(t);
    assert_non_null(found);
    assert_int_equal(gx_smem_cfg_from_profile(found, found_cfg, &m), GX_OK);
    gx_profile_free(found);
    return rc;
}

static gx_smem_cfg section(uint32_t banks, uint32_t bytes, uint32_t transfer, int broadcast,
                           double latency, double conflict, uint64_t block)
{
    gx_smem_cfg c;
    gx_smem_cfg_clear(&c);
    c.present = 1;
    c.banks = banks;
    c.bank_bytes = bytes;
    c.transfer_bytes = transfer;
    c.broadcast = broadcast;
    c.latency_cycles = latency;
    c.conflict_cycles = conflict;
    c.block_bytes = block;
    return c;
}

static void test_discovery_exact_and_unknown(void **state)
{
    (void)state;
    gx_smem_cfg f;
    /* a Kepler-like 8-byte-bank memory without broadcast */
    gx_smem_cfg in = section(32, 8, 256, 0, 47, 3.5, 49152);
    int rc = discover_with(&in, &f);
    assert_int_equal(rc, GX_OK);
    assert_int_equal(f.banks, 32);
    assert_int_equal(f.bank_bytes, 8);
    assert_int_equal(f.transfer_bytes, 256);
    assert_int_equal(f.broadcast, 0);
    assert_true(fabs(f.latency_cycles - 47) < 0.5 && fabs(f.conflict_cycles - 3.5) < 0.1);
    assert_int_equal(f.block_bytes, 49152);
    assert_int_equal(f.sm_bytes, 0);
    /* conflicts that cost nothing cannot reveal the banks: unknown, not a guess */
    in = section(32, 4, 128, 1, 30, 0, 0);
    rc = discover_with(&in, &f);
    assert_int_equal(rc, GX_EUNSURE);
    assert_int_equal(f.banks, 0);
    assert_int_equal(f.bank_bytes, 0);
    assert_int_equal(f.broadcast, -1);
    assert_true(isnan(f.conflict_cycles));
    assert_true(fabs(f.latency_cycles - 30) < 0.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classic_tile),
        cmocka_unit_test(test_wide_banks_and_masks),
        cmocka_unit_test(test_stats_per_sm),
        cmocka_unit_test(test_section_round_trip),
        cmocka_unit_test(test_section_rules),
        cmocka_unit_test(test_generator_draws),
        cmocka_unit_test(test_discovery_exact_and_unknown),
        cmocka_unit_test(test_trace_records_grouped),
        cmocka_unit_test(test_tile_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
