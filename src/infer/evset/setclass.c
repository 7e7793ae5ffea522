/* setclass.c - the congruence classes (sets) of one slice's lines
 * (setclass.h), the method bench/slice_capacity --classes measured on an
 * H200 (docs/nvidia-h200.md, data/nvidia-h200/setclass-2026-12-03).
 *
 * Method, one class at a time:
 * - an overflowing sample: a cyclic run over half the unassigned lines at
 *   random; the lines slow in its timed rounds belong to the few sets that
 *   hold more than ways of the sample (grown by SETCLASS_SAMPLE_STEP when
 *   none does); x is one of them and the others its first pool (small:
 *   the reduction then costs little);
 * - else (or when that pool does not evict x) a random unassigned line x; a
 *   random pool of unassigned lines,
 *   SETCLASS_POOL0 and grown by half until it evicts x (x, the pool, x
 *   timed, and when that reload misses the pool and x timed again: both
 *   reloads past the threshold);
 * - the pool reduced by group testing to an eviction set E of at most
 *   SETCLASS_E_WAYS x ways lines: ways + 1 groups, each dropped while x stays
 *   evicted without it (ways + 1 groups: at least one holds none of the ways
 *   lines that evict x, so a pass drops one);
 * - every unassigned line joins x's class when a cyclic run over x, E and a
 *   chunk of unassigned lines (four rounds, the last two timed) slows it in
 *   both timed rounds, as E's own lines are (E's set overflows; the chunk,
 *   at most SETCLASS_SPREAD lines of each set still unassigned on average,
 *   overflows no other set; one slow round alone is an outlier);
 * - a try whose pool never evicts x, whose reduction stalls or whose run
 *   does not slow E's lines gives its lines back (counted unsure).
 * The threshold: a quarter of the way from a line's near reload to its
 * reload after every line (a near-far L2's far hit lies between the near
 * level and DRAM; a quarter keeps it a miss on an H200, near 283, far ~470,
 * DRAM ~615-740).
 * Costs: per class about (ways + 1) log(pool / ways) eviction tests over
 * the shrinking pool and n / chunk runs of four rounds; on an H200 320
 * classes of 22320 lines (64 pages) took 31 s. */
#include <stdlib.h>
#include <string.h>

#include "setclass.h"

#define SETCLASS_POOL0 2048u  /* pool lines of the first eviction try (then x 1.5 until one
                                 evicts: the reduction's cost grows with the pool) */
#define SETCLASS_CHUNK 1024u  /* chunk lines at most: a few a set of a GPU slice's hundreds */
#define SETCLASS_SPREAD 4u    /* chunk lines a still-unassigned set on average, at most
                                 (far below any ways: no other set overflows) */
#define SETCLASS_CHUNK_MIN 4u
#define SETCLASS_THR_FRAC 0.25 /* threshold: this far from the near reload to the full miss */
#define SETCLASS_MIN_GAP 40.0  /* cycles between them at least: otherwise no miss seen */
#define SETCLASS_CAL_LINES 16384u /* lines the calibration's miss runs over, at most */
#define SETCLASS_SAMPLE 0.5 /* the overflowing sample: half the unassigned lines (an even
                               spread of ~24 lines a set gives ~12 +- 2.4 each: a few sets
                               past ways, whose lines make small pools) */
#define SETCLASS_SAMPLE_STEP 0.15 /* ... grown by this when no set overflows */
#define SETCLASS_MINIMAL_POOL 2048u /* pools up to this size reduce to exactly ways lines */
#define SETCLASS_E_WAYS 2u /* the reduction stops at 2 x ways lines: E need not be
                              minimal, only overflow x's set and no other (its other
                              lines are a few of other sets); the last passes of a
                              reduction to exactly ways lines drop one group in ways + 1
                              each and cost most of it */

typedef struct sc_run {
    gx_target *t;
    uint32_t sm;
    size_t ways;
    gx_seq_op *ops;
    double *cyc;
    double thr;
} sc_run;

/* The unassigned lines: indices into the caller's lines, with each index's
 * place (SIZE_MAX: assigned) so taking one out is O(1). */
typedef struct sc_free {
    size_t *idx, *place, n;
} sc_free;

