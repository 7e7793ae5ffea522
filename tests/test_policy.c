/* test_policy.c - replacement policies: every family replays an access
 * sequence whose hit/miss outcome was derived by hand from the policy's
 * definition (or taken from its paper), with the derivation in a comment;
 * the randomized policies are checked for seeded reproducibility and for a
 * derived hit rate; spec parsing, its errors and the candidate list.
 *
 * Notation in the derivations: sets have 4 ways w0..w3 unless stated; an
 * empty set fills w0, w1, ... in order; [..] is the per-way state after the
 * access (ages, bits or recency order); H = hit, M = miss. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/error.h"
#include "gpuxray/policy.h"
#include "gpuxray/rng.h"
#include "testutil.h"

/* Replay seq (one character = one line id) on a fresh set; return the
 * H/M string in out (size >= strlen(seq)+1). */
static void replay(const char *spec, uint32_t ways, uint64_t seed, const char *seq, char *out)
{
    gx_policy_set *s = NULL;
    gx_msg msg;
    int rc = gx_policy_set_new(spec, ways, seed, &s, &msg);
    if (rc != GX_OK)
        fail_msg("gx_policy_set_new(%s, %u): %s", spec, ways, msg.text);
    size_t n = strlen(seq);
    for (size_t i = 0; i < n; i++)
        out[i] = gx_policy_set_access(s, (uint64_t)(unsigned char)seq[i]) ? 'H' : 'M';
    out[n] = '\0';
    gx_policy_set_free(s);
}

static void expect_seq(const char *spec, uint32_t ways, const char *seq, const char *want)
{
    char got[256];
    assert_true(strlen(seq) < sizeof got);
    assert_int_equal(strlen(seq), strlen(want));
    replay(spec, ways, 1, seq, got);
    if (strcmp(got, want) != 0)
        fail_msg("%s, %u ways, %s: got %s, want %s", spec, ways, seq, got, want);
}

/* Hit rate of a cyclic walk over nlines lines, after warm_rounds rounds. */
static double cyclic_hit_rate(const char *spec, uint32_t ways, uint64_t seed, uint32_t nlines,
                              uint32_t warm_rounds, uint32_t rounds)
{
    gx_policy_set *s = NULL;
    gx_msg msg;
    if (gx_policy_set_new(spec, ways, seed, &s, &msg) != GX_OK)
        fail_msg("%s: %s", spec, msg.text);
    for (uint32_t r = 0; r < warm_rounds; r++)
        for (uint32_t i = 0; i < nlines; i++)
            gx_policy_set_access(s, i);
    uint64_t hits = 0;
    for (uint32_t r = 0; r < rounds; r++)
        for (uint32_t i = 0; i < nlines; i++)
            hits += (uint64_t)gx_policy_set_access(s, i);
    gx_policy_set_free(s);
    return (double)hits / ((double)rounds * nlines);
}

/* ---------------------------------------------------------------- lru / fifo */

static void test_lru_golden(void **state)
{
    (void)state;
    /* LRU, 4 ways; recency order most- to least-recent:
     * A M [A]  B M [B A]  C M [C B A]  D M [D C B A]  A H [A D C B]
     * E M evicts B [E A D C]  B M evicts C [B E A D]  C M evicts D [C B E A]
     * D M evicts A [D C B E]  A M evicts E [A D C B] */
    expect_seq("lru", 4, "ABCDAEBCDA", "MMMMHMMMMM");
    /* 1 way: only an immediate re-reference hits. */
    expect_seq("lru", 1, "AABAB", "MHMMM");
}

static void test_fifo_golden(void **state)
{
    (void)state;
    /* FIFO, 4 ways, the LRU sequence above; queue oldest first:
     * A B C D M [A B C D]  A H (a hit does not refresh)
     * E M evicts A [B C D E]  B H  C H  D H (LRU missed all three)
     * A M evicts B [C D E A] */
    expect_seq("fifo", 4, "ABCDAEBCDA", "MMMMHMHHHM");
}

/* ---------------------------------------------------------------- plru */

static void test_plru_golden(void **state)
{
    (void)state;
    /* Tree PLRU, 4 ways: root r picks {w0,w1} (0) or {w2,w3} (1); node L
     * picks w0/w1, node R w2/w3; a touch points the path away, all bits 0.
     * A M w0: r=1 L=1   B M w1: r=1 L=0   C M w2: r=0 R=1   D M w3: r=0 R=0
     * A H w0: r=1 L=1
     * E M: r=1 -> R=0 -> w2 evicts C (LRU would evict B); r=0 R=1
     * B H w1: r=1 L=0
     * C M: r=1 -> R=1 -> w3 evicts D; r=0 R=0
     * D M: r=0 -> L=0 -> w0 evicts A; r=1 L=1
     * A M: r=1 -> R=0 -> w2 evicts E; r=0 R=1 */
    expect_seq("plru", 4, "ABCDAEBCDA", "MMMMHMHMMM");
}

