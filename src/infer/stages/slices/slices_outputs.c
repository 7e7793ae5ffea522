/* slices_outputs.c - the slices stage's outputs: l2.slices, l2.partitions
 * and l2.hash.slice with their confidences and report rows, and the report
 * data (fingerprints, the reference page's classes).
 *
 * The hash written: the fingerprints' when they resolve the slices; when
 * contention resolves more (merged fingerprint classes), the hash learnt
 * from the contention labels (slices_contend.c) when it was established,
 * else none (the fingerprints' is coarser than the slices: never guessed).
 * With partitions whose slices the hash numbers partition by partition
 * (home visible, uniform runs) the contention classes carry no partition:
 * their hash stays out, unless contention decided first (then the
 * partitions were found on the contention classes themselves and the
 * labelled predictor relabelled by group: cr->grouped). Contention first:
 * the count, the hash and the partitions from the contention classes, no
 * fingerprint summary (its rows say so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slices_internal.h"

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
int classes_merged(const gx_hash_fn *h, uint32_t *smallest, uint32_t *largest)
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

/* What the outputs stand on: the slice count and the hash written, and the
 * summary that checked that hash. */
typedef struct sl_choice {
    uint32_t slices, within; /* slices; classes within a partition (what timing resolves) */
    int merged, by_contention, contention_hash;
    uint32_t smallest, largest;
    const gx_hash_fn *fp;          /* the fingerprints' hash */
    const gx_hash_fn *h;           /* the hash written (when it is) */
    const gx_slicepred_summary *hs; /* its checks */
    double hconf, sconf;
} sl_choice;

/* Contention first: every output from the contention classes. */
static void choose_first(const parts_result *pr, const contend_result *cr, sl_choice *c)
{
    c->by_contention = 1;
    c->slices = pr->method == 2 ? cr->classes * pr->partitions : cr->classes;
    c->within = cr->classes;
    c->fp = &cr->hash;
    c->contention_hash = cr->hash_ok;
    c->h = &cr->hash;
    c->hs = &cr->hs;
    c->hconf = hash_confidence(c->hs);
    c->sconf = pr->method == 2 ? fmin(pr->conf, 0.95) : 0.95;
}

static void choose(const gx_slicepred_summary *s, const parts_result *pr, const gx_hash_fn *h,
                   const contend_result *cr, sl_choice *c)
{
    memset(c, 0, sizeof *c);
    if (cr->first) {
        choose_first(pr, cr, c);
        return;
    }
    c->slices = pr->slices ? pr->slices : s->classes;
    c->within = s->classes;
    c->fp = h;
    c->merged = classes_merged(h, &c->smallest, &c->largest);
    /* contention differs from the fingerprints: the slices behind merged classes */
    c->by_contention = cr->classes && (cr->classes > s->classes || c->merged);
    if (c->by_contention) {
        c->slices = pr->method == 2 ? cr->classes * pr->partitions : cr->classes;
        c->within = cr->classes;
    }
    /* the contention classes' hash: established, and not where the hash must number
     * slices partition by partition */
    c->contention_hash = c->by_contention && cr->hash_ok &&
                         (pr->method == 2 || pr->partitions <= 1 || cr->grouped);
    c->h = c->contention_hash ? &cr->hash : h;
    c->hs = c->contention_hash ? &cr->hs : s;
    c->hconf = hash_confidence(c->hs);
    if ((c->merged || c->by_contention) && !c->contention_hash)
        c->hconf = fmin(c->hconf, 0.5); /* the hash is coarser than the slices */
    c->sconf = pr->method == 2 ? fmin(hash_confidence(s), 0.95) : hash_confidence(s);
    if (c->merged && !c->by_contention)
        c->sconf = fmin(c->sconf, 0.5);
    if (c->by_contention) /* every contention class checked from a second member, other
                             pages within them */
        c->sconf = pr->method == 2 ? fmin(pr->conf, 0.95) : 0.95;
}
static void write_count(gx_infer *ctx, const gx_slicepred_summary *s, const parts_result *pr,
                        const sl_choice *c, const contend_result *cr)
{
    gx_profile *p = ctx->out;
    char v[160], m[224];
    p->l2.present = 1;
    if (c->sconf >= 0.9) {
        p->l2.slices = c->slices;
        gx_profile_set_confidence(p, "l2.slices", c->sconf);
    }
    snprintf(v, sizeof v, "%u", c->slices);
    if (c->by_contention)
        snprintf(m, sizeof m, "%s%.170s%s", cr->first ? "first: " : "", cr->how,
                 pr->method == 2 ? " x partitions (copies in near partition)" : "");
    else
        snprintf(m, sizeof m, "%u fingerprint classes over %u SMs x %u reloads%s", s->classes,
                 s->sms, s->reps, pr->method == 2 ? " x partitions (copies in near partition)" : "");
    infer_report_row(ctx, "l2.slices", v, m, c->sconf, c->sconf >= 0.9);
    if (c->merged) {
        size_t n = (size_t)1 << c->fp->n_masks;
        snprintf(v, sizeof v, "%u to %u of %zu entries", c->smallest, c->largest, n);
        snprintf(m, sizeof m,
                 "uneven: classes merge slices the fingerprints cannot separate (about %.0f "
                 "classes of %u entries)",
                 (double)n / c->smallest, c->smallest);
        infer_report_row(ctx, "slice class sizes", v, m, NAN, 0);
        if (!cr->classes && cr->how[0])
            infer_report_row(ctx, "slices by contention", "not established", cr->how, NAN, 0);
    }
    if (cr->launches) {
        snprintf(v, sizeof v, "%llu + %llu", (unsigned long long)cr->launches,
                 (unsigned long long)cr->hash_launches);
        snprintf(m, sizeof m, "launches for the count (%u other pages) + for the hash",
                 cr->pages);
        infer_report_row(ctx, "contention launches", v, m, NAN, 0);
    }

    int part_in = pr->partitions && pr->conf >= 0.9 && c->slices % pr->partitions == 0;
    if (part_in) {
        p->l2.partitions = pr->partitions;
        gx_profile_set_confidence(p, "l2.partitions", pr->conf);
    }
    if (pr->partitions)
        snprintf(v, sizeof v, "%u", pr->partitions);
    else
        snprintf(v, sizeof v, "not observable");
    infer_report_row(ctx, "l2.partitions", v, pr->how, pr->partitions ? pr->conf : 0, part_in);
}

