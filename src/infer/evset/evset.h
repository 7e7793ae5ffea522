/* evset.h - eviction-set machinery for the ways, sets and policy stages:
 * noise-robust eviction and overflow tests, and the reduction of a
 * candidate pool to a minimal eviction set for a target line.
 *
 * Two tests, both through gx_target_seq only:
 * - eviction test (on candidate sets that may hold many unrelated lines):
 *   walk {target} + X `warm` rounds, then X alone `passes` rounds (every
 *   round in a fresh random order), then reload the target timed: slower
 *   than its hit latency by more than `delta` = evicted. Voted: "evicted"
 *   must be seen EVX_YES_VOTES (3) times in a row, one "present" answer
 *   decides "not evicted", unsure answers are retried; mixed answers make
 *   later trials longer (soft boundary: randomized or pruned-tree policy).
 * - overflow test (on small, clean sets G): walk {target} + G in rounds
 *   (each in a fresh random order), every access timed against the line's own hit latency. A round without
 *   a single miss proves that the target's set holds all of them at once,
 *   so at most W of them are congruent (pigeonhole); a set with W+1
 *   congruent lines misses at least once in EVERY round, whatever the
 *   replacement policy. "Overflows" = no clean round within the round cap.
 *
 * Reduction (gx_evx_find): ordered-prefix binary search. With the pool in a
 * fixed order, the smallest prefix that (with the lines found so far, F)
 * evicts the target ends with a congruent line; add it to F and search
 * again inside the shorter prefix, until F alone overflows with the target
 * (overflow test, exact). Then the overflow test minimises F (each element removed once: kept only when the rest no
 * longer overflows), which also proves minimality: F + target overflows,
 * and no proper subset of F does. Contradictions (a prefix that should
 * evict does not) give back the last line taken and search again; a search
 * that fails restarts with longer trials.
 *
 * Notes:
 * - A "test" is one decision (possibly several trials); the cost bar of
 *   issue 3 counts tests: W*ceil(log2 N) + 4W per set.
 * - Classification is relative to each line's own hit latency (skew makes
 *   hit latencies differ per slice) and uses ctx->levels.miss_latency -
 *   ctx->levels.hit_latency as the gap when the levels stage set them (near-far:
 *   the gap to the far partition, so "evicted from the near partition"
 *   counts as a miss); otherwise a cold miss is measured.
 * - Works on any target: only gx_target_seq, medians and votes. */
#ifndef GPUXRAY_INFER_EVSET_H
#define GPUXRAY_INFER_EVSET_H

#include <stddef.h>
#include <stdint.h>

#include "../infer.h"

#define GX_EVX_MAX_WAYS 64

typedef struct gx_evx {
    gx_infer *ctx;
    uint32_t sm;
    double gap;       /* cycles from a hit to the next level (levels stage) */
    double delta;     /* "evicted" = slower than the line's hit by more than this */
    double band;      /* unsure band around delta */
    uint32_t warm;    /* eviction test: rounds over target + candidates */
    uint32_t passes;  /* eviction test: extra rounds over the candidates alone */
    uint64_t tests;   /* decisions taken (eviction + overflow tests) */
    uint64_t trials;  /* single measurements behind them */
    uint32_t max_clean_round; /* slowest convergence seen by an overflow test */
    uint32_t bumps;   /* times warm/passes grew (mixed answers, contradictions) */
    uint64_t budget_accesses; /* a reduction (gx_evx_find) gives up once it has cost this
                                 many target accesses (checked between its steps); 0: none */
    gx_seq_op *ops;
    size_t ops_cap;
    double *cyc;
    size_t cyc_cap;
    uint64_t *scratch;
    size_t scratch_cap;
    uint64_t *prime; /* target + candidates of an eviction trial */
    size_t prime_cap;
} gx_evx;

