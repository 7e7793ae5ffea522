/* slices_contend.c - the slices stage's contention part (slice_contend.h):
 * the slice count by contention alone, the slice hash from the contention
 * labels (contention first, or where the fingerprints merge slices) and the
 * contention classes' latencies for the partitions (contention first).
 *
 * Method:
 * - Count: a random sample of the reference page's lines (region offset 0)
 *   is grouped by contention; then rounds of SL_ROUND_PAGES other pages x
 *   SL_ROUND_LINES random lines each are joined to the classes, lines no
 *   class slows grouped into new classes (sc_grow_lines: a reference page
 *   may not show every slice), until a round adds none (at most
 *   SL_CONTEND_MAX_PAGES pages; still growing at the last: not
 *   established). A line in two classes, or a class that does not come
 *   back from its second member: not established; on the fingerprint path
 *   also fewer classes than the fingerprints' (unless those merge).
 * - Hash (slices_contend_hash): every line of the reference page labelled
 *   by contention (the sample's labels kept, the rest in one join), the
 *   labels given to the slice predictor's solver
 *   (gx_slicepred_learn_labelled: XOR masks over the observable bits, a
 *   table when not linear); each round page identified from its joined
 *   lines (component and XOR constant, as the fingerprint path does), the
 *   lines left over held-out checks; pages no known component explains
 *   have their cubes labelled in one more join and become new components.
 *   Established only when every page was identified and every held-out
 *   line agrees.
 * - Class latencies (contention first: centers_from_contention, for the
 *   partitions): up to SL_CENTER_LINES lines of each class (its first
 *   line, then the sample's and the rounds' lines of it) reloaded
 *   SL_CENTER_REPS times from every SM slot after an untimed load; a
 *   class's latency at a slot is the median over its lines of their
 *   reloads' medians. S seq calls a batch of SL_CENTER_BATCH lines.
 *
 * Cost (C classes; a launch ~1 ms on an H200): the sample's partition
 * 2 + 4C launches; each round 2 + 2C (+ a partition of the new lines and
 * 2 + 2 x new for the old classes' check when it grows); the hash 2 + 2C
 * for the reference page and 2 + 2C for the new components' cubes: a page
 * costs (2 + 2C) / SL_ROUND_PAGES launches, its identification none (the
 * round's labels). An H200 (C = 47 a partition): about 190 + 96 a round +
 * 192 for the hash, 0.5 s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/stats.h"
#include "../../slice/slice_contend.h"
#include "slices_internal.h"

/* contention probes: 8 warps on every other SM (the H200 shows no queue with one warp an
 * SM, 750-1400 cycles with eight), 2 timed loads a probe (the least is kept; a member must
 * be slowed in two launches as well) */
#define SL_CONTEND_WARPS 8u
#define SL_CONTEND_REPS 2u
/* lines of the reference page grouped by contention: a random sample that shows every slice
 * (160 slices, the most the generator draws: 12.8 lines each on average, a slice missing
 * with a chance of e^-12.8 = 3e-6) */
#define SL_CONTEND_SAMPLE 2048u
#define SL_CONTEND_STREAM 0xc0111de5ULL /* the sample's random stream, apart from the stage's */
/* the count's rounds: 8 pages x 128 lines a round (1024 probes a launch, as one page's
 * 1024 before; 128 lines show a slice of 160 with a chance of 1 - e^-0.8 = 55% a page, of
 * the round's 8 pages 1 - 1e-3), at most 32 pages (4 rounds) */
#define SL_ROUND_PAGES 8u
#define SL_ROUND_LINES 128u
#define SL_CONTEND_MAX_PAGES 32u
/* the hash: held-out lines of the reference page (labelled already: no launch), and the
 * cube lines of new components labelled at most (a join's probes; 2^k lines a page) */
#define SL_HASH_VERIFY 64u
#define SL_HASH_CUBE_LINES 65536u
/* the class latencies (contention first): lines a class and reloads a line from every slot
 * (64 samples a class and slot: a center within sigma / 8 of the class's latency, where the
 * partition signatures are steps of tens of cycles), lines a seq call (the fingerprints'
 * batch) */
