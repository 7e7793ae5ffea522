/* sets_linear.c - the sets stage's linear (power-of-two) set index: the
 * set masks from the target's congruence class (a subspace K0 of the
 * slice-preserving differences K) and, under a table slice hash, the
 * slice-mask correction voted by page sweeps and cross-coset pairs.
 * Assumes the slices stage's hash (its masks, or its table and predictor). */
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

/* ---- linear ------------------------------------------------------------------------ */

/* Set masks for the class T xor span(k0): rho vectors of annihilator(k0)
 * independent of the slice masks, each of low weight. */
/* Up to `want` set masks: lowest-weight vectors of annihilator(k0)
 * independent of the slice masks. *spare = how many more independent
 * vectors the space holds (0: the choice was forced). */
int sets_linear_masks(const sets_ctx *s, const uint64_t *k0, int nk0, int want,
                      uint64_t *masks, int *spare)
{
    uint64_t ann[64];
    int na = gx_gf2_annihilator(k0, (size_t)nk0, s->space, ann);
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (int i = 0; i < s->ns; i++)
        gx_gf2_basis_add(&b, s->smask[i]);
    int base = b.n, rho = 0;
    gx_gf2_basis all = b;
    for (int i = 0; i < na; i++)
        gx_gf2_basis_add(&all, ann[i]);
    *spare = all.n - base - want;
    if (na <= 16) {
        for (int wt = 1; wt <= 64 && rho < want; wt++)
            for (uint64_t c = 1; c < ((uint64_t)1 << na) && rho < want; c++) {
                uint64_t x = sets_span_point(ann, na, c);
                if (__builtin_popcountll(x) == wt && gx_gf2_basis_add(&b, x))
                    masks[rho++] = x;
            }
        return rho;
    }
    for (int i = 0; i < na && rho < want; i++)
        if (gx_gf2_basis_add(&b, ann[i]))
            masks[rho++] = ann[i];
    return rho;
}


static int diffs_push(sweep_diffs *dl, uint64_t x)
{
    if (dl->n == dl->cap) {
        size_t nc = dl->cap ? 2 * dl->cap : 256;
        uint64_t *nv = realloc(dl->v, nc * sizeof *nv);
        if (!nv)
            return GX_ENOMEM;
        dl->v = nv;
        dl->cap = nc;
    }
    dl->v[dl->n++] = x;
    return GX_OK;
}

/* With a table slice hash, lines of one slice also sit in other cosets of
 * the slice bits, where a set mask plus a slice mask is no longer
 * equivalent to the mask alone: the set masks must be exact. Sweep the page
 * against eviction sets of several targets (T, then T xor d with the set
 * moved by d, each verified): every congruent line X of target Y gives a
 * difference X xor Y on which the true set masks vanish (kept in dl; the
 * span goes to b, *extra counts the new dimensions). */
