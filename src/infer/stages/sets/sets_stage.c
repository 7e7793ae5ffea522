/* sets_stage.c - discovery stage 6: the set index within a slice
 * (l2.hash.set, l2.sets_per_slice), cross-checked against the capacity.
 *
 * Method:
 * - Points: the lines of the ways stage's target page whose observable
 *   slice bits equal the target's (the slice hash's masks, from stage 5):
 *   T xor span(K), K = the null space of the slice masks over the
 *   observable line bits. Same page, so the unobservable part of every hash
 *   is one constant: only observable bits vary.
 * - Congruence class of T among them: probe every point against the
 *   target's minimal eviction set (load, walk the set, reload: evicted =
 *   same set), positives confirmed by a second probe.
 * - Linear (power-of-two sets): the class is T xor K0, a subspace; sets per
 *   slice = 2^(dim K - dim K0); the set masks span the null space of K0
 *   minus the slice masks' span (any such basis gives the same partition of
 *   every slice, which is what Contract 1 compares). Under a table slice
 *   hash, one slice spans several slice cosets and the masks are right only
 *   up to slice masks: page sweeps (each eviction set in its own page, and
 *   in-page sets moved into other slices) give congruent pairs across
 *   cosets, and a vote per mask picks the slice-mask correction; not pinned
 *   = flagged.
 * - Not linear: set = value mod m, value = sum 2^i parity(addr & mask_i).
 *   K1 = the differences that keep every member of T's class in it (they
 *   flip no value bit); Q = K / K1 has dimension n (the value bits). Every
 *   point of Q is classified with eviction sets obtained by translating the
 *   target's (xor the offset difference; verified by an overflow test), so
 *   the whole partition of Q into m classes is measured. Then: a direction
 *   that flips one value bit moves every class by +-2^i, so it links each
 *   class to at most two others; the least significant one (+-1) strings all
 *   m classes into one cycle, which orders them as residues. The other
 *   directions' steps along that cycle (2^i mod m) give their bit i; the
 *   dual basis gives each value bit as a function of the point, a search
 *   over the constant part reproduces the measured partition exactly, and
 *   each bit becomes an address mask (lowest weight among the equivalent
 *   ones over the slice masks). Even m = 2^a * o: the low a bits are the
 *   functionals constant on every class; the rest is an odd-modulus fit.
 *   Noise: a robust stabilizer and a majority label per coset of it.
 * - Slice directions of the masks: measured in the coset T xor e (its xor on
 *   the packed bits), up to a bit permutation that keeps |2^i mod m|; lifts
 *   that fit alike are told apart by probing where they disagree (8 xors
 *   per direction, up to 256 lifts). A linear slice hash: the eviction set
 *   of T xor e is T's moved by e, or, when that does not evict (a modulo
 *   keeps a moved set only for lines with T's value bits), one reduced
 *   inside the coset (coset_evset); other frames that fit T's coset alike
 *   are lifted when the fitted one does not lift. Under a
 *   table slice hash the eviction sets of T xor e are reduced inside their
 *   slice (a moved set does not keep a modulo congruence), the lift is tried
 *   in every frame that fits T's coset alike (equal-step permutations, g x L
 *   functionals; at most 10 lifts), and kept only when a check ACROSS slice
 *   cosets of one slice passes; otherwise flagged (0.6). Lifts that fit
 *   every coset alike are told apart by probes across slice cosets
 *   (discriminate_table). T's page's unobservable slice part is pinned with
 *   the slices stage's predictor when the sweep leaves several.
 * - Table slice hash, XOR sets, vote not sure: E0 = W lines congruent with
 *   T in T's absolute slice coset (pages identified by the predictor); E0
 *   moved by d evicts T xor d, and lines of another coset of that slice
 *   probed against it give cross-coset congruences (cross_coset_pairs).
 * - Modulo, no fit after two measurements: the last one uses another of
 *   the ways stage's targets (T's class may be closed by chance).
 * - Verification: in up to 5 other cosets, 32 points predicted congruent
 *   with a target and 16 not, disagreements probed again.
 * - Cross-check: slices x sets x ways x line against the levels' capacity.
 * - No set function written (masks above the page: one page may hold lines
 *   of only some sets of a slice): the sets counted over the arena's pages
 *   (sets_pages.c) replace one page's class count when the census is
 *   complete; no masks then.
 * - Still no count (last): one slice's capacity (sets_capacity.c): its
 *   lines gathered by contention over the work area's first pages, chased
 *   in prefixes; the knee / the per-set reach, when sharp and agreeing.
 *
 * Notes: needs stage 4's eviction sets (same arena) and stage 5's slice hash.
 * Costs: one probe pass over 2^dim K points (linear); m probe passes over
 * 2^n points (modulo).
 *
 * Files (src/infer/stages/sets/): sets_probe.c (probes, overflow test,
 * GF(2) helpers), sets_class.c (setup, T's class), sets_linear.c (linear
 * masks, table-hash votes), sets_modulo.c (classes of Q, value-bit fits),
 * sets_frames.c (candidate functions, discrimination, page sweeps),
 * sets_lift.c (slice directions, lifts), sets_verify.c (verification, the
 * rows), sets_pages.c (the census over pages), sets_capacity.c (one
 * slice's capacity), sets_stage.c (this file: the linear and modulo paths, the stage);
 * sets_internal.h what they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* The points' basis cb (T xor span(cb)): K, or, with many free bits and a
 * class large enough to trust, K less z, the differences that keep T's
 * class whole. */
