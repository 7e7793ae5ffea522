/* slices_stage.c - discovery stage 5: slices, partitions and the slice hash
 * (the driver and the partitions; slices_contend.c, slices_outputs.c).
 *
 * Method:
 * - Slice classes and the hash: gx_slicepred_learn (slicepredict.h) on the
 *   work area of the arena: latency fingerprints from 16-32 SMs classify
 *   lines; the cube-and-anchors solver (slice_solve.h) gives XOR masks over
 *   the observable bits (line bits .. page bits) and a table when the
 *   classes are not linear in them; other pages are identified as the
 *   reference page's table under an XOR constant (or learned as a new
 *   component); held-out lines of every page check the result. A failed
 *   check retries at twice the samples, except when the reference page's
 *   classes are merged and the target has the contention probe: then
 *   contention decides (below) and the first attempt stands (learnt again
 *   with its retries should contention not establish the hash).
 * - Partitions, in this order:
 *   1. home visible (near-far, each line in one partition): from every SM
 *      the class centers split into near (fast) and far (slow) groups; the
 *      pattern "which SMs see this class as near" groups the classes into
 *      partitions (equal groups required).
 *   2. copies in the near partition (near-far, copy_to_near): every SM sees
 *      every line at near latency, so classes are slices WITHIN a partition;
 *      SMs are grouped by a cross test (load a fresh line on SM a, time it
 *      on SM b: near hit = same partition, far/DRAM = different); slices =
 *      partitions x classes (equal partitions assumed), and the home
 *      partition of a line is not observable: the hash stays out of the
 *      profile.
 *   3. uniform (slice_parts.h): a partition-distance step makes equal
 *      class groups that are fast from contiguous runs of SM ids; no such
 *      pattern and no structure at all -> one partition; a structure that
 *      does not fit -> not established, left out (never guessed).
 *
 * - The count, cross-checked by contention (slices_contend.c; targets with
 *   the probe): a random sample of the reference page's lines is grouped
 *   again by contention alone, and rounds of other pages' lines joined to
 *   those classes (lines of slices the reference page lacks grow new
 *   classes). When every class came back from a second member, no line
 *   fell in two, a round added no class and they are at least as many as
 *   the fingerprint classes (or those are uneven, merged, so their count
 *   bounds nothing), their count is the slice count (x partitions with
 *   copies in the near partition): fingerprints merge slices at the same
 *   distance from every SM (an H200: 34-63 classes, uneven, for 47 a
 *   partition), contention does not.
 * - The hash at contention resolution: when the count is more than the
 *   fingerprint classes (or those merge), the fingerprints' hash is coarser
 *   than the slices; the hash is then learnt from the contention labels
 *   (the reference page labelled whole, the same solver, the count's pages
 *   identified and checked on their held-out lines) and written only when
 *   established; else left out. Cost: slices_contend.c. Without the probe
 *   the fingerprints' results stand as they are.
 *
 * Notes: the stage touches only the arena's work area (never the fresh
 * reserve except through infer_fresh_block) and never replaces the arena
 * when one exists (the eviction sets of stage 4 stay valid). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../../slice/slice_parts.h"
#include "slices_internal.h"

#define SL_CROSS_VOTES 3

/* ---- 1 / 3: grouping classes by their near/far pattern over SMs ---------- */

/* For each slot, split the class centers (Otsu); bit s of pattern[j] = class
 * j is on the fast side at slot s. Returns the median over slots of the gap
 * between the two sides (cycles) and of the separation. */