#define SL_CENTER_LINES 8u
#define SL_CENTER_REPS 8u
#define SL_CENTER_BATCH 256u

struct sl_contend {
    sc_opts o;
    sc_partition *part;
    uint64_t *ref;       /* the reference page's sample and its classes */
    int *ref_cls;
    size_t n_ref;
    uint64_t *lines;     /* the rounds' lines, page after page (per_page each) */
    int *cls;
    size_t n, per_page;
    uint64_t *page_base; /* the rounds' pages */
    uint32_t pages;
};

void sl_contend_free(sl_contend *st)
{
    if (!st)
        return;
    free(st->part);
    free(st->ref);
    free(st->ref_cls);
    free(st->lines);
    free(st->cls);
    free(st->page_base);
    free(st);
}

void contend_result_clear(contend_result *cr)
{
    gx_hash_clear(&cr->hash);
    gx_slicepred_free(cr->lpred);
    memset(cr, 0, sizeof *cr);
}

static uint64_t calls_now(gx_infer *ctx)
{
    gx_target_stats s;
    gx_target_get_stats(ctx->t, &s);
    return s.calls;
}

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

static sl_contend *state_new(gx_infer *ctx, uint64_t region_bytes, size_t lines)
{
    const uint64_t page = ctx->info->page_bytes;
    uint64_t others = region_bytes / page > 1 ? region_bytes / page - 1 : 0;
    sl_contend *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->o = (sc_opts){ctx->line.line_bytes, 0, SL_CONTEND_WARPS, SL_CONTEND_REPS};
    st->n_ref = lines < SL_CONTEND_SAMPLE ? lines : SL_CONTEND_SAMPLE;
    st->per_page = lines < SL_ROUND_LINES ? lines : SL_ROUND_LINES;
    st->pages = (uint32_t)(others < SL_CONTEND_MAX_PAGES ? others : SL_CONTEND_MAX_PAGES);
    const size_t nl = (size_t)st->pages * st->per_page;
    st->part = malloc(sizeof *st->part);
    st->ref = malloc(st->n_ref * sizeof *st->ref);
    st->ref_cls = malloc(st->n_ref * sizeof *st->ref_cls);
    st->lines = malloc((nl ? nl : 1) * sizeof *st->lines);
    st->cls = malloc((nl ? nl : 1) * sizeof *st->cls);
    st->page_base = malloc((st->pages ? st->pages : 1) * sizeof *st->page_base);
    if (!st->part || !st->ref || !st->ref_cls || !st->lines || !st->cls || !st->page_base) {
        sl_contend_free(st);
        return NULL;
    }
    /* the region's last pages, the last first (the join of one page before) */
    for (uint32_t j = 0; j < st->pages; j++)
        st->page_base[j] = (others - j) * page;
    return st;
}

/* Rounds of pages joined and grown: *growing = the last round added classes. */
static int join_rounds(gx_infer *ctx, sl_contend *st, gx_rng *r, uint32_t *scratch,
                       size_t lines, int *growing, size_t *twice, gx_msg *m)
{
    int rc = GX_OK;
    *growing = 0;
    for (uint32_t p0 = 0; rc == GX_OK && p0 < st->pages; p0 += SL_ROUND_PAGES) {
        uint32_t np = st->pages - p0 < SL_ROUND_PAGES ? st->pages - p0 : SL_ROUND_PAGES;
        uint64_t *l = st->lines + (size_t)p0 * st->per_page;
        for (uint32_t j = 0; j < np; j++)
            sample_lines(r, st->page_base[p0 + j], ctx->line.line_bytes, lines, st->per_page,
                         scratch, l + (size_t)j * st->per_page);
        uint32_t added = 0;
        size_t tw = 0;
        rc = sc_grow_lines(ctx->t, &st->o, st->part, l, (size_t)np * st->per_page,
                           st->cls + (size_t)p0 * st->per_page, &added, &tw, m);
        st->n = (size_t)(p0 + np) * st->per_page;
        *twice += tw;
        *growing = added > 0;
        if (rc != GX_OK || tw || !added)
            break;
    }
    st->pages = (uint32_t)(st->n / (st->per_page ? st->per_page : 1));
    return rc;
}