static void test_plru_non_power_of_two(void **state)
{
    (void)state;
    /* 3 ways: tree over 4 leaves; R covers w2 and the nonexistent w3, so R
     * always leads to w2 whatever its bit.
     * A M w0: r=1 L=1   B M w1: r=1 L=0   C M w2: r=0 R=1 (points at w3)
     * A H w0: r=1 L=1
     * D M: r=1 -> R (w3 absent) -> w2 evicts C; r=0
     * B H w1: r=1 L=0   A H w0: r=1 L=1
     * C M: r=1 -> w2 evicts D.  (3-way LRU would miss B: MMMHMMHM.) */
    expect_seq("plru", 3, "ABCADBAC", "MMMHMHHM");

    /* Any way count: the victim is always an existing way, and every way
     * is chosen at some point (none starves). */
    const gx_policy_ops *ops = NULL;
    gx_policy pol;
    gx_msg msg;
    assert_int_equal(gx_policy_from_spec("plru", &pol, &msg), GX_OK);
    ops = pol.ops;
    const uint32_t counts[] = {2, 3, 5, 6, 7, 9, 12, 17, 24, 33, 48, 63, 64};
    gx_rng rng;
    gx_rng_seed(&rng, 3);
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        uint32_t w = counts[k];
        uint64_t st[8] = {0};
        ops->init(st, w, &pol.params);
        uint64_t seen = 0;
        for (int i = 0; i < 20000; i++) {
            uint32_t v = ops->victim(st, w, &pol.params, &rng);
            if (v >= w)
                fail_msg("plru with %u ways chose way %u", w, v);
            seen |= 1ULL << v;
            /* replace the victim, or touch a random way */
            ops->on_hit(st, w, (i & 1) ? v : (uint32_t)gx_rng_below(&rng, w), &pol.params);
        }
        uint64_t all = w == 64 ? ~0ULL : ((1ULL << w) - 1);
        if (seen != all)
            fail_msg("plru with %u ways never evicted some way (seen %llx)", w,
                     (unsigned long long)seen);
    }
}

/* ---------------------------------------------------------------- mru / nru */

static void test_mru_golden(void **state)
{
    (void)state;
    /* bit-PLRU ("MRU", nanoBench), 4 ways, bits w0..w3 (1 = may be evicted),
     * all 1; an access clears its bit; if none is left, all others are set.
     * A M w0 [0111]  B M w1 [0011]  C M w2 [0001]  D M w3 [0000]->[1110]
     * A H w0 [0110]
     * E M evicts w1 (B) [0010]
     * B M evicts w2 (C) [0000]->[1101]
     * C M evicts w0 (A) [0101]
     * D H w3 [0100]          (LRU evicted D two steps ago: M)
     * A M evicts w1 (E) [0000]->[1011] */
    expect_seq("mru", 4, "ABCDAEBCDA", "MMMMHMMMHM");
}

static void test_nru_golden(void **state)
{
    (void)state;
    /* NRU (RRIP paper), 4 ways, bits as above, re-armed only when a
     * replacement finds none set, and then all of them.
     * A B C D M [0111] [0011] [0001] [0000]   A H [0000]
     * E M: none set -> [1111], evicts w0 (A, just hit!) [0111]
     * B H [0011]  C H [0001]  D H [0000]
     * A M: [1111], evicts w0 (E) [0111]
     * (mru evicted B for E instead and then missed B and C.) */
    expect_seq("nru", 4, "ABCDAEBCDA", "MMMMHMHHHM");
}

/* ---------------------------------------------------------------- srrip */

static void test_srrip_hp_paper(void **state)
{
    (void)state;
    /* The RRIP paper's (Jaleel et al., ISCA 2010) mixed pattern on a 4-way
     * set, a1 a2 a2 a1 b1 b2 b3 b4 a1 a2 (a = A B, b = C D E F); RRPVs:
     * A M [2 3 3 3]  B M [2 2 3 3]  B H [2 0 3 3]  A H [0 0 3 3]
     * C M [0 0 2 3]  D M [0 0 2 2]
     * E M: no 3 -> age all +1 [1 1 3 3], evict w2 (C) [1 1 2 3]
     * F M: evict w3 (D) [1 1 2 2]
     * A H  B H: the scan did not flush a1 a2. LRU misses both. */
    expect_seq("srrip-hp", 4, "ABBACDEFAB", "MMHHMMMMHH");
    expect_seq("lru", 4, "ABBACDEFAB", "MMHHMMMMMM");
    expect_seq("srrip", 4, "ABBACDEFAB", "MMHHMMMMHH"); /* alias */
}