static void modulo_points(const sets_ctx *s, const uint64_t *ct, size_t nct, uint64_t *cb,
                          int *ck, uint64_t *z, int *nz)
{
    /* A small class can be closed by chance under a direction that flips
     * value bits (with a few dozen members over a few values, a direction
     * maps the class onto itself with a probability that is not small):
     * factored only when the points are too many otherwise (2^k above
     * 2^12, unless the class is too small to trust or k fits the
     * unfactored search) */
    if (s->k <= 12 || nct < 16 || (nct < 32 && s->k <= SETS_MAX_N)) {
        memcpy(cb, s->kb, (size_t)s->k * sizeof *cb);
        *ck = s->k;
    } else {
        gx_gf2_basis zb;
        sets_class_span(ct, nct, s->toff, &zb);
        for (int i = 0; i < zb.n; i++)
            z[(*nz)++] = zb.v[i];
        for (int i = 0; i < s->k; i++)
            if (gx_gf2_basis_add(&zb, s->kb[i]))
                cb[(*ck)++] = s->kb[i];
    }
}

/* The value bits' address masks: each functional a[i] over Q (beta its
 * constant on T) lifted to c-space (zero on K1), then to the lowest-weight
 * mask with those values on the points' differences (zero on z) and the
 * constant on T; alt[i] without the constant (*alt_ok: all found). T inside
 * the differences' span fixes its constant (*t_fixed: f->mask[i] = alt[i]).
 * 0: a functional does not lift to c-space. */
static int value_masks(const sets_ctx *s, mod_fit *f, const int *qidx, const uint64_t *k1c,
                       int nk1, const uint64_t *cb, int ck, const uint64_t *z, int nz,
                       const uint64_t *a, uint64_t beta, uint64_t *alt, int *alt_ok,
                       int *t_fixed)
{
    for (int i = 0; i < f->n; i++) {
        uint64_t rows[64], phi = 0, mu = 0, null[64];
        uint8_t y[64];
        size_t nr = 0;
        for (int j = 0; j < f->n; j++) {
            rows[nr] = (uint64_t)1 << qidx[j];
            y[nr++] = (uint8_t)((a[i] >> j) & 1);
        }
        for (int j = 0; j < nk1; j++) {
            rows[nr] = k1c[j];
            y[nr++] = 0;
        }
        uint64_t cspace = ck >= 64 ? ~0ull : (((uint64_t)1 << ck) - 1);
        if (!gx_gf2_solve(rows, y, nr, cspace, &phi, NULL, NULL))
            return 0;
        /* address mask: <mu, cb_j> = phi_j, <mu, z> = 0, <mu, T> = beta_i */
        nr = 0;
        for (int j = 0; j < ck; j++) {
            rows[nr] = cb[j];
            y[nr++] = (uint8_t)((phi >> j) & 1);
        }
        for (int j = 0; j < nz && nr < 62; j++) {
            rows[nr] = z[j];
            y[nr++] = 0;
        }
        int nn = 0;
        /* the lowest-weight mask with these values on the coset's
         * differences; its constant on T is checked below as a whole */
        if (gx_gf2_solve(rows, y, nr, s->space, &mu, null, &nn))
            alt[i] = sets_min_weight(mu, null, nn);
        else
            *alt_ok = 0;
        rows[nr] = s->toff & s->space;
        y[nr++] = (uint8_t)((beta >> i) & 1);
        if (!gx_gf2_solve(rows, y, nr, s->space, &mu, null, &nn)) {
            /* T inside the span of the coset's differences: its constant
             * is fixed by them; the masks without it are checked below */
            *t_fixed = 1;
            f->mask[i] = alt[i];
            continue;
        }
        f->mask[i] = sets_min_weight(mu, null, nn);
    }
    return 1;
}

