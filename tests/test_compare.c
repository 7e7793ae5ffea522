/* test_compare.c - gx_compare: identical profiles match; relabelled hashes
 * (permuted table, swapped or recombined masks, masks cut to the observable
 * bits) match; a genuinely different hash, a wrong way count, a latency out
 * of tolerance mismatch; an absent field is reported missing; fields absent
 * in the truth are skipped. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/compare.h"
#include "gpuxray/generate.h"
#include "gpuxray/profile.h"

static gx_profile *seed(void)
{
    gx_profile *p = NULL;
    gx_msg m;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, &m),
                     GX_OK);
    return p;
}

static gx_compare_result run(const gx_profile *t, const gx_profile *f)
{
    gx_compare_result r;
    gx_msg m;
    assert_int_equal(gx_compare(t, f, NULL, &r, &m), GX_OK);
    return r;
}

static gx_verdict verdict(const gx_compare_result *r, const char *field)
{
    const gx_compare_row *w = gx_compare_find(r, field);
    if (!w)
        fail_msg("no row for %s", field);
    return w->verdict;
}

static void test_identical_match(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    gx_compare_result r = run(t, f);
    assert_int_equal(r.n_rows, 14);
    assert_int_equal(r.n_match, 14);
    assert_int_equal(r.n_mismatch + r.n_missing, 0);
    assert_true(gx_compare_find(&r, "l2.hash.slice")->disagreement == 0);
    /* near/far latencies are absent in the (uniform) truth: no row */
    assert_null(gx_compare_find(&r, "l2.latency_cycles.near_hit"));
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_relabelled_slice_masks_match(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    gx_hash_fn *h = &f->l2.slice_hash;
    /* swap two masks, recombine another (a change of basis), and cut the
     * partition mask to the observable bits 7..20 as discovery would */
    uint64_t x = h->masks[0];
    h->masks[0] = h->masks[3];
    h->masks[3] = x;
    h->masks[1] ^= h->masks[2];
    h->masks[5] &= (1u << 21) - 1;
    strcpy(f->provenance.kind, "measured");
    gx_msg m;
    assert_int_equal(gx_profile_validate(f, &m), GX_OK);
    gx_compare_result r = run(t, f);
    assert_int_equal(verdict(&r, "l2.hash.slice"), GX_VERDICT_MATCH);
    assert_int_equal(r.n_match, r.n_rows);
    gx_profile_free(t);
    gx_profile_free(f);
}

/* A generated profile with a table-based slice hash (non-power-of-two). */
static gx_profile *table_profile(int want_high_bits)
{
    for (uint64_t s = 1; s < 5000; s++) {
        gx_profile *p = gx_generate_profile(s, NULL);
        assert_non_null(p);
        int high = 0;
        for (int i = 0; i < p->l2.slice_hash.n_masks; i++)
            high |= (p->l2.slice_hash.masks[i] >> 21) != 0;
        if (p->l2.slice_hash.table && high == want_high_bits && p->l2.slices > 4)
            return p;
        gx_profile_free(p);
    }
    fail_msg("no generated profile with a table");
    return NULL;
}

