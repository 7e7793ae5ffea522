/* slice_fp.c - latency fingerprints and their chi-square classification
 * (see slice_fp.h).
 *
 * Notes: the robust filter keeps samples within max(5 * 1.4826 * MAD,
 * 5 sigma, 3 cycles) of the batch median: a reload that missed (a
 * background eviction between the loads) costs tens to hundreds of cycles
 * more than a hit and an outlier thousands, both far outside that band,
 * while the jitter of a hit stays inside it. */
#include "slice_fp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/error.h"
#include "gpuxray/stats.h"

#define SFP_P_ACCEPT 1e-6 /* tail probability of the accept test */
#define SFP_P_NEW 1e-10   /* tail probability of the new-class test */
#define SFP_SORT_MAX 512  /* batch samples copied to the stack at most */

/* ---- a batch's median and MAD ------------------------------------------------- */

/* The k-th smallest of a[0..n-1] (k < n, no NaN), moving a[] so that
 * a[0..k-1] <= a[k] <= a[k+1..n-1] (quickselect, median-of-three pivot). */
static double select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        double x = a[lo], y = a[mid], z = a[hi];
        double p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* gx_median(a, n) bit for bit (n >= 1, no NaN), reordering a[] (scratch). */
static double median_inplace(double *a, size_t n)
{
    double hi = select_kth(a, n, n / 2);
    if (n % 2)
        return hi;
    double lo = a[0];
    for (size_t i = 1; i < n / 2; i++)
        lo = a[i] > lo ? a[i] : lo;
    return 0.5 * (lo + hi);
}

/* *med = gx_median(x, n), *mad = gx_mad(x, n) (when n >= 3), bit for bit:
 * two selections in a stack copy instead of three sorted heap copies.
 * Batches with a NaN or an infinity, or over SFP_SORT_MAX samples, take the
 * general functions. */
void sfp_batch_median_mad(const double *x, int n, double *med, double *mad)
{
    double c[SFP_SORT_MAX];
    int plain = n > SFP_SORT_MAX;
    for (int i = 0; i < n && !plain; i++) {
        if (!isfinite(x[i]))
            plain = 1;
        else
            c[i] = x[i];
    }
    if (plain) {
        *med = gx_median(x, (size_t)n);
        *mad = n >= 3 ? gx_mad(x, (size_t)n) : 0;
        return;
    }
    *med = median_inplace(c, (size_t)n);
    *mad = 0;
    if (n >= 3) {
        for (int i = 0; i < n; i++)
            c[i] = fabs(x[i] - *med);
        *mad = median_inplace(c, (size_t)n);
    }
}

/* ---- the model -------------------------------------------------------------------- */

int sfp_init(sfp_model *m, int S, double sigma_floor)
{
    memset(m, 0, sizeof *m);
    if (S < 1 || S > SFP_MAX_SMS)
        return GX_EINVAL;
    m->S = S;
    m->sigma_floor = sigma_floor > 0 ? sigma_floor : 0.05;
    m->scale = 1.0;
    m->thr_S = S;
    m->t_acc = sfp_chi2_quantile(S, SFP_P_ACCEPT);
    m->t_new = sfp_chi2_quantile(S, SFP_P_NEW);
    m->cap = 64;
    m->cls = calloc((size_t)m->cap, sizeof *m->cls);
    return m->cls ? GX_OK : GX_ENOMEM;
}

void sfp_free(sfp_model *m)
{
    free(m->cls);
    m->cls = NULL;
    m->n_classes = m->cap = 0;
}

void sfp_reset_classes(sfp_model *m)
{
    m->n_classes = 0;
}

double sfp_sigma(const sfp_model *m)
{
    double s = m->dof > 0 ? sqrt(m->ss / m->dof) : 0;
    return s > m->sigma_floor ? s : m->sigma_floor;
}

