/* tsim_par.c - the trace simulator split over worker threads and shards
 * (tsimpar.h): the calling thread decodes, places frames and locates every
 * sector in trace order; workers own slice groups and run their sectors.
 *
 * Models: the same as tsim.c, sector for sector; see tsimpar.h for what is
 * independent and which runs are not split (gx_tsim_par_blocker).
 *
 * Notes:
 * - Work moves in batches through a ring of PAR_BUFFERS buffers (fixed
 *   memory); one mutex and two condition variables per batch hand them
 *   over (a batch is some thousands of sectors, so the hand-over costs a
 *   few instructions per sector; no spinning, which would steal the core
 *   of a machine with fewer cores than threads).
 * - Each worker has its own copy of the L2 (its statistics, its sets: it
 *   touches only its groups'), so no two threads write the same memory but
 *   a batch's per-access slots (part[]).
 * - An access's latency is the largest of its sectors'. One worker holding
 *   every sector of an access (the common case: a line is in one slice)
 *   accounts it; an access split between workers gets a slot per worker,
 *   combined by the calling thread once the batch is done; split between
 *   shards, it goes to the partial's list (tsim_shard.c). */
#include "gpuxray/tsimpar.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/policy.h"
#include "tsim_internal.h"

/* Sectors one worker takes from one batch at most: 16 Ki x 32 B = 512 KiB,
 * a host-L2-sized handful per worker, and some 4000 batches per 64 M
 * accesses (the hand-over's cost spread thin). */
#define PAR_BATCH_ITEMS 16384
/* Batches in flight: the calling thread fills one while workers run others. */
#define PAR_BUFFERS 4
/* Accesses split between workers in one batch at most (a batch closes
 * early when they run out). */
#define PAR_SPANS 4096
/* Items ahead whose sets a worker prefetches (as tsim.c's look-ahead). */
#define PAR_PREFETCH 8
/* Sectors of one access at most: GX_TRACE_MAX_SIZE bytes unaligned over
 * 1-byte sectors. */
#define PAR_MAX_SECTORS (GX_TRACE_MAX_SIZE + 1)

enum { ITEM_FIRST = 1, ITEM_LAST = 2, ITEM_ONE = 4, ITEM_PA = 8 };
#define NOT_MINE 0xff /* owner[] of a slice of another shard (workers <= 64) */
#define NO_SPAN UINT32_MAX

/* One entry of a batch, in trace order, read by every worker:
 * - ITEM_ONE: a one-sector access, counted and accounted by its worker;
 *   with ITEM_PA its physical address only (each worker locates it and runs
 *   it when its slice is the worker's), else located by the calling thread
 *   (pre_locate) for worker `worker`;
 * - else one sector of a wider access, located by the calling thread, for
 *   worker `worker` (FIRST / LAST: its first / last sector of the access). */
typedef struct par_item {
    union {
        gx_l2_loc loc;
        uint64_t pa;
    } u;
    uint32_t sm;
    uint8_t op, flags, worker;
    uint16_t size; /* ITEM_PA: the access's bytes */
    uint32_t span; /* NO_SPAN: the worker accounts the access itself */
} par_item;

typedef struct par_span {
    uint64_t index; /* among the trace's global accesses */
    int cross;      /* some of its sectors belong to other shards */
} par_span;

typedef struct par_batch {
    par_item *items; /* PAR_BATCH_ITEMS */
    uint32_t n;
    par_span *span;
    double *part;      /* PAR_SPANS x workers: a worker's largest latency, -inf: none */
    uint32_t nspan;
    uint32_t remaining; /* workers still running it */
    int pending;        /* published, not yet reclaimed */
} par_batch;

typedef struct par_worker {
    struct gx_tsim_par *e;
    uint32_t id;
    pthread_t th;
    int started;
    gx_memsys *ms; /* its own L2 (and the parts it does not use) */
    uint64_t accesses, op_count[3], bytes, l2_accesses; /* its one-sector accesses */
    uint64_t *hist;
    gx_cyc_sum total;
    double lo, hi;
} par_worker;

struct gx_tsim_par {
    uint32_t nw, shard, shards, spp, sector_shift;
    uint64_t sector_mask;
    uint8_t *owner;  /* per slice: the worker of its group, NOT_MINE: another shard's */
    par_batch *cur;  /* the batch being filled */
    int nf, threaded, stop;
    gx_vmem *vm;     /* the calling thread's: frames placed in trace order */
    const gx_l2 *l2; /* the calling thread's: locates only */
    par_batch buf[PAR_BUFFERS];
    uint64_t filled; /* batches published */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int sync_ok;
    uint64_t acc_index;
    par_worker w[GX_TSIM_MAX_THREADS];
};