static void test_srrip_fp_golden(void **state)
{
    (void)state;
    /* One hit protects a line for long under HP (RRPV 0) but only a little
     * under FP (RRPV 2 -> 1). A B C D A E F A G H I J K A, 4 ways:
     * HP: A..D [2 2 2 2]  A H [0 2 2 2]  E: age+1 [1 3 3 3] evict B [1 2 3 3]
     *     F evict C [1 2 2 3]  A H [0 2 2 3]  G evict D [0 2 2 2]
     *     H: age+1 [1 3 3 3] evict E [1 2 3 3]  I evict F [1 2 2 3]
     *     J evict G [1 2 2 2]  K: age+1 [2 3 3 3] evict H [2 2 3 3]  A H
     * FP: A..D [2 2 2 2]  A H [1 2 2 2]  E: age+1 [2 3 3 3] evict B [2 2 3 3]
     *     F evict C [2 2 2 3]  A H [1 2 2 3]  G evict D [1 2 2 2]
     *     H: age+1 [2 3 3 3] evict E [2 2 3 3]  I evict F [2 2 2 3]
     *     J evict G [2 2 2 2]  K: age+1 [3 3 3 3] evict w0 = A  -> A M */
    expect_seq("srrip-hp", 4, "ABCDAEFAGHIJKA", "MMMMHMMHMMMMMH");
    expect_seq("srrip-fp", 4, "ABCDAEFAGHIJKA", "MMMMHMMHMMMMMM");
}

/* ---------------------------------------------------------------- qlru */

/* All five published QLRU variants on one sequence that tells them apart:
 * A B C D B D C C E F E D B C, 4 ways, ages start at 3. */
#define QSEQ "ABCDBDCCEFEDBC"

static void test_qlru_h11_m1_r0_u0(void **state)
{
    (void)state;
    /* H11: hit on 3 or 2 -> 1, on 1 or 0 -> 0. M1. R0: leftmost age 3.
     * U0: if no age 3, all += 3 - max.
     * A B C M [1 3 3 3] [1 1 3 3] [1 1 1 3]   D M [1 1 1 1] -> +2 [3 3 3 3]
     * B H [3 1 3 3]  D H [3 1 3 1]  C H [3 1 1 1]  C H [3 1 0 1]
     * E M evicts w0 (A) [1 1 0 1] -> +2 [3 3 2 3]
     * F M evicts w0 (E) [1 3 2 3]   E M evicts w1 (B) [1 1 2 3]
     * D H (w3) [1 1 2 1] -> +1 [2 2 3 2]
     * B M evicts w2 (C) [2 2 1 2] -> +1 [3 3 2 3]
     * C M evicts w0 (F) [1 3 2 3] */
    expect_seq("qlru:H11_M1_R0_U0", 4, QSEQ, "MMMMHHHHMMMHMM");
}

static void test_qlru_h00_m1_r2_u1(void **state)
{
    (void)state;
    /* H00: a hit sets 0. M1. U1: after an access to w, the OTHER ways
     * += 3 - (their max). R2 (nanoBench: fill right to left, evict the
     * leftmost age 3) is, with our left-to-right fill, the mirror image:
     * evict the RIGHTMOST age 3. Cache contents shown left to right.
     * A B C M [1 3 3 3] [1 1 3 3] [1 1 1 3]   D M [1 1 1 1] -> others +2 [3 3 3 1]
     * B H [3 0 3 1]  D H [3 0 3 0]  C H [3 0 0 0]  C H [3 0 0 0]
     * E M evicts w0 (A) [1 0 0 0] -> others +3 [1 3 3 3]       E B C D
     * F M evicts w3 (D) [1 3 3 1]                              E B C F
     * E H [0 3 3 1]
     * D M evicts w2 (C) [0 3 1 1]                              E B D F
     * B H [0 0 1 1] -> others +2 [2 0 3 3]
     * C M evicts w3 (F) [2 0 3 1]                              E B D C */
    expect_seq("qlru:H00_M1_R2_U1", 4, QSEQ, "MMMMHHHHMMHMHM");
}

