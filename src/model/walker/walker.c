/* walker.c - the page-table walker (see walker.h).
 *
 * Models:
 * - walkers concurrent walks; a walk that finds them all busy waits in a
 *   FIFO queue of queue_entries (0: unbounded); when the queue is full too,
 *   it retries until a queue slot frees (a slot frees when its walk starts).
 *   Requests are served in the order they arrive.
 * - PWC and neighbour PWC: gx_cache instances (one 32-byte sector per line,
 *   the entry), entries / ways sets, the registry's policy; the tag is the
 *   entry's key (level, table, index), the set its index mod sets. A fully
 *   associative one (ways = entries) with lru is a gx_facache instead: the
 *   same hits and misses for any number of entries (gx_cache stops at 64
 *   ways), O(1) per operation instead of a 64-way search and rank update.
 * - Walk time: the sum of the PWC hit latencies and the reads' latencies,
 *   one level after another (a walk's steps depend on each other).
 *
 * Notes: pwcInvalidations / pwc2Invalidations count invalidations that
 * emptied the cache (the cache keeps no count of its valid entries). */
#include "gpuxray/walker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../slots.h"
#include "gpuxray/bits.h"
#include "gpuxray/cache.h"
#include "fablock.h"
#include "facache.h"

#define PWC_LINE_BYTES 32 /* one sector: an entry present or not */

/* One page-walk cache: a gx_facache when fully associative with lru, else
 * a gx_cache of sets sets; present when either is set. */
typedef struct gx_pwc {
    gx_cache *c;
    gx_facache *fa;
    gx_fablock *fb; /* the neighbour PWC's fully associative lru instead of fa */
    uint64_t sets;
    double lat;
} gx_pwc;

struct gx_walker {
    gx_vmem *vm;
    gx_walker_read_fn read;
    void *ctx;
    uint32_t fetch_bytes;
    double fixed_read; /* NaN: through read() */
    gx_pwc pwc, npwc;
    gx_slots walkers; /* cycle each walker frees */
    gx_slots queue;   /* cycle each queue slot frees (its walk starts); n 0: unbounded */
    int levels;       /* the page table's (fixed when it is built) */
    uint32_t can_final; /* bit i: an entry of level i can be final (fixed too) */
    int has_pwc, has_npwc; /* present(&pwc), present(&npwc) */
    gx_walker_stats st;
};

static int is_lru(const char *policy)
{
    return !policy[0] || !strcmp(policy, "lru");
}

/* group_bits: above 0, a fully associative lru cache is a gx_fablock of
 * that many group bits (the neighbour PWC: a walk's fetch block as one run). */
static int small_cache(const gx_small_cache_cfg *c, const char *field, uint64_t seed,
                       uint32_t group_bits, gx_pwc *out, gx_msg *msg)
{
    memset(out, 0, sizeof *out);
    if (!c->present)
        return GX_OK;
    if (!c->entries || !c->ways || c->entries % c->ways)
        return gx_fail(msg, GX_ECONFIG, "%s.ways: %u does not divide entries %u", field, c->ways,
                       c->entries);
    if (!isfinite(c->hit_latency_cycles) || c->hit_latency_cycles < 0)
        return gx_fail(msg, GX_ECONFIG, "%s.hit_latency_cycles: required (>= 0)", field);
    out->sets = c->entries / c->ways;
    out->lat = c->hit_latency_cycles;
    if (out->sets == 1 && is_lru(c->policy) && group_bits) {
        out->fb = gx_fablock_new(c->entries, group_bits);
        return out->fb ? GX_OK : gx_fail(msg, GX_ENOMEM, "%s: out of memory", field);
    }
    if (out->sets == 1 && is_lru(c->policy)) {
        out->fa = gx_facache_new(c->entries);
        return out->fa ? GX_OK : gx_fail(msg, GX_ENOMEM, "%s: out of memory", field);
    }
    gx_cache_cfg cc = {PWC_LINE_BYTES, PWC_LINE_BYTES, c->ways, out->sets,
                       c->policy[0] ? c->policy : "lru", seed, 0};
    int rc = gx_cache_new(&cc, &out->c, msg);
    if (rc != GX_OK)
        return gx_fail(msg, rc, "%s: %s", field, msg ? msg->text : "");
    return GX_OK;
}

