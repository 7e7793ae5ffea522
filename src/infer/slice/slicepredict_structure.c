/* slicepredict_structure.c - the slice predictor's structure: the hash
 * solver's oracle (a class per line), component tables learnt per page,
 * a page identified by its lines' classes (learnt when new), and a page's
 * prediction verified against fresh measurements. */
#include <stdlib.h>
#include <string.h>

#include "slicepredict_internal.h"

/* ---- structure -------------------------------------------------------------------- */

int sp_oracle(void *user, const uint64_t *offs, size_t n, int *labels)
{
    gx_slicepred *sp = user;
    uint64_t *abs = malloc((n ? n : 1) * sizeof *abs);
    if (!abs)
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    for (size_t i = 0; i < n; i++)
        abs[i] = sp->page_base + offs[i];
    size_t unsure = 0;
    int rc = sp_label(sp, abs, n, labels, 1, &unsure, 1);
    free(abs);
    if (rc == GX_OK && unsure)
        rc = gx_fail(sp->msg, GX_EUNSURE,
                     "slices: %zu of %zu lines could not be classified (fingerprints too close "
                     "for the noise)",
                     unsure, n);
    return rc;
}

int sp_add_component(gx_slicepred *sp, int *table)
{
    if (sp->n_comp == sp->cap_comp) {
        int nc = sp->cap_comp ? 2 * sp->cap_comp : 8;
        int **c = realloc(sp->comp, (size_t)nc * sizeof *c);
        if (!c)
            return -1;
        sp->comp = c;
        sp->cap_comp = nc;
    }
    sp->comp[sp->n_comp] = table;
    return sp->n_comp++;
}

/* Label counts of every component table (hist[c] over labels 0..maxl[c]),
 * built once per identification instead of once per measured line. */
typedef struct comp_hist {
    int n;
    uint32_t **hist;
    int *maxl;
} comp_hist;

static void comp_hist_free(comp_hist *h)
{
    for (int c = 0; h->hist && c < h->n; c++)
        free(h->hist[c]);
    free(h->hist);
    free(h->maxl);
}

static int comp_hist_build(const gx_slicepred *sp, comp_hist *h)
{
    size_t nz = (size_t)1 << sp->hs.k;
    h->n = sp->n_comp;
    h->hist = calloc(h->n ? (size_t)h->n : 1, sizeof *h->hist);
    h->maxl = calloc(h->n ? (size_t)h->n : 1, sizeof *h->maxl);
    if (!h->hist || !h->maxl)
        return GX_ENOMEM;
    for (int c = 0; c < h->n; c++) {
        int mx = -1;
        for (size_t i = 0; i < nz; i++)
            mx = sp->comp[c][i] > mx ? sp->comp[c][i] : mx;
        h->maxl[c] = mx;
        h->hist[c] = calloc((size_t)(mx + 1) + 1, sizeof **h->hist);
        if (!h->hist[c])
            return GX_ENOMEM;
        for (size_t i = 0; i < nz; i++)
            if (sp->comp[c][i] >= 0)
                h->hist[c][sp->comp[c][i]]++;
    }
    return GX_OK;
}

/* Share of component c's table entries holding label (as a count over the
 * table's size: the value a scan of the table gives). */
static double table_freq(const gx_slicepred *sp, const comp_hist *h, int c, int label)
{
    size_t n = (size_t)1 << sp->hs.k;
    size_t k = label >= 0 && label <= h->maxl[c] ? h->hist[c][label] : 0;
    return (double)k / (double)n;
}

/* Learn the component of the page at base from its cube; *comp = its id. */
static int learn_component(gx_slicepred *sp, uint64_t base, int *comp, uint32_t *measured)
{
    size_t n = (size_t)1 << sp->hs.k;
    uint64_t *offs = malloc(n * sizeof *offs);
    int *table = malloc(n * sizeof *table);
    if (!offs || !table) {
        free(offs);
        free(table);
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    }
    for (size_t y = 0; y < n; y++)
        offs[y] = base + ssolve_cube_offset(&sp->hs, y);
    size_t unsure = 0;
    int rc = sp_label(sp, offs, n, table, 1, &unsure, 1);
    *measured += (uint32_t)n;
    free(offs);
    if (rc == GX_OK && unsure)
        rc = gx_fail(sp->msg, GX_EUNSURE, "slices: %zu cube lines of a page stayed unsure",
                     unsure);
    if (rc == GX_OK && (*comp = sp_add_component(sp, table)) < 0)
        rc = gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    if (rc != GX_OK)
        free(table);
    return rc;
}

/* The next lines of a page for its identification (4 at most): the next of
 * the given ones, or random lines measured. *got = their number. */
static int next_lines(gx_slicepred *sp, uint64_t base, sp_given *g, uint64_t *offs, int *labs,
                      size_t *got)
{
    if (g) {
        size_t k = 0;
        for (; k < 4 && g->next < g->n; k++, g->next++) {
            offs[k] = g->offs[g->next];
            labs[k] = g->labels[g->next];
        }
        *got = k;
        return GX_OK;
    }
    for (int i = 0; i < 4; i++)
        offs[i] = sp_random_line(sp, base);
    *got = 4;
    size_t unsure = 0;
    return sp_label(sp, offs, 4, labs, 1, &unsure, 0);
}