static void test_qlru_h21_m2_r0_u0(void **state)
{
    (void)state;
    /* H21: hit on 3 -> 2, 2 -> 1, 1 or 0 -> 0. M2. R0. U0.
     * A B C M [2 3 3 3] [2 2 3 3] [2 2 2 3]   D M [2 2 2 2] -> +1 [3 3 3 3]
     * B H [3 2 3 3]  D H [3 2 3 2]  C H [3 2 2 2]  C H [3 2 1 2]
     * E M evicts w0 (A) [2 2 1 2] -> +1 [3 3 2 3]     E B C D
     * F M evicts w0 (E) [2 3 2 3]                     F B C D
     * E M evicts w1 (B) [2 2 2 3]                     F E C D
     * D H [2 2 2 2] -> +1 [3 3 3 3]
     * B M evicts w0 (F) [2 3 3 3]                     B E C D
     * C H [2 3 2 3] */
    expect_seq("qlru:H21_M2_R0_U0", 4, QSEQ, "MMMMHHHHMMMHMH");
}

static void test_qlru_h00_m1_r0_u1(void **state)
{
    (void)state;
    /* H00, M1, R0 (leftmost age 3), U1 (others += 3 - their max).
     * A B C D as in H00_M1_R2_U1: [3 3 3 1]
     * B H [3 0 3 1]  D H [3 0 3 0]  C H [3 0 0 0]  C H [3 0 0 0]
     * E M evicts w0 (A) [1 0 0 0] -> others +3 [1 3 3 3]   E B C D
     * F M evicts w1 (B) [1 1 3 3]                          E F C D
     * E H [0 1 3 3]  D H [0 1 3 0]
     * B M evicts w2 (C) [0 1 1 0] -> others +2 [2 3 1 2]   E F B D
     * C M evicts w1 (F) [2 1 1 2] -> others +1 [3 1 2 3]   E C B D */
    expect_seq("qlru:H00_M1_R0_U1", 4, QSEQ, "MMMMHHHHMMHHMM");
}

static void test_qlru_h11_m1_r1_u2(void **state)
{
    (void)state;
    /* H11, M1, R1 (leftmost age 3, else w0), U2 (if no age 3: all += 1).
     * A B C M [1 3 3 3] [1 1 3 3] [1 1 1 3]   D M [1 1 1 1] -> +1 [2 2 2 2]
     * B H (2 -> 1) [2 1 2 2] -> +1 [3 2 3 3]
     * D H [3 2 3 1]  C H [3 2 1 1]  C H [3 2 0 1]
     * E M evicts w0 (A) [1 2 0 1] -> +1 [2 3 1 2]     E B C D
     * F M evicts w1 (B) [2 1 1 2] -> +1 [3 2 2 3]     E F C D
     * E H [1 2 2 3]  D H [1 2 2 1] -> +1 [2 3 3 2]
     * B M evicts w1 (F) [2 1 3 2]                     E B C D
     * C H [2 1 1 2] -> +1 [3 2 2 3] */
    expect_seq("qlru:H11_M1_R1_U2", 4, QSEQ, "MMMMHHHHMMHHMH");
}

/* Random sequences: outcomes of a and b must be identical. */
static void expect_equivalent(const char *a, const char *b)
{
    gx_rng rng;
    gx_rng_seed(&rng, 11);
    const uint32_t ways[] = {2, 4, 7, 16, 32, 33, 64};
    for (size_t k = 0; k < sizeof ways / sizeof ways[0]; k++) {
        gx_policy_set *sa = NULL, *sb = NULL;
        gx_msg msg;
        assert_int_equal(gx_policy_set_new(a, ways[k], 1, &sa, &msg), GX_OK);
        assert_int_equal(gx_policy_set_new(b, ways[k], 1, &sb, &msg), GX_OK);
        uint64_t lines = ways[k] + 1 + gx_rng_below(&rng, ways[k]);
        for (int i = 0; i < 5000; i++) {
            uint64_t x = gx_rng_below(&rng, lines);
            int ha = gx_policy_set_access(sa, x), hb = gx_policy_set_access(sb, x);
            if (ha != hb)
                fail_msg("%s and %s differ at access %d (%u ways)", a, b, i, ways[k]);
        }
        gx_policy_set_free(sa);
        gx_policy_set_free(sb);
    }
}

static void test_qlru_umo_is_srrip(void **state)
{
    (void)state;
    /* nanoBench: SRRIP-HP = QLRU_H00_M2_R0_U0_UMO (insert at 2, hit -> 0,
     * age all by 3 - max only when a miss needs a victim); SRRIP-FP is the
     * same with H21 (hit decrements). srrip.c and qlru.c are separate code. */
    expect_equivalent("srrip-hp", "qlru:H00_M2_R0_U0_UMO");
    expect_equivalent("srrip-fp", "qlru:H21_M2_R0_U0_UMO");
    /* and P = 0 plru-rand is plru */
    expect_equivalent("plru", "plru-rand:0");
}

