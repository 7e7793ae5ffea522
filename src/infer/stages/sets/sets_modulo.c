/* sets_modulo.c - the sets stage's modulo set index: every point of
 * Q = K / K1 classified into its m congruence classes, the classes ordered
 * into residues by the +-1 direction's cycle, and the value bits fitted
 * (odd m directly; even m = 2^a * o as a low part constant on each class
 * plus an odd-modulus fit). Assumes value = sum 2^i parity(addr & mask_i). */
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* ---- modulo ------------------------------------------------------------------------ */


/* Renumber class labels lab[0..np) (each < m) to 0..k-1 in order of first
 * appearance; map is scratch of m entries. Returns k. */
uint32_t sets_renumber_labels(int32_t *lab, size_t np, int32_t *map, uint32_t m)
{
    for (uint32_t r = 0; r < m; r++)
        map[r] = -1;
    int32_t next = 0;
    for (size_t c = 0; c < np; c++) {
        if (map[lab[c]] < 0)
            map[lab[c]] = next++;
        lab[c] = map[lab[c]];
    }
    return (uint32_t)next;
}

/* A probe that spared a congruent line once makes it the first member of
 * a new class: classes of less than half the typical size are tried
 * against the oracles of the others and merged where they belong. */
static int merge_small_classes(sets_ctx *s, mod_fit *f, const uint64_t *offs,
                               const uint64_t *rep, size_t batch)
{
    size_t np = (size_t)1 << f->n;
    uint32_t m = f->m;
    if (m < 2 || m > SETS_MAX_CLASSES)
        return GX_OK;
    uint32_t *size = calloc(m, sizeof *size);
    uint64_t *pts = malloc(np * sizeof *pts);
    size_t *idx = malloc(np * sizeof *idx);
    uint8_t *ev = malloc(np);
    uint64_t set[GX_EVX_MAX_WAYS];
    int rc = size && pts && idx && ev ? GX_OK
                                      : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (size_t c = 0; rc == GX_OK && c < np; c++)
        size[f->lab[c]]++;
    double avg = (double)np / m;
    size_t nsm = 0;
    for (size_t c = 0; rc == GX_OK && avg >= 3 && c < np; c++)
        if (size[f->lab[c]] * 2.0 < avg) {
            pts[nsm] = offs[c];
            idx[nsm++] = c;
        }
    for (uint32_t r = 0; rc == GX_OK && nsm && r < m; r++) {
        if (size[r] * 2.0 < avg)
            continue;
        uint64_t d = rep[r] ^ s->toff;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        if ((rc = sets_probe_offsets(s, set, s->es->n, pts, nsm, batch, ev)) != GX_OK)
            break;
        size_t k = 0;
        for (size_t j = 0; j < nsm; j++) {
            if (ev[j]) {
                f->lab[idx[j]] = (int32_t)r;
            } else {
                pts[k] = pts[j];
                idx[k++] = idx[j];
            }
        }
        nsm = k;
    }
    if (rc == GX_OK) { /* renumber the classes that are left */
        int32_t *map = malloc(m * sizeof *map);
        if (!map) {
            rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
        } else {
            f->m = sets_renumber_labels(f->lab, np, map, m);
            free(map);
        }
    }
    free(size);
    free(pts);
    free(idx);
    free(ev);
    return rc;
}