static int present(const gx_pwc *p)
{
    return p->c || p->fa || p->fb;
}

static void pwc_free(gx_pwc *p)
{
    gx_cache_free(p->c);
    gx_facache_free(p->fa);
    gx_fablock_free(p->fb);
}

static void pwc_flush(gx_pwc *p)
{
    if (p->fb)
        gx_fablock_flush(p->fb);
    else if (p->fa)
        gx_facache_flush(p->fa);
    else
        gx_cache_flush(p->c);
}

static int check_cfg(const gx_tlb_cfg *t, uint32_t line_bytes, gx_msg *msg)
{
    uint32_t f = t->walker.fetch_bytes;
    if (!gx_is_pow2_u64(f) || f < t->pte_bytes || f > line_bytes)
        return gx_fail(msg, GX_ECONFIG,
                       "tlb.walker.fetch_bytes: %u is not a power of two from pte_bytes (%u) to "
                       "the L2 line (%u)",
                       f, t->pte_bytes, line_bytes);
    if (!t->walker.walkers)
        return gx_fail(msg, GX_ECONFIG, "tlb.walker.walkers: at least 1 required");
    double fr = t->walker.fixed_read_cycles;
    if (!isnan(fr) && !(fr >= 0 && isfinite(fr)))
        return gx_fail(msg, GX_ECONFIG, "tlb.walker.fixed_read_cycles: %g is not >= 0", fr);
    return GX_OK;
}

/* The neighbour PWC's group bits: log2 of a fetch's entries (any value
 * gives the same results; a fetch block as one group is the fast one),
 * 1 to 6. */
static uint32_t fetch_group_bits(const gx_tlb_cfg *t)
{
    uint32_t f = (uint32_t)gx_log2_u64(t->walker.fetch_bytes);
    uint32_t p = t->pte_bytes ? (uint32_t)gx_log2_u64(t->pte_bytes) : 0;
    uint32_t b = f > p ? f - p : 1;
    return b > 6 ? 6 : b;
}

int gx_walker_new(const gx_tlb_cfg *t, gx_vmem *vm, uint32_t line_bytes, gx_walker_read_fn read,
                  void *ctx, uint64_t seed, gx_walker **out, gx_msg *msg)
{
    *out = NULL;
    int rc = check_cfg(t, line_bytes, msg);
    if (rc != GX_OK)
        return rc;
    gx_walker *w = calloc(1, sizeof *w);
    if (!w)
        return gx_fail(msg, GX_ENOMEM, "walker: out of memory");
    w->vm = vm;
    w->read = read;
    w->ctx = ctx;
    w->fetch_bytes = t->walker.fetch_bytes;
    w->fixed_read = t->walker.fixed_read_cycles;
    w->levels = gx_vmem_pt_levels(vm);
    for (int i = 0; i < w->levels && i < 32; i++)
        w->can_final |= (uint32_t)(gx_vmem_level_can_be_final(vm, i) != 0) << i;
    if (gx_slots_init(&w->walkers, t->walker.walkers) ||
        gx_slots_init(&w->queue, t->walker.queue_entries))
        rc = gx_fail(msg, GX_ENOMEM, "walker: out of memory");
    if (rc == GX_OK)
        rc = small_cache(&t->walker.pwc, "tlb.walker.pwc", gx_mix64(seed ^ 0x9c1ULL), 0,
                         &w->pwc, msg);
    if (rc == GX_OK)
        rc = small_cache(&t->walker.neighbour_pwc, "tlb.walker.neighbour_pwc",
                         gx_mix64(seed ^ 0x9c2ULL), fetch_group_bits(t), &w->npwc, msg);
    if (rc != GX_OK) {
        gx_walker_free(w);
        return rc;
    }
    w->has_pwc = present(&w->pwc);
    w->has_npwc = present(&w->npwc);
    *out = w;
    return GX_OK;
}

