/* memsys.c - the memory system of a profile, assembled (see memsys.h): the
 * one place the model's parts are built and joined.
 *
 * Models: an access's VA goes through vmem (frame placement) to a PA whose
 * sectors go through the L2, which gets its DRAM latency from gx_dram.
 * With a tlb section, a warp instruction's requests first go through the
 * coalescer, the TLB levels and the walker (whose page-table reads go
 * through the same L2 and DRAM); see memsys.h for the timing.
 *
 * Notes: every part validates its own inputs when built; the profile was
 * validated before (gx_profile_validate). */
#include "gpuxray/memsys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/bits.h"
#include "gpuxray/dram.h"
#include "gpuxray/rng.h"
#include "memsys_internal.h"

/* Physical addresses gx_memsys_run_off computes at a time (32 KiB: stays in
 * the host's L1/L2 between the vmem pass and the L2's pass). */
#define MEMSYS_RUN_CHUNK 4096

/* The walker's page-table read: one L2 access of the block (a read). */
static double pt_read(void *ctx, uint64_t pa, uint32_t sm)
{
    gx_memsys *ms = ctx;
    gx_l2_result r;
    gx_l2_access(ms->l2, pa, sm, GX_L2_READ, &r);
    return r.latency_cycles;
}

static int build_translation(gx_memsys *ms, const gx_profile *p, uint64_t seed, gx_msg *msg)
{
    const gx_tlb_cfg *t = &p->tlb;
    if (t->n_levels < 1 || t->n_levels > GX_MAX_TLB_LEVELS)
        return gx_fail(msg, GX_ECONFIG, "tlb.levels: 1 to %d levels required", GX_MAX_TLB_LEVELS);
    ms->n_levels = t->n_levels;
    for (int j = 0; j < t->n_levels; j++) {
        const gx_tlb_level_cfg *l = &t->levels[j];
        if (!isfinite(l->hit_latency_cycles) || l->hit_latency_cycles < 0)
            return gx_fail(msg, GX_ECONFIG, "tlb.levels[%d].hit_latency_cycles: required (>= 0)",
                           j);
        int rc = gx_tlb_new(l, t, p->device.sm_count, gx_mix64(seed ^ (0x71b0u + (unsigned)j)),
                            &ms->tlb[j], msg);
        if (rc != GX_OK)
            return rc;
        ms->hit_lat[j] = l->hit_latency_cycles;
        ms->nb_levels |= (uint32_t)gx_tlb_takes_neighbours(ms->tlb[j]) << j;
        ms->copy_entry = p->tlb.hit_fills_entry > 0;
        snprintf(ms->level_name[j], sizeof ms->level_name[j], "%s",
                 l->name[0] ? l->name : "L?");
        if (gx_slots_init(&ms->slots[j], l->outstanding_misses))
            return gx_fail(msg, GX_ENOMEM, "memsys: out of memory");
    }
    ms->lean = 1;
    for (int j = 0; j < t->n_levels; j++)
        ms->lean &= gx_tlb_lean(ms->tlb[j]);
    int rc = gx_walker_new(t, ms->vm, p->l2.line_bytes, pt_read, ms, seed, &ms->walker, msg);
    if (rc == GX_OK)
        rc = gx_coalescer_new(t, p->device.sm_count, &ms->co, msg);
    ms->xlate = rc == GX_OK;
    return rc;
}

/* Shared memory, the part beside the global-memory path: a profile whose
 * smem section cannot run the bank model (null fields) leaves it out, with
 * the reason kept for the clients' output (not an error: global-memory
 * runs need no shared memory). */
static void open_smem(gx_memsys *ms, const gx_profile *p)
{
    gx_msg m;
    gx_msg_clear(&m);
    if (gx_smem_new_from_profile(p, &ms->smem, &m) != GX_OK) {
        ms->smem = NULL;
        snprintf(ms->smem_note, sizeof ms->smem_note, "%.200s", m.text);
    }
}

