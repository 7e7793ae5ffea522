/* test_gf2.c - GF(2) linear algebra (src/infer/gf2.c): rank, reduced row
 * echelon form, solving, null spaces, intersections and complements, on
 * hand-made matrices and on random round trips checked by brute force. */
#include "testutil.h"

#include "gpuxray/rng.h"
#include "infer/slice/gf2.h"

static void test_rank_known(void **state)
{
    (void)state;
    uint64_t id[4] = {1, 2, 4, 8};
    assert_int_equal(gx_gf2_rank(id, 4), 4);
    uint64_t dep[4] = {0x3, 0x5, 0x6, 0x0}; /* 0x6 = 0x3 ^ 0x5 */
    assert_int_equal(gx_gf2_rank(dep, 4), 2);
    uint64_t zero[2] = {0, 0};
    assert_int_equal(gx_gf2_rank(zero, 2), 0);
    assert_int_equal(gx_gf2_rank(NULL, 0), 0);
    uint64_t high[3] = {1ull << 63, (1ull << 63) | 1, 1};
    assert_int_equal(gx_gf2_rank(high, 3), 2);
}

static void test_rref_known(void **state)
{
    (void)state;
    uint64_t rows[3] = {0x6, 0x3, 0x5};
    int r = gx_gf2_rref(rows, 3);
    assert_int_equal(r, 2);
    /* span{011,101,110}: reduced with pivots 2 and 1: 101 and 011 */
    assert_true(rows[0] == 0x5 && rows[1] == 0x3 && rows[2] == 0);
}

static void test_basis_ops(void **state)
{
    (void)state;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    assert_int_equal(gx_gf2_basis_add(&b, 0xF0), 1);
    assert_int_equal(gx_gf2_basis_add(&b, 0x0F), 1);
    assert_int_equal(gx_gf2_basis_add(&b, 0xFF), 0);
    assert_int_equal(gx_gf2_basis_add(&b, 0), 0);
    assert_int_equal(b.n, 2);
    assert_true(gx_gf2_basis_contains(&b, 0xFF));
    assert_false(gx_gf2_basis_contains(&b, 0x01));
    assert_true(gx_gf2_basis_reduce(&b, 0xF0 ^ 0x01) != 0);
    gx_gf2_basis c;
    uint64_t v[2] = {0xFF, 0x0F};
    gx_gf2_basis_from(&c, v, 2);
    assert_true(gx_gf2_basis_equal(&b, &c));
    uint64_t w[2] = {0xFF, 0x01};
    gx_gf2_basis_from(&c, w, 2);
    assert_false(gx_gf2_basis_equal(&b, &c));
}

static void test_annihilator_known(void **state)
{
    (void)state;
    /* masks of a 2-bit index over bits 0..3: x0^x1 and x2 */
    uint64_t masks[2] = {0x3, 0x4};
    uint64_t ker[64];
    int k = gx_gf2_annihilator(masks, 2, 0xF, ker);
    assert_int_equal(k, 2);
    /* the kernel is span{0x3, 0x8} */
    gx_gf2_basis kb, want;
    gx_gf2_basis_from(&kb, ker, (size_t)k);
    uint64_t wv[2] = {0x3, 0x8};
    gx_gf2_basis_from(&want, wv, 2);
    assert_true(gx_gf2_basis_equal(&kb, &want));
    /* and back: the annihilator of the kernel is the masks' span */
    uint64_t back[64];
    int kk = gx_gf2_annihilator(ker, (size_t)k, 0xF, back);
    gx_gf2_basis bb, mb;
    gx_gf2_basis_from(&bb, back, (size_t)kk);
    gx_gf2_basis_from(&mb, masks, 2);
    assert_true(gx_gf2_basis_equal(&bb, &mb));
    /* restricted to a space: bits outside are ignored */
    uint64_t big[1] = {0x100 | 0x1};
    k = gx_gf2_annihilator(big, 1, 0x3, ker);
    assert_int_equal(k, 1);
    assert_true(ker[0] == 0x2);
}

