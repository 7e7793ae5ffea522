/* sets_verify.c - the sets stage's verification of a fitted set function
 * (points predicted congruent with a target and not, in other cosets,
 * disagreements probed again) and the rows it writes (l2.sets_per_slice,
 * l2.hash.set), cross-checked against the levels stage's capacity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sets_internal.h"

/* ---- stage ----------------------------------------------------------------------- */

/* Probe the points of a verification against set: the ones predicted
 * congruent a few per batch (they all go to one set: at most W/4 of them
 * at once, as sets_batch_for), the others 8 per batch. A disagreement is
 * probed again, alone, and stands only when it repeats (a randomized
 * policy spares a congruent line now and then). */
static int verify_probe(sets_ctx *s, const uint64_t *set, uint32_t nset, const uint64_t *pts,
                        const uint8_t *want, size_t n, uint8_t *ev)
{
    uint64_t grp[2][VERIFY_SAME + VERIFY_OTHER];
    size_t idx[2][VERIFY_SAME + VERIFY_OTHER], ng[2] = {0, 0};
    uint8_t e2[VERIFY_SAME + VERIFY_OTHER];
    for (size_t i = 0; i < n && i < VERIFY_SAME + VERIFY_OTHER; i++) {
        int g = want[i] ? 1 : 0;
        grp[g][ng[g]] = pts[i];
        idx[g][ng[g]++] = i;
    }
    size_t bsame = s->w / 4 < 1 ? 1 : s->w / 4 > 8 ? 8 : s->w / 4;
    for (int g = 0; g < 2; g++) {
        int rc = ng[g] ? sets_probe_offsets(s, set, nset, grp[g], ng[g], g ? bsame : 8, e2) : GX_OK;
        if (rc != GX_OK)
            return rc;
        for (size_t j = 0; j < ng[g]; j++)
            ev[idx[g][j]] = e2[j];
    }
    size_t na = 0;
    for (size_t i = 0; i < n && i < VERIFY_SAME + VERIFY_OTHER; i++)
        if (ev[i] != want[i]) {
            grp[0][na] = pts[i];
            idx[0][na++] = i;
        }
    if (!na || na > 4) /* many: the function is wrong here, no second look */
        return GX_OK;
    int rc = sets_probe_offsets(s, set, nset, grp[0], na, 1, e2);
    for (size_t j = 0; rc == GX_OK && j < na; j++)
        ev[idx[0][j]] = e2[j];
    return rc;
}

/* Check a set function where it was not fitted: targets in other slice
 * cosets of the page (T xor d, eviction set moved by d and verified), 40
 * points of each coset probed against it, predicted congruent iff the
 * function gives the target's index. *agree = 1 when every prediction held
 * (up to one noisy answer per coset); *tested = cosets tested (up to 5). */
static int sets_verify_function(sets_ctx *s, const gx_hash_fn *h, int *agree, int *tested)
{
    *agree = 1;
    *tested = 0;
    uint64_t set[GX_EVX_MAX_WAYS], pts[VERIFY_SAME + VERIFY_OTHER];
    uint8_t ev[VERIFY_SAME + VERIFY_OTHER], want[VERIFY_SAME + VERIFY_OTHER];
    size_t bad_all = 0;
    gx_gf2_basis kb;
    gx_gf2_basis_from(&kb, s->kb, (size_t)s->k);
    /* a table slice hash: only moves that keep the set in one slice */
    uint64_t *xs = NULL;
    size_t nxs = 0;
    int tab = s->ctx->slices.hash.table && s->ns <= 14 && s->cong;
    if (tab && sets_table_moves(s, &xs, &nxs) != GX_OK)
        return GX_ENOMEM;
    for (int t = 0; t < 16 && *tested < 5 && *agree; t++) {
        uint64_t d = gx_rng_below(&s->ctx->rng, s->page / s->line) * s->line;
        if (tab) {
            if ((size_t)t >= nxs || !gx_gf2_preimage(s->smask, s->ns, s->space, xs[t], &d))
                break;
            if (s->k > 0)
                d ^= sets_span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        }
        if (gx_gf2_basis_contains(&kb, d & s->space))
            continue; /* same coset as T: that is where the function came from */
        uint64_t tt = s->toff ^ d;
        uint32_t nset = s->es->n;
        if (tab)
            nset = sets_moved_set(s, xs[t], d, set);
        else
            for (uint32_t i = 0; i < s->es->n; i++)
                set[i] = s->es->lines[i] ^ d;
        int ovf = 0;
        int rc;
        if ((rc = sets_set_overflows(s, tt, set, nset, &ovf)) != GX_OK) {
            free(xs);
            return rc;
        }
        /* a modulo index keeps a moved set only when its lines share T's
         * value bits: reduce one inside tt's coset instead */
        if (!ovf && !tab && h->modulo && (rc = sets_coset_evset(s, tt, set, &nset)) != GX_OK) {
            free(xs);
            return rc;
        }
        if (!ovf && !tab && h->modulo && nset > 0)
            ovf = 1;
        if (!ovf)
            continue;
        uint64_t want_idx = gx_hash_eval(h, tt);
        size_t n = 0, nin = 0;
        /* up to 32 points predicted congruent and 16 others: a function
         * wrong on a few percent of the pairs (a value bit off by a slice
         * mask, which errs only in the slices where that mask's parity is
         * odd: a few percent of all pairs) shows only in the congruent
         * ones, of which a random draw gives 1/m.
         * The coset is walked in a random order (an odd stride) */
        uint64_t np_k = (uint64_t)1 << s->k, c0 = gx_rng_below(&s->ctx->rng, np_k);
        uint64_t stride = (gx_rng_below(&s->ctx->rng, np_k) | 1) & (np_k - 1);
        if (!stride)
            stride = 1;
        for (uint64_t i = 0; i < np_k && n < VERIFY_SAME + VERIFY_OTHER; i++) {
            uint64_t x = tt ^ sets_span_point(s->kb, s->k, (c0 + i * stride) & (np_k - 1));
            if (x == tt)
                continue;
            int same = gx_hash_eval(h, x) == want_idx;
            if ((same && nin >= VERIFY_SAME) || (!same && n - nin >= VERIFY_OTHER))
                continue;
            int dup = 0;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x; /* a line of the set itself */
            if (dup)
                continue;
            pts[n] = x;
            want[n++] = (uint8_t)same;
            nin += (size_t)same;
        }
        if ((rc = verify_probe(s, set, nset, pts, want, n, ev)) != GX_OK) {
            free(xs);
            return rc;
        }
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += ev[i] != want[i];
        (*tested)++;
        bad_all += bad;
        if (bad > 1 || bad_all > 2) /* a few wrong pairs per coset add up */
            *agree = 0;
    }
    free(xs);
    return GX_OK;
}

