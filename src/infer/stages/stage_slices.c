/* stage_slices.c - discovery stage 5: slices, partitions and the slice hash.
 *
 * Method:
 * - Slice classes and the hash: gx_slicepred_learn (slicepredict.h) on the
 *   work area of the arena: latency fingerprints from 16-32 SMs classify
 *   lines; the cube-and-anchors solver (slice_solve.h) gives XOR masks over
 *   the observable bits (line bits .. page bits) and a table when the
 *   classes are not linear in them; other pages are identified as the
 *   reference page's table under an XOR constant (or learned as a new
 *   component); held-out lines of every page check the result.
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
 * - The count, cross-checked by contention (slice_contend.h; targets with
 *   the probe): a random sample of the reference page's lines is grouped
 *   again by contention alone and a sample of the region's last page joined
 *   to those classes. When every
 *   class came back from a second member, no line of the last page falls
 *   outside them (the reference page shows every slice) and they are at
 *   least as many as the fingerprint classes (or those are uneven, merged,
 *   so their count bounds nothing), their count is the slice count (x
 *   partitions with copies in the near partition): fingerprints merge
 *   slices at the same distance from every SM (an H200: 34-63 classes,
 *   uneven, for 47 a partition), contention does not. Then the
 *   fingerprints' hash is left out (it is coarser than the slices).
 *
 * Notes: the stage touches only the arena's work area (never the fresh
 * reserve except through infer_fresh_block) and never replaces the arena
 * when one exists (the eviction sets of stage 4 stay valid). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/hash.h"
#include "gpuxray/slicepredict.h"
#include "gpuxray/stats.h"
#include "../infer_util.h"
#include "../slice/slice_contend.h"
#include "../slice/slice_parts.h"

#define SL_MAX_CLASSES 1024
#define SL_CROSS_VOTES 3
/* contention probes: 8 warps on every other SM (the H200 shows no queue with one warp an
 * SM, 750-1400 cycles with eight), 2 timed loads a probe (the least is kept; a member must
 * be slowed in two launches as well) */
#define SL_CONTEND_WARPS 8u
#define SL_CONTEND_REPS 2u
/* lines of the reference page grouped by contention: a random sample that shows every slice
 * (160 slices, the most the generator draws: 12.8 lines each on average, a slice missing
 * with a chance of e^-12.8 = 3e-6), and of the last page joined to the classes */
#define SL_CONTEND_SAMPLE 2048u
#define SL_CONTEND_JOIN 1024u
#define SL_CONTEND_STREAM 0xc0111de5ULL /* the sample's random stream, apart from the stage's */

typedef struct parts_result {
    int method;          /* 0 none, 1 home visible, 2 copies (cross test), 3 uniform runs */
    uint32_t partitions; /* 0 = not observable */
    uint32_t slices;
    double conf;
    char how[192];
} parts_result;

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

/* ---- merged classes: the slices by contention (slice_contend.h) ------------ */

typedef struct contend_result {
    uint32_t classes; /* 0: not established (the fingerprints' count stands) */
    char how[192];
} contend_result;

/* Lines of a page sampled at random without repeats: n of its `lines`
 * (partial Fisher-Yates over the line indices). */
static void sample_lines(gx_rng *r, uint64_t page_off, uint32_t line_bytes, size_t lines,
                         size_t n, uint32_t *scratch, uint64_t *out)
{
    for (size_t i = 0; i < lines; i++)
        scratch[i] = (uint32_t)i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + (size_t)gx_rng_below(r, (uint64_t)(lines - i));
        uint32_t tmp = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = tmp;
        out[i] = page_off + (uint64_t)scratch[i] * line_bytes;
    }
}

/* Contention classes of a random sample of the reference page's lines
 * (region offset 0), checked on a sample of the region's last page. A
 * target without the probe, or no clear answer, leaves cr->classes 0 and
 * says why in cr->how. */
