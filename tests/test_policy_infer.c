/* test_policy_infer.c - the replacement policy (stage 7) on simulated GPUs
 * built from generated profiles with a fixed policy: deterministic ones
 * (lru, plru, fifo, srrip-hp, a qlru variant) agree on >= 99% of accesses,
 * randomized ones (random, plru-rand:0.05) are told apart by their hit
 * rates; the seed card's plru-rand:0.05 with its P estimate and the
 * round-robin figure; "unknown" is never written into the profile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/discover.h"
#include "gpuxray/generate.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"
#include "testutil.h"

static const gx_report_row *row(const gx_report *r, const char *param)
{
    for (int i = 0; i < r->n_rows; i++)
        if (!strcmp(r->rows[i].parameter, param))
            return &r->rows[i];
    return NULL;
}

static gx_profile *discover(const char *path, uint64_t seed, gx_report *rep)
{
    return gx_test_discover(path, "policy", seed, rep);
}

static void identify(const char *policy, uint64_t gen_seed)
{
    gx_generate_opts o;
    gx_generate_opts_default(&o);
    o.policy = policy;
    gx_profile *truth = gx_generate_profile(gen_seed, &o);
    assert_non_null(truth);
    char name[64];
    snprintf(name, sizeof name, "policy-%llu.json", (unsigned long long)gen_seed);
    const char *path = gx_test_tmp(name);
    gx_msg msg;
    assert_int_equal(gx_profile_save(truth, path, &msg), GX_OK);
    gx_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    gx_profile *found = discover(path, 1, rep);
    remove(path);
    const gx_report_row *r = row(rep, "l2.policy");
    assert_non_null(r);
    if (strcmp(found->l2.policy, policy) != 0)
        fail_msg("%s (%u ways): found \"%s\" (%s: %s)", policy, truth->l2.ways, found->l2.policy,
                 r->value, r->method);
    assert_true(gx_profile_confidence(found, "l2.policy") >= 0.9);
    gx_profile_free(truth);
    gx_profile_free(found);
    free(rep);
}

static void test_lru(void **state)
{
    (void)state;
    identify("lru", 4); /* 29 ways */
}

static void test_plru(void **state)
{
    (void)state;
    identify("plru", 6); /* 26 ways: a pruned tree */
}

static void test_fifo(void **state)
{
    (void)state;
    identify("fifo", 5);
}

static void test_srrip_hp(void **state)
{
    (void)state;
    identify("srrip-hp", 3);
}

static void test_qlru(void **state)
{
    (void)state;
    identify("qlru:H11_M1_R0_U0", 4);
}

static void test_random(void **state)
{
    (void)state;
    identify("random", 6);
}

static void test_plru_rand(void **state)
{
    (void)state;
    identify("plru-rand:0.05", 4);
}

static void test_seed_card(void **state)
{
    (void)state;
    gx_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    gx_profile *found = discover(gx_test_path("profiles/seed-ampere-6mb.json"), 1, rep);
    assert_string_equal(found->l2.policy, "plru-rand:0.05");
    const gx_report_row *p = row(rep, "policy parameter P");
    assert_non_null(p);
    double pe = atof(p->value);
    assert_true(pe > 0.0 && pe <= 0.1);
    const gx_report_row *rr = row(rep, "round-robin hit rate");
    assert_non_null(rr);
    assert_true(atof(rr->value) > 90.0); /* W lines fit: nearly every access hits */
    gx_profile_free(found);
    free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru),        cmocka_unit_test(test_plru),
        cmocka_unit_test(test_fifo),       cmocka_unit_test(test_srrip_hp),
        cmocka_unit_test(test_qlru),       cmocka_unit_test(test_random),
        cmocka_unit_test(test_plru_rand),  cmocka_unit_test(test_seed_card),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
