/* tsimpar.h - the trace simulator (trace.h, gx_tsim) split over threads and
 * over processes, with statistics identical to one thread's.
 *
 * What is independent in the model (memsys.h): the L2 state of one slice
 * group (a slice; near-far: the slices of one index in every partition,
 * which lines copy and move between) never depends on another group's.
 * The calling thread decodes the trace and runs in trace order what is
 * shared (frame placement, the hashes that find an access's home slice);
 * worker threads own disjoint sets of slice groups, each with its own copy
 * of the L2, and run their sectors in trace order. Every statistic is a sum,
 * a minimum or a maximum (total cycles an exact fixed-point sum), so the
 * parts add up to the one-thread figures exactly.
 *
 * A shard I of N of a run keeps the slice groups g with g % N == I: every
 * shard places frames and hashes the whole trace (deterministic), runs only
 * its groups, and writes partial statistics (gx_tsim_write_partial) that
 * gx_tsim_merge adds up. An access whose sectors fall in the groups of
 * several shards is listed (its index, the largest latency of its sectors in
 * this shard) so that the merge takes its latency once.
 *
 * A randomized replacement policy splits: one random stream per slice.
 * Runs that are NOT split (gx_tsim_par_blocker says why): noise (one random
 * stream for every slice), a
 * far hit's extra cost after the SM's previous far hit (couples an SM's
 * accesses over every slice), translation (the walker reads through the
 * L2; an instruction's issue cycle may be the sum of every earlier latency). */
#ifndef GPUXRAY_TSIMPAR_H
#define GPUXRAY_TSIMPAR_H

#include <stdint.h>
#include <stdio.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/trace.h"

#define GX_TSIM_MAX_THREADS 64   /* threads of one run (the calling thread and its workers) */
#define GX_TSIM_MAX_SHARDS 65536 /* shards of one run */

/* NULL when a run of p with c may be split; else why not (a sentence). */
const char *gx_tsim_par_blocker(const gx_profile *p, const gx_tsim_cfg *c);
/* Split s (fresh: gx_tsim_new, nothing run yet) over `threads` threads in
 * all (the calling thread and threads - 1 workers; threads 1: the calling
 * thread runs the L2 too) and keep only shard `shard` of `shards` (0 of 1:
 * the whole trace). Requires gx_tsim_par_blocker(p, c) == NULL for the p
 * and c s was built from. Workers beyond the slice groups of the shard are
 * not started. */
int gx_tsim_par_start(gx_tsim *s, const gx_profile *p, uint32_t threads, uint32_t shard,
                      uint32_t shards, gx_msg *msg);
/* Finish the split run (after the last gx_tsim_run): the workers stop and
 * their statistics join s's; no-op for a run that is not split. GX_ENOMEM
 * when memory ran out during the run (its statistics are then wrong). */
int gx_tsim_par_finish(gx_tsim *s, gx_msg *msg);
/* Worker threads of the split run (0: not split). */
uint32_t gx_tsim_par_threads(const gx_tsim *s);

/* Testing: right after gx_tsim_par_start, a split of two threads on the
 * L2's specialised path changes its share (the balance of tsim_par.c) at
 * every batch of short batches, through every level up and down, instead
 * of as the two threads' progress asks. The statistics are the same.
 * No-op otherwise. */
void gx_tsim_par_sweep(gx_tsim *s);

/* ---- partial statistics of shards and their merge ---- */
/* A digest of trace records (identity of a trace for a merge): start with
 * *h = 0 (GX_TSIM_DIGEST_INIT is applied on the first call). */
void gx_tsim_digest(uint64_t *h, const gx_trace_rec *rec, uint64_t n);

typedef struct gx_tsim_ident {
    uint64_t profile_digest; /* of the profile's bytes */
    uint64_t trace_digest;   /* gx_tsim_digest over every record */
    uint64_t trace_records;
    uint32_t shard, shards;
} gx_tsim_ident;

/* The partial statistics of a finished run (format gpuxray-sim-partial,
 * version 1: raw counters, the histogram, exact sums, the accesses split
 * between shards; shard 0 also the translation and shared-memory reports). */
int gx_tsim_write_partial(const gx_tsim *s, const gx_tsim_ident *id, FILE *f, gx_msg *msg);
/* Merge the partials of every shard 0..N-1 of one run (n texts, names[i]
 * naming text i in messages) into a run whose gx_tsim_write_json / text
 * prints what one process prints for the whole trace. GX_EINVAL (message
 * naming the file and the problem) for malformed, mismatched, missing or
 * duplicated partials. */
int gx_tsim_merge(const char *const *texts, const char *const *names, uint32_t n,
                  gx_tsim **out, gx_msg *msg);
/* memory.page_bytes of the run (for messages about its pages). */
uint64_t gx_tsim_page_bytes(const gx_tsim *s);

#endif
