/* discover.h - the discovery pipeline: stages that recover a profile from
 * timing alone, through the target primitives only (target.h).
 * The stages, in order: gx_discover_stage_names(). */
#ifndef GPUXRAY_DISCOVER_H
#define GPUXRAY_DISCOVER_H

#include <stdint.h>
#include <stdio.h>

#include "gpuxray/error.h"
#include "gpuxray/profile.h"
#include "gpuxray/target.h"

/* A progress line of the pipeline (no newline): seconds since the first
 * line, the text; user is gx_discover_opts.progress_user. The library
 * prints nothing itself. */
typedef void (*gx_progress_fn)(void *user, double seconds, const char *line);

typedef struct gx_discover_opts {
    const char *only; /* comma-separated stage names, NULL = all (prerequisites run anyway) */
    uint64_t seed;
    gx_progress_fn progress; /* NULL: no progress lines */
    void *progress_user;
    int record;       /* 1: keep the stages' raw measurements in gx_report.data */
} gx_discover_opts;

/* A gx_progress_fn that writes "gpuxray: [   1.2 s] line" to the FILE * in user. */
void gx_progress_print(void *user, double seconds, const char *line);

#define GX_REPORT_MAX_ROWS 64
#define GX_REPORT_MAX_STAGES 16

typedef struct gx_report_row {
    char parameter[48];
    char value[128];
    char method[128];
    double confidence; /* 0..1; NaN when not applicable */
    int in_profile;    /* 0: reported but left out of the profile (not confident) */
    int superseded;    /* 1: a method tried first, decided by a later row of the same
                          parameter (left out of the profile) */
} gx_report_row;

typedef struct gx_stage_cost {
    char stage[24];
    int status;        /* GX_OK, or an error code / GX_EUNSURE */
    char note[160];
    uint64_t calls, accesses;
    uint64_t serial_accesses; /* of the accesses, those one thread made one after another:
                                 on a GPU each costs a full latency (see target.h) */
    double seconds;
} gx_stage_cost;

typedef struct gx_report {
    int n_rows;
    gx_report_row rows[GX_REPORT_MAX_ROWS];
    int n_stages;
    gx_stage_cost stages[GX_REPORT_MAX_STAGES];
    /* With gx_discover_opts.record: the raw measurements the stages took, a
     * jansson object (json_t *) with one member per series ("curve",
     * "sm_slice", "slice_classes", "ways", "policy", ...); NULL otherwise.
     * Owned: release with gx_report_free_data(). docs/report.md lists the
     * series and their fields. */
    void *data;
} gx_report;

/* Run the pipeline. *found receives a measured profile (caller frees),
 * report (optional) the table and costs. Returns GX_OK when every selected
 * stage ran (some fields may still be low-confidence and absent). */
int gx_discover(gx_target *t, const gx_discover_opts *opts, gx_profile **found,
                gx_report *report, gx_msg *msg);
/* Release report->data (NULL afterwards). */
void gx_report_free_data(gx_report *r);
/* The human table: parameter, value, method, confidence; then stage costs. */
void gx_report_print(const gx_report *r, FILE *out);
/* Valid stage names, comma-separated (for --help and error messages). */
const char *gx_discover_stage_names(void);

#endif