static void free_take(sc_free *u, size_t i)
{
    size_t p = u->place[i];
    if (p == SIZE_MAX)
        return;
    size_t last = u->idx[--u->n];
    u->idx[p] = last;
    u->place[last] = p;
    u->place[i] = SIZE_MAX;
}

static void free_put(sc_free *u, size_t i)
{
    if (u->place[i] != SIZE_MAX)
        return;
    u->place[i] = u->n;
    u->idx[u->n++] = i;
}

/* x, the pool, x timed; when that reload misses, the pool and x timed again:
 * *out 1 when both miss. A hit needs no second look (noise only slows a
 * reload); a miss may be an outlier, so it is confirmed. */
static int evicts(sc_run *c, uint64_t x, const uint64_t *pool, size_t n, int *out, gx_msg *msg)
{
    *out = 0;
    for (int rep = 0; rep < 2; rep++) {
        size_t k = 0;
        if (rep == 0)
            c->ops[k++] = (gx_seq_op){x, GX_OP_LOAD, 0};
        for (size_t i = 0; i < n; i++)
            c->ops[k++] = (gx_seq_op){pool[i], GX_OP_LOAD, 0};
        c->ops[k++] = (gx_seq_op){x, GX_OP_LOAD, 1};
        int rc = gx_target_seq(c->t, c->ops, k, c->sm, c->cyc, msg);
        if (rc != GX_OK)
            return rc;
        if (c->cyc[0] <= c->thr)
            return GX_OK;
    }
    *out = 1;
    return GX_OK;
}

/* pool[0..*n) (it evicts x) reduced in place to lines that still do: ways
 * of them from a pool of at most SETCLASS_MINIMAL_POOL, else at most
 * SETCLASS_E_WAYS x ways. */
static int reduce(sc_run *c, uint64_t x, uint64_t *pool, size_t *n, uint64_t *tmp, gx_msg *msg)
{
    /* a small pool (the overflowing sample's) holds other sets' lines in bulk: E must then
     * be minimal, or its other lines could overflow their own sets in classify's runs */
    const size_t target = *n > SETCLASS_MINIMAL_POOL ? SETCLASS_E_WAYS * c->ways : c->ways;
    while (*n > target) {
        const size_t g = c->ways + 1, n0 = *n;
        size_t gone = 0; /* lines of the groups dropped so far in this pass */
        for (size_t gi = 0; gi < g && *n > c->ways; gi++) {
            size_t lo = gi * n0 / g - gone, hi = (gi + 1) * n0 / g - gone, m = 0;
            for (size_t i = 0; i < *n; i++)
                if (i < lo || i >= hi)
                    tmp[m++] = pool[i];
            int ev = 0, rc = evicts(c, x, tmp, m, &ev, msg);
            if (rc != GX_OK)
                return rc;
            if (ev && m >= c->ways) {
                memcpy(pool, tmp, m * sizeof *tmp);
                gone += hi - lo;
                *n = m;
            }
        }
        if (*n == n0)
            return gx_fail(msg, GX_EUNSURE, "none of %zu groups of %zu lines could go", g,
                           n0 / g);
    }
    return GX_OK;
}

/* The lines of u (neither x nor E among them) that share x's set: their
 * indices into found[], *nf of them; e_slow[i] 1 when E's line i shares it
 * too (slow in every run). A cyclic run over x, E (ne lines: at least ways
 * of x's set, a few of others) and a chunk of u, four rounds, the last two
 * timed. GX_EUNSURE when fewer than ways of E's lines are slow (E does not
 * overflow x's set). */