int slices_contend_count(gx_infer *ctx, uint64_t region_bytes, uint32_t fp_classes,
                         int fp_merged, contend_result *cr, sl_contend **state)
{
    const uint64_t page = ctx->info->page_bytes;
    const size_t lines = (size_t)(page / ctx->line.line_bytes);
    const uint64_t calls0 = calls_now(ctx);
    *state = NULL;
    memset(cr, 0, sizeof *cr);
    sl_contend *st = state_new(ctx, region_bytes, lines);
    uint32_t *scratch = malloc(lines * sizeof *scratch);
    if (!st || !scratch) {
        sl_contend_free(st);
        free(scratch);
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    }
    gx_msg m;
    size_t twice = 0;
    int growing = 0;
    /* a stream of its own (the context's stays where it was for the later stages) */
    gx_rng peek = ctx->rng, r;
    gx_rng_seed(&r, gx_mix64(gx_rng_next(&peek) ^ SL_CONTEND_STREAM));
    sample_lines(&r, 0, ctx->line.line_bytes, lines, st->n_ref, scratch, st->ref);
    int rc = sc_partition_lines(ctx->t, &st->o, st->ref, st->n_ref, st->ref_cls, st->part, &m);
    cr->ref_classes = rc == GX_OK ? st->part->classes : 0;
    if (rc == GX_OK)
        rc = join_rounds(ctx, st, &r, scratch, lines, &growing, &twice, &m);
    free(scratch);
    cr->launches = calls_now(ctx) - calls0;
    if (rc == GX_ENOMEM) {
        sl_contend_free(st);
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    }
    cr->pages = st->pages;
    const uint32_t nc = st->part->classes;
    if (rc != GX_OK)
        snprintf(cr->how, sizeof cr->how, "contention: %.170s", m.text);
    else if ((nc < fp_classes && !fp_merged) || twice || growing)
        snprintf(cr->how, sizeof cr->how,
                 "contention: %u classes (%u fingerprint classes), %zu lines of other pages in "
                 "two%s: not established",
                 nc, fp_classes, twice, growing ? ", still growing at the last page" : "");
    else {
        cr->classes = nc;
        snprintf(cr->how, sizeof cr->how,
                 "%u contention classes (%u in %zu lines of the reference page; %u of %u checked "
                 "exactly), %u pages x %zu lines of others within them",
                 nc, cr->ref_classes, st->n_ref, st->part->agreed, st->part->checked,
                 st->pages, st->per_page);
    }
    infer_progress(ctx, "slices: %s (%llu launches)", cr->how,
                   (unsigned long long)cr->launches);
    if (rc == GX_OK && cr->classes)
        *state = st;
    else
        sl_contend_free(st);
    return GX_OK;
}

/* Every line of the reference page labelled (the sample's labels kept, the
 * rest in one join); *unsure = lines no class (or two) took. */
static int label_reference(gx_infer *ctx, sc_labeller *lab, size_t lines, size_t *unsure,
                           gx_msg *m)
{
    uint64_t *all = malloc(lines * sizeof *all);
    int *labs = malloc(lines * sizeof *labs);
    int rc = all && labs ? GX_OK : GX_ENOMEM;
    if (rc == GX_OK) {
        sc_page_lines(0, ctx->line.line_bytes, lines, all);
        rc = sc_labeller_label(lab, all, lines, labs, m);
    }
    *unsure = 0;
    for (size_t i = 0; rc == GX_OK && i < lines; i++)
        *unsure += labs[i] < 0;
    free(all);
    free(labs);
    return rc;
}

/* The cubes of the pending pages labelled in one join (the labeller
 * remembers them), as many pages as SL_HASH_CUBE_LINES holds; pages beyond
 * are no longer pending (not identified, no check: *cut counts them). */