void gx_walker_free(gx_walker *w)
{
    if (!w)
        return;
    pwc_free(&w->pwc);
    pwc_free(&w->npwc);
    gx_slots_free(&w->walkers);
    gx_slots_free(&w->queue);
    free(w);
}

/* The cycle the walk requested at t starts (it takes a queue slot when it
 * must wait, retrying while the queue is full). */
static double admit(gx_walker *w, double t)
{
    double wf = gx_slots_earliest(&w->walkers);
    double start = wf > t ? wf : t;
    if (start > t) {
        w->st.queued_walks++;
        if (w->queue.n) {
            double qf = gx_slots_earliest(&w->queue);
            double enter = qf > t ? qf : t;
            if (enter > t)
                w->st.queue_retries++;
            if (enter > start)
                start = enter;
            gx_slots_take(&w->queue, start);
        }
    }
    return start;
}

static int probe_key(gx_pwc *p, uint64_t key)
{
    if (p->fb)
        return gx_fablock_probe(p->fb, key);
    if (p->fa)
        return gx_facache_probe(p->fa, key);
    return gx_cache_access(p->c, (key >> 6) % p->sets, key, 0, 0, NULL) == GX_CACHE_HIT;
}

static int probe(gx_pwc *p, const gx_vmem_pte *e)
{
    return probe_key(p, e->key);
}

static void insert(gx_pwc *p, const gx_vmem_pte *e)
{
    if (p->fb)
        gx_fablock_insert(p->fb, e->key);
    else if (p->fa)
        gx_facache_insert(p->fa, e->key);
    else
        gx_cache_insert(p->c, (e->key >> 6) % p->sets, e->key, 1u, NULL);
}

static double read_block(gx_walker *w, int level, const gx_vmem_pte *e, uint32_t sm)
{
    w->st.page_table_reads++;
    w->st.reads_by_level[level]++;
    if (!isnan(w->fixed_read))
        return w->fixed_read;
    return w->read(w->ctx, e->pa & ~((uint64_t)w->fetch_bytes - 1), sm);
}

/* The neighbours' keys into the neighbour PWC in block order, as one batch
 * (the same order and results as one at a time). */
static void insert_neighbours(gx_walker *w, const uint64_t *keys, uint32_t nk)
{
    if (w->npwc.fb)
        gx_fablock_insert_keys(w->npwc.fb, keys, nk);
    else if (w->npwc.fa)
        gx_facache_insert_keys(w->npwc.fa, keys, nk);
    else if (w->npwc.c)
        for (uint32_t k = 0; k < nk; k++)
            gx_cache_insert(w->npwc.c, (keys[k] >> 6) % w->npwc.sets, keys[k], 1u, NULL);
    if (present(&w->npwc))
        w->st.pwc2_insertions += nk;
}

/* insert_neighbours of a block's keys first + (j << 6), j < n except skip. */
static void insert_block(gx_walker *w, uint64_t first, uint32_t n, uint32_t skip)
{
    if (w->npwc.fb) {
        gx_fablock_insert_run(w->npwc.fb, first, n, skip);
        w->st.pwc2_insertions += n - 1;
        return;
    }
    uint64_t keys[GX_VMEM_MAX_FETCH];
    uint32_t nk = 0;
    for (uint32_t j = 0; j < n; j++)
        if (j != skip)
            keys[nk++] = first + ((uint64_t)j << 6);
    insert_neighbours(w, keys, nk);
}

void gx_walk_neighbours(gx_walk *w)
{
    if (!w->nb_lazy)
        return;
    uint32_t k = 0;
    for (uint32_t j = 0; j < w->nb_count; j++) {
        if (j == w->nb_skip)
            continue;
        w->neighbour_va[k] = w->nb_first_va + ((uint64_t)j << w->nb_shift);
        w->neighbour_bytes[k++] = w->nb_bytes;
    }
    w->nb_lazy = 0;
}

/* Block entry (key, va, kind, page_bytes) seen from final entry e: a valid
 * final neighbour goes into keys[] and out, an invalid one is counted. */
