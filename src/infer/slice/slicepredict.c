/* slicepredict.c - learning slice classes and the slice hash from latency
 * fingerprints, and predicting new pages (see gpuxray/slicepredict.h).
 *
 * Models: a line's class is the slice that serves it; its fingerprint is
 * the vector of mean reload latencies from S SMs spread over the chip
 * (slice_fp.h). The hash structure over the observable bits comes from
 * slice_solve.h on the first page of the region (the reference page); the
 * other pages are identified as (component, XOR constant) from a few lines,
 * or learned from their cube when they show a component not seen before.
 *
 * Notes:
 * - Measuring: one seq call per SM for a batch of lines: for each line, one
 *   untimed load (brings it in) then `reps` timed reloads. A batch costs
 *   lines * S * (reps + 1) accesses. Lines the classifier is unsure of are
 *   measured again (more samples) before they get a label.
 * - reps comes from a pilot: the noise sigma and the distance between
 *   lines of different slices (the lower mode of the pairwise distances:
 *   slices of one partition) give the samples needed for the closest pair
 *   of slices to stand well apart from the noise.
 * - Internal class ids are the classifier's; ext[] maps them to the ids the
 *   caller sees (gx_slicepred_relabel). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slicepredict_internal.h"

/* ---- public --------------------------------------------------------------------------- */

void gx_slicepred_opts_default(gx_slicepred_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
}

void gx_slicepred_free(gx_slicepred *sp)
{
    if (!sp)
        return;
    for (int c = 0; c < sp->n_comp; c++)
        if (sp->comp[c] != sp->hs.table)
            free(sp->comp[c]);
    free(sp->comp);
    ssolve_free(&sp->hs);
    sfp_free(&sp->fp);
    free(sp->ext);
    free(sp->st);
    free(sp->st_lab);
    if (sp->label_free)
        sp->label_free(sp->label_user);
    free(sp);
}

static double min_center_d2(const gx_slicepred *sp)
{
    const sfp_model *m = &sp->fp;
    double sg = sfp_sigma(m), v = sg * sg, best = INFINITY;
    for (int a = 0; a < m->n_classes; a++)
        for (int b = a + 1; b < m->n_classes; b++) {
            double d2 = 0;
            for (int s = 0; s < m->S; s++) {
                double na = m->cls[a].n[s], nb = m->cls[b].n[s];
                if (!(na > 0) || !(nb > 0))
                    continue;
                double diff = m->cls[a].sum[s] / na - m->cls[b].sum[s] / nb;
                d2 += diff * diff / (v * (1.0 / na + 1.0 / nb));
            }
            d2 /= m->scale;
            if (d2 < best)
                best = d2;
        }
    return best;
}

static void reset_learning(gx_slicepred *sp)
{
    for (int c = 0; c < sp->n_comp; c++)
        if (sp->comp[c] != sp->hs.table)
            free(sp->comp[c]);
    sp->n_comp = 0;
    ssolve_free(&sp->hs);
    memset(&sp->hs, 0, sizeof sp->hs);
    sp->have_hash = 0;
    sfp_reset_classes(&sp->fp);
    sp->fp.scale = 1.0;
    sp->n_st = sp->n_st_calib = 0;
    for (uint32_t i = 0; i < sp->cap_ext; i++)
        sp->ext[i] = i;
    sp->sum.verified = sp->sum.verify_errors = sp->sum.forced = 0;
    sp->sum.pages_learned = 0;
}

/* One learning pass: structure on the reference page r0, then the other
 * pages identified (or learned), every page checked on held-out lines. */
static int learn_once(gx_slicepred *sp, uint64_t r0, uint64_t npages, uint32_t verify)
{
    uint64_t page = sp->o.page_bytes;
    sp->page_base = r0;
    ssolve_opts so;
    ssolve_opts_default(&so);
    int rc = ssolve_run(sp->space, &so, sp_oracle, sp, &sp->rng, &sp->hs, sp->msg);
    if (rc != GX_OK)
        return rc;
    sp->have_hash = 1;
    sp->sum.lines_structure = sp->hs.lines;
    if (sp_add_component(sp, sp->hs.table) < 0)
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    gx_slicepred_page pg = {.base = r0, .component = 0, .z = 0, .lines_measured = 0};
    rc = sp_verify_page(sp, &pg, verify);
    sp->sum.pages_learned = 1;
    uint32_t lines_per_page = (uint32_t)(page / sp->o.line_bytes);
    /* pages until no new component has shown for a while (bits above the
     * page can make several; each shows with its frames' frequency) */
    uint64_t since_new = 0;
    for (uint64_t p = 1; rc == GX_OK && p < npages; p++) {
        uint64_t quiet = 5 * (uint64_t)sp->n_comp;
        if (p >= SP_MIN_PAGES && since_new >= (quiet > SP_MIN_PAGES ? quiet : SP_MIN_PAGES))
            break;
        int before = sp->n_comp;
        rc = sp_identify(sp, r0 + p * page, lines_per_page, 1, NULL, &pg);
        if (rc == GX_OK)
            rc = sp_verify_page(sp, &pg, verify);
        since_new = sp->n_comp > before ? 0 : since_new + 1;
        sp->sum.pages_learned++;
    }
    return rc;
}