static int classify(sc_run *c, uint64_t x, const uint64_t *e, size_t ne, const uint64_t *lines,
                    const sc_free *u, size_t chunk, size_t *found, size_t *nf, uint8_t *e_slow,
                    gx_msg *msg)
{
    *nf = 0;
    memset(e_slow, 1, ne);
    for (size_t lo = 0; lo < u->n || lo == 0; lo += chunk) {
        const size_t m = u->n - lo < chunk ? u->n - lo : chunk, round = m + ne + 1;
        size_t k = 0;
        for (int r = 0; r < 4; r++) {
            const uint8_t timed = r >= 2;
            c->ops[k++] = (gx_seq_op){x, GX_OP_LOAD, timed};
            for (size_t i = 0; i < ne; i++)
                c->ops[k++] = (gx_seq_op){e[i], GX_OP_LOAD, timed};
            for (size_t i = 0; i < m; i++)
                c->ops[k++] = (gx_seq_op){lines[u->idx[lo + i]], GX_OP_LOAD, timed};
        }
        int rc = gx_target_seq(c->t, c->ops, k, c->sm, c->cyc, msg);
        if (rc != GX_OK)
            return rc;
        const double *r2 = c->cyc, *r3 = c->cyc + round;
        size_t slow_e = 0;
        for (size_t i = 0; i < ne; i++) {
            e_slow[i] &= r2[1 + i] > c->thr && r3[1 + i] > c->thr;
            slow_e += e_slow[i];
        }
        if (slow_e < c->ways)
            return gx_fail(msg, GX_EUNSURE, "x's set did not overflow (%zu of %zu lines slow)",
                           slow_e, ne);
        for (size_t i = 0; i < m; i++)
            if (r2[ne + 1 + i] > c->thr && r3[ne + 1 + i] > c->thr)
                found[(*nf)++] = u->idx[lo + i];
        if (!m)
            break;
    }
    return GX_OK;
}

/* The threshold from lines[0]'s near reloads and its reload after the rest. */
static int calibrate(sc_run *c, const uint64_t *lines, size_t n, gx_setclass_result *res,
                     gx_msg *msg)
{
    size_t k = 0, cap = n < SETCLASS_CAL_LINES ? n : SETCLASS_CAL_LINES;
    c->ops[k++] = (gx_seq_op){lines[0], GX_OP_LOAD, 0};
    for (int i = 0; i < 5; i++)
        c->ops[k++] = (gx_seq_op){lines[0], GX_OP_LOAD, 1};
    for (size_t i = 1; i < cap; i++)
        c->ops[k++] = (gx_seq_op){lines[i], GX_OP_LOAD, 0};
    c->ops[k++] = (gx_seq_op){lines[0], GX_OP_LOAD, 1};
    int rc = gx_target_seq(c->t, c->ops, k, c->sm, c->cyc, msg);
    if (rc != GX_OK)
        return rc;
    double hit = c->cyc[0];
    for (int i = 1; i < 5; i++)
        hit = c->cyc[i] < hit ? c->cyc[i] : hit;
    res->near_cycles = hit;
    res->miss_cycles = c->cyc[5];
    c->thr = res->threshold = hit + SETCLASS_THR_FRAC * (c->cyc[5] - hit);
    if (c->cyc[5] < hit + SETCLASS_MIN_GAP)
        return gx_fail(msg, GX_EUNSURE, "no miss after %zu lines of the slice (%.0f vs %.0f cycles)",
                       cap - 1, c->cyc[5], hit);
    return GX_OK;
}

/* The chunk for the next class: SETCLASS_SPREAD lines a still-unassigned
 * set on average once classes give their mean size. */
static size_t chunk_for(size_t left, size_t classes, size_t assigned)
{
    if (!classes)
        return SETCLASS_CHUNK;
    size_t c = SETCLASS_SPREAD * left * classes / assigned;
    c = c < SETCLASS_CHUNK ? c : SETCLASS_CHUNK;
    return c < SETCLASS_CHUNK_MIN ? SETCLASS_CHUNK_MIN : c;
}

/* One class from the unassigned line xi (index into lines), its first pool
 * the unassigned lines of cand[0..ncand) (the overflowing sample's slow
 * ones; none: a random pool): *size the class's lines when found (class_of[]
 * set, the lines out of u), 0 when unsure (xi and E back in u). */
