/* slice_solve.h - the structure of a slice hash over the observable address
 * bits, from class labels of chosen lines of one page (discovery stage 5,
 * internal).
 *
 * Model: the class of a line at in-page offset x is T[M x ^ c], M a set of
 * XOR masks over the observable bits, T a table, c a per-page constant (the
 * bits above the page). A linear hash is the case where T is a bijection.
 * The solver finds the largest subspace G of offsets that never change the
 * class (class(x ^ g) == class(x) for every x), the masks M = annihilator of
 * G (as few as possible), and the table on one "cube" of 2^k lines that hits
 * every value of M x exactly once.
 *
 * Method (cube and anchors): the cube W = span of some unit bits, every line
 * of it labelled. For each further bit b, a few anchor lines x of W give
 * class(x ^ e_b); the translation t in W with class(x ^ t) == class(x ^ e_b)
 * for all anchors is unique when e_b lies in W + G, and then e_b ^ t is in
 * G; when no t fits, b joins the cube (W doubles). Anchors are added until
 * a chance match is improbable (product of the label frequencies below
 * `chance` / |W|); when the whole cube is used without reaching that, b
 * joins the cube too, and G inside the cube is recomputed exhaustively.
 * Cost: about 2^k + (bits - k) * (a few) labelled lines.
 *
 * Notes: pure code over a labelling callback (unit-tested with synthetic
 * hashes); labels are small non-negative ints (global class ids). */
#ifndef GPUXRAY_INFER_SLICE_SOLVE_H
#define GPUXRAY_INFER_SLICE_SOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "gf2.h"
#include "gpuxray/error.h"
#include "gpuxray/rng.h"

/* Label n in-page offsets (line-aligned, inside the space); returns GX_OK or
 * an error code (message in the caller's gx_msg). */
typedef int (*ssolve_label_fn)(void *user, const uint64_t *offs, size_t n, int *labels);

typedef struct ssolve_opts {
    int m0;              /* bits of the first, exhaustively labelled cube (default 5) */
    double chance;       /* accepted probability of a chance match per bit (default 1e-6) */
    int max_cube_bits;   /* refuse to grow the cube beyond this (default 16) */
} ssolve_opts;

typedef struct ssolve_result {
    uint64_t space;               /* observable bits (mask) */
    int k;                        /* number of masks */
    uint64_t masks[GX_GF2_MAX];   /* dual to cube: apply(masks, cube[i]) = 1 << i */
    uint64_t cube[GX_GF2_MAX];    /* k unit vectors (the cube's bits) */
    gx_gf2_basis kernel;          /* G (dimension popcount(space) - k) */
    int *table;                   /* 1 << k labels: table[apply(masks, x)] (owned) */
    int n_labels;                 /* distinct labels in table */
    int linear;                   /* every label exactly once: a linear hash */
    uint64_t lines;               /* lines labelled */
} ssolve_result;

void ssolve_opts_default(ssolve_opts *o);
int ssolve_run(uint64_t space, const ssolve_opts *opts, ssolve_label_fn fn, void *user,
               gx_rng *rng, ssolve_result *out, gx_msg *msg);
void ssolve_free(ssolve_result *r);

/* Class of in-page offset x on a page whose mask outputs are XORed with z. */
static inline int ssolve_predict(const ssolve_result *r, const int *table, uint64_t z, uint64_t x)
{
    return table[gx_gf2_apply(r->masks, r->k, x) ^ z];
}

/* The in-page offset of cube index y (XOR of the cube bits set in y). */
static inline uint64_t ssolve_cube_offset(const ssolve_result *r, uint64_t y)
{
    uint64_t x = 0;
    for (int i = 0; i < r->k; i++)
        if ((y >> i) & 1u)
            x ^= r->cube[i];
    return x;
}

#endif
