/* sets_frames.c - the sets stage's candidate modulo functions and how they
 * are told apart: the plain contiguous value, the partition's stabilizer,
 * masks that reproduce the measured partition (up to a bit permutation),
 * probes where candidate lifts disagree (in one coset, and across slice
 * cosets under a table slice hash), and the table hash's page sweeps. */
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* Plain modulo: value = address bits [sh, sh + nb) as an integer. Tried
 * first (real GPUs index this way; a value bit above the page only adds a
 * per-page constant, which keeps the partition). */
int sets_fit_contiguous(const sets_ctx *s, const mod_fit *full, int *sh_out, int *nb_out)
{
    size_t np = (size_t)1 << full->n;
    uint32_t m = full->m;
    int32_t *map = malloc(2 * (size_t)m * sizeof *map);
    if (!map)
        return 0;
    int found = 0;
    for (int sh = s->lo; sh <= s->hi && !found; sh++)
        for (int nb = 1; sh + nb - 1 <= s->hi && !found; nb++) {
            if (((uint64_t)1 << nb) < m)
                continue;
            int32_t *inv = map + m;
            for (uint32_t r = 0; r < m; r++)
                map[r] = inv[r] = -1;
            int ok = 1;
            for (size_t c = 0; c < np && ok; c++) {
                uint64_t x = s->toff ^ sets_span_point(full->q, full->n, c);
                int32_t g = (int32_t)(((x >> sh) & (((uint64_t)1 << nb) - 1)) % m);
                int32_t l = full->lab[c];
                if (map[l] < 0 && inv[g] < 0) {
                    map[l] = g;
                    inv[g] = l;
                } else if (map[l] != g || inv[g] != l) {
                    ok = 0;
                }
            }
            if (ok) {
                *sh_out = sh;
                *nb_out = nb;
                found = 1;
            }
        }
    free(map);
    return found;
}

/* The partition's stabilizer: differences c-space w with lab[c^w] ==
 * lab[c] for at least 90% of the cells (a few misclassified points must not
 * hide it; candidates: the members of the classes of cells 0 and 1). Then
 * every coset of it takes its majority label (repairing those points), and
 * the classes are renumbered (a stray class disappears). */
int sets_partition_stabilizer(mod_fit *f, uint64_t *out)
{
    size_t np = (size_t)1 << f->n;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (uint64_t w = 1; w < np; w++) {
        if ((f->lab[w] != f->lab[0] && f->lab[w ^ 1] != f->lab[1]) ||
            gx_gf2_basis_contains(&b, w))
            continue;
        size_t same = 0;
        for (size_t c = 0; c < np; c++)
            same += f->lab[c ^ w] == f->lab[c];
        if (same * 10 >= np * 9)
            gx_gf2_basis_add(&b, w);
    }
    for (int i = 0; i < b.n; i++)
        out[i] = b.v[i];
    size_t nc = (size_t)1 << b.n;
    int32_t *vote = malloc(nc * sizeof *vote), *map = malloc(f->m * sizeof *map);
    uint8_t *done = calloc(np, 1);
    if (b.n > 0 && vote && map && done) {
        for (size_t c = 0; c < np; c++) {
            if (done[c])
                continue;
            int32_t best = f->lab[c];
            size_t best_n = 0;
            for (size_t k = 0; k < nc; k++)
                vote[k] = f->lab[c ^ sets_span_point(out, b.n, k)];
            for (size_t k = 0; k < nc; k++) {
                size_t cnt = 0;
                for (size_t q = 0; q < nc; q++)
                    cnt += vote[q] == vote[k];
                if (cnt > best_n) {
                    best_n = cnt;
                    best = vote[k];
                }
            }
            for (size_t k = 0; k < nc; k++) {
                size_t x = c ^ sets_span_point(out, b.n, k);
                f->lab[x] = best;
                done[x] = 1;
            }
        }
        f->m = sets_renumber_labels(f->lab, np, map, f->m);
    }
    free(vote);
    free(map);
    free(done);
    return b.n;
}

/* Do address masks (value mod m) reproduce the measured partition of the
 * points T xor span(full->q)? */

int sets_masks_reproduce(const sets_ctx *s, const mod_fit *full, const uint64_t *masks, int n,
                         uint32_t m)
{
    return sets_masks_reproduce_c(s, full, masks, n, m, 0);
}

