/* tsim_par.c - the trace simulator split over worker threads and shards
 * (tsimpar.h): the calling thread decodes, places frames and finds every
 * sector's home slice in trace order; workers own slice groups and run
 * their sectors, in trace order, through the L2's batch run.
 *
 * Models: the same as tsim.c, sector for sector; see tsimpar.h for what is
 * independent and which runs are not split (gx_tsim_par_blocker).
 *
 * Notes:
 * - Work moves in batches through a ring of PAR_BUFFERS buffers (fixed
 *   memory); one mutex and two condition variables per batch hand them
 *   over (no spinning, which would steal the core of a machine with fewer
 *   cores than threads).
 * - A batch holds, per worker, its one-sector entries as columns (physical
 *   address, location word, SM, repeats: what gx_l2_run_located takes, so a
 *   worker runs the same specialised loop as one thread without hashing
 *   again) and marks where a sector of a wider access falls in among them
 *   (those sectors are items, in trace order).
 * - `--threads 2` on the L2's specialised path (uniform topology, 16-way
 *   tree PLRU or plru-rand, no noise: the seed card and most profiles) is a
 *   **split**: two logical workers, the thread w[0] and w[PAR_SELF] run by
 *   the calling thread itself as it hands each batch over. The calling
 *   thread decodes, places and locates, and the share of the model it also
 *   runs moves with the trace ("balance" below): at level -PAR_FRAC the
 *   worker locates (hits: the calling thread is the slower side), between
 *   it and 0 the calling thread locates a share of each batch, at 0 all of
 *   it and the worker runs every lookup, at L >= 1 the calling
 *   thread also owns slices 0 .. L-1 (misses: the worker is the slower
 *   side), each slice moving between the two L2 copies with its state
 *   (gx_l2_copy_slice); text and Accel-Sim input the same way (their
 *   decoding sends the split below 0). On any other L2 it is a
 *   pipeline: the calling thread only decodes and hands over virtual
 *   addresses; the worker's memory system places the frames and runs
 *   everything (gx_memsys_run_off), seeing the whole trace in order as one
 *   thread's would. The column paths: tsim_par_cols.c.
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
#include <sched.h>
#include <time.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/policy.h"
#include "tsim_par_internal.h"


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

/* One item (a sector of a wider access) at the worker's place in trace order. */
static void run_item(par_worker *w, par_batch *b, const par_item *it, gx_l2 *l2, double *m)
{
    gx_l2_result r;
    gx_l2_access_loc(l2, &it->loc, it->sm, (gx_l2_op)it->op, &r);
    double lat = r.latency_cycles;
    *m = (it->flags & ITEM_FIRST) || lat > *m ? lat : *m; /* as gx_memsys_access_off */
    if (!(it->flags & ITEM_LAST))
        return;
    if (it->span == NO_SPAN)
        gx_l2_tally_add(&w->t, *m);
    else
        b->part[(size_t)it->span * w->e->nw + w->id] = *m;
}

/* A worker's part of one batch, in trace order: runs of one-sector entries
 * through the L2's batch run (which locates and prefetches ahead itself),
 * broken where a sector of a wider access falls in. */
/* A pipeline's part: everything, through the worker's memory system. */
static void run_pipe(par_worker *w, par_batch *b)
{
    const par_cols *c = &b->cols[0];
    uint32_t at = 0;
    for (uint32_t k = 0; k < c->n_mark; k++) {
        const par_mark *mk = &c->mark[k];
        if (mk->col > at) {
            gx_memsys_run_off(w->ms, c->pa + at, c->sm + at, c->rep + at, mk->col - at, &w->t);
            at = mk->col;
        }
        const par_item *it = &b->items[mk->item];
        gx_l2_tally_add(&w->t, gx_memsys_access_off(w->ms, it->va, it->size, it->sm,
                                                    (gx_l2_op)it->op, NULL, &w->t.sectors));
    }
    if (c->n > at)
        gx_memsys_run_off(w->ms, c->pa + at, c->sm + at, c->rep + at, c->n - at, &w->t);
}

/* rep[0 .. n) when any entry has repeats, else NULL: the L2's batch run
 * counts a block without repeats inside its lookups (its counting mode),
 * as one thread's memory system does for a batch the reader left without
 * (the same statistics: a NULL column reads as zeros) */
