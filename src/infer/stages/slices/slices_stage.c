/* slices_stage.c - discovery stage 5: slices, partitions and the slice hash
 * (the driver; slices_parts.c, slices_contend.c, slices_outputs.c).
 *
 * Method, contention first (targets with the contention probe,
 * gx_target_has_contend):
 * - The count (slices_contend.c): a random sample of the reference page's
 *   lines is grouped by contention alone, and rounds of other pages' lines
 *   joined to those classes (lines of slices the reference page lacks grow
 *   new classes). When every class came back from a second member, no line
 *   fell in two and the last round added no class, their count is the slice
 *   count (x partitions with copies in the near partition). Contention
 *   separates slices at the same distance from every SM, which latency
 *   fingerprints merge (an H200: 34-63 fingerprint classes, uneven, for 47
 *   a partition).
 * - The hash from the contention labels: the reference page labelled whole,
 *   the cube-and-anchors solver (slice_solve.h) gives XOR masks over the
 *   observable bits (line bits .. page bits) and a table when the classes
 *   are not linear in them; the count's pages identified (or learnt as new
 *   components from their labelled cubes) and checked on their held-out
 *   lines. The labelled predictor is kept for the later stages.
 * - The partitions (slices_parts.c, below) from the contention classes'
 *   latencies: SL_CENTER_SMS SMs spread over the ids reload a few lines of
 *   each class (centers_from_contention: 16 seq calls a batch of 256 lines,
 *   against the fingerprints' thousands of calls); the labelled predictor
 *   is relabelled by group where the partitions number the slices (home
 *   visible, uniform runs).
 * Should the count, the hash or the partitions not be established, the
 * stage forgets them and takes the fingerprint path (the contention count
 * run again there, with the fingerprints' cross-check).
 *
 * Method, the fingerprint path (targets without the probe, or contention
 * first undecided):
 * - Slice classes and the hash: gx_slicepred_learn (slicepredict.h) on the
 *   work area of the arena: latency fingerprints from 16-32 SMs classify
 *   lines; the same solver gives the masks and table; other pages are
 *   identified as the reference page's table under an XOR constant (or
 *   learned as a new component); held-out lines of every page check the
 *   result. A failed check retries at twice the samples, except when the
 *   reference page's classes are merged and the target has the contention
 *   probe: then contention decides (below) and the first attempt stands
 *   (learnt again with its retries should contention not establish the
 *   hash).
 * - The count, cross-checked by contention (targets with the probe): as
 *   above, and the contention classes must be at least as many as the
 *   fingerprint classes (or those are uneven, merged, so their count bounds
 *   nothing).
 * - The hash at contention resolution: when the count is more than the
 *   fingerprint classes (or those merge), the fingerprints' hash is coarser
 *   than the slices; the hash is then learnt from the contention labels and
 *   written only when established (and not where the partitions number the
 *   fingerprint classes: the contention classes carry no group there); else
 *   left out. Without the probe the fingerprints' results stand as they are.
 * - Partitions from the fingerprints' class centers.
 *
 * Partitions (slices_parts.c), from class latencies of either source, in
 * this order:
 *   1. home visible (near-far, each line in one partition): from every SM
 *      the class centers split into near (fast) and far (slow) groups; the
 *      pattern "which SMs see this class as near" groups the classes into
 *      partitions (equal groups required).
 *   2. copies in the near partition (near-far, copy_to_near): every SM sees
 *      every line at near latency, so classes are slices WITHIN a partition;
 *      SMs are grouped by a cross test (load a fresh line on SM a, time it
 *      on SM b: near hit = same partition, far/DRAM = different); slices =
 *      partitions x classes (equal partitions assumed), and the home
 *      partition of a line is not observable: the hash gives the slice
 *      within a partition.
 *   3. uniform (slice_parts.h): a partition-distance step makes equal
 *      class groups that are fast from contiguous runs of SM ids; no such
 *      pattern and no structure at all -> one partition; a structure that
 *      does not fit -> not established, left out (never guessed).
 *
 * Cost (slices_contend.c for the contention part): on the sim's
 * nvidia-h200-model.json 773 calls (364 + 244 contention launches) against
 * the fingerprint path's 6705; docs/discovery.md has the figures.
 *
 * Notes: the stage touches only the arena's work area (never the fresh
 * reserve except through infer_fresh_block) and never replaces the arena
 * when one exists (the eviction sets of stage 4 stay valid). */