static int sweep_target_n(sets_ctx *s, uint64_t toff, const uint64_t *set, uint32_t nset,
                          gx_gf2_basis *b, int *extra, sweep_diffs *dl)
{
    uint64_t lines_in_page = s->page / s->line;
    uint64_t *offs = calloc((size_t)lines_in_page, sizeof *offs);
    uint8_t *ev = malloc((size_t)lines_in_page);
    if (!offs || !ev) {
        free(offs);
        free(ev);
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    size_t n = 0;
    for (uint64_t i = 0; i < lines_in_page; i++) {
        uint64_t off = i * s->line;
        if (off != toff)
            offs[n++] = off;
    }
    /* lines of every slice: a set of the cache gets about batch / (slices
     * x sets) of them; positives once more, a few at a time */
    int rc = sets_probe_offsets(s, set, nset, offs, n, 512, ev);
    size_t np = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (ev[i])
            offs[np++] = offs[i];
    if (rc == GX_OK && np)
        rc = sets_probe_offsets(s, set, nset, offs, np, 4, ev);
    for (size_t i = 0; rc == GX_OK && i < np; i++) {
        if (!ev[i])
            continue;
        uint64_t dd = (offs[i] ^ toff) & s->space;
        if (gx_gf2_basis_add(b, dd))
            (*extra)++;
        if (diffs_push(dl, dd) != GX_OK)
            rc = gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    free(offs);
    free(ev);
    return rc;
}

/* Packed observable slice bits of an in-page offset. */
uint64_t sets_slice_bits(const sets_ctx *s, uint64_t off)
{
    return gx_gf2_apply(s->smask, s->ns, off & s->space);
}

/* Rank of the slice bits over the sweep differences (what they can pin). */
static int diffs_slice_rank(const sets_ctx *s, const sweep_diffs *dl)
{
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    for (size_t i = 0; i < dl->n && b.n < s->ns; i++)
        gx_gf2_basis_add(&b, sets_slice_bits(s, dl->v[i]));
    return b.n;
}

int sets_sweep_target(sets_ctx *s, uint64_t toff, const uint64_t *set, gx_gf2_basis *b,
                      int *extra, sweep_diffs *dl)
{
    return sweep_target_n(s, toff, set, s->es->n, b, extra, dl);
}

/* T's page sweep found the lines of T's page congruent with T (the first
 * n_first differences): they fix which unobservable parts h (an xor on the
 * packed slice bits) the page can have under the found table. */
int sets_table_page_info(sets_ctx *s, const uint64_t *v, size_t n_first)
{
    const uint32_t *tab = s->ctx->slices.hash.table;
    uint64_t nx = (uint64_t)1 << s->ns, tb = sets_slice_bits(s, s->toff);
    s->cong = malloc((n_first ? n_first : 1) * sizeof *s->cong);
    s->hs = malloc((size_t)nx * sizeof *s->hs);
    s->ncong = 0;
    s->nh = 0;
    if (!s->cong || !s->hs)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    if (n_first)
        memcpy(s->cong, v, n_first * sizeof *s->cong);
    s->ncong = n_first;
    s->nh = 0;
    for (uint64_t h = 0; h < nx; h++) {
        int one = 1;
        for (size_t i = 0; i < n_first && one; i++)
            one = tab[tb ^ sets_slice_bits(s, s->cong[i]) ^ h] == tab[tb ^ h];
        if (one)
            s->hs[s->nh++] = (uint16_t)h;
    }
    return GX_OK;
}

/* An eviction set for T xor d (slice bits x): the lines of T's page
 * congruent with T, moved by d, that stay in one slice under every possible
 * h (a move keeps the set index of a linear one). Returns how many (<= W). */
uint32_t sets_moved_set(const sets_ctx *s, uint64_t x, uint64_t d, uint64_t *set)
{
    const uint32_t *tab = s->ctx->slices.hash.table;
    uint64_t tb = sets_slice_bits(s, s->toff) ^ x;
    uint32_t n = 0;
    for (size_t i = 0; i < s->ncong && n < s->w; i++) {
        int keep = s->nh > 0;
        for (int j = 0; j < s->nh && keep; j++)
            keep = tab[tb ^ sets_slice_bits(s, s->cong[i]) ^ s->hs[j]] == tab[tb ^ s->hs[j]];
        if (keep)
            set[n++] = s->base + (s->toff ^ d ^ s->cong[i]);
    }
    return n;
}

/* The packed slice-bit moves x (shuffled; *xs owned by the caller) for
 * which sets_moved_set finds W lines. */
int sets_table_moves(sets_ctx *s, uint64_t **xs_out, size_t *n_out)
{
    uint64_t nx = (uint64_t)1 << s->ns;
    uint64_t *xs = malloc((size_t)nx * sizeof *xs), set[GX_EVX_MAX_WAYS];
    *xs_out = NULL;
    *n_out = 0;
    if (!xs)
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    size_t nxs = 0;
    for (uint64_t x = 1; x < nx && s->cong; x++)
        if (sets_moved_set(s, x, 0, set) == s->w)
            xs[nxs++] = x;
    gx_rng_shuffle_u64(&s->ctx->rng, xs, (uint64_t)nxs);
    *xs_out = xs;
    *n_out = nxs;
    return GX_OK;
}

/* Sweeps: every eviction set of the ways stage in its own page, then T's
 * set moved into other slices: by d whose slice bits keep every line of
 * the set in one slice under the found table (verified by an overflow
 * test). The differences must pin every slice direction, several times
 * each (a vote, see fix_table_masks). */
/* Moves inside the current page (s->base, s->toff, s->cong): sweeps for
 * targets T xor d in other slices, at most `most` of them. */
static int page_moves(sets_ctx *s, gx_gf2_basis *b, int *extra, sweep_diffs *dl, int most,
                      int *swept)
{
    uint64_t *xs = NULL, set[GX_EVX_MAX_WAYS];
    size_t nxs = 0;
    int rc = sets_table_moves(s, &xs, &nxs), done = 0;
    for (size_t t = 0; rc == GX_OK && t < nxs && t < 12 && done < most; t++) {
        uint64_t d = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, xs[t], &d))
            continue;
        if (s->k > 0)
            d ^= sets_span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        uint32_t nset = sets_moved_set(s, xs[t], d, set);
        int ovf = 0;
        if ((rc = sets_set_overflows(s, s->toff ^ d, set, nset, &ovf)) != GX_OK)
            break;
        if (!ovf)
            continue;
        rc = sweep_target_n(s, s->toff ^ d, set, nset, b, extra, dl);
        done++;
        (*swept)++;
    }
    free(xs);
    return rc;
}

