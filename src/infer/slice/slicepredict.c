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
#include "gpuxray/slicepredict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "gpuxray/stats.h"
#include "slice_fp.h"
#include "slice_solve.h"
#include "gpuxray/bits.h"

#define SP_MAX_ROUNDS 8      /* measuring rounds before a line stays unsure */
#define SP_BATCH_LINES 256   /* lines per seq call */
#define SP_ID_CHANCE 1e-9    /* accepted chance of a wrong page identification */
#define SP_PILOT_LINES 24
#define SP_MIN_PAGES 8       /* pages learned at least (when the region has them) */
#define SP_MAX_PAGES 256     /* pages learned at most */
#define SP_ATTEMPTS 3       /* learning attempts (reps doubled after a failed check) */
#define SP_STORE_MAX 4096   /* labelled lines kept for calibration */

struct gx_slicepred {
    gx_target *t;
    gx_slicepred_opts o;
    uint32_t sm_count;
    int obs_lo, obs_hi;
    uint64_t space;
    int S;
    uint32_t sms[SFP_MAX_SMS];
    uint32_t reps;
    sfp_model fp;
    gx_rng rng;
    gx_msg *msg;
    ssolve_result hs;
    int have_hash;
    int n_comp, cap_comp;
    int **comp;             /* component tables (internal class ids), 1 << k each */
    uint32_t *ext;          /* internal class -> caller's id */
    uint32_t cap_ext;
    sfp_line *st;           /* labelled lines (calibration) */
    int *st_lab;
    size_t n_st, cap_st;
    size_t n_st_calib;      /* store size at the last calibration */
    uint64_t page_base;     /* the solver's page */
    gx_slicepred_summary sum;
};

void gx_slicepred_opts_default(gx_slicepred_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
}

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

static int ensure_ext(gx_slicepred *sp)
{
    uint32_t need = (uint32_t)sp->fp.n_classes;
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
static int classify(gx_slicepred *sp, const uint64_t *offs, size_t n, int *labels, int allow_new,
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
                    if (j < 0 || ensure_ext(sp) != GX_OK)
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
                if (best < 0 || ensure_ext(sp) != GX_OK)
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

static void pick_sms(gx_slicepred *sp)
{
    uint32_t n = sp->sm_count ? sp->sm_count : 1;
    for (int i = 0; i < sp->S; i++) {
        uint64_t a = (uint64_t)i * n / (uint64_t)sp->S;
        uint64_t b = (uint64_t)(i + 1) * n / (uint64_t)sp->S;
        sp->sms[i] = (uint32_t)((a + b) / 2 < n ? (a + b) / 2 : n - 1);
    }
}

static uint64_t random_line(gx_slicepred *sp, uint64_t base)
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
static int pilot(gx_slicepred *sp, uint64_t base)
{
    const uint32_t r0 = 8;
    uint64_t offs[SP_PILOT_LINES];
    sfp_line lines[SP_PILOT_LINES];
    memset(lines, 0, sizeof lines);
    for (int i = 0; i < SP_PILOT_LINES; i++)
        offs[i] = random_line(sp, base);
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
        pick_sms(sp);
    }
    sp->sum.sms = (uint32_t)sp->S;
    return GX_OK;
}

/* ---- structure -------------------------------------------------------------------- */

static int oracle(void *user, const uint64_t *offs, size_t n, int *labels)
{
    gx_slicepred *sp = user;
    uint64_t *abs = malloc((n ? n : 1) * sizeof *abs);
    if (!abs)
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    for (size_t i = 0; i < n; i++)
        abs[i] = sp->page_base + offs[i];
    size_t unsure = 0;
    int rc = classify(sp, abs, n, labels, 1, &unsure, 1);
    free(abs);
    if (rc == GX_OK && unsure)
        rc = gx_fail(sp->msg, GX_EUNSURE,
                     "slices: %zu of %zu lines could not be classified (fingerprints too close "
                     "for the noise)",
                     unsure, n);
    return rc;
}

static int add_component(gx_slicepred *sp, int *table)
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

static double table_freq(const gx_slicepred *sp, const int *table, int label)
{
    size_t n = (size_t)1 << sp->hs.k, k = 0;
    for (size_t i = 0; i < n; i++)
        k += table[i] == label;
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
    int rc = classify(sp, offs, n, table, 1, &unsure, 1);
    *measured += (uint32_t)n;
    free(offs);
    if (rc == GX_OK && unsure)
        rc = gx_fail(sp->msg, GX_EUNSURE, "slices: %zu cube lines of a page stayed unsure",
                     unsure);
    if (rc == GX_OK && (*comp = add_component(sp, table)) < 0)
        rc = gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    if (rc != GX_OK)
        free(table);
    return rc;
}

/* Identify (component, z) of a page from random lines; learn a new
 * component from the cube when none explains them (allow_learn). */
static int identify(gx_slicepred *sp, uint64_t base, uint32_t max_lines, int allow_learn,
                    gx_slicepred_page *pg)
{
    const size_t nz = (size_t)1 << sp->hs.k;
    pg->base = base;
    pg->component = -1;
    pg->z = 0;
    pg->lines_measured = 0;
    size_t ncand = (size_t)sp->n_comp * nz;
    uint8_t *alive = malloc(ncand ? ncand : 1);
    uint64_t seen_x[512];
    int seen_l[512];
    size_t n_seen = 0;
    if (!alive)
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    memset(alive, 1, ncand);
    size_t n_alive = ncand;
    double strength = 1.0;
    int rc = GX_OK;
    /* a wrong candidate survives a line with probability ~ the frequency of
     * that line's class: stop when one candidate is left and the others had
     * a chance below SP_ID_CHANCE of all surviving */
    while (rc == GX_OK && n_alive > 0 &&
           (n_alive > 1 || strength * (double)(ncand - 1) > SP_ID_CHANCE ||
            pg->lines_measured == 0) &&
           pg->lines_measured + 4 <= max_lines && n_seen + 4 <= 512) {
        uint64_t offs[4];
        int labs[4];
        for (int i = 0; i < 4; i++)
            offs[i] = random_line(sp, base);
        size_t unsure = 0;
        rc = classify(sp, offs, 4, labs, 1, &unsure, 0);
        pg->lines_measured += 4;
        for (int i = 0; rc == GX_OK && i < 4; i++) {
            if (labs[i] < 0)
                continue; /* unsure line: no evidence */
            uint64_t y = gx_gf2_apply(sp->hs.masks, sp->hs.k, offs[i] - base);
            double fmax = 0;
            for (int c = 0; c < sp->n_comp; c++) {
                double f = table_freq(sp, sp->comp[c], labs[i]);
                if (f > fmax)
                    fmax = f;
                for (size_t z = 0; z < nz; z++) {
                    size_t id = (size_t)c * nz + z;
                    if (alive[id] && sp->comp[c][y ^ z] != labs[i]) {
                        alive[id] = 0;
                        n_alive--;
                    }
                }
            }
            strength *= fmax;
            seen_x[n_seen] = offs[i] - base;
            seen_l[n_seen++] = labs[i];
        }
    }
    if (rc == GX_OK && n_alive == 1 && pg->lines_measured > 0 &&
        strength * (double)(ncand - 1) <= SP_ID_CHANCE) {
        for (size_t id = 0; id < ncand; id++)
            if (alive[id]) {
                pg->component = (int)(id / nz);
                pg->z = id % nz;
            }
    } else if (rc == GX_OK && n_alive == 0 && allow_learn &&
               pg->lines_measured + nz <= max_lines) {
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
    if (rc == GX_OK && pg->component < 0)
        rc = gx_fail(sp->msg, GX_EUNSURE,
                     "slices: page at 0x%llx not identified with %u lines (%zu candidates left)",
                     (unsigned long long)base, pg->lines_measured, n_alive);
    return rc;
}

/* Check held-out random lines of an identified page. */
static int verify_page(gx_slicepred *sp, const gx_slicepred_page *pg, uint32_t n)
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
        offs[i] = random_line(sp, pg->base);
    size_t unsure = 0;
    int rc = classify(sp, offs, n, labs, 1, &unsure, 0);
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

/* ---- public --------------------------------------------------------------------------- */

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
    int rc = ssolve_run(sp->space, &so, oracle, sp, &sp->rng, &sp->hs, sp->msg);
    if (rc != GX_OK)
        return rc;
    sp->have_hash = 1;
    sp->sum.lines_structure = sp->hs.lines;
    if (add_component(sp, sp->hs.table) < 0)
        return gx_fail(sp->msg, GX_ENOMEM, "slices: out of memory");
    gx_slicepred_page pg = {.base = r0, .component = 0, .z = 0, .lines_measured = 0};
    rc = verify_page(sp, &pg, verify);
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
        rc = identify(sp, r0 + p * page, lines_per_page, 1, &pg);
        if (rc == GX_OK)
            rc = verify_page(sp, &pg, verify);
        since_new = sp->n_comp > before ? 0 : since_new + 1;
        sp->sum.pages_learned++;
    }
    return rc;
}

