/* slicepredict_labelled.c - the slice predictor's labelled learning
 * (slicepredict.h): the hash structure and the page identification of
 * slicepredict.c with the labels from a caller's labeller (the slices
 * stage's contention classes) instead of latency fingerprints.
 *
 * Model: the labeller's classes are slices (the same id on every page); a
 * line it cannot label (-1) is unsure, as a fingerprint that matches no
 * class clearly. Nothing here measures: every label comes from the
 * labeller, whose cost is its own (it can memoise lines already labelled). */
#include <stdlib.h>
#include <string.h>

#include "slicepredict_internal.h"

/* The classes known grow with the largest label of labels[0..n). */
static int note_labels(gx_slicepred *sp, const int *labels, size_t n)
{
    uint32_t need = sp->n_labels;
    for (size_t i = 0; i < n; i++)
        if (labels[i] >= 0 && (uint32_t)labels[i] >= need)
            need = (uint32_t)labels[i] + 1;
    if (need == sp->n_labels)
        return GX_OK;
    sp->n_labels = need;
    return sp_ensure_ext(sp, need) == GX_OK ? GX_OK
                                            : gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
}

/* A labeller's labels: unsure = the lines it gave no class. */
static int labelled(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels,
                    size_t *unsure)
{
    int rc = sp->label_fn(sp->label_user, offs, n, labels, sp->msg);
    size_t u = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (labels[i] < 0) {
            labels[i] = -1;
            u++;
        }
    if (rc == GX_OK)
        rc = note_labels(sp, labels, n);
    if (unsure)
        *unsure = rc == GX_OK ? u : 0;
    return rc;
}

int sp_label(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels, int allow_new,
             size_t *unsure, int force)
{
    if (!sp->label_fn)
        return sp_classify(sp, offs, n, labels, allow_new, unsure, force);
    return labelled(sp, offs, n, labels, unsure);
}

uint32_t sp_classes(const gx_slicepred *sp)
{
    return sp->label_fn ? sp->n_labels : (uint32_t)sp->fp.n_classes;
}

int gx_slicepred_learn_labelled(gx_target *t, const gx_slicepred_opts *opts,
                                gx_slicepred_labeller fn, void *user, gx_slicepred **out,
                                gx_msg *msg)
{
    if (!t || !opts || !fn || !out)
        return gx_fail(msg, GX_EINVAL, "slices: NULL argument");
    *out = NULL;
    gx_slicepred *sp = NULL;
    int rc = sp_setup(t, opts, &sp, msg);
    if (rc != GX_OK)
        return rc;
    sp->label_fn = fn;
    sp->label_user = user;
    sp->reps = 0;
    sp->sum.reps = 0;
    sp->sum.sms = 0;
    uint64_t r0 = 0, npages = 0;
    rc = sp_region(sp, &r0, &npages);
    ssolve_opts so;
    ssolve_opts_default(&so);
    sp->page_base = r0;
    sp->sum.attempts = 1;
    if (rc == GX_OK)
        rc = ssolve_run(sp->space, &so, sp_oracle, sp, &sp->rng, &sp->hs, sp->msg);
    if (rc == GX_OK) {
        sp->have_hash = 1;
        sp->sum.lines_structure = sp->hs.lines;
        if (sp_add_component(sp, sp->hs.table) < 0)
            rc = gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    }
    if (rc == GX_OK) {
        gx_slicepred_page pg = {.base = r0, .component = 0, .z = 0, .lines_measured = 0};
        rc = sp_verify_page(sp, &pg, sp->o.verify_lines ? sp->o.verify_lines : 16);
        sp->sum.pages_learned = 1;
    }
    if (rc != GX_OK) {
        gx_slicepred_free(sp);
        return rc;
    }
    *out = sp;
    return GX_OK;
}

/* The given lines an identification left over, checked against pg. */
static void check_rest(gx_slicepred *sp, const gx_slicepred_page *pg, const sp_given *g)
{
    for (size_t i = g->next; i < g->n; i++) {
        int want = gx_slicepred_predict(sp, pg, g->offs[i]);
        sp->sum.verified++;
        sp->sum.verify_errors += g->labels[i] < 0 || want != (int)sp->ext[g->labels[i]];
    }
}