static inline void neighbour(gx_walker *w, const gx_vmem_pte *e, uint64_t key, uint64_t va,
                             gx_pte_kind kind, uint64_t page_bytes, uint64_t *keys,
                             uint32_t *nk, gx_walk *out)
{
    if (key == e->key)
        return;
    if (kind != GX_PTE_FINAL) {
        if (kind == GX_PTE_INVALID)
            w->st.pwc2_invalid_neighbours_skipped++;
        return;
    }
    keys[(*nk)++] = key;
    out->neighbour_va[out->n_neighbours] = va;
    out->neighbour_bytes[out->n_neighbours++] = page_bytes;
}

/* After the read of final entry e: its valid final neighbours into the
 * neighbour PWC and into out (for the TLBs); invalid ones skipped. A block
 * of alike entries (the common case) comes as one gx_vmem_block, without
 * the entries; measured: see docs/performance.md ("Translation:
 * instructions per access"). */
static void take_neighbours(gx_walker *w, int level, const gx_vmem_pte *e, gx_walk *out)
{
    uint64_t keys[GX_VMEM_MAX_FETCH];
    uint32_t nk = 0;
    gx_vmem_block u;
    int n = gx_vmem_fetch_uniform(w->vm, level, e, w->fetch_bytes, &u);
    const uint64_t skip = (e->key - u.first_key) >> 6; /* e's entry in the block */
    if (n && u.kind == GX_PTE_FINAL && skip < (uint64_t)n &&
        u.first_key + (skip << 6) == e->key) {
        /* the common case: every other entry a neighbour, described, not listed */
        out->n_neighbours = n - 1;
        out->nb_lazy = 1;
        out->nb_count = (uint32_t)n;
        out->nb_skip = (uint32_t)skip;
        out->nb_shift = u.va_shift;
        out->nb_first_va = u.first_va;
        out->nb_bytes = u.page_bytes;
        insert_block(w, u.first_key, (uint32_t)n, (uint32_t)skip);
        return;
    }
    if (n) {
        for (uint64_t j = 0; j < (uint64_t)n; j++)
            neighbour(w, e, u.first_key + (j << 6), u.first_va + (j << u.va_shift), u.kind,
                      u.page_bytes, keys, &nk, out);
    } else {
        gx_vmem_pte blk[GX_VMEM_MAX_FETCH];
        n = gx_vmem_fetch_block(w->vm, level, e, w->fetch_bytes, blk);
        for (int j = 0; j < n; j++)
            neighbour(w, e, blk[j].key, blk[j].va_base, blk[j].kind, blk[j].page_bytes, keys, &nk,
                      out);
    }
    insert_neighbours(w, keys, nk);
}

/* One level of the walk: 1 when the walk ends here (final or fault). */
static int step(gx_walker *w, int level, const gx_vmem_walk *vw, uint32_t sm, gx_walk *out)
{
    gx_vmem_pte e;
    int last = level + 1 == w->levels, have = 0;
    /* A cached entry counts only while the page table still has that kind
     * of entry there: a MAP without an INV after it can leave an entry of
     * the old table behind (a pointer where a final entry now is, or the
     * reverse), which the model takes as a miss. Without remapping the
     * kind always matches (an entry is cached only as what it is). A
     * table entry's probe needs only its key: the entry itself is looked
     * at after a miss. */
    if (w->has_pwc && !last) {
        w->st.pwc_accesses++;
        uint64_t key;
        int hit;
        if (gx_vmem_walk_table_key(vw, level, &key)) {
            hit = probe_key(&w->pwc, key);
        } else {
            gx_vmem_walk_entry(w->vm, vw, level, &e);
            have = 1;
            hit = e.kind == GX_PTE_TABLE && probe(&w->pwc, &e);
        }
        if (hit) {
            w->st.pwc_hits++;
            w->st.pwc_hits_by_level[level]++;
            out->walk_cycles += w->pwc.lat;
            return 0;
        }
        w->st.pwc_misses++;
    }
    if (!have)
        gx_vmem_walk_entry(w->vm, vw, level, &e);
    if (w->has_npwc && (w->can_final >> level & 1u)) {
        w->st.pwc2_accesses++;
        if (e.kind == GX_PTE_FINAL && probe(&w->npwc, &e)) {
            w->st.pwc2_hits++;
            out->walk_cycles += w->npwc.lat;
            out->page_base = e.va_base;
            out->page_bytes = e.page_bytes;
            return 1;
        }
        w->st.pwc2_misses++;
    }
    out->walk_cycles += read_block(w, level, &e, sm);
    if (e.kind == GX_PTE_INVALID) {
        out->fault = 1;
        return 1;
    }
    if (e.kind == GX_PTE_TABLE) {
        if (w->has_pwc) { /* known non-final only now: the deferred insertion */
            insert(&w->pwc, &e);
            w->st.pwc_insertions++;
        }
        return 0;
    }
    out->leaf_read = 1;
    out->page_base = e.va_base;
    out->page_bytes = e.page_bytes;
    take_neighbours(w, level, &e, out);
    return 1;
}

