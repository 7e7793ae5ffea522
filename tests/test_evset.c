/* test_evset.c - eviction sets and the associativity (stage 4, evset.c) on
 * simulated GPUs: the seed card gives 16 ways with verified minimal sets
 * within the cost bar (W*ceil(log2 N) + 4W tests per set); the overflow
 * test is exact (W+1 congruent lines overflow, W fit); randomized and
 * pruned-tree policies and a near-far L2 give their ways too; hopper-like
 * (slice and set hashes with many bits above the page) needs slice-guided
 * pools and still gives 16 within the bar; when the first set's pool holds
 * no congruent line beyond those its reduction used, the policy stage grows
 * it and still finds its W more congruent lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/generate.h"
#include "gpuxray/profile.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/target.h"
#include "infer/evset/evset.h"
#include "infer/infer.h"
#include "infer/infer_util.h"
#include "testutil.h"
#include "gpuxray/bits.h"

typedef struct fixture {
    gx_target *t;
    gx_infer *ctx;
    gx_report rep;
    gx_msg msg;
} fixture;

static void open_spec(fixture *f, const char *spec, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    int rc = gx_target_open(spec, seed, &f->t, &f->msg);
    if (rc != GX_OK)
        fail_msg("cannot open %s: %s", spec, f->msg.text);
    f->ctx = calloc(1, sizeof *f->ctx);
    assert_non_null(f->ctx);
    gx_infer *c = f->ctx;
    c->t = f->t;
    c->info = gx_target_get_info(f->t);
    gx_rng_seed(&c->rng, seed);
    c->msg = &f->msg;
    c->report = &f->rep;
    c->levels.hit_latency = c->levels.miss_latency = NAN;
    c->out = gx_profile_new();
    assert_non_null(c->out);
}

/* A generated profile (fixed policy) saved for the sim target. */
static void open_generated(fixture *f, uint64_t gen_seed, const char *policy, uint64_t seed,
                           uint32_t *ways)
{
    gx_generate_opts o;
    gx_generate_opts_default(&o);
    o.policy = policy;
    gx_profile *p = gx_generate_profile(gen_seed, &o);
    assert_non_null(p);
    *ways = p->l2.ways;
    char name[64];
    snprintf(name, sizeof name, "evset-%llu.json", (unsigned long long)gen_seed);
    const char *path = gx_test_tmp(name);
    gx_msg m;
    assert_int_equal(gx_profile_save(p, path, &m), GX_OK);
    gx_profile_free(p);
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", path);
    open_spec(f, spec, seed);
    remove(path);
}

static void close_fixture(fixture *f)
{
    for (int i = 0; i < f->ctx->ways.n_evsets; i++) {
        free(f->ctx->ways.evsets[i].lines);
        free(f->ctx->ways.evsets[i].pool);
    }
    gx_hash_clear(&f->ctx->slices.hash);
    gx_hash_clear(&f->ctx->sets.hash);
    gx_profile_free(f->ctx->out);
    free(f->ctx);
    gx_target_close(f->t);
}

/* timer, levels, line: what the ways stage builds on */
static void prerequisites(fixture *f)
{
    assert_int_equal(gx_stage_timer(f->ctx), GX_OK);
    assert_int_equal(gx_stage_levels(f->ctx), GX_OK);
    if (gx_stage_line(f->ctx) != GX_OK || !f->ctx->line.line_bytes)
        f->ctx->line.line_bytes = 128;
}

static void test_seed_ways(void **state)
{
    (void)state;
    fixture f;
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", gx_test_path("profiles/seed-ampere-6mb.json"));
    open_spec(&f, spec, 3);
    prerequisites(&f);
    assert_int_equal(gx_stage_ways(f.ctx), GX_OK);
    assert_int_equal(f.ctx->ways.ways, 16);
    assert_int_equal(f.ctx->out->l2.ways, 16);
    assert_true(gx_profile_confidence(f.ctx->out, "l2.ways") >= 0.99);
    assert_true(f.ctx->ways.n_evsets >= 4);
    assert_int_equal(f.ctx->ways.evsets_generation, f.ctx->arena.generation);
    /* every kept set, checked again independently: minimal and evicting */
    gx_evx ev;
    assert_int_equal(gx_evx_init(&ev, f.ctx, 0), GX_OK);
    for (int i = 0; i < f.ctx->ways.n_evsets; i++) {
        const gx_evset *e = &f.ctx->ways.evsets[i];
        assert_int_equal(e->n, 16);
        int ok = 0;
        assert_int_equal(gx_evx_verify(&ev, e->target, e->lines, e->n, &ok, NULL), GX_OK);
        assert_true(ok);
    }
    gx_evx_free(&ev);
    close_fixture(&f);
}