/* ---------------------------------------------------------------- random */

static void test_random_reproducible(void **state)
{
    (void)state;
    const char *specs[] = {"random", "plru-rand:0.25"};
    for (int k = 0; k < 2; k++) {
        char seq[201], a[201], b[201], c[201];
        gx_rng rng;
        gx_rng_seed(&rng, 5);
        for (int i = 0; i < 200; i++)
            seq[i] = (char)('a' + gx_rng_below(&rng, 12));
        seq[200] = '\0';
        replay(specs[k], 8, 42, seq, a);
        replay(specs[k], 8, 42, seq, b);
        replay(specs[k], 8, 43, seq, c);
        assert_string_equal(a, b);    /* same seed, same outcome */
        assert_string_not_equal(a, c); /* another seed, another outcome */
    }
}

static void test_random_cyclic_rate(void **state)
{
    (void)state;
    /* Cyclic walk over W+1 lines in W ways, random victims. One line is
     * always missing. When it is accessed (a miss), the victim is uniform
     * over the W resident lines, which are next needed 1..W accesses later;
     * so the next miss comes D accesses later, D uniform on 1..W, and every
     * access in between hits. Miss rate = 1/E[D] = 2/(W+1), hit rate
     * (W-1)/(W+1) (16 ways: 15/17 = 0.882; not 1 - 1/W). Renewal-process
     * sd of the miss rate over N accesses: sqrt(Var(D)/(E[D]^3 N)) with
     * Var(D) = (W^2-1)/12: 16 ways, N = 340k: 0.0003; the band is 0.004. */
    uint32_t rounds = gx_test_sanitizer() ? 5000 : 20000;
    const uint32_t ways[] = {4, 16};
    for (int k = 0; k < 2; k++) {
        uint32_t w = ways[k];
        double want = (double)(w - 1) / (w + 1);
        double got = cyclic_hit_rate("random", w, 9, w + 1, 10, rounds);
        if (fabs(got - want) > 0.004 * (w == 4 ? 2 : 1))
            fail_msg("random %u ways, cyclic %u lines: hit rate %.4f, want %.4f", w, w + 1,
                     got, want);
        /* exactly W lines fit: after the first round every access hits */
        assert_true(cyclic_hit_rate("random", w, 9, w, 1, 100) == 1.0);
    }
}

static void test_plru_rand_rates(void **state)
{
    (void)state;
    uint32_t rounds = gx_test_sanitizer() ? 3000 : 10000;
    /* Round-robin walk over exactly W lines: everything fits, 100% hits
     * after the warm-up for plain PLRU (P = 0) and for any P, since a set
     * that never misses never needs a victim. */
    const char *ps[] = {"plru-rand:0", "plru-rand:0.05", "plru-rand:0.25", "plru-rand:1"};
    for (int k = 0; k < 4; k++)
        assert_true(cyclic_hit_rate(ps[k], 16, 1, 16, 1, 200) == 1.0);
    /* Over W+1 lines plain tree PLRU always evicts the line needed next
     * (like LRU), so P = 0 hits never; every random victim can break the
     * pattern, so the hit rate RISES with P, up to random replacement's
     * (W-1)/(W+1) at P = 1 (16 ways: 0.882). Measured: P = 0.05 ~0.39,
     * 0.25 ~0.76. */
    double r0 = cyclic_hit_rate("plru-rand:0", 16, 1, 17, 10, rounds);
    double r5 = cyclic_hit_rate("plru-rand:0.05", 16, 1, 17, 10, rounds);
    double r25 = cyclic_hit_rate("plru-rand:0.25", 16, 1, 17, 10, rounds);
    double r100 = cyclic_hit_rate("plru-rand:1", 16, 1, 17, 10, rounds);
    assert_true(r0 == 0.0);
    assert_true(cyclic_hit_rate("plru", 16, 1, 17, 10, 100) == 0.0);
    assert_true(r5 > 0.2 && r5 < r25 - 0.1);
    assert_true(r25 < r100 - 0.05);
    if (fabs(r100 - 15.0 / 17.0) > 0.006)
        fail_msg("plru-rand:1 cyclic 17 lines in 16 ways: %.4f, want %.4f", r100, 15.0 / 17);
}

/* ---------------------------------------------------------------- specs */

static void expect_spec(const char *spec, const char *canonical)
{
    gx_policy p;
    gx_msg msg;
    int rc = gx_policy_from_spec(spec, &p, &msg);
    if (rc != GX_OK)
        fail_msg("%s: %s", spec, msg.text);
    assert_string_equal(p.spec, canonical);
}