const char *gx_tsim_par_blocker(const gx_profile *p, const gx_tsim_cfg *c)
{
    if (c->noise && p->sim.present)
        return "--noise draws the jitter, outliers and background evictions of every slice "
               "from one random stream";
    if (p->tlb.present)
        return "translation (the profile's tlb section) couples the accesses: the walker's "
               "page-table reads go through the L2 and an instruction without a trace cycle "
               "issues after the sum of every earlier latency";
    if (p->l2.topology == GX_TOPO_NEAR_FAR && p->l2.far_stream_extra_cycles > 0)
        return "l2.latency_cycles.far_stream_extra couples an SM's accesses over every slice "
               "(a far hit costs more after the same SM's previous far hit)";
    return NULL;
}

/* ---- workers ---- */

static void account_w(par_worker *w, double lat)
{
    gx_cyc_add(&w->total, lat);
    w->lo = lat < w->lo ? lat : w->lo;
    w->hi = lat > w->hi ? lat : w->hi;
    gx_tsim_hist_add(w->hist, lat);
}

/* Is item i the worker's? loc: where it goes (located here for ITEM_PA). */
static inline int resolve(const par_worker *w, const gx_l2 *l2, const par_item *it,
                          gx_l2_loc *loc)
{
    if (it->flags & ITEM_PA) {
        gx_l2_locate(l2, it->u.pa, loc);
        return w->e->owner[loc->slice] == w->id;
    }
    *loc = it->u.loc;
    return it->worker == w->id;
}

/* A worker's sectors of one batch, in trace order; each entry is located
 * PAR_PREFETCH entries ahead and its sets prefetched (tsim.c's look-ahead). */
static void run_items(par_worker *w, par_batch *b)
{
    const uint32_t nw = w->e->nw;
    gx_l2 *l2 = gx_memsys_l2(w->ms);
    const par_item *it = b->items;
    const uint32_t n = b->n;
    gx_l2_loc ring[PAR_PREFETCH];
    uint8_t mine[PAR_PREFETCH];
    for (uint32_t i = 0; i < n && i < PAR_PREFETCH; i++)
        if ((mine[i] = (uint8_t)resolve(w, l2, &it[i], &ring[i])))
            gx_l2_prefetch_loc(l2, &ring[i], it[i].sm);
    double m = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t slot = i % PAR_PREFETCH;
        const gx_l2_loc loc = ring[slot];
        const int own = mine[slot];
        if (i + PAR_PREFETCH < n) {
            const par_item *a = &it[i + PAR_PREFETCH];
            if ((mine[slot] = (uint8_t)resolve(w, l2, a, &ring[slot])))
                gx_l2_prefetch_loc(l2, &ring[slot], a->sm);
        }
        if (!own)
            continue;
        gx_l2_result r;
        gx_l2_access_loc(l2, &loc, it[i].sm, (gx_l2_op)it[i].op, &r);
        double lat = r.latency_cycles;
        if (it[i].flags & ITEM_ONE) { /* a one-sector access: counted and accounted here */
            w->accesses++;
            w->op_count[it[i].op < 3 ? it[i].op : 0]++;
            w->bytes += it[i].size;
            w->l2_accesses++;
            account_w(w, lat);
            continue;
        }
        m = (it[i].flags & ITEM_FIRST) || lat > m ? lat : m; /* as gx_memsys_access_off */
        if (!(it[i].flags & ITEM_LAST))
            continue;
        if (it[i].span == NO_SPAN)
            account_w(w, m);
        else
            b->part[(size_t)it[i].span * nw + w->id] = m;
    }
}

static void *worker_main(void *arg)
{
    par_worker *w = arg;
    struct gx_tsim_par *e = w->e;
    for (uint64_t seq = 0;; seq++) {
        pthread_mutex_lock(&e->mu);
        while (e->filled <= seq && !e->stop)
            pthread_cond_wait(&e->work, &e->mu);
        int go = e->filled > seq;
        pthread_mutex_unlock(&e->mu);
        if (!go)
            return NULL;
        par_batch *b = &e->buf[seq % PAR_BUFFERS];
        run_items(w, b);
        pthread_mutex_lock(&e->mu);
        if (--b->remaining == 0)
            pthread_cond_signal(&e->done);
        pthread_mutex_unlock(&e->mu);
    }
}