static int one_class(sc_run *c, const uint64_t *lines, sc_free *u, size_t xi, const size_t *cand,
                     size_t ncand, int32_t id, size_t chunk, gx_rng *r, uint64_t *pool,
                     uint64_t *tmp, size_t *found, uint8_t *e_slow, int32_t *class_of,
                     size_t *size, gx_msg *msg)
{
    const uint64_t x = lines[xi];
    free_take(u, xi);
    int ev = 0, rc = GX_OK;
    size_t np = 0;
    /* the overflowing sample's slow lines first: x's set overflowed among them */
    for (size_t i = 0; i < ncand; i++)
        if (cand[i] != xi && u->place[cand[i]] != SIZE_MAX)
            pool[np++] = lines[cand[i]];
    if (np > c->ways && (rc = evicts(c, x, pool, np, &ev, msg)) != GX_OK)
        return rc;
    for (size_t want = SETCLASS_POOL0; !ev; want += want / 2) {
        np = want < u->n ? want : u->n;
        for (size_t i = 0; i < u->n; i++)
            pool[i] = lines[u->idx[i]];
        gx_rng_shuffle_u64(r, pool, u->n);
        if ((rc = evicts(c, x, pool, np, &ev, msg)) != GX_OK || np == u->n)
            break;
    }
    if (rc == GX_OK)
        rc = ev ? reduce(c, x, pool, &np, tmp, msg) : GX_EUNSURE;
    size_t nf = 0, ne = 0;
    if (rc == GX_OK) {
        /* E out of u (found[0..ne) its indices, in pool order): classify scans the others */
        for (size_t j = 0; j < np; j++)
            for (size_t i = 0; i < u->n; i++)
                if (lines[u->idx[i]] == pool[j]) {
                    found[ne++] = u->idx[i];
                    break;
                }
        for (size_t i = 0; i < ne; i++)
            free_take(u, found[i]);
        size_t nc = 0;
        rc = classify(c, x, pool, np, lines, u, chunk, found + ne, &nc, e_slow, msg);
        /* E's lines of other sets back among the unassigned; its slow ones stay */
        size_t keep = 0;
        for (size_t i = 0; i < ne; i++) {
            if (rc == GX_OK && e_slow[i])
                found[keep++] = found[i];
            else
                free_put(u, found[i]);
        }
        if (rc == GX_OK)
            memmove(found + keep, found + ne, nc * sizeof *found);
        nf = keep + nc;
    }
    if (rc != GX_OK) {
        free_put(u, xi);
        *size = 0;
        return rc == GX_EUNSURE ? GX_OK : rc;
    }
    class_of[xi] = id;
    for (size_t i = 0; i < nf; i++) {
        class_of[found[i]] = id;
        free_take(u, found[i]);
    }
    *size = nf + 1;
    return GX_OK;
}

/* The overflowing sample: frac of the unassigned lines at random, a cyclic
 * run over them (four rounds, the last two timed); slow[] gets the lines
 * slow in both, *ns of them: the lines of the few sets that hold more than
 * ways of the sample. */
static int sample_overflow(sc_run *c, const uint64_t *lines, const sc_free *u, double frac,
                           gx_rng *r, size_t *scratch, size_t *slow, size_t *ns, gx_msg *msg)
{
    size_t q = (size_t)(frac * (double)u->n);
    q = q < u->n ? q : u->n;
    memcpy(scratch, u->idx, u->n * sizeof *scratch);
    for (size_t i = 0; i < q; i++) { /* a partial shuffle: the first q at random */
        size_t j = i + (size_t)gx_rng_below(r, u->n - i), t = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = t;
    }
    size_t k = 0;
    for (int rd = 0; rd < 4; rd++)
        for (size_t i = 0; i < q; i++)
            c->ops[k++] = (gx_seq_op){lines[scratch[i]], GX_OP_LOAD, (uint8_t)(rd >= 2)};
    int rc = gx_target_seq(c->t, c->ops, k, c->sm, c->cyc, msg);
    *ns = 0;
    if (rc != GX_OK)
        return rc;
    for (size_t i = 0; i < q; i++)
        if (c->cyc[i] > c->thr && c->cyc[q + i] > c->thr)
            slow[(*ns)++] = scratch[i];
    return GX_OK;
}

/* The slow lines still unassigned, kept in place; their count. */
static size_t slow_left(const sc_free *u, size_t *slow, size_t ns)
{
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        if (u->place[slow[i]] != SIZE_MAX)
            slow[k++] = slow[i];
    return k;
}