/* Classify every point of Q with translated eviction sets. */
int sets_classify_q(sets_ctx *s, mod_fit *f, const uint64_t *ct, size_t nct, double sets_est)
{
    size_t np = (size_t)1 << f->n;
    uint64_t *offs = malloc(np * sizeof *offs);
    uint64_t *todo = malloc(np * sizeof *todo);
    size_t *tidx = malloc(np * sizeof *tidx);
    uint8_t *ev = malloc(np);
    uint64_t set[GX_EVX_MAX_WAYS];
    int rc = offs && todo && tidx && ev ? GX_OK
                                        : gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    uint32_t classes = 0;
    uint64_t *rep = malloc(SETS_MAX_CLASSES * sizeof *rep); /* a member of each class */
    if (!rep && rc == GX_OK)
        rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (rep)
        rep[0] = s->toff;
    for (size_t c = 0; rc == GX_OK && c < np; c++) {
        offs[c] = s->toff ^ sets_span_point(f->q, f->n, c);
        f->lab[c] = sets_in_sorted(ct, nct, offs[c]) ? 0 : -1;
    }
    if (rc == GX_OK)
        classes = 1;
    size_t batch = sets_batch_for(s, sets_est);
    for (size_t c = 0; rc == GX_OK && c < np; c++) {
        if (f->lab[c] >= 0)
            continue;
        if (classes >= SETS_MAX_CLASSES) {
            rc = gx_fail(s->ctx->msg, GX_EUNSURE, "sets: more than %u classes", SETS_MAX_CLASSES);
            break;
        }
        /* oracle for this point: the target's set moved by the same offset */
        uint64_t d = offs[c] ^ s->toff;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        int ovf = 0;
        if ((rc = sets_set_overflows(s, offs[c], set, s->es->n, &ovf)) != GX_OK)
            break;
        if (!ovf) {
            rc = gx_fail(s->ctx->msg, GX_EUNSURE,
                         "sets: a translated eviction set does not evict its line");
            break;
        }
        f->lab[c] = (int32_t)classes;
        size_t nt = 0;
        for (size_t e = c + 1; e < np; e++)
            if (f->lab[e] < 0) {
                tidx[nt] = e;
                todo[nt++] = offs[e];
            }
        if ((rc = sets_probe_offsets(s, set, s->es->n, todo, nt, batch, ev)) != GX_OK)
            break;
        for (size_t j = 0; j < nt; j++)
            if (ev[j])
                f->lab[tidx[j]] = (int32_t)classes;
        if (classes < SETS_MAX_CLASSES)
            rep[classes] = offs[c];
        classes++;
    }
    f->m = classes;
    if (rc == GX_OK)
        rc = merge_small_classes(s, f, offs, rep, batch);
    free(rep);
    free(offs);
    free(todo);
    free(tidx);
    free(ev);
    return rc;
}

/* Partners of every class under direction w: 0 = inconsistent (a class
 * meets itself or more than two others), else 1 and p1/p2 filled. */
static int partners(const mod_fit *f, uint64_t w, int32_t *p1, int32_t *p2)
{
    size_t np = (size_t)1 << f->n;
    for (uint32_t r = 0; r < f->m; r++)
        p1[r] = p2[r] = -1;
    for (size_t c = 0; c < np; c++) {
        int32_t a = f->lab[c], b = f->lab[c ^ w];
        if (a == b)
            return 0;
        if (p1[a] < 0 || p1[a] == b)
            p1[a] = b;
        else if (p2[a] < 0 || p2[a] == b)
            p2[a] = b;
        else
            return 0;
    }
    return 1;
}

/* Order the classes along the cycle of direction u: pos[class]. */
static int cycle_order(const mod_fit *f, const int32_t *p1, const int32_t *p2, int32_t *pos)
{
    uint32_t m = f->m;
    for (uint32_t r = 0; r < m; r++)
        pos[r] = -1;
    int32_t prev = -1, cur = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (cur < 0 || pos[cur] >= 0)
            return 0;
        pos[cur] = (int32_t)i;
        int32_t next = p1[cur] != prev ? p1[cur] : p2[cur];
        if (m == 2)
            next = p1[cur];
        prev = cur;
        cur = next;
    }
    return m <= 2 || cur == 0;
}

/* Does g(c) = sum 2^i (beta_i ^ <a_i, c>) mod m reproduce the partition? */
static int partition_matches(const mod_fit *f, const uint64_t *a, uint64_t beta, int32_t *map)
{
    size_t np = (size_t)1 << f->n;
    for (uint32_t r = 0; r < f->m; r++)
        map[r] = -1;
    int32_t *inv = map + f->m;
    for (uint32_t r = 0; r < f->m; r++)
        inv[r] = -1;
    for (size_t c = 0; c < np; c++) {
        uint64_t v = 0;
        for (int i = 0; i < f->n; i++)
            v |= (uint64_t)((beta >> i & 1) ^ (uint64_t)gx_gf2_dot(a[i], c)) << i;
        int32_t g = (int32_t)(v % f->m), l = f->lab[c];
        if (map[l] < 0 && inv[g] < 0) {
            map[l] = g;
            inv[g] = l;
        } else if (map[l] != g || inv[g] != l) {
            return 0;
        }
    }
    return 1;
}

/* Dual basis: a[i] with <a[i], u[j]> = (i == j). 0 when u is singular. */
static int dual_basis(const uint64_t *u, int n, uint64_t *a)
{
    for (int i = 0; i < n; i++) {
        uint8_t y[SETS_MAX_N];
        for (int j = 0; j < n; j++)
            y[j] = (uint8_t)(i == j);
        uint64_t space = n >= 64 ? ~0ull : (((uint64_t)1 << n) - 1);
        if (!gx_gf2_solve(u, y, (size_t)n, space, &a[i], NULL, NULL))
            return 0;
    }
    return 1;
}

