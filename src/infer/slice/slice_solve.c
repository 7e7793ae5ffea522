/* slice_solve.c - slice hash structure from labelled lines of one page, by
 * the cube-and-anchors method (see slice_solve.h).
 *
 * Notes:
 * - Every label asked for is memoised (anchors become cube lines when the
 *   cube doubles, so nothing is measured twice).
 * - The cube is kept "compressed": no non-zero element of it is in G (a
 *   translation inside the cube that never changes the class). After each
 *   doubling G inside the cube is recomputed exhaustively (|W|^2 label
 *   comparisons; the cube stays at most 2^max_cube_bits lines). */
#include "slice_solve.h"

#include <stdlib.h>
#include <string.h>

/* ---- memo: in-page offset -> label ----------------------------------------- */

typedef struct memo {
    size_t cap, n;
    uint64_t *key; /* UINT64_MAX = empty */
    int *val;
} memo;

static int memo_init(memo *m, size_t cap)
{
    m->cap = cap;
    m->n = 0;
    m->key = malloc(cap * sizeof *m->key);
    m->val = malloc(cap * sizeof *m->val);
    if (!m->key || !m->val)
        return GX_ENOMEM;
    memset(m->key, 0xff, cap * sizeof *m->key);
    return GX_OK;
}

static void memo_free(memo *m)
{
    free(m->key);
    free(m->val);
}