#include <stdlib.h>
#include <string.h>

#include "slices_internal.h"

/* SM slots of the contention classes' latencies: the fingerprint pilot's
 * smaller choice (it takes 32 only to tell close classes apart, which
 * contention did already); the partition signatures need SM sides, 4 slots
 * a side at 4 partitions */
#define SL_CENTER_SMS 16u

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

/* Classes relabelled by partition group (methods 1 and 3 with partitions):
 * partition g's slices numbered g x classes / P on. */
static int grouped(const parts_result *pr)
{
    return (pr->method == 1 || pr->method == 3) && pr->partitions > 1;
}

/* Rows of cs moved to the classes' new ids map[] (the report data follows
 * the relabelled hash). */
static void centers_relabel(sl_centers *cs, const uint32_t *map)
{
    size_t S = cs->sms, n = (size_t)cs->classes * S;
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return; /* the data keep the old order; the outputs do not read it */
    for (uint32_t j = 0; j < cs->classes; j++)
        memcpy(c + (size_t)map[j] * S, cs->c + (size_t)j * S, S * sizeof *c);
    free(cs->c);
    cs->c = c;
}

/* The fingerprint predictor, its class centers and partitions (relabelled
 * by group) and its hash; settle: let contention_decides stop the retries
 * (*settled = 1 when it did). */
static int learn_fingerprints(gx_infer *ctx, gx_slicepred_opts *o, int settle, gx_slicepred **sp,
                              gx_slicepred_summary *s, sl_centers *cs, parts_result *pr,
                              gx_hash_fn *h, int *settled)
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
    uint32_t group[SL_MAX_CLASSES], map[SL_MAX_CLASSES];
    rc = centers_from_pred(*sp, s, cs, ctx->msg);
    if (rc == GX_OK)
        rc = find_partitions(ctx, cs, group, pr);
    if (rc == GX_OK && grouped(pr)) {
        group_map(s->classes, group, pr->partitions, map);
        gx_slicepred_relabel(*sp, map, ctx->msg);
        centers_relabel(cs, map);
    }
    if (rc == GX_OK)
        rc = gx_slicepred_hash(*sp, h, ctx->msg);
    return rc;
}

/* The fingerprint path: the predictor first, contention checking the count
 * and learning the hash where the fingerprints merge slices (the notes). */
static int fingerprint_path(gx_infer *ctx, gx_slicepred_opts *o, gx_slicepred **sp,
                            gx_slicepred_summary *s, sl_centers *cs, parts_result *pr,
                            gx_hash_fn *h, contend_result *cr)
{
    sl_contend *cst = NULL;
    int settled = 0;
    int rc = learn_fingerprints(ctx, o, 1, sp, s, cs, pr, h, &settled);
    uint32_t smallest, largest;
    const int merged = rc == GX_OK && classes_merged(h, &smallest, &largest);
    if (rc == GX_OK)
        rc = slices_contend_count(ctx, o->region_bytes, s->classes, merged, cr, &cst);
    /* contention resolves more slices than the fingerprints: their hash */
    if (rc == GX_OK && cst && (cr->classes > s->classes || merged))
        rc = slices_contend_hash(ctx, cst, o->region_bytes, cr);
    sl_contend_free(cst);
    if (rc == GX_OK && settled && !cr->hash_ok) {
        /* contention did not decide after all: the retries the fingerprints
         * skipped (the count stands; partitions and hash from the new run) */
        infer_progress(ctx, "slices: contention did not establish the hash: fingerprints "
                            "learnt again with their retries");
        gx_slicepred_free(*sp);
        gx_hash_clear(h);
        centers_free(cs);
        *sp = NULL;
        rc = learn_fingerprints(ctx, o, 0, sp, s, cs, pr, h, &settled);
    }
    return rc;
}