typedef struct fit_search {
    mod_fit *f;
    uint64_t cand[SETS_MAX_N][16]; /* directions that may flip bit i */
    int ncand[SETS_MAX_N];
    uint64_t u[SETS_MAX_N];
    uint64_t a[SETS_MAX_N];
    uint64_t beta;
    int32_t *map;
    long budget;
} fit_search;

static int search_bits(fit_search *fs, int i)
{
    mod_fit *f = fs->f;
    if (fs->budget-- <= 0)
        return 0;
    if (i == f->n) {
        if (!dual_basis(fs->u, f->n, fs->a))
            return 0;
        for (uint64_t beta = 0; beta < ((uint64_t)1 << f->n); beta++)
            if (partition_matches(f, fs->a, beta, fs->map)) {
                fs->beta = beta;
                return 1;
            }
        return 0;
    }
    for (int k = 0; k < fs->ncand[i]; k++) {
        uint64_t u = fs->cand[i][k];
        int used = 0;
        for (int j = 0; j < i && !used; j++)
            used = fs->u[j] == u;
        if (used)
            continue;
        fs->u[i] = u;
        if (gx_gf2_rank(fs->u, (size_t)i + 1) != i + 1)
            continue;
        if (search_bits(fs, i + 1))
            return 1;
    }
    return 0;
}

/* From the measured partition of Q to value functionals (a_i, beta). */
static int fit_value_bits(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    uint32_t m = f->m;
    size_t np = (size_t)1 << f->n;
    int32_t *p1 = malloc(m * sizeof *p1), *p2 = malloc(m * sizeof *p2);
    int32_t *pos = malloc(m * sizeof *pos), *map = malloc(2 * m * sizeof *map);
    uint64_t *single = malloc(np * sizeof *single);
    int ok = 0;
    if (!p1 || !p2 || !pos || !map || !single)
        goto out;
    size_t ns = 0;
    for (uint64_t w = 1; w < np; w++)
        if (partners(f, w, p1, p2))
            single[ns++] = w;
    /* each candidate for the least significant bit: its cycle orders the
     * classes; then every direction's step along it names its bit */
    for (size_t s0 = 0; s0 < ns && !ok; s0++) {
        partners(f, single[s0], p1, p2);
        if (!cycle_order(f, p1, p2, pos))
            continue;
        fit_search fs;
        memset(&fs, 0, sizeof fs);
        fs.f = f;
        fs.map = map;
        fs.budget = 20000;
        for (size_t t = 0; t < ns; t++) {
            uint64_t u = single[t];
            int32_t step = -1;
            int consistent = 1;
            for (size_t c = 0; c < np && consistent; c++) {
                int32_t d = (pos[f->lab[c ^ u]] - pos[f->lab[c]] + (int32_t)m) % (int32_t)m;
                int32_t cd = d < (int32_t)m - d ? d : (int32_t)m - d;
                if (step < 0)
                    step = cd;
                else if (cd != step)
                    consistent = 0;
            }
            if (!consistent)
                continue;
            for (int i = 0; i < f->n; i++) {
                int32_t c2 = (int32_t)sets_bit_step(i, m);
                if (c2 == step && fs.ncand[i] < 16)
                    fs.cand[i][fs.ncand[i]++] = u;
            }
        }
        int complete = 1;
        for (int i = 0; i < f->n; i++)
            complete &= fs.ncand[i] > 0;
        if (complete && search_bits(&fs, 0)) {
            memcpy(a_out, fs.a, (size_t)f->n * sizeof *a_out);
            *beta_out = fs.beta;
            ok = 1;
        }
    }
out:
    free(p1);
    free(p2);
    free(pos);
    free(map);
    free(single);
    return ok;
}

/* Which x (value of the high functionals on direction e) reproduce the
 * partition of the coset Q0 ^ e? Up to 4 of them in xs; returns the count. */
static int coset_offsets(const mod_fit *f, const uint64_t *q0, int n2, const uint64_t *ah,
                         uint64_t bh, uint64_t e, uint32_t o, int32_t *map, uint64_t *xs)
{
    int nx = 0;
    for (uint64_t x = 0; x < ((uint64_t)1 << n2) && nx < 4; x++) {
        int32_t *inv = map + f->m;
        for (uint32_t r = 0; r < f->m; r++)
            map[r] = -1;
        for (uint32_t r = 0; r < o; r++)
            inv[r] = -1;
        int ok = 1;
        for (uint64_t c = 0; c < ((uint64_t)1 << n2) && ok; c++) {
            int32_t g = (int32_t)((gx_gf2_apply(ah, n2, c) ^ bh ^ x) % o);
            int32_t l = f->lab[e ^ sets_span_point(q0, n2, c)];
            if (map[l] < 0 && inv[g] < 0) {
                map[l] = g;
                inv[g] = l;
            } else if (map[l] != g || inv[g] != l) {
                ok = 0;
            }
        }
        if (ok)
            xs[nx++] = x;
    }
    return nx;
}