static void expect_spec_error(const char *spec, int code, const char *needle)
{
    gx_policy p;
    gx_msg msg;
    msg.text[0] = '\0';
    int rc = gx_policy_from_spec(spec, &p, &msg);
    if (rc != code)
        fail_msg("%s: code %d (%s), want %d", spec, rc, msg.text, code);
    if (!strstr(msg.text, needle))
        fail_msg("%s: message \"%s\" lacks \"%s\"", spec, msg.text, needle);
    if (*spec && !strstr(msg.text, spec))
        fail_msg("%s: message \"%s\" does not name the spec", spec, msg.text);
}

static void test_spec_parsing(void **state)
{
    (void)state;
    expect_spec("lru", "lru");
    expect_spec("LRU", "lru");
    expect_spec("srrip", "srrip-hp");
    expect_spec("plru-rand:0.050", "plru-rand:0.05");
    expect_spec("plru-rand:1", "plru-rand:1");
    expect_spec("plru-rand:0.3", "plru-rand:0.3");
    expect_spec("qlru:h11_m1_r0_u0_umo", "qlru:H11_M1_R0_U0_UMO");
    expect_spec("QLRU_H00_M1_R2_U1", "qlru:H00_M1_R2_U1"); /* nanoBench's name */
    expect_spec("qlru:H11_M1_R1_U3", "qlru:H11_M1_R1_U3");
    gx_policy p;
    assert_int_equal(gx_policy_from_spec("plru-rand:0.25", &p, NULL), GX_OK);
    assert_true(p.params.p == 0.25);
    assert_true(p.ops->randomized);

    expect_spec_error("", GX_EINVAL, "empty");
    expect_spec_error("lruu", GX_EINVAL, "unknown family");
    expect_spec_error("lru:3", GX_EINVAL, "no arguments");
    expect_spec_error("plru-rand", GX_EINVAL, "probability");
    expect_spec_error("plru-rand:", GX_EINVAL, "probability");
    expect_spec_error("plru-rand:1.5", GX_ERANGE, "outside [0,1]");
    expect_spec_error("plru-rand:-0.1", GX_ERANGE, "outside [0,1]");
    expect_spec_error("plru-rand:nan", GX_ERANGE, "outside [0,1]");
    expect_spec_error("plru-rand:0.1x", GX_EINVAL, "not a number");
    expect_spec_error("qlru", GX_EINVAL, "letters");
    expect_spec_error("qlru:H12_M1_R0_U0", GX_EINVAL, "H12");
    expect_spec_error("qlru:H11_M4_R0_U0", GX_EINVAL, "M4");
    expect_spec_error("qlru:H11_M1_R3_U0", GX_EINVAL, "R3");
    expect_spec_error("qlru:H11_M1_R0_U4", GX_EINVAL, "U4");
    expect_spec_error("qlru:H11_M1_R0", GX_EINVAL, "missing the update rule");
    expect_spec_error("qlru:H11_M1_R0_U0_XY", GX_EINVAL, "XY");
    expect_spec_error("qlru:H11_M1_R0_U0_UMO_UMO", GX_EINVAL, "unexpected");
    expect_spec_error("qlru:H11_M1_R0_U2", GX_EINVAL, "needs U0 or U1");
    expect_spec_error("qlru:M1_H11_R0_U0", GX_EINVAL, "hit rule");

    gx_policy_set *s = NULL;
    gx_msg msg;
    assert_int_equal(gx_policy_set_new("lru", 0, 1, &s, &msg), GX_EINVAL);
    assert_null(s);
    assert_int_equal(gx_policy_set_new("lru", 65, 1, &s, &msg), GX_EINVAL);
    assert_int_equal(gx_policy_set_new("nope", 4, 1, &s, &msg), GX_EINVAL);
    assert_non_null(strstr(msg.text, "nope"));
}