int sfp_line_add_batch(sfp_model *m, sfp_line *l, int s, const double *samples, int n)
{
    if (n <= 0 || s < 0 || s >= m->S)
        return 0;
    double med, mad0;
    sfp_batch_median_mad(samples, n, &med, &mad0);
    double tol = 3.0;
    if (n >= 3) {
        double mad = mad0 * 1.4826 * 5.0;
        if (mad > tol)
            tol = mad;
    }
    if (m->dof >= 20) {
        double sg = 5.0 * sfp_sigma(m);
        if (sg > tol)
            tol = sg;
    }
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (fabs(samples[i] - med) <= tol) {
            sum += samples[i];
            k++;
        }
    if (k == 0)
        return 0;
    double mean = sum / k;
    double ss = 0;
    for (int i = 0; i < n; i++)
        if (fabs(samples[i] - med) <= tol)
            ss += (samples[i] - mean) * (samples[i] - mean);
    m->ss += ss;
    m->dof += k - 1;
    double tot = (double)l->n[s] + k;
    l->mean[s] = (l->mean[s] * l->n[s] + sum) / tot;
    l->n[s] += (uint32_t)k;
    return k;
}

uint32_t sfp_line_min_n(const sfp_model *m, const sfp_line *l)
{
    uint32_t mn = UINT32_MAX;
    for (int s = 0; s < m->S; s++)
        if (l->n[s] < mn)
            mn = l->n[s];
    return mn == UINT32_MAX ? 0 : mn;
}

double sfp_center(const sfp_model *m, int j, int s)
{
    const sfp_class *c = &m->cls[j];
    return c->n[s] > 0 ? c->sum[s] / c->n[s] : NAN;
}

/* D2 of l against class c before the calibration scale; v = sigma^2 and
 * inv_l[s] = 1.0 / l->n[s]: each term as (l - sum / n)^2 / (v (1 / n_l +
 * 1 / n)), from the class's cached center and 1 / n. */
static double dist2_raw(const sfp_model *m, const sfp_line *l, const double *inv_l,
                        const sfp_class *c, double v)
{
    double d2 = 0;
    for (int s = 0; s < m->S; s++) {
        if (!l->n[s] || !(c->n[s] > 0))
            continue;
        double diff = l->mean[s] - c->center[s];
        d2 += diff * diff / (v * (inv_l[s] + c->inv_n[s]));
    }
    return d2;
}

/* dist2_raw(...) / scale, or a value >= bound that stands for it once a
 * partial sum (every 4 slots) reaches the bound: the terms are >= 0 and a
 * rounded sum of them never decreases, so the whole D2 is >= bound too. */
static double dist2_bounded(const sfp_model *m, const sfp_line *l, const double *inv_l,
                            const sfp_class *c, double v, double bound, int line_full)
{
    double d2 = 0;
    if (line_full && c->full) {
        /* every slot has samples on both sides: the same sum, no tests */
        for (int s = 0; s < m->S; s++) {
            double diff = l->mean[s] - c->center[s];
            d2 += diff * diff / (v * (inv_l[s] + c->inv_n[s]));
            if ((s & 3) == 3 && d2 / m->scale >= bound)
                return d2 / m->scale;
        }
        return d2 / m->scale;
    }
    for (int s = 0; s < m->S; s++) {
        if (l->n[s] && c->n[s] > 0) {
            double diff = l->mean[s] - c->center[s];
            d2 += diff * diff / (v * (inv_l[s] + c->inv_n[s]));
        }
        if ((s & 3) == 3 && d2 / m->scale >= bound)
            return d2 / m->scale;
    }
    return d2 / m->scale;
}

/* inv_l[s] = 1.0 / l->n[s]; returns 1 when every slot has samples. */
static int line_inverses(const sfp_model *m, const sfp_line *l, double *inv_l)
{
    int full = 1;
    for (int s = 0; s < m->S; s++) {
        inv_l[s] = 1.0 / l->n[s];
        full &= l->n[s] > 0;
    }
    return full;
}

double sfp_dist2(const sfp_model *m, const sfp_line *l, int j)
{
    double sg = sfp_sigma(m), inv_l[SFP_MAX_SMS];
    line_inverses(m, l, inv_l);
    return dist2_raw(m, l, inv_l, &m->cls[j], sg * sg) / m->scale;
}

double sfp_line_dist2(const sfp_model *m, const sfp_line *a, const sfp_line *b)
{
    double sg = sfp_sigma(m), v = sg * sg, d2 = 0;
    for (int s = 0; s < m->S; s++) {
        if (!a->n[s] || !b->n[s])
            continue;
        double diff = a->mean[s] - b->mean[s];
        d2 += diff * diff / (v * (1.0 / a->n[s] + 1.0 / b->n[s]));
    }
    return d2 / m->scale;
}