/* step() of the levels whose entries on vw's walk are known table entries
 * (above a mapped page's level, not the last), while the fully associative
 * PWC hits them: the same probes, counts and cycles, without step()'s
 * dispatch. Returns the first level left to step(). */
static int table_hits(gx_walker *w, const gx_vmem_walk *vw, gx_walk *out)
{
    const int top = vw->final_level < w->levels - 1 ? vw->final_level : w->levels - 1;
    gx_facache *const fa = w->pwc.fa;
    double cyc = out->walk_cycles;
    int level = 0;
    for (; level < top; level++) {
        uint64_t key;
        if (!gx_vmem_walk_table_key(vw, level, &key) || !gx_facache_probe(fa, key))
            break; /* not known a table (unmapped), or a miss: step() probes it */
        w->st.pwc_accesses++;
        w->st.pwc_hits++;
        w->st.pwc_hits_by_level[level]++;
        cyc += w->pwc.lat;
    }
    out->walk_cycles = cyc;
    return level;
}

static uint32_t lat_bucket(double c)
{
    if (!(c >= 1))
        return 0;
    uint32_t b = (uint32_t)gx_log2_u64(c >= 9.0e18 ? UINT64_MAX : (uint64_t)c) + 1;
    return b < GX_WALK_LAT_BUCKETS ? b : GX_WALK_LAT_BUCKETS - 1;
}

void gx_walker_walk(gx_walker *w, uint64_t va, uint32_t sm, double t, gx_walk *out)
{
    out->fault = out->leaf_read = out->n_neighbours = out->nb_lazy = 0; /* up to n_neighbours */
    out->page_base = out->page_bytes = 0;
    out->walk_cycles = 0;
    double start = admit(w, t);
    out->queue_cycles = start - t;
    int n = w->levels;
    gx_vmem_walk vw; /* va's page, once for every level */
    gx_vmem_walk_begin(w->vm, va, &vw);
    int level = 0;
    if (w->pwc.fa) /* the levels above the page's: their PWC hits without step() */
        level = table_hits(w, &vw, out);
    for (; level < n; level++)
        if (step(w, level, &vw, sm, out))
            break;
    gx_slots_take(&w->walkers, start + out->walk_cycles);
    w->st.walks++;
    w->st.faults += (uint64_t)out->fault;
    w->st.queue_cycles += out->queue_cycles;
    w->st.walk_cycles += out->walk_cycles;
    w->st.lat_hist[lat_bucket(out->queue_cycles + out->walk_cycles)]++;
}

void gx_walker_invalidate(gx_walker *w)
{
    if (present(&w->pwc)) {
        pwc_flush(&w->pwc);
        w->st.pwc_invalidations++;
    }
    if (present(&w->npwc)) {
        pwc_flush(&w->npwc);
        w->st.pwc2_invalidations++;
    }
}

void gx_walker_get_stats(const gx_walker *w, gx_walker_stats *s)
{
    *s = w->st;
}