/* Even m = 2^a * o (o odd): value mod m = (low a bits, (value >> a) mod o).
 * The low bits are constant on every class: their span is the annihilator
 * of the intra-class differences (any basis of it gives the same
 * partition). On Q0 (where those functionals are 0) the classes are the
 * high value mod o, an odd modulus: fit_value_bits. Each complement
 * direction e_j adds an unknown xor x_j to the high value, found from the
 * partition of the coset Q0 ^ e_j; the whole fit is checked on Q. */
static int fit_value_bits_even(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    uint32_t m = f->m;
    int a = __builtin_ctz(m), n = f->n, n2 = n - a, ok = 0;
    uint32_t o = m >> a;
    if (o < 3 || n2 < 2 || a > 6)
        return 0;
    size_t np = (size_t)1 << n;
    uint64_t space = ((uint64_t)1 << n) - 1;
    int64_t *rep = malloc(m * sizeof *rep);
    int32_t *map = malloc(2 * (size_t)m * sizeof *map);
    mod_fit g;
    memset(&g, 0, sizeof g);
    g.lab = malloc(((size_t)1 << n2) * sizeof *g.lab);
    if (!rep || !map || !g.lab)
        goto out;
    gx_gf2_basis d;
    gx_gf2_basis_init(&d);
    for (uint32_t r = 0; r < m; r++)
        rep[r] = -1;
    for (size_t c = 0; c < np; c++) {
        int32_t l = f->lab[c];
        if (l < 0 || (uint32_t)l >= m)
            goto out;
        if (rep[l] < 0)
            rep[l] = (int64_t)c;
        else
            gx_gf2_basis_add(&d, c ^ (uint64_t)rep[l]);
    }
    uint64_t low[64], q0[64], e[64];
    if (gx_gf2_basis_annihilator(&d, space, low) != a)
        goto out;
    if (gx_gf2_annihilator(low, (size_t)a, space, q0) != n2 ||
        gx_gf2_complement_bits(q0, (size_t)n2, space, e) != a)
        goto out;
    /* the sub-problem on Q0, labels renumbered 0..o-1 */
    for (uint32_t r = 0; r < m; r++)
        map[r] = -1;
    int32_t next = 0;
    for (uint64_t c = 0; c < ((uint64_t)1 << n2); c++) {
        int32_t l = f->lab[sets_span_point(q0, n2, c)];
        if (map[l] < 0)
            map[l] = next++;
        g.lab[c] = map[l];
    }
    g.n = n2;
    g.m = (uint32_t)next;
    uint64_t ah[SETS_MAX_N], bh = 0;
    if ((uint32_t)next != o || !fit_value_bits(&g, ah, &bh))
        goto out;
    uint64_t xs[8][4];
    int nx[8];
    long combos = 1;
    for (int j = 0; j < a; j++) {
        nx[j] = coset_offsets(f, q0, n2, ah, bh, e[j], o, map, xs[j]);
        if (!nx[j])
            goto out;
        combos *= nx[j];
    }
    for (long k = 0; k < combos && !ok; k++) {
        long rest = k;
        uint64_t x[8];
        for (int j = 0; j < a; j++) {
            x[j] = xs[j][rest % nx[j]];
            rest /= nx[j];
        }
        uint64_t beta = bh << a;
        for (int j = 0; j < a; j++)
            a_out[j] = low[j];
        int solved = 1;
        for (int i = 0; i < n2 && solved; i++) {
            uint64_t rows[64];
            uint8_t y[64];
            size_t nr = 0;
            for (int q = 0; q < n2; q++) {
                rows[nr] = q0[q];
                y[nr++] = (uint8_t)(ah[i] >> q & 1);
            }
            for (int j = 0; j < a; j++) {
                rows[nr] = e[j];
                y[nr++] = (uint8_t)(x[j] >> i & 1);
            }
            solved = gx_gf2_solve(rows, y, nr, space, &a_out[a + i], NULL, NULL);
        }
        if (solved && partition_matches(f, a_out, beta, map)) {
            *beta_out = beta;
            ok = 1;
        }
    }
out:
    free(rep);
    free(map);
    free(g.lab);
    return ok;
}

/* Any m: odd moduli by the +-1 cycle, even ones by splitting off the low bits. */
int sets_fit_value_any(mod_fit *f, uint64_t *a_out, uint64_t *beta_out)
{
    if (f->m % 2 == 0 && fit_value_bits_even(f, a_out, beta_out))
        return 1;
    return fit_value_bits(f, a_out, beta_out);
}
