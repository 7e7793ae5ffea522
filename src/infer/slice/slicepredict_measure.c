/* slicepredict_measure.c - the slice predictor's measurements and setup:
 * latency fingerprints of lines from several SMs (seq calls, retried), their
 * classification into slice classes (new classes when allowed), the store
 * of labelled lines for calibration, the SMs chosen and the pilot that sets
 * the repetitions from the closest pair of classes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slicepredict_internal.h"

/* ---- measuring ---------------------------------------------------------------- */

static int seq_retry(gx_slicepred *sp, const gx_seq_op *ops, size_t n, uint32_t sm, double *cyc)
{
    int rc = GX_EUNSURE;
    for (int i = 0; i < 8 && rc == GX_EUNSURE; i++)
        rc = gx_target_seq(sp->t, ops, n, sm, cyc, sp->msg);
    return rc;
}

/* One round: reps samples of every line from every SM slot. */
static int measure_round(gx_slicepred *sp, const uint64_t *offs, size_t n, sfp_line *lines,
                         uint32_t reps)
{
    size_t per = (size_t)reps + 1;
    size_t chunk = n < SP_BATCH_LINES ? n : SP_BATCH_LINES;
    gx_seq_op *ops = malloc(chunk * per * sizeof *ops);
    double *cyc = malloc(chunk * reps * sizeof *cyc);
    if (!ops || !cyc) {
        free(ops);
        free(cyc);
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory measuring lines");
    }
    int rc = GX_OK;
    for (size_t b = 0; rc == GX_OK && b < n; b += chunk) {
        size_t m = n - b < chunk ? n - b : chunk;
        for (size_t i = 0; i < m; i++)
            for (size_t r = 0; r < per; r++) {
                gx_seq_op *op = &ops[i * per + r];
                op->offset = offs[b + i];
                op->kind = GX_OP_LOAD;
                op->timed = r > 0;
            }
        for (int s = 0; rc == GX_OK && s < sp->S; s++) {
            rc = seq_retry(sp, ops, m * per, sp->sms[s], cyc);
            for (size_t i = 0; rc == GX_OK && i < m; i++)
                sfp_line_add_batch(&sp->fp, &lines[b + i], s, cyc + i * reps, (int)reps);
        }
    }
    sp->sum.lines_measured += n;
    free(ops);
    free(cyc);
    return rc;
}

static int store_add(gx_slicepred *sp, const sfp_line *l, int label)
{
    if (sp->n_st >= SP_STORE_MAX)
        return GX_OK; /* enough for calibration */
    if (sp->n_st == sp->cap_st) {
        size_t nc = sp->cap_st ? 2 * sp->cap_st : 256;
        sfp_line *st = realloc(sp->st, nc * sizeof *st);
        if (!st)
            return GX_ENOMEM;
        sp->st = st;
        int *lab = realloc(sp->st_lab, nc * sizeof *lab);
        if (!lab)
            return GX_ENOMEM;
        sp->st_lab = lab;
        sp->cap_st = nc;
    }
    sp->st[sp->n_st] = *l;
    sp->st_lab[sp->n_st] = label;
    sp->n_st++;
    return GX_OK;
}

int sp_ensure_ext(gx_slicepred *sp, uint32_t need)
{
    if (need <= sp->cap_ext)
        return GX_OK;
    uint32_t nc = sp->cap_ext ? sp->cap_ext : 64;
    while (nc < need)
        nc *= 2;
    uint32_t *e = realloc(sp->ext, nc * sizeof *e);
    if (!e)
        return GX_ENOMEM;
    for (uint32_t i = sp->cap_ext; i < nc; i++)
        e[i] = i;
    sp->ext = e;
    sp->cap_ext = nc;
    return GX_OK;
}

/* Label lines by fingerprint (internal ids). allow_new: a line far from
 * every class opens a new class; else it gets -1. Lines still unsure after
 * the rounds get -1 too; *unsure counts them. */