static void write_hash(gx_infer *ctx, const parts_result *pr, const sl_choice *c,
                       const contend_result *cr, double cost_lines)
{
    gx_profile *p = ctx->out;
    const gx_hash_fn *h = c->h;
    const gx_slicepred_summary *s = c->hs;
    char v[160], m[256];
    /* the reference page must show every slice for the hash to describe
     * them all (Contract 1: 2^masks == slices, or a table covering them) */
    uint32_t shown = h->table ? table_distinct(h) : (uint32_t)1 << h->n_masks;
    /* copies in the near partition (method 2): what timing shows, and what
     * Contract 1 records for near-far, is the slice WITHIN a partition (the
     * hash's range is slices / partitions; docs/profile-format.md) */
    int hash_in = c->hconf >= 0.9 &&
                  (pr->method == 2 ? (pr->partitions > 1 && shown == c->within &&
                                      p->l2.topology == GX_TOPO_NEAR_FAR)
                                   : shown == c->slices);
    if (hash_in) {
        gx_hash_clear(&p->l2.slice_hash);
        gx_hash_copy(&p->l2.slice_hash, h);
        gx_profile_set_confidence(p, "l2.hash.slice", c->hconf);
    }
    int n = snprintf(v, sizeof v, "%d masks%s:", h->n_masks, h->table ? " + table" : "");
    for (int i = 0; i < h->n_masks && n > 0 && (size_t)n < sizeof v - 12; i++)
        n += snprintf(v + n, sizeof v - (size_t)n, " 0x%llx", (unsigned long long)h->masks[i]);
    const char *note = pr->method == 2        ? "; home partition unobservable"
                       : shown != c->slices ? "; the reference page shows only some slices"
                                            : "";
    if (c->contention_hash)
        snprintf(m, sizeof m, "%.170s, %llu lines labelled%.40s", cr->hash_how,
                 (unsigned long long)s->lines_structure, note);
    else
        snprintf(m, sizeof m,
                 "GF(2) cube+anchors on bits %d..%d, %llu lines; %u pages, %u components%s",
                 h->obs_lo, h->obs_hi, (unsigned long long)s->lines_structure, s->pages_learned,
                 s->components, note);
    infer_report_row(ctx, "l2.hash.slice", v, m, c->hconf, hash_in);
    if (c->by_contention && !c->contention_hash && cr->hash_how[0])
        infer_report_row(ctx, "hash by contention", cr->hash_ok ? "not written" : "not established",
                         cr->hash_ok ? "contention classes carry no partition: the hash must "
                                       "number slices partition by partition"
                                     : cr->hash_how,
                         NAN, 0);
    if (pr->method == 2) /* what the SMs can see: the slice within a partition */
        infer_report_row(ctx, "home partition", "not observable",
                         "copies in the near partition hide a line's home partition; the hash "
                         "gives the slice within a partition", NAN, 0);
    snprintf(v, sizeof v, "%llu/%llu held-out lines agree",
             (unsigned long long)(s->verified - s->verify_errors),
             (unsigned long long)s->verified);
    if (c->contention_hash)
        snprintf(m, sizeof m, "contention labels vs prediction, %u pages", s->pages_learned);
    else
        snprintf(m, sizeof m, "fresh fingerprints vs prediction, %u pages; %.0f lines measured",
                 s->pages_learned, cost_lines);
    infer_report_row(ctx, "slice hash check", v, m, NAN, 0);
}

