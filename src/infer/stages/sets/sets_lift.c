/* sets_lift.c - the sets stage's lift of a modulo function fitted in T's
 * coset to the slice directions of its masks: per-direction candidates
 * measured in the cosets T xor e, lifts tried per frame that fits T's coset
 * alike, and, under a table slice hash, kept only when a check across slice
 * cosets of one slice passes (verify_cross_cosets). */
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* A table slice hash puts several slice cosets in one slice: check the
 * modulo function ACROSS them. Targets T xor d in other slices (sets moved
 * inside the page, verified by an overflow test), probed at lines of OTHER
 * slice cosets that lie in the target's slice under every possible h, half
 * of them predicted congruent. *tested = targets with at least 2 predicted
 * congruent points; *agree = 0 when one of them had more than one wrong
 * answer. */
static int verify_cross_cosets(sets_ctx *s, const uint64_t *masks, int n, uint32_t m,
                               int *tested, int *agree)
{
    *tested = 0;
    *agree = 1;
    if (!s->cong || s->nh == 0)
        return GX_OK;
    const uint32_t *tab = s->ctx->slices.hash.table;
    uint64_t set[GX_EVX_MAX_WAYS], pts[40];
    uint8_t ev[40], want[40];
    uint64_t nl = s->page / s->line;
    int rc = GX_OK;
    for (int t = 0; rc == GX_OK && t < 8 && *tested < 4 && *agree; t++) {
        uint64_t tt = gx_rng_below(&s->ctx->rng, nl) * s->line, tb = sets_slice_bits(s, tt);
        uint32_t nset = 0;
        if (tb == sets_slice_bits(s, s->toff) ||
            (rc = sets_slice_evset(s, tt, set, &nset)) != GX_OK || nset == 0)
            continue;
        uint32_t want_v = sets_mod_value(masks, n, tt, 0, m);
        size_t np = 0, nin = 0;
        uint64_t start = gx_rng_below(&s->ctx->rng, nl);
        for (uint64_t i = 0; i < nl && np < 40; i++) {
            uint64_t x = ((start + i) % nl) * s->line, sb = sets_slice_bits(s, x);
            if (x == tt || sb == tb)
                continue; /* other slice cosets only */
            int same_slice = 1;
            for (int j = 0; j < s->nh && same_slice; j++)
                same_slice = tab[sb ^ s->hs[j]] == tab[tb ^ s->hs[j]];
            if (!same_slice)
                continue;
            int same = sets_mod_value(masks, n, x, 0, m) == want_v, dup = 0;
            if ((same && nin >= 20) || (!same && np - nin >= 20))
                continue;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x;
            if (dup)
                continue;
            pts[np] = x;
            want[np++] = (uint8_t)same;
            nin += (size_t)same;
        }
        if (nin < 2)
            continue;
        int probed = 0;
        if ((rc = sets_probe_if_evset(s, tt, set, nset, pts, np, ev, &probed)) != GX_OK)
            break;
        if (!probed)
            continue;
        size_t bad = 0;
        for (size_t i = 0; i < np; i++)
            bad += ev[i] != want[i];
        (*tested)++;
        if (bad > 1)
            *agree = 0;
    }
    return rc;
}

/* A linear slice hash: an eviction set for tt reduced from the lines of
 * its own slice coset (tt xor span(K), one slice, same page). Used when
 * the target's set moved by tt ^ T does not evict tt: under a modulo set
 * index a moved set keeps the congruence only for lines whose value bits
 * equal T's (the ways stage's lines share T's residue, not its bits).
 * *nset = 0 when no verified set of W lines comes out. */
int sets_coset_evset(sets_ctx *s, uint64_t tt, uint64_t *set, uint32_t *nset)
{
    *nset = 0;
    size_t np = (size_t)1 << s->k, n = 0;
    if (s->cong || s->k < 1 || np <= s->w)
        return GX_OK;
    uint64_t *pool = malloc(np * sizeof *pool);
    if (!pool)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    for (size_t c = 1; c < np; c++)
        pool[n++] = s->base + (tt ^ sets_span_point(s->kb, s->k, c));
    gx_rng_shuffle_u64(&s->ctx->rng, pool, (uint64_t)n);
    gx_evx_result res;
    memset(&res, 0, sizeof res);
    int rc = gx_evx_find(&s->ev, s->base + tt, pool, n, &res);
    free(pool);
    if (rc == GX_EUNSURE)
        return GX_OK;
    if (rc != GX_OK)
        return rc;
    if (res.verified && res.n == s->w) {
        memcpy(set, res.lines, (size_t)res.n * sizeof *set);
        *nset = res.n;
    }
    return GX_OK;
}