static size_t memo_slot(const memo *m, uint64_t k)
{
    size_t i = (size_t)(gx_mix64(k) & (m->cap - 1));
    while (m->key[i] != UINT64_MAX && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int memo_get(const memo *m, uint64_t k, int *v)
{
    size_t i = memo_slot(m, k);
    if (m->key[i] == UINT64_MAX)
        return 0;
    *v = m->val[i];
    return 1;
}

static int memo_put(memo *m, uint64_t k, int v)
{
    if (2 * (m->n + 1) > m->cap) {
        memo big;
        if (memo_init(&big, m->cap * 2) != GX_OK) {
            memo_free(&big);
            return GX_ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i] != UINT64_MAX) {
                size_t j = memo_slot(&big, m->key[i]);
                big.key[j] = m->key[i];
                big.val[j] = m->val[i];
                big.n++;
            }
        memo_free(m);
        *m = big;
    }
    size_t i = memo_slot(m, k);
    if (m->key[i] == UINT64_MAX)
        m->n++;
    m->key[i] = k;
    m->val[i] = v;
    return GX_OK;
}

/* ---- solver state ------------------------------------------------------------- */

typedef struct solver {
    uint64_t space;
    ssolve_label_fn fn;
    void *user;
    memo memo;
    int c;                        /* cube bits */
    uint64_t bits[GX_GF2_MAX];    /* cube bit vectors */
    int *lab;                     /* 1 << c labels */
    gx_gf2_basis G;
    gx_msg *msg;
} solver;

static uint64_t cube_elem(const solver *s, uint64_t idx)
{
    uint64_t x = 0;
    for (int i = 0; i < s->c; i++)
        if ((idx >> i) & 1u)
            x ^= s->bits[i];
    return x;
}

/* Label the offsets not yet in the memo (one oracle call), then fill out[]. */
static int label_many(solver *s, const uint64_t *offs, size_t n, int *out)
{
    uint64_t *ask = malloc((n ? n : 1) * sizeof *ask);
    int *got = malloc((n ? n : 1) * sizeof *got);
    if (!ask || !got) {
        free(ask);
        free(got);
        return gx_fail(s->msg, GX_ENOMEM, "slice solver: out of memory");
    }
    size_t na = 0;
    for (size_t i = 0; i < n; i++) {
        int v;
        if (!memo_get(&s->memo, offs[i], &v)) {
            int dup = 0;
            for (size_t j = 0; j < na && !dup; j++)
                dup = ask[j] == offs[i];
            if (!dup)
                ask[na++] = offs[i];
        }
    }
    int rc = na ? s->fn(s->user, ask, na, got) : GX_OK;
    for (size_t i = 0; rc == GX_OK && i < na; i++)
        rc = memo_put(&s->memo, ask[i], got[i]);
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        memo_get(&s->memo, offs[i], &out[i]);
    free(ask);
    free(got);
    return rc;
}

/* Add bit e to the cube: label cube ^ e. */
static int cube_double(solver *s, uint64_t e)
{
    size_t half = (size_t)1 << s->c;
    int *lab = realloc(s->lab, 2 * half * sizeof *lab);
    uint64_t *offs = malloc(half * sizeof *offs);
    if (!lab || !offs) {
        if (lab)
            s->lab = lab;
        free(offs);
        return gx_fail(s->msg, GX_ENOMEM, "slice solver: out of memory");
    }
    s->lab = lab;
    for (size_t i = 0; i < half; i++)
        offs[i] = cube_elem(s, i) ^ e;
    int rc = label_many(s, offs, half, s->lab + half);
    free(offs);
    if (rc == GX_OK)
        s->bits[s->c++] = e;
    return rc;
}

/* G inside the cube, exhaustively; add it to s->G and compress the cube to
 * a complement of it made of cube bits. */
static int cube_compress(solver *s)
{
    size_t n = (size_t)1 << s->c;
    gx_gf2_basis gc;
    gx_gf2_basis_init(&gc);
    for (size_t t = 1; t < n; t++) {
        if (gx_gf2_basis_contains(&gc, cube_elem(s, t)))
            continue;
        size_t x = 0;
        while (x < n && s->lab[x ^ t] == s->lab[x])
            x++;
        if (x == n)
            gx_gf2_basis_add(&gc, cube_elem(s, t));
    }
    if (gc.n == 0)
        return GX_OK;
    for (int i = 0; i < gc.n; i++)
        gx_gf2_basis_add(&s->G, gc.v[i]);
    /* keep the cube bits that complement gc (greedy, in cube order) */
    gx_gf2_basis acc = gc;
    int keep[GX_GF2_MAX], nk = 0;
    for (int i = 0; i < s->c; i++)
        if (gx_gf2_basis_add(&acc, s->bits[i]))
            keep[nk++] = i;
    size_t m = (size_t)1 << nk;
    int *lab = malloc(m * sizeof *lab);
    if (!lab)
        return gx_fail(s->msg, GX_ENOMEM, "slice solver: out of memory");
    for (size_t y = 0; y < m; y++) {
        size_t old = 0;
        for (int i = 0; i < nk; i++)
            if ((y >> i) & 1u)
                old |= (size_t)1 << keep[i];
        lab[y] = s->lab[old];
    }
    uint64_t nb[GX_GF2_MAX];
    for (int i = 0; i < nk; i++)
        nb[i] = s->bits[keep[i]];
    memcpy(s->bits, nb, sizeof(uint64_t) * (size_t)nk);
    s->c = nk;
    free(s->lab);
    s->lab = lab;
    return GX_OK;
}

/* Frequency of each label in the cube (labels are small ints). */
static double label_freq(const solver *s, int label)
{
    size_t n = (size_t)1 << s->c, k = 0;
    for (size_t i = 0; i < n; i++)
        k += s->lab[i] == label;
    return (double)k / (double)n;
}

/* Test bit e against the cube. *found = 1 and *g = an element of G with
 * e in it, or *found = 0 (e joins the cube). */
static int test_bit(solver *s, uint64_t e, double chance, gx_rng *rng, int *found, uint64_t *g)
{
    size_t n = (size_t)1 << s->c;
    *found = 0;
    uint8_t *alive = malloc(n);
    size_t *order = malloc(n * sizeof *order);
    if (!alive || !order) {
        free(alive);
        free(order);
        return gx_fail(s->msg, GX_ENOMEM, "slice solver: out of memory");
    }
    memset(alive, 1, n);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)gx_rng_below(rng, i);
        size_t tmp = order[i - 1];
        order[i - 1] = order[j];
        order[j] = tmp;
    }
    size_t n_alive = n, used = 0;
    double strength = 1.0;
    int rc = GX_OK;
    while (rc == GX_OK && used < n && n_alive > 0 &&
           (n_alive > 1 || strength * (double)n > chance)) {
        size_t batch = used < 4 ? 4 : used; /* 4, 4, 8, 16, ... anchors */
        if (batch > n - used)
            batch = n - used;
        uint64_t offs[64];
        int labs[64];
        if (batch > 64)
            batch = 64;
        for (size_t i = 0; i < batch; i++)
            offs[i] = cube_elem(s, order[used + i]) ^ e;
        rc = label_many(s, offs, batch, labs);
        for (size_t i = 0; rc == GX_OK && i < batch; i++) {
            size_t x = order[used + i];
            for (size_t t = 0; t < n; t++)
                if (alive[t] && s->lab[x ^ t] != labs[i]) {
                    alive[t] = 0;
                    n_alive--;
                }
            strength *= label_freq(s, labs[i]);
        }
        used += batch;
    }
    if (rc == GX_OK && n_alive == 1 && strength * (double)n <= chance) {
        for (size_t t = 0; t < n; t++)
            if (alive[t]) {
                *g = e ^ cube_elem(s, t);
                *found = 1;
            }
    }
    free(alive);
    free(order);
    return rc;
}

