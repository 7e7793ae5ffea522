/* test_profile.c - the profile format (docs/profile-format.md): load, save, round trip,
 * and one test per validation rule. Each rule test breaks exactly one field
 * of the valid seed profile and checks the error code and that the message
 * names the field. */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/error.h"
#include "gpuxray/hash.h"
#include "gpuxray/l2.h"
#include "gpuxray/profile.h"

static gx_profile *seed(void)
{
    gx_profile *p = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m);
    if (rc != GX_OK)
        fprintf(stderr, "seed profile: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    assert_non_null(p);
    return p;
}

static void set_table(gx_hash_fn *h, uint32_t slices)
{
    free(h->table);
    size_t n = (size_t)1 << h->n_masks;
    h->table = malloc(n * sizeof *h->table);
    assert_non_null(h->table);
    for (size_t i = 0; i < n; i++)
        h->table[i] = (uint32_t)(i % slices);
}

/* ------------------------------------------------ struct-level rules */

typedef struct rule {
    const char *name;
    void (*mutate)(gx_profile *p);
    const char *field; /* the message must name it */
    const char *also;  /* optional extra text the message must contain */
} rule;

static void m_kind_unknown(gx_profile *p) { strcpy(p->provenance.kind, "guessed"); }
static void m_kind_missing(gx_profile *p) { p->provenance.kind[0] = '\0'; }
static void m_line_pow2(gx_profile *p) { p->l2.line_bytes = 96; }
static void m_line_small(gx_profile *p) { p->l2.line_bytes = 16; p->l2.sector_bytes = 8; }
static void m_line_big(gx_profile *p) { p->l2.line_bytes = 512; }
static void m_sector_pow2(gx_profile *p) { p->l2.sector_bytes = 24; }
static void m_sector_small(gx_profile *p) { p->l2.sector_bytes = 4; }
static void m_sector_gt_line(gx_profile *p) { p->l2.sector_bytes = 256; }
static void m_ways_range(gx_profile *p) { p->l2.ways = 65; }
static void m_slices_range(gx_profile *p) { p->l2.slices = 2048; }
static void m_partitions_divide(gx_profile *p) { p->l2.partitions = 3; }
static void m_capacity(gx_profile *p) { p->l2.capacity_bytes = 6291450; }
static void m_policy(gx_profile *p) { strcpy(p->l2.policy, "no-such-policy"); }
static void m_topology_enum(gx_profile *p) { p->l2.topology = (gx_topology)7; }
static void m_near_far_partitions(gx_profile *p)
{
    p->l2.topology = GX_TOPO_NEAR_FAR;
    p->l2.partitions = 1;
    p->l2.near_hit_cycles = 200;
    p->l2.far_hit_cycles = 300;
}
static void m_near_far_switch(gx_profile *p) { p->l2.near_far.copy_to_near = 2; }
static void m_table_entry(gx_profile *p)
{
    set_table(&p->l2.slice_hash, 64);
    p->l2.slice_hash.table[5] = 64;
}
static void m_table_cover(gx_profile *p)
{
    set_table(&p->l2.slice_hash, 63); /* slice 63 never used */
}
static void m_slice_count(gx_profile *p) { p->l2.slice_hash.n_masks = 5; }
static void m_slice_modulo(gx_profile *p) { p->l2.slice_hash.modulo = 64; }
static void m_set_modulo(gx_profile *p) { p->l2.set_hash.modulo = 40; }
static void m_set_modulo_reach(gx_profile *p) { p->l2.set_hash.n_masks = 5; }
static void m_set_count(gx_profile *p) { p->l2.set_hash.modulo = 0; }
static void m_set_table(gx_profile *p) { set_table(&p->l2.set_hash, 48); }
/* a set table without the modulo: entries past the sets, or a set missing */
static void m_set_table_range(gx_profile *p)
{
    set_table(&p->l2.set_hash, 49);
    p->l2.set_hash.modulo = 0;
}
static void m_set_table_cover(gx_profile *p)
{
    set_table(&p->l2.set_hash, 47);
    p->l2.set_hash.modulo = 0;
}
static void m_mask_zero(gx_profile *p) { p->l2.slice_hash.masks[0] = 0; }
static void m_mask_low(gx_profile *p) { p->l2.set_hash.masks[2] |= 0x8; }
static void m_mask_dependent(gx_profile *p)
{
    p->l2.slice_hash.masks[1] = p->l2.slice_hash.masks[0] ^ p->l2.slice_hash.masks[2];
}
static void m_obs_order(gx_profile *p) { p->l2.slice_hash.obs_lo = 21; }
static void m_obs_hi(gx_profile *p) { p->l2.slice_hash.obs_hi = 64; }
static void m_measured_outside(gx_profile *p) { strcpy(p->provenance.kind, "measured"); }
static void m_levels_order(gx_profile *p)
{
    p->l2.n_levels = 2;
    p->l2.levels[1].capacity_bytes = 4u << 20;
    p->l2.levels[1].latency_cycles = 400;
}
static void m_levels_latency(gx_profile *p) { p->l2.levels[0].latency_cycles = -1; }
static void m_levels_capacity(gx_profile *p) { p->l2.levels[0].capacity_bytes = 0; }
static void m_hit_positive(gx_profile *p) { p->l2.hit_cycles = 0; }
static void m_far_gt_near(gx_profile *p)
{
    p->l2.near_hit_cycles = 300;
    p->l2.far_hit_cycles = 250;
}
static void m_dram_gt_hit(gx_profile *p) { p->memory.dram_latency_cycles = 200; }
static void m_dram_positive(gx_profile *p) { p->memory.dram_latency_cycles = -5; }
static void m_page_pow2(gx_profile *p) { p->memory.page_bytes = 3u << 20; }
static void m_timer(gx_profile *p) { p->timer_overhead_cycles = -1; }
static void m_jitter(gx_profile *p) { p->sim.jitter_cycles = -0.5; }
static void m_outlier_rate(gx_profile *p) { p->sim.outlier_rate = 1.5; }
static void m_outlier_cycles(gx_profile *p) { p->sim.outlier_cycles = -1; }
static void m_bg_evictions(gx_profile *p) { p->sim.background_evictions_per_kaccess = NAN; }
static void m_skew(gx_profile *p) { p->sim.sm_slice_skew_cycles = -3; }
static void m_confidence(gx_profile *p) { gx_profile_set_confidence(p, "l2.ways", 1.5); }
static void m_sm_count_big(gx_profile *p) { p->device.sm_count = 100000; }
static void m_req_ways(gx_profile *p) { p->l2.ways = 0; }
static void m_req_sector(gx_profile *p) { p->l2.sector_bytes = 0; }
static void m_req_capacity(gx_profile *p) { p->l2.capacity_bytes = 0; }
static void m_req_policy(gx_profile *p) { p->l2.policy[0] = '\0'; }
static void m_req_topology(gx_profile *p) { p->l2.topology = GX_TOPO_UNKNOWN; }
static void m_req_hit(gx_profile *p) { p->l2.hit_cycles = NAN; }
static void m_req_near(gx_profile *p)
{
    p->l2.topology = GX_TOPO_NEAR_FAR;
    p->l2.far_hit_cycles = 300;
}
static void m_req_far(gx_profile *p)
{
    p->l2.topology = GX_TOPO_NEAR_FAR;
    p->l2.near_hit_cycles = 200;
}
static void m_req_dram(gx_profile *p) { p->memory.dram_latency_cycles = NAN; }
static void m_req_page(gx_profile *p) { p->memory.page_bytes = 0; }
static void m_req_sm(gx_profile *p) { p->device.sm_count = 0; }
static void m_req_slice_hash(gx_profile *p) { gx_hash_clear(&p->l2.slice_hash); }
static void m_req_set_hash(gx_profile *p) { gx_hash_clear(&p->l2.set_hash); }
static void m_req_l2(gx_profile *p) { p->l2.present = 0; }
static void m_simulated_too(gx_profile *p)
{
    strcpy(p->provenance.kind, "simulated");
    p->l2.ways = 0;
}