/* An eviction set for tt = T ^ e (T moved along one slice direction e): the
 * ways stage's set moved by e, or (a table slice hash) a set reduced inside
 * tt's slice; for a linear slice hash whose moved set does not evict, one
 * reduced inside tt's slice coset. 1 when set[0..*nset) overflows with tt. */
static int direction_evset(sets_ctx *s, uint64_t e, uint64_t tt, uint64_t *set, uint32_t *nset)
{
    *nset = s->es->n;
    if (s->cong) { /* a table slice hash: a set reduced inside tt's slice */
        if (sets_slice_evset(s, tt, set, nset) != GX_OK)
            *nset = 0;
    } else
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ e;
    int ovf = 0;
    if (*nset == 0 || sets_set_overflows(s, tt, set, *nset, &ovf) != GX_OK)
        ovf = 0;
    if (!ovf && !s->cong && sets_coset_evset(s, tt, set, nset) == GX_OK && *nset > 0)
        ovf = 1; /* reduced and verified inside tt's slice coset */
    return ovf;
}

/* The deltas of direction e that predict the probes of tt's coset against
 * its eviction set set[0..nset): rounds of probes (after the first, mostly
 * points the leading survivor calls congruent) until one delta survives or
 * the survivors split the coset alike. cand[0..*nc) = the best-supported
 * survivors; bad[] (1 << n entries) is scratch. 1 when some survived. */
