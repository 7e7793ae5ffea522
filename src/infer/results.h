/* results.h - what each discovery stage establishes for the stages after it:
 * one struct per stage (timer, levels, line, slices, ways, sets, policy),
 * plus the arena's state, held by the discovery context (infer.h) as
 * ctx->timer, ctx->levels, ... .
 *
 * Rules:
 * - A stage writes only its own struct (and the profile and the report);
 *   it reads the structs of the stages before it, which the stage table
 *   (core/discover.c) names as its prerequisites. A struct whose stage did
 *   not run, or failed, keeps its initial values (zeros; NaN where the
 *   field says so): a reader checks `have` or the field's "unknown" value.
 *   The pipeline checks the rule (run_stage, core/discover.c): a stage that
 *   changes another stage's struct fails, unless the stage table declares
 *   it (the policy stage grows the ways stage's pools).
 * - The arena state belongs to the arena functions (infer_util.c); the
 *   stages read it, and only infer_arena_ensure / infer_fresh_block (and
 *   the levels stage's cold-miss probe, which hands back what it did not
 *   use of the fresh reserve) change it.
 * - Hand-offs between stages are fields of the producing stage's struct
 *   and say so: the levels stage measures the line (it needs it to turn
 *   capacities counted in lines into bytes) and leaves it in
 *   gx_levels_result.line_measured / line_conf / line_how; the line stage
 *   measures the sector, decides and reports both, and publishes the line
 *   in gx_line_result. The slices stage's predictor (gx_slices_result.pred)
 *   is used, not only read, by the ways and sets stages: identifying a
 *   page measures through the target.
 *
 * Units: latencies and noises are SM cycles; "seq units" means a latency
 * as gx_target_seq shows it on SM 0 (timer overhead and SM 0's skew to the
 * slices included), "delta" a probe pair's skew-free difference
 * (infer_probe_pairs); sizes are bytes, offsets arena offsets. */
#ifndef GPUXRAY_INFER_RESULTS_H
#define GPUXRAY_INFER_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "gpuxray/hash.h"
#include "gpuxray/profile.h"

#define GX_INFER_MAX_EVSETS 64

struct gx_slicepred;

/* Timer stage (stage_timer.c). Read by every later stage (unsure bands,
 * repeat counts) and by the TLB stage. */
typedef struct gx_timer_result {
    int have;          /* 1: the stage succeeded and the fields below are set */
    double overhead;   /* cycles of an empty timed interval (median); the levels stage
                          subtracts it from seq latencies, infer_level_seq_latency adds it */
    double noise;      /* cycles: robust spread (MAD * 1.4826) of a repeated L2 hit or of
                          the empty interval, the larger, at least 0.5; unsure bands
                          (infer_unsure_band), the levels stage's pair_noise, the slices,
                          ways and TLB stages' predictors and votes */
} gx_timer_result;

/* Levels stage (stages/levels/): the L2 levels one SM sees, their latencies
 * and the probe pairs' hit / miss deltas that every later hit-or-miss
 * decision uses. hit_latency and miss_latency are NaN until the stage has
 * set them (the eviction-set code then measures its own, evset.c). */
typedef struct gx_levels_result {
    int have;                /* 1: the stage succeeded (all fields below set) */
    int n;                   /* L2 levels from one SM (1 uniform, 2 near-far) */
    gx_level level[GX_MAX_LEVELS]; /* their capacities (bytes, 0: unknown) and latencies
                                (cycles, timer overhead removed); DRAM is not a level.
                                Read by the ways stage (pool sizes) and
                                infer_first_capacity / infer_level_seq_latency */
    gx_topology topology;    /* near-far when n > 1; read by the slices stage */
    uint64_t l2_capacity;    /* bytes of the last level (level[n - 1]); read by the ways and
                                sets stages (sizes) and the pipeline's capacity check */
    double hit_latency;      /* seq units: a first-level hit on SM 0 (NaN: unknown); read by
                                infer_is_hit / infer_classify and the eviction-set code */
    double miss_latency;     /* seq units: what follows the first level, the far level
                                (near-far) or DRAM (NaN: unknown); read like hit_latency
                                and by the ways stage (the gap it classifies against) */
    double hit_miss_threshold; /* seq units: midpoint of hit_latency and miss_latency,
                                  read by infer_is_hit */
    double chase_hit_latency;  /* cycles per access of a chase over the first plateau;
                                  infer_level_seq_latency derives SM 0's skew from it */
    double far_stream_extra;   /* near-far: extra cycles of back-to-back far hits over the
                                  far delta (0: none, NaN: not measured); the levels stage's
                                  own profile field */
    double pair_noise;       /* cycles: sigma of a first-level hit's probe-pair delta; unsure
                                bands of infer_delta_is_hit and the line stage */
    double dram_noise;       /* cycles: sigma of DRAM deltas (wide on real HBM); the line
                                stage's bounds on the miss side */
    double miss_delta;       /* delta of the next level (far level or DRAM) over a first-level
                                hit; infer_delta_is_hit, the line and slices stages */
    double dram_delta;       /* delta of a DRAM miss over a first-level hit; the line stage
                                (sector probes miss to DRAM) */
    /* hand-off to the line stage: the levels stage measures the line
     * (infer_measure_line, stage_line.c) to turn capacities counted in lines
     * into bytes; the line stage reports it (and publishes gx_line_result) */
    uint32_t line_measured;  /* bytes, 0: undecided */
    double line_conf;        /* its confidence (0..1) */
    char line_how[160];      /* how it was decided, for the line stage's report row */
} gx_levels_result;

