/* infer.h - internals shared by the discovery stages: the discovery context
 * (what earlier stages established, for later stages to build on) and the
 * stage entry points. Stages see ONLY the target interface (target.h), the
 * profile (what they write), hash.h (to evaluate their own hypotheses) and
 * the policy registry (candidate policies); never src/model internals. */
#ifndef GPUXRAY_INFER_H
#define GPUXRAY_INFER_H

#include <jansson.h>
#include <stdint.h>

#include "gpuxray/discover.h"
#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "gpuxray/target.h"

#define GX_INFER_MAX_EVSETS 64
#define GX_INFER_MAX_SMS 16

typedef struct gx_evset {
    uint64_t target;     /* the line the set evicts (arena offset) */
    uint32_t n;
    uint64_t *lines;     /* n congruent offsets (owned), not including target */
    uint64_t *pool;      /* candidates the set was reduced from (owned): lines predicted in the
                            target's slice class, or NULL: the same offset in every page */
    size_t n_pool;
    uint32_t pool_used;  /* length of the pool's prefix the reduction needed (0: unknown) */
} gx_evset;

typedef struct gx_infer {
    gx_target *t;
    const gx_target_info *info;
    gx_rng rng;
    gx_msg *msg;
    gx_progress_fn progress; /* NULL: progress lines go nowhere */
    void *progress_user;
    gx_profile *out;     /* the profile being written */
    gx_report *report;

    /* timer */
    int have_timer;
    double timer_overhead;  /* cycles of an empty timed interval */
    double timer_noise;     /* robust spread (MAD * 1.4826) of a repeated L2 hit, cycles */

    /* levels */
    int have_levels;
    int n_levels;
    gx_level levels[GX_MAX_LEVELS]; /* L2 plateaus seen from one SM (not DRAM) */
    double hit_latency;     /* first plateau latency (cycles, per access incl. nothing else);
                               (helper A) in seq units: a hit as seq shows it on SM 0 */
    double dram_latency;
    gx_topology topology;
    uint64_t l2_capacity;   /* bytes, from the levels */
    double hit_miss_threshold; /* cycles: below = L2 hit (first level), above = miss */
    double dram_noise;      /* spread (sigma) of DRAM deltas: wide on real HBM */
    double miss_latency;    /* (helper A) seq latency of what follows the first level:
                               the next L2 level (near-far) or DRAM; threshold is between */
    double dram_seq_latency;/* (helper A) cold-miss latency as seq measures it */
    double chase_hit_latency; /* (helper A) chase mean per access on the first plateau */
    double far_stream_extra;  /* near-far: extra cycles of back-to-back far hits (NaN: not
                                 measured) */
    double pair_noise;      /* (helper A) sigma of a probe pair's delta (infer_probe_pairs) */
    double miss_delta;      /* (helper A) delta (skew-free extra cycles) of the next level */
    double dram_delta;      /* (helper A) delta of a DRAM miss over a first-level hit */

    /* line and sector */
    uint32_t line_bytes, sector_bytes;
    double line_conf;       /* (helper A) the levels stage measures the line (it needs it
                               for byte capacities); the line stage reports it */
    char line_how[160];     /* (helper A) how the line was decided, for the report */

    /* ways / eviction sets */
    uint32_t ways;
    int n_evsets;
    gx_evset evsets[GX_INFER_MAX_EVSETS];
    uint32_t evsets_generation; /* (helper B) arena_generation the evsets' offsets belong to */
    double ways_gap;            /* (helper B) hit -> evicted latency gap the ways stage used */

    /* slices */
    uint32_t slices, partitions;
    gx_hash_fn slice_hash;
    double progress_t0;             /* monotonic seconds of the first progress line */
    struct gx_slicepred *slicepred; /* the slices stage's predictor (owned), or NULL: the
                                       ways stage's guided pools reuse it */

    /* sets */
    uint32_t sets_per_slice;
    gx_hash_fn set_hash;

    /* policy */
    char policy[64];

    /* arena management (helper A, infer_util.c): work area [0, arena_work_bytes),
     * then a never-touched reserve [fresh_next, fresh_end) handed out by
     * infer_fresh_block(); arena_generation increments when the arena is replaced. */
    uint64_t arena_work_bytes;
    uint32_t arena_generation;
    uint64_t fresh_next, fresh_end;
} gx_infer;

/* Stage entry points: return GX_OK, or an error (the pipeline records it and
 * skips the stages that depend on it). Each writes its results into ctx and
 * ctx->out, and adds report rows with infer_report_row(). */
int gx_stage_timer(gx_infer *ctx);
int gx_stage_levels(gx_infer *ctx);
int gx_stage_line(gx_infer *ctx);
int gx_stage_ways(gx_infer *ctx);
int gx_stage_slices(gx_infer *ctx);
int gx_stage_sets(gx_infer *ctx);
int gx_stage_policy(gx_infer *ctx);
int gx_stage_smem(gx_infer *ctx);

/* Add a row to the report table. */
void infer_report_row(gx_infer *ctx, const char *parameter, const char *value,
                      const char *method, double confidence, int in_profile);
/* Raw measurements for the report (report.c). When discovery records
 * (gx_discover_opts.record), infer_data_set sets series.key = value and
 * infer_data_append appends item to the array series.key (created on first
 * use); both take the reference they are given (NULL is ignored). Without
 * recording they only release it, so a hook costs nothing else. */
int infer_recording(const gx_infer *ctx);
/* A JSON number, or null when v is not finite (JSON has no NaN). */
json_t *infer_json_num(double v);
void infer_data_set(gx_infer *ctx, const char *series, const char *key, json_t *value);
void infer_data_append(gx_infer *ctx, const char *series, const char *key, json_t *item);

/* A progress line to ctx->progress (when set). */
void infer_progress(gx_infer *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