/* One reduction from a same-offset pool, its test count against the bar. */
static void test_seed_cost_bar(void **state)
{
    (void)state;
    fixture f;
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", gx_test_path("profiles/seed-ampere-6mb.json"));
    open_spec(&f, spec, 5);
    prerequisites(&f);
    uint64_t page = f.ctx->info->page_bytes;
    size_t npages = 1024;
    assert_int_equal(infer_arena_ensure(f.ctx, npages * page), GX_OK);
    uint64_t *pool = malloc(npages * sizeof *pool);
    assert_non_null(pool);
    gx_evx ev;
    assert_int_equal(gx_evx_init(&ev, f.ctx, 0), GX_OK);
    int sets = gx_test_sanitizer() ? 1 : 3;
    for (int s = 0; s < sets; s++) {
        uint64_t off = (uint64_t)(97 + 1000 * s) * 128;
        size_t n = 0;
        for (size_t p = 1; p < npages; p++)
            pool[n++] = p * page + off;
        gx_rng_shuffle_u64(&f.ctx->rng, pool, n);
        gx_evx_result res;
        assert_int_equal(gx_evx_find(&ev, off, pool, n, &res), GX_OK);
        assert_int_equal(res.n, 16);
        assert_true(res.verified);
        uint64_t bar = (uint64_t)res.n * (uint64_t)gx_log2_ceil_u64(n) + 4ull * res.n;
        if (res.tests > bar)
            fail_msg("set %d: %llu tests > bar %llu", s, (unsigned long long)res.tests,
                     (unsigned long long)bar);
    }
    /* a reduction over its budget gives up, unsure, within about one step of it;
     * with the budget of a found set it is found again */
    {
        uint64_t off = 4242 * 128;
        size_t n = 0;
        for (size_t p = 1; p < npages; p++)
            pool[n++] = p * page + off;
        gx_evx_result full, cut;
        assert_int_equal(gx_evx_find(&ev, off, pool, n, &full), GX_OK);
        assert_false(full.over_budget);
        ev.budget_accesses = full.accesses / 8;
        assert_int_equal(gx_evx_find(&ev, off, pool, n, &cut), GX_EUNSURE);
        assert_true(cut.over_budget);
        assert_true(cut.accesses < full.accesses);
        ev.budget_accesses = 16 * full.accesses;
        assert_int_equal(gx_evx_find(&ev, off, pool, n, &cut), GX_OK);
        assert_int_equal(cut.n, 16);
        ev.budget_accesses = 0;
    }
    /* an empty pool is refused, a pool without congruent lines is unsure */
    gx_evx_result res;
    assert_int_equal(gx_evx_find(&ev, 0, pool, 0, &res), GX_EINVAL);
    uint64_t lonely[4] = {page + 128, 2 * page + 256, 3 * page + 384, 4 * page + 512};
    assert_int_equal(gx_evx_find(&ev, 0, lonely, 4, &res), GX_EUNSURE);
    gx_evx_free(&ev);
    free(pool);
    close_fixture(&f);
}

/* The overflow test is exact: target + W congruent lines overflow; with one
 * line fewer they fit; the probe sees the congruent line evicted. */
static void test_overflow_exact(void **state)
{
    (void)state;
    fixture f;
    uint32_t w = 0;
    open_generated(&f, 5, "lru", 1, &w);
    prerequisites(&f);
    assert_int_equal(gx_stage_ways(f.ctx), GX_OK);
    assert_int_equal(f.ctx->ways.ways, w);
    const gx_evset *e = &f.ctx->ways.evsets[0];
    gx_evx ev;
    assert_int_equal(gx_evx_init(&ev, f.ctx, 0), GX_OK);
    double hit = 0;
    assert_int_equal(gx_evx_hit_latency(&ev, e->target, 5, &hit), GX_OK);
    int ovf = -1;
    assert_int_equal(gx_evx_overflows(&ev, e->target, hit, e->lines, NULL, e->n, 0, &ovf, NULL),
                     GX_OK);
    assert_int_equal(ovf, 1);
    assert_int_equal(
        gx_evx_overflows(&ev, e->target, hit, e->lines, NULL, e->n - 1, 0, &ovf, NULL), GX_OK);
    assert_int_equal(ovf, 0);
    /* the target is congruent with its set; a line of another offset is not */
    uint64_t probe[2] = {e->target, e->target ^ (uint64_t)(64 * 128)};
    int evicted[2] = {-1, -1};
    assert_int_equal(gx_evx_probe(&ev, e->lines, e->n, 2 * e->n + 4, probe, 1, evicted), GX_OK);
    assert_int_equal(evicted[0], 1);
    gx_evx_free(&ev);
    close_fixture(&f);
}

/* Soft boundaries: random replacement, a pruned PLRU tree (non-power-of-two
 * ways), and a near-far L2 (the near partition's ways). */