static int direction_candidates(sets_ctx *s, const uint64_t *fm, int n, uint32_t m, uint64_t e,
                                uint64_t tt, const uint64_t *set, uint32_t nset, uint16_t *bad,
                                uint64_t *cand, int *nc)
{
    uint64_t pts[48];
    uint8_t ev[48];
    size_t nd = (size_t)1 << n;
    memset(bad, 0, nd * sizeof *bad);
    uint64_t lead = 0;
    size_t total = 0;
    for (int round = 0; round < 8; round++) {
        size_t np = 0;
        for (int tries = 0; tries < 4000 && np < 32; tries++) {
            uint64_t x = tt ^ sets_span_point(s->kb, s->k,
                                              gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
            int dup = x == tt;
            for (uint32_t q = 0; q < nset && !dup; q++)
                dup = set[q] == s->base + x; /* a line of the set itself */
            if (dup)
                continue;
            /* after the first round: mostly points the leader calls congruent */
            if (round > 0 && tries < 3000 && np < 24 &&
                sets_mod_value(fm, n, x ^ e, lead, m) != sets_mod_value(fm, n, s->toff, lead, m))
                continue;
            pts[np++] = x;
        }
        if (sets_probe_offsets(s, set, nset, pts, np, s->cong ? 1 : 8, ev) != GX_OK)
            return 0;
        total += np;
        /* answers are noisy (a randomized policy spares a line now and
         * then): keep the deltas within a small error budget */
        size_t alive = 0, first = nd;
        uint16_t tol = (uint16_t)(2 + total / 16), best = UINT16_MAX;
        for (size_t d = 0; d < nd; d++) {
            if (bad[d] > tol)
                continue;
            uint32_t ref = sets_mod_value(fm, n, s->toff, d, m);
            for (size_t q = 0; q < np && bad[d] <= tol; q++)
                bad[d] += (uint16_t)((sets_mod_value(fm, n, pts[q] ^ e, d, m) == ref) != ev[q]);
            if (bad[d] <= tol) {
                alive++;
                if (bad[d] < best) {
                    best = bad[d];
                    first = d;
                }
            }
        }
        if (!alive)
            return 0;
        *nc = 0;
        for (size_t d = 0; d < nd && *nc < SETS_DIR_CANDS; d++)
            if (bad[d] == best) /* the best-supported ones only */
                cand[(*nc)++] = d;
        /* next round targets the survivors in turn */
        lead = *nc ? cand[(size_t)round % (size_t)*nc] : first;
        if (round >= 2 && alive == 1)
            break;
        /* several survivors may split the coset alike: stop when all agree */
        int same = 1;
        for (size_t d = 0; d < nd && same; d++) {
            if (bad[d] > tol || d == first)
                continue;
            /* compare over the whole coset (classes are small) */
            for (uint64_t q = 0; q < ((uint64_t)1 << s->k) && same; q++) {
                uint64_t x = tt ^ sets_span_point(s->kb, s->k, q);
                uint32_t r1 = sets_mod_value(fm, n, x ^ e, first, m);
                uint32_t r2 = sets_mod_value(fm, n, x ^ e, d, m);
                same = (r1 == sets_mod_value(fm, n, s->toff, first, m)) ==
                       (r2 == sets_mod_value(fm, n, s->toff, d, m));
            }
        }
        if (round >= 2 && same)
            break;
    }
    return 1;
}

/* The survivors of each direction split its coset alike; T's own coset
 * decides between them (the fitted constant there is one of several
 * equivalent ones): for each combination of survivors (at most 256), the
 * masks that are the fitted ones on K and delta_j on e_j, kept when a
 * permutation of them fits (sets_perm_search); several are discriminated
 * by probes. 1 with out[0..n) when one is picked. */
static int lift_pick(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                     const uint64_t *e, int ne, uint64_t cand[][SETS_DIR_CANDS], const int *nc,
                     uint64_t *out)
{
    uint64_t delta[64];
    long combos = 1;
    for (int j = 0; j < ne; j++)
        combos = combos * nc[j] > 256 ? 256 : combos * nc[j];
    int found = 0, nalt = 0, max_alts = s->cong ? SETS_TABLE_ALTS : SETS_MAX_ALTS;
    uint64_t alts[SETS_MAX_ALTS][SETS_MAX_N];
    for (long c = 0; c < combos && !found; c++) {
        long rest = c;
        for (int j = 0; j < ne; j++) {
            delta[j] = cand[j][rest % nc[j]];
            rest /= nc[j];
        }
        int solved = 1;
        for (int i = 0; solved && i < n; i++) {
            uint64_t rows[128];
            uint8_t y[128];
            size_t nr = 0;
            for (int q = 0; q < s->k; q++) {
                rows[nr] = s->kb[q];
                y[nr++] = (uint8_t)gx_gf2_dot(fm[i], s->kb[q]);
            }
            for (int j = 0; j < ne; j++) {
                rows[nr] = e[j];
                y[nr++] = (uint8_t)(delta[j] >> i & 1);
            }
            solved = gx_gf2_solve(rows, y, nr, s->space, &out[i], NULL, NULL);
        }
        if (solved) {
            int perm[SETS_MAX_N];
            uint8_t used[SETS_MAX_N] = {0};
            long budget = 2000;
            if (sets_perm_search(s, full, out, n, m, perm, used, 0, alts[nalt], &budget))
                nalt++;
        }
        found = nalt >= max_alts;
    }
    if (nalt == 0)
        return 0;
    int pick = 0;
    if (nalt > 1 && s->cong && sets_discriminate_table(s, alts, nalt, n, m, &pick) != GX_OK)
        return 0;
    if (nalt > 1 && !s->cong && sets_discriminate(s, alts, nalt, n, m, &pick) != GX_OK)
        return 0;
    if (pick < 0) /* the probes could not tell the alternatives apart */
        return 0;
    memcpy(out, alts[pick], (size_t)n * sizeof *out);
    return 1;
}

/* The masks fitted in T's coset say nothing about the slice directions
 * (a complement e_j of K): there each adds an unknown xor delta_j to the
 * packed bits. Measure it: target T^e_j with the eviction set moved by
 * e_j (verified), probe points of its coset, keep the deltas that predict
 * every answer (up to one), then probe points that the first survivor
 * calls congruent until one partition is left. delta_j = the packed bits
 * of e_j alone, so the new masks: the fitted ones on K, delta_j on e_j
 * (checked on T's coset by the caller). 1 when every direction resolved. */
static int lift_by_cosets(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                          uint64_t *out)
{
    uint64_t e[64], set[GX_EVX_MAX_WAYS], cand[64][SETS_DIR_CANDS];
    int nc[64] = {0};
    int ne = gx_gf2_complement_bits(s->kb, (size_t)s->k, s->space, e);
    size_t nd = (size_t)1 << n;
    uint16_t *bad = malloc(nd * sizeof *bad);
    if (!bad || ne > 24 || n > SETS_MAX_N)
        return free(bad), 0;
    int ok = 1;
    for (int j = 0; j < ne && ok; j++) {
        uint64_t tt = s->toff ^ e[j];
        uint32_t nset = 0;
        ok = direction_evset(s, e[j], tt, set, &nset) &&
             direction_candidates(s, fm, n, m, e[j], tt, set, nset, bad, cand[j], &nc[j]);
    }
    free(bad);
    return ok && lift_pick(s, full, fm, n, m, e, ne, cand, nc, out);
}

/* A table slice hash: lift in the frame pm, then check across slice
 * cosets (verify_cross_cosets: at least 3 targets, every one right). */
int sets_lift_checked(sets_ctx *s, const mod_fit *full, const uint64_t *pm, int n, uint32_t m,
                      uint64_t *out)
{
    int xt = 0, xagree = 0;
    if (s->lift_tries++ >= SETS_LIFT_TRIES || !lift_by_cosets(s, full, pm, n, m, out))
        return 0;
    if (!s->cong) /* a linear slice hash: sets_verify_function checks the result */
        return 1;
    if (verify_cross_cosets(s, out, n, m, &xt, &xagree) != GX_OK)
        return 0;

    return xt >= 3 && xagree;
}

/* A table slice hash: the lift reads other cosets in the fitted frame,
 * which may be the true one composed with a symmetry of T's coset (a
 * permutation of bits of equal step |2^i mod m|, with a constant). Try the
 * other frames (those that reproduce T's coset with some constant), at
 * most 24, until one lifts. */
int sets_lift_frames(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n, uint32_t m,
                     int *perm, uint8_t *used, int i, int *tries, uint64_t *out)
{
    if (*tries >= 24)
        return 0;
    if (i == n) {
        uint64_t pm[SETS_MAX_N];
        int ident = 1;
        for (int r = 0; r < n; r++) {
            pm[r] = fm[perm[r]];
            ident &= perm[r] == r;
        }
        if (ident)
            return 0; /* the fitted frame itself was tried */
        int rep = 0;
        for (uint64_t c = 0; c < ((uint64_t)1 << n) && !rep; c++)
            rep = sets_masks_reproduce_c(s, full, pm, n, m, c);
        if (!rep)
            return 0;
        (*tries)++;
        return sets_lift_checked(s, full, pm, n, m, out);
    }
    uint64_t ki = sets_bit_step(i, m);
    for (int j = 0; j < n; j++) {
        if (used[j] || sets_bit_step(j, m) != ki)
            continue;
        used[j] = 1;
        perm[i] = j;
        int r = sets_lift_frames(s, full, fm, n, m, perm, used, i + 1, tries, out);
        used[j] = 0;
        if (r)
            return 1;
    }
    return 0;
}

/* A table slice hash: the fitted masks may differ from the true ones, on
 * T's coset, by g * L (an xor pattern g on the value bits times a linear
 * functional L of the coset) that leaves T's partition as it is and shows
 * only in other cosets. Try such frames (at most 16) until one lifts. */
int sets_lift_functionals(sets_ctx *s, const mod_fit *full, const uint64_t *fm, int n,
                          uint32_t m, uint64_t *out)
{
    if (full->n > 12 || n > 8)
        return 0;
    int tries = 0;
    for (uint64_t L = 1; L < ((uint64_t)1 << full->n) && tries < 16; L++) {
        uint64_t l = 0, rows[64];
        uint8_t y[64];
        for (int j = 0; j < full->n; j++) {
            rows[j] = full->q[j];
            y[j] = (uint8_t)(L >> j & 1);
        }
        if (!gx_gf2_solve(rows, y, (size_t)full->n, s->space, &l, NULL, NULL))
            continue;
        for (uint64_t g = 1; g < ((uint64_t)1 << n) && tries < 16; g++) {
            uint64_t pm[SETS_MAX_N];
            for (int i = 0; i < n; i++)
                pm[i] = fm[i] ^ ((g >> i & 1) ? l : 0);
            int rep = 0;
            for (uint64_t c = 0; c < ((uint64_t)1 << n) && !rep; c++)
                rep = sets_masks_reproduce_c(s, full, pm, n, m, c);
            if (!rep)
                continue;
            tries++;
            if (sets_lift_checked(s, full, pm, n, m, out))
                return 1;
        }
    }
    return 0;
}