/* Sweeps: every eviction set of the ways stage in its own page; in each
 * page, lines congruent with its target moved into other slices (see
 * sets_moved_set), until the differences pin every slice direction several
 * times (a vote, see fix_table_masks). Leaves s->cong / s->hs of T's page
 * (for sets_verify_function). */
int sets_table_constraints(sets_ctx *s, int *extra, sweep_diffs *dl)
{
    *extra = 0;
    if (s->page / s->line > ((uint64_t)1 << 16) || s->ns > 14 || !s->ctx->slices.hash.table)
        return GX_OK;
    gx_infer *ctx = s->ctx;
    gx_gf2_basis b;
    gx_gf2_basis_init(&b);
    int rc = GX_OK, swept = 0, pages = 0;
    int srank = gx_gf2_rank(s->smask, (size_t)s->ns);
    const gx_evset *es0 = s->es;
    uint64_t base0 = s->base, toff0 = s->toff;
    uint64_t *cong0 = NULL;
    uint16_t *hs0 = NULL;
    size_t ncong0 = 0;
    int nh0 = 0;
    uint64_t arena = gx_target_arena_bytes(ctx->t);
    for (int e = 0; rc == GX_OK && e < ctx->ways.n_evsets && e < GX_INFER_MAX_EVSETS && pages < 4;
         e++) {
        const gx_evset *es = &ctx->ways.evsets[e];
        uint64_t toff = es->target % s->page, base = es->target - toff;
        if (!es->lines || es->n != s->w || base + s->page > arena)
            continue;
        s->es = es;
        s->base = base;
        s->toff = toff;
        size_t n0 = dl->n;
        if ((rc = sets_sweep_target(s, toff, es->lines, &b, extra, dl)) != GX_OK)
            break;
        swept++;
        pages++;
        if ((rc = sets_table_page_info(s, dl->v + n0, dl->n - n0)) != GX_OK)
            break;
        int rank_ok = swept >= 6 && diffs_slice_rank(s, dl) >= srank;
        if (!rank_ok && (rc = page_moves(s, &b, extra, dl, 3, &swept)) != GX_OK)
            break;
        if (es == es0 && !cong0) { /* keep T's page */
            cong0 = s->cong;
            hs0 = s->hs;
            ncong0 = s->ncong;
            nh0 = s->nh;
        } else {
            free(s->cong);
            free(s->hs);
        }
        s->cong = NULL;
        s->hs = NULL;
    }
    free(s->cong);
    free(s->hs);
    s->es = es0;
    s->base = base0;
    s->toff = toff0;
    s->cong = cong0;
    s->hs = hs0;
    s->ncong = ncong0;
    s->nh = nh0;
    return rc;
}