static const uint32_t *reps_or_null(const uint32_t *rep, uint32_t n)
{
    uint32_t any = 0;
    for (uint32_t i = 0; i < n; i++)
        any |= rep[i];
    return any ? rep : NULL;
}

/* Entries [at, end) of c through the L2's batch run, PAR_RUN_CHUNK at a time. */
static void run_cols(par_worker *w, gx_l2 *l2, const par_cols *c, uint32_t at, uint32_t end)
{
    while (at < end) {
        const uint32_t k = end - at < PAR_RUN_CHUNK ? end - at : PAR_RUN_CHUNK;
        const uint32_t *rep = c->has_rep ? reps_or_null(c->rep + at, k) : NULL;
        if (at < c->loc_end) {
            const uint32_t kl = c->loc_end - at < k ? c->loc_end - at : k;
            gx_l2_run_located(l2, c->pa + at, c->lw + at, c->sm + at, rep, kl, &w->t);
            at += kl;
        } else { /* the same model, located here */
            gx_l2_run(l2, c->pa + at, c->sm + at, rep, k, &w->t);
            at += k;
        }
    }
}

static void run_part(par_worker *w, par_batch *b)
{
    if (w->e->pipe) {
        run_pipe(w, b);
        return;
    }
    gx_l2 *l2 = gx_memsys_l2(w->ms);
    const par_cols *c = &b->cols[w->id];
    uint32_t at = 0;
    double m = 0;
    for (uint32_t k = 0; k < c->n_mark; k++) {
        const par_mark *mk = &c->mark[k];
        run_cols(w, l2, c, at, mk->col);
        at = mk->col > at ? mk->col : at;
        run_item(w, b, &b->items[mk->item], l2, &m);
    }
    run_cols(w, l2, c, at, c->n);
}

/* ---- waiting: a short spin first ----
 * A thread that waits for the other one first polls for up to
 * PAR_SPIN_NS (when the run has a CPU for each thread), then sleeps on the
 * condition variable: a sleeping thread's wake-up costs tens of
 * microseconds on a virtual machine (the host deschedules an idle vCPU),
 * and a hand-over comes every few hundred. The polled fields are written
 * with atomic stores (under the mutex as before). */
#define PAR_SPIN_NS 50000

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Poll (up to PAR_SPIN_NS) until batch seq is published or the run stops. */
static void spin_for_work(struct gx_tsim_par *e, uint64_t seq)
{
    if (!e->spin)
        return;
    const uint64_t t0 = now_ns();
    for (uint32_t k = 1;; k++) {
        if (__atomic_load_n(&e->filled, __ATOMIC_ACQUIRE) > seq ||
            __atomic_load_n(&e->stop, __ATOMIC_ACQUIRE))
            return;
        cpu_relax();
        if (!(k & 63) && now_ns() - t0 > PAR_SPIN_NS)
            return;
    }
}

/* Poll (up to PAR_SPIN_NS) until no worker runs batch b. */
static void spin_for_done(struct gx_tsim_par *e, par_batch *b)
{
    if (!e->spin)
        return;
    const uint64_t t0 = now_ns();
    for (uint32_t k = 1;; k++) {
        if (!__atomic_load_n(&b->remaining, __ATOMIC_ACQUIRE))
            return;
        cpu_relax();
        if (!(k & 63) && now_ns() - t0 > PAR_SPIN_NS)
            return;
    }
}

