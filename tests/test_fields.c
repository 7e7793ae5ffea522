/* test_fields.c - the profile's field table (src/profile/fields.def), row by
 * row: every field of a complete profile (the seed card plus a full tlb
 * section) round-trips through save and load; every field refuses values of
 * the wrong type or outside its documented range (negative, fractional,
 * overflowing, 1e308, "NaN") with a message naming it; seeds round-trip as
 * full u64; the tlb section's cross-field rules; the model's rules equal
 * validation's; compare gives the tlb rows the table names; and
 * docs/profile-format.md lists every row as the table has it.
 *
 * Notes:
 * - GX_FIELDS_PRINT=1 ./test_fields prints the doc's field lines (the
 *   "Field reference" tables of docs/profile-format.md) and exits. */
#include "testutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/compare.h"
#include "gpuxray/l2.h"
#include "gpuxray/profile.h"
#include "profile/fields.h"

/* A gem5-like translation section (Vega TLB sizes and latencies). */
static const char *TLB_JSON =
    "{\"sms_per_tpc\": 2, \"sms_per_gpc\": 18,"
    " \"page_table\": {\"page_sizes\": [4096, 65536, 2097152, 1073741824, 549755813888],"
    "   \"default_page_bytes\": 4096,"
    "   \"regions\": [{\"va_base\": 1073741824, \"bytes\": 67108864, \"page_bytes\": 2097152},"
    "                 {\"va_base\": 4294967296, \"bytes\": 1073741824, \"page_bytes\": 1073741824}],"
    "   \"level_bits\": [9, 9, 9, 9], \"pte_bytes\": 8},"
    " \"levels\": ["
    "   {\"name\": \"L1\", \"entries\": 32, \"ways\": 32, \"entry_bytes\": 4096, \"sharing\": \"sm\","
    "    \"hit_latency_cycles\": 1, \"miss_cycles\": 68.5, \"policy\": \"lru\","
    "    \"outstanding_misses\": 0},"
    "   {\"name\": \"L2\", \"entries\": 4096, \"ways\": 32, \"entry_bytes\": 65536,"
    "    \"sharing\": \"tpc\", \"hit_latency_cycles\": 69, \"miss_cycles\": 81,"
    "    \"policy\": \"lru\", \"outstanding_misses\": 64},"
    "   {\"name\": \"L3\", \"entries\": 8192, \"ways\": 32, \"entry_bytes\": 33554432,"
    "    \"sharing\": \"gpu\", \"hit_latency_cycles\": 150, \"miss_cycles\": 300,"
    "    \"policy\": \"lru\", \"outstanding_misses\": 128}],"
    " \"walker\": {\"fetch_bytes\": 128, \"walkers\": 8, \"queue_entries\": 64,"
    "   \"fixed_read_cycles\": 120,"
    "   \"pwc\": {\"entries\": 64, \"ways\": 64, \"policy\": \"lru\", \"hit_latency_cycles\": 2},"
    "   \"neighbour_pwc\": {\"entries\": 256, \"ways\": 256, \"policy\": \"lru\","
    "     \"hit_latency_cycles\": 2}},"
    " \"coalescer\": {\"window_cycles\": 1, \"max_granule_bytes\": 2097152,"
    "   \"size_predictor_bits\": 4, \"predict_small_bytes\": 4096,"
    "   \"predict_large_bytes\": 2097152, \"neighbour_predictor_bits\": 4,"
    "   \"line_group_pages\": 16}}";

/* The seed card with every optional field given and a tlb section. */
static json_t *base_doc(void)
{
    json_error_t e;
    json_t *root = json_load_file(gx_test_path("profiles/seed-ampere-6mb.json"), 0, &e);
    assert_non_null(root);
    json_t *tlb = json_loads(TLB_JSON, 0, &e);
    if (!tlb)
        fprintf(stderr, "TLB_JSON:%d:%d: %s\n", e.line, e.column, e.text);
    assert_non_null(tlb);
    json_object_set_new(root, "tlb", tlb);
    json_t *pv = json_object_get(root, "provenance");
    json_object_set_new(pv, "target", json_string("sim:seed"));
    json_object_set_new(pv, "created", json_string("2026-01-01T00:00:00Z"));
    json_object_set_new(pv, "seed", json_integer(7));
    json_object_set_new(pv, "queries", json_integer(1000));
    json_object_set_new(pv, "accesses", json_integer(20000));
    json_object_set_new(pv, "seconds", json_real(1.25));
    json_object_set_new(json_object_get(root, "l2"), "near_far",
                        json_pack("{s:b,s:b}", "copy_to_near", 1, "victims_to_far", 0));
    return root;
}