/* ---- the calling thread: batches ---- */

static void push_span(gx_tsim *s, uint64_t index, double lat)
{
    gx_tsim_ext *x = s->ext;
    if (x->nspans == x->cap_spans) {
        size_t cap = x->cap_spans ? 2 * x->cap_spans : 1024;
        uint64_t *pi = realloc(x->span_index, cap * sizeof *pi);
        if (pi)
            x->span_index = pi;
        double *pl = pi ? realloc(x->span_lat, cap * sizeof *pl) : NULL;
        if (pl)
            x->span_lat = pl;
        if (!pi || !pl) { /* out of memory: the run's statistics cannot be right */
            x->oom = 1;
            return;
        }
        x->cap_spans = cap;
    }
    x->span_index[x->nspans] = index;
    x->span_lat[x->nspans++] = lat;
}

/* A finished batch: its split accesses' latencies, then empty. */
static void reclaim(gx_tsim *s, par_batch *b)
{
    const uint32_t nw = s->par->nw;
    for (uint32_t j = 0; j < b->nspan; j++) {
        double m = -INFINITY;
        for (uint32_t k = 0; k < nw; k++) {
            double v = b->part[(size_t)j * nw + k];
            m = v > m ? v : m;
        }
        if (b->span[j].cross)
            push_span(s, b->span[j].index, m);
        else
            gx_tsim_account(s, m);
    }
    b->n = b->nspan = 0;
    b->pending = 0;
}

/* The calling thread ahead of the workers (the buffer it fills next still
 * busy): it locates the batch's one-sector accesses itself, work the
 * workers would do (and every worker, not only the owner: the redundant
 * locates go too). Locating is a pure function of the address, so who does
 * it never changes a result; it only balances the threads. Measured
 * (callgrind, 1 M random 4-byte reads, --threads 2, per access, calling /
 * worker thread, whole run): hopper-like with plru 378 / 482 -> 429 / 438 M
 * instructions (one thread: 840 M); the seed card's calling thread, the
 * slower one there, is never ahead and locates nothing. Under callgrind the
 * threads take turns: the balance reached on real cores may differ. */
static void pre_locate(const struct gx_tsim_par *e, par_batch *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        par_item *it = &b->items[i];
        if (!(it->flags & ITEM_PA))
            continue;
        gx_l2_loc loc;
        gx_l2_locate(e->l2, it->u.pa, &loc);
        it->u.loc = loc;
        it->worker = e->owner[loc.slice];
        it->flags = ITEM_ONE;
    }
}

/* Hand the batch being filled to the workers (or run it here, one worker)
 * and make the next buffer ready. */
static par_batch *next_batch(gx_tsim *s)
{
    struct gx_tsim_par *e = s->par;
    par_batch *b = &e->buf[e->filled % PAR_BUFFERS];
    if (!e->threaded) {
        run_items(&e->w[0], b);
        reclaim(s, b);
        return e->cur = b;
    }
    pthread_mutex_lock(&e->mu);
    int ahead = e->buf[(e->filled + 1) % PAR_BUFFERS].remaining > 0;
    pthread_mutex_unlock(&e->mu);
    if (ahead)
        pre_locate(e, b);
    pthread_mutex_lock(&e->mu);
    b->remaining = e->nw;
    b->pending = 1;
    e->filled++;
    pthread_cond_broadcast(&e->work);
    par_batch *nb = &e->buf[e->filled % PAR_BUFFERS];
    while (nb->remaining)
        pthread_cond_wait(&e->done, &e->mu);
    pthread_mutex_unlock(&e->mu);
    if (nb->pending)
        reclaim(s, nb);
    return e->cur = nb;
}

static uint32_t group_of(const struct gx_tsim_par *e, uint32_t slice)
{
    return e->nf ? slice % e->spp : slice;
}

/* An access of several sectors (put_access): its sectors located (frames
 * placed in trace order), this shard's handed to their workers, with a
 * slot for its latency when they are not all one worker's. */