/* The masks from T's coset are right up to slice masks: the true ones are
 * masks[r] xor sum_j c[r][j] smask[j]. Every swept difference D across
 * slice cosets gives one equation per mask, <c[r], S(D)> = <masks[r], D>.
 * A vote: per mask, the c that violates the fewest equations (a noisy
 * congruence breaks one). *sure = 0 when a runner-up comes within one
 * equation, when the best breaks too many, or when nothing crossed. */
static void fix_table_masks(const sets_ctx *s, uint64_t *masks, int rho, const sweep_diffs *dl,
                            int *sure, size_t *n_cross)
{
    *sure = 0;
    *n_cross = 0;
    if (s->ns > 14 || !dl->n)
        return;
    uint64_t *sd = malloc(dl->n * sizeof *sd);
    uint64_t *dv = malloc(dl->n * sizeof *dv);
    if (!sd || !dv) {
        free(sd);
        free(dv);
        return;
    }
    size_t nc = 0;
    for (size_t i = 0; i < dl->n; i++) {
        uint64_t x = gx_gf2_apply(s->smask, s->ns, dl->v[i]);
        if (x) {
            sd[nc] = x;
            dv[nc++] = dl->v[i];
        }
    }
    *n_cross = nc;
    int ok = nc >= (size_t)(2 * s->ns);
    uint64_t ncand = (uint64_t)1 << s->ns;
    for (int r = 0; ok && r < rho; r++) {
        size_t best = (size_t)-1, second = (size_t)-1;
        uint64_t bc = 0;
        for (uint64_t c = 0; c < ncand; c++) {
            size_t bad = 0;
            for (size_t i = 0; i < nc && bad <= second; i++)
                bad += (size_t)(gx_gf2_dot(c, sd[i]) != gx_gf2_dot(masks[r], dv[i]));
            if (bad < best) {
                second = best;
                best = bad;
                bc = c;
            } else if (bad < second) {
                second = bad;
            }
        }
        size_t tol = nc / 20 > 2 ? nc / 20 : 2;
        if (best > tol || second <= best + 1)
            ok = 0;
        for (int j = 0; j < s->ns; j++)
            if ((bc >> j) & 1)
                masks[r] ^= s->smask[j];
    }
    *sure = ok;
    free(sd);
    free(dv);
}

#define SETS_XPAGES 24    /* pages identified at most for E0 */
#define SETS_XPAIRS 32    /* slice-coset pairs probed at most */

/* The absolute slice coset of an in-page offset of an identified page (the
 * reference page's packed slice bits). */
static uint64_t abs_coset(const sets_ctx *s, const gx_slicepred_page *pg, uint64_t off)
{
    return sets_slice_bits(s, off) ^ pg->z;
}

/* E0: W lines congruent with T, all in T's absolute slice coset a0, from
 * several pages identified by the slices stage's predictor (each page's
 * unobservable slice part z is then known). Per page, the 2^k lines of
 * coset a0 are probed against T's eviction set. */
