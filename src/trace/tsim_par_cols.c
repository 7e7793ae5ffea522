/* tsim_par_cols.c - the split trace simulator's column paths (tsimpar.h,
 * tsim_par.c): the reader's column batches handed to the workers. A
 * pipeline copies virtual addresses; otherwise the calling thread places
 * the frames of a chunk of one-sector entries (trace order), locates them
 * (gx_l2_locate_words: the words carry the set and the latency table's row
 * too, so a worker does not hash again) and routes each to its slice
 * group's worker; a split of two threads (split_cols) does all three in
 * one pass, at the share its balance sets.
 *
 * Models: the same as tsim.c, sector for sector (tsim_par.c's notes): the
 * frames placed in trace order by one memory system, each sector's L2
 * accesses in trace order in its group's worker. Measured:
 * docs/performance.md ("Splitting a run"). */
#include <stdlib.h>
#include <string.h>

#include "tsim_par_internal.h"

/* One-sector entries placed and located at a time (8 KiB of each column:
 * they stay in the host's L1 between the passes). */
#define ROUTE_CHUNK 512
/* The same for a split's pass that writes straight into the columns (16 KiB
 * of addresses) */
#define SPLIT_CHUNK 2048

/* One column entry the straight loops leave: a record off the L2, an SM
 * to fold, an access of several sectors. */
static void put_col_entry(gx_tsim *s, const gx_trace_cols *c, size_t i, size_t *jr)
{
    const uint8_t op = c->op[i];
    if (op > GX_TRACE_ATOMIC) {
        gx_tsim_other(s, &c->rec[(*jr)++]);
        return;
    }
    const uint32_t smc = s->sm_count;
    const uint32_t sm = c->sm[i] < smc ? c->sm[i] : c->sm[i] % smc;
    const uint64_t smask = s->par->sector_mask;
    if ((c->addr[i] & smask) + c->size[i] > smask + 1) {
        for (uint64_t q = 0; q <= c->rep[i]; q++) /* the entry and its folded repeats */
            gx_par_put_sectors(s, c->addr[i], c->size[i], op, sm, 0);
    } else {
        (void)gx_par_put_one(s, c->addr[i], sm, c->rep[i]);
    }
}

/* A pipeline's column batch: one-sector global entries copied straight
 * into the worker's columns (virtual addresses: the worker places and
 * locates), as many as the buffer takes at a time; the rest one by one. */
static void pipe_cols(gx_tsim *s, const gx_trace_cols *c)
{
    struct gx_tsim_par *e = s->par;
    const uint32_t smc = s->sm_count;
    const uint64_t smask = e->sector_mask, sec = smask + 1;
    const uint64_t *addr = c->addr;
    const uint32_t *csm = c->sm, *crep = c->rep;
    const uint16_t *size = c->size;
    const uint8_t *op = c->op;
    const size_t n = c->n;
    size_t i = 0, jr = 0;
    while (i < n) {
        par_cols *pc = &e->cur->cols[0];
        const uint32_t room = e->cols_cap - pc->n;
        if (!room) {
            (void)gx_par_next_batch(s);
            continue;
        }
        uint64_t *pa = pc->pa + pc->n;
        uint32_t *psm = pc->sm + pc->n, *prep = pc->rep + pc->n;
        uint32_t k = 0;
        while (i < n && k < room && op[i] <= GX_TRACE_ATOMIC && csm[i] < smc &&
               (addr[i] & smask) + size[i] <= sec) {
            pa[k] = addr[i];
            psm[k] = csm[i];
            prep[k] = crep[i];
            k++;
            i++;
        }
        pc->n += k;
        if (i < n && k < room)
            put_col_entry(s, c, i++, &jr);
    }
}

/* The places of va[0 .. k) into pa (frame_pa: in trace order). */
static void place_chunk(struct gx_tsim_par *e, const uint64_t *va, uint64_t *pa, size_t k)
{
    for (size_t q = 0; q < k; q++)
        pa[q] = frame_pa(e, va[q]);
}

