/* tsim_par_internal.h - the split trace simulator's state (tsim_par.c,
 * tsim_par_cols.c): batches, workers, and the frame memo of the calling
 * thread. The model notes are tsim_par.c's. */
#ifndef GX_TSIM_PAR_INTERNAL_H
#define GX_TSIM_PAR_INTERNAL_H

#include <pthread.h>

#include "gpuxray/tsimpar.h"
#include "tsim_internal.h"

/* Sectors one worker takes from one batch at most: 16 Ki x 32 B = 512 KiB,
 * a host-L2-sized handful per worker, and some 4000 batches per 64 M
 * accesses (the hand-over's cost spread thin). A build may set another
 * (-DPAR_BATCH_ITEMS=N) to measure the trade. */
#ifndef PAR_BATCH_ITEMS
#define PAR_BATCH_ITEMS 16384
#endif
/* Entries a worker hands the L2's batch run at a time: what one thread's
 * memory system hands it (MEMSYS_RUN_CHUNK, memsys.c). The run picks its
 * way of counting from how many of a run's entries repeat an (SM, slice,
 * outcome) (l2_run.c), which depends on the run's length: handed whole
 * batches (32 Ki entries), a worker of 32 SMs stayed in the counting mode
 * (a 64 KiB count table, missed in the host's L1) where one thread's runs of
 * 4 Ki take the direct mode; the process took ~15% more CPU time for it
 * (docs/performance.md, "Splitting a run"). */
#define PAR_RUN_CHUNK 4096
/* Batches in flight: the calling thread fills one while workers run others.
 * A split's two threads' times on a batch jitter by +-15% (a 2-vCPU virtual
 * machine): 8 buffers (and PAR_LEAN 8) let either side run ahead through
 * it; with 4 (and 4) each side waited 1.1-2.6x as long (docs/performance.md,
 * "The split's locating in steps"). Overridable (-DPAR_BUFFERS=N). */
#ifndef PAR_BUFFERS
#define PAR_BUFFERS 8
#endif
/* Accesses split between workers in one batch at most (a batch closes
 * early when they run out). */
#define PAR_SPANS 4096
/* A worker's entries of one batch at least (its columns' capacity). */
#define PAR_MIN_COLS 1024
/* Sectors of one access at most: GX_TRACE_MAX_SIZE bytes unaligned over
 * 1-byte sectors. */
#define PAR_MAX_SECTORS (GX_TRACE_MAX_SIZE + 1)

enum { ITEM_FIRST = 1, ITEM_LAST = 2 };
#define NOT_MINE 0xff /* owner[] of a slice of another shard (workers <= 64) */
#define NO_SPAN UINT32_MAX
/* The worker a split run's calling thread runs itself (the thread is w[0]). */
#define PAR_SELF 1
/* A split's balance decides after this many finished batches, and moves
 * when one side's time exceeds the other's by more than 1/PAR_MARGIN
 * (tsim_par.c, "balance"). Overridable to measure. */
#ifndef PAR_LEAN
#define PAR_LEAN 8
#endif
#ifndef PAR_MARGIN
#define PAR_MARGIN 10
#endif
/* Below level 0 the calling thread locates the first (PAR_FRAC + level) /
 * PAR_FRAC of the worker's entries of a batch, the worker the rest: levels
 * -PAR_FRAC (the worker locates all) to -1 */
#define PAR_FRAC 8
#define NO_MIG UINT64_MAX

/* One sector of an access of several sectors, in trace order, read by its
 * worker (FIRST / LAST: that worker's first / last sector of the access). */
typedef struct par_item {
    gx_l2_loc loc; /* not in a pipeline (there the worker places and locates) */
    uint64_t va;   /* a pipeline's: the whole access */
    uint32_t size;
    uint32_t sm;
    uint8_t op, flags, worker;
    uint32_t span; /* NO_SPAN: the worker accounts the access itself */
} par_item;

/* Where a worker's run of one-sector entries stops for one of its items. */
typedef struct par_mark {
    uint32_t col;  /* the worker's entries before it */
    uint32_t item; /* into the batch's items */
} par_mark;

typedef struct par_span {
    uint64_t index; /* among the trace's global accesses */
    int cross;      /* some of its sectors belong to other shards */
} par_span;

/* A worker's part of one batch: its one-sector entries as the L2's batch
 * run takes them (gx_l2_run: the sector of pa[i] from sm[i], rep[i] more of
 * the same; in a pipeline virtual addresses, as gx_memsys_run_off takes
 * them), and the marks where its sectors of wider accesses fall in. */
typedef struct par_cols {
    uint64_t *pa;
    uint32_t *sm, *rep;
    uint64_t *lw; /* location words (gx_l2_locate_words); unread in a pipeline */
    uint32_t n;
    /* rep[0 .. n) written; 0: every entry without repeats (a split run's
     * straight path writes no repeat column for batches without: the L2's
     * batch run then counts inside its lookups) */
    int has_rep;
    /* lw[0 .. loc_end) written (the calling thread located them); from
     * loc_end on placed only, the worker locates (gx_l2_run), lw not read */
    uint32_t loc_end;
    par_mark *mark;
    uint32_t n_mark;
} par_cols;