int sp_classify(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels, int allow_new,
                size_t *unsure, int force)
{
    sfp_line *lines = calloc(n ? n : 1, sizeof *lines);
    size_t *pend = malloc((n ? n : 1) * sizeof *pend);
    uint64_t *poffs = malloc((n ? n : 1) * sizeof *poffs);
    sfp_line *plines = calloc(n ? n : 1, sizeof *plines);
    if (!lines || !pend || !poffs || !plines) {
        free(lines);
        free(pend);
        free(poffs);
        free(plines);
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory classifying lines");
    }
    int rc = measure_round(sp, offs, n, lines, sp->reps);
    size_t np = n;
    for (size_t i = 0; i < n; i++) {
        pend[i] = i;
        labels[i] = -1;
    }
    for (int round = 0; rc == GX_OK && np > 0 && round < SP_MAX_ROUNDS; round++) {
        size_t nn = 0;
        for (size_t q = 0; rc == GX_OK && q < np; q++) {
            size_t i = pend[q];
            int best = -1;
            sfp_verdict v = sfp_decide(&sp->fp, &lines[i], &best);
            if (v == SFP_ASSIGN) {
                labels[i] = best;
                sfp_class_add(&sp->fp, best, &lines[i]);
                rc = store_add(sp, &lines[i], best);
            } else if (v == SFP_NEW) {
                if (allow_new) {
                    int j = sfp_class_new(&sp->fp, &lines[i]);
                    if (j < 0 || sp_ensure_ext(sp, (uint32_t)sp->fp.n_classes) != GX_OK)
                        rc = gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
                    else
                        rc = store_add(sp, &lines[i], j);
                    labels[i] = j;
                }
            } else {
                pend[nn++] = i;
            }
        }
        np = nn;
        if (rc == GX_OK && np > 0 && round + 1 < SP_MAX_ROUNDS) {
            for (size_t q = 0; q < np; q++) {
                poffs[q] = offs[pend[q]];
                plines[q] = lines[pend[q]];
            }
            rc = measure_round(sp, poffs, np, plines, sp->reps);
            for (size_t q = 0; q < np; q++)
                lines[pend[q]] = plines[q];
        }
    }
    /* force: a line still unsure after every round takes its nearest class
     * (on a real GPU some slices sit at nearly the same latency from every
     * SM, and a line between two of them stays unsure however long it is
     * measured); it does not move the class centers. A wrong guess shows as
     * a verification error, which makes the learner try again. */
    if (rc == GX_OK && force && np > 0) {
        for (size_t q = 0; q < np && rc == GX_OK; q++) {
            size_t i = pend[q];
            int best = -1;
            (void)sfp_decide(&sp->fp, &lines[i], &best);
            if (best < 0 && allow_new) {
                best = sfp_class_new(&sp->fp, &lines[i]);
                if (best < 0 || sp_ensure_ext(sp, (uint32_t)sp->fp.n_classes) != GX_OK)
                    rc = gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
            }
            labels[i] = best;
        }
        sp->sum.forced += np;
        np = 0;
    }
    if (unsure)
        *unsure = rc == GX_OK ? np : 0;
    /* recalibrate when the labelled store grew by a quarter (a median over
     * all its residuals: not on every call) */
    if (rc == GX_OK && sp->n_st >= 128 && sp->n_st >= sp->n_st_calib + sp->n_st_calib / 4 + 1) {
        sfp_calibrate(&sp->fp, sp->st, sp->st_lab, sp->n_st);
        sp->n_st_calib = sp->n_st;
    }
    free(lines);
    free(pend);
    free(poffs);
    free(plines);
    return rc;
}

/* ---- setup ---------------------------------------------------------------------- */

void gx_slicepred_spread_sms(uint32_t sm_count, uint32_t S, uint32_t *sms)
{
    uint32_t n = sm_count ? sm_count : 1;
    for (uint32_t i = 0; i < S; i++) {
        uint64_t a = (uint64_t)i * n / S;
        uint64_t b = (uint64_t)(i + 1) * n / S;
        sms[i] = (uint32_t)((a + b) / 2 < n ? (a + b) / 2 : n - 1);
    }
}

void sp_pick_sms(gx_slicepred *sp)
{
    gx_slicepred_spread_sms(sp->sm_count, (uint32_t)sp->S, sp->sms);
}

uint64_t sp_random_line(gx_slicepred *sp, uint64_t base)
{
    uint64_t lines = (sp->o.page_bytes / sp->o.line_bytes);
    return base + gx_rng_below(&sp->rng, lines) * sp->o.line_bytes;
}

/* Relative 1e-5 quantile of the squared distance between two random
 * fingerprints over S SMs (uniform skew; mean 2 S var): the closest pair of
 * up to ~100 slices is about this much closer than a typical pair. */
static double close_pair_ratio(int S)
{
    if (S >= 32)
        return 0.30;
    if (S >= 16)
        return 0.144;
    if (S >= 8)
        return 0.033;
    return 0.01;
}

