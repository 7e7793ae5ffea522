/* test_sim_target.c - the sim target (Contract 2) on the seed profile: info
 * tells only what the API would; chase gives about the hit latency inside
 * the L2 and about the DRAM latency far beyond it; seq reports the timed ops
 * with the timer overhead; prime_probe sees what was primed; the front end
 * rejects bad offsets and SMs; arenas get fresh frames; a seed reproduces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "testutil.h"

#define SEED_PROFILE "profiles/seed-ampere-6mb.json"

static gx_target *open_seed(uint64_t seed)
{
    return gx_test_open_sim(gx_test_path(SEED_PROFILE), seed);
}

/* A random cyclic walk over the lines of the first `bytes` of the arena. */
static uint64_t *chain(uint64_t bytes, uint64_t seed, size_t *n)
{
    *n = bytes / 128;
    uint64_t *o = malloc(*n * sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < *n; i++)
        o[i] = i * 128;
    gx_rng r;
    gx_rng_seed(&r, seed);
    gx_rng_shuffle_u64(&r, o, *n);
    return o;
}

static double chase(gx_target *t, uint64_t bytes, uint32_t sm, uint64_t steps)
{
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, bytes, &m), GX_OK);
    size_t n;
    uint64_t *o = chain(bytes, 5, &n);
    gx_chase_req q = {o, n, 2, (uint32_t)((steps + n - 1) / n), steps, sm};
    double mean = 0;
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_OK);
    free(o);
    return mean;
}

static void test_info_api_only(void **state)
{
    (void)state;
    gx_target *t = open_seed(1);
    const gx_target_info *in = gx_target_get_info(t);
    assert_string_equal(in->kind, "sim");
    assert_non_null(strstr(in->spec, SEED_PROFILE));
    assert_string_equal(in->name, "seed Ampere 6MB (simulated)");
    assert_int_equal(in->sm_count, 84);
    assert_int_equal(in->sm_clock_mhz, 1695);
    assert_int_equal(in->api_l2_bytes, 6291456);
    assert_int_equal(in->page_bytes, 2 << 20);
    assert_int_equal(in->max_arena_bytes, 8ULL << 30);
    gx_target_close(t);
}

static void test_chase_levels(void **state)
{
    (void)state;
    gx_target *t = open_seed(1);
    uint64_t steps = gx_test_sanitizer() ? 20000 : 200000;
    /* 1 MiB: L2 hits, 210 + skew (mean 15, plus 30 for the half of the
     * slices in the other partition: mean 30 in all) + outliers (1.5) + timer/steps */
    double in = chase(t, 1 << 20, 3, steps);
    assert_true(in > 230 && in < 255);
    /* 64 MiB random walk: DRAM (430 + skew + outliers) nearly every step */
    double out = chase(t, 64ULL << 20, 3, steps);
    assert_true(out > 430 && out < 475);
    gx_target_stats s;
    gx_target_get_stats(t, &s);
    assert_int_equal(s.calls, 2);
    assert_true(s.accesses >= 2 * steps);
    gx_target_close(t);
}

static void test_seq(void **state)
{
    (void)state;
    gx_target *t = open_seed(2);
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, 4 << 20, &m), GX_OK);
    gx_seq_op ops[] = {
        {0, GX_OP_NONE, 1},     /* timer overhead alone */
        {4096, GX_OP_LOAD, 1},  /* cold: DRAM */
        {4096, GX_OP_LOAD, 1},  /* hit */
        {8192, GX_OP_STORE, 0}, /* a store allocates like a load */
        {8192, GX_OP_LOAD, 1},  /* hit */
        {12288, GX_OP_LOAD, 0},
        {0, GX_OP_NONE, 0},
    };
    double cyc[8] = {0};
    assert_int_equal(gx_target_seq(t, ops, 7, 10, cyc, &m), GX_OK);
    /* four timed values; overhead 16 (jitter 2) */
    assert_true(cyc[0] > 16 - 10 && cyc[0] < 16 + 10);
    /* skew: [0, 30) plus 30 when the slice is in the other partition */
    assert_true(cyc[1] > 430 + 16 - 10 && cyc[1] < 430 + 16 + 60 + 10);
    assert_true(cyc[2] > 210 + 16 - 10 && cyc[2] < 210 + 16 + 60 + 10);
    assert_true(cyc[3] > 210 + 16 - 10 && cyc[3] < 210 + 16 + 60 + 10);
    assert_true(cyc[4] == 0.0); /* nothing written past the timed ops */
    gx_target_stats s;
    gx_target_get_stats(t, &s);
    assert_int_equal(s.accesses, 5);
    /* bad kind */
    gx_seq_op bad = {0, 7, 1};
    assert_int_equal(gx_target_seq(t, &bad, 1, 0, cyc, &m), GX_EINVAL);
    gx_target_close(t);
}