static void test_solve_known(void **state)
{
    (void)state;
    /* find m over bits 0..2 with m.001 = 1, m.010 = 0, m.111 = 0 -> m = 101 */
    uint64_t a[3] = {0x1, 0x2, 0x7};
    uint8_t y[3] = {1, 0, 0};
    uint64_t m = 0, null[64];
    int nd = -1;
    assert_int_equal(gx_gf2_solve(a, y, 3, 0x7, &m, null, &nd), 1);
    assert_true(m == 0x5);
    assert_int_equal(nd, 0);
    /* inconsistent: x.1 = 1 and x.1 = 0 */
    uint64_t b[2] = {0x1, 0x1};
    uint8_t z[2] = {1, 0};
    assert_int_equal(gx_gf2_solve(b, z, 2, 0xF, &m, NULL, NULL), 0);
    /* underdetermined: one equation over 3 bits -> 2-dim null space */
    uint8_t one[1] = {1};
    uint64_t c[1] = {0x6};
    assert_int_equal(gx_gf2_solve(c, one, 1, 0x7, &m, null, &nd), 1);
    assert_int_equal(nd, 2);
    assert_int_equal(gx_gf2_dot(m, 0x6), 1);
    for (int i = 0; i < nd; i++)
        assert_int_equal(gx_gf2_dot(null[i], 0x6), 0);
}

static uint64_t rand_in(gx_rng *r, uint64_t space)
{
    return gx_rng_next(r) & space;
}

/* Random masks; the kernel found by annihilator is exactly the set of x in
 * space with apply(masks, x) == 0 (brute force over a 12-bit space). */
static void test_random_kernel_bruteforce(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 11);
    const uint64_t space = 0xFFF0; /* bits 4..15 */
    for (int trial = 0; trial < 50; trial++) {
        int k = 1 + (int)gx_rng_below(&r, 6);
        uint64_t masks[8];
        for (int i = 0; i < k; i++)
            masks[i] = rand_in(&r, space) | (gx_rng_next(&r) & 0xF0000); /* junk above */
        uint64_t ker[64];
        int d = gx_gf2_annihilator(masks, (size_t)k, space, ker);
        int rank = 0;
        {
            uint64_t restricted[8];
            for (int i = 0; i < k; i++)
                restricted[i] = masks[i] & space;
            rank = gx_gf2_rank(restricted, (size_t)k);
        }
        assert_int_equal(d, 12 - rank);
        gx_gf2_basis kb;
        gx_gf2_basis_from(&kb, ker, (size_t)d);
        assert_int_equal(kb.n, d);
        int count = 0;
        for (uint64_t x = 0; x < (1u << 12); x++) {
            uint64_t v = x << 4;
            int in_ker = gx_gf2_apply(masks, k, v) == 0;
            assert_int_equal(in_ker, gx_gf2_basis_contains(&kb, v));
            count += in_ker;
        }
        assert_int_equal(count, 1 << d);
    }
}

/* Random consistent systems: solve returns a solution satisfying every
 * equation; adding a contradiction makes it fail. */