void sets_write_sets(gx_infer *ctx, sets_ctx *vs, uint32_t sets, const uint64_t *masks,
                     int n, uint64_t modulo, int lo, int hi, double conf_sets, double conf_hash,
                     const char *how)
{
    gx_profile *p = ctx->out;
    char v[160], m[160];
    ctx->sets.sets_per_slice = sets;
    gx_hash_clear(&ctx->sets.hash);
    if (n > 0) {
        ctx->sets.hash.present = 1;
        ctx->sets.hash.n_masks = n;
        for (int i = 0; i < n; i++)
            ctx->sets.hash.masks[i] = masks[i];
        ctx->sets.hash.modulo = modulo;
        ctx->sets.hash.obs_lo = lo;
        ctx->sets.hash.obs_hi = hi;
    }
    if (n > 0 && vs) {
        int agree = 1, tested = 0;
        if (sets_verify_function(vs, &ctx->sets.hash, &agree, &tested) != GX_OK)
            agree = 0;
        if (!agree)
            conf_hash = fmin(conf_hash, 0.4);
        else if (tested == 0 && vs->k < __builtin_popcountll(vs->space) && !vs->vote_sure)
            conf_hash = fmin(conf_hash, 0.8); /* other cosets exist, none checked */
    }
    uint64_t geom = (uint64_t)ctx->slices.slices * sets * ctx->ways.ways * ctx->line.line_bytes;
    uint64_t cap = ctx->levels.l2_capacity;
    double rel = cap ? fabs((double)geom - (double)cap) / (double)cap : NAN;
    int agree = cap && rel <= SETS_CAP_TOL;
    if (cap && !agree) {
        conf_sets = fmin(conf_sets, 0.3);
        conf_hash = fmin(conf_hash, 0.3);
    }
    if (!cap) { /* nothing to cross-check against */
        conf_sets = fmin(conf_sets, 0.9);
        conf_hash = fmin(conf_hash, 0.9);
    }
    int in_sets = conf_sets >= 0.9, in_hash = n > 0 && conf_hash >= 0.9 && in_sets;
    if (in_sets) {
        p->l2.present = 1;
        p->l2.sets_per_slice = sets;
        gx_profile_set_confidence(p, "l2.sets_per_slice", conf_sets);
    }
    if (in_hash) {
        gx_hash_clear(&p->l2.set_hash);
        gx_hash_copy(&p->l2.set_hash, &ctx->sets.hash);
        gx_profile_set_confidence(p, "l2.hash.set", conf_hash);
    }
    if (in_sets) { /* this count decides: earlier methods' rows were tries */
        infer_report_supersede(ctx, "l2.sets_per_slice");
        infer_report_supersede(ctx, "l2.hash.set");
    }
    snprintf(v, sizeof v, "%u", sets);
    snprintf(m, sizeof m, "%s; x %u slices x %u ways x %u B = %llu B (levels %llu, %s)", how,
             ctx->slices.slices, ctx->ways.ways, ctx->line.line_bytes, (unsigned long long)geom,
             (unsigned long long)cap, !cap ? "unknown" : agree ? "agrees" : "DISAGREES");
    infer_report_row(ctx, "l2.sets_per_slice", v, m, conf_sets, in_sets);
    int k;
    if (n > 0) {
        k = snprintf(v, sizeof v, "%d masks%s:", n, modulo ? " + modulo" : "");
        for (int i = 0; i < n && k > 0 && (size_t)k < sizeof v - 12; i++)
            k += snprintf(v + k, sizeof v - (size_t)k, " 0x%llx", (unsigned long long)masks[i]);
        snprintf(m, sizeof m, "congruence classes within a slice, bits %d..%d", lo, hi);
    } else {
        snprintf(v, sizeof v, "unknown%s", modulo ? " (not XOR; mod sets_per_slice?)" : "");
        snprintf(m, sizeof m, "classes counted, no value-mod-m function over bits %d..%d fits",
                 lo, hi);
    }
    infer_report_row(ctx, "l2.hash.set", v, m, conf_hash, in_hash);
}