static gx_profile *parse_doc(const json_t *root, gx_msg *m, int *rc)
{
    char *text = json_dumps(root, JSON_INDENT(2));
    assert_non_null(text);
    gx_profile *p = NULL;
    gx_msg_clear(m);
    *rc = gx_profile_parse(text, "mod.json", &p, m);
    free(text);
    return p;
}

/* Where a group's representative entry sits in the document. */
static const char *group_json_prefix(gx_fgroup g)
{
    switch (g) {
    case GX_FG_l2level:
        return "l2.levels_from_one_sm[0]";
    case GX_FG_tlblevel:
        return "tlb.levels[1]";
    case GX_FG_region:
        return "tlb.page_table.regions[0]";
    case GX_FG_smallcache:
        return "tlb.walker.pwc";
    default:
        return "";
    }
}

/* The object holding a field (by its full dotted name, "[i]" steps into
 * arrays); *key receives the last component. */
static json_t *holder(json_t *root, const char *full, char *key, size_t cap)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", full);
    json_t *o = root;
    char *s = buf, *dot;
    while ((dot = strchr(s, '.'))) {
        *dot = '\0';
        char *br = strchr(s, '[');
        int idx = -1;
        if (br) {
            idx = atoi(br + 1);
            *br = '\0';
        }
        json_t *n = json_object_get(o, s);
        if (!n || !json_is_object(n)) {
            if (idx >= 0) {
                assert_non_null(n);
            } else {
                n = json_object();
                json_object_set_new(o, s, n);
            }
        }
        o = idx >= 0 ? json_array_get(n, (size_t)idx) : n;
        assert_non_null(o);
        s = dot + 1;
    }
    snprintf(key, cap, "%.63s", s);
    return o;
}

static void full_name(const gx_field *f, char *buf, size_t cap)
{
    const char *g = group_json_prefix(f->group);
    snprintf(buf, cap, "%s%s%s", g, *g ? "." : "", f->path);
}

/* The struct holding a group's fields in p (the same entries as above). */
static const void *group_base(const gx_profile *p, gx_fgroup g)
{
    switch (g) {
    case GX_FG_l2level:
        return &p->l2.levels[0];
    case GX_FG_tlblevel:
        return &p->tlb.levels[1];
    case GX_FG_region:
        return &p->tlb.regions[0];
    case GX_FG_smallcache:
        return &p->tlb.walker.pwc;
    default:
        return p;
    }
}

static int is_leaf(const gx_field *f)
{
    return f->type != GX_FT_OBJ && f->type != GX_FT_SUB && f->type != GX_FT_ARR &&
           f->type != GX_FT_CUSTOM;
}

/* Equal values of one field in two structs (NaN equals NaN). */
static int same_value(const gx_field *f, const void *a, const void *b)
{
    const void *x = gx_fptr(a, f->off), *y = gx_fptr(b, f->off);
    switch (f->type) {
    case GX_FT_DBL: {
        double u = *(const double *)x, v = *(const double *)y;
        return (isnan(u) && isnan(v)) || u == v;
    }
    case GX_FT_STR:
        return strcmp(x, y) == 0;
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32: {
        int n = *(const int *)gx_fptr(a, f->aux_off);
        return n == *(const int *)gx_fptr(b, f->aux_off) &&
               memcmp(x, y, (size_t)n * f->size) == 0;
    }
    default:
        return memcmp(x, y, f->size) == 0;
    }
}

/* ---- every field of a complete profile round-trips ---- */

static void test_every_field_round_trips(void **state)
{
    (void)state;
    json_t *root = base_doc();
    gx_msg m;
    int rc;
    gx_profile *p = parse_doc(root, &m, &rc);
    if (rc != GX_OK)
        fprintf(stderr, "base: %s\n", m.text);
    assert_int_equal(rc, GX_OK);
    char *t1 = gx_profile_to_json(p);
    assert_non_null(t1);
    gx_profile *q = NULL;
    assert_int_equal(gx_profile_parse(t1, "t1.json", &q, &m), GX_OK);
    char *t2 = gx_profile_to_json(q);
    assert_string_equal(t1, t2); /* stable text */
    size_t n, checked = 0, leaves = 0;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++)
        leaves += (size_t)is_leaf(&t[i]);
    for (size_t i = 0; i < n; i++) {
        if (!is_leaf(&t[i]))
            continue;
        char name[160], key[64];
        full_name(&t[i], name, sizeof name);
        const void *pb = group_base(p, t[i].group), *qb = group_base(q, t[i].group);
        json_t *o = holder(root, name, key, sizeof key);
        json_t *jv = json_object_get(o, key);
        if (jv && !json_is_null(jv) && gx_field_absent(&t[i], pb)) {
            fprintf(stderr, "%s: given in the document but absent after load\n", name);
            fail();
        }
        if (!same_value(&t[i], pb, qb)) {
            fprintf(stderr, "%s: differs after save + load\n", name);
            fail();
        }
        checked++;
    }
    assert_int_equal(checked, leaves); /* every leaf row of the table */
    assert_true(leaves >= 70);
    /* the tlb section came through, and the second walk cache too */
    assert_int_equal(q->tlb.present, 1);
    assert_int_equal(q->tlb.n_levels, 3);
    assert_int_equal(q->tlb.levels[2].entry_bytes, 32u << 20);
    assert_int_equal(q->tlb.levels[1].sharing, GX_SHARE_TPC);
    assert_int_equal(q->tlb.walker.neighbour_pwc.entries, 256);
    assert_int_equal(q->tlb.n_regions, 2);
    assert_true(q->tlb.page_sizes[4] == (512ULL << 30));
    assert_int_equal(q->tlb.level_bits[3], 9);
    free(t1);
    free(t2);
    gx_profile_free(q);
    gx_profile_free(p);
    json_decref(root);
}