static int collect_e0(sets_ctx *s, const gx_slicepred_page *pgt, uint64_t *e0, uint32_t *n0)
{
    gx_infer *ctx = s->ctx;
    uint64_t arena = gx_target_arena_bytes(ctx->t), npages = arena / s->page;
    uint64_t a0 = abs_coset(s, pgt, s->toff), np = (uint64_t)1 << s->k;
    uint64_t *pages = malloc((size_t)npages * sizeof *pages);
    uint64_t *pts = malloc((size_t)np * sizeof *pts);
    uint8_t *ev = malloc((size_t)np);
    int rc = pages && pts && ev ? GX_OK : gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    *n0 = 0;
    for (uint64_t p = 0; rc == GX_OK && p < npages; p++)
        pages[p] = p;
    if (rc == GX_OK)
        gx_rng_shuffle_u64(&ctx->rng, pages, npages);
    const uint64_t nx = npages < SETS_XPAGES ? npages : SETS_XPAGES;
    for (uint64_t p = 0; rc == GX_OK && p < nx; p++)
        pages[p] *= s->page; /* the bases, in the order they are identified */
    infer_page_ids ids;
    memset(&ids, 0, sizeof ids);
    if (rc == GX_OK)
        rc = infer_page_ids_init(ctx, &ids, infer_slice_pred(ctx), pages, (size_t)nx);
    uint64_t base0 = s->base;
    for (uint64_t p = 0; rc == GX_OK && p < nx && *n0 < s->w; p++) {
        uint64_t pb = pages[p];
        const gx_slicepred_page *id = pgt;
        if (pb != s->base && infer_page_id(ctx, &ids, (size_t)p, &id) != GX_OK)
            id = NULL; /* not identified */
        if (!id || id->component != pgt->component)
            continue;
        gx_slicepred_page pg = *id;
        uint64_t d = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, a0 ^ pg.z, &d))
            continue;
        size_t n = 0;
        for (uint64_t c = 0; c < np; c++) {
            uint64_t x = d ^ sets_span_point(s->kb, s->k, c), a = pb + x;
            if (a == s->es->target)
                continue;
            int in_set = 0;
            for (uint32_t j = 0; j < s->es->n && !in_set; j++)
                in_set = s->es->lines[j] == a;
            if (in_set) {
                if (*n0 < s->w)
                    e0[(*n0)++] = a;
            } else {
                pts[n++] = x;
            }
        }
        s->base = pb;
        rc = sets_probe_offsets(s, s->es->lines, s->es->n, pts, n, sets_batch_for(s, (double)np),
                                ev);
        s->base = base0;
        for (size_t i = 0; rc == GX_OK && i < n && *n0 < s->w; i++)
            if (ev[i])
                e0[(*n0)++] = pb + pts[i];
    }
    s->base = base0;
    infer_page_ids_free(&ids);
    free(pages);
    free(pts);
    free(ev);
    return rc;
}


/* Identify the target's page with the slices stage's predictor, measuring
 * at most 1% of its lines (at least 16). 1: pg holds its component. */
int sets_identify_target_page(sets_ctx *s, gx_slicepred_page *pg)
{
    gx_slicepred *sp = infer_slice_pred(s->ctx);
    memset(pg, 0, sizeof *pg);
    return sp && infer_identify_pages(s->ctx, sp, &s->base, 1, pg) == GX_OK &&
           pg->component >= 0;
}

/* More congruences across slice cosets (a table slice hash, XOR sets):
 * with E0 (collect_e0), the set E0 xor d1 evicts T xor d1 (every line
 * moves to the absolute coset a0 xor S(d1), one slice, and the XOR set
 * index moves alike; checked by an overflow test). The lines of T's page
 * in ANOTHER absolute coset b of that slice are probed against it; each
 * congruent X gives a difference X xor (T xor d1) across cosets (slice
 * bits a0 ^ S(d1) ^ b), on which the true set masks vanish. Pairs are
 * chosen to reach new slice directions until the vote is sure. */