static __attribute__((noinline)) void put_sectors(gx_tsim *s, const gx_trace_rec *r,
                                                   uint32_t sm, uint64_t index)
{
    struct gx_tsim_par *e = s->par;
    const uint32_t sh = e->sector_shift;
    uint64_t first = r->addr >> sh, end = r->addr + r->size - 1;
    uint64_t last = (end < r->addr ? UINT64_MAX : end) >> sh;
    gx_l2_loc loc[PAR_MAX_SECTORS];
    uint8_t own[PAR_MAX_SECTORS], wk[PAR_MAX_SECTORS];
    uint32_t ns = 0, mine = 0;
    int other = 0, single;
    for (uint64_t k = first;; k++) { /* the sectors gx_memsys_access_off touches */
        uint64_t pa = gx_vmem_pa(e->vm, k == first ? r->addr : k << sh);
        gx_l2_locate(e->l2, pa, &loc[ns]);
        uint8_t o = e->owner[loc[ns].slice];
        own[ns] = o != NOT_MINE;
        wk[ns] = own[ns] ? o : 0;
        mine += own[ns];
        other |= !own[ns];
        ns++;
        if (k == last || k + 1 == 0 || ns == PAR_MAX_SECTORS)
            break;
    }
    if (own[0]) { /* the shard of the first sector counts the access */
        s->accesses++;
        s->op_count[r->op < 3 ? r->op : 0]++;
        s->bytes += r->size;
    }
    s->l2_accesses += mine;
    if (!mine)
        return;
    uint32_t w0 = 0;
    for (uint32_t j = 0; j < ns; j++)
        if (own[j]) {
            w0 = wk[j];
            break;
        }
    single = !other;
    for (uint32_t j = 0; j < ns && single; j++)
        single = !own[j] || wk[j] == w0;
    par_batch *b = e->cur;
    if (b->n + ns > PAR_BATCH_ITEMS || (!single && b->nspan == PAR_SPANS))
        b = next_batch(s);
    uint32_t span = NO_SPAN;
    if (!single) {
        span = b->nspan++;
        b->span[span] = (par_span){index, other};
        for (uint32_t k = 0; k < e->nw; k++)
            b->part[(size_t)span * e->nw + k] = -INFINITY;
    }
    for (uint32_t j = 0; j < ns; j++) {
        if (!own[j])
            continue;
        uint8_t fl = ITEM_FIRST | ITEM_LAST;
        for (uint32_t q = 0; q < ns; q++)
            if (q != j && own[q] && wk[q] == wk[j])
                fl &= (uint8_t)(q < j ? ~ITEM_FIRST : ~ITEM_LAST);
        par_item *it = &b->items[b->n++];
        *it = (par_item){{.loc = loc[j]}, sm, r->op, fl, wk[j], 0, span};
    }
}

/* One global access. The straight path: one sector (most accesses of a
 * coalesced trace), its frame placed here (trace order), located by the
 * workers. Measured (callgrind, 1 M random 4-byte reads, seed card with
 * plru, --threads 2): the calling thread's hand-over (this loop, with the
 * locate) went from 239 to 43 instructions per access against locating and
 * routing every sector here; the calling thread from 541 to 331 M
 * instructions in all (the trace's decoding is 248 M of them). */
static inline void put_access(gx_tsim *s, const gx_trace_rec *r, uint32_t sm)
{
    struct gx_tsim_par *e = s->par;
    const uint64_t index = e->acc_index++;
    const uint64_t smask = e->sector_mask;
    if (__builtin_expect((r->addr & smask) + r->size > smask + 1, 0)) {
        put_sectors(s, r, sm, index);
        return;
    }
    par_batch *b = e->cur;
    if (__builtin_expect(b->n == PAR_BATCH_ITEMS, 0))
        b = next_batch(s);
    par_item *it = &b->items[b->n++]; /* field by field: no zeroing of the rest */
    it->u.pa = gx_vmem_pa(e->vm, r->addr);
    it->sm = sm;
    it->op = r->op;
    it->flags = ITEM_ONE | ITEM_PA;
    it->size = r->size;
}

void gx_tsim_par_run(gx_tsim *s, const gx_trace_rec *rec, uint64_t n)
{
    const uint32_t smc = s->sm_count;
    const int counts_others = s->par->shard == 0; /* records off the L2: counted once */
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        if (!gx_trace_op_is_global(r->op)) {
            if (counts_others)
                gx_tsim_other(s, r);
            continue;
        }
        put_access(s, r, r->sm < smc ? r->sm : r->sm % smc);
    }
}