static void test_tlb_null_and_unknown_members(void **state)
{
    (void)state;
    json_t *root = base_doc();
    json_object_set_new(json_object_get(root, "tlb"), "x_note", json_string("kept"));
    json_object_set_new(json_array_get(json_object_get(json_object_get(root, "tlb"), "levels"), 0),
                        "x_level", json_integer(5));
    gx_msg m;
    int rc;
    gx_profile *p = parse_doc(root, &m, &rc);
    assert_int_equal(rc, GX_OK);
    char *text = gx_profile_to_json(p);
    assert_non_null(strstr(text, "\"x_note\": \"kept\""));
    assert_non_null(strstr(text, "\"x_level\": 5"));
    free(text);
    /* "tlb": null is no translation; written back as null */
    p->tlb.present = 0;
    text = gx_profile_to_json(p);
    assert_non_null(strstr(text, "\"tlb\": null"));
    free(text);
    gx_profile_free(p);
    json_object_set_new(root, "tlb", json_null());
    p = parse_doc(root, &m, &rc);
    assert_int_equal(rc, GX_OK);
    assert_int_equal(p->tlb.present, 0);
    gx_profile_free(p);
    /* a new profile's tlb defaults are gx_tlb_cfg_init's */
    gx_profile *d = gx_profile_new();
    gx_tlb_cfg init;
    gx_tlb_cfg_init(&init);
    assert_memory_equal(&d->tlb, &init, sizeof init);
    gx_profile_free(d);
    json_decref(root);
}

/* ---- every field refuses bad values, naming itself ---- */

typedef struct badval {
    json_t *v;
    char shows[48]; /* text the message must contain besides the field; "" none */
} badval;

static int add_bad(badval *b, int n, json_t *v, const char *shows)
{
    b[n].v = v;
    snprintf(b[n].shows, sizeof b[n].shows, "%s", shows ? shows : "");
    return n + 1;
}

static int int_bads(const gx_field *f, badval *b)
{
    int n = 0;
    const uint64_t tmax = f->size == sizeof(uint32_t) ? UINT32_MAX : UINT64_MAX;
    n = add_bad(b, n, json_integer(-1), "-1");
    n = add_bad(b, n, json_real((double)f->ilo + 0.5), NULL);
    n = add_bad(b, n, json_real(1e308), NULL);
    n = add_bad(b, n, json_string("NaN"), NULL);
    n = add_bad(b, n, json_true(), NULL);
    n = add_bad(b, n, json_object(), NULL);
    char d[32];
    if (f->ihi < tmax && f->ihi < (uint64_t)INT64_MAX) {
        snprintf(d, sizeof d, "%" PRIu64, f->ihi + 1);
        n = add_bad(b, n, json_integer((json_int_t)(f->ihi + 1)), d);
    }
    if (tmax == UINT32_MAX)
        n = add_bad(b, n, json_integer((json_int_t)UINT32_MAX + 1), "4294967296");
    else
        n = add_bad(b, n, json_string("18446744073709551616"), NULL); /* 2^64 */
    if (f->ilo > 0) {
        snprintf(d, sizeof d, "%" PRIu64, f->ilo - 1);
        n = add_bad(b, n, json_integer((json_int_t)(f->ilo - 1)), d);
    }
    if ((f->flags & GX_FF_POW2) && f->ilo * 3 <= f->ihi) {
        snprintf(d, sizeof d, "%" PRIu64, f->ilo * 3);
        n = add_bad(b, n, json_integer((json_int_t)(f->ilo * 3)), "power of two");
    }
    return n;
}