int gx_memsys_new(const gx_profile *p, const gx_memsys_cfg *cfg, gx_memsys **out, gx_msg *msg)
{
    *out = NULL;
    if (!gx_is_pow2_u64(p->memory.page_bytes))
        return gx_fail(msg, GX_ECONFIG,
                       "memory.page_bytes: %llu, a power of two is required by the model",
                       (unsigned long long)p->memory.page_bytes);
    if (!p->l2.present || !gx_is_pow2_u64(p->l2.sector_bytes))
        return gx_fail(msg, GX_ECONFIG, "l2.sector_bytes: a power of two is required by the model");
    gx_memsys *ms = calloc(1, sizeof *ms);
    if (!ms)
        return gx_fail(msg, GX_ENOMEM, "memsys: out of memory");
    ms->sector_shift = (uint32_t)__builtin_ctz(p->l2.sector_bytes);
    ms->frame_shift = (uint32_t)__builtin_ctzll(p->memory.page_bytes);
    ms->pa_buf = malloc(MEMSYS_RUN_CHUNK * sizeof *ms->pa_buf);
    ms->sm_buf = malloc(MEMSYS_RUN_CHUNK * sizeof *ms->sm_buf);
    ms->size_buf = malloc(MEMSYS_RUN_CHUNK * sizeof *ms->size_buf);
    gx_l2_opts lo = {cfg->noise, cfg->skew, cfg->seed};
    gx_vmem_cfg vc = {p->memory.page_bytes, cfg->phys_bytes, cfg->frames_seed, &p->tlb,
                      p->sim.present && p->sim.contiguous_frames == 1};
    int rc = ms->pa_buf && ms->sm_buf && ms->size_buf ? gx_dram_new(p, &ms->dram, msg)
                                      : gx_fail(msg, GX_ENOMEM, "memsys: out of memory");
    if (rc == GX_OK)
        rc = gx_l2_new(p, &lo, &ms->l2, msg);
    if (rc == GX_OK) {
        gx_l2_set_dram(ms->l2, ms->dram);
        rc = gx_vmem_new(&vc, &ms->vm, msg);
    }
    if (rc == GX_OK && p->tlb.present)
        rc = build_translation(ms, p, cfg->seed, msg);
    if (rc == GX_OK)
        open_smem(ms, p);
    if (rc != GX_OK) {
        gx_memsys_free(ms);
        return rc;
    }
    *out = ms;
    return GX_OK;
}

void gx_memsys_free(gx_memsys *ms)
{
    if (!ms)
        return;
    gx_l2_free(ms->l2);
    gx_dram_free(ms->dram);
    gx_vmem_free(ms->vm);
    for (int j = 0; j < GX_MAX_TLB_LEVELS; j++) {
        gx_tlb_free(ms->tlb[j]);
        gx_slots_free(&ms->slots[j]);
    }
    gx_walker_free(ms->walker);
    gx_coalescer_free(ms->co);
    gx_smem_free(ms->smem);
    free(ms->pa_buf);
    free(ms->sm_buf);
    free(ms->size_buf);
    free(ms);
}

gx_smem *gx_memsys_smem(gx_memsys *ms)
{
    return ms->smem;
}

const char *gx_memsys_smem_note(const gx_memsys *ms)
{
    return ms->smem_note;
}

gx_l2 *gx_memsys_l2(gx_memsys *ms)
{
    return ms->l2;
}

gx_vmem *gx_memsys_vmem(gx_memsys *ms)
{
    return ms->vm;
}

int gx_memsys_locate_ahead(gx_memsys *ms, uint64_t va, uint32_t sm, gx_l2_loc *loc)
{
    uint64_t pa;
    if (!gx_vmem_pa_known(ms->vm, va, &pa))
        return 0;
    gx_l2_locate(ms->l2, pa, loc);
    gx_l2_prefetch_loc(ms->l2, loc, sm);
    return 1;
}

/* The second and later sectors of an access that spans several (rare in
 * coalesced traces); returns the largest latency. */