void ssolve_opts_default(ssolve_opts *o)
{
    o->m0 = 5;
    o->chance = 1e-6;
    o->max_cube_bits = 16;
}

void ssolve_free(ssolve_result *r)
{
    free(r->table);
    r->table = NULL;
}

static int finish(solver *s, ssolve_result *out)
{
    int nbits = __builtin_popcountll(s->space);
    if (s->c + s->G.n != nbits)
        return gx_fail(s->msg, GX_EUNSURE,
                       "slice solver: cube (%d bits) and invariant space (%d) do not span the "
                       "%d observable bits: inconsistent labels",
                       s->c, s->G.n, nbits);
    out->space = s->space;
    out->k = s->c;
    out->kernel = s->G;
    memcpy(out->cube, s->bits, sizeof(uint64_t) * (size_t)s->c);
    /* masks dual to the cube bits, annihilating G */
    uint64_t rows[GX_GF2_MAX * 2];
    uint8_t rhs[GX_GF2_MAX * 2];
    size_t nr = 0;
    for (int i = 0; i < s->c; i++)
        rows[nr++] = s->bits[i];
    for (int i = 0; i < s->G.n; i++)
        rows[nr++] = s->G.v[i];
    for (int i = 0; i < s->c; i++) {
        memset(rhs, 0, sizeof rhs);
        rhs[i] = 1;
        if (!gx_gf2_solve(rows, rhs, nr, s->space, &out->masks[i], NULL, NULL))
            return gx_fail(s->msg, GX_EUNSURE, "slice solver: no dual masks (internal)");
    }
    size_t n = (size_t)1 << s->c;
    out->table = s->lab;
    s->lab = NULL;
    /* distinct labels */
    int maxl = 0;
    for (size_t i = 0; i < n; i++)
        if (out->table[i] > maxl)
            maxl = out->table[i];
    uint8_t *seen = calloc((size_t)maxl + 1, 1);
    if (!seen)
        return gx_fail(s->msg, GX_ENOMEM, "slice solver: out of memory");
    int distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (!seen[out->table[i]]++)
            distinct++;
    free(seen);
    out->n_labels = distinct;
    out->linear = (size_t)distinct == n;
    out->lines = s->memo.n;
    return GX_OK;
}

int ssolve_run(uint64_t space, const ssolve_opts *opts, ssolve_label_fn fn, void *user,
               gx_rng *rng, ssolve_result *out, gx_msg *msg)
{
    ssolve_opts o;
    if (opts)
        o = *opts;
    else
        ssolve_opts_default(&o);
    memset(out, 0, sizeof *out);
    if (!space || !fn)
        return gx_fail(msg, GX_EINVAL, "slice solver: empty bit space or no labeller");
    solver s;
    memset(&s, 0, sizeof s);
    s.space = space;
    s.fn = fn;
    s.user = user;
    s.msg = msg;
    gx_gf2_basis_init(&s.G);
    int rc = memo_init(&s.memo, 1024);
    s.lab = malloc(sizeof *s.lab);
    if (rc != GX_OK || !s.lab) {
        memo_free(&s.memo);
        free(s.lab);
        return gx_fail(msg, GX_ENOMEM, "slice solver: out of memory");
    }
    uint64_t zero = 0;
    rc = label_many(&s, &zero, 1, s.lab);
    /* the first cube: the lowest m0 bits */
    uint64_t rest = space;
    for (int i = 0; rc == GX_OK && i < o.m0 && rest; i++) {
        uint64_t e = rest & (~rest + 1);
        rest &= rest - 1;
        rc = cube_double(&s, e);
    }
    if (rc == GX_OK)
        rc = cube_compress(&s);
    while (rc == GX_OK && rest) {
        uint64_t e = rest & (~rest + 1);
        rest &= rest - 1;
        int found = 0;
        uint64_t g = 0;
        rc = test_bit(&s, e, o.chance, rng, &found, &g);
        if (rc != GX_OK)
            break;
        if (found) {
            gx_gf2_basis_add(&s.G, g);
            continue;
        }
        if (s.c >= o.max_cube_bits) {
            rc = gx_fail(msg, GX_EUNSURE,
                         "slice solver: the cube would exceed %d bits (labels inconsistent or "
                         "hash too wide)",
                         o.max_cube_bits);
            break;
        }
        rc = cube_double(&s, e);
        if (rc == GX_OK)
            rc = cube_compress(&s);
    }
    if (rc == GX_OK)
        rc = finish(&s, out);
    if (rc != GX_OK)
        ssolve_free(out);
    free(s.lab);
    memo_free(&s.memo);
    return rc;
}