static int field_bads(const gx_field *f, badval *b)
{
    int n = 0;
    switch (f->type) {
    case GX_FT_U32:
    case GX_FT_U64:
        return int_bads(f, b);
    case GX_FT_DBL:
        n = add_bad(b, n, json_real(1e308), "1e+308");
        n = add_bad(b, n, json_string("NaN"), NULL);
        n = add_bad(b, n, json_false(), NULL);
        n = add_bad(b, n, json_real(f->dhi * 2 + 1), NULL);
        n = add_bad(b, n, json_real(f->dlo - 1), NULL);
        if (f->flags & GX_FF_LO_OPEN)
            n = add_bad(b, n, json_real(f->dlo), "positive");
        return n;
    case GX_FT_BOOL:
        n = add_bad(b, n, json_integer(1), NULL);
        return add_bad(b, n, json_string("true"), NULL);
    case GX_FT_STR: {
        char *longs = malloc(f->size + 1);
        assert_non_null(longs);
        memset(longs, 'a', f->size);
        longs[f->size] = '\0';
        n = add_bad(b, n, json_string(longs), "longer");
        free(longs);
        n = add_bad(b, n, json_integer(5), NULL);
        if (f->flags & GX_FF_POLICY)
            n = add_bad(b, n, json_string("no-such-policy"), "policy");
        return n;
    }
    case GX_FT_ENUM:
        n = add_bad(b, n, json_string("bogus"), "bogus");
        return add_bad(b, n, json_integer(1), NULL);
    case GX_FT_LIST_U64:
    case GX_FT_LIST_U32: {
        n = add_bad(b, n, json_integer(4), NULL);
        n = add_bad(b, n, json_pack("[i]", -1), "[0]");
        n = add_bad(b, n, json_pack("[f]", 1e308), "[0]");
        json_t *many = json_array();
        for (int i = 0; i <= f->max_count; i++)
            json_array_append_new(many, json_integer((json_int_t)f->ilo << i));
        return add_bad(b, n, many, "at most");
    }
    default:
        return 0;
    }
}

static void test_every_field_refuses_bad_values(void **state)
{
    (void)state;
    json_t *root = base_doc();
    size_t n, cases = 0;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        if (!is_leaf(&t[i]))
            continue;
        badval b[16];
        int nb = field_bads(&t[i], b);
        char name[160], key[64], want[192];
        full_name(&t[i], name, sizeof name);
        snprintf(want, sizeof want, "mod.json: %s", name);
        for (int k = 0; k < nb; k++) {
            json_t *doc = json_deep_copy(root);
            json_t *o = holder(doc, name, key, sizeof key);
            json_object_set_new(o, key, b[k].v);
            char *vt = json_dumps(b[k].v, JSON_ENCODE_ANY);
            gx_msg m;
            int rc;
            gx_profile *p = parse_doc(doc, &m, &rc);
            if (rc != GX_ECONFIG || !strstr(m.text, want) || (b[k].shows[0] &&
                                                             !strstr(m.text, b[k].shows))) {
                fprintf(stderr, "%s = %s: rc %d, '%s' (want '%s' and '%s')\n", name, vt, rc,
                        m.text, want, b[k].shows);
                fail();
            }
            assert_null(p);
            free(vt);
            json_decref(doc);
            cases++;
        }
    }
    fprintf(stderr, "%zu bad values refused\n", cases);
    assert_true(cases >= 450);
    json_decref(root);
}

