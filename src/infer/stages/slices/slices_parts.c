/* slices_parts.c - the slices stage's partitions (methods 1-3 of
 * slices_stage.c's notes) from the latency of every slice class from S SM
 * slots (sl_centers): the fingerprint predictor's class centers, or, where
 * contention decided the classes, the reload latencies of a few lines of
 * each contention class (slices_contend.c: centers_from_contention).
 *
 * Notes: only the centers and their SMs are read, so the two sources give
 * the partitions by the same rules; the cross test (method 2) measures
 * fresh lines and reads only the SMs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../../slice/slice_parts.h"
#include "slices_internal.h"

#define SL_CROSS_VOTES 3

void centers_free(sl_centers *c)
{
    free(c->c);
    memset(c, 0, sizeof *c);
}

int centers_from_pred(const gx_slicepred *sp, const gx_slicepred_summary *s, sl_centers *c,
                      gx_msg *msg)
{
    memset(c, 0, sizeof *c);
    c->classes = s->classes;
    c->sms = s->sms < SL_CENTER_MAX_SMS ? s->sms : SL_CENTER_MAX_SMS;
    c->reps = s->reps;
    c->lines = s->lines_measured;
    c->sigma = s->sigma_cycles;
    c->c = malloc(((size_t)c->classes * c->sms + 1) * sizeof *c->c);
    if (!c->c)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    for (uint32_t k = 0; k < c->sms; k++)
        c->sm[k] = gx_slicepred_sm(sp, k);
    for (uint32_t j = 0; j < c->classes; j++)
        for (uint32_t k = 0; k < c->sms; k++)
            c->c[(size_t)j * c->sms + k] = gx_slicepred_center(sp, j, k);
    return GX_OK;
}

static double center(const sl_centers *c, uint32_t j, uint32_t k)
{
    return c->c[(size_t)j * c->sms + k];
}

/* ---- 1 / 3: grouping classes by their near/far pattern over SMs ---------- */

/* For each slot, split the class centers (Otsu); bit s of pattern[j] = class
 * j is on the fast side at slot s. Returns the median over slots of the gap
 * between the two sides (cycles) and of the separation. */
static void near_patterns(const sl_centers *cs, uint64_t *pattern, double *gap_med,
                          double *sep_med)
{
    const uint32_t nc = cs->classes, S = cs->sms;
    double *c = malloc(nc * sizeof *c);
    double gaps[SL_CENTER_MAX_SMS], seps[SL_CENTER_MAX_SMS];
    memset(pattern, 0, nc * sizeof *pattern);
    for (uint32_t s = 0; s < S && c; s++) {
        for (uint32_t j = 0; j < nc; j++)
            c[j] = center(cs, j, s);
        double sep = 0, thr = gx_split_threshold(c, nc, &sep);
        double lo = 0, hi = 0;
        int nlo = 0, nhi = 0;
        for (uint32_t j = 0; j < nc && isfinite(thr); j++) {
            if (c[j] < thr) {
                pattern[j] |= 1ull << s;
                lo += c[j];
                nlo++;
            } else {
                hi += c[j];
                nhi++;
            }
        }
        gaps[s] = nlo && nhi ? hi / nhi - lo / nlo : 0;
        seps[s] = isfinite(thr) ? sep : 0;
    }
    *gap_med = c ? gx_median(gaps, S) : 0;
    *sep_med = c ? gx_median(seps, S) : 0;
    free(c);
}

/* Group classes with equal patterns; returns the number of groups when all
 * have the same size (and fill group[] with 0..P-1 ordered by first class),
 * else 0. */
static uint32_t group_patterns(const uint64_t *pattern, uint32_t nc, uint32_t *group)
{
    uint64_t pats[SL_MAX_CLASSES];
    uint32_t count[SL_MAX_CLASSES], P = 0;
    for (uint32_t j = 0; j < nc; j++) {
        uint32_t g = 0;
        while (g < P && pats[g] != pattern[j])
            g++;
        if (g == P) {
            if (P == SL_MAX_CLASSES)
                return 0;
            pats[P] = pattern[j];
            count[P++] = 0;
        }
        count[g]++;
        group[j] = g;
    }
    for (uint32_t g = 1; g < P; g++)
        if (count[g] != count[0])
            return 0;
    return P;
}

static int try_grouping(const sl_centers *cs, double min_gap, double min_sep, uint32_t *group,
                        parts_result *pr, int method)
{
    uint64_t pattern[SL_MAX_CLASSES];
    double gap = 0, sep = 0;
    const uint32_t nc = cs->classes;
    if (nc < 2 || nc > SL_MAX_CLASSES)
        return 0;
    near_patterns(cs, pattern, &gap, &sep);
    if (!(gap >= min_gap) || !(sep >= min_sep))
        return 0;
    uint32_t P = group_patterns(pattern, nc, group);
    if (P < 2 || P > 16 || nc % P)
        return 0;
    pr->method = method;
    pr->partitions = P;
    pr->slices = nc;
    pr->conf = sep >= 2 * min_sep ? 0.99 : 0.9;
    snprintf(pr->how, sizeof pr->how,
             "classes grouped by the SMs that see them fast (median gap %.0f cycles, "
             "separation %.1f)",
             gap, sep);
    return 1;
}