static void test_random_solve_roundtrip(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 12);
    const uint64_t space = ((1ull << 40) - 1) << 6;
    for (int trial = 0; trial < 200; trial++) {
        uint64_t secret = rand_in(&r, space);
        size_t n = 1 + gx_rng_below(&r, 60);
        uint64_t a[64];
        uint8_t y[64];
        for (size_t j = 0; j < n; j++) {
            a[j] = gx_rng_next(&r);
            y[j] = (uint8_t)gx_gf2_dot(a[j], secret);
        }
        uint64_t m = 0, null[64];
        int nd = 0;
        assert_int_equal(gx_gf2_solve(a, y, n, space, &m, null, &nd), 1);
        assert_true((m & ~space) == 0);
        for (size_t j = 0; j < n; j++)
            assert_int_equal(gx_gf2_dot(a[j], m), y[j]);
        /* secret ^ m is a homogeneous solution: in span(null) */
        gx_gf2_basis nb;
        gx_gf2_basis_from(&nb, null, (size_t)nd);
        assert_true(gx_gf2_basis_contains(&nb, secret ^ m));
        uint64_t ar[64];
        for (size_t j = 0; j < n; j++)
            ar[j] = a[j] & space;
        assert_int_equal(nd, 40 - gx_gf2_rank(ar, n));
        /* a contradiction: the sum of two equations with the wrong parity */
        if (n >= 2 && n < 64) {
            a[n] = a[0] ^ a[1];
            y[n] = (uint8_t)(y[0] ^ y[1] ^ 1u);
            assert_int_equal(gx_gf2_solve(a, y, n + 1, space, &m, NULL, NULL), 0);
        }
    }
}

static void test_preimage(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 13);
    const uint64_t space = 0x1FFF80; /* bits 7..20 */
    for (int trial = 0; trial < 100; trial++) {
        uint64_t masks[6];
        for (int i = 0; i < 6; i++)
            masks[i] = rand_in(&r, space);
        int rank = gx_gf2_rank(masks, 6);
        int reached = 0;
        for (uint64_t y = 0; y < 64; y++) {
            uint64_t x = 0;
            if (gx_gf2_preimage(masks, 6, space, y, &x)) {
                assert_true((x & ~space) == 0);
                assert_true(gx_gf2_apply(masks, 6, x) == y);
                reached++;
            }
        }
        assert_int_equal(reached, 1 << rank);
    }
}

static void test_intersect_and_complement(void **state)
{
    (void)state;
    uint64_t a[2] = {0x1, 0x2};   /* span{e0, e1} */
    uint64_t b[2] = {0x3, 0x4};   /* span{e0+e1, e2} */
    uint64_t out[64];
    int d = gx_gf2_intersect(a, 2, b, 2, 0xF, out);
    assert_int_equal(d, 1);
    assert_true(out[0] == 0x3);
    /* random: intersection contains exactly the common vectors (brute force) */
    gx_rng r;
    gx_rng_seed(&r, 14);
    for (int trial = 0; trial < 30; trial++) {
        uint64_t u[5], v[5];
        for (int i = 0; i < 5; i++) {
            u[i] = gx_rng_below(&r, 1024);
            v[i] = gx_rng_below(&r, 1024);
        }
        d = gx_gf2_intersect(u, 5, v, 5, 0x3FF, out);
        gx_gf2_basis ub, vb, ib;
        gx_gf2_basis_from(&ub, u, 5);
        gx_gf2_basis_from(&vb, v, 5);
        gx_gf2_basis_from(&ib, out, (size_t)d);
        assert_int_equal(ib.n, d);
        for (uint64_t x = 0; x < 1024; x++)
            assert_int_equal(gx_gf2_basis_contains(&ib, x),
                             gx_gf2_basis_contains(&ub, x) && gx_gf2_basis_contains(&vb, x));
        /* complement bits: together with u they span the whole space */
        uint64_t comp[64];
        int c = gx_gf2_complement_bits(u, 5, 0x3FF, comp);
        assert_int_equal(c, 10 - ub.n);
        gx_gf2_basis all = ub;
        for (int i = 0; i < c; i++) {
            assert_int_equal(__builtin_popcountll(comp[i]), 1);
            assert_int_equal(gx_gf2_basis_add(&all, comp[i]), 1);
        }
        assert_int_equal(all.n, 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_known),
        cmocka_unit_test(test_rref_known),
        cmocka_unit_test(test_basis_ops),
        cmocka_unit_test(test_annihilator_known),
        cmocka_unit_test(test_solve_known),
        cmocka_unit_test(test_random_kernel_bruteforce),
        cmocka_unit_test(test_random_solve_roundtrip),
        cmocka_unit_test(test_preimage),
        cmocka_unit_test(test_intersect_and_complement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