int sp_setup(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out, gx_msg *msg)
{
    const gx_target_info *info = gx_target_get_info(t);
    gx_slicepred *sp = calloc(1, sizeof *sp);
    if (!sp)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    sp->t = t;
    sp->o = *opts;
    sp->msg = msg;
    if (!sp->o.page_bytes)
        sp->o.page_bytes = info->page_bytes;
    int lo = gx_log2_exact_u64(sp->o.line_bytes), pb = gx_log2_exact_u64(sp->o.page_bytes);
    if (lo < 0 || pb < 0 || pb <= lo) {
        unsigned long long pbytes = (unsigned long long)sp->o.page_bytes;
        free(sp);
        return gx_fail(msg, GX_EINVAL,
                       "slices: line_bytes %u and page_bytes %llu must be powers of two, line < "
                       "page",
                       opts->line_bytes, pbytes);
    }
    sp->obs_lo = lo;
    sp->obs_hi = pb - 1;
    sp->space = ((pb >= 64 ? ~0ull : (1ull << pb) - 1)) & ~((1ull << lo) - 1);
    sp->sm_count = info->sm_count ? info->sm_count : 1;
    uint32_t S = sp->o.n_sms ? sp->o.n_sms : SP_DEFAULT_SMS;
    if (S > SFP_MAX_SMS)
        S = SFP_MAX_SMS;
    if (S > sp->sm_count)
        S = sp->sm_count;
    sp->S = (int)S;
    sp_pick_sms(sp);
    sp->reps = sp->o.reps ? sp->o.reps : 8;
    gx_rng_seed(&sp->rng, gx_mix64(sp->o.seed ^ 0x511ce5ULL));
    if (sfp_init(&sp->fp, sp->S, 0.05) != GX_OK) {
        gx_slicepred_free(sp);
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    }
    sp->sum.obs_lo = sp->obs_lo;
    sp->sum.obs_hi = sp->obs_hi;
    sp->sum.sms = S;
    *out = sp;
    return GX_OK;
}

int sp_region(gx_slicepred *sp, uint64_t *r0, uint64_t *npages)
{
    uint64_t arena = gx_target_arena_bytes(sp->t), page = sp->o.page_bytes;
    *r0 = (sp->o.region_offset + page - 1) / page * page;
    uint64_t r1 = sp->o.region_bytes ? sp->o.region_offset + sp->o.region_bytes : arena;
    if (r1 > arena)
        r1 = arena;
    *npages = r1 > *r0 ? (r1 - *r0) / page : 0;
    if (*npages == 0)
        return gx_fail(sp->msg, GX_EINVAL, "slices: the region holds no whole page (arena %llu B)",
                       (unsigned long long)arena);
    return GX_OK;
}

int gx_slicepred_learn(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out,
                       gx_msg *msg)
{
    if (!t || !opts || !out)
        return gx_fail(msg, GX_EINVAL, "slices: NULL argument");
    *out = NULL;
    gx_slicepred *sp = NULL;
    int rc = sp_setup(t, opts, &sp, msg);
    if (rc != GX_OK)
        return rc;
    uint64_t r0 = 0, npages = 0;
    if ((rc = sp_region(sp, &r0, &npages)) != GX_OK) {
        gx_slicepred_free(sp);
        return rc;
    }
    uint32_t maxp = sp->o.max_pages ? sp->o.max_pages : SP_MAX_PAGES;
    if (npages > maxp)
        npages = maxp;
    uint32_t verify = sp->o.verify_lines ? sp->o.verify_lines : 16;

    rc = sp_pilot(sp, r0);
    double prev_rate = NAN;
    for (int attempt = 0; rc == GX_OK && attempt < SP_ATTEMPTS; attempt++) {
        if (attempt > 0) {
            reset_learning(sp);
            sp->reps = sp->reps * 2 > 256 ? 256 : sp->reps * 2;
        }
        sp->sum.attempts = (uint32_t)attempt + 1;
        rc = learn_once(sp, r0, npages, verify);
        /* a wrong label or structure shows on held-out lines: more samples.
         * Errors that twice the samples did not halve are not noise (a real
         * GPU has slices that no fingerprint separates): no third attempt
         * at four times the cost. */
        if (rc == GX_EUNSURE || (rc == GX_OK && sp->sum.verify_errors)) {
            double rate = rc == GX_OK && sp->sum.verified
                              ? (double)sp->sum.verify_errors / (double)sp->sum.verified
                              : NAN;
            if (rc == GX_OK && isfinite(rate) && isfinite(prev_rate) && rate > 0.5 * prev_rate)
                break;
            /* the caller decides the classes another way: no retry */
            if (rc == GX_OK && sp->o.settled && sp->o.settled(sp->o.settled_user, sp))
                break;
            prev_rate = rate;
            if (attempt + 1 < SP_ATTEMPTS)
                rc = GX_OK;
            continue;
        }
        break;
    }
    if (rc != GX_OK) {
        gx_slicepred_free(sp);
        return rc;
    }
    *out = sp;
    return GX_OK;
}

