/* test_slices.c - discovery stage 5 (slices and the slice hash) and the
 * slice predictor (slicepredict.h):
 * - the cube-and-anchors solver on synthetic hashes (linear with bits above
 *   the page, and tables for non-power-of-two slice counts): the classes it
 *   predicts equal the truth's on every line of the page, at a small cost;
 * - the fingerprint classifier on synthetic fingerprints (small skew, noise,
 *   outliers): no class mixes two slices, no slice splits; its fast paths
 *   (one stack sort per batch, cached centers and thresholds, the decision's
 *   early exit, the calibration's selection) equal the plain formulas bit
 *   for bit on batches of 1-300 samples with ties;
 * - the stage on sim targets: the seed card (64 slices, linear, a partition
 *   bit partly above the page) and a generated profile with a table hash:
 *   slices and the hash match the truth (gx_compare: partitions of held-out
 *   lines up to relabelling); a near-far card: partitions from SM groups;
 *   slices at the same distance from every SM (a skew of 2 cycles: the
 *   fingerprints read one class): the count from contention;
 * - uniform partitions (slice_parts.h) on synthetic centers (1, 2, 4
 *   partitions, one class per partition included) and through the stage on
 *   generated uniform cards;
 * - new pages of a fresh arena: after measuring at most 1% of each page's
 *   lines, the prediction equals a fresh measurement of every checked line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/compare.h"
#include "gpuxray/generate.h"
#include "gpuxray/hash.h"
#include "gpuxray/profile.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/stats.h"
#include "gpuxray/target.h"
#include "infer/infer_util.h"
#include "infer/slice/slice_fp.h"
#include "infer/slice/slice_parts.h"
#include "infer/slice/slice_solve.h"
#include "testutil.h"

#define PAGE_BYTES ((uint64_t)2 << 20)
#define OBS_SPACE(line_shift) ((PAGE_BYTES - 1) & ~(((uint64_t)1 << (line_shift)) - 1))

/* ---- synthetic hashes for the solver ------------------------------------------- */

typedef struct synth {
    int k;
    uint64_t masks[16];
    uint32_t *table; /* NULL: linear */
    uint64_t high;   /* the page's bits above the page */
    uint64_t calls, lines;
} synth;

static int synth_class(const synth *s, uint64_t x)
{
    uint64_t pa = s->high | x, b = 0;
    for (int i = 0; i < s->k; i++)
        b |= (uint64_t)gx_parity64(pa & s->masks[i]) << i;
    return s->table ? (int)s->table[b] : (int)b;
}

static int synth_label(void *user, const uint64_t *offs, size_t n, int *labels)
{
    synth *s = user;
    s->calls++;
    s->lines += n;
    for (size_t i = 0; i < n; i++)
        labels[i] = synth_class(s, offs[i]);
    return GX_OK;
}

/* A random hash like the generator's: k masks with independent observable
 * parts of weight 2..10 over bits 7..20, some with bits 21..33. */
static void synth_make(synth *s, gx_rng *r, int k, uint32_t slices)
{
    memset(s, 0, sizeof *s);
    s->k = k;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (int i = 0; i < k; i++) {
        uint64_t m;
        do {
            m = 0;
            int w = 2 + (int)gx_rng_below(r, 9);
            while (__builtin_popcountll(m) < w)
                m |= 1ull << (7 + gx_rng_below(r, 14));
        } while (!gx_gf2_basis_add(&b, m));
        if (gx_rng_below(r, 3) == 0)
            m |= 1ull << (21 + gx_rng_below(r, 13));
        s->masks[i] = m;
    }
    if (slices && slices != (1u << k)) {
        size_t n = (size_t)1 << k;
        uint64_t *v = malloc(n * sizeof *v);
        s->table = malloc(n * sizeof *s->table);
        assert_non_null(v);
        assert_non_null(s->table);
        for (size_t i = 0; i < n; i++)
            v[i] = i % slices;
        gx_rng_shuffle_u64(r, v, n);
        for (size_t i = 0; i < n; i++)
            s->table[i] = (uint32_t)v[i];
        free(v);
    }
    s->high = (gx_rng_next(r) & 0x3FFE00000ull);
}

/* Found classes of every line of the page equal the truth's up to a
 * bijective relabelling. */
static void expect_same_partition(const synth *s, const ssolve_result *res, uint64_t space)
{
    int f2t[4096], t2f[4096];
    memset(f2t, -1, sizeof f2t);
    memset(t2f, -1, sizeof t2f);
    for (uint64_t x = 0; x <= space; x += 128) {
        if (x & ~space)
            continue;
        int f = ssolve_predict(res, res->table, 0, x), t = synth_class(s, x);
        assert_true(f >= 0 && f < 4096 && t >= 0 && t < 4096);
        if (f2t[f] < 0)
            f2t[f] = t;
        if (t2f[t] < 0)
            t2f[t] = f;
        if (f2t[f] != t || t2f[t] != f)
            fail_msg("line 0x%llx: found class %d, truth %d (mapped %d / %d)",
                     (unsigned long long)x, f, t, f2t[f], t2f[t]);
    }
}

