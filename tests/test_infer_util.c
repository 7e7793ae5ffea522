/* test_infer_util.c - the measurement helpers shared by the discovery
 * stages (src/infer/core/infer_util.c): random cyclic chains, the hit / miss /
 * unsure decision, votes, and (through the sim target of the seed card)
 * reload and cold-miss latencies and the never-touched reserve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "infer/infer_util.h"
#include "testutil.h"

static void test_chain_single_cycle(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 7);
    enum { N = 1000 };
    uint64_t offs[N], chain[N];
    for (size_t i = 0; i < N; i++)
        offs[i] = 4096 + 64 * i;
    infer_chain_shuffle(&r, offs, N, chain);
    assert_true(infer_chain_is_cycle(offs, chain, N));
    size_t same = 0; /* really shuffled */
    for (size_t i = 0; i < N; i++)
        same += chain[i] == offs[i];
    assert_true(same < 20);
    uint64_t strided[N];
    infer_chain_strided(&r, 4096, 64, N, strided);
    assert_true(infer_chain_is_cycle(offs, strided, N));
    /* a duplicate or a missing offset is not a single cycle */
    chain[3] = chain[4];
    assert_false(infer_chain_is_cycle(offs, chain, N));
    /* in place */
    memcpy(chain, offs, sizeof chain);
    infer_chain_shuffle(&r, chain, N, chain);
    assert_true(infer_chain_is_cycle(offs, chain, N));
}

static void test_chain_jittered(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 9);
    enum { N = 512 };
    uint64_t chain[N];
    infer_chain_jittered(&r, 0, 256, 32, N, chain);
    int seen_block[N] = {0}, offsets_seen[8] = {0};
    for (size_t i = 0; i < N; i++) {
        uint64_t b = chain[i] / 256;
        assert_true(b < N);
        seen_block[b]++;
        assert_true(chain[i] % 32 == 0);
        offsets_seen[(chain[i] % 256) / 32]++;
    }
    for (size_t b = 0; b < N; b++)
        assert_int_equal(seen_block[b], 1);
    for (int k = 0; k < 8; k++)
        assert_true(offsets_seen[k] > 30); /* spread over the block */
}

static void test_classify(void **state)
{
    (void)state;
    gx_infer ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.timer.have = 1;
    ctx.timer.noise = 2.0;
    ctx.levels.hit_latency = 226;
    ctx.levels.miss_latency = 446;
    ctx.levels.hit_miss_threshold = 336;
    /* band = 3*2+1 = 7 cycles around 336 */
    assert_true(fabs(infer_unsure_band(&ctx, 226, 446) - 7.0) < 1e-12);
    assert_int_equal(infer_is_hit(&ctx, 230), 1);
    assert_int_equal(infer_is_hit(&ctx, 328), 1);
    assert_int_equal(infer_is_hit(&ctx, 330), -1);
    assert_int_equal(infer_is_hit(&ctx, 342), -1);
    assert_int_equal(infer_is_hit(&ctx, 344), 0);
    assert_int_equal(infer_is_hit(&ctx, 3446), 0);
    assert_int_equal(infer_is_hit(&ctx, NAN), -1);
    /* noisy timer: band capped at a quarter of the gap */
    ctx.timer.noise = 40;
    assert_true(fabs(infer_unsure_band(&ctx, 226, 446) - 55.0) < 1e-12);
    assert_int_equal(infer_is_hit(&ctx, 300), -1);
    assert_int_equal(infer_is_hit(&ctx, 280), 1);
    /* generic classify, either orientation */
    ctx.timer.noise = 1;
    assert_int_equal(infer_classify(&ctx, 100, 100, 200), 1);
    assert_int_equal(infer_classify(&ctx, 190, 100, 200), 0);
    assert_int_equal(infer_classify(&ctx, 151, 100, 200), -1);
    assert_int_equal(infer_classify(&ctx, 190, 200, 100), 1);
    /* no threshold yet: unsure */
    ctx.levels.hit_miss_threshold = 0;
    assert_int_equal(infer_is_hit(&ctx, 100), -1);
}

static void test_vote(void **state)
{
    (void)state;
    int a[] = {1, 1, 0, 1, -1};
    assert_int_equal(infer_vote(a, 5, 3), 1);
    int b[] = {0, 0, 0, 1, 0};
    assert_int_equal(infer_vote(b, 5, 3), 0);
    int c[] = {1, 0, 1, 0, -1};
    assert_int_equal(infer_vote(c, 5, 2), -1);
    int d[] = {1, -1, -1, -1, 1};
    assert_int_equal(infer_vote(d, 5, 2), -1); /* too many unsure */
    assert_int_equal(infer_vote(d, 0, 1), -1);
}

static void test_fmt_bytes(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(infer_fmt_bytes(6u << 20, buf, sizeof buf), "6 MiB");
    assert_string_equal(infer_fmt_bytes(384u << 10, buf, sizeof buf), "384 KiB");
    assert_string_equal(infer_fmt_bytes(100, buf, sizeof buf), "100 B");
}

/* Through the sim target: reloads are hits, fresh blocks are cold misses,
 * the reserve hands out distinct aligned never-touched blocks. */
static void test_latencies_on_sim(void **state)
{
    (void)state;
    gx_msg msg;
    gx_target *t = NULL;
    char spec[600];
    snprintf(spec, sizeof spec, "sim:%s", gx_test_path("profiles/seed-ampere-6mb.json"));
    int rc = gx_target_open(spec, 1, &t, &msg);
    if (rc != GX_OK) {
        print_message("sim target not usable yet: %s\n", msg.text);
        skip();
    }
    gx_infer ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.t = t;
    ctx.info = gx_target_get_info(t);
    ctx.msg = &msg;
    gx_rng_seed(&ctx.rng, 1);
    assert_int_equal(infer_arena_ensure(&ctx, 4u << 20), GX_OK);
    uint32_t gen = ctx.arena.generation;
    assert_int_equal(infer_arena_ensure(&ctx, 1u << 20), GX_OK); /* reused */
    assert_int_equal(ctx.arena.generation, gen);
    assert_true(ctx.arena.work_bytes >= (4u << 20));
    double hit = 0, miss = 0;
    assert_int_equal(infer_reload_latency(&ctx, 4096, 0, 9, &hit), GX_OK);
    assert_int_equal(infer_miss_latency(&ctx, 0, 15, &miss), GX_OK);
    /* seed card: hit 210, DRAM 430, skew < 30, timer overhead 16 */
    assert_true(hit > 200 && hit < 270);
    assert_true(miss > 420 && miss < 490);
    uint64_t a = 0, b = 0;
    assert_int_equal(infer_fresh_block(&ctx, 0, &a), GX_OK);
    assert_int_equal(infer_fresh_block(&ctx, 0, &b), GX_OK);
    assert_true(a >= ctx.arena.work_bytes && b > a && (a % INFER_FRESH_BLOCK_BYTES) == 0);
    assert_int_equal(infer_arena_ensure(&ctx, 16u << 20), GX_OK); /* replaced */
    assert_int_equal(ctx.arena.generation, gen + 1);
    gx_target_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_single_cycle), cmocka_unit_test(test_chain_jittered),
        cmocka_unit_test(test_classify),           cmocka_unit_test(test_vote),
        cmocka_unit_test(test_fmt_bytes),          cmocka_unit_test(test_latencies_on_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