static const rule RULES[] = {
    {"kind_known", m_kind_unknown, "provenance.kind", "guessed"},
    {"kind_present", m_kind_missing, "provenance.kind", "missing"},
    {"line_pow2", m_line_pow2, "l2.line_bytes", "power of two"},
    {"line_min_32", m_line_small, "l2.line_bytes", "32..256"},
    {"line_max_256", m_line_big, "l2.line_bytes", "32..256"},
    {"sector_pow2", m_sector_pow2, "l2.sector_bytes", "power of two"},
    {"sector_min_8", m_sector_small, "l2.sector_bytes", ">= 8"},
    {"sector_divides_line", m_sector_gt_line, "l2.sector_bytes", "divide"},
    {"ways_1_64", m_ways_range, "l2.ways", "1..64"},
    {"slices_1_1024", m_slices_range, "l2.slices", "1..1024"},
    {"partitions_divide_slices", m_partitions_divide, "l2.partitions", "divide"},
    {"capacity_consistent", m_capacity, "l2.capacity_bytes",
     "6291450 != slices*sets_per_slice*ways*line_bytes = 6291456"},
    {"policy_known", m_policy, "l2.policy", "no-such-policy"},
    {"topology_known", m_topology_enum, "l2.topology", "unknown"},
    {"near_far_two_partitions", m_near_far_partitions, "l2.partitions", "near-far"},
    {"near_far_switch_bool", m_near_far_switch, "l2.near_far.copy_to_near", "true or false"},
    {"slice_table_entries_below_slices", m_table_entry, "l2.hash.slice.table", "< slices"},
    {"slice_table_covers_slices", m_table_cover, "l2.hash.slice.table", "never appears"},
    {"slice_masks_match_slices", m_slice_count, "l2.hash.slice.masks", "!= slices"},
    {"slice_no_modulo", m_slice_modulo, "l2.hash.slice.modulo", "no modulo"},
    {"set_modulo_is_sets", m_set_modulo, "l2.hash.set.modulo", "sets_per_slice"},
    {"set_modulo_reachable", m_set_modulo_reach, "l2.hash.set.masks", "< modulo"},
    {"set_masks_match_sets", m_set_count, "l2.hash.set.masks", "!= sets_per_slice"},
    {"set_table_or_modulo", m_set_table, "l2.hash.set.modulo", "not both"},
    {"set_table_below_sets", m_set_table_range, "l2.hash.set.table", "< sets_per_slice = 48"},
    {"set_table_covers_sets", m_set_table_cover, "l2.hash.set.table", "set 47 never appears"},
    {"mask_nonzero", m_mask_zero, "l2.hash.slice.masks[0]", "nonzero"},
    {"mask_line_bits", m_mask_low, "l2.hash.set.masks[2]", "below log2(line_bytes)"},
    {"masks_independent", m_mask_dependent, "l2.hash.slice.masks", "independent"},
    {"observable_lo_le_hi", m_obs_order, "l2.hash.slice.observable_bits", "lo <= hi"},
    {"observable_hi_lt_64", m_obs_hi, "l2.hash.slice.observable_bits", "< 64"},
    {"measured_masks_observable", m_measured_outside, "l2.hash.slice.masks[5]",
     "observable_bits"},
    {"levels_increasing", m_levels_order, "l2.levels_from_one_sm[1].capacity_bytes",
     "increase"},
    {"levels_latency_positive", m_levels_latency, "l2.levels_from_one_sm[0].latency_cycles",
     "positive"},
    {"levels_capacity_positive", m_levels_capacity,
     "l2.levels_from_one_sm[0].capacity_bytes", "> 0"},
    {"hit_latency_positive", m_hit_positive, "l2.latency_cycles.hit", "positive"},
    {"far_exceeds_near", m_far_gt_near, "l2.latency_cycles.far_hit", "exceed"},
    {"dram_exceeds_l2", m_dram_gt_hit, "memory.dram_latency_cycles", "exceed"},
    {"dram_positive", m_dram_positive, "memory.dram_latency_cycles", "positive"},
    {"page_pow2", m_page_pow2, "memory.page_bytes", "power of two"},
    {"timer_nonnegative", m_timer, "timer.overhead_cycles", ">= 0"},
    {"jitter_nonnegative", m_jitter, "sim.noise.jitter_cycles", ">= 0"},
    {"outlier_rate_le_1", m_outlier_rate, "sim.noise.outlier_rate", "<= 1"},
    {"outlier_cycles_nonnegative", m_outlier_cycles, "sim.noise.outlier_cycles", ">= 0"},
    {"bg_evictions_number", m_bg_evictions, "sim.noise.background_evictions_per_kaccess",
     ">= 0"},
    {"skew_nonnegative", m_skew, "sim.sm_slice_skew_cycles", ">= 0"},
    {"confidence_0_1", m_confidence, "confidence.l2.ways", "0..1"},
    {"sm_count_range", m_sm_count_big, "device.sm_count", "4096"},
    {"required_ways", m_req_ways, "l2.ways", "required"},
    {"required_sector", m_req_sector, "l2.sector_bytes", "required"},
    {"required_capacity", m_req_capacity, "l2.capacity_bytes", "required"},
    {"required_policy", m_req_policy, "l2.policy", "required"},
    {"required_topology", m_req_topology, "l2.topology", "required"},
    {"required_hit_uniform", m_req_hit, "l2.latency_cycles.hit", "required"},
    {"required_near_hit_near_far", m_req_near, "l2.latency_cycles.near_hit", "required"},
    {"required_far_hit_near_far", m_req_far, "l2.latency_cycles.far_hit", "required"},
    {"required_dram", m_req_dram, "memory.dram_latency_cycles", "required"},
    {"required_page", m_req_page, "memory.page_bytes", "required"},
    {"required_sm_count", m_req_sm, "device.sm_count", "required"},
    {"required_slice_hash", m_req_slice_hash, "l2.hash.slice", "required"},
    {"required_set_hash", m_req_set_hash, "l2.hash.set", "required"},
    {"required_l2", m_req_l2, "l2", "required"},
    {"required_for_simulated", m_simulated_too, "l2.ways", "simulated"},
};
#define N_RULES (sizeof RULES / sizeof RULES[0])