static void test_solver_linear(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 21);
    const uint64_t space = OBS_SPACE(7);
    for (int trial = 0; trial < 40; trial++) {
        synth s;
        int k = (int)gx_rng_below(&r, 8); /* 1..128 slices */
        synth_make(&s, &r, k, 0);
        ssolve_result res;
        gx_msg msg;
        int rc = ssolve_run(space, NULL, synth_label, &s, &r, &res, &msg);
        if (rc != GX_OK)
            fail_msg("trial %d: %s", trial, msg.text);
        assert_int_equal(res.k, k);
        assert_true(res.linear);
        /* the kernel is exactly the truth's (restricted to the page) */
        uint64_t ker[64];
        int d = gx_gf2_annihilator(s.masks, (size_t)k, space, ker);
        gx_gf2_basis tb;
        gx_gf2_basis_from(&tb, ker, (size_t)d);
        assert_true(gx_gf2_basis_equal(&tb, &res.kernel));
        expect_same_partition(&s, &res, space);
        /* cheap: 2^k cube lines plus a few anchors per other bit */
        assert_true(res.lines <= (1u << k) + 32 + 14 * 16);
        ssolve_free(&res);
    }
}

static void test_solver_table(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 22);
    const uint32_t counts[] = {3, 5, 6, 7, 12, 20, 24, 40, 48, 85, 100};
    for (size_t trial = 0; trial < sizeof counts / sizeof counts[0]; trial++) {
        uint32_t slices = counts[trial];
        int k = 0;
        while ((1u << k) < 4 * slices && k < 8)
            k++;
        synth s;
        synth_make(&s, &r, k, slices);
        ssolve_result res;
        gx_msg msg;
        const uint64_t space = OBS_SPACE(7);
        int rc = ssolve_run(space, NULL, synth_label, &s, &r, &res, &msg);
        if (rc != GX_OK)
            fail_msg("slices %u: %s", slices, msg.text);
        assert_int_equal(res.k, k);
        assert_false(res.linear);
        assert_int_equal(res.n_labels, (int)slices);
        expect_same_partition(&s, &res, space);
        /* another page: the same masks, the table translated by some z */
        synth other = s;
        other.high ^= 0x1e00000ull;
        int found = 0;
        for (uint64_t z = 0; z < (1u << k) && !found; z++) {
            int ok = 1;
            for (uint64_t x = 0; x < PAGE_BYTES && ok; x += 128 * 37)
                ok = ssolve_predict(&res, res.table, z, x & space) ==
                     synth_class(&other, x & space);
            found = ok;
        }
        assert_true(found);
        ssolve_free(&res);
        free(s.table);
    }
}

/* ---- synthetic fingerprints for the classifier ------------------------------------ */

static void synth_batch(gx_rng *r, double base, double sigma, double *out, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = base + sigma * gx_rng_normal(r);
        if (gx_rng_below(r, 500) == 0)
            out[i] += 3000; /* outlier */
        else if (gx_rng_below(r, 400) == 0)
            out[i] += 220; /* a reload that missed */
    }
}

static void test_classifier_synthetic(void **state)
{
    (void)state;
    enum { S = 32, CLASSES = 40, LINES = 600, REPS = 12 };
    gx_rng r;
    gx_rng_seed(&r, 23);
    const double sigma = 4.0, amp = 3 * sigma;
    static double skew[CLASSES][S];
    for (int c = 0; c < CLASSES; c++)
        for (int s = 0; s < S; s++)
            skew[c][s] = 250 + amp * gx_rng_uniform(&r);
    sfp_model m;
    assert_int_equal(sfp_init(&m, S, 0.05), GX_OK);
    int f2t[CLASSES * 2], t2f[CLASSES];
    memset(f2t, -1, sizeof f2t);
    memset(t2f, -1, sizeof t2f);
    int rounds_max = 0;
    for (int i = 0; i < LINES; i++) {
        int truth = (int)gx_rng_below(&r, CLASSES);
        sfp_line l;
        memset(&l, 0, sizeof l);
        int label = -1, rounds = 0;
        while (label < 0 && rounds < 12) {
            double b[REPS];
            for (int s = 0; s < S; s++) {
                synth_batch(&r, skew[truth][s], sigma, b, REPS);
                sfp_line_add_batch(&m, &l, s, b, REPS);
            }
            rounds++;
            int best = -1;
            sfp_verdict v = sfp_decide(&m, &l, &best);
            if (v == SFP_ASSIGN) {
                label = best;
                sfp_class_add(&m, best, &l);
            } else if (v == SFP_NEW) {
                label = sfp_class_new(&m, &l);
            }
        }
        assert_true(label >= 0 && label < CLASSES * 2);
        rounds_max = rounds > rounds_max ? rounds : rounds_max;
        if (f2t[label] < 0)
            f2t[label] = truth;
        if (t2f[truth] < 0)
            t2f[truth] = label;
        if (f2t[label] != truth || t2f[truth] != label)
            fail_msg("line %d of slice %d got class %d (which holds slice %d)", i, truth, label,
                     f2t[label]);
    }
    assert_int_equal(m.n_classes, CLASSES);
    /* the pooled noise estimate ignores outliers and misses */
    assert_true(fabs(sfp_sigma(&m) - sigma) < 0.3);
    sfp_free(&m);
}

