/* test_tsim_par.c - the split trace run (tsimpar.h) through the library:
 * the exact fixed-point total (order-independent, negative and huge
 * latencies), threads (records and column batches: a pipeline, split slices)
 * and merged in-memory partials equal to one thread on
 * a uniform and a near-far profile with a deterministic policy, and the
 * runs that must not be split (randomized policy, noise, translation). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/profile.h"
#include "gpuxray/trace.h"
#include "gpuxray/tsimpar.h"
#include "testutil.h"
#include "trace/tsim_internal.h"

/* The fixed-point total adds the same in any order, signed and past 2^31. */
static void test_cyc_sum_order(void **state)
{
    (void)state;
    const double v[] = {210.25, 0.1, 3.0e-7, 4.5e9, -17.75, 1.0 / 3.0, 430.0, 2.0e12, 55.5};
    const int n = (int)(sizeof v / sizeof *v);
    gx_cyc_sum fwd = {0}, back = {0}, halves = {0}, h2 = {0};
    for (int i = 0; i < n; i++)
        gx_cyc_add(&fwd, v[i]);
    for (int i = n - 1; i >= 0; i--)
        gx_cyc_add(&back, v[i]);
    for (int i = 0; i < n; i += 2)
        gx_cyc_add(&halves, v[i]);
    for (int i = 1; i < n; i += 2)
        gx_cyc_add(&h2, v[i]);
    gx_cyc_merge(&halves, &h2);
    assert_memory_equal(&fwd, &back, sizeof fwd);
    assert_memory_equal(&fwd, &halves, sizeof fwd);
    double exact = 0;
    for (int i = 0; i < n; i++)
        exact += v[i];
    assert_true(fabs(gx_cyc_value(&fwd) - exact) < 1e-3);
    gx_cyc_sum neg = {0};
    gx_cyc_add(&neg, -1.5);
    assert_true(gx_cyc_value(&neg) == -1.5);
    gx_cyc_sum back2 = gx_cyc_from(gx_cyc_hi(&neg), gx_cyc_lo(&neg)); /* a partial's halves */
    assert_memory_equal(&neg, &back2, sizeof neg);
}

static gx_profile *load_plru(const char *rel)
{
    gx_profile *p = NULL;
    assert_int_equal(gx_profile_load(gx_test_path(rel), &p, NULL), GX_OK);
    snprintf(p->l2.policy, sizeof p->l2.policy, "plru");
    return p;
}

static char *render(const gx_tsim *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gx_tsim_write_json(s, f), GX_OK);
    assert_int_equal(gx_tsim_write_text(s, f, 4), GX_OK);
    fclose(f);
    return buf;
}

/* One run of t: threads, shard of shards (shards 0: not split). */
static gx_tsim *run(const gx_profile *p, const gx_trace *t, uint32_t threads, uint32_t shard,
                    uint32_t shards)
{
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, NULL), GX_OK);
    if (shards)
        assert_int_equal(gx_tsim_par_start(s, p, threads, shard, shards, NULL), GX_OK);
    gx_tsim_run(s, t->rec, t->n);
    gx_tsim_flush(s);
    assert_int_equal(gx_tsim_par_finish(s, NULL), GX_OK);
    return s;
}

/* The same run fed column batches (gx_trace_reader_next_cols over the
 * trace written as binary version 2), as `gpuxray sim` runs it: shards 0
 * is one thread, else threads of one shard. */
static gx_tsim *run_cols_as(const gx_profile *p, const gx_trace *t, uint32_t threads, int split,
                            int sweep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gx_trace_write(t, f, GX_TRACE_BINARY, NULL), GX_OK);
    fclose(f);
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    gx_tsim *s = NULL;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, NULL), GX_OK);
    if (split)
        assert_int_equal(gx_tsim_par_start(s, p, threads, 0, 1, NULL), GX_OK);
    if (sweep)
        gx_tsim_par_sweep(s);
    assert_true(gx_tsim_takes_cols(s));
    gx_trace_reader *rd = NULL;
    /* the SM bound `gpuxray sim` reads with: the decoder's batches then say
     * they are one run, so a split takes its one-pass paths (split_cols) */
    assert_int_equal(gx_trace_reader_open_mem(buf, len, "mem", p->device.sm_count, &rd, NULL),
                     GX_OK);
    gx_trace_cols c;
    assert_int_equal(gx_trace_cols_init(&c, 1000), GX_OK); /* batches cut accesses' runs */
    c.merge_bytes = gx_tsim_merge_bytes(s);
    for (;;) {
        assert_int_equal(gx_trace_reader_next_cols(rd, &c, NULL), GX_OK);
        if (!c.n)
            break;
        gx_tsim_run_cols(s, &c);
    }
    gx_trace_cols_free(&c);
    gx_trace_reader_close(rd);
    free(buf);
    assert_int_equal(gx_tsim_par_finish(s, NULL), GX_OK);
    return s;
}