static void test_containers_refuse_bad_shapes(void **state)
{
    (void)state;
    const struct {
        const char *name;
        const char *json;
        const char *want;
    } cases[] = {
        {"tlb", "5", "mod.json: tlb: expected an object or null, got 5"},
        {"tlb.walker", "[]", "mod.json: tlb.walker: expected an object, got an array"},
        {"tlb.walker.pwc", "\"x\"", "mod.json: tlb.walker.pwc: expected an object or null"},
        {"tlb.levels", "{}", "mod.json: tlb.levels: expected an array, got an object"},
        {"tlb.levels", "[1]", "mod.json: tlb.levels[0]: expected an object, got 1"},
        {"tlb.levels", "[{},{},{},{},{}]", "mod.json: tlb.levels: 5 entries: at most 4"},
        {"tlb.page_table.regions", "[{\"bytes\": 4096, \"page_bytes\": 4096}, 7]",
         "mod.json: tlb.page_table.regions[1]: expected an object"},
        {"l2.levels_from_one_sm", "\"x\"", "mod.json: l2.levels_from_one_sm: expected an array"},
        {"sim", "[]", "mod.json: sim: expected an object or null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = base_doc();
        char key[64];
        json_t *o = holder(doc, cases[i].name, key, sizeof key);
        json_object_set_new(o, key, json_loads(cases[i].json, JSON_DECODE_ANY, NULL));
        gx_msg m;
        int rc;
        gx_profile *p = parse_doc(doc, &m, &rc);
        if (rc != GX_ECONFIG || !strstr(m.text, cases[i].want)) {
            fprintf(stderr, "%s = %s: rc %d '%s'\n", cases[i].name, cases[i].json, rc, m.text);
            fail();
        }
        assert_null(p);
        json_decref(doc);
    }
}

/* ---- seeds: full u64, 0 recorded ---- */

static void test_seed_round_trips_as_u64(void **state)
{
    (void)state;
    const uint64_t seeds[] = {0, 1, (1ULL << 53) + 1, (uint64_t)INT64_MAX, 1ULL << 63,
                              UINT64_MAX};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        gx_profile *p = gx_profile_new();
        p->provenance.seed = seeds[i];
        p->provenance.seed_given = 1;
        p->sim.present = 1;
        p->sim.frames_seed = seeds[i];
        char *text = gx_profile_to_json(p);
        char want[64];
        if (seeds[i] > (uint64_t)INT64_MAX)
            snprintf(want, sizeof want, "\"seed\": \"%" PRIu64 "\"", seeds[i]);
        else
            snprintf(want, sizeof want, "\"seed\": %" PRIu64, seeds[i]);
        if (!strstr(text, want))
            fprintf(stderr, "%s", text);
        assert_non_null(strstr(text, want));
        gx_profile *q = NULL;
        gx_msg m;
        assert_int_equal(gx_profile_parse(text, "seed.json", &q, &m), GX_OK);
        assert_true(q->provenance.seed == seeds[i] && q->provenance.seed_given);
        assert_true(q->sim.frames_seed == seeds[i]);
        free(text);
        gx_profile_free(q);
        gx_profile_free(p);
    }
    /* an unset seed is not written; bad seeds are refused */
    gx_profile *p = gx_profile_new();
    char *text = gx_profile_to_json(p);
    assert_null(strstr(text, "\"seed\""));
    free(text);
    gx_profile_free(p);
    const char *bad[] = {"-5", "\"-5\"", "\"18446744073709551616\"", "\"0x10\"", "1.5",
                         "\"\"", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[256];
        snprintf(doc, sizeof doc, "{\"format\": \"gpuxray-profile\", \"version\": 1, "
                 "\"provenance\": {\"kind\": \"measured\", \"seed\": %s}}", bad[i]);
        gx_profile *q = NULL;
        gx_msg m;
        int rc = gx_profile_parse(doc, "seed.json", &q, &m);
        assert_int_not_equal(rc, GX_OK);
        assert_null(q);
        /* a JSON integer beyond int64 is a syntax error (with its position) */
        assert_true(strstr(m.text, "provenance.seed") || strstr(m.text, "seed.json:1:"));
    }
}

/* ---- cross-field rules of the tlb section ---- */

typedef struct xrule {
    const char *name;
    void (*mutate)(gx_profile *p);
    const char *field;
    const char *also;
} xrule;