static int label_cubes(gx_slicepred *lp, sc_labeller *lab, const sl_contend *st,
                       uint8_t *pending, uint32_t *cut, gx_msg *m)
{
    const size_t nz = gx_slicepred_cube_lines(lp, 0, NULL, 0);
    size_t n = 0;
    for (uint32_t j = 0; j < st->pages; j++) {
        if (pending[j] && n + nz > SL_HASH_CUBE_LINES) {
            pending[j] = 0;
            ++*cut;
        }
        n += pending[j] ? nz : 0;
    }
    if (n == 0)
        return GX_OK;
    uint64_t *cl = malloc(n * sizeof *cl);
    int *cc = malloc(n * sizeof *cc);
    int rc = cl && cc ? GX_OK : GX_ENOMEM;
    for (uint32_t j = 0, at = 0; rc == GX_OK && j < st->pages; j++)
        if (pending[j]) {
            (void)gx_slicepred_cube_lines(lp, st->page_base[j], cl + at, nz);
            at += (uint32_t)nz;
        }
    if (rc == GX_OK)
        rc = sc_labeller_label(lab, cl, n, cc, m);
    free(cl);
    free(cc);
    return rc;
}

/* Identify every round page from its joined lines; pages no known component
 * explains are identified again after their cubes were labelled, learning
 * new components. *identified counts the pages identified, *cut the pages
 * the cube budget left out. */
static int identify_pages(gx_slicepred *lp, sc_labeller *lab, const sl_contend *st,
                          uint32_t *identified, uint32_t *cut, gx_msg *m)
{
    uint8_t *pending = calloc(st->pages ? st->pages : 1, 1);
    if (!pending)
        return GX_ENOMEM;
    int rc = GX_OK;
    uint32_t np = 0;
    *identified = *cut = 0;
    for (int pass = 0; rc == GX_OK && pass < 2; pass++) {
        for (uint32_t j = 0; rc == GX_OK && j < st->pages; j++) {
            if (pass == 1 && !pending[j])
                continue;
            gx_slicepred_page pg;
            rc = gx_slicepred_identify_labelled(lp, st->page_base[j],
                                                st->lines + j * st->per_page,
                                                st->cls + j * st->per_page, st->per_page, pass,
                                                &pg, m);
            if (rc == GX_EUNSURE && pass == 0) {
                pending[j] = 1;
                np++;
                rc = GX_OK;
            } else if (rc == GX_OK) {
                ++*identified;
            }
        }
        if (rc == GX_OK && pass == 0 && np) {
            rc = label_cubes(lp, lab, st, pending, cut, m);
        } else if (pass == 0) {
            break;
        }
    }
    free(pending);
    return rc;
}

#define SL_HASH_STREAM 0x4a5b1ce5ULL /* the labelled learner's random stream */

/* The labelled predictor of the count's classes: the reference page
 * labelled whole, the structure solved, the round pages identified. */
static int learn_from_labels(gx_infer *ctx, sl_contend *st, sc_labeller *lab,
                             uint64_t region_bytes, gx_slicepred **lp, uint32_t *identified,
                             uint32_t *cut, gx_msg *m)
{
    const uint64_t page = ctx->info->page_bytes;
    size_t unsure = 0;
    int rc = sc_labeller_put(lab, st->ref, st->ref_cls, st->n_ref);
    if (rc == GX_OK)
        rc = sc_labeller_put(lab, st->lines, st->cls, st->n);
    if (rc == GX_OK)
        rc = label_reference(ctx, lab, (size_t)(page / ctx->line.line_bytes), &unsure, m);
    if (rc == GX_OK && unsure)
        rc = gx_fail(m, GX_EUNSURE, "%zu lines of the reference page in no class or two",
                     unsure);
    gx_slicepred_opts o;
    gx_slicepred_opts_default(&o);
    o.line_bytes = ctx->line.line_bytes;
    o.page_bytes = page;
    o.region_offset = 0;
    o.region_bytes = region_bytes;
    o.verify_lines = SL_HASH_VERIFY;
    gx_rng peek = ctx->rng;
    o.seed = gx_mix64(gx_rng_next(&peek) ^ SL_HASH_STREAM);
    if (rc == GX_OK)
        rc = gx_slicepred_learn_labelled(ctx->t, &o, sc_labeller_label, lab, lp, m);
    if (rc == GX_OK)
        rc = identify_pages(*lp, lab, st, identified, cut, m);
    return rc;
}