static __attribute__((noinline)) double more_sectors(gx_memsys *ms, uint64_t va, uint32_t size,
                                                     uint32_t sm, gx_l2_op op, double lat,
                                                     uint64_t *sectors)
{
    const uint32_t sh = ms->sector_shift;
    uint64_t first = va >> sh, end = va + size - 1;
    uint64_t last = (end < va ? UINT64_MAX : end) >> sh;
    gx_l2_result r;
    for (uint64_t k = first + 1; k <= last && k; k++) {
        gx_l2_access(ms->l2, gx_vmem_pa(ms->vm, k << sh), sm, op, &r);
        lat = r.latency_cycles > lat ? r.latency_cycles : lat;
    }
    *sectors += last - first;
    return lat;
}

double gx_memsys_access_off(gx_memsys *ms, uint64_t va, uint32_t size, uint32_t sm,
                            gx_l2_op op, const gx_l2_loc *loc, uint64_t *sectors)
{
    gx_l2_result r;
    if (loc)
        gx_l2_access_loc(ms->l2, loc, sm, op, &r);
    else
        gx_l2_access(ms->l2, gx_vmem_pa(ms->vm, va), sm, op, &r);
    *sectors += 1;
    const uint64_t smask = ((uint64_t)1 << ms->sector_shift) - 1;
    if ((va & smask) + size > smask + 1)
        return more_sectors(ms, va, size, sm, op, r.latency_cycles, sectors);
    return r.latency_cycles;
}

/* Per chunk: VA -> PA, then the L2's batch run over the PAs (on the L2's
 * specialised path one pass does both: gx_l2_run_va). The translation
 * remembers the frames it met in a direct-mapped memo of
 * GX_FRAME_MEMO entries (a frame, once placed, never moves, and
 * gx_vmem_pa(va) is its base | the offset), so only a frame new to the memo
 * asks vmem; the memo lives for one call (the sim target's arena may
 * re-place frames between calls).
 * Measured (callgrind, the whole `gpuxray sim` process per access, 1 M
 * 4-byte reads, seed-ampere-6mb; random 64 MiB / stream / random 1 MiB):
 * the per-access loop through gx_memsys_access_off and the look-ahead
 * 402 / 368 / 367; this batch run with the frame memo and gx_l2_run's
 * repeats 286 / 127 / 244; with the trace decoded into columns and one
 * sector's repeats folded by the decoder (gx_trace_cols) 303 / 87 / 264
 * (the fold's test and the repeat column cost the random trace ~30). */

/* The frame memo's miss (gx_frame_memo, l2.h): va's frame from vmem. */
static void memo_fill(gx_frame_memo *m, uint64_t va)
{
    const uint64_t vfn = va >> m->shift, off_mask = ((uint64_t)1 << m->shift) - 1;
    m->tag[vfn & (GX_FRAME_MEMO - 1)] = vfn;
    m->delta[vfn & (GX_FRAME_MEMO - 1)] = (gx_vmem_pa(m->ctx, va) & ~off_mask) - (va & ~off_mask);
}

/* The frame memo of one batch call, empty. */
static void memo_init(gx_frame_memo *m, gx_memsys *ms)
{
    m->shift = ms->frame_shift;
    m->miss = memo_fill;
    m->ctx = ms->vm;
    for (uint64_t j = 0; j < GX_FRAME_MEMO; j++) {
        m->tag[j] = j ^ 1; /* never matched: a VFN in slot j ends in j */
        m->delta[j] = 0;
    }
}

void gx_memsys_run_off(gx_memsys *ms, const uint64_t *va, const uint32_t *sm,
                       const uint32_t *rep, size_t n, gx_l2_tally *t)
{
    uint64_t *pa = ms->pa_buf;
    gx_frame_memo memo;
    memo_init(&memo, ms);
    for (size_t done = 0; done < n;) {
        size_t k = n - done < MEMSYS_RUN_CHUNK ? n - done : MEMSYS_RUN_CHUNK;
        gx_l2_run_va(ms->l2, va + done, pa, sm + done, rep ? rep + done : NULL, k, &memo, t);
        done += k;
    }
}

/* ------------------------------------------------------------------ */
/* translation: TLB levels -> walker, for one page request */

typedef struct xlate {
    int fault, tlb_hit, leaf_read;
    uint64_t page_base, page_bytes;
    double cycles;
    int n_nb; /* the walk's valid final neighbours (same fetch): w's, 0 without a walk */
    gx_walk w; /* the walk, when there was one */
} xlate;