static int setup(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out, gx_msg *msg)
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
    uint32_t S = sp->o.n_sms ? sp->o.n_sms : SFP_MAX_SMS;
    if (S > SFP_MAX_SMS)
        S = SFP_MAX_SMS;
    if (S > sp->sm_count)
        S = sp->sm_count;
    sp->S = (int)S;
    pick_sms(sp);
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

int gx_slicepred_learn(gx_target *t, const gx_slicepred_opts *opts, gx_slicepred **out,
                       gx_msg *msg)
{
    if (!t || !opts || !out)
        return gx_fail(msg, GX_EINVAL, "slices: NULL argument");
    *out = NULL;
    gx_slicepred *sp = NULL;
    int rc = setup(t, opts, &sp, msg);
    if (rc != GX_OK)
        return rc;
    uint64_t arena = gx_target_arena_bytes(t), page = sp->o.page_bytes;
    uint64_t r0 = (sp->o.region_offset + page - 1) / page * page;
    uint64_t r1 = sp->o.region_bytes ? sp->o.region_offset + sp->o.region_bytes : arena;
    if (r1 > arena)
        r1 = arena;
    uint64_t npages = r1 > r0 ? (r1 - r0) / page : 0;
    if (npages == 0) {
        gx_slicepred_free(sp);
        return gx_fail(msg, GX_EINVAL, "slices: the region holds no whole page (arena %llu B)",
                       (unsigned long long)arena);
    }
    uint32_t maxp = sp->o.max_pages ? sp->o.max_pages : SP_MAX_PAGES;
    if (npages > maxp)
        npages = maxp;
    uint32_t verify = sp->o.verify_lines ? sp->o.verify_lines : 16;

    rc = pilot(sp, r0);
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
    s->classes = (uint32_t)sp->fp.n_classes;
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
    uint32_t n = (uint32_t)sp->fp.n_classes;
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
    return identify(sp, page_base, max_lines, 1, pg);
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
    int rc = classify(sp, offs, n, classes, 0, NULL, 0);
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (classes[i] >= 0)
            classes[i] = (int)sp->ext[classes[i]];
    return rc;
}