static void test_rule(void **state)
{
    const rule *r = *state;
    gx_profile *p = seed();
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_profile_validate(p, &m), GX_OK); /* valid before */
    r->mutate(p);
    gx_msg_clear(&m);
    int rc = gx_profile_validate(p, &m);
    if (rc != GX_ECONFIG || strncmp(m.text, r->field, strlen(r->field)) != 0 ||
        (r->also && !strstr(m.text, r->also)))
        fprintf(stderr, "rule %s: rc=%d msg='%s'\n", r->name, rc, m.text);
    assert_int_equal(rc, GX_ECONFIG);
    /* the message starts with the field, then ": " */
    assert_true(strncmp(m.text, r->field, strlen(r->field)) == 0);
    assert_true(m.text[strlen(r->field)] == ':');
    if (r->also)
        assert_non_null(strstr(m.text, r->also));
    gx_profile_free(p);
}

/* A measured profile may leave anything absent. */
static void test_measured_may_omit(void **state)
{
    (void)state;
    gx_profile *p = gx_profile_new();
    assert_non_null(p);
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    p->l2.present = 1;
    p->l2.ways = 16; /* only the ways known */
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    /* a partial but consistent hash: 2 masks in observable bits */
    p->l2.line_bytes = 128;
    p->l2.slice_hash.present = 1;
    p->l2.slice_hash.n_masks = 2;
    p->l2.slice_hash.masks[0] = 0x180;
    p->l2.slice_hash.masks[1] = 0x600;
    p->l2.slice_hash.obs_lo = 7;
    p->l2.slice_hash.obs_hi = 20;
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    gx_profile_free(p);
}

