/* gf2.c - linear algebra over GF(2) on 64-bit vectors (see gf2.h).
 *
 * Notes: a basis is kept fully reduced (every pivot appears in exactly one
 * basis vector), so reducing a vector is one pass over the basis in any
 * order, and the null space can be read off directly: for each free bit f of
 * the space, e_f plus the pivots of the rows that contain f. */
#include "gf2.h"

#include <string.h>
#include "gpuxray/bits.h"

void gx_gf2_basis_init(gx_gf2_basis *b)
{
    b->n = 0;
}

uint64_t gx_gf2_basis_reduce(const gx_gf2_basis *b, uint64_t x)
{
    for (int i = 0; i < b->n; i++)
        if ((x >> b->pivot[i]) & 1u)
            x ^= b->v[i];
    return x;
}

int gx_gf2_basis_add(gx_gf2_basis *b, uint64_t x)
{
    x = gx_gf2_basis_reduce(b, x);
    if (!x || b->n >= GX_GF2_MAX)
        return 0;
    int p = gx_high_bit_u64(x);
    /* keep the basis reduced: remove the new pivot from the other rows */
    for (int i = 0; i < b->n; i++)
        if ((b->v[i] >> p) & 1u)
            b->v[i] ^= x;
    b->v[b->n] = x;
    b->pivot[b->n] = p;
    b->n++;
    return 1;
}

int gx_gf2_basis_contains(const gx_gf2_basis *b, uint64_t x)
{
    return gx_gf2_basis_reduce(b, x) == 0;
}

void gx_gf2_basis_from(gx_gf2_basis *b, const uint64_t *v, size_t n)
{
    gx_gf2_basis_init(b);
    for (size_t i = 0; i < n; i++)
        gx_gf2_basis_add(b, v[i]);
}

int gx_gf2_basis_equal(const gx_gf2_basis *a, const gx_gf2_basis *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (!gx_gf2_basis_contains(b, a->v[i]))
            return 0;
    return 1;
}

void gx_gf2_basis_sort(gx_gf2_basis *b)
{
    /* insertion sort, at most 64 entries */
    for (int i = 1; i < b->n; i++) {
        uint64_t v = b->v[i];
        int p = b->pivot[i], j = i - 1;
        while (j >= 0 && b->pivot[j] < p) {
            b->v[j + 1] = b->v[j];
            b->pivot[j + 1] = b->pivot[j];
            j--;
        }
        b->v[j + 1] = v;
        b->pivot[j + 1] = p;
    }
}

int gx_gf2_rank(const uint64_t *v, size_t n)
{
    gx_gf2_basis b;
    gx_gf2_basis_from(&b, v, n);
    return b.n;
}

int gx_gf2_rref(uint64_t *rows, size_t n)
{
    gx_gf2_basis b;
    gx_gf2_basis_from(&b, rows, n);
    gx_gf2_basis_sort(&b);
    for (size_t i = 0; i < n; i++)
        rows[i] = (int)i < b.n ? b.v[i] : 0;
    return b.n;
}

int gx_gf2_basis_annihilator(const gx_gf2_basis *b, uint64_t space, uint64_t *out)
{
    /* restrict the rows to the space, re-reduce */
    gx_gf2_basis r;
    gx_gf2_basis_init(&r);
    for (int i = 0; i < b->n; i++)
        gx_gf2_basis_add(&r, b->v[i] & space);
    uint64_t pivots = 0;
    for (int i = 0; i < r.n; i++)
        pivots |= 1ull << r.pivot[i];
    int k = 0;
    for (uint64_t f = space & ~pivots; f; f &= f - 1) {
        int bit = __builtin_ctzll(f);
        uint64_t x = 1ull << bit;
        for (int i = 0; i < r.n; i++)
            if ((r.v[i] >> bit) & 1u)
                x |= 1ull << r.pivot[i];
        out[k++] = x;
    }
    return k;
}

int gx_gf2_annihilator(const uint64_t *v, size_t n, uint64_t space, uint64_t *out)
{
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (size_t i = 0; i < n; i++)
        gx_gf2_basis_add(&b, v[i] & space);
    return gx_gf2_basis_annihilator(&b, space, out);
}

/* A reduced basis with a right-hand side bit per row. */
typedef struct aug_basis {
    int n;
    uint64_t v[GX_GF2_MAX];
    uint8_t y[GX_GF2_MAX];
    int pivot[GX_GF2_MAX];
} aug_basis;

/* Returns 0 on a contradiction (0 == 1), else 1. */
static int aug_add(aug_basis *b, uint64_t x, uint8_t y)
{
    for (int i = 0; i < b->n; i++)
        if ((x >> b->pivot[i]) & 1u) {
            x ^= b->v[i];
            y ^= b->y[i];
        }
    if (!x)
        return y == 0;
    int p = gx_high_bit_u64(x);
    for (int i = 0; i < b->n; i++)
        if ((b->v[i] >> p) & 1u) {
            b->v[i] ^= x;
            b->y[i] ^= y;
        }
    b->v[b->n] = x;
    b->y[b->n] = y;
    b->pivot[b->n] = p;
    b->n++;
    return 1;
}

int gx_gf2_solve(const uint64_t *a, const uint8_t *y, size_t n, uint64_t space, uint64_t *m,
                 uint64_t *null, int *null_dim)
{
    aug_basis b;
    b.n = 0;
    int ok = 1;
    for (size_t j = 0; j < n && ok; j++)
        ok = aug_add(&b, a[j] & space, (uint8_t)(y[j] & 1u));
    uint64_t sol = 0;
    if (ok)
        for (int i = 0; i < b.n; i++)
            if (b.y[i])
                sol |= 1ull << b.pivot[i];
    *m = sol;
    if (null) {
        gx_gf2_basis g;
        g.n = b.n;
        memcpy(g.v, b.v, sizeof(uint64_t) * (size_t)b.n);
        memcpy(g.pivot, b.pivot, sizeof(int) * (size_t)b.n);
        int d = gx_gf2_basis_annihilator(&g, space, null);
        if (null_dim)
            *null_dim = d;
    }
    return ok;
}

int gx_gf2_preimage(const uint64_t *masks, int k, uint64_t space, uint64_t y, uint64_t *x)
{
    uint8_t bits[GX_GF2_MAX];
    int kk = k > GX_GF2_MAX ? GX_GF2_MAX : k;
    for (int i = 0; i < kk; i++)
        bits[i] = (uint8_t)((y >> i) & 1u);
    return gx_gf2_solve(masks, bits, (size_t)kk, space, x, NULL, NULL);
}

int gx_gf2_intersect(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t space,
                     uint64_t *out)
{
    uint64_t ann[2 * GX_GF2_MAX];
    int ka = gx_gf2_annihilator(a, na, space, ann);
    int kb = gx_gf2_annihilator(b, nb, space, ann + ka);
    return gx_gf2_annihilator(ann, (size_t)(ka + kb), space, out);
}

int gx_gf2_complement_bits(const uint64_t *v, size_t n, uint64_t space, uint64_t *out)
{
    gx_gf2_basis b;
    gx_gf2_basis_from(&b, v, n);
    int k = 0;
    for (uint64_t f = space; f; f &= f - 1) {
        uint64_t e = f & (~f + 1);
        if (gx_gf2_basis_add(&b, e))
            out[k++] = e;
    }
    return k;
}