/* Contention first: the partitions on the contention classes' latencies,
 * the labelled predictor (and so the hash) relabelled by group where the
 * partitions number the slices. 0 in *ok when that cannot be done (the
 * classes the predictor saw are not the count's). */
static int first_partitions(gx_infer *ctx, sl_centers *cs, contend_result *cr,
                            parts_result *pr, int *ok)
{
    uint32_t group[SL_MAX_CLASSES], map[SL_MAX_CLASSES];
    *ok = 0;
    if (cs->classes > SL_MAX_CLASSES)
        return GX_OK;
    int rc = find_partitions(ctx, cs, group, pr);
    if (rc != GX_OK || !pr->partitions)
        return rc;
    if (!grouped(pr)) {
        *ok = 1;
        return GX_OK;
    }
    gx_slicepred_summary ls;
    gx_slicepred_get_summary(cr->lpred, &ls);
    if (ls.classes != cs->classes)
        return GX_OK;
    group_map(cs->classes, group, pr->partitions, map);
    if ((rc = gx_slicepred_relabel(cr->lpred, map, ctx->msg)) != GX_OK)
        return rc;
    centers_relabel(cs, map);
    gx_hash_clear(&cr->hash);
    if ((rc = gx_slicepred_hash(cr->lpred, &cr->hash, ctx->msg)) != GX_OK)
        return rc;
    cr->grouped = 1;
    *ok = 1;
    return GX_OK;
}

/* Contention first (targets with the probe): the count with no fingerprint
 * bound, the hash from its labels, the partitions from the contention
 * classes' latencies. *decided = 1 when all three stand (cr->first); else
 * cr and cs are cleared for the fingerprint path. */
static int contention_first(gx_infer *ctx, uint64_t region_bytes, contend_result *cr,
                            sl_centers *cs, parts_result *pr, int *decided)
{
    sl_contend *st = NULL;
    int ok = 0;
    *decided = 0;
    memset(pr, 0, sizeof *pr);
    int rc = slices_contend_count(ctx, region_bytes, 0, 1, cr, &st);
    if (rc == GX_OK && st)
        rc = slices_contend_hash(ctx, st, region_bytes, cr);
    if (rc == GX_OK && st && cr->hash_ok)
        rc = centers_from_contention(ctx, st, SL_CENTER_SMS, cs);
    if (rc == GX_OK && st && cr->hash_ok)
        rc = first_partitions(ctx, cs, cr, pr, &ok);
    sl_contend_free(st);
    *decided = rc == GX_OK && ok;
    cr->first = *decided;
    if (rc == GX_OK && !*decided) {
        infer_progress(ctx, "slices: contention first did not decide (%s): the fingerprint "
                            "path", !cr->classes ? "count" : !cr->hash_ok ? "hash" : "partitions");
        contend_result_clear(cr);
        centers_free(cs);
        memset(pr, 0, sizeof *pr);
    } else if (rc == GX_OK) {
        infer_progress(ctx, "slices: contention first: %u classes, hash and %u partitions "
                            "(%s); no fingerprints",
                       cr->classes, pr->partitions, pr->how);
    }
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
    sl_centers cs;
    memset(&s, 0, sizeof s);
    memset(&pr, 0, sizeof pr);
    memset(&h, 0, sizeof h);
    memset(&cr, 0, sizeof cr);
    memset(&cs, 0, sizeof cs);
    int rc = GX_OK, decided = 0;
    if (gx_target_has_contend(ctx->t))
        rc = contention_first(ctx, o.region_bytes, &cr, &cs, &pr, &decided);
    if (rc == GX_OK && !decided)
        rc = fingerprint_path(ctx, &o, &sp, &s, &cs, &pr, &h, &cr);
    if (rc == GX_OK) {
        write_outputs(ctx, &s, &pr, &h, &cs, &cr);
        record_slices(ctx, &cs, &s, &pr, &h, &cr);
    }
    gx_hash_clear(&h);
    centers_free(&cs);
    /* kept for the later stages (infer_slice_pred): the labelled one where
     * contention learnt the hash (first, or where the fingerprints merge
     * slices), else the fingerprints' (none when contention decided first:
     * the ways stage learns one should its labelled pools fall short) */
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
