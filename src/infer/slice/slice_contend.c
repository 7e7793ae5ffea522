/* slice_contend.c - slice classes from contention alone (slice_contend.h:
 * the method, its rules and its cost). Uses only gx_target_contend. */
#include <stdlib.h>
#include <string.h>

#include "slice_contend.h"

/* Scratch of one page's measurement: probes (the page's lines and one more
 * slot for a hammered line elsewhere), a baseline and two launches. */
typedef struct sc_work {
    uint64_t *probes;
    double *base, *a, *b;
    int *idx;
} sc_work;

static void work_free(sc_work *w)
{
    free(w->probes);
    free(w->base);
    free(w->a);
    free(w->b);
    free(w->idx);
}

static int work_alloc(sc_work *w, size_t n, gx_msg *msg)
{
    memset(w, 0, sizeof *w);
    w->probes = malloc((n + 1) * sizeof *w->probes);
    w->base = malloc((n + 1) * sizeof *w->base);
    w->a = malloc((n + 1) * sizeof *w->a);
    w->b = malloc((n + 1) * sizeof *w->b);
    w->idx = malloc((n + 1) * sizeof *w->idx);
    if (w->probes && w->base && w->a && w->b && w->idx)
        return GX_OK;
    work_free(w);
    return gx_fail(msg, GX_ENOMEM, "slices: out of memory for %zu contention probes", n);
}

static int contend(gx_target *t, const sc_opts *o, uint64_t hammer, uint32_t warps,
                   const uint64_t *probes, size_t n, double *cyc, gx_msg *msg)
{
    gx_contend_req q = {hammer, warps, probes, n, o->reps, o->sm};
    return gx_target_contend(t, &q, cyc, msg);
}

/* The smaller of two unhammered launches' values; w->a keeps their
 * differences (the repeat noise, for spread()). */
