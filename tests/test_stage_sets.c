/* test_stage_sets.c - the set index (stage 6) through the whole pipeline on
 * simulated GPUs: the seed card's 48 sets per slice as address bits mod 48
 * with the capacity cross-check (slices x sets x ways x line = 6 MiB); an
 * XOR set index; an XOR set index under a table slice hash (the masks must
 * be exact there); a modulo set index under a table slice hash; every
 * recovered function equal to the truth as a partition (gx_compare). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/compare.h"
#include "gpuxray/discover.h"
#include "gpuxray/generate.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"
#include "testutil.h"

static gx_profile *discover(const char *profile_path, uint64_t seed, gx_report *rep)
{
    return gx_test_discover(profile_path, "sets", seed, rep);
}

static void expect_field(const gx_profile *truth, const gx_profile *found, const char *field)
{
    gx_compare_result cr;
    gx_msg msg;
    assert_int_equal(gx_compare(truth, found, NULL, &cr, &msg), GX_OK);
    const gx_compare_row *row = gx_compare_find(&cr, field);
    assert_non_null(row);
    if (row->verdict != GX_VERDICT_MATCH)
        fail_msg("%s: truth %s, found %s (%s %s)", field, row->truth, row->found,
                 gx_verdict_name(row->verdict), row->tolerance);
}

static const gx_report_row *row(const gx_report *r, const char *param)
{
    for (int i = 0; i < r->n_rows; i++)
        if (!strcmp(r->rows[i].parameter, param))
            return &r->rows[i];
    return NULL;
}

static void test_seed_modulo(void **state)
{
    (void)state;
    gx_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    const char *path = gx_test_path("profiles/seed-ampere-6mb.json");
    gx_profile *found = discover(path, 1, rep);
    assert_int_equal(found->l2.sets_per_slice, 48);
    assert_true(found->l2.set_hash.present);
    assert_int_equal(found->l2.set_hash.modulo, 48);
    /* cross-check: the geometry reproduces the capacity */
    assert_int_equal(found->l2.capacity_bytes, 6291456);
    const gx_report_row *r = row(rep, "l2.sets_per_slice");
    assert_non_null(r);
    assert_non_null(strstr(r->method, "agrees"));
    gx_profile *truth = NULL;
    gx_msg msg;
    assert_int_equal(gx_profile_load(path, &truth, &msg), GX_OK);
    expect_field(truth, found, "l2.sets_per_slice");
    expect_field(truth, found, "l2.hash.set");
    expect_field(truth, found, "l2.capacity_bytes");
    gx_profile_free(truth);
    gx_profile_free(found);
    free(rep);
}

static void run_generated_with(uint64_t gen_seed, uint64_t disc_seed)
{
    gx_profile *truth = gx_generate_profile(gen_seed, NULL);
    assert_non_null(truth);
    char name[64];
    snprintf(name, sizeof name, "sets-%llu.json", (unsigned long long)gen_seed);
    const char *path = gx_test_tmp(name);
    gx_msg msg;
    assert_int_equal(gx_profile_save(truth, path, &msg), GX_OK);
    gx_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    gx_profile *found = discover(path, disc_seed, rep);
    remove(path);
    expect_field(truth, found, "l2.sets_per_slice");
    expect_field(truth, found, "l2.hash.set");
    assert_true(gx_profile_confidence(found, "l2.hash.set") >= 0.9);
    gx_profile_free(truth);
    gx_profile_free(found);
    free(rep);
}

static void run_generated(uint64_t gen_seed)
{
    run_generated_with(gen_seed, 1);
}

/* 32 linear slices, 7 sets (5 masks mod 7); under discovery seed 57 the
 * target's slice bits are zero, so the fit's constant is fixed by its
 * coset: the mask solve asking for the fitted constant on T had no
 * solution and the exact partition came out as "no fit" */
static void test_modulo_target_in_span(void **state)
{
    (void)state;
    run_generated_with(57, 57);
}

/* 74 slices through a table, 6 sets (5 masks mod 6): one slice covers
 * several slice cosets, so the fit from T's coset is lifted with eviction
 * sets reduced inside other slices and accepted only after a check across
 * cosets (the fitted frame differed from the truth by bits 1 and 4 times a
 * functional invisible in T's coset) */
static void test_modulo_table_slices(void **state)
{
    (void)state;
    run_generated(47);
}

/* 16 slices (XOR), 64 sets (XOR) */
static void test_xor_sets(void **state)
{
    (void)state;
    run_generated(21);
}

/* 102 slices through a table: the set masks are pinned by page sweeps */
static void test_xor_sets_table_slices(void **state)
{
    (void)state;
    run_generated(1);
}

/* 42 slices through a table, XOR sets: lowest-weight masks from T's slice
 * coset alone were off by slice masks (39% of lines in the wrong set, at
 * 0.95); the cross-coset congruences of the page sweeps pin them */