static void free_labeller(void *lab)
{
    sc_labeller_free(lab);
}

int slices_contend_hash(gx_infer *ctx, sl_contend *st, uint64_t region_bytes,
                        contend_result *cr)
{
    const uint64_t calls0 = calls_now(ctx);
    gx_msg m;
    memset(&m, 0, sizeof m);
    gx_slicepred *lp = NULL;
    uint32_t identified = 0, cut = 0;
    sc_labeller *lab = sc_labeller_new(ctx->t, &st->o, st->part);
    int rc = lab ? learn_from_labels(ctx, st, lab, region_bytes, &lp, &identified, &cut, &m)
                 : GX_ENOMEM;
    if (rc == GX_OK) {
        gx_slicepred_get_summary(lp, &cr->hs);
        rc = gx_slicepred_hash(lp, &cr->hash, &m);
    }
    cr->hash_launches = calls_now(ctx) - calls0;
    if (rc == GX_ENOMEM) {
        gx_slicepred_free(lp);
        sc_labeller_free(lab);
        gx_hash_clear(&cr->hash);
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    }
    const gx_slicepred_summary *s = &cr->hs;
    if (rc != GX_OK) {
        snprintf(cr->hash_how, sizeof cr->hash_how, "from contention labels: %.150s", m.text);
    } else {
        cr->hash_ok = !s->verify_errors && identified + cut == st->pages &&
                      (identified > 0 || st->pages == 0);
        snprintf(cr->hash_how, sizeof cr->hash_how,
                 "from contention labels: %d masks%s over bits %d..%d, %u of %u pages "
                 "identified (%u components), %llu/%llu held-out lines agree%s",
                 s->k, s->linear ? "" : " + table", s->obs_lo, s->obs_hi, identified,
                 st->pages, s->components,
                 (unsigned long long)(s->verified - s->verify_errors),
                 (unsigned long long)s->verified, cr->hash_ok ? "" : ": not established");
    }
    if (!cr->hash_ok) {
        gx_hash_clear(&cr->hash);
        gx_slicepred_free(lp);
        sc_labeller_free(lab);
    } else {
        /* kept for the ways stage's pools: the predictor owns its labeller */
        gx_slicepred_own_labeller(lp, free_labeller);
        cr->lpred = lp;
    }
    infer_progress(ctx, "slices: hash %s (%llu launches)", cr->hash_how,
                   (unsigned long long)cr->hash_launches);
    return GX_OK;
}

/* ---- the class latencies (contention first) ---------------------------------------- */

/* Up to SL_CENTER_LINES lines of each class: its first line, then the
 * sample's and the rounds' lines of it. lines[j * SL_CENTER_LINES ..],
 * cnt[j] of them. */
static void class_lines(const sl_contend *st, uint64_t *lines, uint32_t *cnt)
{
    const uint32_t nc = st->part->classes;
    for (uint32_t j = 0; j < nc; j++) {
        lines[(size_t)j * SL_CENTER_LINES] = st->part->first[j];
        cnt[j] = 1;
    }
    const uint64_t *src[2] = {st->ref, st->lines};
    const int *lab[2] = {st->ref_cls, st->cls};
    const size_t n[2] = {st->n_ref, st->n};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n[k]; i++) {
            int j = lab[k][i];
            if (j < 0 || (uint32_t)j >= nc || cnt[j] == SL_CENTER_LINES ||
                src[k][i] == st->part->first[j])
                continue;
            lines[(size_t)j * SL_CENTER_LINES + cnt[j]++] = src[k][i];
        }
}