/* Outcome of one reduction. */
typedef struct gx_evx_result {
    uint64_t target;
    double target_hit;  /* target's hit latency (seq cycles) */
    uint32_t n;         /* lines in the minimal set (= the ways) */
    uint64_t lines[GX_EVX_MAX_WAYS];
    uint64_t tests;     /* decisions for this set, all phases */
    uint64_t trials;
    uint32_t pool_used; /* length of the first evicting prefix */
    uint32_t restarts;
    int verified;       /* overflow with the target, every single removal fits */
    int no_pool;        /* GX_EUNSURE because the whole pool did not evict the target */
    int over_budget;    /* GX_EUNSURE because the reduction reached ev->budget_accesses */
    uint64_t accesses;  /* target accesses the reduction cost */
} gx_evx_result;

/* Set up (ev->gap from ctx, measured when the levels stage did not). */
int gx_evx_init(gx_evx *ev, gx_infer *ctx, uint32_t sm);
void gx_evx_free(gx_evx *ev);

/* Median of `reps` reloads of a present line. */
int gx_evx_hit_latency(gx_evx *ev, uint64_t line, int reps, double *hit);

/* Voted eviction test of `target` (hit latency `hit`) by the n lines x.
 * *evicts = 1 / 0. */
int gx_evx_evicts(gx_evx *ev, uint64_t target, double hit, const uint64_t *x, size_t n,
                  int *evicts);

/* Overflow test of target + g (n lines), each round in a fresh random
 * order. ref[] = hit latencies of g (NULL: measured here). max_rounds 0 = default (6 * (n + 1) + 16). *overflows =
 * 1 when no clean round was seen. *clean_round (optional) = the index of the
 * first clean round, or -1. */
int gx_evx_overflows(gx_evx *ev, uint64_t target, double target_hit, const uint64_t *g,
                     const double *ref, size_t n, uint32_t max_rounds, int *overflows,
                     int *clean_round);

/* Hit latencies of n lines (median of 3 reloads each), one seq call. */
int gx_evx_ref_latencies(gx_evx *ev, const uint64_t *lines, size_t n, double *ref);

/* Minimal eviction set for target from pool[0..n_pool) (tried in this
 * order). GX_EUNSURE when the pool does not evict the target or the
 * reduction cannot be made consistent. */
int gx_evx_find(gx_evx *ev, uint64_t target, const uint64_t *pool, size_t n_pool,
                gx_evx_result *res);

/* Verify a minimal eviction set: target + lines overflows and every set
 * with one line removed fits (n + 2 overflow tests). *ok = 1 when so;
 * *target_hit (optional) = the target's hit latency. */
int gx_evx_verify(gx_evx *ev, uint64_t target, const uint64_t *lines, size_t n, int *ok,
                  double *target_hit);

/* Congruence probe: load each probe line and time one reload (its hit
 * latency), walk the eviction set `evset` for `passes` rounds (random order
 * each), reload every probe line timed, then once more (a second hit
 * sample; the smaller counts). evicted[i] = 1 (evicted: congruent with the set), 0
 * (still present), -1 (unsure). Probe lines must be few enough not to
 * overflow any set themselves. */
int gx_evx_probe(gx_evx *ev, const uint64_t *evset, size_t n_evset, uint32_t passes,
                 const uint64_t *probe, size_t n_probe, int *evicted);

/* 1 present / 0 evicted / -1 unsure: cycles against a line's hit latency. */
int gx_evx_classify(const gx_evx *ev, double cycles, double hit);

/* Up to `want` more lines congruent with the eviction set's target, found
 * by probing the candidates in small batches against the set (each positive
 * confirmed by a second probe). */
int gx_evx_more_congruent(gx_evx *ev, const uint64_t *evset, size_t n_evset,
                          const uint64_t *cand, size_t n_cand, size_t want, uint64_t *out,
                          size_t *n_out);

/* Grow es's candidate pool (stage_ways.c): append the lines of up to n_new
 * more arena pages (random, not yet in the pool, identified by the slices
 * stage's predictor) that the predictor puts in es->target's slice class.
 * *added = lines appended. GX_EUNSURE without a predictor or when the
 * target's page cannot be identified. */
int gx_ways_grow_pool(gx_infer *ctx, gx_evset *es, uint32_t n_new, size_t *added);

#endif
