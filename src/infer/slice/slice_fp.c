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

int sfp_init(sfp_model *m, int S, double sigma_floor)
{
    memset(m, 0, sizeof *m);
    if (S < 1 || S > SFP_MAX_SMS)
        return GX_EINVAL;
    m->S = S;
    m->sigma_floor = sigma_floor > 0 ? sigma_floor : 0.05;
    m->scale = 1.0;
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
    double med = gx_median(samples, (size_t)n);
    double tol = 3.0;
    if (n >= 3) {
        double mad = gx_mad(samples, (size_t)n) * 1.4826 * 5.0;
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

double sfp_dist2(const sfp_model *m, const sfp_line *l, int j)
{
    const sfp_class *c = &m->cls[j];
    double sg = sfp_sigma(m), v = sg * sg, d2 = 0;
    for (int s = 0; s < m->S; s++) {
        if (!l->n[s] || !(c->n[s] > 0))
            continue;
        double diff = l->mean[s] - c->sum[s] / c->n[s];
        d2 += diff * diff / (v * (1.0 / l->n[s] + 1.0 / c->n[s]));
    }
    return d2 / m->scale;
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
    return sfp_chi2_quantile(m->S, 1e-6);
}

double sfp_new_threshold(const sfp_model *m)
{
    return sfp_chi2_quantile(m->S, 1e-10);
}

sfp_verdict sfp_decide(const sfp_model *m, const sfp_line *l, int *best)
{
    *best = -1;
    if (m->n_classes == 0)
        return SFP_NEW;
    double d1 = INFINITY, d2 = INFINITY;
    for (int j = 0; j < m->n_classes; j++) {
        double d = sfp_dist2(m, l, j);
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
    }
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
        ratio = gx_median(r, cnt) / 0.45494;
        m->scale = ratio > 1.0 ? ratio : 1.0;
    }
    free(r);
    return ratio;
}