/* med[i * S + k] = the median of SL_CENTER_REPS reloads of lines[i] from
 * SM slot k (the first load untimed); *sigma = the median of their MADs
 * (x 1.4826). */
static int reload_medians(gx_infer *ctx, const uint64_t *lines, size_t n, const uint32_t *sms,
                          uint32_t S, double *med, double *sigma)
{
    const size_t per = SL_CENTER_REPS + 1, chunk = n < SL_CENTER_BATCH ? n : SL_CENTER_BATCH;
    gx_seq_op *ops = malloc(chunk * per * sizeof *ops);
    double *cyc = malloc(chunk * per * sizeof *cyc);
    double *mads = malloc((n * S + 1) * sizeof *mads);
    int rc = ops && cyc && mads ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    for (size_t b = 0; rc == GX_OK && b < n; b += chunk) {
        size_t m = n - b < chunk ? n - b : chunk;
        for (size_t i = 0; i < m; i++)
            for (size_t r = 0; r < per; r++)
                ops[i * per + r] = (gx_seq_op){lines[b + i], GX_OP_LOAD, r > 0};
        for (uint32_t k = 0; rc == GX_OK && k < S; k++) {
            rc = infer_seq_timed(ctx, ops, m * per, sms[k], cyc);
            for (size_t i = 0; rc == GX_OK && i < m; i++) {
                med[(b + i) * S + k] = gx_median(cyc + i * SL_CENTER_REPS, SL_CENTER_REPS);
                mads[(b + i) * S + k] = gx_mad(cyc + i * SL_CENTER_REPS, SL_CENTER_REPS);
            }
        }
    }
    *sigma = rc == GX_OK && n ? 1.4826 * gx_median(mads, n * S) : NAN;
    free(ops);
    free(cyc);
    free(mads);
    return rc;
}

int centers_from_contention(gx_infer *ctx, const sl_contend *st, uint32_t S, sl_centers *c)
{
    memset(c, 0, sizeof *c);
    const uint32_t nc = st->part->classes, sm_count = ctx->info->sm_count;
    if (S > SL_CENTER_MAX_SMS)
        S = SL_CENTER_MAX_SMS;
    if (S > sm_count)
        S = sm_count ? sm_count : 1;
    gx_slicepred_spread_sms(sm_count, S, c->sm); /* the fingerprints' slots */
    uint64_t *lines = malloc(((size_t)nc * SL_CENTER_LINES + 1) * sizeof *lines);
    uint32_t *cnt = calloc(nc ? nc : 1, sizeof *cnt);
    c->c = malloc(((size_t)nc * S + 1) * sizeof *c->c);
    if (!lines || !cnt || !c->c) {
        free(lines);
        free(cnt);
        centers_free(c);
        return gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    }
    class_lines(st, lines, cnt);
    /* the chosen lines packed, class after class */
    size_t n = 0;
    for (uint32_t j = 0; j < nc; j++)
        for (uint32_t i = 0; i < cnt[j]; i++)
            lines[n++] = lines[(size_t)j * SL_CENTER_LINES + i];
    double *med = malloc((n * S + 1) * sizeof *med), col[SL_CENTER_LINES];
    int rc = med ? reload_medians(ctx, lines, n, c->sm, S, med, &c->sigma)
                 : gx_fail(ctx->msg, GX_ENOMEM, "slices: out of memory");
    for (uint32_t j = 0, at = 0; rc == GX_OK && j < nc; at += cnt[j++])
        for (uint32_t k = 0; k < S; k++) {
            for (uint32_t i = 0; i < cnt[j]; i++)
                col[i] = med[(size_t)(at + i) * S + k];
            c->c[(size_t)j * S + k] = gx_median(col, cnt[j]);
        }
    c->classes = nc;
    c->sms = S;
    c->reps = SL_CENTER_REPS;
    c->lines = n;
    free(lines);
    free(cnt);
    free(med);
    if (rc != GX_OK)
        centers_free(c);
    return rc;
}
