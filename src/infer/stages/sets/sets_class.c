/* sets_class.c - the sets stage's setup and the target's congruence class:
 * the points T xor span(K) (K = the null space of the slice masks over the
 * observable line bits), T's class among them, its repair under noise, and
 * the check that translated eviction sets keep their class. */
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

int sets_setup(sets_ctx *s, gx_infer *ctx)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    const gx_ways_result *wr = &ctx->ways;
    if (!wr->ways || wr->n_evsets < 1 || wr->evsets_generation != ctx->arena.generation)
        return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the ways stage's eviction sets");
    if (!ctx->slices.slices)
        return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the slice count");
    s->es = &ctx->ways.evsets[0];
    s->w = ctx->ways.ways;
    s->line = infer_line_bytes(ctx);
    s->page = ctx->info->page_bytes;
    s->lo = gx_log2_u64(s->line);
    s->hi = gx_log2_u64(s->page) - 1;
    s->space = ((s->hi >= 63) ? ~0ull : (((uint64_t)1 << (s->hi + 1)) - 1)) &
               ~(((uint64_t)1 << s->lo) - 1);
    s->toff = s->es->target % s->page;
    s->base = s->es->target - s->toff;
    if (ctx->slices.slices > 1) {
        if (!ctx->slices.hash.present)
            return gx_fail(ctx->msg, GX_EUNSURE, "sets: needs the slice hash");
        for (int i = 0; i < ctx->slices.hash.n_masks; i++)
            s->smask[s->ns++] = ctx->slices.hash.masks[i] & s->space;
    }
    s->k = gx_gf2_annihilator(s->smask, (size_t)s->ns, s->space, s->kb);
    if (s->k > SETS_MAX_K)
        return gx_fail(ctx->msg, GX_ERANGE, "sets: %d free bits in a slice", s->k);
    return gx_evx_init(&s->ev, ctx, 0);
}

/* T's class among the 2^k points: sorted in-page offsets. */
int sets_class_of_target(sets_ctx *s, double sets_est, uint64_t **ct, size_t *nct)
{
    size_t np = (size_t)1 << s->k;
    uint64_t *offs = malloc(np * sizeof *offs);
    uint8_t *ev = malloc(np);
    *ct = NULL;
    *nct = 0;
    if (!offs || !ev) {
        free(offs);
        free(ev);
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    for (size_t c = 0; c < np; c++)
        offs[c] = s->toff ^ sets_span_point(s->kb, s->k, c);
    int rc = sets_probe_offsets(s, s->es->lines, s->es->n, offs + 1, np - 1,
                                sets_batch_for(s, sets_est), ev + 1);
    size_t n = 0;
    if (rc == GX_OK) {
        ev[0] = 1; /* the target itself */
        for (size_t c = 0; c < np; c++)
            if (ev[c])
                offs[n++] = offs[c];
        qsort(offs, n, sizeof *offs, gx_cmp_u64);
        *ct = offs;
        *nct = n;
    } else {
        free(offs);
    }
    free(ev);
    return rc;
}

/* Probe again the points of T xor span(b) that the first pass missed; add
 * those evicted now. */
int sets_repair_class(sets_ctx *s, const gx_gf2_basis *b, double sets_est, uint64_t **ct,
                      size_t *nct)
{
    size_t full = (size_t)1 << b->n, nm = 0;
    uint64_t *miss = malloc(full * sizeof *miss);
    uint64_t *grown = realloc(*ct, full * sizeof *grown);
    uint8_t *ev = malloc(full);
    if (!miss || !grown || !ev) {
        free(miss);
        free(ev);
        if (grown)
            *ct = grown;
        return gx_fail(s->ctx->msg, GX_ENOMEM, "sets: out of memory");
    }
    *ct = grown;
    for (size_t c = 0; c < full; c++) {
        uint64_t x = s->toff ^ sets_span_point(b->v, b->n, c);
        if (!sets_in_sorted(*ct, *nct, x))
            miss[nm++] = x;
    }
    int rc = sets_probe_offsets(s, s->es->lines, s->es->n, miss, nm, sets_batch_for(s, sets_est),
                                ev);
    size_t n = *nct;
    for (size_t i = 0; rc == GX_OK && i < nm; i++)
        if (ev[i])
            (*ct)[n++] = miss[i];
    qsort(*ct, n, sizeof **ct, gx_cmp_u64);
    *nct = n;
    free(miss);
    free(ev);
    return rc;
}

/* An XOR set index makes every class a translate of T's: check two. The
 * class of T^d (its eviction set = the target's moved by d) must be
 * exactly (T^d) xor span(k0) among 16 of its members and 16 others. */
int sets_check_translations(sets_ctx *s, const uint64_t *k0, int nk0, double sets_est,
                            int *ok)
{
    *ok = 1;
    gx_gf2_basis b0;
    gx_gf2_basis_from(&b0, k0, (size_t)nk0);
    uint64_t set[GX_EVX_MAX_WAYS], pts[32];
    uint8_t ev[32], want[32];
    for (int t = 0; t < 2 && *ok; t++) {
        uint64_t d = 0;
        for (int tries = 0; tries < 64 && (!d || gx_gf2_basis_contains(&b0, d)); tries++)
            d = sets_span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
        if (!d || gx_gf2_basis_contains(&b0, d))
            return GX_OK; /* one class only */
        for (uint32_t i = 0; i < s->es->n; i++)
            set[i] = s->es->lines[i] ^ d;
        /* distinct points only: a line probed twice reloads as a hit the
         * second time */
        size_t n = 0;
        for (int i = 0; i < 16; i++) {
            uint64_t in = sets_span_point(k0, nk0, gx_rng_below(&s->ctx->rng, (uint64_t)1 << nk0));
            uint64_t out =
                sets_span_point(s->kb, s->k, gx_rng_below(&s->ctx->rng, (uint64_t)1 << s->k));
            uint64_t cand[2] = {s->toff ^ d ^ in, s->toff ^ out};
            uint8_t wv[2] = {1, 0};
            for (int j = 0; j < 2; j++) {
                if (j == 1 && gx_gf2_basis_contains(&b0, out ^ d))
                    continue;
                int dup = 0;
                for (size_t q = 0; q < n && !dup; q++)
                    dup = pts[q] == cand[j];
                if (!dup) {
                    pts[n] = cand[j];
                    want[n++] = wv[j];
                }
            }
        }
        int rc = sets_probe_offsets(s, set, s->es->n, pts, n, sets_batch_for(s, sets_est), ev);
        if (rc != GX_OK)
            return rc;
        /* look again at the disagreeing ones (a randomized policy can spare
         * a congruent line once) */
        uint64_t again[32];
        uint8_t wa[32], ev2[32];
        size_t na = 0;
        for (size_t i = 0; i < n; i++)
            if (ev[i] != want[i]) {
                again[na] = pts[i];
                wa[na++] = want[i];
            }
        if (na > 4) {
            *ok = 0;
            break;
        }
        if (na && (rc = sets_probe_offsets(s, set, s->es->n, again, na,
                                           sets_batch_for(s, sets_est), ev2)) != GX_OK)
            return rc;
        size_t persist = 0;
        for (size_t i = 0; i < na; i++)
            persist += ev2[i] != wa[i];
        if (persist > 1) /* one answer may still be noise */
            *ok = 0;
    }
    return GX_OK;
}