static void test_xor_sets_table_cross_coset(void **state)
{
    (void)state;
    run_generated(38);
}

/* 62 slices through a table, 21 ways, XOR sets: a page holds fewer than W
 * lines congruent with T and the ways stage's sets reached slice rank 4 of
 * 7; E0 (W lines of T's absolute slice coset, from pages the slices
 * stage's predictor identified) moved into other slices gives the
 * cross-coset congruences */
static void test_xor_sets_table_many_ways(void **state)
{
    (void)state;
    run_generated_with(74, 74);
}

/* 123 slices through a table, 5 sets (5 masks mod 5): T's congruent lines
 * left 2 candidates for the page's unobservable slice part, so no line of
 * another coset was in T's slice under both and nothing could be checked
 * across cosets; the predictor's identification of the page pins it */
static void test_modulo_table_pinned_page(void **state)
{
    (void)state;
    run_generated_with(86, 86);
}

/* 1 slice, 118 sets: T's class (4 values) is closed under 7 differences,
 * 2 of which flip value bits, on every measurement of T; the last
 * measurement uses another target */
static void test_modulo_other_target(void **state)
{
    (void)state;
    run_generated_with(122, 122);
}

/* 2 partitions (near-far) of 1 slice, 137 sets over 2^15 points: T's
 * class held 18 false positives of 258, so no difference kept all of it
 * and the free bits were never factored ("too many to classify"); the
 * factoring counts directions that keep 80% of the class */
static void test_modulo_stray_class(void **state)
{
    (void)state;
    run_generated_with(130, 130);
}

/* 1 slice, 1144 sets (13 masks) over 2^15 points: a class of 28 members
 * was too small to factor the free bits (it needed 32) */
static void test_modulo_small_class_factored(void **state)
{
    (void)state;
    run_generated_with(2117, 2117);
}

/* Linear slice hashes, modulo sets: the lift of each slice direction kept
 * its 4 best xors only, and the right one was cut off; the lifts' tie-break
 * allowed 10% wrong answers. Seed 2054: one value bit off by a slice mask
 * in half the slices (2.6% of lines), seed 1043: 9% of lines; both came out
 * at 0.95 (the verification's random points held 1 to 6 congruent ones) */
static void test_modulo_linear_lift(void **state)
{
    (void)state;
    run_generated_with(2054, 2054);
    run_generated_with(1043, 1043);
}

/* Whatever comes out is either right or flagged (never a confident wrong
 * set function): 19 ways under a 109-slice table (too few congruent lines
 * per page to move a set; recovered through E0 since QA 5), a modulo
 * set index under a table, and 12 sets mod under 128 linear slices whose
 * fitted frame explains no other coset (seed 45). */
static void test_flagged_or_right(void **state)
{
    (void)state;
    const uint64_t seeds[] = {5, 14, 45};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        gx_profile *truth = gx_generate_profile(seeds[i], NULL);
        assert_non_null(truth);
        char name[64];
        snprintf(name, sizeof name, "sets-f%llu.json", (unsigned long long)seeds[i]);
        const char *path = gx_test_tmp(name);
        gx_msg msg;
        assert_int_equal(gx_profile_save(truth, path, &msg), GX_OK);
        gx_report *rep = calloc(1, sizeof *rep);
        assert_non_null(rep);
        gx_profile *found = discover(path, 1, rep);
        remove(path);
        gx_compare_result cr;
        assert_int_equal(gx_compare(truth, found, NULL, &cr, &msg), GX_OK);
        const gx_compare_row *r = gx_compare_find(&cr, "l2.hash.set");
        assert_non_null(r);
        if (r->verdict != GX_VERDICT_MATCH) {
            assert_false(found->l2.set_hash.present);
            const gx_report_row *rr = row(rep, "l2.hash.set");
            assert_non_null(rr);
            assert_false(rr->in_profile);
            assert_true(rr->confidence < 0.9);
        }
        gx_profile_free(truth);
        gx_profile_free(found);
        free(rep);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_modulo),
        cmocka_unit_test(test_xor_sets),
        cmocka_unit_test(test_xor_sets_table_slices),
        cmocka_unit_test(test_xor_sets_table_cross_coset),
        cmocka_unit_test(test_flagged_or_right),
        cmocka_unit_test(test_modulo_target_in_span),
        cmocka_unit_test(test_modulo_table_slices),
        cmocka_unit_test(test_xor_sets_table_many_ways),
        cmocka_unit_test(test_modulo_table_pinned_page),
        cmocka_unit_test(test_modulo_other_target),
        cmocka_unit_test(test_modulo_stray_class),
        cmocka_unit_test(test_modulo_small_class_factored),
        cmocka_unit_test(test_modulo_linear_lift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