static void test_prime_probe(void **state)
{
    (void)state;
    gx_target *t = open_seed(3);
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, 8 << 20, &m), GX_OK);
    uint64_t prime[64], probe[128];
    for (int i = 0; i < 64; i++)
        prime[i] = (uint64_t)i * 1024;
    for (int i = 0; i < 128; i++)
        probe[i] = (uint64_t)i * 1024; /* first 64 primed, last 64 not */
    double cyc[128];
    assert_int_equal(gx_target_prime_probe(t, prime, 64, probe, 128, 40, cyc, &m), GX_OK);
    int hits = 0, misses = 0;
    for (int i = 0; i < 64; i++)
        hits += cyc[i] < 330;
    for (int i = 64; i < 128; i++)
        misses += cyc[i] > 330;
    assert_true(hits >= 62);   /* an outlier may spoil one */
    assert_true(misses >= 62);
    /* no prime at all is allowed */
    assert_int_equal(gx_target_prime_probe(t, NULL, 0, probe, 1, 0, cyc, &m), GX_OK);
    gx_target_close(t);
}

/* prime_probe with rounds: prime-only calls, rounds counted in the cost,
 * only the probes counted as serial accesses, bad rounds refused. */
static void test_prime_rounds(void **state)
{
    (void)state;
    gx_target *t = open_seed(5);
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, 8 << 20, &m), GX_OK);
    uint64_t prime[32], probe[2] = {0, 64 * 1024};
    for (int i = 0; i < 32; i++)
        prime[i] = (uint64_t)i * 1024;
    gx_target_stats a, b;
    gx_target_get_stats(t, &a);
    assert_int_equal(gx_target_prime_probe_rounds(t, prime, 32, 3, NULL, 0, 0, NULL, &m), GX_OK);
    gx_target_get_stats(t, &b);
    assert_int_equal(b.accesses - a.accesses, 96);
    assert_int_equal(b.serial_accesses - a.serial_accesses, 0);
    assert_int_equal(b.calls - a.calls, 1);
    double cyc[2];
    assert_int_equal(gx_target_prime_probe_rounds(t, NULL, 0, 1, probe, 2, 0, cyc, &m), GX_OK);
    assert_true(cyc[0] < 330); /* primed by the prime-only call */
    assert_true(cyc[1] > 330); /* never touched */
    gx_target_get_stats(t, &a);
    assert_int_equal(a.serial_accesses - b.serial_accesses, 2);
    assert_int_equal(gx_target_prime_probe_rounds(t, prime, 32, 0, probe, 1, 0, cyc, &m),
                     GX_EINVAL);
    assert_int_equal(gx_target_prime_probe_rounds(t, NULL, 0, 1, NULL, 0, 0, NULL, &m), GX_EINVAL);
    assert_int_equal(gx_target_prime_probe_rounds(t, prime, 32, 1, probe, 1, 0, NULL, &m),
                     GX_EINVAL);
    gx_target_close(t);
}