/* As sets_masks_reproduce, with c0 xored into the packed bits. */
int sets_masks_reproduce_c(const sets_ctx *s, const mod_fit *full, const uint64_t *masks,
                           int n, uint32_t m, uint64_t c0)
{
    size_t np = (size_t)1 << full->n;
    int32_t *map = malloc(2 * (size_t)(m > full->m ? m : full->m) * sizeof *map);
    if (!map || full->m != m)
        return free(map), 0;
    int32_t *inv = map + m;
    for (uint32_t r = 0; r < m; r++)
        map[r] = inv[r] = -1;
    int ok = 1;
    for (size_t c = 0; c < np && ok; c++) {
        uint64_t x = s->toff ^ sets_span_point(full->q, full->n, c);
        int32_t g = (int32_t)((gx_gf2_apply(masks, n, x) ^ c0) % m), l = full->lab[c];
        if (map[l] < 0 && inv[g] < 0) {
            map[l] = g;
            inv[g] = l;
        } else if (map[l] != g || inv[g] != l) {
            ok = 0;
        }
    }
    free(map);
    return ok;
}


/* The fitted frame may be the true one composed with a symmetry of the
 * partition that needs a constant (e.g. bits 1 and 3 mod 5 swapped and
 * complemented); the linear lift then needs the inverse bit permutation.
 * Search the permutations that keep each bit's step |2^i mod m| for one
 * whose masks reproduce T's coset. */
int sets_perm_search(const sets_ctx *s, const mod_fit *full, const uint64_t *out, int n,
                     uint32_t m, int *perm, uint8_t *used, int i, uint64_t *res, long *budget)
{
    if ((*budget)-- <= 0)
        return 0;
    if (i == n) {
        for (int r = 0; r < n; r++)
            res[r] = out[perm[r]];
        return sets_masks_reproduce(s, full, res, n, m);
    }
    uint64_t ki = sets_bit_step(i, m);
    for (int j = 0; j < n; j++) {
        if (used[j] || sets_bit_step(j, m) != ki)
            continue;
        used[j] = 1;
        perm[i] = j;
        if (sets_perm_search(s, full, out, n, m, perm, used, i + 1, res, budget))
            return 1;
        used[j] = 0;
    }
    return 0;
}

/* Value of masks (mod m) at x, after xoring delta into the packed bits. */
uint32_t sets_mod_value(const uint64_t *masks, int n, uint64_t x, uint64_t delta, uint32_t m)
{
    return (uint32_t)((gx_gf2_apply(masks, n, x) ^ delta) % m);
}

/* Several lifts fit every measured coset alike: probe, in random slice
 * cosets, the points on which they disagree (congruent with the coset's
 * target or not), and keep the one with the fewest wrong predictions.
 * *pick = -1 when none stays within 2 + 1/32 of them wrong. */
int sets_discriminate(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n, uint32_t m,
                      int *pick)
{
    uint64_t set[GX_EVX_MAX_WAYS], pts[32];
    uint8_t ev[32];
    int errs[SETS_MAX_ALTS] = {0}, seen[SETS_MAX_ALTS] = {0};
    gx_gf2_basis kb;
    gx_gf2_basis_from(&kb, s->kb, (size_t)s->k);
    for (int t = 0; t < 12; t++) {
        uint64_t d = gx_rng_below(&s->ctx->rng, s->page / s->line) * s->line;
        if (gx_gf2_basis_contains(&kb, d & s->space))
            continue;
        uint64_t tt = s->toff ^ d;
        size_t np = 0;
        for (uint64_t q = 0; q < ((uint64_t)1 << s->k) && np < 32; q++) {
            uint64_t x = tt ^ sets_span_point(s->kb, s->k, q);
            int any = 0, all = 1;
            for (int a = 0; a < na; a++) {
                int c = sets_mod_value(alts[a], n, x, 0, m) == sets_mod_value(alts[a], n, tt, 0, m);
                any |= c;
                all &= c;
            }
            if (x != tt && any && !all)
                pts[np++] = x;
        }
        if (!np)
            continue;
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        int ovf = 0, rc;
        if ((rc = sets_set_overflows(s, tt, set, s->es->n, &ovf)) != GX_OK)
            return rc;
        uint32_t nset = s->es->n;
        if (!ovf && (rc = sets_coset_evset(s, tt, set, &nset)) != GX_OK)
            return rc;
        if (!ovf && nset > 0) { /* reduced inside tt's coset (its lines are no points) */
            size_t k2 = 0;
            for (size_t q = 0; q < np; q++) {
                int dup = 0;
                for (uint32_t i = 0; i < nset && !dup; i++)
                    dup = set[i] == s->base + pts[q];
                if (!dup)
                    pts[k2++] = pts[q];
            }
            np = k2;
            ovf = np > 0;
        }
        if (!ovf)
            continue;
        if ((rc = sets_probe_offsets(s, set, nset, pts, np, 8, ev)) != GX_OK)
            return rc;
        for (int a = 0; a < na; a++)
            for (size_t q = 0; q < np; q++) {
                seen[a]++;
                errs[a] += (sets_mod_value(alts[a], n, pts[q], 0, m) ==
                            sets_mod_value(alts[a], n, tt, 0, m)) != ev[q];
            }
    }
    *pick = -1;
    /* the points are where the lifts disagree, so a wrong lift errs on
     * many of them; but a lift off by a slice mask errs only in the slices
     * where that mask's parity is odd, and only on the points those slices
     * contribute (about a tenth of them): a proportional 10% allowance
     * would keep it, so the allowance is 2 + 1/32 of the points seen */
    for (int a = 0; a < na; a++)
        if (errs[a] <= 2 + seen[a] / 32 && (*pick < 0 || errs[a] < errs[*pick]))
            *pick = a;
    return GX_OK;
}