static void *worker_main(void *arg)
{
    par_worker *w = arg;
    struct gx_tsim_par *e = w->e;
    for (uint64_t seq = 0;; seq++) {
        spin_for_work(e, seq);
        pthread_mutex_lock(&e->mu);
        while (e->filled <= seq && !e->stop)
            pthread_cond_wait(&e->work, &e->mu);
        int go = e->filled > seq;
        pthread_mutex_unlock(&e->mu);
        if (!go)
            return NULL;
        par_batch *b = &e->buf[seq % PAR_BUFFERS];
        const uint64_t t0 = e->split ? now_ns() : 0;
        run_part(w, b);
        if (e->split)
            b->work_ns = now_ns() - t0;
        pthread_mutex_lock(&e->mu);
        e->worker_done = seq + 1;
        if (__atomic_sub_fetch(&b->remaining, 1, __ATOMIC_RELEASE) == 0)
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
    for (uint32_t k = 0; k < nw; k++) {
        b->cols[k].n = b->cols[k].n_mark = 0;
        b->cols[k].has_rep = !s->par->split;
    }
    b->pending = 0;
}

/* ---- a split's balance ----
 * Two threads, one of them the calling thread, whose own work (decoding,
 * placing, locating) depends on the trace: the share that keeps both busy
 * is found as the run goes. Each thread times its work on each batch (the
 * calling thread filling it and running its PAR_SELF part, the worker its
 * part); over every PAR_LEAN finished batches, the side whose time is more
 * than 1/PAR_MARGIN above the other's gives the other one step: level
 * -PAR_FRAC the worker locates, -PAR_FRAC < L < 0 the calling thread
 * locates the first (PAR_FRAC + L) / PAR_FRAC of the worker's entries of a
 * batch (a step of locating: with only -1 and 0, a hit-dominated run went
 * back and forth between the two, each side waiting in turn), 0 all of
 * them, L >= 1 it also owns slices 0 .. L-1. (Measured by time, not by who waited: the batches queued
 * at a hand-over swing with the last batch, and a split moved up and down
 * around the even point at every few batches.) A slice moves with
 * its state (gx_l2_copy_slice), so every level gives the same statistics:
 * - to the worker (L down): once every PAR_SELF part has run, the calling
 *   thread's copy of the slice is final and the worker, which has no entry
 *   of it in any queued batch, takes it from the next batch on;
 * - to the calling thread (L up): from the next batch on, mig_seq; its
 *   PAR_SELF parts from mig_seq on wait (run_self_parts) until the worker
 *   has finished every batch before mig_seq, then the slice's state is
 *   copied from the worker's L2. The calling thread never waits for it: the
 *   parts run at a later hand-over (at the latest before their buffer is
 *   reused, when the worker is past them). */

/* The PAR_SELF parts of the published batches, in order, as far as a
 * slice moving to this thread allows. */
static void run_self_parts(struct gx_tsim_par *e)
{
    while (e->self_next < e->filled) {
        if (e->mig_seq == e->self_next) {
            pthread_mutex_lock(&e->mu);
            const uint64_t done = e->worker_done;
            pthread_mutex_unlock(&e->mu);
            if (done < e->mig_seq)
                return; /* the worker still runs a batch with the slice */
            (void)gx_l2_copy_slice(gx_memsys_l2(e->w[PAR_SELF].ms), gx_memsys_l2(e->w[0].ms),
                                   e->mig_slice);
            e->mig_seq = NO_MIG;
        }
        par_batch *b = &e->buf[e->self_next % PAR_BUFFERS];
        const uint64_t t0 = now_ns();
        run_part(&e->w[PAR_SELF], b);
        b->fill_ns += now_ns() - t0; /* this thread's time on the batch */
        e->self_next++;
    }
}

/* One step up: the worker's slice `level` to this thread from the next
 * batch on (one move pending at a time); 0 when it cannot now. */
static int level_up(struct gx_tsim_par *e)
{
    if (e->level >= e->level_max || e->mig_seq != NO_MIG)
        return 0;
    if (e->level >= 0) {
        e->mig_slice = (uint32_t)e->level;
        e->mig_seq = e->filled; /* the batch being filled next */
        e->owner[e->mig_slice] = PAR_SELF;
    }
    e->level++;
    return 1;
}

/* One step down: this thread's slice level - 1 to the worker (its state
 * copied into the worker's L2 once every PAR_SELF part has run); 0 when
 * it cannot now. */
static int level_down(struct gx_tsim_par *e)
{
    if (e->level <= -PAR_FRAC)
        return 0;
    if (e->level >= 1) {
        if (e->self_next != e->filled || e->mig_seq != NO_MIG)
            return 0;
        const uint32_t sl = (uint32_t)e->level - 1;
        (void)gx_l2_copy_slice(gx_memsys_l2(e->w[0].ms), gx_memsys_l2(e->w[PAR_SELF].ms), sl);
        e->owner[sl] = 0;
    }
    e->level--;
    return 1;
}

/* The level of the batch filled next, from the two threads' times on the
 * batch that finished at this hand-over (done; NULL: none did). */
static void balance(struct gx_tsim_par *e, const par_batch *done)
{
    if (e->sweep) { /* every level, up and down, a move every batch */
        if (!(e->sweep_dir > 0 ? level_up(e) : level_down(e))) {
            e->sweep_dir = -e->sweep_dir;
            (void)(e->sweep_dir > 0 ? level_up(e) : level_down(e));
        }
        return;
    }
    if (!done) /* no batch finished at this hand-over */
        return;
    e->sum_fill += done->fill_ns;
    e->sum_work += done->work_ns;
    if (++e->n_sum < PAR_LEAN)
        return;
    const uint64_t c = e->sum_fill, w = e->sum_work;
    if (w > c + c / PAR_MARGIN ? level_up(e) : c > w + w / PAR_MARGIN ? level_down(e) : 1)
        e->sum_fill = e->sum_work = e->n_sum = 0; /* moved, or even: a fresh count */
}

/* Hand the batch being filled to the workers (or run it here, one worker)
 * and make the next buffer ready. */
par_batch *gx_par_next_batch(gx_tsim *s)
{
    struct gx_tsim_par *e = s->par;
    par_batch *b = &e->buf[e->filled % PAR_BUFFERS];
    if (!e->threaded) {
        run_part(&e->w[0], b);
        reclaim(s, b);
        return e->cur = b;
    }
    if (e->split)
        b->fill_ns += now_ns() - e->fill_t0;
    pthread_mutex_lock(&e->mu);
    __atomic_store_n(&b->remaining, e->nw - (uint32_t)e->split, __ATOMIC_RELAXED);
    b->pending = 1;
    __atomic_store_n(&e->filled, e->filled + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&e->work);
    pthread_mutex_unlock(&e->mu);
    if (e->split) /* this thread's parts, while the worker runs its own */
        run_self_parts(e);
    par_batch *nb = &e->buf[e->filled % PAR_BUFFERS];
    spin_for_done(e, nb);
    pthread_mutex_lock(&e->mu);
    while (nb->remaining)
        pthread_cond_wait(&e->done, &e->mu);
    pthread_mutex_unlock(&e->mu);
    int was_pending = nb->pending;
    if (nb->pending && e->split) /* its PAR_SELF part first (the worker is past it) */
        run_self_parts(e);
    if (e->split) { /* the next batch's filling starts: balance on the one finished */
        e->fill_t0 = now_ns();
        balance(e, was_pending ? nb : NULL);
        nb->fill_ns = nb->work_ns = 0;
    }
    if (nb->pending)
        reclaim(s, nb);
    if (e->split) /* the calling thread's share of the locating */
        nb->cols[0].loc_end = e->level >= 0 ? UINT32_MAX
                                            : e->cols_cap / PAR_FRAC * (uint32_t)(PAR_FRAC + e->level);
    return e->cur = nb;
}

/* The frame memo's miss (gx_frame_memo, l2.h): va's frame, placed in trace
 * order by the calling thread's memory system. */
static void fmemo_fill(gx_frame_memo *m, uint64_t va)
{
    const struct gx_tsim_par *e = m->ctx;
    const uint64_t vfn = va >> m->shift, base = va & ~(((uint64_t)1 << m->shift) - 1);
    m->tag[vfn & (GX_FRAME_MEMO - 1)] = vfn;
    m->delta[vfn & (GX_FRAME_MEMO - 1)] = gx_vmem_pa(e->vm, base) - base;
}

static uint32_t group_of(const struct gx_tsim_par *e, uint32_t slice)
{
    return e->nf ? slice % e->spp : slice;
}

/* The batch being filled, or the next one when this one cannot take one
 * more entry of worker w (w >= nw: none). */
static inline par_batch *room_one(gx_tsim *s, uint32_t w)
{
    struct gx_tsim_par *e = s->par;
    par_batch *b = e->cur;
    if (__builtin_expect(w < e->nw && b->cols[w].n == e->cols_cap, 0))
        return gx_par_next_batch(s);
    return b;
}

/* The same for ns items of the workers in wk[] (own[] set). */
static par_batch *room_items(gx_tsim *s, uint32_t ns, const uint8_t *own, const uint8_t *wk)
{
    struct gx_tsim_par *e = s->par;
    par_batch *b = e->cur;
    if (b->n + ns > PAR_BATCH_ITEMS || b->nspan == PAR_SPANS)
        return gx_par_next_batch(s);
    for (uint32_t j = 0; j < ns; j++)
        if (own[j] && b->cols[wk[j]].n_mark + ns > e->cols_cap)
            return gx_par_next_batch(s);
    return b;
}

/* An access of several sectors: its sectors located (frames placed in
 * trace order), this shard's handed to their workers as items, with a slot
 * for its latency when they are not all one worker's. count: the access
 * counted here (records; a column batch counts its accesses as a whole). */
void gx_par_put_sectors(gx_tsim *s, uint64_t addr, uint32_t size, uint8_t op, uint32_t sm,
                        int count)
{
    struct gx_tsim_par *e = s->par;
    if (e->pipe) { /* the worker places, locates and runs it whole */
        uint8_t own0 = 1, wk0 = 0;
        par_batch *b = room_items(s, 1, &own0, &wk0);
        par_cols *c = &b->cols[0];
        c->mark[c->n_mark++] = (par_mark){c->n, b->n};
        b->items[b->n++] = (par_item){.va = addr, .size = size, .sm = sm, .op = op};
        if (count) {
            s->accesses++;
            s->op_count[op < 3 ? op : 0]++;
            s->bytes += size;
        }
        return;
    }
    const uint64_t index = e->acc_index++;
    const uint32_t sh = e->sector_shift;
    uint64_t first = addr >> sh, end = addr + size - 1;
    uint64_t last = (end < addr ? UINT64_MAX : end) >> sh;
    gx_l2_loc loc[PAR_MAX_SECTORS];
    uint8_t own[PAR_MAX_SECTORS], wk[PAR_MAX_SECTORS];
    uint32_t ns = 0, mine = 0;
    int other = 0, single;
    for (uint64_t k = first;; k++) { /* the sectors gx_memsys_access_off touches */
        uint64_t pa = frame_pa(e, k == first ? addr : k << sh);
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
    if (own[0] && count) { /* the shard of the first sector counts the access */
        s->accesses++;
        s->op_count[op < 3 ? op : 0]++;
        s->bytes += size;
    }
    s->l2_accesses += mine;
    if (!mine)
        return;
    par_batch *b = room_items(s, ns, own, wk);
    if (e->split) /* the hand-over may have moved a slice (balance): its owner now */
        for (uint32_t j = 0; j < ns; j++)
            wk[j] = e->owner[loc[j].slice];
    uint32_t w0 = 0;
    for (uint32_t j = 0; j < ns; j++)
        if (own[j]) {
            w0 = wk[j];
            break;
        }
    single = !other;
    for (uint32_t j = 0; j < ns && single; j++)
        single = !own[j] || wk[j] == w0;
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
        par_cols *c = &b->cols[wk[j]];
        c->mark[c->n_mark++] = (par_mark){c->n, b->n};
        b->items[b->n++] =
            (par_item){.loc = loc[j], .sm = sm, .op = op, .flags = fl, .worker = wk[j],
                       .span = span};
    }
}

/* One entry of one-sector accesses (rep more of the same after it): its
 * frame placed here (trace order), its home slice found, handed to the
 * slice's worker; 1 when this shard runs it. */
static inline int put_one(gx_tsim *s, uint64_t addr, uint32_t sm, uint32_t rep)
{
    struct gx_tsim_par *e = s->par;
    if (e->pipe) { /* the worker places and locates it */
        par_cols *c = &room_one(s, 0)->cols[0];
        c->pa[c->n] = addr;
        c->sm[c->n] = sm;
        c->rep[c->n++] = rep;
        return 1;
    }
    const uint64_t pa = frame_pa(e, addr);
    uint64_t lw;
    gx_l2_locate_words(e->l2, &pa, &sm, &lw, 1);
    if (e->split) { /* the batch it goes to first: a hand-over may move a slice (balance) */
        (void)room_one(s, 0);
        (void)room_one(s, PAR_SELF);
    }
    const uint8_t o = e->owner[gx_l2_word_slice(lw)];
    e->acc_index += 1 + (uint64_t)rep;
    if (o == NOT_MINE)
        return 0;
    par_cols *c = &room_one(s, o)->cols[o];
    c->lw[c->n] = lw;
    c->pa[c->n] = pa;
    c->sm[c->n] = sm;
    *reps_from(c, c->n++) = rep;
    return 1;
}

int gx_par_put_one(gx_tsim *s, uint64_t addr, uint32_t sm, uint32_t rep)
{
    return put_one(s, addr, sm, rep);
}

void gx_tsim_par_run(gx_tsim *s, const gx_trace_rec *rec, uint64_t n)
{
    struct gx_tsim_par *e = s->par;
    const uint32_t smc = s->sm_count;
    const uint64_t smask = e->sector_mask;
    const int counts_others = e->shard == 0; /* records off the L2: counted once */
    for (uint64_t i = 0; i < n; i++) {
        const gx_trace_rec *r = &rec[i];
        if (!gx_trace_op_is_global(r->op)) {
            if (counts_others)
                gx_tsim_other(s, r);
            continue;
        }
        const uint32_t sm = r->sm < smc ? r->sm : r->sm % smc;
        if (__builtin_expect((r->addr & smask) + r->size > smask + 1, 0)) {
            gx_par_put_sectors(s, r->addr, r->size, r->op, sm, 1);
        } else if (put_one(s, r->addr, sm, 0)) { /* this shard's: counted here */
            s->accesses++;
            s->op_count[r->op < 3 ? r->op : 0]++;
            s->bytes += r->size;
        }
    }
}

int gx_tsim_par_takes_cols(const gx_tsim *s)
{
    return s->par && s->par->shards == 1;
}


/* ---- start, finish ---- */

static int alloc_batches(struct gx_tsim_par *e)
{
    for (int k = 0; k < PAR_BUFFERS; k++) {
        par_batch *b = &e->buf[k];
        b->items = malloc(PAR_BATCH_ITEMS * sizeof *b->items);
        b->span = malloc(PAR_SPANS * sizeof *b->span);
        b->part = malloc((size_t)PAR_SPANS * e->nw * sizeof *b->part);
        b->cols = calloc(e->nw, sizeof *b->cols);
        if (!b->items || !b->span || !b->part || !b->cols)
            return GX_ENOMEM;
        for (uint32_t w = 0; w < e->nw; w++) {
            par_cols *c = &b->cols[w];
            /* the words right after the addresses: lw = pa + cols_dist, the
             * one distance gx_l2_locate_split writes a split's entries by */
            c->pa = malloc(2 * (size_t)e->cols_dist * sizeof *c->pa);
            c->sm = malloc(e->cols_dist * sizeof *c->sm);
            c->rep = malloc(e->cols_dist * sizeof *c->rep);
            c->mark = malloc(e->cols_dist * sizeof *c->mark);
            c->lw = c->pa ? c->pa + e->cols_dist : NULL;
            c->loc_end = UINT32_MAX;
            c->has_rep = !e->split;
            if (!c->pa || !c->sm || !c->rep || !c->mark)
                return GX_ENOMEM;
        }
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
        *w = (par_worker){.e = e, .id = k};
        w->t = (gx_l2_tally){{0}, INFINITY, -INFINITY, NULL, GX_TSIM_LAT_BINS, 0};
        w->t.hist = calloc(GX_TSIM_LAT_BINS, sizeof *w->t.hist);
        if (!w->t.hist)
            return gx_fail(msg, GX_ENOMEM, "sim: out of memory");
        int rc = gx_memsys_new(p, &mc, &w->ms, msg);
        if (rc != GX_OK)
            return rc;
    }
    if (!e->threaded)
        return GX_OK;
    for (uint32_t k = 0; k < e->nw; k++) {
        if (e->split && k == PAR_SELF)
            continue; /* run by the calling thread */
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
    e->pipe = e->threaded && e->nw == 1 && shards == 1;
    /* on the L2's specialised path the calling thread places and locates
     * too, and runs a share of the slices: a split */
    if (e->pipe && gx_l2_words_hold_sets(gx_memsys_l2(s->ms))) {
        e->pipe = 0;
        e->split = 1;
        e->nw = 2;
    }
    e->mig_seq = NO_MIG;
    e->fill_t0 = now_ns();
    {   /* a CPU for the calling thread and each worker thread: poll first */
        cpu_set_t cs;
        const uint32_t need = 1 + e->nw - (uint32_t)e->split;
        e->spin = e->threaded && sched_getaffinity(0, sizeof cs, &cs) == 0 &&
                  (uint32_t)CPU_COUNT(&cs) >= need;
    }
    e->level_max = (int)(s->slices / 4); /* a quarter of the slices at most */
    e->sweep_dir = 1;
    e->shard = shard;
    e->shards = shards;
    e->sector_shift = (uint32_t)__builtin_ctz(s->sector_bytes);
    e->sector_mask = s->sector_bytes - 1ULL;
    /* a worker's entries of one batch at most: twice its even share, so
     * the memory stays about two batches' whatever the worker count */
    e->cols_cap = 2 * PAR_BATCH_ITEMS / e->nw;
    if (e->cols_cap < PAR_MIN_COLS)
        e->cols_cap = PAR_MIN_COLS;
    e->cols_dist = e->cols_cap;
    /* pages of a power of two: gx_memsys_new checked it */
    e->fmemo.shift = (uint32_t)__builtin_ctzll(s->page_bytes);
    e->fmemo.miss = fmemo_fill;
    e->fmemo.ctx = e;
    for (uint64_t j = 0; j < GX_FRAME_MEMO; j++)
        e->fmemo.tag[j] = j ^ 1; /* never matched: a VFN in slot j ends in j */
    e->vm = gx_memsys_vmem(s->ms);
    e->l2 = gx_memsys_l2(s->ms);
    s->ext->shard = shard;
    s->ext->shards = shards;
    s->ext->threads = e->nw - (uint32_t)e->split;
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
        if (e->split) /* level 0: every slice the worker's (w[0]) */
            e->owner[i] = 0;
    }
    int rc = start_workers(s, p, msg); /* on failure gx_tsim_free stops what started */
    /* a split's columns hold no SMs once located: the specialised run
     * (its latency table) must be ready in both L2s */
    for (uint32_t k = 0; rc == GX_OK && e->split && k < e->nw; k++)
        if (!gx_l2_run_located_ready(gx_memsys_l2(e->w[k].ms), GX_TSIM_LAT_BINS))
            rc = gx_fail(msg, GX_ENOMEM, "sim: out of memory");
    return rc;
}

void gx_tsim_par_sweep(gx_tsim *s)
{
    struct gx_tsim_par *e = s->par;
    if (!e || !e->split || e->filled || e->cur->cols[0].n || e->cur->cols[PAR_SELF].n)
        return;
    e->sweep = 1;
    e->cols_cap = PAR_MIN_COLS / 4; /* short batches: many moves */
    e->level_max = e->level_max < 3 ? e->level_max : 3;
}

uint32_t gx_tsim_par_threads(const gx_tsim *s)
{
    return s->par ? s->par->nw - (uint32_t)s->par->split : s->ext ? s->ext->threads : 0;
}

/* The workers stop after every published batch (none when stopping early). */
static void stop_workers(struct gx_tsim_par *e)
{
    if (!e->sync_ok)
        return;
    pthread_mutex_lock(&e->mu);
    __atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
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
            s->hist[i] += w->t.hist[i];
        gx_cyc_merge(&s->total, &w->t.total);
        s->l2_accesses += w->t.sectors;
        s->min_cycles = w->t.lo < s->min_cycles ? w->t.lo : s->min_cycles;
        s->max_cycles = w->t.hi > s->max_cycles ? w->t.hi : s->max_cycles;
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
    int empty = !b->n && !b->nspan;
    for (uint32_t k = 0; k < e->nw; k++)
        empty &= !b->cols[k].n;
    if (!empty || !e->threaded)
        (void)gx_par_next_batch(s);
    stop_workers(e);
    if (e->split) /* the worker is done: every PAR_SELF part can run */
        run_self_parts(e);
    for (uint64_t k = 0; k < PAR_BUFFERS; k++) { /* in publishing order */
        par_batch *q = &e->buf[(e->filled + k) % PAR_BUFFERS];
        if (q->pending)
            reclaim(s, q);
    }
    join_stats(s);
    if (e->pipe) { /* its frames were placed by the worker's memory system */
        gx_vmem_usage(gx_memsys_vmem(e->w[0].ms), &s->ext->pages, &s->ext->frames);
        s->ext->usage_here = 1;
    }
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
        free(e->w[k].t.hist);
    }
    free(e->owner);
    for (int k = 0; k < PAR_BUFFERS; k++) {
        par_batch *b = &e->buf[k];
        for (uint32_t w = 0; b->cols && w < e->nw; w++) {
            free(b->cols[w].pa);
            free(b->cols[w].sm);
            free(b->cols[w].rep);
            free(b->cols[w].mark);
        }
        free(b->cols);
        free(b->items);
        free(b->span);
        free(b->part);
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