/* One-sector global entries of a column batch placed, located and
 * routed a chunk at a time (each worker's columns with room for the whole
 * chunk); the rest one by one. One shard: every group is a worker's. */
static void route_cols(gx_tsim *s, const gx_trace_cols *c)
{
    struct gx_tsim_par *e = s->par;
    const uint32_t smc = s->sm_count, nw = e->nw;
    const uint64_t smask = e->sector_mask, sec = smask + 1;
    const uint64_t *addr = c->addr;
    const uint32_t *csm = c->sm, *crep = c->rep;
    const uint16_t *size = c->size;
    const uint8_t *op = c->op, *owner = e->owner;
    const size_t n = c->n;
    uint64_t pa[ROUTE_CHUNK], lw[ROUTE_CHUNK];
    size_t i = 0, jr = 0;
    while (i < n) {
        par_batch *b = e->cur;
        uint32_t room = ROUTE_CHUNK;
        for (uint32_t w = 0; w < nw; w++) {
            const uint32_t left = e->cols_cap - b->cols[w].n;
            room = left < room ? left : room;
        }
        if (!room) {
            (void)gx_par_next_batch(s);
            continue;
        }
        const uint64_t *const a = addr + i;
        const size_t lim = n - i < room ? n - i : room;
        size_t k = 0;
        while (k < lim && op[i + k] <= GX_TRACE_ATOMIC && csm[i + k] < smc &&
               (a[k] & smask) + size[i + k] <= sec)
            k++;
        place_chunk(e, a, pa, k);
        gx_l2_locate_words(e->l2, pa, csm + i, lw, k);
        uint64_t reps = 0;
        for (size_t q = 0; q < k; q++) {
            par_cols *pc = &b->cols[owner[gx_l2_word_slice(lw[q])]];
            const uint32_t at = pc->n++, r = crep[i + q];
            pc->pa[at] = pa[q];
            pc->lw[at] = lw[q];
            pc->sm[at] = csm[i + q];
            *reps_from(pc, at) = r;
            reps += r;
        }
        e->acc_index += k + reps;
        i += k;
        if (i < n && k < room)
            put_col_entry(s, c, i++, &jr);
    }
}

/* k (<= ROUTE_CHUNK) located entries (pa, lw; r: their repeats, NULL:
 * none) to their owners' columns c0 / c1 from places *n0 / *n1 on: each
 * written to both, counted in its owner's (owner[] is 0 or PAR_SELF, 1),
 * no branch; with the repeat columns (split_cols's one-pass path takes the
 * batches that need none). */
static void split_route(par_cols *c0, par_cols *c1, const uint64_t *pa, const uint64_t *lw,
                        const uint32_t *r, const uint8_t *owner, size_t k, uint32_t *n0p,
                        uint32_t *n1p)
{
    static const uint32_t zeros[ROUTE_CHUNK]; /* no repeats */
    uint32_t n0 = *n0p, n1 = *n1p;
    uint64_t *const p0 = c0->pa, *const p1 = c1->pa, *const w0 = c0->lw, *const w1 = c1->lw;
    uint32_t *const q0 = reps_from(c0, n0) - n0, *const q1 = reps_from(c1, n1) - n1;
    r = r ? r : zeros;
    for (size_t q = 0; q < k; q++) {
        const uint64_t x = lw[q], p = pa[q];
        const uint32_t o = owner[gx_l2_word_slice(x)];
        p0[n0] = p;
        w0[n0] = x;
        q0[n0] = r[q];
        p1[n1] = p;
        w1[n1] = x;
        q1[n1] = r[q];
        n0 += o ^ 1u;
        n1 += o;
    }
    *n0p = n0;
    *n1p = n1;
}

/* The repeats of k entries from place at on of pc: r[0 .. k), NULL: none
 * (written only once the column has a repeat column). */
static void split_reps(par_cols *pc, uint32_t at, const uint32_t *r, size_t k)
{
    if (r)
        memcpy(reps_from(pc, at), r, k * sizeof *r);
    else if (pc->has_rep)
        memset(pc->rep + at, 0, k * sizeof *pc->rep);
}