/* ---- 2: SM groups by a cross test ------------------------------------------ */

/* 1 when SMs a and b share a near partition, 0 when not, -1 unsure. */
static int same_partition(gx_infer *ctx, uint32_t a, uint32_t b, double thr, int *rc)
{
    int votes[SL_CROSS_VOTES];
    for (int v = 0; v < SL_CROSS_VOTES; v++) {
        uint64_t off = 0;
        votes[v] = -1;
        if ((*rc = infer_fresh_block(ctx, a, &off)) != GX_OK)
            return -1;
        gx_seq_op la[2] = {{off, GX_OP_LOAD, 0}, {off, GX_OP_LOAD, 0}};
        gx_seq_op lb[5];
        for (int i = 0; i < 5; i++)
            lb[i] = (gx_seq_op){off, GX_OP_LOAD, 1};
        double dummy[2], t[5];
        if ((*rc = infer_seq_timed(ctx, la, 2, a, dummy)) != GX_OK ||
            (*rc = infer_seq_timed(ctx, lb, 5, b, t)) != GX_OK)
            return -1;
        double delta = t[0] - gx_median(t + 1, 4);
        if (delta > 1000)
            continue; /* an outlier: no vote */
        votes[v] = delta < thr ? 1 : 0;
    }
    return infer_vote(votes, SL_CROSS_VOTES, 2);
}

static int sm_groups(gx_infer *ctx, const sl_centers *cs, parts_result *pr)
{
    const gx_levels_result *lv = &ctx->levels;
    const gx_timer_result *tm = &ctx->timer;
    const uint32_t S = cs->sms;
    double thr = isfinite(lv->miss_delta) && lv->miss_delta > 0 ? 0.5 * lv->miss_delta : 40.0;
    double band = 3.0 * (tm->have ? tm->noise : 2.0) + 10.0;
    if (thr < band)
        thr = band;
    int grp[SL_CENTER_MAX_SMS];
    for (uint32_t s = 0; s < S; s++)
        grp[s] = -1;
    int P = 0, unsure = 0, rc = GX_OK;
    for (uint32_t s = 0; s < S && rc == GX_OK; s++) {
        if (grp[s] >= 0)
            continue;
        grp[s] = P;
        uint32_t a = cs->sm[s];
        for (uint32_t u = s + 1; u < S && rc == GX_OK; u++) {
            if (grp[u] >= 0)
                continue;
            int same = same_partition(ctx, a, cs->sm[u], thr, &rc);
            if (same == 1)
                grp[u] = P;
            unsure += same < 0;
        }
        P++;
    }
    if (rc != GX_OK)
        return rc;
    pr->partitions = (uint32_t)P;
    pr->conf = unsure ? 0.6 : 0.97;
    snprintf(pr->how, sizeof pr->how,
             "SM groups by cross test (load on SM a, time on SM b; %d unsure pairs)", unsure);
    return GX_OK;
}

/* ---- 3: uniform, class groups fast from contiguous SM runs (slice_parts.h) -- */

static int uniform_partitions(gx_infer *ctx, const sl_centers *cs, uint32_t *group,
                              parts_result *pr)
{
    uint32_t nc = cs->classes, S = cs->sms;
    if (nc == 0 || nc > SPARTS_MAX_CLASSES || S > SPARTS_MAX_SLOTS)
        return GX_OK; /* not observable */
    sparts_result r;
    int bad = sparts_uniform(cs->c, nc, S, gx_rng_next(&ctx->rng), group, &r);
    if (bad)
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: partition test failed (out of memory)");
    pr->method = 3;
    pr->partitions = r.partitions;
    pr->slices = nc;
    pr->conf = r.conf;
    snprintf(pr->how, sizeof pr->how, "%s", r.how);
    return GX_OK;
}

/* ---- the partitions ------------------------------------------------------------ */

void group_map(uint32_t nc, const uint32_t *group, uint32_t P, uint32_t *map)
{
    uint32_t next[16] = {0}, per = nc / P;
    for (uint32_t j = 0; j < nc; j++)
        map[j] = group[j] * per + next[group[j]]++;
}

int find_partitions(gx_infer *ctx, const sl_centers *cs, uint32_t *group, parts_result *pr)
{
    int rc = GX_OK;
    memset(pr, 0, sizeof *pr);
    snprintf(pr->how, sizeof pr->how, "class latencies show no partition structure (not "
                                      "observable)");
    const gx_levels_result *lv = &ctx->levels;
    if (lv->topology == GX_TOPO_NEAR_FAR) {
        double gap = isfinite(lv->miss_delta) && lv->miss_delta > 0 ? 0.5 * lv->miss_delta : 30;
        if (!try_grouping(cs, gap, 3.0, group, pr, 1)) {
            rc = sm_groups(ctx, cs, pr);
            if (rc == GX_OK && pr->partitions > 1) {
                pr->method = 2;
                pr->slices = cs->classes * pr->partitions;
            } else if (rc == GX_OK) {
                /* near-far levels but neither signature: not established */
                pr->partitions = 0;
                snprintf(pr->how, sizeof pr->how,
                         "near-far levels, but no near/far split of the classes and one SM "
                         "group: not established");
            }
        }
    } else {
        rc = uniform_partitions(ctx, cs, group, pr);
    }
    return rc;
}