/* Half the typical squared distance per SM between the fingerprints of two
 * lines of DIFFERENT slices, from pairs of pilot lines (r0 samples each):
 * q = mean over SMs of the squared difference of the two lines' means, less
 * the noise part 2 sg^2 / r0. Pairs of one slice (q ~ 0) are left out; of
 * the rest, the median of the lowest mode stands for the closest kind of
 * pair: a structure on top of the per-(SM, slice) skew (near and far
 * partitions seen from one SM, a partition-distance step on a uniform card)
 * makes slices of different partitions far apart while slices of one
 * partition differ only by the skew, and those are the pairs a classifier
 * can merge. Returns 0 when no pair stands out of the noise (one class). */
static double pair_between(const sfp_line *lines, int n, int S, double sg, uint32_t r0)
{
    double noise = 2.0 * sg * sg / r0;
    double floor_q = 5.0 * noise * sqrt(2.0 / S); /* 5 sd of q for one slice */
    double q[SP_PILOT_LINES * SP_PILOT_LINES / 2];
    size_t nq = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double acc = 0;
            for (int s = 0; s < S; s++) {
                double d = lines[i].mean[s] - lines[j].mean[s];
                acc += d * d;
            }
            double v = acc / S - noise;
            if (v > floor_q)
                q[nq++] = v;
        }
    if (nq < 3)
        return 0;
    /* pairs of one partition against pairs across partitions: two clear
     * modes (4 to 7 times apart); then the median of the lower one */
    double sep = 0, thr = gx_split_threshold(q, nq, &sep);
    if (isfinite(thr) && sep >= 4.0) {
        size_t k = 0;
        for (size_t i = 0; i < nq; i++)
            if (q[i] < thr)
                q[k++] = q[i];
        nq = k;
    }
    return 0.5 * gx_median(q, nq);
}

/* Pilot: noise sigma and the distance between slices (pair_between) from
 * SP_PILOT_LINES random lines of the reference page
 * over up to 32 SMs; then the number of SMs and reps: the cheapest S * (reps
 * + 1) for which the closest pair of slices stands 2 * t_new apart in D2. */
int sp_pilot(gx_slicepred *sp, uint64_t base)
{
    const uint32_t r0 = 8;
    uint64_t offs[SP_PILOT_LINES];
    sfp_line lines[SP_PILOT_LINES];
    memset(lines, 0, sizeof lines);
    for (int i = 0; i < SP_PILOT_LINES; i++)
        offs[i] = sp_random_line(sp, base);
    int rc = measure_round(sp, offs, SP_PILOT_LINES, lines, r0);
    if (rc != GX_OK)
        return rc;
    double sg = sfp_sigma(&sp->fp);
    double between = pair_between(lines, SP_PILOT_LINES, sp->S, sg, r0);
    sp->sum.skew_var = between;
    /* no spread above the noise of the pilot's means: one class (or a skew
     * far below the jitter, which no repeat count resolves): a moderate
     * repeat count, no more */
    int flat = between < 0.5 * sg * sg / r0;
    int cands[2] = {sp->S < 16 ? sp->S : 16, sp->S};
    if (sp->o.n_sms)
        cands[0] = sp->S;
    int bestS = cands[0];
    uint32_t bestR = 256;
    double bestCost = INFINITY;
    for (int c = 0; c < 2; c++) {
        int S = cands[c];
        double t_new = sfp_chi2_quantile(S, 1e-10);
        double sep = close_pair_ratio(S) * 2.0 * S * between; /* cycles^2 */
        double need = flat ? 16 : 2.0 * t_new * sg * sg / sep;
        uint32_t R = need < 6 ? 6 : need > 128 ? 128 : (uint32_t)ceil(need);
        double cost = (double)S * (R + 1);
        if (cost < bestCost) {
            bestCost = cost;
            bestS = S;
            bestR = R;
        }
    }
    if (!sp->o.reps)
        sp->reps = bestR;
    if (bestS != sp->S) {
        double ss = sp->fp.ss, dof = sp->fp.dof;
        sfp_free(&sp->fp);
        if (sfp_init(&sp->fp, bestS, 0.05) != GX_OK)
            return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
        sp->fp.ss = ss;
        sp->fp.dof = dof;
        sp->S = bestS;
        sp_pick_sms(sp);
    }
    sp->sum.sms = (uint32_t)sp->S;
    return GX_OK;
}