static void test_chi2_quantile(void **state)
{
    (void)state;
    /* chi2(16) upper 1e-3 quantile is 39.25; Wilson-Hilferty within 1% */
    assert_true(fabs(sfp_chi2_quantile(16, 1e-3) - 39.25) < 0.5);
    assert_true(fabs(sfp_chi2_quantile(32, 0.05) - 46.19) < 0.5);
    assert_true(sfp_chi2_quantile(16, 1e-10) > sfp_chi2_quantile(16, 1e-6));
}

/* The plain formulas the classifier's fast paths stand for (gx_median and
 * gx_mad per batch, D2 with sigma and the centers recomputed per class, the
 * chi-square thresholds per decision): results must agree bit for bit. */
static void ref_add_batch(sfp_model *m, sfp_line *l, int s, const double *x, int n)
{
    double med = gx_median(x, (size_t)n), tol = 3.0;
    if (n >= 3 && gx_mad(x, (size_t)n) * 1.4826 * 5.0 > tol)
        tol = gx_mad(x, (size_t)n) * 1.4826 * 5.0;
    if (m->dof >= 20 && 5.0 * sfp_sigma(m) > tol)
        tol = 5.0 * sfp_sigma(m);
    double sum = 0, ss = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (fabs(x[i] - med) <= tol) {
            sum += x[i];
            k++;
        }
    if (k == 0)
        return;
    double mean = sum / k;
    for (int i = 0; i < n; i++)
        if (fabs(x[i] - med) <= tol)
            ss += (x[i] - mean) * (x[i] - mean);
    m->ss += ss;
    m->dof += k - 1;
    double tot = (double)l->n[s] + k;
    l->mean[s] = (l->mean[s] * l->n[s] + sum) / tot;
    l->n[s] += (uint32_t)k;
}

static double ref_dist2(const sfp_model *m, const sfp_line *l, int j)
{
    const sfp_class *c = &m->cls[j];
    double v = sfp_sigma(m) * sfp_sigma(m), d2 = 0;
    for (int s = 0; s < m->S; s++) {
        if (!l->n[s] || !(c->n[s] > 0))
            continue;
        double diff = l->mean[s] - c->sum[s] / c->n[s];
        d2 += diff * diff / (v * (1.0 / l->n[s] + 1.0 / c->n[s]));
    }
    return d2 / m->scale;
}

static sfp_verdict ref_decide(const sfp_model *m, const sfp_line *l, int *best)
{
    *best = -1;
    if (m->n_classes == 0)
        return SFP_NEW;
    double d1 = INFINITY, d2 = INFINITY;
    for (int j = 0; j < m->n_classes; j++) {
        double d = ref_dist2(m, l, j);
        if (d < d1) {
            d2 = d1;
            d1 = d;
            *best = j;
        } else if (d < d2) {
            d2 = d;
        }
    }
    double t_acc = sfp_chi2_quantile(m->S, 1e-6), t_new = sfp_chi2_quantile(m->S, 1e-10);
    if (d1 <= t_acc && d2 >= t_new)
        return SFP_ASSIGN;
    return d1 >= t_new ? SFP_NEW : SFP_UNSURE;
}

static double ref_calibrate(const sfp_model *m, const sfp_line *lines, const int *labels,
                            size_t n)
{
    double v = sfp_sigma(m) * sfp_sigma(m);
    double *r = malloc(n * (size_t)m->S * sizeof *r);
    size_t cnt = 0;
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        int j = labels[i];
        if (j < 0 || j >= m->n_classes || m->cls[j].members < 2)
            continue;
        for (int s = 0; s < m->S; s++) {
            double nl = lines[i].n[s], nc = m->cls[j].n[s];
            if (!(nl > 0) || !(nc > nl))
                continue;
            double diff = lines[i].mean[s] - m->cls[j].sum[s] / nc;
            r[cnt++] = diff * diff / (v * (1.0 / nl - 1.0 / nc));
        }
    }
    double ratio = cnt >= 64 ? gx_median(r, cnt) / 0.45494 : 1.0;
    free(r);
    return ratio;
}

