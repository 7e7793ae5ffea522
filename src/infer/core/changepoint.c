/* changepoint.c - plateaus and change points of a latency curve (see
 * changepoint.h).
 *
 * Notes:
 * - Segmentation minimises sum |y - median(piece)| + penalty * pieces by
 *   dynamic programming: L1 cost so that one outlying point moves a piece's
 *   level by nothing and costs at most its own deviation, not its square.
 * - Plateau finding first replaces isolated outliers (a point far from both
 *   neighbours that agree with each other) by their neighbours' mean, then
 *   segments with a penalty of 2 * tol: a step of at least ~tol over two or
 *   more points pays for a new piece, noise well below tol does not. */
#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CP_MAX_N 512

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and L1 cost of y[i..j] (inclusive), using scratch (size >= j-i+1). */
static double piece_cost(const double *y, size_t i, size_t j, double *scratch, double *median)
{
    size_t m = j - i + 1;
    memcpy(scratch, y + i, m * sizeof *scratch);
    qsort(scratch, m, sizeof *scratch, cmp_double);
    double med = m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
    double c = 0;
    for (size_t k = i; k <= j; k++)
        c += fabs(y[k] - med);
    if (median)
        *median = med;
    return c;
}

static double piece_mad(const double *y, size_t i, size_t j, double med, double *scratch)
{
    size_t m = j - i + 1;
    for (size_t k = 0; k < m; k++)
        scratch[k] = fabs(y[i + k] - med);
    qsort(scratch, m, sizeof *scratch, cmp_double);
    return m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
}

size_t cp_segment_l1(const double *y, size_t n, double penalty, cp_segment *out, size_t max)
{
    if (!y || n == 0 || n > CP_MAX_N || !out || max == 0)
        return 0;
    double *best = malloc((n + 1) * sizeof *best);
    size_t *prev = malloc((n + 1) * sizeof *prev);
    double *scratch = malloc(n * sizeof *scratch);
    size_t count = 0;
    if (!best || !prev || !scratch)
        goto done;
    best[0] = 0;
    for (size_t j = 1; j <= n; j++) { /* best over y[0..j) */
        best[j] = INFINITY;
        for (size_t i = 0; i < j; i++) { /* last piece y[i..j-1] */
            double c = best[i] + penalty + piece_cost(y, i, j - 1, scratch, NULL);
            if (c < best[j]) {
                best[j] = c;
                prev[j] = i;
            }
        }
    }
    /* Walk back to count, then fill in order. */
    size_t pieces = 0;
    for (size_t j = n; j > 0; j = prev[j])
        pieces++;
    size_t k = pieces;
    for (size_t j = n; j > 0; j = prev[j]) {
        k--;
        if (k < max) {
            cp_segment *s = &out[k];
            s->first = prev[j];
            s->last = j - 1;
            piece_cost(y, s->first, s->last, scratch, &s->level);
            s->spread = piece_mad(y, s->first, s->last, s->level, scratch);
        }
    }
    count = pieces < max ? pieces : max;
done:
    free(best);
    free(prev);
    free(scratch);
    return count;
}

size_t cp_plateaus(const double *y, size_t n, double tol, size_t min_pts, cp_segment *out,
                   size_t max)
{
    if (!y || n == 0 || n > CP_MAX_N || !(tol > 0))
        return 0;
    double *z = malloc(n * sizeof *z);
    if (!z)
        return 0;
    memcpy(z, y, n * sizeof *z);
    for (size_t i = 1; i + 1 < n; i++) { /* isolated outliers */
        double a = y[i - 1], b = y[i + 1];
        if (fabs(a - b) < tol && fabs(y[i] - a) > tol && fabs(y[i] - b) > tol)
            z[i] = 0.5 * (a + b);
    }
    if (n >= 2 && fabs(y[n - 1] - y[n - 2]) > 3 * tol && n >= 3 &&
        fabs(y[n - 2] - y[n - 3]) < tol && y[n - 1] < y[n - 2])
        z[n - 1] = y[n - 2]; /* a falling last point on a rising curve */
    cp_segment seg[CP_MAX_SEGMENTS];
    size_t ns = cp_segment_l1(z, n, 2.0 * tol, seg, CP_MAX_SEGMENTS);
    double *scratch = malloc(n * sizeof *scratch);
    if (!scratch) {
        free(z);
        return 0;
    }
    /* Merge neighbours whose levels differ by less than tol. */
    size_t m = 0;
    for (size_t i = 0; i < ns; i++) {
        if (m > 0 && fabs(seg[i].level - seg[m - 1].level) < tol) {
            cp_segment *s = &seg[m - 1];
            s->last = seg[i].last;
            piece_cost(z, s->first, s->last, scratch, &s->level);
            s->spread = piece_mad(z, s->first, s->last, s->level, scratch);
        } else {
            seg[m++] = seg[i];
        }
    }
    free(scratch);
    size_t np = 0;
    for (size_t i = 0; i < m && np < max; i++) {
        size_t pts = seg[i].last - seg[i].first + 1;
        if (pts < min_pts || seg[i].spread > tol)
            continue;
        if (np > 0 && seg[i].level < out[np - 1].level + tol)
            continue;
        out[np++] = seg[i];
    }
    free(z);
    return np;
}

double cp_crossing_logx(const double *x, const double *y, size_t n, size_t from, double level)
{
    for (size_t i = from + 1; i < n; i++) {
        if (y[i] >= level && y[i - 1] < level) {
            double lx0 = log(x[i - 1]), lx1 = log(x[i]);
            double f = (level - y[i - 1]) / (y[i] - y[i - 1]);
            return exp(lx0 + f * (lx1 - lx0));
        }
    }
    return NAN;
}