/* Install a walked page, and the neighbours its fetch returned into the
 * same multi-page entry (a widened group's other pages are installed as it
 * serves them: serve()). */
static void fill_levels(gx_memsys *ms, uint32_t sm, uint64_t va, const xlate *x)
{
    for (int j = 0; j < ms->n_levels; j++) {
        gx_tlb_fill_missed(ms->tlb[j], sm, va, x->page_bytes);
        if (!(ms->nb_levels >> j & 1u)) /* an entry of one page: no neighbour to add */
            continue;
        for (int k = 0; k < x->n_nb; k++)
            if (x->w.neighbour_bytes[k] == x->page_bytes)
                gx_tlb_fill_neighbour(ms->tlb[j], sm, va, x->w.neighbour_va[k], x->page_bytes);
    }
}

/* tlb.hit_fills_entry: a hit at level `hit` returns its whole entry, whose
 * other valid pages go into the nearer levels whose entries cover several
 * pages (as a walk's neighbours do). */
static void copy_entry(gx_memsys *ms, uint32_t sm, uint64_t va, uint64_t page_bytes, int hit)
{
    uint64_t base;
    uint32_t m = gx_tlb_entry_pages(ms->tlb[hit], sm, va, page_bytes, &base);
    for (; m; m &= m - 1) {
        uint64_t nb = base + (uint64_t)__builtin_ctz(m) * page_bytes;
        if (nb == (va & ~(page_bytes - 1)))
            continue;
        for (int j = 0; j < hit; j++)
            if (ms->nb_levels >> j & 1u)
                gx_tlb_fill_neighbour(ms->tlb[j], sm, va, nb, page_bytes);
    }
}

/* The walk of a page every level missed, into x (c: the cycles so far,
 * returned with the walk's). */
static double walk_into(gx_memsys *ms, uint64_t va, uint32_t sm, double t, double c, xlate *x)
{
    gx_walk *w = &x->w;
    gx_walker_walk(ms->walker, va, sm, t + c, w);
    c += w->queue_cycles + w->walk_cycles;
    x->fault = w->fault;
    x->leaf_read = w->leaf_read;
    x->page_base = w->page_base;
    x->page_bytes = w->page_bytes;
    x->n_nb = w->n_neighbours;
    return c;
}

/* translate_miss when every level is lean (ms->lean: lru, entries of one
 * page, so no neighbour fills and no entry copies): the lookups of the
 * later levels as one chain (gx_tlb_chain_lookup), then the outstanding-
 * miss slots of the missed levels (their state is the slots' own: the
 * lookups do not read it; the cycles c sum in translate_miss's order), the
 * walk, and the fills from the lookups' placements. The same calls on
 * every part's state as translate_miss; measured: see docs/performance.md
 * ("Translation: lean paths for 4 KiB pages"). */
static void translate_lean(gx_memsys *ms, uint64_t va, uint32_t sm, double t, double c, xlate *x)
{
    gx_tlb_chain ch;
    uint64_t s = 0;
    const int n = ms->n_levels;
    const int hit = gx_tlb_chain_lookup(ms->tlb, 1, n, sm, va, &s, &ch);
    const int looked = hit >= 0 ? hit : n;
    for (int j = 0; j < looked; j++) { /* level j missed: its slot, then the next level's time */
        const gx_slots *sl = &ms->slots[j];
        if (sl->n) {
            const double f = gx_slots_earliest(sl);
            if (f > t + c) {
                c = f - t;
                ms->miss_slot_stalls++;
            }
        }
        if (j + 1 < n)
            c += ms->hit_lat[j + 1];
    }
    if (hit >= 0) {
        x->tlb_hit = 1;
        x->page_bytes = s;
        x->page_base = va & ~(s - 1);
        gx_tlb_chain_fill(ms->tlb, 1, hit, sm, va, s, &ch);
    } else {
        c = walk_into(ms, va, sm, t, c, x);
        if (!x->fault)
            gx_tlb_chain_fill(ms->tlb, 1, n, sm, va, x->page_bytes, &ch);
    }
    for (int j = 0; j < looked; j++) /* the slots are held until the translation returns */
        if (ms->slots[j].n)
            gx_slots_take(&ms->slots[j], t + c);
    x->cycles = c;
}