static void test_bad_requests(void **state)
{
    (void)state;
    gx_target *t = open_seed(4);
    gx_msg m;
    gx_msg_clear(&m);
    uint64_t off[2] = {0, 128};
    gx_chase_req q = {off, 2, 1, 1, 0, 0};
    double mean, cyc[2];
    /* no arena yet */
    assert_int_not_equal(gx_target_chase(t, &q, &mean, &m), GX_OK);
    assert_int_equal(gx_target_arena(t, 1000, &m), GX_OK);
    assert_int_equal(gx_target_arena_bytes(t), 2 << 20); /* rounded to pages */
    off[1] = 2 << 20; /* one past the end */
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_ERANGE);
    off[1] = 12; /* not 8-byte aligned */
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_ERANGE);
    off[1] = 128;
    q.sm = 84;
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_ERANGE);
    assert_non_null(strstr(m.text, "SM"));
    q.sm = 83;
    assert_int_equal(gx_target_chase(t, &q, &mean, &m), GX_OK);
    uint64_t far = 3 << 20;
    assert_int_equal(gx_target_prime_probe(t, &far, 1, off, 1, 0, cyc, &m), GX_ERANGE);
    assert_int_equal(gx_target_arena(t, 9ULL << 30, &m), GX_ERANGE);
    gx_target_close(t);
    /* a profile that is not there, a measured one */
    gx_target *u = NULL;
    assert_int_not_equal(gx_target_open("sim:/nonexistent/x.json", 1, &u, &m), GX_OK);
    assert_null(u);
}

/* Which of 96 lines at offset 0 of 96 pages miss after a prime depends on
 * the physical frames (the seed card's partition and set bits reach above
 * the 2 MiB page, so those lines share few sets, more than 16 each): two
 * arenas, two answers. Returns a signature of the miss pattern. */
#define NPAGES 96
static uint64_t conflict_pattern(gx_target *t)
{
    gx_msg m;
    gx_msg_clear(&m);
    assert_int_equal(gx_target_arena(t, (uint64_t)NPAGES << 21, &m), GX_OK);
    uint64_t lines[NPAGES];
    for (int i = 0; i < NPAGES; i++)
        lines[i] = (uint64_t)i << 21;
    double cyc[NPAGES];
    assert_int_equal(gx_target_prime_probe(t, lines, NPAGES, lines, NPAGES, 0, cyc, &m), GX_OK);
    uint64_t sig = 1469598103934665603ULL;
    int misses = 0;
    for (int i = 0; i < NPAGES; i++) {
        int miss = cyc[i] > 330;
        misses += miss;
        sig = (sig ^ (miss ? 1ULL : 0ULL)) * 1099511628211ULL;
    }
    assert_true(misses > 0 && misses < NPAGES);
    return sig;
}

static void test_arenas_fresh_frames(void **state)
{
    (void)state;
    gx_target *t = open_seed(5);
    uint64_t sig[6];
    int distinct = 0;
    for (int a = 0; a < 6; a++) {
        sig[a] = conflict_pattern(t);
        int same = 0;
        for (int b = 0; b < a; b++)
            same |= sig[b] == sig[a];
        distinct += !same;
    }
    assert_true(distinct >= 3);
    gx_target_close(t);
}

static void test_same_seed_same_numbers(void **state)
{
    (void)state;
    uint64_t steps = gx_test_sanitizer() ? 5000 : 50000;
    gx_target *a = open_seed(9), *b = open_seed(9), *c = open_seed(10);
    double xa = chase(a, 7 << 20, 1, steps), xb = chase(b, 7 << 20, 1, steps);
    double xc = chase(c, 7 << 20, 1, steps);
    assert_true(xa == xb);
    assert_true(xa != xc);
    assert_int_equal(conflict_pattern(a), conflict_pattern(b));
    gx_target_close(a);
    gx_target_close(b);
    gx_target_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_api_only),
        cmocka_unit_test(test_chase_levels),
        cmocka_unit_test(test_seq),
        cmocka_unit_test(test_prime_probe),
        cmocka_unit_test(test_prime_rounds),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_arenas_fresh_frames),
        cmocka_unit_test(test_same_seed_same_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