typedef struct par_batch {
    par_item *items; /* PAR_BATCH_ITEMS */
    uint32_t n;
    par_cols *cols;    /* one per worker, cols_cap entries each */
    par_span *span;
    double *part;      /* PAR_SPANS x workers: a worker's largest latency, -inf: none */
    uint32_t nspan;
    uint32_t remaining; /* workers still running it */
    int pending;        /* published, not yet reclaimed */
    /* a split's balance: the nanoseconds the calling thread spent filling
     * it and running its PAR_SELF part, and the worker running its part */
    uint64_t fill_ns, work_ns;
} par_batch;

typedef struct par_worker {
    struct gx_tsim_par *e;
    uint32_t id;
    pthread_t th;
    int started;
    gx_memsys *ms; /* its own L2 (and the parts it does not use) */
    gx_l2_tally t; /* its accesses' latencies; t.sectors: its one-sector entries' L2 accesses */
} par_worker;

struct gx_tsim_par {
    uint32_t nw, shard, shards, spp, sector_shift, cols_cap;
    /* one worker, one shard, threads: a pipeline. The calling thread only
     * decodes; the worker places frames, locates and runs everything (its
     * memory system sees the whole trace in order, as one thread's would),
     * so the trace's reading and the model overlap on two cores. */
    int pipe;
    /* --threads 2 on the L2's specialised path, split: two logical
     * workers, w[0] a thread and w[PAR_SELF] run by the calling thread
     * itself as it hands each batch over; the calling thread decodes,
     * places and locates, routes each entry to its slice's owner, and runs
     * its own slices' part of every batch (the share that balances the two:
     * tsim_par.c, "split") */
    int split;
    /* a split's share (tsim_par.c, "balance"): level -PAR_FRAC the worker
     * locates (the calling thread places only), -PAR_FRAC < L < 0 the
     * calling thread locates a share of each batch (PAR_FRAC), 0 it locates
     * all, L >= 1 it also owns slices 0 .. L-1 (owner[] PAR_SELF) and runs
     * their part */
    int level, level_max;
    uint64_t fill_t0;          /* when the calling thread started filling the current batch */
    uint64_t sum_fill, sum_work; /* of the batches reclaimed since the last decision */
    uint32_t n_sum;
    int sweep;     /* testing (gx_tsim_par_sweep): a move every batch, up and down */
    int sweep_dir;
    uint64_t self_next;   /* the first batch (publishing number) whose PAR_SELF part has not run */
    uint64_t mig_seq;     /* slice mig_slice is PAR_SELF's from batch mig_seq on (NO_MIG: none) */
    uint32_t mig_slice;
    uint64_t worker_done; /* batches w[0] has finished (under mu) */
    uint32_t cols_dist;   /* entries between a column's addresses and its words (lw = pa + it) */
    uint64_t sector_mask;
    uint8_t *owner;  /* per slice: the worker of its group, NOT_MINE: another shard's */
    par_batch *cur;  /* the batch being filled */
    int nf, threaded, stop;
    int spin; /* a CPU for each thread: a waiting thread polls first (tsim_par.c) */
    gx_vmem *vm;     /* the calling thread's: frames placed in trace order */
    const gx_l2 *l2; /* the calling thread's: locates only */
    /* frames remembered (VA page -> frame, direct mapped, gx_frame_memo):
     * consecutive accesses mostly share pages, and a remembered frame is
     * the one gx_vmem_pa placed on the page's first touch;
     * gx_l2_locate_words_va translates through it as it locates */
    gx_frame_memo fmemo;
    par_batch buf[PAR_BUFFERS];
    uint64_t filled; /* batches published */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int sync_ok;
    uint64_t acc_index;
    par_worker w[GX_TSIM_MAX_THREADS];
};


/* The physical address of va, its frame placed in trace order (remembered:
 * the same frame gx_vmem_pa gives every later access of the page). */
static inline uint64_t frame_pa(struct gx_tsim_par *e, uint64_t va)
{
    return gx_frame_pa(&e->fmemo, va);
}

/* The repeat column of pc, written from entry at on: the entries before
 * it had none (zeros, once). */
static inline uint32_t *reps_from(par_cols *pc, uint32_t at)
{
    if (!pc->has_rep) {
        for (uint32_t i = 0; i < at; i++)
            pc->rep[i] = 0;
        pc->has_rep = 1;
    }
    return pc->rep + at;
}

/* tsim_par.c, for the column paths (tsim_par_cols.c) */
par_batch *gx_par_next_batch(gx_tsim *s);
void gx_par_put_sectors(gx_tsim *s, uint64_t addr, uint32_t size, uint8_t op, uint32_t sm,
                        int count);
int gx_par_put_one(gx_tsim *s, uint64_t addr, uint32_t sm, uint32_t rep);

#endif