int gx_setclass_partition(gx_target *t, const uint64_t *lines, size_t n, uint32_t sm,
                          uint32_t ways, size_t max_classes, gx_rng *r, int32_t *class_of,
                          gx_setclass_result *res, gx_msg *msg)
{
    memset(res, 0, sizeof *res);
    res->unassigned = n;
    for (size_t i = 0; i < n; i++)
        class_of[i] = -1;
    if (n < (size_t)ways + 2 || !ways)
        return gx_fail(msg, GX_EUNSURE, "%zu lines: too few for sets of %u ways", n, ways);
    /* ops of the longest run: the overflowing sample (four rounds over up to every line,
     * its fraction grown to 1 when no set overflows), classify's four rounds over x, E
     * and a chunk, the calibration, an eviction test (x, the pool, x) */
    const size_t classify_ops = 4 * (SETCLASS_CHUNK + SETCLASS_E_WAYS * (size_t)ways + 1);
    size_t opcap = 4 * n > classify_ops ? 4 * n : classify_ops;
    opcap = opcap > SETCLASS_CAL_LINES + 7 ? opcap : SETCLASS_CAL_LINES + 7;
    opcap += 2; /* an eviction test's x before and after the pool (n lines at most) */
    sc_run c = {t, sm, ways, malloc(opcap * sizeof *c.ops), malloc(opcap * sizeof *c.cyc), 0};
    sc_free u = {malloc(n * sizeof(size_t)), malloc(n * sizeof(size_t)), n};
    uint64_t *pool = malloc(n * sizeof *pool), *tmp = malloc(n * sizeof *tmp);
    size_t *found = malloc(n * sizeof *found), *slow = malloc(n * sizeof *slow);
    size_t *scratch = malloc(n * sizeof *scratch), ns = 0;
    double frac = SETCLASS_SAMPLE;
    uint8_t *e_slow = malloc(SETCLASS_E_WAYS * (size_t)ways + 1);
    int rc = GX_OK;
    gx_target_stats s0, s1;
    gx_target_get_stats(t, &s0);
    if (!c.ops || !c.cyc || !u.idx || !u.place || !pool || !tmp || !found || !e_slow ||
        !slow || !scratch) {
        rc = gx_fail(msg, GX_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        u.idx[i] = u.place[i] = i;
    if ((rc = calibrate(&c, lines, n, res, msg)) != GX_OK)
        goto out;
    size_t assigned = 0;
    res->min_size = SIZE_MAX;
    while (res->classes < max_classes && u.n > ways + 1) {
        size_t size = 0, chunk = chunk_for(u.n, res->classes, assigned);
        if ((ns = slow_left(&u, slow, ns)) <= ways) {
            if ((rc = sample_overflow(&c, lines, &u, frac, r, scratch, slow, &ns, msg)) != GX_OK)
                goto out;
            if (ns <= ways) { /* no set overflowed: a larger sample next (all lines at most) */
                frac = frac + SETCLASS_SAMPLE_STEP < 1.0 ? frac + SETCLASS_SAMPLE_STEP : 1.0;
                ns = 0;
            }
        }
        size_t xi = ns > ways ? slow[gx_rng_below(r, ns)] : u.idx[gx_rng_below(r, u.n)];
        rc = one_class(&c, lines, &u, xi, slow, ns > ways ? ns : 0, (int32_t)res->classes, chunk,
                       r, pool, tmp, found, e_slow, class_of, &size, msg);
        if (rc != GX_OK)
            goto out;
        if (!size) {
            res->unsure++;
            if (res->unsure > max_classes) /* every try unsure: stop rather than spin */
                break;
            continue;
        }
        assigned += size;
        res->classes++;
        res->min_size = size < res->min_size ? size : res->min_size;
        res->max_size = size > res->max_size ? size : res->max_size;
    }
    if (!res->classes)
        res->min_size = 0;
    res->unassigned = u.n;
out:
    gx_target_get_stats(t, &s1);
    res->launches = s1.calls - s0.calls;
    free(c.ops);
    free(c.cyc);
    free(u.idx);
    free(u.place);
    free(pool);
    free(tmp);
    free(found);
    free(slow);
    free(scratch);
    free(e_slow);
    return rc;
}