/* ------------------------------------------------ JSON-level rules */

/* Load the seed as JSON, let fn change it, and parse the result. */
static int parse_modified(void (*fn)(json_t *root), gx_msg *m)
{
    json_error_t e;
    json_t *root = json_load_file(gx_test_path("profiles/seed-ampere-6mb.json"), 0, &e);
    assert_non_null(root);
    fn(root);
    char *text = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    gx_profile *p = NULL;
    gx_msg_clear(m);
    int rc = gx_profile_parse(text, "mod.json", &p, m);
    free(text);
    if (rc == GX_OK)
        assert_non_null(p);
    else
        assert_null(p);
    gx_profile_free(p);
    return rc;
}

static json_t *l2of(json_t *r) { return json_object_get(r, "l2"); }
static json_t *sliceof(json_t *r)
{
    return json_object_get(json_object_get(l2of(r), "hash"), "slice");
}
static void j_format(json_t *r) { json_object_set_new(r, "format", json_string("other")); }
static void j_version(json_t *r) { json_object_set_new(r, "version", json_integer(2)); }
static void j_topology(json_t *r)
{
    json_object_set_new(l2of(r), "topology", json_string("ring"));
}
static void j_table_len(json_t *r)
{
    json_t *t = json_array();
    for (int i = 0; i < 63; i++)
        json_array_append_new(t, json_integer(i));
    json_object_set_new(sliceof(r), "table", t);
}
static void j_ways_type(json_t *r) { json_object_set_new(l2of(r), "ways", json_string("16")); }
static void j_ways_negative(json_t *r) { json_object_set_new(l2of(r), "ways", json_integer(-4)); }
static void j_mask_text(json_t *r)
{
    json_array_set_new(json_object_get(sliceof(r), "masks"), 0, json_string("0xZZ"));
}
static void j_tlb_type(json_t *r) { json_object_set_new(r, "tlb", json_integer(3)); }
static void j_levels_type(json_t *r)
{
    json_object_set_new(l2of(r), "levels_from_one_sm", json_string("x"));
}
static void j_obs_shape(json_t *r)
{
    json_object_set_new(sliceof(r), "observable_bits", json_pack("[i]", 7));
}
static void j_mask_int(json_t *r)
{
    /* masks may also be given as integers */
    json_array_set_new(json_object_get(sliceof(r), "masks"), 0, json_integer(0x1080));
}
static void j_near_far_type(json_t *r)
{
    json_object_set_new(l2of(r), "near_far", json_pack("{s:i}", "copy_to_near", 1));
}
static void j_conf_type(json_t *r)
{
    json_object_set_new(r, "confidence", json_pack("{s:s}", "l2.ways", "high"));
}