static void test_registry_and_candidates(void **state)
{
    (void)state;
    /* every family: name, help, state size <= 64 bytes and 8-aligned */
    size_t nf = gx_policy_family_count();
    assert_true(nf >= 10);
    assert_null(gx_policy_family(nf));
    for (size_t i = 0; i < nf; i++) {
        const gx_policy_ops *ops = gx_policy_family(i);
        assert_non_null(ops->family);
        assert_non_null(ops->help);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(ops->family, gx_policy_family(j)->family);
    }
    /* every candidate parses, round-trips, and its family is registered */
    size_t nc = gx_policy_candidate_count();
    assert_true(nc >= 15);
    assert_null(gx_policy_candidate(nc));
    int family_seen[32] = {0};
    for (size_t i = 0; i < nc; i++) {
        const char *c = gx_policy_candidate(i);
        gx_policy p;
        gx_msg msg;
        if (gx_policy_from_spec(c, &p, &msg) != GX_OK)
            fail_msg("candidate %s: %s", c, msg.text);
        assert_string_equal(p.spec, c);
        for (uint32_t w = 1; w <= GX_POLICY_MAX_WAYS; w++) {
            size_t b = p.ops->state_bytes(w, &p.params);
            assert_true(b <= 64 && b % 8 == 0);
        }
        for (size_t f = 0; f < nf; f++)
            if (gx_policy_family(f) == p.ops)
                family_seen[f] = 1;
    }
    for (size_t f = 0; f < nf; f++)
        if (!family_seen[f])
            fail_msg("family %s has no candidate", gx_policy_family(f)->family);
}

/* Deterministic candidates must be pairwise distinguishable by some random
 * sequence on W+1..2W lines (else inference could never tell them apart). */
static void test_candidates_distinguishable(void **state)
{
    (void)state;
    enum { N = 2000 };
    static char out[32][N + 1];
    const char *det[32];
    size_t nd = 0;
    for (size_t i = 0; i < gx_policy_candidate_count() && nd < 32; i++) {
        gx_policy p;
        assert_int_equal(gx_policy_from_spec(gx_policy_candidate(i), &p, NULL), GX_OK);
        if (!p.ops->randomized)
            det[nd++] = gx_policy_candidate(i);
    }
    gx_rng rng;
    gx_rng_seed(&rng, 77);
    uint64_t seq[N];
    for (int i = 0; i < N; i++)
        seq[i] = gx_rng_below(&rng, 9 + (uint64_t)(i / 200) % 8); /* 9..16 lines */
    for (size_t k = 0; k < nd; k++) {
        gx_policy_set *s = NULL;
        assert_int_equal(gx_policy_set_new(det[k], 8, 1, &s, NULL), GX_OK);
        for (int i = 0; i < N; i++)
            out[k][i] = gx_policy_set_access(s, seq[i]) ? 'H' : 'M';
        out[k][N] = '\0';
        gx_policy_set_free(s);
    }
    for (size_t a = 0; a < nd; a++)
        for (size_t b = 0; b < a; b++)
            if (strcmp(out[a], out[b]) == 0)
                fail_msg("%s and %s give identical outcomes", det[a], det[b]);
}

/* Invalidation: the freed way is refilled first, nothing else is lost. */
static void test_invalidate(void **state)
{
    (void)state;
    /* LRU: A B C D, drop B (its way becomes least recent), E fills B's
     * way without evicting; order E D C A; F evicts A, then A misses. */
    gx_policy_set *s = NULL;
    assert_int_equal(gx_policy_set_new("lru", 4, 1, &s, NULL), GX_OK);
    const char *seq = "ABCD";
    for (int i = 0; i < 4; i++)
        assert_int_equal(gx_policy_set_access(s, (uint64_t)seq[i]), 0);
    assert_int_equal(gx_policy_set_invalidate(s, 'B'), 1);
    assert_int_equal(gx_policy_set_invalidate(s, 'B'), 0);
    assert_int_equal(gx_policy_set_access(s, 'E'), 0);
    assert_int_equal(gx_policy_set_access(s, 'C'), 1);
    assert_int_equal(gx_policy_set_access(s, 'F'), 0); /* evicts A */
    assert_int_equal(gx_policy_set_access(s, 'D'), 1);
    assert_int_equal(gx_policy_set_access(s, 'A'), 0);
    gx_policy_set_free(s);

    for (size_t i = 0; i < gx_policy_candidate_count(); i++) {
        const char *c = gx_policy_candidate(i);
        for (uint32_t w = 2; w <= 64; w *= 2) {
            assert_int_equal(gx_policy_set_new(c, w, 3, &s, NULL), GX_OK);
            for (uint32_t r = 0; r < 3; r++) /* W lines, all resident */
                for (uint64_t x = 0; x < w; x++)
                    gx_policy_set_access(s, x);
            assert_int_equal(gx_policy_set_invalidate(s, w / 2), 1);
            assert_int_equal(gx_policy_set_access(s, 1000), 0);
            for (uint64_t x = 0; x < w; x++)
                if (x != w / 2 && !gx_policy_set_access(s, x))
                    fail_msg("%s, %u ways: line %llu lost after an invalidation", c, w,
                             (unsigned long long)x);
            assert_int_equal(gx_policy_set_access(s, 1000), 1);
            gx_policy_set_reset(s);
            assert_int_equal(gx_policy_set_access(s, 1000), 0);
            gx_policy_set_free(s);
        }
    }
}