static void test_permuted_table_matches(void **state)
{
    (void)state;
    gx_profile *t = table_profile(0), *f = gx_profile_clone(t);
    uint32_t s = t->l2.slices;
    size_t n = (size_t)1 << f->l2.slice_hash.n_masks;
    for (size_t i = 0; i < n; i++) /* slice ids relabelled: id -> (id + 1) mod s, reversed */
        f->l2.slice_hash.table[i] = s - 1 - (f->l2.slice_hash.table[i] + 1) % s;
    gx_compare_result r = run(t, f);
    assert_int_equal(verdict(&r, "l2.hash.slice"), GX_VERDICT_MATCH);
    /* but a table with two entries swapped between different slices differs */
    uint32_t *tb = f->l2.slice_hash.table;
    size_t j = 1;
    while (tb[j] == tb[0])
        j++;
    uint32_t x = tb[0];
    tb[0] = tb[j];
    tb[j] = x;
    r = run(t, f);
    assert_int_equal(verdict(&r, "l2.hash.slice"), GX_VERDICT_MISMATCH);
    assert_true(gx_compare_find(&r, "l2.hash.slice")->disagreement > 0);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_table_with_unobservable_bits(void **state)
{
    (void)state;
    /* the found hash sees only bits up to 20: the bits above act as a
     * per-page XOR offset, which compare searches for a table hash */
    gx_profile *t = table_profile(1), *f = gx_profile_clone(t);
    for (int i = 0; i < f->l2.slice_hash.n_masks; i++)
        f->l2.slice_hash.masks[i] &= (1u << 21) - 1;
    strcpy(f->provenance.kind, "measured");
    gx_compare_result r = run(t, f);
    const gx_compare_row *w = gx_compare_find(&r, "l2.hash.slice");
    assert_int_equal(w->verdict, GX_VERDICT_MATCH);
    assert_non_null(strstr(w->tolerance, "per-page offset"));
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_different_hash_mismatch(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    f->l2.slice_hash.masks[2] = 0x1100; /* bits 8 and 12 instead of 9 and 10 */
    gx_compare_result r = run(t, f);
    const gx_compare_row *w = gx_compare_find(&r, "l2.hash.slice");
    assert_int_equal(w->verdict, GX_VERDICT_MISMATCH);
    assert_true(w->disagreement > 0.1);
    assert_int_equal(verdict(&r, "l2.hash.set"), GX_VERDICT_MATCH); /* independent */
    /* a set function with the bit order changed is a different modulo */
    f->l2.set_hash.masks[0] = 0x1000000;
    f->l2.set_hash.masks[11] = 0x2000;
    r = run(t, f);
    assert_int_equal(verdict(&r, "l2.hash.set"), GX_VERDICT_MISMATCH);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_ways_off_by_one(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    f->l2.ways = 15;
    gx_compare_result r = run(t, f);
    assert_int_equal(verdict(&r, "l2.ways"), GX_VERDICT_MISMATCH);
    assert_int_equal(r.n_mismatch, 1);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_missing_reported(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    f->l2.ways = 0;
    f->l2.policy[0] = '\0';
    gx_hash_clear(&f->l2.set_hash);
    f->memory.dram_latency_cycles = NAN;
    gx_compare_result r = run(t, f);
    assert_int_equal(verdict(&r, "l2.ways"), GX_VERDICT_MISSING);
    assert_int_equal(verdict(&r, "l2.policy"), GX_VERDICT_MISSING);
    assert_int_equal(verdict(&r, "l2.hash.set"), GX_VERDICT_MISSING);
    assert_int_equal(verdict(&r, "memory.dram_latency_cycles"), GX_VERDICT_MISSING);
    assert_int_equal(r.n_missing, 4);
    /* an empty measured profile: everything missing */
    gx_profile *e = gx_profile_new();
    r = run(t, e);
    assert_int_equal(r.n_missing, r.n_rows);
    gx_profile_free(e);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_truth_absent_fields_skipped(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    strcpy(t->provenance.kind, "measured");
    t->l2.ways = 0;
    t->l2.capacity_bytes = 0;
    gx_compare_result r = run(t, f);
    assert_null(gx_compare_find(&r, "l2.ways"));
    assert_null(gx_compare_find(&r, "l2.capacity_bytes"));
    assert_int_equal(r.n_rows, 12);
    assert_int_equal(r.n_match, 12);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_tolerances(void **state)
{
    (void)state;
    gx_profile *t = seed(), *f = gx_profile_clone(t);
    f->l2.hit_cycles = 210 * 1.04;
    f->memory.dram_latency_cycles = 430 * 1.06;
    strcpy(f->l2.policy, "plru-rand:0.06");
    f->l2.levels[0].capacity_bytes = 6291456 + 6291456 / 10;
    gx_compare_result r = run(t, f);
    assert_int_equal(verdict(&r, "l2.latency_cycles.hit"), GX_VERDICT_MATCH);
    assert_int_equal(verdict(&r, "memory.dram_latency_cycles"), GX_VERDICT_MISMATCH);
    assert_int_equal(verdict(&r, "l2.policy"), GX_VERDICT_MATCH);
    assert_non_null(strstr(gx_compare_find(&r, "l2.policy")->tolerance, "0.03"));
    assert_non_null(strstr(gx_compare_find(&r, "l2.latency_cycles.hit")->tolerance, "5%"));
    assert_int_equal(verdict(&r, "l2.levels_from_one_sm"), GX_VERDICT_MATCH);
    strcpy(f->l2.policy, "plru-rand:0.25");
    f->l2.levels[0].capacity_bytes = 6291456 / 2;
    r = run(t, f);
    assert_int_equal(verdict(&r, "l2.policy"), GX_VERDICT_MISMATCH);
    assert_int_equal(verdict(&r, "l2.levels_from_one_sm"), GX_VERDICT_MISMATCH);
    strcpy(f->l2.policy, "plru");
    f->l2.topology = GX_TOPO_NEAR_FAR;
    r = run(t, f);
    assert_int_equal(verdict(&r, "l2.policy"), GX_VERDICT_MISMATCH);
    assert_int_equal(verdict(&r, "l2.topology"), GX_VERDICT_MISMATCH);
    gx_profile_free(t);
    gx_profile_free(f);
}

static void test_generated_self_compare(void **state)
{
    (void)state;
    int n = gx_test_sanitizer() ? 10 : 40;
    for (uint64_t s = 1; s <= (uint64_t)n; s++) {
        gx_profile *t = gx_generate_profile(s, NULL), *f = gx_profile_clone(t);
        gx_compare_result r = run(t, f);
        if (r.n_match != r.n_rows)
            fprintf(stderr, "seed %llu: %d/%d\n", (unsigned long long)s, r.n_match, r.n_rows);
        assert_int_equal(r.n_match, r.n_rows);
        gx_profile_free(t);
        gx_profile_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_match),
        cmocka_unit_test(test_relabelled_slice_masks_match),
        cmocka_unit_test(test_permuted_table_matches),
        cmocka_unit_test(test_table_with_unobservable_bits),
        cmocka_unit_test(test_different_hash_mismatch),
        cmocka_unit_test(test_ways_off_by_one),
        cmocka_unit_test(test_missing_reported),
        cmocka_unit_test(test_truth_absent_fields_skipped),
        cmocka_unit_test(test_tolerances),
        cmocka_unit_test(test_generated_self_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