static gx_tsim *run_cols(const gx_profile *p, const gx_trace *t, uint32_t threads, int split)
{
    return run_cols_as(p, t, threads, split, 0);
}

/* A generated trace of `pattern` over `footprint` bytes: accesses of
 * `size` bytes from `sms` SMs (assigned by `assign`), a quarter of them
 * writes. */
static void gen_trace_as(gx_trace *t, gx_gen_pattern pattern, uint64_t footprint, uint32_t size,
                         uint32_t sms, gx_sm_assign assign)
{
    gx_gen_cfg c;
    gx_gen_defaults(&c);
    c.pattern = pattern;
    c.footprint_bytes = footprint;
    c.count = gx_test_sanitizer() ? 5000 : 50000;
    c.sms = sms;
    c.sm_assign = assign;
    c.size_bytes = size;
    c.write_ratio = 0.25;
    gx_trace_init(t);
    assert_int_equal(gx_trace_generate(&c, t, NULL), GX_OK);
}

static void gen_trace(gx_trace *t, uint32_t size)
{
    gen_trace_as(t, GX_GEN_RANDOM, 8 << 20, size, 16, GX_SM_ROUNDROBIN);
}

static void check_profile(const char *rel)
{
    gx_profile *p = load_plru(rel);
    assert_null(gx_tsim_par_blocker(p, &(gx_tsim_cfg){0}));
    const uint32_t sizes[] = {4, 100}; /* one sector; line-crossing accesses */
    for (int k = 0; k < 2; k++) {
        gx_trace t;
        gen_trace(&t, sizes[k]);
        gx_tsim *one = run(p, &t, 1, 0, 0);
        char *want = render(one);
        for (uint32_t th = 2; th <= 4; th++) {
            gx_tsim *s = run(p, &t, th, 0, 1);
            char *got = render(s);
            assert_string_equal(want, got);
            free(got);
            gx_tsim_free(s);
        }
        /* columns: one thread, a pipeline (2 threads), split slices (3, 4) */
        for (uint32_t th = 1; th <= 4; th++) {
            gx_tsim *s = run_cols(p, &t, th, th > 1);
            char *got = render(s);
            assert_string_equal(want, got);
            free(got);
            gx_tsim_free(s);
        }
        /* 3 shards through in-memory partials, merged in another order */
        char *part[3];
        const char *names[3] = {"p0", "p1", "p2"};
        for (uint32_t i = 0; i < 3; i++) {
            gx_tsim *s = run(p, &t, i + 1, i, 3);
            size_t len;
            FILE *f = open_memstream(&part[i], &len);
            gx_tsim_ident id = {1, 2, t.n, i, 3};
            assert_int_equal(gx_tsim_write_partial(s, &id, f, NULL), GX_OK);
            fclose(f);
            gx_tsim_free(s);
        }
        const char *texts[3] = {part[2], part[0], part[1]};
        const char *nm[3] = {names[2], names[0], names[1]};
        gx_tsim *m = NULL;
        gx_msg msg;
        gx_msg_clear(&msg);
        assert_int_equal(gx_tsim_merge(texts, nm, 3, &m, &msg), GX_OK);
        char *got = render(m);
        assert_string_equal(want, got);
        free(got);
        gx_tsim_free(m);
        /* two partials: shard 1 of 3 missing */
        const char *two[2] = {part[0], part[2]};
        assert_int_equal(gx_tsim_merge(two, names, 2, &m, &msg), GX_EINVAL);
        assert_non_null(strstr(msg.text, "shard 1 of 3 is missing"));
        for (int i = 0; i < 3; i++)
            free(part[i]);
        free(want);
        gx_tsim_free(one);
        gx_trace_free(&t);
    }
    gx_profile_free(p);
}