static void x_sizes_order(gx_profile *p) { p->tlb.page_sizes[2] = 32768; }
static void x_default_page(gx_profile *p) { p->tlb.default_page_bytes = 8192; }
static void x_region_page(gx_profile *p) { p->tlb.regions[0].page_bytes = 8192; }
static void x_region_align(gx_profile *p) { p->tlb.regions[0].va_base += 4096; }
static void x_region_bytes(gx_profile *p) { p->tlb.regions[0].bytes += 4096; }
static void x_region_wrap(gx_profile *p)
{
    p->tlb.regions[1].va_base = UINT64_MAX - (1ULL << 30) + 1 - (1ULL << 30);
    p->tlb.regions[1].bytes = 3ULL << 30; /* the last GiB would lie past 2^64 */
}
static void x_region_overlap(gx_profile *p) { p->tlb.regions[1].va_base = 1ULL << 30; }
static void x_level_bits(gx_profile *p)
{
    p->tlb.n_level_bits = 6;
    for (int i = 0; i < 6; i++)
        p->tlb.level_bits[i] = 9;
}
static void x_fetch_pte(gx_profile *p) { p->tlb.pte_bytes = 16, p->tlb.walker.fetch_bytes = 8; }
static void x_fetch_line(gx_profile *p) { p->tlb.walker.fetch_bytes = 256; }
static void x_ways_level(gx_profile *p) { p->tlb.levels[0].ways = 24; }
static void x_ways_pwc(gx_profile *p) { p->tlb.walker.neighbour_pwc.ways = 3; }
/* the fixture's neighbour PWC is 256 entries, 256 ways: allowed with lru only */
static void x_ways_pwc_fifo(gx_profile *p) { strcpy(p->tlb.walker.neighbour_pwc.policy, "fifo"); }
static void x_ways_pwc_sets(gx_profile *p) { p->tlb.walker.neighbour_pwc.ways = 128; }
static void x_ways_level_big(gx_profile *p)
{
    p->tlb.levels[0].entries = 128;
    p->tlb.levels[0].ways = 128;
}
static void x_entry_bytes(gx_profile *p)
{
    p->tlb.page_sizes[0] = 8192;
    p->tlb.default_page_bytes = 8192;
    p->tlb.levels[0].entry_bytes = 4096;
}
static void x_tpc(gx_profile *p) { p->tlb.sms_per_tpc = 0, p->tlb.sms_per_gpc = 0; }
static void x_gpc(gx_profile *p) { p->tlb.sms_per_gpc = 17; }
static void x_predict(gx_profile *p) { p->tlb.coalescer.predict_large_bytes = 4096; }
static void x_need_levels(gx_profile *p) { p->tlb.n_levels = 0; }
static void x_need_walkers(gx_profile *p) { p->tlb.walker.walkers = 0; }
static void x_pwc_entries(gx_profile *p) { p->tlb.walker.pwc.entries = 0; }
static void x_pwc_latency(gx_profile *p) { p->tlb.walker.pwc.hit_latency_cycles = NAN; }
static void x_level_policy(gx_profile *p) { strcpy(p->tlb.levels[2].policy, "mru-ish"); }
static void x_masks_25(gx_profile *p)
{
    gx_hash_fn *h = &p->l2.set_hash;
    h->n_masks = 25;
    for (int i = 0; i < 25; i++)
        h->masks[i] = 1ULL << (7 + i);
}
static void x_page_2_62(gx_profile *p) { p->memory.page_bytes = 1ULL << 62; }

static const xrule XRULES[] = {
    {"sizes_ascending", x_sizes_order, "tlb.page_table.page_sizes[2]", "ascending"},
    {"default_page_installable", x_default_page, "tlb.page_table.default_page_bytes",
     "one of page_sizes"},
    {"region_page_installable", x_region_page, "tlb.page_table.regions[0].page_bytes",
     "one of page_sizes"},
    {"region_aligned", x_region_align, "tlb.page_table.regions[0].va_base", "aligned"},
    {"region_whole_pages", x_region_bytes, "tlb.page_table.regions[0].bytes", "multiple"},
    {"region_no_wrap", x_region_wrap, "tlb.page_table.regions[1].bytes", "2^64"},
    {"regions_disjoint", x_region_overlap, "tlb.page_table.regions[1]", "overlap"},
    {"level_bits_fit_va", x_level_bits, "tlb.page_table.level_bits", "64-bit"},
    {"fetch_multiple_of_pte", x_fetch_pte, "tlb.walker.fetch_bytes", "multiple of pte_bytes"},
    {"fetch_at_most_line", x_fetch_line, "tlb.walker.fetch_bytes", "l2.line_bytes"},
    {"level_ways_divide", x_ways_level, "tlb.levels[0].ways", "divide entries"},
    {"pwc_ways_divide", x_ways_pwc, "tlb.walker.neighbour_pwc.ways", "divide entries"},
    {"pwc_ways_fa_lru_only", x_ways_pwc_fifo, "tlb.walker.neighbour_pwc.ways", "policy lru"},
    {"pwc_ways_fa_only", x_ways_pwc_sets, "tlb.walker.neighbour_pwc.ways", "fully associative"},
    {"level_ways_registry", x_ways_level_big, "tlb.levels[0].ways", "policy registry"},
    {"entry_bytes_pages", x_entry_bytes, "tlb.levels[0].entry_bytes", "multiple of a page"},
    {"tpc_sharing_domain", x_tpc, "tlb.levels[1].sharing", "sms_per_tpc"},
    {"gpc_multiple_of_tpc", x_gpc, "tlb.sms_per_gpc", "multiple of sms_per_tpc"},
    {"predicted_sizes", x_predict, "tlb.coalescer.predict_large_bytes", "predict_small"},
    {"levels_required", x_need_levels, "tlb.levels", "required"},
    {"walkers_required", x_need_walkers, "tlb.walker.walkers", "required"},
    {"pwc_entries", x_pwc_entries, "tlb.walker.pwc.entries", "0 must be in 1.."},
    {"pwc_latency", x_pwc_latency, "tlb.walker.pwc.hit_latency_cycles", "required"},
    {"level_policy", x_level_policy, "tlb.levels[2].policy", "policy spec"},
    {"masks_at_most_24", x_masks_25, "l2.hash.set.masks", "at most 24"},
    {"page_bytes_2_62", x_page_2_62, "memory.page_bytes", "68719476736"},
};