double sfp_chi2_quantile(int k, double p)
{
    /* z: upper normal quantile of p (Acklam-free: bisection on erfc) */
    double lo = 0, hi = 40;
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(mid / sqrt(2.0)) > p)
            lo = mid;
        else
            hi = mid;
    }
    double z = 0.5 * (lo + hi);
    double a = 2.0 / (9.0 * k);
    double t = 1.0 - a + z * sqrt(a);
    return k * t * t * t;
}

double sfp_accept_threshold(const sfp_model *m)
{
    return m->thr_S == m->S ? m->t_acc : sfp_chi2_quantile(m->S, SFP_P_ACCEPT);
}

double sfp_new_threshold(const sfp_model *m)
{
    return m->thr_S == m->S ? m->t_new : sfp_chi2_quantile(m->S, SFP_P_NEW);
}

sfp_verdict sfp_decide(const sfp_model *m, const sfp_line *l, int *best)
{
    *best = -1;
    if (m->n_classes == 0)
        return SFP_NEW;
    double d1 = INFINITY, d2 = INFINITY;
    double sg = sfp_sigma(m), v = sg * sg, inv_l[SFP_MAX_SMS];
    int full = line_inverses(m, l, inv_l);
    for (int j = 0; j < m->n_classes; j++) {
        /* a class at or beyond the runner-up changes neither d1 nor d2 */
        double d = dist2_bounded(m, l, inv_l, &m->cls[j], v, d2, full);
        if (d < d1) {
            d2 = d1;
            d1 = d;
            *best = j;
        } else if (d < d2) {
            d2 = d;
        }
    }
    double t_acc = sfp_accept_threshold(m), t_new = sfp_new_threshold(m);
    if (d1 <= t_acc && d2 >= t_new)
        return SFP_ASSIGN;
    if (d1 >= t_new)
        return SFP_NEW;
    return SFP_UNSURE;
}

int sfp_class_new(sfp_model *m, const sfp_line *l)
{
    if (m->n_classes == m->cap) {
        int nc = m->cap * 2;
        sfp_class *c = realloc(m->cls, (size_t)nc * sizeof *c);
        if (!c)
            return -1;
        m->cls = c;
        m->cap = nc;
    }
    int j = m->n_classes++;
    memset(&m->cls[j], 0, sizeof m->cls[j]);
    sfp_class_add(m, j, l);
    return j;
}

void sfp_class_add(sfp_model *m, int j, const sfp_line *l)
{
    sfp_class *c = &m->cls[j];
    for (int s = 0; s < m->S; s++) {
        c->sum[s] += l->mean[s] * l->n[s];
        c->n[s] += l->n[s];
        c->center[s] = c->sum[s] / c->n[s];
        c->inv_n[s] = 1.0 / c->n[s];
    }
    c->full = 1;
    for (int s = 0; s < m->S; s++)
        c->full &= c->n[s] > 0;
    c->members++;
}

double sfp_calibrate(sfp_model *m, const sfp_line *lines, const int *labels, size_t n)
{
    /* robust: the median of the normalised squared residuals against the
     * median of chi2(1) (0.4549), so a few mislabelled lines do not count */
    double sg = sfp_sigma(m), v = sg * sg;
    size_t cap = n * (size_t)m->S, cnt = 0;
    double *r = cap ? malloc(cap * sizeof *r) : NULL;
    if (!r)
        return 1.0;
    for (size_t i = 0; i < n; i++) {
        int j = labels[i];
        if (j < 0 || j >= m->n_classes || m->cls[j].members < 2)
            continue;
        const sfp_class *c = &m->cls[j];
        for (int s = 0; s < m->S; s++) {
            double nl = lines[i].n[s], nc = c->n[s];
            if (!(nl > 0) || !(nc > nl))
                continue;
            double diff = lines[i].mean[s] - c->sum[s] / nc;
            r[cnt++] = diff * diff / (v * (1.0 / nl - 1.0 / nc));
        }
    }
    double ratio = 1.0;
    if (cnt >= 64) {
        int nan = 0;
        for (size_t i = 0; i < cnt && !nan; i++)
            nan = isnan(r[i]);
        ratio = (nan ? gx_median(r, cnt) : median_inplace(r, cnt)) / 0.45494;
        m->scale = ratio > 1.0 ? ratio : 1.0;
    }
    free(r);
    return ratio;
}