/* sets_discriminate under a table slice hash: a set moved by d leaves its slice,
 * so the lifts are told apart ACROSS slice cosets instead: targets in other
 * slices (sets reduced inside their slice, verified), each probed one line
 * at a time at up to 40 lines of other slice cosets of its slice. The lift
 * with the fewest wrong predictions is kept (*pick = -1 when none stays
 * within 2 + 1.25% errors: a lift that is wrong only for some slice
 * directions errs only on the lines whose slice coset flips those
 * directions, a few percent of the lines probed in one page). */
int sets_discriminate_table(sets_ctx *s, uint64_t (*alts)[SETS_MAX_N], int na, int n,
                            uint32_t m, int *pick)
{
    const uint32_t *tab = s->ctx->slices.hash.table;
    uint64_t set[GX_EVX_MAX_WAYS], pts[40];
    uint8_t ev[40];
    int errs[SETS_MAX_ALTS] = {0}, seen = 0, rc = GX_OK;
    uint64_t nl = s->page / s->line;
    *pick = -1;
    for (int t = 0; rc == GX_OK && !s->bank_done && t < 12 && s->bank_n < 4; t++) {
        uint64_t tt = gx_rng_below(&s->ctx->rng, nl) * s->line, tb = sets_slice_bits(s, tt);
        uint32_t nset = 0;
        if (tb == sets_slice_bits(s, s->toff) ||
            (rc = sets_slice_evset(s, tt, set, &nset)) != GX_OK || nset == 0)
            continue;
        size_t np = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 40; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = sets_slice_bits(s, x);
            if (x == tt || sb == tb)
                continue;
            int same_slice = 1, dup = 0;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            for (uint32_t q = 0; q < nset && !dup && same_slice; q++)
                dup = set[q] == s->base + x;
            if (same_slice && !dup)
                pts[np++] = x;
        }
        int probed = 0;
        if (np < 8)
            continue;
        if ((rc = sets_probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK)
            break;
        if (!probed)
            continue;
        s->bank_tt[s->bank_n] = tt;
        s->bank_np[s->bank_n] = np;
        memcpy(s->bank_x[s->bank_n], pts, np * sizeof *pts);
        memcpy(s->bank_ev[s->bank_n++], ev, np);
    }
    s->bank_done = 1;
    int targets = s->bank_n;
    for (int b = 0; b < s->bank_n; b++) {
        seen += (int)s->bank_np[b];
        for (int a = 0; a < na; a++) {
            uint32_t ref = sets_mod_value(alts[a], n, s->bank_tt[b], 0, m);
            for (size_t q = 0; q < s->bank_np[b]; q++)
                errs[a] += (sets_mod_value(alts[a], n, s->bank_x[b][q], 0, m) == ref) !=
                           s->bank_ev[b][q];
        }
    }
    /* the random points are mostly not congruent under any lift (a random
     * point is congruent with probability 1/m), so several lifts, most of
     * them wrong, can score without an error: each bank target is also
     * probed at points of other cosets of its slice on which these lifts
     * disagree */
    for (int b = 0; rc == GX_OK && na > 1 && b < s->bank_n; b++) {
        uint64_t tt = s->bank_tt[b], tb = sets_slice_bits(s, tt);
        uint32_t nset = 0;
        if ((rc = sets_slice_evset(s, tt, set, &nset)) != GX_OK || nset == 0)
            continue;
        size_t np = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 24; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = sets_slice_bits(s, x);
            if (x == tt || sb == tb)
                continue;
            int same_slice = 1, dup = 0, any = 0, all = 1;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            for (int a = 0; a < na && same_slice && (all || !any); a++) {
                int c = sets_mod_value(alts[a], n, x, 0, m) == sets_mod_value(alts[a], n, tt, 0, m);
                any |= c;
                all &= c;
            }
            if (!same_slice || !any || all)
                continue;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x;
            for (size_t q = 0; q < s->bank_np[b] && !dup; q++)
                dup = s->bank_x[b][q] == x;
            if (!dup)
                pts[np++] = x;
        }
        int probed = 0;
        if (!np || (rc = sets_probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK ||
            !probed)
            continue;
        seen += (int)np;
        for (int a = 0; a < na; a++) {
            uint32_t ref = sets_mod_value(alts[a], n, tt, 0, m);
            for (size_t q = 0; q < np; q++)
                errs[a] += (sets_mod_value(alts[a], n, pts[q], 0, m) == ref) != ev[q];
        }
    }
    if (!targets)
        return rc;
    for (int a = 0; a < na; a++)
        if (errs[a] <= 2 + seen / 80 && (*pick < 0 || errs[a] < errs[*pick]))
            *pick = a;
    return rc;
}