static void test_split_uniform(void **state)
{
    (void)state;
    check_profile("profiles/seed-ampere-6mb.json");
}

static void test_split_near_far(void **state)
{
    (void)state;
    check_profile("profiles/hopper-like.json");
}

/* A split of two threads on the specialised path (seed card, its own
 * plru-rand: a stream a slice; then plru) moving its share at every short batch
 * (gx_tsim_par_sweep: slices handed back and forth with their state, the
 * worker locating or not) gives one thread's statistics: random accesses of
 * one sector and across lines, and a stream whose repeats the decoder
 * folds (the repeat columns). */
static void test_split_balance(void **state)
{
    (void)state;
    gx_profile *p = NULL;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, NULL),
                     GX_OK);
    for (int k = 0; k < 6; k++) {
        if (k == 3) /* the same with a deterministic policy */
            snprintf(p->l2.policy, sizeof p->l2.policy, "plru");
        gx_trace t;
        if (k % 3 < 2) /* SMs at random: a column entry's stale SM (a batch's
                          before it) is not its own, as round robin would make it */
            gen_trace_as(&t, GX_GEN_RANDOM, 8 << 20, k % 3 ? 100 : 4, 16, GX_SM_RANDOM);
        else /* one SM streaming 4-byte reads: the decoder folds repeats */
            gen_trace_as(&t, GX_GEN_STREAM, 1 << 20, 4, 1, GX_SM_ROUNDROBIN);
        gx_tsim *one = run(p, &t, 1, 0, 0);
        char *want = render(one);
        for (int sweep = 0; sweep < 2; sweep++) {
            gx_tsim *s = run_cols_as(p, &t, 2, 1, sweep);
            char *got = render(s);
            assert_string_equal(want, got);
            free(got);
            gx_tsim_free(s);
        }
        free(want);
        gx_tsim_free(one);
        gx_trace_free(&t);
    }
    gx_profile_free(p);
}

/* What couples slices is refused, by name. */
static void test_blockers(void **state)
{
    (void)state;
    gx_profile *p = NULL;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/seed-ampere-6mb.json"), &p, NULL),
                     GX_OK);
    gx_tsim_cfg cfg;
    gx_tsim_defaults(p, &cfg);
    assert_null(gx_tsim_par_blocker(p, &cfg)); /* plru-rand: one stream per slice */
    snprintf(p->l2.policy, sizeof p->l2.policy, "plru");
    assert_null(gx_tsim_par_blocker(p, &cfg));
    cfg.noise = 1;
    assert_non_null(strstr(gx_tsim_par_blocker(p, &cfg), "--noise"));
    gx_tsim *s = NULL;
    assert_int_equal(gx_tsim_new(p, &cfg, &s, NULL), GX_OK);
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_tsim_par_start(s, p, 2, 0, 1, &m), GX_EINVAL);
    assert_non_null(strstr(m.text, "cannot be split"));
    gx_tsim_free(s);
    gx_profile_free(p);
    assert_int_equal(gx_profile_load(gx_test_path("profiles/gem5-vega.json"), &p, NULL), GX_OK);
    snprintf(p->l2.policy, sizeof p->l2.policy, "plru");
    gx_tsim_defaults(p, &cfg);
    assert_non_null(strstr(gx_tsim_par_blocker(p, &cfg), "translation"));
    gx_profile_free(p);
    assert_int_equal(
        gx_profile_load(gx_test_path("profiles/nvidia-h200-model.json"), &p, NULL), GX_OK);
    gx_tsim_defaults(p, &cfg);
    assert_non_null(strstr(gx_tsim_par_blocker(p, &cfg), "translation"));
    p->tlb.present = 0;
    gx_tsim_defaults(p, &cfg);
    assert_non_null(strstr(gx_tsim_par_blocker(p, &cfg), "far_stream_extra"));
    gx_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cyc_sum_order),
        cmocka_unit_test(test_split_uniform),
        cmocka_unit_test(test_split_near_far),
        cmocka_unit_test(test_split_balance),
        cmocka_unit_test(test_blockers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