static int cross_coset_pairs(sets_ctx *s, uint64_t *masks, const uint64_t *m0, int rho,
                             sweep_diffs *dl, int *sure, size_t *n_cross)
{
    gx_infer *ctx = s->ctx;
    const uint32_t *tab = ctx->slices.hash.table;
    const gx_slicepred *sp = infer_slice_pred(ctx);
    if (!sp || !tab)
        return GX_OK;
    gx_slicepred_page pgt;
    if (!sets_identify_target_page(s, &pgt))
        return GX_OK;
    uint64_t a0 = abs_coset(s, &pgt, s->toff), nx = (uint64_t)1 << s->ns;
    if (gx_slicepred_predict(sp, &pgt, s->base + s->toff) != (int)tab[a0])
        return GX_OK; /* the predictor's frame is not the slice hash's */
    uint64_t e0[GX_EVX_MAX_WAYS], set[GX_EVX_MAX_WAYS];
    uint32_t n0 = 0;
    int rc = collect_e0(s, &pgt, e0, &n0), ovf = 0;
    if (rc != GX_OK || n0 < s->w)
        return rc;
    if ((rc = sets_set_overflows(s, s->toff, e0, n0, &ovf)) != GX_OK || !ovf)
        return rc;
    gx_gf2_basis got;
    gx_gf2_basis_init(&got);
    for (size_t i = 0; i < dl->n; i++)
        gx_gf2_basis_add(&got, sets_slice_bits(s, dl->v[i]));
    uint64_t np = (uint64_t)1 << s->k, cap = np < 128 ? np : 128;
    uint64_t *pts = malloc((size_t)cap * sizeof *pts);
    uint8_t *ev = malloc((size_t)cap);
    if (!pts || !ev) {
        free(pts);
        free(ev);
        return gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (int t = 0; rc == GX_OK && t < 4 * SETS_XPAIRS && t < 4096 && !*sure; t++) {
        uint64_t a = gx_rng_below(&ctx->rng, nx), b = a;
        if (a == a0)
            continue;
        /* another coset of a's slice, preferring a new direction */
        int fresh = 0;
        uint64_t st = gx_rng_below(&ctx->rng, nx);
        for (uint64_t i = 0; i < nx; i++) {
            uint64_t c = (st + i) % nx;
            if (c == a || tab[c] != tab[a])
                continue;
            int nw = !gx_gf2_basis_contains(&got, a ^ c);
            if (b == a || (nw && !fresh)) {
                b = c;
                fresh = nw;
            }
        }
        if (b == a || (!fresh && got.n < s->ns && t < 2 * SETS_XPAIRS))
            continue;
        uint64_t d1 = 0, d2 = 0;
        if (!gx_gf2_preimage(s->smask, s->ns, s->space, a ^ a0, &d1) ||
            !gx_gf2_preimage(s->smask, s->ns, s->space, b ^ pgt.z, &d2))
            continue;
        d1 ^= sets_span_point(s->kb, s->k, gx_rng_below(&ctx->rng, np));
        uint64_t y = s->toff ^ d1;
        for (uint32_t i = 0; i < n0; i++)
            set[i] = e0[i] ^ d1;
        if ((rc = sets_set_overflows(s, y, set, n0, &ovf)) != GX_OK)
            break;
        if (!ovf)
            continue;
        size_t n = 0;
        uint64_t c0 = gx_rng_below(&ctx->rng, np);
        for (uint64_t c = 0; c < np && n < cap; c++)
            pts[n++] = d2 ^ sets_span_point(s->kb, s->k, (c0 + c) % np);
        if ((rc = sets_probe_offsets(s, set, n0, pts, n, sets_batch_for(s, (double)np), ev)) !=
            GX_OK)
            break;
        for (size_t i = 0; i < n && rc == GX_OK; i++)
            if (ev[i] && diffs_push(dl, (pts[i] ^ y) & s->space) != GX_OK)
                rc = gx_fail(ctx->msg, GX_ENOMEM, "sets: out of memory");
        gx_gf2_basis_add(&got, a ^ b);
        memcpy(masks, m0, (size_t)rho * sizeof *masks);
        fix_table_masks(s, masks, rho, dl, sure, n_cross);
    }
    free(pts);
    free(ev);
    return rc;
}

/* The vote of fix_table_masks; when it is not sure (a slice direction not
 * pinned twice: few lines of a page congruent with T, e.g. many slices and
 * ways), more congruences across slice cosets (cross_coset_pairs). */
int sets_vote_with_foreign_pages(sets_ctx *s, uint64_t *masks, int rho, sweep_diffs *dl,
                                 int *sure, size_t *n_cross)
{
    uint64_t m0[64];
    memcpy(m0, masks, (size_t)rho * sizeof *m0);
    fix_table_masks(s, masks, rho, dl, sure, n_cross);
    if (*sure || s->ns > 14 || s->k > SETS_MAX_K)
        return GX_OK;
    int rc = cross_coset_pairs(s, masks, m0, rho, dl, sure, n_cross);
    if (!*sure) {
        memcpy(masks, m0, (size_t)rho * sizeof *masks);
        fix_table_masks(s, masks, rho, dl, sure, n_cross);
    }
    return rc;
}