/* Which method decided, and what it cost. */
static void write_method(gx_infer *ctx, const gx_slicepred_summary *s, const sl_centers *cs,
                         const contend_result *cr)
{
    char m[224];
    if (cr->first) {
        snprintf(m, sizeof m,
                 "count, hash and partitions from the contention classes (partitions: %llu "
                 "lines x %u SMs x %u reloads); no fingerprint predictor",
                 (unsigned long long)cs->lines, cs->sms, cs->reps);
        infer_report_row(ctx, "slices method", "contention first", m, NAN, 0);
        return;
    }
    snprintf(m, sizeof m, "latency fingerprints (%u attempts, %llu lines)%s", s->attempts,
             (unsigned long long)s->lines_measured,
             cr->classes ? "; contention checked the count"
             : cr->how[0] ? "; contention did not establish the count"
                          : "; no contention probe");
    infer_report_row(ctx, "slices method", "fingerprints", m, NAN, 0);
}

void write_outputs(gx_infer *ctx, const gx_slicepred_summary *s, const parts_result *pr,
                   const gx_hash_fn *h, const sl_centers *cs, const contend_result *cr)
{
    sl_choice c;
    choose(s, pr, h, cr, &c);
    ctx->slices.slices = c.slices;
    ctx->slices.partitions = pr->partitions;
    /* the later stages work with the predictor infer_slice_pred gives them:
     * the labelled one where contention learnt a hash, else the
     * fingerprints' (its hash) */
    gx_hash_clear(&ctx->slices.hash);
    gx_hash_copy(&ctx->slices.hash, cr->hash_ok ? &cr->hash : h);
    write_method(ctx, s, cs, cr);
    write_count(ctx, s, pr, &c, cr);
    write_hash(ctx, pr, &c, cr, (double)s->lines_measured);
}

/* Report data: the latency fingerprint of every class from every SM slot
 * (series "sm_slice") and the class of every line of the reference page
 * under the learned hash (series "slice_classes"). Copies only. */
#define SL_DATA_MAX_LINES 65536u /* lines of one page in the picture at most */
void record_slices(gx_infer *ctx, const sl_centers *cs, const gx_slicepred_summary *s,
                   const parts_result *pr, const gx_hash_fn *fp_hash, const contend_result *cr)
{
    if (!infer_recording(ctx))
        return;
    sl_choice ch;
    choose(s, pr, fp_hash, cr, &ch);
    const gx_hash_fn *h = ch.h;
    infer_data_set(ctx, "sm_slice", "method",
                   json_string(cr->first ? "median reload latency (cycles) of a contention "
                                           "class's lines from each SM"
                                         : "mean reload latency (cycles) of a class's lines "
                                           "from each SM: the fingerprint centers the "
                                           "classifier learned"));
    infer_data_set(ctx, "sm_slice", "reps", json_integer(cs->reps));
    infer_data_set(ctx, "sm_slice", "lines_measured", json_integer((json_int_t)cs->lines));
    infer_data_set(ctx, "sm_slice", "sigma_cycles", infer_json_num(cs->sigma));
    for (uint32_t slot = 0; slot < cs->sms; slot++)
        infer_data_append(ctx, "sm_slice", "sms", json_integer(cs->sm[slot]));
    for (uint32_t c = 0; c < cs->classes; c++) {
        json_t *row = json_array();
        for (uint32_t slot = 0; slot < cs->sms && row; slot++)
            json_array_append_new(row, infer_json_num(cs->c[(size_t)c * cs->sms + slot]));
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
    infer_data_set(ctx, "slice_classes", "verified", json_integer((json_int_t)ch.hs->verified));
    infer_data_set(ctx, "slice_classes", "verify_errors",
                   json_integer((json_int_t)ch.hs->verify_errors));
    json_t *cls = json_array();
    for (uint64_t i = 0; i < n && cls; i++)
        json_array_append_new(cls, json_integer((json_int_t)gx_hash_eval(h, i * line)));
    infer_data_set(ctx, "slice_classes", "classes", cls);
}