/* ---- start, finish ---- */

static int alloc_batches(struct gx_tsim_par *e)
{
    for (int k = 0; k < PAR_BUFFERS; k++) {
        par_batch *b = &e->buf[k];
        b->items = malloc(PAR_BATCH_ITEMS * sizeof *b->items);
        b->span = malloc(PAR_SPANS * sizeof *b->span);
        b->part = malloc((size_t)PAR_SPANS * e->nw * sizeof *b->part);
        if (!b->items || !b->span || !b->part)
            return GX_ENOMEM;
    }
    return GX_OK;
}

static int start_workers(gx_tsim *s, const gx_profile *p, gx_msg *msg)
{
    struct gx_tsim_par *e = s->par;
    gx_memsys_cfg mc = {s->cfg.noise, s->cfg.skew, s->cfg.seed, s->cfg.frames_seed,
                        s->cfg.phys_bytes};
    for (uint32_t k = 0; k < e->nw; k++) {
        par_worker *w = &e->w[k];
        *w = (par_worker){.e = e, .id = k, .lo = INFINITY, .hi = -INFINITY};
        w->hist = calloc(GX_TSIM_LAT_BINS, sizeof *w->hist);
        if (!w->hist)
            return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
        int rc = gx_memsys_new(p, &mc, &w->ms, msg);
        if (rc != GX_OK)
            return rc;
    }
    if (!e->threaded)
        return GX_OK;
    for (uint32_t k = 0; k < e->nw; k++) {
        if (pthread_create(&e->w[k].th, NULL, worker_main, &e->w[k]) != 0)
            return gx_fail(msg, GX_ENOMEM, "sim: cannot start worker thread %u of %u", k + 1,
                           e->nw);
        e->w[k].started = 1;
    }
    return GX_OK;
}

int gx_tsim_par_start(gx_tsim *s, const gx_profile *p, uint32_t threads, uint32_t shard,
                      uint32_t shards, gx_msg *msg)
{
    if (s->par || s->ext || s->accesses || !s->ms)
        return gx_fail(msg, GX_EINVAL, "sim: a split run starts on a fresh simulator");
    if (threads < 1 || threads > GX_TSIM_MAX_THREADS || shards < 1 ||
        shards > GX_TSIM_MAX_SHARDS || shard >= shards)
        return gx_fail(msg, GX_EINVAL, "sim: threads 1..%d, shard I of N with I < N <= %d",
                       GX_TSIM_MAX_THREADS, GX_TSIM_MAX_SHARDS);
    const char *why = gx_tsim_par_blocker(p, &s->cfg);
    if (why)
        return gx_fail(msg, GX_EINVAL, "sim: this run cannot be split: %s", why);
    struct gx_tsim_par *e = calloc(1, sizeof *e);
    s->ext = calloc(1, sizeof *s->ext);
    if (!e || !s->ext) {
        free(e);
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    }
    s->par = e;
    e->nf = s->topo == GX_TOPO_NEAR_FAR;
    e->spp = s->slices / (s->partitions ? s->partitions : 1);
    uint32_t groups = e->nf ? e->spp : s->slices;
    uint32_t mine = groups / shards + (groups % shards > shard); /* this shard's groups */
    uint32_t workers = threads > 1 ? threads - 1 : 1; /* beside the calling thread */
    e->nw = workers < mine ? workers : mine ? mine : 1;
    e->threaded = threads > 1; /* --threads 1: the calling thread runs the L2 too */
    e->shard = shard;
    e->shards = shards;
    e->sector_shift = (uint32_t)__builtin_ctz(s->sector_bytes);
    e->sector_mask = s->sector_bytes - 1ULL;
    e->vm = gx_memsys_vmem(s->ms);
    e->l2 = gx_memsys_l2(s->ms);
    s->ext->shard = shard;
    s->ext->shards = shards;
    s->ext->threads = e->nw;
    if (pthread_mutex_init(&e->mu, NULL) || pthread_cond_init(&e->work, NULL) ||
        pthread_cond_init(&e->done, NULL))
        return gx_fail(msg, GX_ENOMEM, "sim: cannot set up the worker threads");
    e->sync_ok = 1;
    e->cur = &e->buf[0];
    e->owner = malloc(s->slices ? s->slices : 1);
    if (!e->owner || alloc_batches(e) != GX_OK)
        return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    for (uint32_t i = 0; i < s->slices; i++) {
        uint32_t g = group_of(e, i);
        e->owner[i] = (uint8_t)(g % shards == shard ? g / shards % e->nw : NOT_MINE);
    }
    return start_workers(s, p, msg); /* on failure gx_tsim_free stops what started */
}