/* A split run's column batch that is one run (every entry global, within
 * one sector, of an SM below the model's: the decoder's counts say so, no
 * scan), a chunk at a time at the batch's level (tsim_par.c, "balance"):
 * below 0 placed into the worker's columns, the first loc_end of them
 * located too (the worker locates the rest); 0 placed and located into
 * them (gx_l2_locate_words_va); L >= 1 placed, located
 * and routed to each slice's owner, the calling thread's (PAR_SELF) among
 * them (gx_l2_locate_split, or with repeats split_route). The repeat
 * column only for batches with repeats. 0 (nothing done) for any other
 * batch: route_cols. */
static int split_cols(gx_tsim *s, const gx_trace_cols *c)
{
    struct gx_tsim_par *e = s->par;
    if (c->n_rec || c->n_wide || c->merge_bytes != s->sector_bytes || !c->sm_bound ||
        c->sm_bound > s->sm_count)
        return 0;
    const uint8_t *const owner = e->owner;
    const uint32_t *const crep = c->records == c->n ? NULL : c->rep;
    const size_t n = c->n;
    uint64_t pa[ROUTE_CHUNK], lw[ROUTE_CHUNK];
    size_t i = 0;
    while (i < n) {
        par_batch *b = e->cur;
        par_cols *c0 = &b->cols[0], *c1 = &b->cols[PAR_SELF];
        const uint32_t r0 = e->cols_cap - c0->n, r1 = e->cols_cap - c1->n;
        size_t k = r0 < r1 ? r0 : r1;
        if (!k) {
            (void)gx_par_next_batch(s);
            continue;
        }
        k = n - i < k ? n - i : k;
        uint32_t n0 = c0->n, n1 = c1->n;
        const uint64_t *const va = c->addr + i;
        const uint32_t *const sm = c->sm + i, *const r = crep ? crep + i : NULL;
        if (e->level < 1) { /* every entry the worker's */
            /* located up to loc_end (level 0: all), placed beyond it (the
             * worker locates them: their SMs) */
            const size_t kl = c0->loc_end <= n0 ? 0 : c0->loc_end - n0 < k ? c0->loc_end - n0 : k;
            gx_l2_locate_words_va(e->l2, va, c0->pa + n0, &e->fmemo, sm, c0->lw + n0, kl);
            for (size_t q = kl; q < k; q++)
                c0->pa[n0 + q] = frame_pa(e, va[q]);
            memcpy(c0->sm + n0 + kl, sm + kl, (k - kl) * sizeof *sm);
            split_reps(c0, n0, r, k);
            c0->n = n0 + (uint32_t)k;
        } else if (!r && !c0->has_rep && !c1->has_rep) { /* in one pass */
            k = k < SPLIT_CHUNK ? k : SPLIT_CHUNK;
            const size_t k1 = gx_l2_locate_split(e->l2, va, &e->fmemo, sm, owner, k, c0->pa + n0,
                                                 c1->pa + n1, e->cols_dist);
            c0->n = n0 + (uint32_t)(k - k1);
            c1->n = n1 + (uint32_t)k1;
        } else {
            k = k < ROUTE_CHUNK ? k : ROUTE_CHUNK;
            gx_l2_locate_words_va(e->l2, va, pa, &e->fmemo, sm, lw, k);
            split_route(c0, c1, pa, lw, r, owner, k, &n0, &n1);
            c0->n = n0;
            c1->n = n1;
        }
        i += k;
    }
    return 1;
}

/* A column batch (one shard: every access is this run's, so the batch's
 * counts are taken whole, as gx_tsim_run_cols does). */
void gx_tsim_par_run_cols(gx_tsim *s, const gx_trace_cols *c)
{
    struct gx_tsim_par *e = s->par;
    if (e->pipe)
        pipe_cols(s, c);
    else if (!e->split || !split_cols(s, c))
        route_cols(s, c);
    for (int k = 0; k < 3; k++)
        s->op_count[k] += c->ops[k];
    s->accesses += c->ops[0] + c->ops[1] + c->ops[2];
    s->bytes += c->bytes;
}