static void test_classifier_exact(void **state)
{
    (void)state;
    gx_rng rb;
    gx_rng_seed(&rb, 5);
    for (int t = 0; t < 3000; t++) {
        int n = 1 + (int)gx_rng_below(&rb, t < 2000 ? 48 : 600);
        double x[600], med, mad;
        for (int k = 0; k < n; k++) {
            x[k] = 250 + 6 * gx_rng_normal(&rb);
            if (t % 2)
                x[k] = floor(x[k]); /* ties */
            if (gx_rng_below(&rb, 50) == 0)
                x[k] += 3000;
        }
        sfp_batch_median_mad(x, n, &med, &mad);
        assert_true(med == gx_median(x, (size_t)n));
        assert_true(mad == (n >= 3 ? gx_mad(x, (size_t)n) : 0));
    }
    enum { S = 16, CLASSES = 12, LINES = 300 };
    gx_rng r;
    gx_rng_seed(&r, 41);
    static double skew[CLASSES][S];
    for (int c = 0; c < CLASSES; c++)
        for (int s = 0; s < S; s++)
            skew[c][s] = 250 + 12 * gx_rng_uniform(&r);
    sfp_model m, ref;
    assert_int_equal(sfp_init(&m, S, 0.05), GX_OK);
    assert_int_equal(sfp_init(&ref, S, 0.05), GX_OK);
    static sfp_line lines[LINES];
    static int labels[LINES];
    memset(lines, 0, sizeof lines);
    for (int i = 0; i < LINES; i++) {
        int truth = (int)gx_rng_below(&r, CLASSES), reps = 1 + (int)gx_rng_below(&r, 300);
        if (i % 3 == 0)
            reps = 1 + (int)gx_rng_below(&r, 40);
        sfp_line rl;
        memset(&rl, 0, sizeof rl);
        double b[300];
        for (int s = 0; s < S; s++) {
            synth_batch(&r, skew[truth][s], 4.0, b, reps);
            for (int k = 0; k < reps && i % 5 == 0; k++)
                b[k] = floor(b[k]); /* integer cycles: many ties */
            sfp_line_add_batch(&m, &lines[i], s, b, reps);
            ref_add_batch(&ref, &rl, s, b, reps);
        }
        assert_memory_equal(&lines[i], &rl, sizeof rl);
        assert_true(m.ss == ref.ss && m.dof == ref.dof);
        int best = -1, rbest = -1;
        sfp_verdict v = sfp_decide(&m, &lines[i], &best);
        assert_int_equal(v, ref_decide(&m, &lines[i], &rbest));
        assert_int_equal(best, rbest);
        for (int j = 0; j < m.n_classes; j++)
            assert_true(sfp_dist2(&m, &lines[i], j) == ref_dist2(&m, &lines[i], j));
        labels[i] = v == SFP_ASSIGN ? best : v == SFP_NEW ? sfp_class_new(&m, &lines[i]) : -1;
        if (v == SFP_ASSIGN)
            sfp_class_add(&m, best, &lines[i]);
        ref.n_classes = m.n_classes; /* ref only holds the noise pool */
        if (i % 50 == 49) {
            double want = ref_calibrate(&m, lines, labels, (size_t)i + 1);
            assert_true(sfp_calibrate(&m, lines, labels, (size_t)i + 1) == want);
        }
    }
    ref.n_classes = 0;
    sfp_free(&ref);
    sfp_free(&m);
}

/* ---- partitions of a uniform L2 (slice_parts.h) ------------------------------------ */

/* Centers of nc classes over S SM slots (SM ids spread over sm_count) for
 * P partitions: a random skew in [0, amp) per (SM, class) plus amp when
 * the class's partition (class / (nc / P)) is not the SM's side (sm * P /
 * sm_count), plus center noise. perm_slots: shuffle the slot order (sides
 * no longer contiguous in SM ids). */