static int contention_classes(gx_infer *ctx, uint64_t region_bytes, uint32_t fp_classes,
                              int fp_merged, contend_result *cr)
{
    const uint64_t page = ctx->info->page_bytes;
    const size_t lines = (size_t)(page / ctx->line.line_bytes);
    const size_t n = lines < SL_CONTEND_SAMPLE ? lines : SL_CONTEND_SAMPLE;
    const size_t nj = lines < SL_CONTEND_JOIN ? lines : SL_CONTEND_JOIN;
    sc_opts o = {ctx->line.line_bytes, 0, SL_CONTEND_WARPS, SL_CONTEND_REPS};
    sc_partition *part = malloc(sizeof *part);
    int *cls = malloc(n * sizeof *cls);
    uint64_t *offs = malloc(n * sizeof *offs);
    uint32_t *scratch = malloc(lines * sizeof *scratch);
    memset(cr, 0, sizeof *cr);
    int rc = part && cls && offs && scratch ? GX_OK : GX_ENOMEM;
    gx_msg m;
    size_t none = 0, twice = 0;
    const uint64_t last = region_bytes >= 2 * page ? region_bytes - page : 0;
    /* a stream of its own (the context's stays where it was for the later stages) */
    gx_rng peek = ctx->rng, r;
    gx_rng_seed(&r, gx_mix64(gx_rng_next(&peek) ^ SL_CONTEND_STREAM));
    if (rc == GX_OK) {
        sample_lines(&r, 0, ctx->line.line_bytes, lines, n, scratch, offs);
        rc = sc_partition_lines(ctx->t, &o, offs, n, cls, part, &m);
    }
    if (rc == GX_OK && last) {
        sample_lines(&r, last, ctx->line.line_bytes, lines, nj, scratch, offs);
        rc = sc_join_lines(ctx->t, &o, part, offs, nj, cls, &none, &twice, &m);
    }
    if (rc == GX_ENOMEM || !part || !cls || !offs || !scratch) {
        free(part);
        free(cls);
        free(offs);
        free(scratch);
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    }
    if (rc != GX_OK)
        snprintf(cr->how, sizeof cr->how, "contention: %.170s", m.text);
    else if ((part->classes < fp_classes && !fp_merged) || none || twice)
        snprintf(cr->how, sizeof cr->how,
                 "contention: %u classes against %u fingerprint classes, %zu lines of another "
                 "page in none, %zu in two: not established",
                 part->classes, fp_classes, none, twice);
    else {
        cr->classes = part->classes;
        snprintf(cr->how, sizeof cr->how,
                 "%u contention classes of %zu lines (%u of %u checked exactly), %zu of another "
                 "page within them",
                 part->classes, n, part->agreed, part->checked, nj);
    }
    infer_progress(ctx, "slices: %s", cr->how);
    free(part);
    free(cls);
    free(offs);
    free(scratch);
    return GX_OK;
}

/* ---- outputs ------------------------------------------------------------------ */

static void relabel_by_group(gx_slicepred *sp, uint32_t nc, const uint32_t *group, uint32_t P,
                             gx_msg *msg)
{
    uint32_t map[SL_MAX_CLASSES], next[16] = {0}, per = nc / P;
    for (uint32_t j = 0; j < nc; j++)
        map[j] = group[j] * per + next[group[j]]++;
    gx_slicepred_relabel(sp, map, msg);
}

static uint32_t table_distinct(const gx_hash_fn *h)
{
    size_t n = (size_t)1 << h->n_masks;
    uint8_t seen[SL_MAX_CLASSES] = {0};
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (h->table[i] < SL_MAX_CLASSES && !seen[h->table[i]]++)
            d++;
    return d;
}

/* A slice hash spreads lines evenly over its slices. Classes that hold
 * about a multiple of the smallest class's share are slices the
 * fingerprints cannot tell apart (on an H200: 34-74 classes of 22, 44, 88,
 * 132 table entries, i.e. merged atomic classes of 22). *smallest gets the
 * smallest class's entries. 1: uneven beyond what rounding explains. */
