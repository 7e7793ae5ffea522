/* gf2.h - linear algebra over GF(2) on 64-bit vectors: rank, reduced row
 * echelon form, incremental bases, linear systems, null spaces
 * (annihilators), span intersection. Used by discovery to turn "same class /
 * different class" observations on addresses into XOR masks.
 *
 * Notes:
 * - A vector is a uint64_t; bit i is coordinate i (for addresses: PA bit i).
 * - The dot product is parity(a & b). A mask m "annihilates" v when
 *   parity(m & v) == 0. For an index function with masks M, the set of
 *   address differences that do not change the index is the annihilator of
 *   the masks, and the masks' span is the annihilator of that kernel (both
 *   taken inside a "space": a mask of the coordinates that exist, e.g. the
 *   observable line-address bits).
 * - A basis in reduced form: every basis vector has a pivot (its highest
 *   set bit) that no other basis vector contains. Reduction by such a basis
 *   does not depend on the order of its vectors.
 * - All functions are pure (no allocation, no I/O); at most 64 vectors in a
 *   basis (GX_GF2_MAX). */
#ifndef GPUXRAY_INFER_GF2_H
#define GPUXRAY_INFER_GF2_H

#include <stddef.h>
#include <stdint.h>

#define GX_GF2_MAX 64

/* A subspace, kept as a reduced basis (see Notes). */
typedef struct gx_gf2_basis {
    int n;                    /* dimension (number of basis vectors) */
    uint64_t v[GX_GF2_MAX];   /* basis vectors */
    int pivot[GX_GF2_MAX];    /* pivot bit of v[i] (its highest set bit) */
} gx_gf2_basis;

/* Parity of a & b (the dot product). */
static inline int gx_gf2_dot(uint64_t a, uint64_t b)
{
    return __builtin_parityll(a & b);
}

/* Apply k masks to x: bit i of the result = parity(x & masks[i]). */
static inline uint64_t gx_gf2_apply(const uint64_t *masks, int k, uint64_t x)
{
    uint64_t y = 0;
    for (int i = 0; i < k; i++)
        y |= (uint64_t)gx_gf2_dot(masks[i], x) << i;
    return y;
}

/* The empty basis (the zero subspace). */
void gx_gf2_basis_init(gx_gf2_basis *b);
/* x with every pivot bit of the basis cleared: 0 exactly when x is in the
 * span. The result is a canonical representative of x's coset. */
uint64_t gx_gf2_basis_reduce(const gx_gf2_basis *b, uint64_t x);
/* Add x to the span; returns 1 when it was independent (dimension grew),
 * 0 when it was already in the span. Keeps the basis reduced. */
int gx_gf2_basis_add(gx_gf2_basis *b, uint64_t x);
/* 1 when x is in the span. */
int gx_gf2_basis_contains(const gx_gf2_basis *b, uint64_t x);
/* Build a basis of the span of n vectors. */
void gx_gf2_basis_from(gx_gf2_basis *b, const uint64_t *v, size_t n);
/* 1 when both spans are equal. */
int gx_gf2_basis_equal(const gx_gf2_basis *a, const gx_gf2_basis *b);
/* Sort the basis vectors by decreasing pivot (a canonical form: two equal
 * spans then have identical arrays). */
void gx_gf2_basis_sort(gx_gf2_basis *b);

/* Rank of n vectors. */
int gx_gf2_rank(const uint64_t *v, size_t n);
/* Reduced row echelon form in place: returns the rank r; rows[0..r) are the
 * reduced basis sorted by decreasing pivot, rows[r..n) are zero. */
int gx_gf2_rref(uint64_t *rows, size_t n);

/* Null space / annihilator: a basis of { m subset of space : parity(m & v[j])
 * == 0 for every j }. Writes at most 64 vectors to out (one per bit of space
 * that is not a pivot); returns their number (the dimension), which is
 * popcount(space) - rank(v restricted to space). */
int gx_gf2_annihilator(const uint64_t *v, size_t n, uint64_t space, uint64_t *out);
/* Same as gx_gf2_annihilator for a basis. */
int gx_gf2_basis_annihilator(const gx_gf2_basis *b, uint64_t space, uint64_t *out);

/* Solve parity(m & a[j]) == y[j] (y[j] in {0,1}) for m subset of space.
 * Returns 1 when the system is consistent (*m gets one solution, with every
 * free coordinate 0), 0 when it is not (*m = 0). null (optional, room for
 * 64) gets a basis of the homogeneous solutions and *null_dim its size: all
 * solutions are *m xor span(null). */
int gx_gf2_solve(const uint64_t *a, const uint8_t *y, size_t n, uint64_t space, uint64_t *m,
                 uint64_t *null, int *null_dim);

/* A preimage: some x subset of space with apply(masks, k, x) == y. Returns 1
 * when one exists (*x = it), else 0. (For an index function: an address
 * offset whose index bits are y.) */
int gx_gf2_preimage(const uint64_t *masks, int k, uint64_t space, uint64_t y, uint64_t *x);

/* Intersection of two spans inside space (space must contain both):
 * annihilator(annihilator(A) + annihilator(B)). Writes a basis to out (room
 * for 64); returns its dimension. */
int gx_gf2_intersect(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t space,
                     uint64_t *out);

/* A complement of span(v) inside space made of unit vectors: the bits of
 * space, lowest first, that each add a dimension. Writes them (as single-bit
 * vectors) to out; returns how many (popcount(space) - rank). */
int gx_gf2_complement_bits(const uint64_t *v, size_t n, uint64_t space, uint64_t *out);

#endif