/* translate after a first-level miss (c: the cycles so far). */
static __attribute__((noinline)) void translate_miss(gx_memsys *ms, uint64_t va, uint32_t sm,
                                                     double t, double c, xlate *x)
{
    if (ms->lean) {
        translate_lean(ms, va, sm, t, c, x);
        return;
    }
    int took[GX_MAX_TLB_LEVELS];
    int hit = -1;
    uint64_t s = 0;
    for (int j = 0;;) { /* level j missed: the next level, until one hits */
        took[j] = 0;
        gx_slots *sl = &ms->slots[j];
        if (sl->n) { /* a miss needs one of the level's outstanding-miss slots */
            double f = gx_slots_earliest(sl);
            if (f > t + c) {
                c = f - t;
                ms->miss_slot_stalls++;
            }
            took[j] = 1;
        }
        if (++j == ms->n_levels)
            break;
        c += ms->hit_lat[j];
        if (gx_tlb_lookup(ms->tlb[j], sm, va, &s)) {
            hit = j;
            break;
        }
    }
    if (hit >= 0) {
        x->tlb_hit = 1;
        x->page_bytes = s;
        x->page_base = va & ~(s - 1);
        for (int j = 0; j < hit; j++)
            gx_tlb_fill_missed(ms->tlb[j], sm, va, s);
        if (ms->copy_entry && (ms->nb_levels & ((1u << hit) - 1)))
            copy_entry(ms, sm, va, s, hit);
    } else {
        c = walk_into(ms, va, sm, t, c, x);
        if (ms->nb_levels && x->n_nb) /* read by fill_levels (and in_fetch below) */
            gx_walk_neighbours(&x->w);
        if (!x->fault)
            fill_levels(ms, sm, va, x);
    }
    int looked = hit >= 0 ? hit : ms->n_levels;
    for (int j = 0; j < looked; j++) /* the slots are held until the translation returns */
        if (took[j])
            gx_slots_take(&ms->slots[j], t + c);
    x->cycles = c;
}

static inline void translate(gx_memsys *ms, uint64_t va, uint32_t sm, double t, xlate *x)
{
    x->fault = x->tlb_hit = x->leaf_read = x->n_nb = 0; /* nb_* used up to n_nb only */
    double c = 0;
    uint64_t s = 0;
    c += ms->hit_lat[0]; /* a first-level hit (the common case): nothing to fill or hold */
    if (gx_tlb_lookup(ms->tlb[0], sm, va, &s)) {
        x->tlb_hit = 1;
        x->page_bytes = s;
        x->page_base = va & ~(s - 1);
        x->cycles = c;
        return;
    }
    translate_miss(ms, va, sm, t, c, x);
}

/* ------------------------------------------------------------------ */
/* the coalescer's grouping of one warp instruction */

typedef struct group_ctx {
    gx_memsys *ms;
    const gx_memsys_req *req;
    uint32_t n, sm;
    double t;
    uint8_t *done;
    double *cyc;
    uint8_t *fault;
    uint64_t coalesced, widened;
} group_ctx;

static int is_write(const gx_memsys_req *r)
{
    return r->op != GX_L2_READ;
}

/* Is va among the pages x's walk returned (its own page or a neighbour)? */
static int in_fetch(const xlate *x, uint64_t va)
{
    if (va - x->page_base < x->page_bytes)
        return 1;
    for (int k = 0; k < x->n_nb; k++)
        if (x->w.neighbour_bytes[k] == x->page_bytes &&
            va - x->w.neighbour_va[k] < x->w.neighbour_bytes[k])
            return 1;
    return 0;
}

/* Requests still open that x's translation (of leader l, mode m) serves:
 * the same page at its grouping granule (a mispredicted group re-coalesced
 * upwards), and with widening the other pages of its fetch. */