static void near_patterns(const gx_slicepred *sp, uint32_t nc, uint32_t S, uint64_t *pattern,
                          double *gap_med, double *sep_med)
{
    double *c = malloc(nc * sizeof *c);
    double gaps[32], seps[32];
    memset(pattern, 0, nc * sizeof *pattern);
    for (uint32_t s = 0; s < S && c; s++) {
        for (uint32_t j = 0; j < nc; j++)
            c[j] = gx_slicepred_center(sp, j, s);
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

static int try_grouping(const gx_slicepred *sp, uint32_t nc, uint32_t S, double min_gap,
                        double min_sep, uint32_t *group, parts_result *pr, int method)
{
    uint64_t pattern[SL_MAX_CLASSES];
    double gap = 0, sep = 0;
    if (nc < 2 || nc > SL_MAX_CLASSES)
        return 0;
    near_patterns(sp, nc, S, pattern, &gap, &sep);
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

static int sm_groups(gx_infer *ctx, const gx_slicepred *sp, uint32_t S, parts_result *pr)
{
    const gx_levels_result *lv = &ctx->levels;
    const gx_timer_result *tm = &ctx->timer;
    double thr = isfinite(lv->miss_delta) && lv->miss_delta > 0 ? 0.5 * lv->miss_delta : 40.0;
    double band = 3.0 * (tm->have ? tm->noise : 2.0) + 10.0;
    if (thr < band)
        thr = band;
    int grp[32];
    for (uint32_t s = 0; s < S; s++)
        grp[s] = -1;
    int P = 0, unsure = 0, rc = GX_OK;
    for (uint32_t s = 0; s < S && rc == GX_OK; s++) {
        if (grp[s] >= 0)
            continue;
        grp[s] = P;
        uint32_t a = gx_slicepred_sm(sp, s);
        for (uint32_t u = s + 1; u < S && rc == GX_OK; u++) {
            if (grp[u] >= 0)
                continue;
            int same = same_partition(ctx, a, gx_slicepred_sm(sp, u), thr, &rc);
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

static int uniform_partitions(gx_infer *ctx, const gx_slicepred *sp,
                              const gx_slicepred_summary *s, uint32_t *group, parts_result *pr)
{
    uint32_t nc = s->classes, S = s->sms;
    if (nc == 0 || nc > SPARTS_MAX_CLASSES || S > SPARTS_MAX_SLOTS)
        return GX_OK; /* not observable */
    double *c = malloc((size_t)nc * S * sizeof *c);
    if (!c)
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    for (uint32_t j = 0; j < nc; j++)
        for (uint32_t k = 0; k < S; k++)
            c[(size_t)j * S + k] = gx_slicepred_center(sp, j, k);
    sparts_result r;
    int bad = sparts_uniform(c, nc, S, gx_rng_next(&ctx->rng), group, &r);
    free(c);
    if (bad)
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: partition test failed (out of memory)");
    pr->method = 3;
    pr->partitions = r.partitions;
    pr->slices = nc;
    pr->conf = r.conf;
    snprintf(pr->how, sizeof pr->how, "%s", r.how);
    return GX_OK;
}

/* ---- the driver ---------------------------------------------------------------- */

static void relabel_by_group(gx_slicepred *sp, uint32_t nc, const uint32_t *group, uint32_t P,
                             gx_msg *msg)
{
    uint32_t map[SL_MAX_CLASSES], next[16] = {0}, per = nc / P;
    for (uint32_t j = 0; j < nc; j++)
        map[j] = group[j] * per + next[group[j]]++;
    gx_slicepred_relabel(sp, map, msg);
}

/* The partitions (1 / 2 / 3 above) from the fingerprint predictor; classes
 * relabelled by group where the groups are classes. */
static int find_partitions(gx_infer *ctx, gx_slicepred *sp, const gx_slicepred_summary *sv,
                           parts_result *pr)
{
    int rc = GX_OK;
    memset(pr, 0, sizeof *pr);
    snprintf(pr->how, sizeof pr->how, "fingerprints show no partition structure (not observable)");
    uint32_t group[SL_MAX_CLASSES];
    const gx_levels_result *lv = &ctx->levels;
    if (lv->topology == GX_TOPO_NEAR_FAR) {
        double gap = isfinite(lv->miss_delta) && lv->miss_delta > 0 ? 0.5 * lv->miss_delta : 30;
        if (!try_grouping(sp, sv->classes, sv->sms, gap, 3.0, group, pr, 1)) {
            rc = sm_groups(ctx, sp, sv->sms, pr);
            if (rc == GX_OK && pr->partitions > 1) {
                pr->method = 2;
                pr->slices = sv->classes * pr->partitions;
            } else if (rc == GX_OK) {
                /* near-far levels but neither signature: not established */
                pr->partitions = 0;
                snprintf(pr->how, sizeof pr->how,
                         "near-far levels, but no near/far split of the classes and one SM "
                         "group: not established");
            }
        }
    } else {
        rc = uniform_partitions(ctx, sp, sv, group, pr);
    }
    if (rc == GX_OK && (pr->method == 1 || pr->method == 3) && pr->partitions > 1)
        relabel_by_group(sp, sv->classes, group, pr->partitions, ctx->msg);
    return rc;
}

/* The fingerprints' retries (twice the samples, twice the cost: 10-20 s of
 * an H200's 29 s slices stage) are for classes that only the fingerprints
 * decide. When the reference page's classes are merged (classes_merged:
 * slices the fingerprints cannot separate) and the target has the
 * contention probe, contention decides the count and the hash (the stage
 * runs it for merged classes): the first attempt stands. Should contention
 * not establish the hash, the stage learns again with every retry. */
typedef struct settle_state {
    gx_infer *ctx;
    int fired; /* contention_decides stopped the retries */
} settle_state;

static int contention_decides(void *user, const gx_slicepred *sp)
{
    settle_state *st = user;
    gx_hash_fn h;
    gx_msg m;
    uint32_t lo = 0, hi = 0;
    if (!gx_target_has_contend(st->ctx->t) || gx_slicepred_hash(sp, &h, &m) != GX_OK)
        return 0;
    st->fired = classes_merged(&h, &lo, &hi);
    gx_hash_clear(&h);
    return st->fired;
}

/* The fingerprint predictor, its partitions (relabelled by group) and its
 * hash; settle: let contention_decides stop the retries (*settled = 1 when
 * it did). */
static int learn_fingerprints(gx_infer *ctx, gx_slicepred_opts *o, int settle, gx_slicepred **sp,
                              gx_slicepred_summary *s, parts_result *pr, gx_hash_fn *h,
                              int *settled)
{
    settle_state st = {ctx, 0};
    o->settled = settle ? contention_decides : NULL;
    o->settled_user = &st;
    int rc = gx_slicepred_learn(ctx->t, o, sp, ctx->msg);
    o->settled = NULL;
    o->settled_user = NULL;
    *settled = st.fired;
    if (rc != GX_OK)
        return rc;
    gx_slicepred_get_summary(*sp, s);
    infer_progress(ctx,
                   "slices: %u classes, %d masks%s, %llu/%llu held-out lines agree (%u attempts, "
                   "%llu structure lines given their nearest class%s)",
                   s->classes, s->k, s->linear ? "" : " + table",
                   (unsigned long long)(s->verified - s->verify_errors),
                   (unsigned long long)s->verified, s->attempts, (unsigned long long)s->forced,
                   *settled ? "; no retry: contention decides merged classes" : "");
    rc = find_partitions(ctx, *sp, s, pr);
    if (rc == GX_OK)
        rc = gx_slicepred_hash(*sp, h, ctx->msg);
    return rc;
}

int gx_stage_slices(gx_infer *ctx)
{
    if (!ctx->line.line_bytes)
        return gx_fail(ctx->msg, GX_EINVAL, "slices: the line size is unknown (line stage)");
    uint64_t page = ctx->info->page_bytes;
    if (!page)
        return gx_fail(ctx->msg, GX_EINVAL, "slices: the target reports no page size");
    if (ctx->arena.work_bytes < page) {
        /* normally the levels stage allocated it (and the eviction sets live
         * in it): only a missing arena is allocated here */
        int rc = infer_arena_default(ctx);
        if (rc != GX_OK)
            return rc;
    }
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = ctx->line.line_bytes;
    o.page_bytes = page;
    o.region_offset = 0;
    o.region_bytes = ctx->arena.work_bytes / page * page;
    o.timer_noise_cycles = ctx->timer.have ? ctx->timer.noise : 0;
    o.seed = gx_rng_next(&ctx->rng);
    gx_slicepred *sp = NULL;
    gx_slicepred_summary s;
    parts_result pr;
    gx_hash_fn h;
    contend_result cr;
    sl_contend *cst = NULL;
    memset(&h, 0, sizeof h);
    memset(&cr, 0, sizeof cr);
    int settled = 0;
    int rc = learn_fingerprints(ctx, &o, 1, &sp, &s, &pr, &h, &settled);
    uint32_t smallest, largest;
    const int merged = rc == GX_OK && classes_merged(&h, &smallest, &largest);
    if (rc == GX_OK)
        rc = slices_contend_count(ctx, o.region_bytes, s.classes, merged, &cr, &cst);
    /* contention resolves more slices than the fingerprints: their hash */
    if (rc == GX_OK && cst && (cr.classes > s.classes || merged))
        rc = slices_contend_hash(ctx, cst, o.region_bytes, &cr);
    sl_contend_free(cst);
    if (rc == GX_OK && settled && !cr.hash_ok) {
        /* contention did not decide after all: the retries the fingerprints
         * skipped (the count stands; partitions and hash from the new run) */
        infer_progress(ctx, "slices: contention did not establish the hash: fingerprints "
                            "learnt again with their retries");
        gx_slicepred_free(sp);
        gx_hash_clear(&h);
        sp = NULL;
        rc = learn_fingerprints(ctx, &o, 0, &sp, &s, &pr, &h, &settled);
    }
    if (rc == GX_OK) {
        write_outputs(ctx, &s, &pr, &h, (double)s.lines_measured, &cr);
        record_slices(ctx, sp, &s, &pr, &h, &cr);
    }
    gx_hash_clear(&h);
    /* kept for the ways stage's slice-guided pools (learning again costs
     * as much as this stage did): the fingerprints' for the sets stage and
     * for pools where they decide, the labelled one where contention did */
    gx_slicepred_free(ctx->slices.pred);
    ctx->slices.pred = rc == GX_OK ? sp : NULL;
    if (rc != GX_OK)
        gx_slicepred_free(sp);
    gx_slicepred_free(ctx->slices.lpred);
    ctx->slices.lpred = rc == GX_OK ? cr.lpred : NULL;
    ctx->slices.lpred_generation = ctx->arena.generation;
    if (rc == GX_OK)
        cr.lpred = NULL;
    contend_result_clear(&cr);
    return rc;
}