typedef struct jrule {
    const char *name;
    void (*fn)(json_t *root);
    int code;
    const char *field;
} jrule;

static const jrule JRULES[] = {
    {"json_format", j_format, GX_ECONFIG, "mod.json: format:"},
    {"json_version", j_version, GX_ECONFIG, "mod.json: version: 2 != 1"},
    {"json_topology_name", j_topology, GX_ECONFIG, "mod.json: l2.topology:"},
    {"json_table_length", j_table_len, GX_ECONFIG, "l2.hash.slice.table: 63 entries != 2^n_masks"},
    {"json_integer_type", j_ways_type, GX_ECONFIG, "mod.json: l2.ways: expected"},
    {"json_integer_sign", j_ways_negative, GX_ECONFIG, "mod.json: l2.ways: expected"},
    {"json_mask_hex", j_mask_text, GX_ECONFIG, "l2.hash.slice.masks[0]:"},
    {"json_tlb_object", j_tlb_type, GX_ECONFIG, "mod.json: tlb:"},
    {"json_levels_array", j_levels_type, GX_ECONFIG, "l2.levels_from_one_sm:"},
    {"json_observable_pair", j_obs_shape, GX_ECONFIG, "l2.hash.slice.observable_bits:"},
    {"json_mask_integer_ok", j_mask_int, GX_OK, NULL},
    {"json_near_far_bool", j_near_far_type, GX_ECONFIG, "l2.near_far.copy_to_near:"},
    {"json_confidence_number", j_conf_type, GX_ECONFIG, "confidence.l2.ways:"},
};
#define N_JRULES (sizeof JRULES / sizeof JRULES[0])

static void test_jrule(void **state)
{
    const jrule *r = *state;
    gx_msg m;
    int rc = parse_modified(r->fn, &m);
    if (rc != r->code || (r->field && !strstr(m.text, r->field)))
        fprintf(stderr, "jrule %s: rc=%d msg='%s'\n", r->name, rc, m.text);
    assert_int_equal(rc, r->code);
    if (r->field)
        assert_non_null(strstr(m.text, r->field));
}

/* ------------------------------------------------ syntax, files, round trip */

static void test_syntax_error_line_col(void **state)
{
    (void)state;
    const char *text = "{\n  \"format\": \"gpuxray-profile\",\n  \"version\": 1,,\n}\n";
    gx_profile *p = NULL;
    gx_msg m;
    gx_msg_clear(&m);
    int rc = gx_profile_parse(text, "bad.json", &p, &m);
    assert_int_equal(rc, GX_EPARSE);
    assert_null(p);
    /* the second comma is on line 3, column 16 */
    assert_true(strncmp(m.text, "bad.json:3:16:", 14) == 0);
}

static void test_duplicate_key(void **state)
{
    (void)state;
    const char *text = "{\"format\": \"gpuxray-profile\", \"version\": 1, \"version\": 1}";
    gx_profile *p = NULL;
    gx_msg m;
    int rc = gx_profile_parse(text, "dup.json", &p, &m);
    assert_int_equal(rc, GX_EPARSE);
    assert_non_null(strstr(m.text, "dup.json:1:"));
    assert_non_null(strstr(m.text, "version"));
}

static void test_load_missing_file(void **state)
{
    (void)state;
    const char *path = gx_test_tmp("does-not-exist.json");
    gx_profile *p = NULL;
    gx_msg m;
    int rc = gx_profile_load(path, &p, &m);
    assert_int_equal(rc, GX_EIO);
    assert_null(p);
    assert_non_null(strstr(m.text, path));
}

static void test_load_reports_path_on_invalid(void **state)
{
    (void)state;
    const char *path = gx_test_tmp("invalid.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": \"gpuxray-profile\", \"version\": 1,\n"
          " \"provenance\": {\"kind\": \"measured\"}, \"l2\": {\"ways\": 99}}\n",
          f);
    fclose(f);
    gx_profile *p = NULL;
    gx_msg m;
    int rc = gx_profile_load(path, &p, &m);
    unlink(path);
    assert_int_equal(rc, GX_ECONFIG);
    assert_non_null(strstr(m.text, path));
    assert_non_null(strstr(m.text, "l2.ways"));
}