static void serve(group_ctx *g, uint32_t l, const xlate *x, const uint8_t *member, int widen,
                  double extra)
{
    const gx_memsys_req *r = g->req;
    uint64_t gran = x->fault ? 0 : gx_coalescer_granule(g->ms->co, x->page_bytes);
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->done[i] || is_write(&r[i]) != is_write(&r[l]))
            continue;
        int same, widened = 0;
        if (x->fault) {
            same = i == l || (member[i] && r[i].va >> 12 == r[l].va >> 12);
        } else {
            same = r[i].va / gran == r[l].va / gran;
            widened = !same && widen && member[i] && !x->tlb_hit && in_fetch(x, r[i].va);
        }
        if (!same && !widened)
            continue;
        if (widened) /* a page of the group that came back in the walk's fetch */
            for (int j = 0; j < g->ms->n_levels; j++)
                gx_tlb_fill(g->ms->tlb[j], g->sm, r[i].va, x->page_bytes);
        g->done[i] = 1;
        g->cyc[i] = extra + x->cycles;
        g->fault[i] = (uint8_t)x->fault;
    }
}

/* Translate group k's open members: its leader at the predicted size, then
 * (re-coalesced at the real size) each remaining page after the group's
 * translation returned. */
static void run_group(group_ctx *g, const uint8_t *member, uint64_t predicted, int widen)
{
    gx_memsys *ms = g->ms;
    double extra = 0;
    int first = 1;
    for (;;) {
        uint32_t l = UINT32_MAX;
        for (uint32_t i = 0; i < g->n && l == UINT32_MAX; i++)
            if (member[i] && !g->done[i])
                l = i;
        if (l == UINT32_MAX)
            return;
        xlate x;
        translate(ms, g->req[l].va, g->sm, g->t + extra, &x);
        g->coalesced++;
        if (first) {
            if (x.tlb_hit)
                gx_coalescer_train_neighbour(ms->co, g->sm, 0);
            else if (x.leaf_read)
                gx_coalescer_train_neighbour(ms->co, g->sm, 1);
            if (!x.fault)
                (void)gx_coalescer_train_size(ms->co, g->sm, predicted, x.page_bytes);
        }
        if (widen && first && x.n_nb)
            gx_walk_neighbours(&x.w); /* in_fetch reads them */
        serve(g, l, &x, member, widen && first, extra);
        extra += x.cycles;
        first = 0;
    }
}