static void test_cross_rule(void **state)
{
    const xrule *r = *state;
    json_t *root = base_doc();
    gx_msg m;
    int rc;
    gx_profile *p = parse_doc(root, &m, &rc);
    assert_int_equal(rc, GX_OK);
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    r->mutate(p);
    gx_msg_clear(&m);
    rc = gx_profile_validate(p, &m);
    if (rc != GX_ECONFIG || strncmp(m.text, r->field, strlen(r->field)) != 0 ||
        m.text[strlen(r->field)] != ':' || !strstr(m.text, r->also))
        fprintf(stderr, "rule %s: rc %d '%s'\n", r->name, rc, m.text);
    assert_int_equal(rc, GX_ECONFIG);
    assert_true(strncmp(m.text, r->field, strlen(r->field)) == 0);
    assert_non_null(strstr(m.text, r->also));
    /* the model applies the same rule */
    gx_msg mm;
    assert_int_equal(gx_profile_check_model(p, &mm), GX_ECONFIG);
    assert_true(strncmp(mm.text, r->field, strlen(r->field)) == 0 &&
                mm.text[strlen(r->field)] == ':');
    gx_profile_free(p);
    json_decref(root);
}

/* ---- the model's rules are validation's ---- */

static void test_model_rules_are_validation(void **state)
{
    (void)state;
    /* a measured profile may be partial: valid, but the model needs more */
    gx_profile *p = gx_profile_new();
    gx_msg m;
    assert_int_equal(gx_profile_validate(p, &m), GX_OK);
    assert_int_equal(gx_profile_check_model(p, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "required by the model"));
    gx_l2 *l2 = NULL;
    assert_int_equal(gx_l2_new(p, NULL, &l2, &m), GX_ECONFIG);
    assert_non_null(strstr(m.text, "required by the model"));
    gx_profile_free(p);
    /* every valid reference profile is accepted by the model */
    const char *paths[] = {"profiles/seed-ampere-6mb.json", "profiles/hopper-like.json"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(gx_profile_load(gx_test_path(paths[i]), &p, &m), GX_OK);
        assert_int_equal(gx_profile_check_model(p, &m), GX_OK);
        assert_int_equal(gx_l2_new(p, NULL, &l2, &m), GX_OK);
        gx_l2_free(l2);
        gx_profile_free(p);
    }
}

/* ---- compare: the tlb rows follow the table ---- */

static void test_compare_tlb_rows(void **state)
{
    (void)state;
    json_t *root = base_doc();
    gx_msg m;
    int rc;
    gx_profile *t = parse_doc(root, &m, &rc);
    assert_int_equal(rc, GX_OK);
    gx_profile *f = gx_profile_clone(t);
    assert_non_null(f);
    f->tlb.levels[1].entries = 2048;
    f->tlb.levels[2].hit_latency_cycles = 151; /* within 5% */
    strcpy(f->tlb.walker.pwc.policy, "fifo");
    f->tlb.n_levels = 2;
    gx_compare_result r;
    assert_int_equal(gx_compare(t, f, NULL, &r, &m), GX_OK);
    const gx_compare_row *row = gx_compare_find(&r, "tlb.levels[1].entries");
    assert_non_null(row);
    assert_int_equal(row->verdict, GX_VERDICT_MISMATCH);
    assert_string_equal(row->truth, "4096");
    assert_string_equal(row->found, "2048");
    row = gx_compare_find(&r, "tlb.levels[2].entries"); /* found has two levels */
    assert_non_null(row);
    assert_int_equal(row->verdict, GX_VERDICT_MISSING);
    row = gx_compare_find(&r, "tlb.levels[0].sharing");
    assert_true(row && row->verdict == GX_VERDICT_MATCH);
    row = gx_compare_find(&r, "tlb.walker.pwc.policy");
    assert_true(row && row->verdict == GX_VERDICT_MISMATCH);
    row = gx_compare_find(&r, "tlb.page_table.page_sizes");
    assert_true(row && row->verdict == GX_VERDICT_MATCH);
    assert_string_equal(row->truth, "4096,65536,2097152,1073741824,549755813888");
    assert_null(gx_compare_find(&r, "tlb.page_table.regions")); /* not compared */
    /* the l2 rows come first, in their fixed order */
    assert_string_equal(r.rows[0].field, "l2.line_bytes");
    int first_tlb = -1;
    for (int i = 0; i < r.n_rows; i++)
        if (strncmp(r.rows[i].field, "tlb.", 4) == 0 && first_tlb < 0)
            first_tlb = i;
    assert_true(first_tlb > 0);
    assert_string_equal(r.rows[first_tlb - 1].field, "l2.hash.set");
    /* a found profile without translation: every tlb row missing */
    f->tlb.present = 0;
    assert_int_equal(gx_compare(t, f, NULL, &r, &m), GX_OK);
    row = gx_compare_find(&r, "tlb.walker.fetch_bytes");
    assert_true(row && row->verdict == GX_VERDICT_MISSING);
    /* a truth without translation: no tlb rows at all */
    assert_int_equal(gx_compare(f, t, NULL, &r, &m), GX_OK);
    for (int i = 0; i < r.n_rows; i++)
        assert_true(strncmp(r.rows[i].field, "tlb.", 4) != 0);
    gx_profile_free(f);
    gx_profile_free(t);
    json_decref(root);
}