static void add_unknowns(json_t *r)
{
    json_object_set_new(r, "x_top", json_pack("{s:[i,i]}", "list", 1, 2));
    json_object_set_new(json_object_get(r, "provenance"), "x_prov", json_string("p"));
    json_object_set_new(l2of(r), "x_l2", json_real(1.5));
    json_object_set_new(json_object_get(l2of(r), "hash"), "x_hash", json_true());
    json_object_set_new(sliceof(r), "x_slice", json_string("s"));
    json_object_set_new(json_object_get(json_object_get(r, "sim"), "noise"), "x_noise",
                        json_integer(9));
    json_object_set_new(r, "x_tlb", json_pack("{s:i,s:{s:i}}", "l1_entries", 16, "walker",
                                              "levels", 4));
}

static void test_round_trip_keeps_unknown_fields(void **state)
{
    (void)state;
    json_error_t e;
    json_t *root = json_load_file(gx_test_path("profiles/seed-ampere-6mb.json"), 0, &e);
    assert_non_null(root);
    add_unknowns(root);
    char *text = json_dumps(root, JSON_INDENT(2));
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_parse(text, "rt.json", &p, &m), GX_OK);
    free(text);
    /* change a known field; it must be written, the unknown ones kept */
    p->l2.ways = 16;
    strcpy(p->name, "renamed");
    const char *path = gx_test_tmp("roundtrip.json");
    assert_int_equal(gx_profile_save(p, path, &m), GX_OK);
    json_t *back = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_object_get(back, "name")), "renamed");
    const char *keys[] = {"x_top", "x_tlb"};
    for (int i = 0; i < 2; i++)
        assert_true(json_equal(json_object_get(root, keys[i]), json_object_get(back, keys[i])));
    assert_true(json_equal(json_object_get(json_object_get(back, "provenance"), "x_prov"),
                           json_object_get(json_object_get(root, "provenance"), "x_prov")));
    assert_true(json_real_value(json_object_get(l2of(back), "x_l2")) == 1.5);
    assert_true(json_is_true(json_object_get(json_object_get(l2of(back), "hash"), "x_hash")));
    assert_string_equal(json_string_value(json_object_get(sliceof(back), "x_slice")), "s");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(back, "sim"), "noise"), "x_noise")),
                     9);
    /* the known content is unchanged: whole documents equal except name */
    json_object_set_new(root, "name", json_string("renamed"));
    json_object_set_new(root, "confidence", json_object());
    assert_true(json_equal(root, back));
    /* load -> save again gives byte-identical text (stable output) */
    gx_profile *q = NULL;
    assert_int_equal(gx_profile_load(path, &q, &m), GX_OK);
    char *t1 = gx_profile_to_json(p), *t2 = gx_profile_to_json(q);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    gx_profile_free(q);
    gx_profile_free(p);
    json_decref(back);
    json_decref(root);
    unlink(path);
}

/* A set table (an index that no modulo of parities gives, e.g. one
 * measured set by set) survives the writer and the reader, and the model
 * puts every address in the set its table gives. */
static void test_set_table(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_hash_fn *h = &p->l2.set_hash;
    h->modulo = 0;
    set_table(h, 48);
    for (size_t i = 0; i < ((size_t)1 << h->n_masks); i++) /* not the bits mod 48 */
        h->table[i] = (uint32_t)((i * 29 + 5) % 48);
    gx_msg m;
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    char *text = gx_profile_to_json(p);
    assert_non_null(text);
    gx_profile *q = NULL;
    assert_int_equal(gx_profile_parse(text, "t.json", &q, &m), GX_OK);
    assert_non_null(q->l2.set_hash.table);
    assert_true(q->l2.set_hash.modulo == 0);
    for (size_t i = 0; i < ((size_t)1 << h->n_masks); i++)
        assert_int_equal(q->l2.set_hash.table[i], h->table[i]);
    gx_l2 *l2 = NULL;
    assert_int_equal(gx_l2_new(q, NULL, &l2, &m), GX_OK);
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < 4096; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint64_t pa = x >> 20; /* 44-bit addresses */
        gx_l2_loc loc;
        gx_l2_locate(l2, pa, &loc);
        assert_int_equal(loc.set, h->table[gx_hash_bits(h, pa)]);
    }
    gx_l2_free(l2);
    free(text);
    gx_profile_free(q);
    gx_profile_free(p);
}

