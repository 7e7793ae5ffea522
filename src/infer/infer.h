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
#include "results.h"

#define GX_INFER_MAX_SMS 16

/* The discovery context: the run's plumbing, the arena, and one result
 * struct per stage (results.h: what each field means, who writes and who
 * reads it). A stage writes its own struct; the structs of the stages
 * before it are its inputs. */
typedef struct gx_infer {
    /* the run's plumbing (set by gx_discover, core/discover.c) */
    gx_target *t;
    const gx_target_info *info;
    gx_rng rng;          /* the run's one random stream (seeded from --seed) */
    gx_msg *msg;         /* the running stage's error message */
    gx_progress_fn progress; /* NULL: progress lines go nowhere */
    void *progress_user;
    double progress_t0;  /* monotonic seconds of the first progress line (report.c) */
    gx_profile *out;     /* the profile being written */
    gx_report *report;   /* its report rows and recorded data (report.c) */

    gx_arena_state arena; /* infer_util.c's arena functions */

    /* the stages' results, in pipeline order */
    gx_timer_result timer;
    gx_levels_result levels;
    gx_line_result line;
    gx_slices_result slices;
    gx_ways_result ways;
    gx_sets_result sets;
    gx_policy_result policy;
} gx_infer;

/* Stage entry points: return GX_OK, or an error (the pipeline records it and
 * skips the stages that depend on it). Each writes its results into its own
 * struct of ctx (results.h) and ctx->out, and adds report rows with
 * infer_report_row(). */
int gx_stage_timer(gx_infer *ctx);
int gx_stage_levels(gx_infer *ctx);
int gx_stage_line(gx_infer *ctx);
int gx_stage_ways(gx_infer *ctx);
int gx_stage_slices(gx_infer *ctx);
int gx_stage_sets(gx_infer *ctx);
int gx_stage_policy(gx_infer *ctx);
int gx_stage_smem(gx_infer *ctx);
/* The ways stage's arena hook (stage_ways.c): grows the arena to what its
 * pools use. The pipeline calls it before the slices stage (the stage
 * table's arena and pins_arena columns): the slice hash describes the
 * reference page of the arena it was learned on, so the arena must not be
 * replaced between the slices stage and the ways stage. */
int gx_ways_arena_prepare(gx_infer *ctx);

/* Add a row to the report table. */
void infer_report_row(gx_infer *ctx, const char *parameter, const char *value,
                      const char *method, double confidence, int in_profile);
/* Mark the rows of parameter added so far as tried and superseded (a later
 * method decides it): the table keeps them, labelled, out of the profile. */
void infer_report_supersede(gx_infer *ctx, const char *parameter);
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