/* Identify (component, z) of a page from its lines (random ones measured,
 * or the given ones); learn a new component from the cube when none
 * explains them (allow_learn). */
int sp_identify(gx_slicepred *sp, uint64_t base, uint32_t max_lines, int allow_learn,
                sp_given *given, gx_slicepred_page *pg)
{
    const size_t nz = (size_t)1 << sp->hs.k;
    pg->base = base;
    pg->component = -1;
    pg->z = 0;
    pg->lines_measured = 0;
    size_t ncand = (size_t)sp->n_comp * nz;
    /* the candidates (component * nz + z) still alive, in increasing order */
    uint32_t *alive = malloc((ncand ? ncand : 1) * sizeof *alive);
    uint64_t seen_x[512];
    int seen_l[512];
    size_t n_seen = 0;
    comp_hist hist = {0, NULL, NULL};
    if (!alive || comp_hist_build(sp, &hist) != GX_OK) {
        free(alive);
        comp_hist_free(&hist);
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    }
    for (size_t id = 0; id < ncand; id++)
        alive[id] = (uint32_t)id;
    size_t n_alive = ncand;
    double strength = 1.0;
    int rc = GX_OK;
    /* a wrong candidate survives a line with probability ~ the frequency of
     * that line's class: stop when one candidate is left and the others had
     * a chance below SP_ID_CHANCE of all surviving */
    while (rc == GX_OK && n_alive > 0 &&
           (n_alive > 1 || strength * (double)(ncand - 1) > SP_ID_CHANCE ||
            pg->lines_measured == 0) &&
           (given ? given->next < given->n : pg->lines_measured + 4 <= max_lines) &&
           n_seen + 4 <= 512) {
        uint64_t offs[4];
        int labs[4];
        size_t got = 0;
        rc = next_lines(sp, base, given, offs, labs, &got);
        pg->lines_measured += (uint32_t)got;
        for (size_t i = 0; rc == GX_OK && i < got; i++) {
            if (labs[i] < 0)
                continue; /* unsure line: no evidence */
            uint64_t y = gx_gf2_apply(sp->hs.masks, sp->hs.k, offs[i] - base);
            double fmax = 0;
            for (int c = 0; c < sp->n_comp; c++) {
                double f = table_freq(sp, &hist, c, labs[i]);
                if (f > fmax)
                    fmax = f;
            }
            size_t keep = 0;
            for (size_t q = 0; q < n_alive; q++) {
                size_t id = alive[q];
                if (sp->comp[id >> sp->hs.k][y ^ (id & (nz - 1))] == labs[i])
                    alive[keep++] = (uint32_t)id;
            }
            n_alive = keep;
            strength *= fmax;
            seen_x[n_seen] = offs[i] - base;
            seen_l[n_seen++] = labs[i];
        }
    }
    if (rc == GX_OK && n_alive == 1 && pg->lines_measured > 0 &&
        strength * (double)(ncand - 1) <= SP_ID_CHANCE) {
        pg->component = (int)(alive[0] / nz);
        pg->z = alive[0] % nz;
    } else if (rc == GX_OK && n_alive == 0 && allow_learn &&
               (given || pg->lines_measured + nz <= max_lines)) {
        int c = -1;
        rc = learn_component(sp, base, &c, &pg->lines_measured);
        if (rc == GX_OK) {
            /* the lines measured before must agree with the new table */
            size_t bad = 0;
            for (size_t i = 0; i < n_seen; i++)
                bad += sp->comp[c][gx_gf2_apply(sp->hs.masks, sp->hs.k, seen_x[i])] != seen_l[i];
            if (bad)
                rc = gx_fail(sp->msg, GX_EUNSURE,
                             "slices: a new page component contradicts %zu of its own lines",
                             bad);
            pg->component = c;
            pg->z = 0;
        }
    }
    free(alive);
    comp_hist_free(&hist);
    if (rc == GX_OK && pg->component < 0)
        rc = gx_fail(sp->msg, GX_EUNSURE,
                     "slices: page at 0x%llx not identified with %u lines (%zu candidates left)",
                     (unsigned long long)base, pg->lines_measured, n_alive);
    return rc;
}

/* Check held-out random lines of an identified page. */
int sp_verify_page(gx_slicepred *sp, const gx_slicepred_page *pg, uint32_t n)
{
    if (!n)
        return GX_OK;
    uint64_t *offs = malloc(n * sizeof *offs);
    int *labs = malloc(n * sizeof *labs);
    if (!offs || !labs) {
        free(offs);
        free(labs);
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    }
    for (uint32_t i = 0; i < n; i++)
        offs[i] = sp_random_line(sp, pg->base);
    size_t unsure = 0;
    int rc = sp_label(sp, offs, n, labs, 1, &unsure, 0);
    for (uint32_t i = 0; rc == GX_OK && i < n; i++) {
        uint64_t y = gx_gf2_apply(sp->hs.masks, sp->hs.k, offs[i] - pg->base);
        sp->sum.verified++;
        if (labs[i] < 0 || sp->comp[pg->component][y ^ pg->z] != labs[i])
            sp->sum.verify_errors++;
    }
    free(offs);
    free(labs);
    return rc;
}