static void synth_centers(gx_rng *r, uint32_t nc, uint32_t S, uint32_t P, uint32_t sm_count,
                          double amp, double noise, int perm_slots, double *c)
{
    uint32_t order[SPARTS_MAX_SLOTS];
    for (uint32_t i = 0; i < S; i++)
        order[i] = i;
    for (uint32_t i = S; perm_slots && i > 1; i--) {
        uint32_t j = (uint32_t)gx_rng_below(r, i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < S; i++) {
        uint64_t a = (uint64_t)order[i] * sm_count / S, b = (uint64_t)(order[i] + 1) * sm_count / S;
        uint32_t side = (uint32_t)((a + b) / 2 * P / sm_count);
        for (uint32_t j = 0; j < nc; j++)
            c[(size_t)j * S + i] = 200 + amp * gx_rng_uniform(r) +
                                   (P > 1 && j / (nc / P) != side ? amp : 0) +
                                   noise * gx_rng_normal(r);
    }
}

static void test_parts_synthetic(void **state)
{
    (void)state;
    gx_rng r;
    gx_rng_seed(&r, 31);
    static double c[SPARTS_MAX_CLASSES * SPARTS_MAX_SLOTS];
    static uint32_t group[SPARTS_MAX_CLASSES];
    const uint32_t parts[3] = {1, 2, 4};
    int cases = gx_test_sanitizer() ? 150 : 600;
    for (int t = 0; t < cases; t++) {
        uint32_t P = parts[t % 3];
        /* one class per partition in a quarter of the cases (the hard ones) */
        uint32_t per = t % 4 == 0 ? (P == 1 ? 2 : 1) : 1 + (uint32_t)gx_rng_below(&r, 128 / P);
        uint32_t nc = per * P, S = t % 2 ? 16 : 32;
        uint32_t sm_count = 32 + (uint32_t)gx_rng_below(&r, 100);
        double amp = 4 + 56 * gx_rng_uniform(&r);
        synth_centers(&r, nc, S, P, sm_count, amp, 0.1, 0, c);
        sparts_result res;
        assert_int_equal(sparts_uniform(c, nc, S, (uint64_t)t, group, &res), 0);
        if (res.partitions != P)
            fail_msg("case %d: %u classes over %u SMs, %u partitions (amp %.1f): found %u (%s)",
                     t, nc, S, P, amp, res.partitions, res.how);
        assert_true(res.conf >= 0.9);
        /* every class in its partition (numbered in SM order, as generated) */
        for (uint32_t j = 0; j < nc && P > 1; j++)
            assert_int_equal(group[j], j / per);
    }
    /* sides that are not contiguous in SM ids: a structure, not established */
    synth_centers(&r, 32, 32, 2, 64, 30, 0.1, 1, c);
    sparts_result res;
    assert_int_equal(sparts_uniform(c, 32, 32, 1, group, &res), 0);
    assert_int_equal(res.structure, 1);
    assert_int_equal(res.partitions, 0);
    /* one class: one partition; bad arguments */
    assert_int_equal(sparts_uniform(c, 1, 16, 1, group, &res), 0);
    assert_int_equal(res.partitions, 1);
    assert_int_equal(sparts_uniform(c, 0, 16, 1, group, &res), -1);
    assert_int_equal(sparts_uniform(c, 4, SPARTS_MAX_SLOTS + 1, 1, group, &res), -1);
}

/* ---- sim targets ------------------------------------------------------------------- */

typedef struct simcase {
    gx_profile *truth;
    char path[4096];
    gx_target *t;
} simcase;

static void open_profile(simcase *c, const char *path, uint64_t seed)
{
    gx_msg msg;
    snprintf(c->path, sizeof c->path, "%s", path);
    if (gx_profile_load(path, &c->truth, &msg) != GX_OK)
        fail_msg("load %s: %s", path, msg.text);
    char spec[4200];
    snprintf(spec, sizeof spec, "sim:%s", path);
    if (gx_target_open(spec, seed, &c->t, &msg) != GX_OK)
        fail_msg("open %s: %s", spec, msg.text);
}

/* A generated profile matching pred (first seed from `from`), saved to a
 * temporary file. */
static void open_generated(simcase *c, uint64_t from, int (*pred)(const gx_profile *),
                           const char *name)
{
    gx_msg msg;
    for (uint64_t seed = from; seed < from + 2000; seed++) {
        gx_profile *p = NULL;
        if (gx_generate(seed, NULL, &p, &msg) != GX_OK)
            fail_msg("generate %llu: %s", (unsigned long long)seed, msg.text);
        if (!pred(p)) {
            gx_profile_free(p);
            continue;
        }
        const char *path = gx_test_tmp(name);
        if (gx_profile_save(p, path, &msg) != GX_OK)
            fail_msg("save: %s", msg.text);
        gx_profile_free(p);
        open_profile(c, path, seed);
        return;
    }
    fail_msg("no generated profile fits %s", name);
}

static void close_case(simcase *c, int remove_file)
{
    gx_target_close(c->t);
    gx_profile_free(c->truth);
    if (remove_file)
        remove(c->path);
}

/* A discovery context with what stages 1-4 would have found (from the
 * truth: this test is about stage 5 alone). */
static gx_infer *make_ctx(simcase *c, gx_msg *msg)
{
    gx_infer *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    ctx->t = c->t;
    ctx->info = gx_target_get_info(c->t);
    gx_rng_seed(&ctx->rng, 5);
    ctx->msg = msg;
    ctx->out = gx_profile_new();
    assert_non_null(ctx->out);
    ctx->timer.have = 1;
    ctx->timer.noise = c->truth->sim.jitter_cycles > 0.5 ? c->truth->sim.jitter_cycles : 0.5;
    ctx->line.line_bytes = c->truth->l2.line_bytes;
    ctx->levels.topology = c->truth->l2.topology;
    ctx->levels.hit_latency = ctx->levels.miss_latency = NAN;
    ctx->levels.miss_delta = ctx->levels.topology == GX_TOPO_NEAR_FAR
                          ? c->truth->l2.far_hit_cycles - c->truth->l2.near_hit_cycles
                          : c->truth->memory.dram_latency_cycles - c->truth->l2.hit_cycles;
    if (infer_arena_ensure(ctx, 16 * PAGE_BYTES) != GX_OK)
        fail_msg("arena: %s", msg->text);
    return ctx;
}

static void free_ctx(gx_infer *ctx)
{
    gx_hash_clear(&ctx->slices.hash);
    gx_slicepred_free(ctx->slices.pred); /* the stage keeps its predictors for the ways stage */
    gx_slicepred_free(ctx->slices.lpred);
    gx_profile_free(ctx->out);
    free(ctx);
}

static const gx_compare_row *compare_field(const gx_profile *truth, const gx_profile *found,
                                           const char *field, gx_compare_result *cr)
{
    gx_msg msg;
    if (gx_compare(truth, found, NULL, cr, &msg) != GX_OK)
        fail_msg("compare: %s", msg.text);
    return gx_compare_find(cr, field);
}

static void expect_field(const gx_profile *truth, const gx_profile *found, const char *field)
{
    gx_compare_result cr;
    const gx_compare_row *row = compare_field(truth, found, field, &cr);
    if (!row)
        fail_msg("no compare row for %s", field);
    if (row->verdict != GX_VERDICT_MATCH)
        fail_msg("%s: truth %s, found %s (%s, disagreement %.4f)", field, row->truth,
                 row->found, gx_verdict_name(row->verdict), row->disagreement);
}

static void run_stage(simcase *c, gx_infer **out_ctx, gx_msg *msg)
{
    gx_infer *ctx = make_ctx(c, msg);
    int rc = gx_stage_slices(ctx);
    if (rc != GX_OK)
        fail_msg("stage slices on %s: %s", c->path, msg->text);
    *out_ctx = ctx;
}

static void test_stage_seed_card(void **state)
{
    (void)state;
    simcase c;
    gx_msg msg;
    open_profile(&c, gx_test_path("profiles/seed-ampere-6mb.json"), 3);
    gx_infer *ctx;
    run_stage(&c, &ctx, &msg);
    assert_int_equal(ctx->slices.slices, 64);
    assert_int_equal(ctx->out->l2.slices, 64);
    assert_true(ctx->out->l2.slice_hash.present);
    assert_int_equal(ctx->out->l2.slice_hash.n_masks, 6);
    assert_null(ctx->out->l2.slice_hash.table);
    expect_field(c.truth, ctx->out, "l2.slices");
    expect_field(c.truth, ctx->out, "l2.hash.slice");
    /* partitions: the uniform card's partition-distance step */
    assert_int_equal(ctx->out->l2.partitions, 2);
    expect_field(c.truth, ctx->out, "l2.partitions");
    /* the profile is valid with what the stage wrote */
    assert_true(gx_profile_confidence(ctx->out, "l2.hash.slice") >= 0.99);
    gx_target_stats st;
    gx_target_get_stats(c.t, &st);
    /* cheap, the whole stage: contention first (the sim has the probe), 550
     * calls and 7.3 M accesses measured, most of them the hash's labelling
     * of the reference page (2 + 2 x 64 launches of its 16384 lines); the
     * fingerprint path took 1204 calls and 1.6 M accesses */
    assert_true(st.calls < 1000);
    assert_true(st.accesses < 10000000);
    free_ctx(ctx);
    close_case(&c, 0);
}

/* Slices at the same distance from every SM: hopper-like with a per-(SM,
 * slice) skew of 2 cycles, where the fingerprints read one class. The
 * contention cross-check must give the 60 slices of a partition x 2. */
static void test_stage_contention_count(void **state)
{
    (void)state;
    gx_profile *p = NULL;
    gx_msg msg;
    assert_int_equal(gx_profile_load(gx_test_path("profiles/hopper-like.json"), &p, &msg), GX_OK);
    p->sim.sm_slice_skew_cycles = 2;
    const char *path = gx_test_tmp("hopper-like-flat-skew.json");
    assert_int_equal(gx_profile_save(p, path, &msg), GX_OK);
    gx_profile_free(p);
    simcase c;
    open_profile(&c, path, 5);
    gx_infer *ctx;
    run_stage(&c, &ctx, &msg);
    assert_int_equal(ctx->slices.slices, 120);
    assert_int_equal(ctx->out->l2.slices, 120);
    assert_true(gx_profile_confidence(ctx->out, "l2.slices") >= 0.9);
    expect_field(c.truth, ctx->out, "l2.slices");
    assert_false(ctx->out->l2.slice_hash.present); /* the fingerprints' hash is coarser */
    free_ctx(ctx);
    close_case(&c, 0);
}

static int has_table_uniform(const gx_profile *p)
{
    return p->l2.slice_hash.table && p->l2.topology == GX_TOPO_UNIFORM && p->l2.slices >= 20 &&
           p->sim.jitter_cycles >= 2;
}

static void test_stage_table_hash(void **state)
{
    (void)state;
    simcase c;
    gx_msg msg;
    open_generated(&c, 100, has_table_uniform, "table.json");
    gx_infer *ctx;
    run_stage(&c, &ctx, &msg);
    assert_int_equal(ctx->slices.slices, c.truth->l2.slices);
    assert_non_null(ctx->out->l2.slice_hash.table);
    expect_field(c.truth, ctx->out, "l2.slices");
    expect_field(c.truth, ctx->out, "l2.hash.slice");
    free_ctx(ctx);
    close_case(&c, 1);
}

static int near_far_two(const gx_profile *p)
{
    return p->l2.topology == GX_TOPO_NEAR_FAR && p->l2.partitions == 2 && p->l2.slices >= 8;
}

static void test_stage_near_far_partitions(void **state)
{
    (void)state;
    simcase c;
    gx_msg msg;
    open_generated(&c, 200, near_far_two, "nearfar.json");
    gx_infer *ctx;
    run_stage(&c, &ctx, &msg);
    assert_int_equal(ctx->slices.partitions, 2);
    assert_int_equal(ctx->slices.slices, c.truth->l2.slices);
    expect_field(c.truth, ctx->out, "l2.partitions");
    expect_field(c.truth, ctx->out, "l2.slices");
    free_ctx(ctx);
    close_case(&c, 1);
}

/* Uniform cards: many slices in 2 partitions (the partition step once made
 * the pilot overestimate the skew between slices of one partition, and two
 * of them merged), one slice per partition, and one partition. */
static int uniform_128_two(const gx_profile *p)
{
    return p->l2.topology == GX_TOPO_UNIFORM && p->l2.partitions == 2 && p->l2.slices == 128 &&
           p->sim.jitter_cycles >= 4;
}

static int uniform_one_per_part(const gx_profile *p)
{
    return p->l2.topology == GX_TOPO_UNIFORM && p->l2.partitions > 1 &&
           p->l2.slices == p->l2.partitions;
}

static int uniform_one_part(const gx_profile *p)
{
    return p->l2.topology == GX_TOPO_UNIFORM && p->l2.partitions == 1 && p->l2.slices >= 2 &&
           p->l2.slices <= 8;
}

static void stage_uniform_case(uint64_t from, int (*pred)(const gx_profile *), const char *name)
{
    simcase c;
    gx_msg msg;
    open_generated(&c, from, pred, name);
    gx_infer *ctx;
    run_stage(&c, &ctx, &msg);
    expect_field(c.truth, ctx->out, "l2.slices");
    expect_field(c.truth, ctx->out, "l2.partitions");
    expect_field(c.truth, ctx->out, "l2.hash.slice");
    assert_true(gx_profile_confidence(ctx->out, "l2.partitions") >= 0.9);
    free_ctx(ctx);
    close_case(&c, 1);
}

static void test_stage_uniform_partitions(void **state)
{
    (void)state;
    stage_uniform_case(1, uniform_128_two, "u128.json");
    stage_uniform_case(1, uniform_one_per_part, "uone.json");
    stage_uniform_case(1, uniform_one_part, "upart1.json");
}

/* Learn on one arena; predict pages of a fresh arena from <= 1% of their
 * lines; a fresh measurement of every checked line agrees. */
static void predict_new_pages(simcase *c, int learn_pages, int pages, int lines_per_page)
{
    gx_msg msg;
    assert_int_equal(gx_target_arena(c->t, (uint64_t)learn_pages * PAGE_BYTES, &msg), GX_OK);
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = c->truth->l2.line_bytes;
    gx_slicepred *sp = NULL;
    if (gx_slicepred_learn(c->t, &o, &sp, &msg) != GX_OK)
        fail_msg("learn: %s", msg.text);
    gx_slicepred_summary s;
    gx_slicepred_get_summary(sp, &s);
    assert_int_equal(s.verify_errors, 0);
    assert_true(s.verified > 0);
    assert_int_equal(gx_target_arena(c->t, (uint64_t)pages * PAGE_BYTES, &msg), GX_OK);
    const uint32_t page_lines = (uint32_t)(PAGE_BYTES / o.line_bytes);
    const uint32_t budget = page_lines / 100;
    uint64_t *offs = malloc((size_t)lines_per_page * sizeof *offs);
    int *meas = malloc((size_t)lines_per_page * sizeof *meas);
    assert_non_null(offs);
    assert_non_null(meas);
    gx_rng r;
    gx_rng_seed(&r, 77);
    for (int p = 0; p < pages; p++) {
        gx_slicepred_page pg;
        uint64_t base = (uint64_t)p * PAGE_BYTES;
        if (gx_slicepred_identify(sp, base, budget, &pg, &msg) != GX_OK)
            fail_msg("page %d: %s", p, msg.text);
        assert_true(pg.lines_measured <= budget);
        for (int i = 0; i < lines_per_page; i++)
            offs[i] = base + gx_rng_below(&r, page_lines) * o.line_bytes;
        assert_int_equal(gx_slicepred_measure(sp, offs, (size_t)lines_per_page, meas, &msg),
                         GX_OK);
        for (int i = 0; i < lines_per_page; i++)
            if (meas[i] != gx_slicepred_predict(sp, &pg, offs[i]))
                fail_msg("page %d line 0x%llx: predicted %d, measured %d", p,
                         (unsigned long long)offs[i], gx_slicepred_predict(sp, &pg, offs[i]),
                         meas[i]);
    }
    free(offs);
    free(meas);
    gx_slicepred_free(sp);
}

static void test_predict_new_pages_seed(void **state)
{
    (void)state;
    simcase c;
    open_profile(&c, gx_test_path("profiles/seed-ampere-6mb.json"), 4);
    predict_new_pages(&c, 8, 4, gx_test_sanitizer() ? 200 : 1000);
    close_case(&c, 0);
}

/* hopper-like: a table over 14 masks, 4 of them on frame bits only: 16 page
 * components (each page's split is one of 16), copies in the near
 * partition (classes are slices within a partition). */
static void test_predict_new_pages_hopper(void **state)
{
    (void)state;
    simcase c;
    open_profile(&c, gx_test_path("profiles/hopper-like.json"), 6);
    predict_new_pages(&c, 256, 6, gx_test_sanitizer() ? 100 : 1000);
    close_case(&c, 0);
}

static void test_predict_new_pages_table(void **state)
{
    (void)state;
    simcase c;
    open_generated(&c, 300, has_table_uniform, "table2.json");
    predict_new_pages(&c, 8, 4, gx_test_sanitizer() ? 200 : 1000);
    close_case(&c, 1);
}

static void test_bad_options(void **state)
{
    (void)state;
    simcase c;
    gx_msg msg;
    open_profile(&c, gx_test_path("profiles/seed-ampere-6mb.json"), 5);
    assert_int_equal(gx_target_arena(c.t, PAGE_BYTES, &msg), GX_OK);
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = 96; /* not a power of two */
    gx_slicepred *sp = NULL;
    assert_int_equal(gx_slicepred_learn(c.t, &o, &sp, &msg), GX_EINVAL);
    assert_null(sp);
    assert_non_null(strstr(msg.text, "line_bytes"));
    o.line_bytes = 128;
    o.region_offset = PAGE_BYTES; /* past the arena */
    assert_int_equal(gx_slicepred_learn(c.t, &o, &sp, &msg), GX_EINVAL);
    close_case(&c, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_linear),
        cmocka_unit_test(test_solver_table),
        cmocka_unit_test(test_classifier_synthetic),
        cmocka_unit_test(test_chi2_quantile),
        cmocka_unit_test(test_classifier_exact),
        cmocka_unit_test(test_parts_synthetic),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_stage_seed_card),
        cmocka_unit_test(test_stage_table_hash),
        cmocka_unit_test(test_stage_near_far_partitions),
        cmocka_unit_test(test_stage_contention_count),
        cmocka_unit_test(test_stage_uniform_partitions),
        cmocka_unit_test(test_predict_new_pages_seed),
        cmocka_unit_test(test_predict_new_pages_table),
        cmocka_unit_test(test_predict_new_pages_hopper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