/* No value fit: the class count alone, exact when the classes' sizes are
 * those of a value mod m (floor or ceil of 2^n / m cells each); before the
 * last measurement the caller measures again (*done = 0). */
static void write_unfitted(sets_ctx *s, const mod_fit *f, int ck, int last, int *done)
{
    char how[96];
    /* the count is exact when every point was classified right; the
     * function may use bits above the page, which no experiment in one
     * page can see. Residues of a value mod m are near uniform: a class
     * twice the size of another is two classes merged by a wrong probe */
    /* counts: over the 2^n cells of Q, n independent value bits give
     * every residue floor or ceil(2^n / m) cells; a stray, split or
     * merged class (misclassified points) breaks that */
    size_t np = (size_t)1 << f->n;
    uint32_t *cnt = calloc(f->m ? f->m : 1, sizeof *cnt);
    uint64_t lo_n = f->m ? np / f->m : 0, hi_n = f->m ? (np + f->m - 1) / f->m : 0;
    int exact = cnt != NULL && f->m > 0 && f->n >= 1;
    for (size_t c = 0; cnt && c < np; c++)
        cnt[f->lab[c]]++;
    /* a few misclassified cells may remain: allow 1/8 of a class */
    uint64_t tol = hi_n / 8 > 1 ? hi_n / 8 : 1;
    for (uint32_t r = 0; exact && r < f->m; r++)
        exact = cnt[r] + tol >= lo_n && cnt[r] <= hi_n + tol;
    free(cnt);
    if (!last) {
        /* no fit: a misclassified point or two break the exact
         * reproduction; the caller measures the partition again */
        *done = 0;
        if (exact)
            s->exact_m = f->m;
    } else {
        /* an earlier measurement with clean counts and the same m */
        exact = exact || (s->exact_m && s->exact_m == f->m);
        double csets = exact ? 0.95 : 0.5;
        snprintf(how, sizeof how, "%u classes over 2^%d points; no value-mod fit", f->m, ck);
        uint64_t none[1] = {0};
        sets_write_sets(s->ctx, s, f->m, none, 0, f->m, s->lo, s->hi, csets, 0.2, how);
    }
}