uint32_t gx_tsim_par_threads(const gx_tsim *s)
{
    return s->par ? s->par->nw : s->ext ? s->ext->threads : 0;
}

/* The workers stop after every published batch (none when stopping early). */
static void stop_workers(struct gx_tsim_par *e)
{
    if (!e->sync_ok)
        return;
    pthread_mutex_lock(&e->mu);
    e->stop = 1;
    pthread_cond_broadcast(&e->work);
    pthread_mutex_unlock(&e->mu);
    for (uint32_t k = 0; k < e->nw; k++)
        if (e->w[k].started) {
            pthread_join(e->w[k].th, NULL);
            e->w[k].started = 0;
        }
}

/* The workers' statistics into s: latencies, and the L2's into s->ext. */
static void join_stats(gx_tsim *s)
{
    struct gx_tsim_par *e = s->par;
    gx_tsim_ext *x = s->ext;
    x->slices = s->slices;
    x->slice_accesses = calloc(s->slices ? s->slices : 1, sizeof *x->slice_accesses);
    if (!x->slice_accesses) {
        x->oom = 1;
        return;
    }
    for (uint32_t k = 0; k < e->nw; k++) {
        par_worker *w = &e->w[k];
        for (uint32_t i = 0; i < GX_TSIM_LAT_BINS; i++)
            s->hist[i] += w->hist[i];
        gx_cyc_merge(&s->total, &w->total);
        s->accesses += w->accesses;
        for (int q = 0; q < 3; q++)
            s->op_count[q] += w->op_count[q];
        s->bytes += w->bytes;
        s->l2_accesses += w->l2_accesses;
        s->min_cycles = w->lo < s->min_cycles ? w->lo : s->min_cycles;
        s->max_cycles = w->hi > s->max_cycles ? w->hi : s->max_cycles;
        gx_l2_stats ls;
        gx_l2_get_stats(gx_memsys_l2(w->ms), &ls);
        for (int l = 0; l < 2; l++) {
            x->level[l].accesses += ls.level[l].accesses;
            x->level[l].hits += ls.level[l].hits;
            x->level[l].sector_misses += ls.level[l].sector_misses;
            x->level[l].line_misses += ls.level[l].line_misses;
        }
        x->dram_accesses += ls.dram_accesses;
        for (uint32_t i = 0; i < ls.slices && i < s->slices; i++)
            x->slice_accesses[i] += ls.slice_accesses[i];
    }
}

int gx_tsim_par_finish(gx_tsim *s, gx_msg *msg)
{
    struct gx_tsim_par *e = s->par;
    if (!e)
        return GX_OK;
    par_batch *b = &e->buf[e->filled % PAR_BUFFERS];
    if (b->n || b->nspan || !e->threaded)
        (void)next_batch(s);
    stop_workers(e);
    for (uint64_t k = 0; k < PAR_BUFFERS; k++) { /* in publishing order */
        par_batch *q = &e->buf[(e->filled + k) % PAR_BUFFERS];
        if (q->pending)
            reclaim(s, q);
    }
    join_stats(s);
    gx_tsim_par_free(e);
    s->par = NULL;
    return s->ext->oom ? gx_fail(msg, GX_ENOMEM, "sim: out of memory") : GX_OK;
}

void gx_tsim_par_free(gx_tsim_par *e)
{
    if (!e)
        return;
    stop_workers(e);
    for (uint32_t k = 0; k < e->nw; k++) {
        gx_memsys_free(e->w[k].ms);
        free(e->w[k].hist);
    }
    free(e->owner);
    for (int k = 0; k < PAR_BUFFERS; k++) {
        free(e->buf[k].items);
        free(e->buf[k].span);
        free(e->buf[k].part);
    }
    if (e->sync_ok) {
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->work);
        pthread_cond_destroy(&e->done);
    }
    free(e);
}

void gx_tsim_ext_free(gx_tsim_ext *x)
{
    if (!x)
        return;
    free(x->slice_accesses);
    free(x->xlate_json);
    free(x->xlate_text);
    free(x->smem_json);
    free(x->smem_text);
    free(x->span_index);
    free(x->span_lat);
    free(x);
}