/* Equivalence classes discovery cannot split: checked by simulation too. */
static void test_equivalent(void **state)
{
    (void)state;
    assert_true(gx_policy_equivalent("lru", "lru", 8));
    assert_true(gx_policy_equivalent("qlru:H00_M1_R0_U1", "qlru:H00_M1_R2_U1", 16));
    assert_true(gx_policy_equivalent("QLRU_H00_M1_R2_U1", "qlru:H00_M1_R0_U1", 4));
    assert_false(gx_policy_equivalent("qlru:H00_M1_R0_U1", "qlru:H11_M1_R0_U0", 16));
    assert_true(gx_policy_equivalent("lru", "plru", 2));
    assert_true(gx_policy_equivalent("mru", "plru", 2));
    assert_false(gx_policy_equivalent("lru", "plru", 4));
    assert_false(gx_policy_equivalent("lru", "fifo", 2));
    assert_true(gx_policy_equivalent("lru", "fifo", 1));
    assert_false(gx_policy_equivalent("lru", "no-such-policy", 1));
    /* 2 ways: lru, plru and mru give the same outcomes on a random sequence */
    const char *same[] = {"lru", "plru", "mru"};
    int out[3][400];
    for (int k = 0; k < 3; k++) {
        gx_policy_set *set = NULL;
        assert_int_equal(gx_policy_set_new(same[k], 2, 1, &set, NULL), GX_OK);
        gx_rng r;
        gx_rng_seed(&r, 5);
        for (int i = 0; i < 400; i++)
            out[k][i] = gx_policy_set_access(set, gx_rng_below(&r, 4));
        gx_policy_set_free(set);
    }
    assert_memory_equal(out[0], out[1], sizeof out[0]);
    assert_memory_equal(out[0], out[2], sizeof out[0]);
}

/* A family's real parameter, typed in the registry: plru-rand names P and
 * its grid; gx_policy_with_real sets it (canonical spec, range checked);
 * a family without one is refused. */
static void test_real_parameter(void **state)
{
    (void)state;
    gx_policy base, at;
    gx_msg m;
    assert_int_equal(gx_policy_from_spec("plru-rand:0.05", &base, &m), GX_OK);
    assert_string_equal(base.ops->real_param, "P");
    assert_true(base.ops->n_real_grid >= 2);
    for (size_t g = 1; g < base.ops->n_real_grid; g++)
        assert_true(base.ops->real_grid[g] > base.ops->real_grid[g - 1]);
    assert_int_equal(gx_policy_with_real(&base, 0.25, &at, &m), GX_OK);
    assert_string_equal(at.spec, "plru-rand:0.25");
    assert_true(at.params.p == 0.25);
    assert_int_not_equal(gx_policy_with_real(&base, 1.5, &at, &m), GX_OK);
    assert_int_equal(gx_policy_from_spec("lru", &base, &m), GX_OK);
    assert_null(base.ops->real_param);
    assert_int_not_equal(gx_policy_with_real(&base, 0.5, &at, &m), GX_OK);
    assert_non_null(strstr(m.text, "no real parameter"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_parameter),
        cmocka_unit_test(test_lru_golden),
        cmocka_unit_test(test_fifo_golden),
        cmocka_unit_test(test_plru_golden),
        cmocka_unit_test(test_plru_non_power_of_two),
        cmocka_unit_test(test_mru_golden),
        cmocka_unit_test(test_nru_golden),
        cmocka_unit_test(test_srrip_hp_paper),
        cmocka_unit_test(test_srrip_fp_golden),
        cmocka_unit_test(test_qlru_h11_m1_r0_u0),
        cmocka_unit_test(test_qlru_h00_m1_r2_u1),
        cmocka_unit_test(test_qlru_h21_m2_r0_u0),
        cmocka_unit_test(test_qlru_h00_m1_r0_u1),
        cmocka_unit_test(test_qlru_h11_m1_r1_u2),
        cmocka_unit_test(test_qlru_umo_is_srrip),
        cmocka_unit_test(test_random_reproducible),
        cmocka_unit_test(test_random_cyclic_rate),
        cmocka_unit_test(test_plru_rand_rates),
        cmocka_unit_test(test_spec_parsing),
        cmocka_unit_test(test_registry_and_candidates),
        cmocka_unit_test(test_candidates_distinguishable),
        cmocka_unit_test(test_invalidate),
        cmocka_unit_test(test_equivalent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