/* Line stage (stage_line.c): the allocation and fetch granularities. Read by
 * the slices, ways, sets, policy (through the eviction-set code) and TLB
 * stages; 0 when the stage did not run (infer_line_bytes then gives the
 * default line). */
typedef struct gx_line_result {
    uint32_t line_bytes;     /* the levels' line_measured, published as the stage starts
                                (0: undecided) */
    uint32_t sector_bytes;   /* the smallest distance that misses from a loaded line */
} gx_line_result;

/* Slices stage (stage_slices.c): the slice hash and how slices group into
 * partitions. Read by the ways stage (slice-guided pools) and the sets
 * stage (slice classes, frames, lifts). */
typedef struct gx_slices_result {
    uint32_t slices;         /* slice classes found (0: unknown) */
    uint32_t partitions;     /* partitions the slices group into (0: unknown); no later
                                stage reads it */
    gx_hash_fn hash;         /* the slice hash over observable bits (owned; relative to the
                                reference page of the arena it was learned on, which is
                                why the ways stage's arena is allocated before this stage) */
    struct gx_slicepred *pred; /* the slice predictor (owned), or NULL; the ways stage's
                                  guided pools and the sets stage identify pages with it */
    struct gx_slicepred *lpred; /* the predictor learnt from contention labels (owned, with its
                                   labeller), or NULL: kept when the hash came from them (the
                                   fingerprints merge slices); the ways stage's guided pools
                                   prefer it, on the arena of generation lpred_generation */
    uint32_t lpred_generation;
} gx_slices_result;

/* A minimal eviction set (ways stage). */
typedef struct gx_evset {
    uint64_t target;     /* the line the set evicts (arena offset) */
    uint32_t n;
    uint64_t *lines;     /* n congruent offsets (owned), not including target */
    uint64_t *pool;      /* candidates the set was reduced from (owned): lines predicted in the
                            target's slice class, or NULL: the same offset in every page */
    size_t n_pool;
    uint32_t pool_used;  /* length of the pool's prefix the reduction needed (0: unknown) */
} gx_evset;

/* Ways stage (stage_ways.c): associativity and the minimal eviction sets it
 * was read from. The sets and policy stages use the sets (target + ways
 * congruent lines each); the policy stage grows their pools
 * (gx_ways_grow_pool), the only writes to this struct after the stage. */
typedef struct gx_ways_result {
    uint32_t ways;           /* associativity of the first level (0: not established) */
    int n_evsets;            /* verified sets in evsets[] */
    gx_evset evsets[GX_INFER_MAX_EVSETS];
    uint32_t evsets_generation; /* gx_arena_state.generation the sets' offsets belong to:
                                   they are valid while it is the current one */
    struct gx_slicepred *pool_pred; /* the predictor whose slice classes the sets' pools hold
                                       (ctx->slices.pred or .lpred, not owned), NULL: none */
} gx_ways_result;

/* Sets stage (stages/sets/): the set index. Kept for the pipeline's end
 * (freed there); no later stage reads it. */
typedef struct gx_sets_result {
    uint32_t sets_per_slice; /* 0: unknown */
    gx_hash_fn hash;         /* the set hash (owned) */
} gx_sets_result;

/* Policy stage (stages/policy/): the replacement policy's registry name
 * ("" unknown). No later stage reads it. */
typedef struct gx_policy_result {
    char name[64];
} gx_policy_result;

/* The arena (infer_util.c): one allocation reused by every stage. A work
 * area [0, work_bytes), then a never-touched reserve [fresh_next, fresh_end)
 * handed out by infer_fresh_block(). Replacing the arena increments
 * generation, which invalidates every offset held from before. */
typedef struct gx_arena_state {
    uint64_t work_bytes;     /* 0: no arena yet */
    uint32_t generation;
    uint64_t fresh_next, fresh_end;
} gx_arena_state;

#endif