static int classes_merged(const gx_hash_fn *h, uint32_t *smallest, uint32_t *largest)
{
    *smallest = *largest = 0;
    if (!h->table)
        return 0; /* linear: every class exactly once */
    size_t n = (size_t)1 << h->n_masks;
    uint32_t cnt[SL_MAX_CLASSES] = {0}, classes = 0;
    for (size_t i = 0; i < n; i++)
        if (h->table[i] < SL_MAX_CLASSES && cnt[h->table[i]]++ == 0)
            classes++;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t c = 0; c < SL_MAX_CLASSES; c++)
        if (cnt[c]) {
            lo = cnt[c] < lo ? cnt[c] : lo;
            hi = cnt[c] > hi ? cnt[c] : hi;
        }
    if (!classes)
        return 0;
    *smallest = lo;
    *largest = hi;
    double share = (double)n / classes;
    return hi >= 2 && (double)hi > 1.6 * ceil(share) && (double)hi >= 1.8 * lo;
}

static double hash_confidence(const gx_slicepred_summary *s)
{
    if (s->verify_errors)
        return 0.5;
    return s->verified >= 200 ? 0.999 : 0.99;
}

static void write_outputs(gx_infer *ctx, const gx_slicepred_summary *s,
                          const parts_result *pr, const gx_hash_fn *h, double cost_lines,
                          const contend_result *cr)
{
    gx_profile *p = ctx->out;
    char v[160], m[224];
    double hconf = hash_confidence(s);
    uint32_t slices = pr->slices ? pr->slices : s->classes;
    uint32_t smallest = 0, largest = 0;
    int merged = classes_merged(h, &smallest, &largest);
    /* contention differs from the fingerprints: the slices behind merged classes */
    const int by_contention = cr->classes && (cr->classes > s->classes || merged);
    if (by_contention)
        slices = pr->method == 2 ? cr->classes * pr->partitions : cr->classes;
    /* the reference page must show every slice for the hash to describe
     * them all (Contract 1: 2^masks == slices, or a table covering them) */
    uint32_t shown = h->table ? table_distinct(h) : (uint32_t)1 << h->n_masks;
    /* copies in the near partition (method 2): what timing shows, and what
     * Contract 1 records for near-far, is the slice WITHIN a partition (the
     * hash's range is slices / partitions; docs/profile-format.md) */
    if (merged || by_contention) /* the hash is coarser than the slices */
        hconf = fmin(hconf, 0.5);
    int hash_in = hconf >= 0.9 && (pr->method == 2 ? (pr->partitions > 1 && shown == s->classes &&
                                                      p->l2.topology == GX_TOPO_NEAR_FAR)
                                                   : shown == slices);
    double sconf = pr->method == 2 ? fmin(hconf, 0.95) : hconf;
    if (by_contention) /* every contention class checked from a second member, a second page
                          within them */
        sconf = pr->method == 2 ? fmin(pr->conf, 0.95) : 0.95;
    ctx->slices.slices = slices;
    ctx->slices.partitions = pr->partitions;
    gx_hash_clear(&ctx->slices.hash);
    gx_hash_copy(&ctx->slices.hash, h);
    p->l2.present = 1;
    if (sconf >= 0.9) {
        p->l2.slices = slices;
        gx_profile_set_confidence(p, "l2.slices", sconf);
    }
    snprintf(v, sizeof v, "%u", slices);
    if (by_contention)
        snprintf(m, sizeof m, "%.180s%s", cr->how,
                 pr->method == 2 ? " x partitions (copies in near partition)" : "");
    else
        snprintf(m, sizeof m, "%u fingerprint classes over %u SMs x %u reloads%s", s->classes,
                 s->sms, s->reps, pr->method == 2 ? " x partitions (copies in near partition)" : "");
    infer_report_row(ctx, "l2.slices", v, m, sconf, sconf >= 0.9);
    if (merged) {
        size_t n = (size_t)1 << h->n_masks;
        snprintf(v, sizeof v, "%u to %u of %zu entries", smallest, largest, n);
        snprintf(m, sizeof m,
                 "uneven: classes merge slices the fingerprints cannot separate (about %.0f "
                 "classes of %u entries)",
                 (double)n / smallest, smallest);
        infer_report_row(ctx, "slice class sizes", v, m, NAN, 0);
        if (!cr->classes && cr->how[0])
            infer_report_row(ctx, "slices by contention", "not established", cr->how, NAN, 0);
    }

    int part_in = pr->partitions && pr->conf >= 0.9 && slices % pr->partitions == 0;
    if (part_in) {
        p->l2.partitions = pr->partitions;
        gx_profile_set_confidence(p, "l2.partitions", pr->conf);
    }
    if (pr->partitions)
        snprintf(v, sizeof v, "%u", pr->partitions);
    else
        snprintf(v, sizeof v, "not observable");
    infer_report_row(ctx, "l2.partitions", v, pr->how, pr->partitions ? pr->conf : 0, part_in);

    if (hash_in) {
        gx_hash_clear(&p->l2.slice_hash);
        gx_hash_copy(&p->l2.slice_hash, h);
        gx_profile_set_confidence(p, "l2.hash.slice", hconf);
    }
    int n = snprintf(v, sizeof v, "%d masks%s:", h->n_masks, h->table ? " + table" : "");
    for (int i = 0; i < h->n_masks && n > 0 && (size_t)n < sizeof v - 12; i++)
        n += snprintf(v + n, sizeof v - (size_t)n, " 0x%llx", (unsigned long long)h->masks[i]);
    snprintf(m, sizeof m,
             "GF(2) cube+anchors on bits %d..%d, %llu lines; %u pages, %u components%s",
             h->obs_lo, h->obs_hi, (unsigned long long)s->lines_structure, s->pages_learned,
             s->components,
             pr->method == 2   ? "; home partition unobservable"
             : shown != slices ? "; the reference page shows only some slices"
                               : "");
    if (pr->method == 2) {
        /* what the SMs can see: the slice within a partition */
        infer_report_row(ctx, "l2.hash.slice", v, m, hconf, hash_in);
        infer_report_row(ctx, "home partition", "not observable",
                         "copies in the near partition hide a line's home partition; the hash "
                         "gives the slice within a partition", NAN, 0);
    } else {
        infer_report_row(ctx, "l2.hash.slice", v, m, hconf, hash_in);
    }
    snprintf(v, sizeof v, "%llu/%llu held-out lines agree",
             (unsigned long long)(s->verified - s->verify_errors),
             (unsigned long long)s->verified);
    snprintf(m, sizeof m, "fresh fingerprints vs prediction, %u pages; %.0f lines measured",
             s->pages_learned, cost_lines);
    infer_report_row(ctx, "slice hash check", v, m, NAN, 0);
}