static int baseline(gx_target *t, const sc_opts *o, sc_work *w, size_t n, gx_msg *msg)
{
    int rc = contend(t, o, w->probes[0], 0, w->probes, n, w->base, msg);
    if (rc == GX_OK)
        rc = contend(t, o, w->probes[0], 0, w->probes, n, w->a, msg);
    for (size_t i = 0; rc == GX_OK && i < n; i++) {
        const double x = w->base[i], y = w->a[i];
        w->base[i] = y < x ? y : x;
        w->a[i] = x - y;
    }
    return rc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Robust spread (MAD x 1.4826) of v[0..n), with scratch s (v may not be s). */
static double spread(const double *v, size_t n, double *s)
{
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    const double med = s[n / 2];
    for (size_t i = 0; i < n; i++)
        s[i] = s[i] > med ? s[i] - med : med - s[i];
    qsort(s, n, sizeof *s, cmp_double);
    return 1.4826 * s[n / 2];
}

/* Hammer `hammer` twice over the probes; slowed[j] (in w->idx, 1/0) when
 * probe j is slowed in both launches by more than half of the hammered
 * line's own slowdown, which probe `self` measures. *least = that slowdown
 * (the smaller of the two). */
static int slowed_by(gx_target *t, const sc_opts *o, sc_work *w, uint64_t hammer, size_t n,
                     size_t self, const double *base, double *least, gx_msg *msg)
{
    int rc = contend(t, o, hammer, o->warps, w->probes, n, w->a, msg);
    if (rc == GX_OK)
        rc = contend(t, o, hammer, o->warps, w->probes, n, w->b, msg);
    if (rc != GX_OK)
        return rc;
    const double sa = w->a[self] - base[self], sb = w->b[self] - base[self];
    *least = sa < sb ? sa : sb;
    for (size_t j = 0; j < n; j++)
        w->idx[j] = j == self || (w->a[j] - base[j] > sa / 2 && w->b[j] - base[j] > sb / 2);
    return GX_OK;
}

/* One greedy step over the `left` lines still without a class (line ids in
 * order[]): the first is hammered; its class takes the slowed ones and
 * order[] keeps the rest. */
static int greedy_step(gx_target *t, const sc_opts *o, sc_work *w, const uint64_t *lines,
                       int *order, size_t *left, int *cls, uint32_t k, double noise,
                       const double *page_base, sc_partition *p, gx_msg *msg)
{
    const size_t m = *left;
    double *base = malloc(m * sizeof *base);
    if (!base)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    for (size_t j = 0; j < m; j++) {
        w->probes[j] = lines[order[j]];
        base[j] = page_base[order[j]];
    }
    double self = 0;
    int rc = slowed_by(t, o, w, w->probes[0], m, 0, base, &self, msg);
    if (rc == GX_OK && !(self > SC_MIN_SIGNAL_SPREADS * noise))
        rc = gx_fail(msg, GX_EUNSURE,
                     "slices: a hammered line slows itself by %.1f cycles only (baseline "
                     "spread %.1f): no contention signal",
                     self, noise);
    if (rc == GX_OK) {
        p->first[k] = w->probes[0];
        p->first_base[k] = base[0];
        size_t keep = 0, members = 0;
        for (size_t j = 0; j < m; j++) {
            const double d = (w->a[j] - base[j]) < (w->b[j] - base[j]) ? (w->a[j] - base[j])
                                                                      : (w->b[j] - base[j]);
            if (w->idx[j]) {
                cls[order[j]] = (int)k;
                members++;
                if (d < p->slowdown_min)
                    p->slowdown_min = d;
            } else {
                order[keep++] = order[j];
                if (d > p->other_max)
                    p->other_max = d;
            }
        }
        *left = keep;
        p->smallest = members < p->smallest ? members : p->smallest;
        p->largest = members > p->largest ? members : p->largest;
    }
    free(base);
    return rc;
}

/* Every class from its second member over the whole page. */
static int check_classes(gx_target *t, const sc_opts *o, sc_work *w, const uint64_t *lines,
                         size_t n, const int *cls, const double *base, sc_partition *p,
                         gx_msg *msg)
{
    int *mark = malloc(n * sizeof *mark);
    if (!mark)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    int rc = GX_OK;
    for (uint32_t c = 0; rc == GX_OK && c < p->classes; c++) {
        size_t second = n, seen = 0;
        for (size_t i = 0; i < n && second == n; i++)
            if (cls[i] == (int)c && seen++ == 1)
                second = i;
        if (second == n)
            continue; /* a class of one line: nothing to check it from */
        memcpy(w->probes, lines, n * sizeof *lines);
        double self = 0;
        if ((rc = slowed_by(t, o, w, w->probes[second], n, second, base, &self, msg)) != GX_OK)
            break;
        memcpy(mark, w->idx, n * sizeof *mark);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += (mark[i] != 0) != (cls[i] == (int)c);
        p->checked++;
        p->agreed += bad == 0;
    }
    free(mark);
    if (rc == GX_OK && p->agreed < p->checked)
        rc = gx_fail(msg, GX_EUNSURE,
                     "slices: %u of %u contention classes did not come back exactly from a "
                     "second member",
                     p->checked - p->agreed, p->checked);
    return rc;
}

void sc_page_lines(uint64_t page_off, uint32_t line_bytes, size_t n, uint64_t *lines)
{
    for (size_t i = 0; i < n; i++)
        lines[i] = page_off + (uint64_t)i * line_bytes;
}

int sc_partition_lines(gx_target *t, const sc_opts *o, const uint64_t *lines, size_t n,
                       int *cls, sc_partition *p, gx_msg *msg)
{
    memset(p, 0, sizeof *p);
    p->smallest = n;
    p->slowdown_min = 1e300;
    if (n == 0)
        return gx_fail(msg, GX_EINVAL, "slices: no lines to group by contention");
    sc_work w;
    int rc = work_alloc(&w, n, msg);
    if (rc != GX_OK)
        return rc;
    double *page_base = malloc(n * sizeof *page_base);
    int *order = malloc(n * sizeof *order);
    if (!page_base || !order)
        rc = gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    for (size_t i = 0; rc == GX_OK && i < n; i++) {
        w.probes[i] = lines[i];
        order[i] = (int)i;
        cls[i] = -1;
    }
    if (rc == GX_OK)
        rc = baseline(t, o, &w, n, msg);
    double noise = 0;
    if (rc == GX_OK) {
        /* the repeat noise of one line (the two baselines' differences, / sqrt 2), not the
         * spread over lines, which holds every slice's distance from the SM */
        memcpy(page_base, w.base, n * sizeof *page_base);
        noise = spread(w.a, n, w.b) / 1.4142135623730951;
        if (noise < 1)
            noise = 1; /* a timer counts whole cycles */
    }
    size_t left = n;
    while (rc == GX_OK && left > 0) {
        if (p->classes >= SC_MAX_CLASSES) {
            rc = gx_fail(msg, GX_EUNSURE, "slices: more than %u contention classes",
                         SC_MAX_CLASSES);
            break;
        }
        rc = greedy_step(t, o, &w, lines, order, &left, cls, p->classes, noise, page_base, p,
                         msg);
        if (rc == GX_OK)
            p->classes++;
    }
    if (rc == GX_OK)
        rc = check_classes(t, o, &w, lines, n, cls, page_base, p, msg);
    free(page_base);
    free(order);
    work_free(&w);
    return rc;
}

int sc_join_lines(gx_target *t, const sc_opts *o, const sc_partition *p, const uint64_t *lines,
                  size_t n, int *cls, size_t *none, size_t *twice, gx_msg *msg)
{
    sc_work w;
    int rc = work_alloc(&w, n, msg);
    if (rc != GX_OK)
        return rc;
    *none = *twice = 0;
    memcpy(w.probes, lines, n * sizeof *lines);
    for (size_t i = 0; i < n; i++)
        cls[i] = -1;
    rc = baseline(t, o, &w, n, msg); /* the lines' own, once for every class */
    for (uint32_t c = 0; rc == GX_OK && c < p->classes; c++) {
        w.probes[n] = p->first[c]; /* the hammered line measures its own slowdown */
        w.base[n] = p->first_base[c];
        double self = 0;
        if ((rc = slowed_by(t, o, &w, p->first[c], n + 1, n, w.base, &self, msg)) != GX_OK)
            break;
        for (size_t i = 0; i < n; i++)
            if (w.idx[i]) {
                *twice += cls[i] >= 0;
                cls[i] = cls[i] == -1 ? (int)c : SC_IN_TWO;
            }
    }
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        *none += cls[i] < 0;
    work_free(&w);
    return rc;
}

/* The old classes' first lines against the new classes q: none may be slowed. */
static int old_firsts_apart(gx_target *t, const sc_opts *o, const sc_partition *p,
                            const sc_partition *q, gx_msg *msg)
{
    int *oc = malloc(p->classes * sizeof *oc);
    if (!oc)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    size_t none = 0, twice = 0;
    int rc = sc_join_lines(t, o, q, p->first, p->classes, oc, &none, &twice, msg);
    free(oc);
    if (rc == GX_OK && none != p->classes)
        rc = gx_fail(msg, GX_EUNSURE,
                     "slices: %zu of %u known contention classes are slowed by a new one (a "
                     "missed join, not a new slice)",
                     p->classes - none, p->classes);
    return rc;
}

/* q's classes appended to p; the lines at idx[] get their new ids. */
static void append_classes(sc_partition *p, const sc_partition *q, const size_t *idx,
                           const int *qc, size_t nq, int *cls)
{
    for (uint32_t j = 0; j < q->classes; j++) {
        p->first[p->classes + j] = q->first[j];
        p->first_base[p->classes + j] = q->first_base[j];
    }
    for (size_t i = 0; i < nq; i++)
        cls[idx[i]] = (int)(p->classes + (uint32_t)qc[i]);
    p->checked += q->checked;
    p->agreed += q->agreed;
    p->smallest = q->smallest < p->smallest ? q->smallest : p->smallest;
    p->largest = q->largest > p->largest ? q->largest : p->largest;
    p->slowdown_min = q->slowdown_min < p->slowdown_min ? q->slowdown_min : p->slowdown_min;
    p->other_max = q->other_max > p->other_max ? q->other_max : p->other_max;
    p->classes += q->classes;
}

int sc_grow_lines(gx_target *t, const sc_opts *o, sc_partition *p, const uint64_t *lines,
                  size_t n, int *cls, uint32_t *added, size_t *twice, gx_msg *msg)
{
    size_t none = 0;
    *added = 0;
    int rc = sc_join_lines(t, o, p, lines, n, cls, &none, twice, msg);
    if (rc != GX_OK || none == 0)
        return rc;
    sc_partition *q = malloc(sizeof *q);
    uint64_t *nl = malloc(none * sizeof *nl);
    size_t *idx = malloc(none * sizeof *idx);
    int *qc = malloc(none * sizeof *qc);
    if (!q || !nl || !idx || !qc)
        rc = gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (cls[i] == -1) {
            idx[k] = i;
            nl[k++] = lines[i];
        }
    if (rc == GX_OK)
        rc = sc_partition_lines(t, o, nl, none, qc, q, msg);
    if (rc == GX_OK && p->classes + q->classes > SC_MAX_CLASSES)
        rc = gx_fail(msg, GX_EUNSURE, "slices: more than %u contention classes", SC_MAX_CLASSES);
    if (rc == GX_OK)
        rc = old_firsts_apart(t, o, p, q, msg);
    if (rc == GX_OK) {
        *added = q->classes;
        append_classes(p, q, idx, qc, none, cls);
    }
    free(q);
    free(nl);
    free(idx);
    free(qc);
    return rc;
}