int gx_slicepred_identify_labelled(gx_slicepred *sp, uint64_t page_base, const uint64_t *offs,
                                   const int *labels, size_t n, int allow_learn,
                                   gx_slicepred_page *pg, gx_msg *msg)
{
    sp->msg = msg;
    if (!sp->have_hash || !sp->label_fn)
        return gx_fail(msg, GX_EINVAL, "slices: no labelled hash learned");
    if (page_base % sp->o.page_bytes)
        return gx_fail(msg, GX_EINVAL, "slices: page base 0x%llx is not page aligned",
                       (unsigned long long)page_base);
    for (size_t i = 0; i < n; i++)
        if (offs[i] < page_base || offs[i] - page_base >= sp->o.page_bytes)
            return gx_fail(msg, GX_EINVAL, "slices: line 0x%llx outside the page at 0x%llx",
                           (unsigned long long)offs[i], (unsigned long long)page_base);
    int rc = note_labels(sp, labels, n);
    if (rc != GX_OK)
        return rc;
    sp_given g = {offs, labels, n, 0};
    int before = sp->n_comp;
    rc = sp_identify(sp, page_base, (uint32_t)n, allow_learn, &g, pg);
    if (rc == GX_OK) {
        if (sp->n_comp > before)
            g.next = 0; /* a new component: every given line checks it (its cube built it) */
        check_rest(sp, pg, &g);
        sp->sum.pages_learned++;
    }
    return rc;
}

size_t gx_slicepred_cube_lines(const gx_slicepred *sp, uint64_t page_base, uint64_t *offs,
                               size_t cap)
{
    if (!sp->have_hash)
        return 0;
    size_t n = (size_t)1 << sp->hs.k;
    for (size_t y = 0; y < n && y < cap; y++)
        offs[y] = page_base + ssolve_cube_offset(&sp->hs, y);
    return n;
}

int gx_slicepred_is_labelled(const gx_slicepred *sp)
{
    return sp && sp->label_fn != NULL;
}

void gx_slicepred_own_labeller(gx_slicepred *sp, void (*free_fn)(void *))
{
    sp->label_free = free_fn;
}

/* Page j of a batch: identified from its given lines; a page whose
 * left-over lines disagree (a chance identification) stays unidentified. */
static int identify_one(gx_slicepred *sp, uint64_t base, const uint64_t *offs,
                        const int *labels, uint32_t lines, gx_slicepred_page *pg, gx_msg *msg)
{
    uint64_t errs = sp->sum.verify_errors;
    int rc = gx_slicepred_identify_labelled(sp, base, offs, labels, lines, 0, pg, msg);
    if (rc == GX_EUNSURE || (rc == GX_OK && sp->sum.verify_errors != errs)) {
        pg->base = base;
        pg->component = -1;
        return GX_OK;
    }
    return rc;
}

int gx_slicepred_identify_pages(gx_slicepred *sp, const uint64_t *bases, size_t n,
                                uint32_t lines, gx_slicepred_page *pgs, uint32_t *identified,
                                gx_msg *msg)
{
    sp->msg = msg;
    *identified = 0;
    if (!sp->have_hash || !sp->label_fn)
        return gx_fail(msg, GX_EINVAL, "slices: no labelled hash learned");
    if (n == 0 || lines == 0)
        return GX_OK;
    uint64_t *offs = malloc(n * lines * sizeof *offs);
    int *labs = malloc(n * lines * sizeof *labs);
    if (!offs || !labs) {
        free(offs);
        free(labs);
        return gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    }
    int rc = GX_OK;
    for (size_t j = 0; j < n && rc == GX_OK; j++) {
        if (bases[j] % sp->o.page_bytes)
            rc = gx_fail(msg, GX_EINVAL, "slices: page base 0x%llx is not page aligned",
                         (unsigned long long)bases[j]);
        for (uint32_t i = 0; i < lines; i++)
            offs[j * lines + i] = sp_random_line(sp, bases[j]);
    }
    if (rc == GX_OK)
        rc = labelled(sp, offs, n * lines, labs, NULL);
    for (size_t j = 0; j < n && rc == GX_OK; j++) {
        rc = identify_one(sp, bases[j], offs + j * lines, labs + j * lines, lines, &pgs[j], msg);
        *identified += rc == GX_OK && pgs[j].component >= 0;
    }
    free(offs);
    free(labs);
    return rc;
}