static void test_round_trip_struct(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_profile_set_confidence(p, "l2.ways", 0.999);
    set_table(&p->l2.slice_hash, 64); /* a table survives too */
    p->l2.topology = GX_TOPO_NEAR_FAR;
    p->l2.near_hit_cycles = 200.5;
    p->l2.far_hit_cycles = 400;
    p->l2.near_far.copy_to_near = 1;
    p->l2.near_far.victims_to_far = 0;
    gx_msg m;
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    char *text = gx_profile_to_json(p);
    assert_non_null(text);
    gx_profile *q = NULL;
    if (gx_profile_parse(text, "s.json", &q, &m) != GX_OK)
        fprintf(stderr, "%s\n", m.text);
    assert_non_null(q);
    assert_int_equal(q->l2.ways, 16);
    assert_int_equal(q->l2.sets_per_slice, 48);
    assert_int_equal(q->l2.slice_hash.n_masks, 6);
    assert_true(q->l2.slice_hash.masks[5] == 0x2aaaaa000ULL);
    assert_non_null(q->l2.slice_hash.table);
    assert_int_equal(q->l2.slice_hash.table[63], 63);
    assert_int_equal(q->l2.slice_hash.obs_lo, 7);
    assert_int_equal(q->l2.slice_hash.obs_hi, 20);
    assert_true(q->l2.set_hash.modulo == 48);
    assert_true(q->l2.near_hit_cycles == 200.5);
    assert_int_equal(q->l2.near_far.copy_to_near, 1);
    assert_int_equal(q->l2.near_far.victims_to_far, 0);
    assert_true(fabs(gx_profile_confidence(q, "l2.ways") - 0.999) < 1e-12);
    assert_true(isnan(gx_profile_confidence(q, "l2.slices")));
    assert_true(q->sim.present && q->sim.frames_seed == 7 && q->sim.outlier_rate == 0.0005);
    assert_true(isnan(q->l2.hit_cycles) == 0);
    assert_non_null(strstr(text, "\"0x2aaaaa000\""));
    free(text);
    /* clone is deep */
    gx_profile *c = gx_profile_clone(q);
    assert_non_null(c);
    assert_true(c->l2.slice_hash.table != q->l2.slice_hash.table);
    gx_profile_free(q);
    char *t2 = gx_profile_to_json(c);
    assert_non_null(strstr(t2, "\"copy_to_near\": true"));
    free(t2);
    gx_profile_free(c);
    gx_profile_free(p);
}

static void test_new_profile_serialises_absent_as_null(void **state)
{
    (void)state;
    gx_profile *p = gx_profile_new();
    p->l2.present = 1;
    p->l2.ways = 8;
    char *text = gx_profile_to_json(p);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"ways\": 8"));
    assert_non_null(strstr(text, "\"slices\": null"));
    assert_non_null(strstr(text, "\"kind\": \"measured\""));
    assert_null(strstr(text, "\"sim\""));
    /* the documented order: format first, then version */
    assert_true(strstr(text, "\"format\"") < strstr(text, "\"version\""));
    assert_true(strstr(text, "\"device\"") < strstr(text, "\"l2\""));
    gx_profile *q = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_parse(text, "n.json", &q, &m), GX_OK);
    assert_int_equal(q->l2.ways, 8);
    assert_int_equal(q->l2.slices, 0);
    assert_true(isnan(q->l2.hit_cycles));
    assert_int_equal(q->l2.slice_hash.present, 0);
    free(text);
    gx_profile_free(q);
    gx_profile_free(p);
}

static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static void test_save_is_atomic(void **state)
{
    (void)state;
    gx_profile *p = seed();
    gx_msg m;
    /* a path in a missing directory fails and creates nothing */
    const char *dir = gx_test_tmp("no-such-dir");
    char path[4200];
    snprintf(path, sizeof path, "%s/out.json", dir);
    gx_msg_clear(&m);
    assert_int_equal(gx_profile_save(p, path, &m), GX_EIO);
    assert_non_null(strstr(m.text, path));
    assert_int_equal(access(dir, F_OK), -1);
    /* saving over an existing file replaces it and leaves no temporary */
    const char *out = gx_test_tmp("atomic.json");
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(gx_profile_save(p, out, &m), GX_OK);
    size_t len = 0;
    char *text = gx_test_slurp(out, &len);
    assert_non_null(text);
    assert_true(strncmp(text, "{", 1) == 0);
    free(text);
    const char *slash = strrchr(out, '/');
    char d[4096];
    snprintf(d, sizeof d, "%.*s", (int)(slash - out), out);
    char tmpprefix[512];
    snprintf(tmpprefix, sizeof tmpprefix, "%s.tmp.", slash + 1);
    assert_int_equal(count_entries(d, tmpprefix), 0);
    unlink(out);
    gx_profile_free(p);
}