/* A table slice hash, a modulo set index: an eviction set for the in-page
 * line tt, reduced from the page's lines that lie in tt's slice under every
 * possible h (a moved set does not keep a modulo congruence). *nset = 0
 * when no verified set came out. */
int sets_slice_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset)
{
    *nset = 0;
    for (int i = 0; i < s->n_ec; i++)
        if (s->ec_t[i] == tt) {
            *nset = s->ec_n[i];
            memcpy(set, s->ec_set[i], (size_t)*nset * sizeof *set);
            return GX_OK;
        }
    const uint32_t *tab = s->ctx->slices.hash.table;
    uint64_t nl = s->page / s->line, tb = sets_slice_bits(s, tt);
    uint64_t *pool = malloc((size_t)nl * sizeof *pool);
    if (!pool)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    size_t np = 0;
    for (uint64_t i = 0; i < nl && s->nh > 0; i++) {
        uint64_t x = i * s->line, sb = sets_slice_bits(s, x);
        int same = x != tt;
        for (int j = 0; j < s->nh && same; j++)
            same = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
        if (same)
            pool[np++] = s->base + x;
    }
    gx_rng_shuffle_u64(&s->ctx->rng, pool, (uint64_t)np);
    gx_evx_result res;
    memset(&res, 0, sizeof res);
    int rc = np > s->w ? gx_evx_find(&s->ev, s->base + tt, pool, np, &res) : GX_EUNSURE;
    free(pool);
    if (rc == GX_EUNSURE)
        return GX_OK;
    if (rc != GX_OK)
        return rc;
    if (res.verified && res.n == s->w) {
        memcpy(set, res.lines, (size_t)res.n * sizeof *set);
        *nset = res.n;
    }
    if (s->n_ec < SETS_EC_MAX) { /* failures too: not tried again */
        s->ec_t[s->n_ec] = tt;
        s->ec_n[s->n_ec] = *nset;
        memcpy(s->ec_set[s->n_ec++], set, (size_t)*nset * sizeof *set);
    }
    return GX_OK;
}

/* Several unobservable slice parts h fit the lines of T's page congruent
 * with T (s->hs): then few lines lie in one slice under every one of them.
 * The slices stage's predictor identifies the page (its XOR constant z is
 * h in the slice hash's frame, checked on T): when z is one of s->hs, it
 * is the only one kept. */
static void pin_page_h(sets_ctx *s)
{
    gx_infer *ctx = s->ctx;
    const uint32_t *tab = ctx->slices.hash.table;
    const gx_slicepred *sp = infer_slice_pred(ctx);
    if (s->nh <= 1 || !sp || !tab)
        return;
    gx_slicepred_page pg;
    if (!sets_identify_target_page(s, &pg) || pg.z >> s->ns)
        return;
    uint64_t a0 = sets_slice_bits(s, s->toff) ^ pg.z;
    if (gx_slicepred_predict(sp, &pg, s->base + s->toff) != (int)tab[a0])
        return;
    for (int j = 0; j < s->nh; j++)
        if (s->hs[j] == pg.z) {
            s->hs[0] = s->hs[j];
            s->nh = 1;
            return;
        }
}

/* A table slice hash: sweep T's page against T's eviction set once, which
 * gives the lines of the page congruent with T and the page's possible
 * unobservable slice parts (s->cong, s->hs: for sets_moved_set). */
int sets_table_page_sweep(sets_ctx *s)
{
    if (s->cong || !s->ctx->slices.hash.table || s->ns > 14 ||
        s->page / s->line > ((uint64_t)1 << 16))
        return GX_OK;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    int extra = 0;
    sweep_diffs dl = {NULL, 0, 0};
    int rc = sets_sweep_target(s, s->toff, s->es->lines, &b, &extra, &dl);
    if (rc == GX_OK)
        rc = sets_table_page_info(s, dl.v, dl.n);
    free(dl.v);
    if (rc == GX_OK)
        pin_page_h(s);
    return rc;
}
