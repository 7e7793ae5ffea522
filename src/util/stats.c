/* stats.c - robust statistics helpers (see stats.h).
 * Notes: every function copies before sorting; n is small (at most a few
 * hundred thousand) so O(n log n) via qsort is fine. */
#include "gpuxray/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, size_t n)
{
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NULL;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    return c;
}

double gx_percentile(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double *c = sorted_copy(v, n);
    if (!c)
        return NAN;
    if (p < 0)
        p = 0;
    if (p > 100)
        p = 100;
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double r = c[lo] + (h - (double)lo) * (c[hi] - c[lo]);
    free(c);
    return r;
}

double gx_median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double *c = sorted_copy(v, n);
    if (!c)
        return NAN;
    double r = (n % 2) ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return r;
}

double gx_mad(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = gx_median(v, n);
    double *d = malloc(n * sizeof *d);
    if (!d)
        return NAN;
    for (size_t i = 0; i < n; i++)
        d[i] = fabs(v[i] - m);
    double r = gx_median(d, n);
    free(d);
    return r;
}

double gx_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

double gx_stddev(const double *v, size_t n)
{
    if (n < 2)
        return 0.0;
    double m = gx_mean(v, n), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}

double gx_min(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double gx_max(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

double gx_split_threshold(const double *v, size_t n, double *separation)
{
    if (separation)
        *separation = 0.0;
    if (n < 2)
        return NAN;
    double *c = sorted_copy(v, n);
    if (!c)
        return NAN;
    if (c[0] == c[n - 1]) {
        free(c);
        return NAN;
    }
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += c[i];
    double best = -1, left = 0;
    size_t best_k = 1;
    for (size_t k = 1; k < n; k++) { /* split: c[0..k-1] | c[k..n-1] */
        left += c[k - 1];
        if (c[k] == c[k - 1])
            continue;
        double w0 = (double)k, w1 = (double)(n - k);
        double m0 = left / w0, m1 = (total - left) / w1;
        double between = w0 * w1 * (m0 - m1) * (m0 - m1);
        if (between > best) {
            best = between;
            best_k = k;
        }
    }
    double thr = 0.5 * (c[best_k - 1] + c[best_k]);
    if (separation) {
        double m0 = gx_median(c, best_k), m1 = gx_median(c + best_k, n - best_k);
        double s0 = gx_mad(c, best_k), s1 = gx_mad(c + best_k, n - best_k);
        double spread = 1.4826 * (s0 + s1) / 2.0;
        if (spread < 1e-9)
            spread = 1e-9;
        *separation = (m1 - m0) / spread;
    }
    free(c);
    return thr;
}