void gx_slicepred_get_summary(const gx_slicepred *sp, gx_slicepred_summary *s)
{
    *s = sp->sum;
    s->classes = sp_classes(sp);
    s->k = sp->hs.k;
    s->linear = sp->hs.linear;
    for (int c = 1; c < sp->n_comp && s->linear; c++) {
        /* every table a bijection */
        size_t n = (size_t)1 << sp->hs.k;
        for (size_t i = 0; i < n && s->linear; i++)
            for (size_t j = i + 1; j < n && s->linear; j++)
                if (sp->comp[c][i] == sp->comp[c][j])
                    s->linear = 0;
    }
    s->components = (uint32_t)sp->n_comp;
    s->reps = sp->reps;
    s->sigma_cycles = sfp_sigma(&sp->fp);
    s->calib = sp->fp.scale;
    s->min_center_d2 = min_center_d2(sp);
}

int gx_slicepred_hash(const gx_slicepred *sp, gx_hash_fn *out, gx_msg *msg)
{
    memset(out, 0, sizeof *out);
    if (!sp->have_hash)
        return gx_fail(msg, GX_EINVAL, "slices: no hash learned");
    out->present = 1;
    out->n_masks = sp->hs.k;
    for (int i = 0; i < sp->hs.k; i++)
        out->masks[i] = sp->hs.masks[i];
    out->obs_lo = sp->obs_lo;
    out->obs_hi = sp->obs_hi;
    gx_slicepred_summary s;
    gx_slicepred_get_summary(sp, &s);
    if (!s.linear) {
        size_t n = (size_t)1 << sp->hs.k;
        out->table = malloc(n * sizeof *out->table);
        if (!out->table)
            return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
        for (size_t i = 0; i < n; i++)
            out->table[i] = sp->ext[sp->hs.table[i]];
    }
    return GX_OK;
}

double gx_slicepred_center(const gx_slicepred *sp, uint32_t cls, uint32_t slot)
{
    /* cls is a caller's id: find the internal one */
    for (int j = 0; j < sp->fp.n_classes; j++)
        if (sp->ext[j] == cls)
            return (int)slot < sp->S ? sfp_center(&sp->fp, j, (int)slot) : NAN;
    return NAN;
}

uint32_t gx_slicepred_sm(const gx_slicepred *sp, uint32_t slot)
{
    return (int)slot < sp->S ? sp->sms[slot] : 0;
}

int gx_slicepred_relabel(gx_slicepred *sp, const uint32_t *map, gx_msg *msg)
{
    uint32_t n = sp_classes(sp);
    uint8_t *seen = calloc(n ? n : 1, 1);
    if (!seen)
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    for (uint32_t i = 0; i < n; i++) {
        if (map[i] >= n || seen[map[i]]) {
            free(seen);
            return gx_fail(msg, GX_EINVAL, "slices: relabel map is not a permutation of 0..%u",
                           n - 1);
        }
        seen[map[i]] = 1;
    }
    free(seen);
    for (uint32_t j = 0; j < n; j++)
        sp->ext[j] = map[sp->ext[j]];
    return GX_OK;
}

int gx_slicepred_identify(gx_slicepred *sp, uint64_t page_base, uint32_t max_lines,
                          gx_slicepred_page *pg, gx_msg *msg)
{
    sp->msg = msg;
    if (!sp->have_hash)
        return gx_fail(msg, GX_EINVAL, "slices: no hash learned");
    if (page_base % sp->o.page_bytes)
        return gx_fail(msg, GX_EINVAL, "slices: page base 0x%llx is not page aligned",
                       (unsigned long long)page_base);
    return sp_identify(sp, page_base, max_lines, 1, NULL, pg);
}

int gx_slicepred_predict(const gx_slicepred *sp, const gx_slicepred_page *pg, uint64_t off)
{
    if (!pg || pg->component < 0 || pg->component >= sp->n_comp)
        return -1;
    uint64_t x = (off - pg->base) & sp->space;
    int j = sp->comp[pg->component][gx_gf2_apply(sp->hs.masks, sp->hs.k, x) ^ pg->z];
    return j < 0 ? -1 : (int)sp->ext[j];
}

int gx_slicepred_measure(gx_slicepred *sp, const uint64_t *offs, size_t n, int *classes,
                         gx_msg *msg)
{
    sp->msg = msg;
    int rc = sp_label(sp, offs, n, classes, 0, NULL, 0);
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (classes[i] >= 0)
            classes[i] = (int)sp->ext[classes[i]];
    return rc;
}