/* Report data: the latency fingerprint of every class from every SM slot
 * (series "sm_slice") and the class of every line of the reference page
 * under the learned hash (series "slice_classes"). Copies only. */
#define SL_DATA_MAX_LINES 65536u /* lines of one page in the picture at most */
static void record_slices(gx_infer *ctx, const gx_slicepred *sp, const gx_slicepred_summary *s,
                          const gx_hash_fn *h)
{
    if (!infer_recording(ctx))
        return;
    infer_data_set(ctx, "sm_slice", "method",
                   json_string("mean reload latency (cycles) of a class's lines from each SM: "
                               "the fingerprint centers the classifier learned"));
    infer_data_set(ctx, "sm_slice", "reps", json_integer(s->reps));
    infer_data_set(ctx, "sm_slice", "lines_measured", json_integer((json_int_t)s->lines_measured));
    infer_data_set(ctx, "sm_slice", "sigma_cycles", infer_json_num(s->sigma_cycles));
    for (uint32_t slot = 0; slot < s->sms; slot++)
        infer_data_append(ctx, "sm_slice", "sms", json_integer(gx_slicepred_sm(sp, slot)));
    for (uint32_t c = 0; c < s->classes; c++) {
        json_t *row = json_array();
        for (uint32_t slot = 0; slot < s->sms && row; slot++)
            json_array_append_new(row, infer_json_num(gx_slicepred_center(sp, c, slot)));
        infer_data_append(ctx, "sm_slice", "cycles", row);
    }
    uint64_t page = ctx->info->page_bytes, line = ctx->line.line_bytes;
    uint64_t n = page / line < SL_DATA_MAX_LINES ? page / line : SL_DATA_MAX_LINES;
    infer_data_set(ctx, "slice_classes", "method",
                   json_string("the learned slice hash of the reference page (masks over the "
                               "observable bits, table when not linear), checked on held-out "
                               "lines"));
    infer_data_set(ctx, "slice_classes", "page_bytes", json_integer((json_int_t)page));
    infer_data_set(ctx, "slice_classes", "line_bytes", json_integer((json_int_t)line));
    infer_data_set(ctx, "slice_classes", "verified", json_integer((json_int_t)s->verified));
    infer_data_set(ctx, "slice_classes", "verify_errors",
                   json_integer((json_int_t)s->verify_errors));
    json_t *cls = json_array();
    for (uint64_t i = 0; i < n && cls; i++)
        json_array_append_new(cls, json_integer((json_int_t)gx_hash_eval(h, i * line)));
    infer_data_set(ctx, "slice_classes", "classes", cls);
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
    int rc = gx_slicepred_learn(ctx->t, &o, &sp, ctx->msg);
    if (rc != GX_OK)
        return rc;
    gx_slicepred_summary s;
    gx_slicepred_get_summary(sp, &s);
    infer_progress(ctx,
                   "slices: %u classes, %d masks%s, %llu/%llu held-out lines agree (%u attempts, "
                   "%llu structure lines given their nearest class)",
                   s.classes, s.k, s.linear ? "" : " + table",
                   (unsigned long long)(s.verified - s.verify_errors),
                   (unsigned long long)s.verified, s.attempts, (unsigned long long)s.forced);

    parts_result pr;
    memset(&pr, 0, sizeof pr);
    snprintf(pr.how, sizeof pr.how, "fingerprints show no partition structure (not observable)");
    uint32_t group[SL_MAX_CLASSES];
    const gx_levels_result *lv = &ctx->levels;
    if (lv->topology == GX_TOPO_NEAR_FAR) {
        double gap = isfinite(lv->miss_delta) && lv->miss_delta > 0 ? 0.5 * lv->miss_delta : 30;
        if (!try_grouping(sp, s.classes, s.sms, gap, 3.0, group, &pr, 1)) {
            rc = sm_groups(ctx, sp, s.sms, &pr);
            if (rc == GX_OK && pr.partitions > 1) {
                pr.method = 2;
                pr.slices = s.classes * pr.partitions;
            } else if (rc == GX_OK) {
                /* near-far levels but neither signature: not established */
                pr.partitions = 0;
                snprintf(pr.how, sizeof pr.how,
                         "near-far levels, but no near/far split of the classes and one SM "
                         "group: not established");
            }
        }
    } else {
        rc = uniform_partitions(ctx, sp, &s, group, &pr);
    }
    if (rc == GX_OK && (pr.method == 1 || pr.method == 3) && pr.partitions > 1)
        relabel_by_group(sp, s.classes, group, pr.partitions, ctx->msg);
    gx_hash_fn h;
    contend_result cr;
    memset(&cr, 0, sizeof cr);
    if (rc == GX_OK)
        rc = gx_slicepred_hash(sp, &h, ctx->msg);
    uint32_t smallest, largest;
    if (rc == GX_OK &&
        (rc = contention_classes(ctx, o.region_bytes, s.classes,
                                 classes_merged(&h, &smallest, &largest), &cr)) != GX_OK)
        gx_hash_clear(&h);
    if (rc == GX_OK) {
        write_outputs(ctx, &s, &pr, &h, (double)s.lines_measured, &cr);
        record_slices(ctx, sp, &s, &h);
        gx_hash_clear(&h);
    }
    /* kept for the ways stage's slice-guided pools (learning again costs
     * as much as this stage did) */
    gx_slicepred_free(ctx->slices.pred);
    ctx->slices.pred = rc == GX_OK ? sp : NULL;
    if (rc != GX_OK)
        gx_slicepred_free(sp);
    return rc;
}