static void translate_group(gx_memsys *ms, const gx_memsys_req *req, uint32_t n, double t,
                            double *cyc, uint8_t *fault)
{
    uint8_t done[GX_MEMSYS_MAX_GROUP], member[GX_MEMSYS_MAX_GROUP];
    uint64_t key[GX_MEMSYS_MAX_GROUP];
    memset(done, 0, n);
    group_ctx g = {ms, req, n, req[0].sm, t, done, cyc, fault, 0, 0};
    uint64_t predicted = gx_coalescer_predict(ms->co, g.sm);
    uint32_t pages = gx_coalescer_group_pages(ms->co, g.sm);
    uint32_t gsh = (uint32_t)gx_log2_u64(gx_coalescer_granule(ms->co, predicted));
    uint32_t wsh = gsh + (uint32_t)gx_log2_u64(pages);
    for (uint32_t i = 0; i < n; i++)
        key[i] = (req[i].va >> wsh) << 1 | (uint64_t)is_write(&req[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        int several = 0; /* the group spans several pages of the predicted size */
        for (uint32_t k = 0; k < n; k++) {
            member[k] = !done[k] && key[k] == key[i];
            several |= member[k] && req[k].va >> gsh != req[i].va >> gsh;
        }
        g.widened += (uint64_t)(pages > 1 && several);
        run_group(&g, member, predicted, pages > 1);
    }
    gx_coalescer_count(ms->co, n, g.coalesced, g.widened);
}

/* translate_group for an instruction of one request (a trace without warp
 * ids: every access alone), its steps with n = 1 written out: the leader is
 * the request, one translation at the predicted size trains both
 * predictors, and it serves the request (no group to widen or re-coalesce).
 * Measured (callgrind, bench_translation, random 64 MiB over 2 MiB pages):
 * see docs/performance.md ("Translation: instructions per access"). */
static void translate_alone(gx_memsys *ms, const gx_memsys_req *req, double t, double *cyc,
                            uint8_t *fault)
{
    xlate x;
    translate(ms, req->va, req->sm, t, &x); /* the coalescer's state is not the translation's */
    gx_coalescer_alone(ms->co, req->sm, x.tlb_hit, x.leaf_read, x.fault, x.page_bytes);
    *cyc = x.cycles;
    *fault = (uint8_t)x.fault;
}

/* Every sector of one translated request through the L2 (VA -> PA by the
 * frames, as without translation). */
static double phys(gx_memsys *ms, const gx_memsys_req *r, uint64_t *sectors)
{
    return gx_memsys_access_off(ms, r->va, r->size, r->sm, (gx_l2_op)r->op, NULL, sectors);
}

/* gx_memsys_access_group's translated path for an instruction of one
 * request (its loop with n = 1 written out). */
static void access_alone(gx_memsys *ms, const gx_memsys_req *req, double t, gx_memsys_res *res)
{
    double cyc;
    uint8_t fault;
    translate_alone(ms, req, t, &cyc, &fault);
    res->translation_cycles = cyc;
    res->fault = fault;
    res->sectors = 0;
    res->latency_cycles = cyc + (fault ? 0 : phys(ms, req, &res->sectors));
    ms->translation_cycles += cyc;
    ms->faults += fault;
    ms->accesses++;
}

/* ---- translation on, batched: instructions of one single-sector request ----
 * A first-level TLB hit needs nothing of the time (no slot, no walk): its
 * translation is the level's hit latency c0, so its L2 access waits in
 * pa_buf and a run of them goes through the L2's batch run with c0 added
 * to each latency (gx_l2_run_plus). Anything else first runs the waiting
 * accesses (the walk's page-table reads and the issue time, the total so
 * far, come after them), then takes access_alone's path. So the L2 sees
 * the same accesses in the same order, the TLBs, the walker and the
 * coalescer the same calls, vmem places the same frames in the same order,
 * and every statistic is access_alone's. Measured: see docs/performance.md
 * ("Translation: instructions per access"). */
#define RUN_ALONE_MIN 16 /* fewer waiting accesses: one at a time (the batch run's setup) */

/* The waiting first-level hits (pa_buf, sm_buf: k of them) into t. */
static void run_hits(gx_memsys *ms, size_t k, double c0, gx_l2_tally *t)
{
    if (k >= RUN_ALONE_MIN) {
        gx_l2_run_plus(ms->l2, ms->pa_buf, ms->sm_buf, k, c0, t);
        return;
    }
    for (size_t i = 0; i < k; i++) {
        gx_l2_result r;
        gx_l2_access(ms->l2, ms->pa_buf[i], ms->sm_buf[i], GX_L2_READ, &r);
        gx_l2_tally_add(t, c0 + r.latency_cycles);
        t->sectors++;
    }
}

/* access_alone of a request that missed the first level, its latency into
 * t (issued at cycle, or 0: when the accesses before it are done). */
static void alone_missed(gx_memsys *ms, gx_frame_memo *memo, uint64_t va, uint32_t sm,
                         uint64_t cycle, double c0, gx_l2_tally *t)
{
    const double at = cycle ? (double)cycle : gx_cyc_value(&t->total);
    xlate x;
    x.fault = x.tlb_hit = x.leaf_read = x.n_nb = 0;
    translate_miss(ms, va, sm, at, c0, &x);
    gx_coalescer_alone(ms->co, sm, x.tlb_hit, x.leaf_read, x.fault, x.page_bytes);
    const double cyc = x.cycles;
    double phys = 0; /* gx_memsys_access_off of the one sector */
    if (!x.fault) {
        gx_l2_result r;
        gx_l2_access(ms->l2, gx_frame_pa(memo, va), sm, GX_L2_READ, &r);
        phys = r.latency_cycles;
        t->sectors++;
    }
    gx_l2_tally_add(t, cyc + phys);
    ms->translation_cycles += cyc;
    ms->faults += (uint64_t)x.fault;
}

void gx_memsys_run_alone(gx_memsys *ms, const uint64_t *va, const uint32_t *sm,
                         const uint64_t *cycle, size_t n, gx_l2_tally *t)
{
    double c0 = 0;
    c0 += ms->hit_lat[0]; /* as translate() forms it */
    gx_frame_memo memo;
    memo_init(&memo, ms);
    uint64_t *const pa = ms->pa_buf, *const size = ms->size_buf;
    uint32_t *const psm = ms->sm_buf;
    size_t k = 0; /* hits waiting in pa_buf, sm_buf */
    double xc = ms->translation_cycles;
    for (size_t i = 0; i < n;) {
        const size_t room = MEMSYS_RUN_CHUNK - k, m = n - i < room ? n - i : room;
        /* the first-level hits from i on, their sizes at size[k ..] */
        const size_t h = gx_tlb_lookup_run(ms->tlb[0], sm + i, va + i, m, size + k);
        if (h) {
            gx_coalescer_alone_hits(ms->co, sm + i, size + k, h);
            for (size_t j = 0; j < h; j++) {
                xc += c0;
                pa[k + j] = gx_frame_pa(&memo, va[i + j]);
                psm[k + j] = sm[i + j];
            }
            k += h;
            i += h;
            if (h == m && k < MEMSYS_RUN_CHUNK)
                continue; /* the end of the requests */
            run_hits(ms, k, c0, t);
            k = 0;
        }
        if (h < m) { /* request i missed the first level (looked up and counted) */
            ms->translation_cycles = xc;
            alone_missed(ms, &memo, va[i], sm[i], cycle[i], c0, t);
            xc = ms->translation_cycles;
            i++;
        }
    }
    run_hits(ms, k, c0, t);
    ms->translation_cycles = xc;
    ms->accesses += n;
}

void gx_memsys_access_group(gx_memsys *ms, const gx_memsys_req *req, uint32_t n, double t,
                            gx_memsys_res *res)
{
    if (n > GX_MEMSYS_MAX_GROUP)
        n = GX_MEMSYS_MAX_GROUP;
    if (!n)
        return;
    if (!ms->xlate) {
        for (uint32_t i = 0; i < n; i++) {
            memset(&res[i], 0, sizeof res[i]);
            res[i].latency_cycles = phys(ms, &req[i], &res[i].sectors);
        }
        return;
    }
    if (n == 1) {
        access_alone(ms, req, t, res);
        return;
    }
    double cyc[GX_MEMSYS_MAX_GROUP];
    uint8_t fault[GX_MEMSYS_MAX_GROUP];
    translate_group(ms, req, n, t, cyc, fault);
    for (uint32_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].translation_cycles = cyc[i];
        res[i].fault = fault[i];
        res[i].latency_cycles = cyc[i] + (fault[i] ? 0 : phys(ms, &req[i], &res[i].sectors));
        ms->translation_cycles += cyc[i];
        ms->faults += fault[i];
    }
    ms->accesses += n;
}

int gx_memsys_translating(const gx_memsys *ms)
{
    return ms->xlate;
}

double gx_memsys_window(const gx_memsys *ms)
{
    return ms->xlate ? gx_coalescer_window(ms->co) : 0;
}

int gx_memsys_map(gx_memsys *ms, uint64_t va, uint64_t bytes, uint64_t page_bytes,
                  gx_msg *msg)
{
    int rc = ms->xlate ? gx_vmem_map(ms->vm, va, bytes, page_bytes, msg)
                       : gx_fail(msg, GX_EINVAL, "memsys: a MAP without a tlb section");
    ms->maps++;
    ms->maps_rejected += rc != GX_OK;
    return rc;
}

void gx_memsys_invalidate(gx_memsys *ms, uint64_t va, uint64_t bytes)
{
    (void)va;
    (void)bytes;
    if (!ms->xlate)
        return;
    for (int j = 0; j < ms->n_levels; j++)
        gx_tlb_flush(ms->tlb[j]);
    gx_walker_invalidate(ms->walker);
    ms->invalidations++;
}