/* ---- the doc lists every row as the table has it ---- */

static void doc_line(const gx_field *f, char *buf, size_t cap)
{
    static const char *const tn[] = {"object", "object", "array", "u32", "u64", "number",
                                     "bool", "string", "enum", "array of u64", "array of u32",
                                     "object"};
    char name[160], range[128] = "", def[48] = "";
    gx_field_doc_name(f, name, sizeof name);
    if (f->type == GX_FT_U32 || f->type == GX_FT_U64 || f->type == GX_FT_DBL ||
        f->type == GX_FT_LIST_U32 || f->type == GX_FT_LIST_U64)
        gx_field_range_text(f, range, sizeof range);
    else if (f->type == GX_FT_ENUM)
        gx_field_names_text(f, range, sizeof range);
    else if (f->type == GX_FT_STR && (f->flags & GX_FF_POLICY))
        snprintf(range, sizeof range, "a policy spec");
    else if (f->type == GX_FT_ARR || f->type == GX_FT_LIST_U32 || f->type == GX_FT_LIST_U64)
        snprintf(range, sizeof range, "at most %d entries", f->max_count);
    if (f->type == GX_FT_ARR)
        snprintf(range, sizeof range, "at most %d entries", f->max_count);
    if ((f->type == GX_FT_U32 || f->type == GX_FT_U64) && f->idef)
        snprintf(def, sizeof def, "%" PRIu64, f->idef);
    else if (f->type == GX_FT_DBL && !isnan(f->ddef))
        snprintf(def, sizeof def, "%g", f->ddef);
    const char *need = (f->flags & GX_FF_MODEL) ? "model" : (f->flags & GX_FF_REQ) ? "ref"
                       : (f->flags & GX_FF_ELEM) ? "entry" : "";
    static const char *const cn[] = {"", "exact", "latency", "policy", "own rule"};
    snprintf(buf, cap, "| `%s` | %s | %s | %s | %s | %s | %s | %s |", name, tn[f->type],
             *f->unit ? f->unit : "", range, def[0] ? def : "-", need, cn[f->cmp], f->doc);
}

static void test_doc_lists_every_field(void **state)
{
    (void)state;
    char *doc = gx_test_slurp(gx_test_path("docs/profile-format.md"), NULL);
    assert_non_null(doc);
    size_t n, missing = 0;
    const gx_field *t = gx_fields(&n);
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        doc_line(&t[i], line, sizeof line);
        if (!strstr(doc, line)) {
            fprintf(stderr, "docs/profile-format.md lacks: %s\n", line);
            missing++;
        }
    }
    free(doc);
    assert_int_equal(missing, 0);
}

int main(void)
{
    if (getenv("GX_FIELDS_PRINT")) {
        size_t n;
        const gx_field *t = gx_fields(&n);
        for (size_t i = 0; i < n; i++) {
            char line[1024];
            doc_line(&t[i], line, sizeof line);
            printf("%s\n", line);
        }
        return 0;
    }
    struct CMUnitTest tests[64];
    size_t k = 0;
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_every_field_round_trips);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_tlb_null_and_unknown_members);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_every_field_refuses_bad_values);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_containers_refuse_bad_shapes);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_seed_round_trips_as_u64);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_model_rules_are_validation);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_compare_tlb_rows);
    tests[k++] = (struct CMUnitTest)cmocka_unit_test(test_doc_lists_every_field);
    for (size_t i = 0; i < sizeof XRULES / sizeof XRULES[0]; i++) {
        struct CMUnitTest u = {XRULES[i].name, test_cross_rule, NULL, NULL, (void *)&XRULES[i]};
        tests[k++] = u;
    }
    return _cmocka_run_group_tests("test_fields", tests, k, NULL, NULL);
}