static void test_seed_profile_card(void **state)
{
    (void)state;
    gx_profile *p = seed();
    assert_true(p->l2.capacity_bytes == 6291456);
    assert_int_equal(p->l2.partitions, 2);
    assert_int_equal(p->l2.slices, 64);
    assert_int_equal(p->l2.ways, 16);
    assert_int_equal(p->l2.line_bytes, 128);
    assert_int_equal(p->l2.sector_bytes, 32);
    assert_int_equal(p->l2.sets_per_slice, 48);
    assert_string_equal(p->l2.policy, "plru-rand:0.05");
    assert_int_equal(p->l2.topology, GX_TOPO_UNIFORM);
    assert_true(p->l2.hit_cycles == 210 && p->memory.dram_latency_cycles == 430);
    /* slice masks 0-4 only use bits 7..12; mask 5 (partition) bits 13 and up */
    for (int i = 0; i < 5; i++)
        assert_true((p->l2.slice_hash.masks[i] & ~0x1f80ULL) == 0);
    assert_true((p->l2.slice_hash.masks[5] & 0x1fffULL) == 0);
    assert_true(p->l2.slice_hash.masks[5] >> 21 != 0); /* part above the 2 MiB page */
    gx_profile_free(p);
}

static void test_tlb_defaults_and_clone(void **state)
{
    (void)state;
    gx_profile *p = gx_profile_new();
    assert_non_null(p);
    assert_int_equal(p->tlb.present, 0); /* no translation unless a profile says so */
    assert_int_equal(p->tlb.pte_bytes, 8);
    assert_int_equal(p->tlb.coalescer.size_predictor_bits, 4);
    assert_int_equal(p->tlb.coalescer.predict_large_bytes, 2u << 20);
    assert_true(isnan(p->tlb.levels[0].miss_cycles));
    assert_true(isnan(p->tlb.walker.fixed_read_cycles));
    p->tlb.present = 1;
    p->tlb.n_levels = 1;
    p->tlb.levels[0].entries = 32;
    p->tlb.levels[0].sharing = GX_SHARE_TPC;
    p->tlb.n_regions = 1;
    p->tlb.regions[0] = (gx_va_region){1u << 30, 64u << 20, 2u << 20};
    snprintf(p->tlb.walker.pwc.policy, sizeof p->tlb.walker.pwc.policy, "lru");
    gx_profile *c = gx_profile_clone(p);
    assert_non_null(c);
    assert_int_equal(c->tlb.present, 1);
    assert_int_equal(c->tlb.levels[0].entries, 32);
    assert_int_equal(c->tlb.levels[0].sharing, GX_SHARE_TPC);
    assert_int_equal(c->tlb.regions[0].page_bytes, 2u << 20);
    assert_string_equal(c->tlb.walker.pwc.policy, "lru");
    gx_sharing sh = GX_SHARE_UNKNOWN;
    assert_int_equal(gx_sharing_parse("gpc", &sh), GX_OK);
    assert_int_equal(sh, GX_SHARE_GPC);
    assert_string_equal(gx_sharing_name(sh), "gpc");
    assert_int_equal(gx_sharing_parse("warp", &sh), GX_EINVAL);
    gx_profile_free(c);
    gx_profile_free(p);
}

int main(void)
{
    enum { EXTRA = 13 };
    struct CMUnitTest tests[N_RULES + N_JRULES + EXTRA];
    size_t n = 0;
    static char names[N_RULES + N_JRULES][96];
    for (size_t i = 0; i < N_RULES; i++) {
        snprintf(names[n], sizeof names[n], "rule_%s", RULES[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_rule, NULL, NULL, (void *)&RULES[i]};
        n++;
    }
    for (size_t i = 0; i < N_JRULES; i++) {
        snprintf(names[n], sizeof names[n], "%s", JRULES[i].name);
        tests[n] = (struct CMUnitTest){names[n], test_jrule, NULL, NULL, (void *)&JRULES[i]};
        n++;
    }
    const struct CMUnitTest extra[] = {
        cmocka_unit_test(test_measured_may_omit),
        cmocka_unit_test(test_syntax_error_line_col),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_load_missing_file),
        cmocka_unit_test(test_load_reports_path_on_invalid),
        cmocka_unit_test(test_round_trip_keeps_unknown_fields),
        cmocka_unit_test(test_round_trip_struct),
        cmocka_unit_test(test_set_table),
        cmocka_unit_test(test_new_profile_serialises_absent_as_null),
        cmocka_unit_test(test_save_is_atomic),
        cmocka_unit_test(test_seed_profile_card),
        cmocka_unit_test(test_tlb_defaults_and_clone),
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        tests[n++] = extra[i];
    return _cmocka_run_group_tests("profile", tests, n, NULL, NULL);
}