static int modulo_path(sets_ctx *s, const uint64_t *ct, size_t nct, double sets_est, int last,
                       int *done)
{
    *done = 1;
    gx_infer *ctx = s->ctx;
    /* points: T xor span(cb). Many free bits: first drop the differences
     * that keep T's (large) class whole (they flip no value bit; z), which
     * the final masks must annihilate too */
    uint64_t cb[64], z[64];
    int ck = 0, nz = 0;
    modulo_points(s, ct, nct, cb, &ck, z, &nz);
    if (ck > SETS_MAX_N)
        return gx_fail(ctx->msg, GX_ERANGE, "sets: 2^%d points in a slice: too many to classify",
                       ck);
    /* 1. the partition of all 2^ck points (c-space = coordinates over cb) */
    mod_fit full;
    memset(&full, 0, sizeof full);
    full.n = ck;
    memcpy(full.q, cb, (size_t)ck * sizeof *cb);
    full.lab = malloc(((size_t)1 << full.n) * sizeof *full.lab);
    if (!full.lab)
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    int rc = sets_classify_q(s, &full, ct, nct, sets_est);
    if (rc != GX_OK) {
        free(full.lab);
        return rc;
    }
    int sh = 0, nb = 0;
    if (sets_fit_contiguous(s, &full, &sh, &nb)) {
        uint64_t masks[64];
        for (int i = 0; i < nb; i++)
            masks[i] = (uint64_t)1 << (sh + i);
        char how[96];
        snprintf(how, sizeof how, "%u classes over 2^%d points = address bits %d..%d mod %u",
                 full.m, ck, sh, sh + nb - 1, full.m);
        sets_write_sets(ctx, s, full.m, masks, nb, full.m, s->lo, s->hi, 0.95, 0.95, how);
        free(full.lab);
        return GX_OK;
    }
    /* 2. K1 (flips no value bit) and Q: unit directions independent of it */
    uint64_t k1c[64];
    int nk1 = sets_partition_stabilizer(&full, k1c);
    mod_fit f;
    memset(&f, 0, sizeof f);
    f.m = full.m;
    int qidx[SETS_MAX_N];
    gx_gf2_basis b;
    gx_gf2_basis_from(&b, k1c, (size_t)nk1);
    for (int j = 0; j < ck; j++)
        if (gx_gf2_basis_add(&b, (uint64_t)1 << j))
            qidx[f.n++] = j;
    f.lab = malloc(((size_t)1 << f.n) * sizeof *f.lab);
    if (!f.lab) {
        free(full.lab);
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (uint64_t c = 0; c < ((uint64_t)1 << f.n); c++) {
        uint64_t cc = 0;
        for (int j = 0; j < f.n; j++)
            if (c >> j & 1)
                cc |= (uint64_t)1 << qidx[j];
        f.lab[c] = full.lab[cc];
    }
    /* 3. value bits as functionals over Q, then over c-space, then masks */
    uint64_t a[SETS_MAX_N], beta = 0, alt[SETS_MAX_N];
    int alt_ok = 1, t_fixed = 0;
    int fitted = f.n <= SETS_MAX_N && sets_fit_value_any(&f, a, &beta);
    if (fitted)
        fitted = value_masks(s, &f, qidx, k1c, nk1, cb, ck, z, nz, a, beta, alt, &alt_ok,
                             &t_fixed);
    if (fitted && t_fixed) {
        /* the fitted constant may need a symmetry of the partition: the
         * masks (or a step-keeping permutation of them) must reproduce T's
         * coset as they stand */
        int perm[SETS_MAX_N];
        uint8_t used[SETS_MAX_N] = {0};
        long budget = 2000;
        uint64_t res[SETS_MAX_N];
        fitted = alt_ok && sets_perm_search(s, &full, alt, f.n, f.m, perm, used, 0, res, &budget);
        if (fitted) {
            memcpy(alt, res, (size_t)f.n * sizeof *res);
            memcpy(f.mask, res, (size_t)f.n * sizeof *res);
        }
    }
    /* several constants reproduce the partition in T's coset; prefer the
     * lowest-weight masks when their own constant does too */
    if (fitted && alt_ok && sets_masks_reproduce(s, &full, alt, f.n, f.m))
        memcpy(f.mask, alt, (size_t)f.n * sizeof *alt);
    /* a table slice hash: T's page swept once (sets moved inside it) */
    int lifted = 0;
    if (fitted && s->ns > 0 && ctx->slices.hash.table && (rc = sets_table_page_sweep(s)) != GX_OK) {
        free(full.lab);
        free(f.lab);
        return rc;
    }
    /* the slice directions: measured, when the slice hash has any. The
     * fitted frame first, then the other frames that fit T's coset alike (a
     * frame that differs from the true one by a symmetry of T's coset
     * explains no other coset by an xor on its bits). A table slice hash
     * with congruent lines: the lift must also hold across slice cosets;
     * a linear one, or a table one without them, is lifted the same way
     * (sets_write_sets flags the unchecked table case below) */
    if (fitted && s->ns > 0) {
        int perm[SETS_MAX_N], tries = 0;
        uint8_t used[SETS_MAX_N] = {0};
        if (sets_lift_checked(s, &full, f.mask, f.n, f.m, alt) ||
            sets_lift_frames(s, &full, f.mask, f.n, f.m, perm, used, 0, &tries, alt) ||
            sets_lift_functionals(s, &full, f.mask, f.n, f.m, alt)) {
            memcpy(f.mask, alt, (size_t)f.n * sizeof *alt);
            lifted = 1;
        }
    }
    char how[96];
    if (fitted) {
        /* a table slice hash puts several slice cosets in one slice: their
         * relative labels count only when checked across cosets (at least
         * two targets, every one right); otherwise flagged */
        int cross_ok = lifted && ctx->slices.hash.table && s->cong;
        double ch = !ctx->slices.hash.table ? 0.95 : cross_ok ? 0.95 : 0.6;
        snprintf(how, sizeof how, "%u classes over 2^%d points, %d value bits mod %u%s", f.m, ck,
                 f.n, f.m,
                 !ctx->slices.hash.table ? "" : cross_ok ? " (table slices: cross-checked)"
                                                        : " (table slices: unchecked)");
        s->vote_sure = ctx->slices.hash.table && cross_ok;
        sets_write_sets(ctx, s, f.m, f.mask, f.n, f.m, s->lo, s->hi, 0.95, ch, how);
    } else {
        write_unfitted(s, &f, ck, last, done);
    }
    free(full.lab);
    free(f.lab);
    return GX_OK;
}

/* Use the ways stage's eviction set e (its target, in its own page) as T;
 * the state learned for the previous T's page is dropped. 1 when switched
 * (e = 0 always switches back to the first set). */
static int switch_target(sets_ctx *s, int e)
{
    gx_infer *ctx = s->ctx;
    if (e >= ctx->ways.n_evsets || e >= GX_INFER_MAX_EVSETS)
        return 0;
    const gx_evset *es = &ctx->ways.evsets[e];
    uint64_t toff = es->target % s->page, base = es->target - toff;
    if (!es->lines || es->n != s->w || base + s->page > gx_target_arena_bytes(ctx->t))
        return 0;
    s->es = es;
    s->toff = toff;
    s->base = base;
    free(s->cong);
    free(s->hs);
    s->cong = NULL;
    s->hs = NULL;
    s->ncong = 0;
    s->nh = 0;
    s->n_ec = 0;
    s->lift_tries = 0;
    s->bank_done = 0;
    s->bank_n = 0;
    return 1;
}

/* The in-page paths wrote no set function: the sets counted over the
 * arena's pages (sets_pages.c) replace the count of one page's classes,
 * a lower bound when the masks reach above the page. rc: the in-page
 * paths' result, kept unless the census establishes the count. */
static int cross_page_count(sets_ctx *s, const uint64_t *ct, size_t nct, int rc)
{
    gx_infer *ctx = s->ctx;
    gx_profile *p = ctx->out;
    if (rc == GX_ENOMEM || p->l2.set_hash.present || !ct)
        return rc;
    uint32_t m = 0, pages = 0;
    int complete = 0;
    if (sets_pages_census(s, ct, nct, &m, &complete, &pages) != GX_OK || !m)
        return rc;
    char how[96];
    if (!complete) {
        snprintf(how, sizeof how, "%u classes over %u pages: census not complete", m, pages);
        infer_report_row(ctx, "l2.sets_per_slice (pages)", "unknown", how, 0.5, 0);
        return rc;
    }
    if (p->l2.sets_per_slice && p->l2.sets_per_slice != m)
        p->l2.sets_per_slice = 0; /* one page's class count; the census counts more */
    snprintf(how, sizeof how,
             "%u classes over %u pages (bits above the page: one constant a page)", m, pages);
    uint64_t none[1] = {0};
    sets_write_sets(ctx, NULL, m, none, 0, 0, s->lo, s->hi, 0.95, 0.2, how);
    return p->l2.sets_per_slice == m ? GX_OK : rc;
}

int gx_stage_sets(gx_infer *ctx)
{
    sets_ctx s;
    int rc = sets_setup(&s, ctx);
    if (rc != GX_OK) {
        gx_evx_free(&s.ev);
        return rc;
    }
    double sets_est = 0;
    uint64_t cap = ctx->levels.l2_capacity;
    if (cap && ctx->slices.slices && ctx->ways.ways && s.line)
        sets_est = (double)cap / ((double)ctx->slices.slices * ctx->ways.ways * s.line);
    uint64_t *ct = NULL;
    size_t nct = 0;
    rc = sets_class_of_target(&s, sets_est, &ct, &nct);
    if (rc == GX_OK) {
        /* linear: the class is T xor a subspace. Its span counts only
         * differences that map most members onto members (translation
         * invariance): a stray false positive does not enter it */
        uint64_t d[64];
        gx_gf2_basis b;
        sets_class_span(ct, nct, s.toff, &b);
        if (b.n < 63 && nct > ((size_t)1 << b.n) &&
            nct - ((size_t)1 << b.n) <= 4 + ((size_t)1 << b.n) / 4) {
            /* a few strays: keep the members of T xor span(b) */
            size_t k2 = 0;
            for (size_t i = 0; i < nct; i++)
                if (gx_gf2_basis_contains(&b, ct[i] ^ s.toff))
                    ct[k2++] = ct[i];
            nct = k2;
        }
        if (b.n < 63 && nct < ((size_t)1 << b.n) && ((size_t)1 << b.n) - nct <= 256) {
            /* a few members of the span missing: probe them again (a
             * randomized policy lets a congruent line survive now and then) */
            rc = sets_repair_class(&s, &b, sets_est, &ct, &nct);
        }
        int linear = rc == GX_OK && b.n < 63 && nct == ((size_t)1 << b.n);
        for (size_t i = 0; linear && i < nct; i++)
            linear = gx_gf2_basis_contains(&b, ct[i] ^ s.toff);
        if (linear) {
            for (int i = 0; i < b.n; i++)
                d[i] = b.v[i];
            int rho0 = s.k - b.n;
            double sets_lin = (double)((uint64_t)1 << (rho0 > 0 ? rho0 : 0));
            if (sets_est > 0 && fabs(sets_lin - sets_est) > 0.2 * sets_est)
                linear = 0; /* a small class closed by chance (a modulo) */
            if (linear && (rc = sets_check_translations(&s, d, b.n, sets_est, &linear)) != GX_OK)
                linear = 0;
        }
        if (linear) {
            uint64_t masks[64];
            int nd = b.n, extra = 0, rho0 = s.k - b.n;
            double hconf = 0.99;
            sweep_diffs dl = {NULL, 0, 0};
            if (ctx->slices.hash.table) {
                if ((rc = sets_table_constraints(&s, &extra, &dl)) != GX_OK)
                    dl.n = 0;
                rc = GX_OK;
            }
            int spare = 0;
            int rho = sets_linear_masks(&s, d, nd, rho0, masks, &spare);
            if (ctx->slices.hash.table) {
                /* T's coset fixes the masks up to slice masks; the sweeps'
                 * cross-coset congruences fix the rest (by vote). Without
                 * enough of them the masks rest on the lowest-weight choice */
                int sure = 0;
                size_t ncross = 0;
                if (rho == rho0 && (rc = sets_vote_with_foreign_pages(&s, masks, rho, &dl, &sure,
                                                                      &ncross)) != GX_OK)
                    sure = 0;
                rc = GX_OK;
                hconf = sure ? 0.95 : 0.6;
                s.vote_sure = sure;
            }
            free(dl.v);
            char how[96];
            snprintf(how, sizeof how, "class of 2^%d in 2^%d points: XOR, %d bits%s", b.n, s.k,
                     rho0, ctx->slices.hash.table ? " (+ page sweep)" : "");
            if (rho0 > GX_MAX_MASKS || rho != rho0)
                sets_write_sets(ctx, &s, 1u << rho0, masks, 0, 0, s.lo, s.hi, 0.99, 0.2, how);
            else
                sets_write_sets(ctx, &s, 1u << rho0, masks, rho, 0, s.lo, s.hi, 0.99, hconf, how);
        } else {
            int done = 0;
            /* no fit: the partition is measured again (a misclassified
             * point breaks the exact reproduction); at most SETS_MEASURES
             * times */
            for (int attempt = 0; rc == GX_OK && !done && attempt < SETS_MEASURES; attempt++) {
                /* T's class too may hold a stray point: measured again;
                 * the first one serves when the new one cannot be used */
                uint64_t *ct2 = NULL;
                size_t nct2 = 0;
                /* the last measurement uses another target when the ways
                 * stage left one: T's class can be closed by chance under
                 * differences that flip value bits (its few values form an
                 * affine subspace), which breaks the factoring of the free
                 * bits and every fit for this T alone */
                int moved = attempt == SETS_MEASURES - 1 && switch_target(&s, 1);
                if (attempt > 0 && sets_class_of_target(&s, sets_est, &ct2, &nct2) != GX_OK) {
                    free(ct2);
                    ct2 = NULL;
                }
                if (moved && !ct2) {
                    switch_target(&s, 0);
                    moved = 0;
                }
                rc = ct2 ? modulo_path(&s, ct2, nct2, sets_est, attempt == SETS_MEASURES - 1, &done)
                         : modulo_path(&s, ct, nct, sets_est, attempt == SETS_MEASURES - 1, &done);
                if (rc != GX_OK && ct2) {
                    if (moved)
                        switch_target(&s, 0);
                    rc = modulo_path(&s, ct, nct, sets_est, attempt == SETS_MEASURES - 1, &done);
                }
                free(ct2);
            }
        }
    }
    if (ct)
        rc = cross_page_count(&s, ct, nct, rc);
    rc = sets_capacity(&s, rc);
    infer_progress(ctx, "sets: %u per slice (%llu probe calls)", ctx->sets.sets_per_slice,
                   (unsigned long long)s.probes);
    free(ct);
    free(s.cong);
    free(s.hs);
    gx_evx_free(&s.ev);
    return rc;
}