static void run_generated(uint64_t gen_seed, const char *policy)
{
    fixture f;
    uint32_t w = 0;
    open_generated(&f, gen_seed, policy, 2, &w);
    prerequisites(&f);
    int rc = gx_stage_ways(f.ctx);
    if (rc != GX_OK)
        fail_msg("seed %llu (%s): %s", (unsigned long long)gen_seed, policy, f.msg.text);
    if (f.ctx->ways.ways != w)
        fail_msg("seed %llu (%s): found %u ways, truth %u", (unsigned long long)gen_seed, policy,
                 f.ctx->ways.ways, w);
    close_fixture(&f);
}

static void test_random_policy(void **state)
{
    (void)state;
    run_generated(56, "random");
}

static void test_pruned_plru(void **state)
{
    (void)state;
    run_generated(2, "plru"); /* 23 ways */
}

static void test_near_far(void **state)
{
    (void)state;
    run_generated(22, "srrip-fp"); /* near-far, 32 ways per near set */
}

/* hopper-like: same-offset pools never evict (about 1 line in 1800 is
 * congruent); the stage switches to pools of lines predicted in the
 * target's slice and finds 16 ways, every set within the cost bar. */
static void test_hopper_guided(void **state)
{
    (void)state;
    if (gx_test_sanitizer()) {
        skip(); /* ~0.2 G simulated accesses: too slow under the sanitizers */
        return;
    }
    fixture f;
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", gx_test_path("profiles/hopper-like.json"));
    open_spec(&f, spec, 7);
    prerequisites(&f);
    int rc = gx_stage_ways(f.ctx);
    if (rc != GX_OK)
        fail_msg("hopper-like ways: %s", f.msg.text);
    assert_int_equal(f.ctx->ways.ways, 16);
    assert_int_equal(f.ctx->out->l2.ways, 16);
    assert_true(gx_profile_confidence(f.ctx->out, "l2.ways") >= 0.99);
    assert_true(f.ctx->ways.n_evsets >= 3);
    int guided = 0, within = 1;
    for (int i = 0; i < f.rep.n_rows; i++) {
        const gx_report_row *r = &f.rep.rows[i];
        if (strcmp(r->parameter, "ways pool") == 0)
            guided = 1;
        unsigned long long tests = 0, bar = 0;
        if (strcmp(r->parameter, "eviction tests per set") == 0 &&
            sscanf(r->value, "%llu (bar %llu)", &tests, &bar) == 2 && tests > bar)
            within = 0;
    }
    assert_true(guided);
    assert_true(within);
    /* a kept set, checked again independently: minimal and evicting */
    gx_evx ev;
    assert_int_equal(gx_evx_init(&ev, f.ctx, 0), GX_OK);
    const gx_evset *e = &f.ctx->ways.evsets[0];
    int ok = 0;
    assert_int_equal(gx_evx_verify(&ev, e->target, e->lines, e->n, &ok, NULL), GX_OK);
    assert_true(ok);
    gx_evx_free(&ev);
    close_fixture(&f);
}

/* The policy stage needs W lines congruent with a set beyond the W its
 * reduction took. A pool cut right after its evicting prefix holds no more
 * (the prefix ends at the W-th congruent line), and no other set is left
 * to fall back on: the stage must grow the pool by further pages of the
 * target's slice class and finish. */
static void test_policy_dry_pool(void **state)
{
    (void)state;
    if (gx_test_sanitizer()) {
        skip(); /* hopper-like: too slow under the sanitizers */
        return;
    }
    fixture f;
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", gx_test_path("profiles/hopper-like.json"));
    open_spec(&f, spec, 11);
    prerequisites(&f);
    assert_int_equal(gx_ways_arena_prepare(f.ctx), GX_OK); /* as the pipeline: before slices */
    if (gx_stage_slices(f.ctx) != GX_OK)
        fail_msg("hopper-like slices: %s", f.msg.text);
    if (gx_stage_ways(f.ctx) != GX_OK)
        fail_msg("hopper-like ways: %s", f.msg.text);
    gx_evset *e = &f.ctx->ways.evsets[0];
    assert_non_null(e->pool);
    assert_true(e->pool_used > 0 && e->pool_used <= e->n_pool);
    e->n_pool = e->pool_used;
    for (int i = 1; i < f.ctx->ways.n_evsets; i++) {
        free(f.ctx->ways.evsets[i].lines);
        free(f.ctx->ways.evsets[i].pool);
    }
    f.ctx->ways.n_evsets = 1;
    size_t before = e->n_pool;
    int rc = gx_stage_policy(f.ctx);
    if (rc != GX_OK)
        fail_msg("policy on a dry pool: %s", f.msg.text);
    assert_true(f.ctx->ways.evsets[0].n_pool > before);
    gx_slicepred_free(f.ctx->slices.pred);
    f.ctx->slices.pred = NULL;
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_ways),
        cmocka_unit_test(test_seed_cost_bar),
        cmocka_unit_test(test_overflow_exact),
        cmocka_unit_test(test_random_policy),
        cmocka_unit_test(test_pruned_plru),
        cmocka_unit_test(test_near_far),
        cmocka_unit_test(test_hopper_guided),
        cmocka_unit_test(test_policy_dry_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
